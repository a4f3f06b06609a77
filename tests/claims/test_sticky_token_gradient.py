"""Issue 20: the page's default pair, the "sticky token", makes its point; the drift family agrees.

Claims checked:

* the answer sentence (``notes.answer``) at every T on the slider, for the sticky pair, the
  drift family (over its K, δ and placement ranges) and the rb counterexample: its sequence KL
  and per-position range are the core's (or the one value every position adds), its cosines are
  the core's, and its verdict ("is not a per-token loss's" / "nearly the right way") follows Σk2's
  cosine, the per-token loss that misses only the later prefixes; Σk3 far off where Σk2 is not is
  put down to the other KL direction;
* the sticky pair's per-token losses miss the later prefixes at every T ≥ 2, and at the page's
  default T some per-token loss has cosine below 0.5 to the true gradient; independently, by
  enumerating all 2^T sequences, at T = 8 and 12 (the cosines there are 0.38 and 0.16);
* "the drift family …, and there Σk2 as a loss points nearly the right way" (``source_help``):
  Σk2's cosine is at least 0.99 over the drift widgets' ranges;
* the sticky pair's per-position KLs change along the sequence (they climb).
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from kl_core.sequences.estimators import RB_COUNTEREXAMPLE
from kl_core.sequences.gradients import sequence_gradient_table
from kl_core.sequences.markov import drift_pair, parse_markov, per_position_kl
from lab.format import number
from lab.notes import sequences as notes

DRIFTS = (0.0, 0.05, 0.5, 1.5, 3.0)  # the drift slider: 0 … 3
KS = (2, 3, 8, notes.K_MAX)
SHORT = tuple(t for t in notes.LENGTHS if t <= 64)


def _pairs():
    yield "sticky", notes.STICKY
    yield "counter", RB_COUNTEREXAMPLE
    for k, d, placement in itertools.product((2, 8), DRIFTS, ("every", "first")):
        yield f"drift-{k}-{d}-{placement}", tuple(c.spec for c in drift_pair(k, d, placement))


def _check_answer(pair, length):
    table = sequence_gradient_table(*pair, length)
    c = per_position_kl(*pair, length)
    text = notes.answer(table, c)
    if table.reverse.norm == 0:
        assert f"At T = {length} the two chains give every sequence the same probability" in text
        return
    assert number(float(c.sum())) in text
    if length > 1 and np.ptp(c) <= 1e-9 * c.max():  # "from 0.5 to 0.5" said nothing (audit)
        assert f"each adds {number(float(c[0]))}." in text and "run from" not in text
    elif length > 1:
        assert f"from {number(float(c.min()))} to {number(float(c.max()))}" in text
    k2, k3 = table.row["sum_k2_loss"].cos_reverse, table.row["sum_k3_loss"].cos_reverse
    if table.reverse.norm <= 1e-6 * table.local.norm:
        assert "nearly 0" in text
    elif table.later_share < 1e-9:
        assert "no KL is still to come" in text
        assert k2 is not None and k2 == pytest.approx(1.0, abs=5e-3)
    else:
        shown = [float(x.replace("−", "-")) for x in re.findall(r"cosine ([−\d.]+)", text)]
        assert shown[0] == pytest.approx(k2, abs=5e-3)
        # the verdict follows Σk2 (audit: Σk3's 0.8923 beside Σk2's 0.9972 at K = 8, δ = 2, T = 16
        # was put down to the later prefixes)
        if k2 is None or round(k2, 4) < notes.FAR_OFF:
            assert "is not a per-token loss's" in text
        else:
            assert "nearly the right way" in text and "is not a per-token loss's" not in text
            if k3 is None or round(k3, 4) < notes.FAR_OFF:
                assert "follows the other KL direction" in text
            else:
                assert "the per-token losses point nearly the right way" in text


@pytest.mark.parametrize(("name", "pair"), list(_pairs()), ids=[n for n, _ in _pairs()])
def test_the_answer_follows_the_numbers_at_every_t(name, pair):
    for length in SHORT:
        _check_answer(pair, length)


def test_the_sticky_default_shows_a_per_token_loss_below_one_half():
    table = sequence_gradient_table(*notes.STICKY, notes.DEFAULT_LENGTH)
    per_token = [r.cos_reverse for r in table.rows if not r.later_terms and r.cos_reverse is not None]
    assert min(per_token) < 0.5
    assert table.row["k1_reward_to_go"].cos_reverse == pytest.approx(1.0, abs=1e-9)
    for length in notes.LENGTHS[1:]:
        assert sequence_gradient_table(*notes.STICKY, length).later_share > 0.01


def _enumerated_cosine(length: int) -> tuple[float, float]:
    """cos(Σk2-loss gradient, ∇KL) and cos(Σk3-loss gradient, ∇KL) by summing over all 2^T sequences.

    ∇KL = E[Σ_t s_t Σ_{u≥t} k1_u] (score function, reward-to-go); the Σk2 loss's gradient with the
    tokens held fixed is E[Σ_t k1_t s_t]; the Σk3 loss's is E[Σ_t (1 − r_t) s_t], r_t = π_ref/π_θ.
    s_t is the gradient of log π_θ(x_t | x_<t) in the K + K² logits: e_j − π on the row that acted.
    """
    policy, ref = (parse_markov(s) for s in notes.STICKY)
    k = policy.k
    lp_first, lr_first = policy.log_first, ref.log_first
    lp_trans, lr_trans = policy.log_transitions, ref.log_transitions
    true, k2, k3 = (np.zeros(k + k * k) for _ in range(3))
    for seq in itertools.product(range(k), repeat=length):
        lps, lrs, scores = [], [], []
        for t, j in enumerate(seq):
            s = np.zeros(k + k * k)
            if t == 0:
                lp, lr, probs, at = lp_first[j], lr_first[j], np.exp(lp_first), 0
            else:
                i = seq[t - 1]
                lp, lr, probs, at = lp_trans[i, j], lr_trans[i, j], np.exp(lp_trans[i]), k + i * k
            s[at:at + k] -= probs
            s[at + j] += 1.0
            lps.append(lp), lrs.append(lr), scores.append(s)
        prob = float(np.exp(sum(lps)))
        k1 = np.array(lps) - np.array(lrs)
        to_go = np.cumsum(k1[::-1])[::-1]
        for t in range(length):
            true += prob * to_go[t] * scores[t]
            k2 += prob * k1[t] * scores[t]
            k3 += prob * (1 - np.exp(-k1[t])) * scores[t]

    def cos(a, b):
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    return cos(k2, true), cos(k3, true)


@pytest.mark.parametrize("length", [8, 12])
def test_the_cosines_by_enumeration(length):
    c2, c3 = _enumerated_cosine(length)
    table = sequence_gradient_table(*notes.STICKY, length)
    assert c2 == pytest.approx(table.row["sum_k2_loss"].cos_reverse, abs=1e-9)
    assert c3 == pytest.approx(table.row["sum_k3_loss"].cos_reverse, abs=1e-9)
    assert c2 < 0.5 and c3 < 0.5


@pytest.mark.parametrize("k", KS)
def test_in_the_drift_family_sum_k2_points_nearly_the_right_way(k):
    assert "there Σk2 as a loss points nearly the right way" in notes.source_help()
    for d, placement in itertools.product(DRIFTS[1:], ("every", "first")):
        for length in (2, 3, 16, 64) if k < notes.K_MAX else (2, 16):
            c = sequence_gradient_table(*drift_pair(k, d, placement), length).row["sum_k2_loss"].cos_reverse
            assert c >= 0.99, (k, d, placement, length, c)


def test_the_sticky_pair_per_position_kls_climb():
    c = per_position_kl(*notes.STICKY, notes.DEFAULT_LENGTH)
    assert np.all(np.diff(c) > 0)
    assert c[-1] > 5 * c[0]
