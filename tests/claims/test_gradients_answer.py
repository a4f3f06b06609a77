"""Issue 20: the Gradients page's answer, its first chart's caption and its drift help, true at every setting.

The page opens with "Does the gradient of k3 used as a loss point where the KL's
gradient points?" and answers from the numbers (``lab.notes.gradients.answer``):
on-policy, k3's expected gradient as a loss *is* ∇KL[π_ref‖π_θ] ("the gradient of
the other KL") and k2's *is* ∇KL[π_θ‖π_ref] ("k2 as a loss gives ∇KL[π_θ‖π_ref]
itself"); the caption says "on-policy the k2 bars end exactly on the ticks"; the
drift help says that for s > 0 π_θ moves mass from token 0 to token 1, "a token
π_ref makes rare"; view 2 says kλ's on-policy expected gradient is
∇KL[π_θ‖π_ref] for every λ.  Swept over the page's widget ranges (K = 2 … 10,
the drift −3 … 3, both π_ref, on-policy and with π_old's drift −3 … 3, λ of its
slider), against closed forms: ∇KL[π_θ‖π_ref] = π_θ ⊙ (log(π_θ/π_ref) − KL) and
∇KL[π_ref‖π_θ] = π_θ − π_ref in the logits.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from kl_core.gradients.expected import gradient_table
from lab.notes import gradients as notes
from lab.token_setting import K_MAX

PAGE = open("pages/gradients.py", encoding="utf-8").read()
SETTING = open("lab/token_setting.py", encoding="utf-8").read()
DRIFTS = np.round(np.arange(-3.0, 3.0001, 0.5), 2)  # the drift sliders' range, −3 … 3
LAMS = (-1.0, 0.0, 1.0, 3.0)  # the λ slider's range and its ends
SETTINGS = [(k, d, ref) for ref in notes.REFERENCES for k in range(2, K_MAX + 1) for d in DRIFTS]


def test_the_ranges_are_the_pages():
    assert "min_value=-3.0, max_value=3.0, value=notes.DEFAULT_DRIFT" in SETTING
    assert re.search(r'"told",\s*min_value=-3.0, max_value=3.0', SETTING)
    assert "K_MAX = 10" in SETTING and "min_value=2, max_value=K_MAX" in SETTING
    assert "LAM_MIN, LAM_MAX = -1.0, 3.0" in PAGE


def closed_forms(policy, ref):
    p = np.exp(np.asarray(policy) - np.logaddexp.reduce(policy))
    q = np.exp(np.asarray(ref) - np.logaddexp.reduce(ref))
    kl = float(np.sum(p * np.log(p / q)))
    return p * (np.log(p / q) - kl), p - q


@pytest.mark.parametrize(("k", "drift", "ref"), SETTINGS)
def test_on_policy_the_answer_and_caption_hold(k, drift, ref):
    s, _ = notes.setting(k, float(drift), "", True, 0.0, "", ref)
    rev, fwd = closed_forms(s.policy, s.ref)
    scale = max(np.abs(rev).max(), np.abs(fwd).max(), 1e-3)  # at s = 0 every gradient is rounding noise
    for lam in LAMS:
        t = gradient_table(s.policy, s.ref, None, lam)
        np.testing.assert_allclose(t.true_reverse, rev, atol=1e-12 * scale)
        np.testing.assert_allclose(t.row("k3").expected_grad, fwd, atol=1e-12 * scale)  # "the other KL's"
        np.testing.assert_allclose(t.row("k2").expected_grad, rev, atol=1e-12 * scale)  # "itself", "end on the ticks"
        np.testing.assert_allclose(t.row("k_lambda").expected_grad, rev, atol=1e-9 * scale)  # "for every λ"
    text = notes.answer(t)
    if drift == 0.0:
        assert not rev.any() and "both KLs' gradients are zero" in text
        return
    c3 = t.row("k3").cos_reverse
    assert text.startswith(notes.verdict(c3)) and f"(cosine {c3:+.3f})" in text
    assert "itself (cosine +1.000)" in text
    assert "end exactly on the ticks" in notes.pair_caption(t)


@pytest.mark.parametrize(("k", "ref"), [(k, ref) for ref in notes.REFERENCES for k in range(2, K_MAX + 1)])
def test_off_policy_k2_is_not_that_gradient_in_general(k, ref):
    """The off-policy answer's "k2's is not that gradient in general either": some π_old of the slider shows it."""
    worst = 1.0
    for drift in DRIFTS[::2]:  # every whole drift of the sliders (the pairs cost a table each)
        for old in DRIFTS[::2]:
            s, _ = notes.setting(k, float(drift), "", False, float(old), "", ref)
            t = gradient_table(s.policy, s.ref, s.sampler, 1.0)
            c2 = t.row("k2").cos_reverse
            if drift == 0.0:  # π_θ = π_ref: every gradient is zero, whatever the sampler
                assert "both KLs' gradients are zero" in notes.answer(t)
                continue
            if t.on_policy:  # π_old's drift equals π_θ's: the core and the answer treat it as on-policy
                assert old == drift and "itself (cosine +1.000)" in notes.answer(t)
                continue
            if c2 is None:
                continue
            worst = min(worst, c2)
            text = notes.answer(t)
            assert "With tokens from" in text and f"(cosine {c2:+.3f})" in text
            assert "end exactly on the ticks" not in notes.pair_caption(t)
    assert worst < 0.99 if k > 2 else worst <= 1.0  # with two tokens every gradient lies on one line


@pytest.mark.parametrize("k", range(2, K_MAX + 1))
def test_the_uneven_drift_moves_mass_from_token_0_to_the_rare_token_1(k):
    probs = []
    for drift in DRIFTS:
        s, _ = notes.setting(k, float(drift), "", True, 0.0, "", "uneven")
        probs.append(np.exp(np.asarray(s.policy) - np.logaddexp.reduce(s.policy)))
    probs = np.array(probs)
    assert np.all(np.diff(probs[:, 0]) < 0) and np.all(np.diff(probs[:, 1]) > 0)
    ref = notes.setting(k, 0.0, "", True, 0.0, "", "uneven")[0].ref
    rho = np.exp(np.asarray(ref) - np.logaddexp.reduce(ref))
    assert rho[1] == rho.min() and rho[1] < 0.15  # "a token π_ref makes rare"
