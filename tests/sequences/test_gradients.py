"""Tests of kl_core.sequences.gradients: the dynamic programmes against brute force.

The oracle enumerates all K^T sequences (K^T <= 1e5) and differentiates each
option's per-sequence loss *numerically* with the sampled tokens held fixed
(what autograd does), from the logits alone; the true gradients are central
finite differences of the sequence KL.  Then the exact statements: k1 as a
reward with reward-to-go is the true gradient; Σk1 as a loss has expectation
0; Σk2 (and the exact next-token KL) as a loss miss exactly the later-prefix
terms, which vanish iff T = 1 or every next-token KL is equal (tested for
T = 2, where that is necessary); Σk3 as a loss is the forward KL's gradient
only where both chains visit prefixes equally often.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kl_core.gradients import expected as gradients
from kl_core.sequences.estimators import RB_COUNTEREXAMPLE
from kl_core.sequences.gradients import (
    OPTIONS,
    SequenceGradient,
    expected_sequence_gradient,
    sequence_gradient_table,
    sequence_kl_gradients,
)
from kl_core.sequences.markov import (
    MarkovChain,
    drift_pair,
    next_token_kl,
    parse_markov,
    per_position_kl,
)

H = 1e-5  # central differences: error ~ H² ≈ 1e-10, far below the tolerances


def random_chain(k: int, seed: int, scale: float = 1.0) -> MarkovChain:
    rng = np.random.default_rng(seed)
    return MarkovChain.from_arrays(rng.normal(0, scale, k), rng.normal(0, scale, (k, k)))


def circulant_pair(k: int, drift: float, uniform_first: bool = True) -> tuple[MarkovChain, MarkovChain]:
    """Chains whose logits depend on (j - i) mod K only: every next-token KL is the same."""
    j = np.arange(k)
    ref_row = -np.log1p(j)
    pol_row = ref_row + drift * (1.0 - 2.0 * j / (k - 1))
    shift = (j[None, :] - j[:, None]) % k
    first_ref = np.zeros(k) if uniform_first else ref_row
    first_pol = np.zeros(k) if uniform_first else pol_row
    return (
        MarkovChain.from_arrays(first_pol, pol_row[shift]),
        MarkovChain.from_arrays(first_ref, ref_row[shift]),
    )


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def _unpack(theta: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    return theta[:k], theta[k:].reshape(k, k)


def _token_logps(theta: np.ndarray, k: int, xs: np.ndarray) -> np.ndarray:
    """log π(x_t | x_{t-1}) of every token of every sequence, shape (n, T)."""
    a, b = _unpack(theta, k)
    la, lb = _log_softmax(a), _log_softmax(b)
    out = np.empty(xs.shape)
    out[:, 0] = la[xs[:, 0]]
    out[:, 1:] = lb[xs[:, :-1], xs[:, 1:]]
    return out


def _row_kls(theta: np.ndarray, ref: np.ndarray, k: int, xs: np.ndarray) -> np.ndarray:
    """KL[π_θ(·|x_<t) ‖ π_ref(·|x_<t)] at every position of every sequence, shape (n, T)."""
    a, b = _unpack(theta, k)
    ra, rb = _unpack(ref, k)
    la, lb, lra, lrb = _log_softmax(a), _log_softmax(b), _log_softmax(ra), _log_softmax(rb)
    kl_first = float(np.sum(np.exp(la) * (la - lra)))
    kl_rows = np.sum(np.exp(lb) * (lb - lrb), axis=1)
    out = np.empty(xs.shape)
    out[:, 0] = kl_first
    out[:, 1:] = kl_rows[xs[:, :-1]]
    return out


def _theta(chain: MarkovChain) -> np.ndarray:
    return np.concatenate([np.asarray(chain.first), np.asarray(chain.transitions).ravel()])


def brute_gradients(policy: MarkovChain, ref: MarkovChain, length: int) -> dict[str, np.ndarray]:
    """E over all K^T sequences of each option's per-sequence gradient, tokens held fixed."""
    k = policy.k
    xs = np.array(list(itertools.product(range(k), repeat=length)))
    assert len(xs) <= 10**5
    th0, ref_th = _theta(policy), _theta(ref)
    lp0 = _token_logps(th0, k, xs)
    lr = _token_logps(ref_th, k, xs)
    w = np.exp(lp0.sum(axis=1))
    k1_0 = lp0 - lr  # sg(k1) at θ0
    to_go = np.cumsum(k1_0[:, ::-1], axis=1)[:, ::-1]  # Σ_{u≥t} k1_u

    def losses(th: np.ndarray) -> dict[str, np.ndarray]:
        lp = _token_logps(th, k, xs)
        t = lr - lp  # log r
        return {
            "sum_k1_loss": (-t).sum(axis=1),
            "sum_k2_loss": (0.5 * t**2).sum(axis=1),
            "sum_k3_loss": (np.expm1(t) - t).sum(axis=1),
            "rb_loss": _row_kls(th, ref_th, k, xs).sum(axis=1),
            "k1_reward_to_go": (to_go * lp).sum(axis=1),
        }

    out = {key: np.zeros(th0.size) for key in OPTIONS}
    for n in range(th0.size):
        up, dn = th0.copy(), th0.copy()
        up[n] += H
        dn[n] -= H
        lu, ld = losses(up), losses(dn)
        for key in OPTIONS:
            out[key][n] = float(np.sum(w * (lu[key] - ld[key]))) / (2 * H)
    return out


def fd_kl_gradient(policy: MarkovChain, ref: MarkovChain, length: int, reverse: bool = True) -> np.ndarray:
    """Central differences of the sequence KL (the sum of markov.per_position_kl) in all of π_θ's logits."""
    k = policy.k
    th0 = _theta(policy)
    out = np.zeros(th0.size)
    for n in range(th0.size):
        vals = []
        for sign in (1.0, -1.0):
            th = th0.copy()
            th[n] += sign * H
            c = MarkovChain.from_arrays(*_unpack(th, k))
            pair = (c, ref) if reverse else (ref, c)
            vals.append(float(per_position_kl(*pair, length).sum()))
        out[n] = (vals[0] - vals[1]) / (2 * H)
    return out


PAIRS = [
    pytest.param(random_chain(3, 1), random_chain(3, 2), 5, id="random-K3-T5"),
    pytest.param(random_chain(2, 5, 2.0), random_chain(2, 6, 2.0), 9, id="random-K2-T9"),
    pytest.param(random_chain(4, 7), random_chain(4, 8), 1, id="random-K4-T1"),
    pytest.param(*drift_pair(3, 0.7), 6, id="drift-every"),
    pytest.param(*drift_pair(4, 1.5, "first"), 4, id="drift-first"),
    pytest.param(*map(parse_markov, RB_COUNTEREXAMPLE), 4, id="rb-counterexample"),
]


@pytest.mark.parametrize(("policy", "ref", "length"), PAIRS)
def test_every_option_equals_brute_force_autograd(policy, ref, length):
    brute = brute_gradients(policy, ref, length)
    for key in OPTIONS:
        got = expected_sequence_gradient(key, policy, ref, length).flat
        assert np.allclose(got, brute[key], rtol=1e-6, atol=1e-8), key


@pytest.mark.parametrize(("policy", "ref", "length"), PAIRS)
def test_true_gradients_equal_finite_differences_of_the_sequence_kl(policy, ref, length):
    rev, fwd = sequence_kl_gradients(policy, ref, length)
    assert np.allclose(rev.flat, fd_kl_gradient(policy, ref, length), rtol=1e-6, atol=1e-8)
    assert np.allclose(fwd.flat, fd_kl_gradient(policy, ref, length, reverse=False), rtol=1e-6, atol=1e-8)


def test_long_sequences_beyond_enumeration_match_finite_differences():
    policy, ref = random_chain(4, 11, 1.5), random_chain(4, 12, 1.5)
    rev, fwd = sequence_kl_gradients(policy, ref, 40)
    assert np.allclose(rev.flat, fd_kl_gradient(policy, ref, 40), rtol=1e-6, atol=1e-8)
    assert np.allclose(fwd.flat, fd_kl_gradient(policy, ref, 40, reverse=False), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("policy", "ref", "length"), PAIRS)
def test_table_decomposes_the_true_gradient(policy, ref, length):
    tab = sequence_gradient_table(policy, ref, length)
    rev, fwd = sequence_kl_gradients(policy, ref, length)
    assert np.allclose((tab.local + tab.later).flat, rev.flat, rtol=1e-12, atol=1e-14)
    assert np.allclose(tab.forward.flat, fwd.flat, rtol=1e-12, atol=1e-14)
    # reward-to-go is the true gradient, always
    assert tab.row["k1_reward_to_go"].target == "reverse_kl"
    assert tab.row["k1_reward_to_go"].relative_error < 1e-12
    # k1 as a loss: expectation 0
    assert tab.row["sum_k1_loss"].target == "zero"
    assert tab.row["sum_k1_loss"].cos_reverse is None
    # k2 and the exact per-token KL as losses: the local part only
    for key in ("sum_k2_loss", "rb_loss"):
        assert np.allclose(tab.row[key].grad.flat, tab.local.flat, rtol=1e-12, atol=1e-15)
    assert [r.key for r in tab.rows] == list(OPTIONS)
    assert [r.later_terms for r in tab.rows] == [k == "k1_reward_to_go" for k in OPTIONS]


def test_per_row_pieces_are_the_categorical_gradients():
    """One source of truth: each row of Σk2/Σk3 is kl_core.gradients.expected' expected gradient, times n(i)."""
    policy, ref = random_chain(3, 21), random_chain(3, 22)
    length = 6
    occupancy = policy.marginals(length - 1).sum(axis=0)
    for key, row_option in (("sum_k2_loss", "k2"), ("sum_k3_loss", "k3")):
        g = expected_sequence_gradient(key, policy, ref, length)
        assert np.allclose(g.first, gradients.expected_gradient(row_option, policy.first, ref.first))
        for i in range(3):
            want = occupancy[i] * gradients.expected_gradient(
                row_option, policy.transitions[i], ref.transitions[i]
            )
            assert np.allclose(g.transitions[i], want, rtol=1e-12, atol=1e-15)


def test_k2_misses_later_prefixes_in_the_drift_family():
    tab = sequence_gradient_table(*drift_pair(8, 0.5), 64)
    assert tab.later.norm > 0.01 * tab.reverse.norm
    for key in ("sum_k2_loss", "rb_loss"):
        row = tab.row[key]
        assert row.target == "mixed"
        assert row.relative_error == pytest.approx(tab.later_share, rel=1e-12)
        assert row.cos_reverse < 1 - 1e-6


@pytest.mark.parametrize(
    ("policy", "ref", "length"),
    [
        pytest.param(*circulant_pair(5, 0.8, uniform_first=False), 12, id="circulant"),
        pytest.param(*drift_pair(5, 0.8, "first"), 12, id="first-token-only"),
        pytest.param(random_chain(4, 31), random_chain(4, 32), 1, id="T=1"),
    ],
)
def test_k2_is_the_true_gradient_when_every_next_token_kl_is_equal(policy, ref, length):
    _, kappa = next_token_kl(policy, ref)
    assert length == 1 or np.ptp(kappa) < 1e-12
    tab = sequence_gradient_table(policy, ref, length)
    assert tab.later.norm < 1e-12 * max(tab.reverse.norm, 1e-300) + 1e-15
    assert tab.row["sum_k2_loss"].target == "reverse_kl"
    assert tab.row["rb_loss"].target == "reverse_kl"


@pytest.mark.parametrize("seed", range(5))
def test_at_t2_equal_next_token_kls_are_also_necessary(seed):
    policy, ref = random_chain(3, 100 + seed), random_chain(3, 200 + seed)
    _, kappa = next_token_kl(policy, ref)
    assert np.ptp(kappa) > 1e-3
    tab = sequence_gradient_table(policy, ref, 2)
    # T = 2: the later-prefix term is π1 ⊙ (κ − π1·κ) in the first-token logits, non-zero
    p1 = policy.first_probs
    assert np.allclose(tab.later.first, p1 * (kappa - p1 @ kappa), rtol=1e-12, atol=1e-15)
    assert np.allclose(tab.later.transitions, 0.0, atol=1e-15)
    assert tab.row["sum_k2_loss"].target == "mixed"


def test_k3_is_the_forward_gradient_only_when_prefix_frequencies_agree():
    # uniform first tokens, circulant (doubly stochastic) rows: both chains stay uniform
    same = sequence_gradient_table(*circulant_pair(5, 0.8), 10)
    assert same.row["sum_k3_loss"].target == "forward_kl"
    # T = 1: one categorical, Σk3 is ∇KL[π_ref‖π_θ] (kl_core.gradients.expected' claim)
    assert sequence_gradient_table(random_chain(4, 41), random_chain(4, 42), 1).row[
        "sum_k3_loss"
    ].target == "forward_kl"
    # the drift family visits prefixes differently: the gradient of neither KL
    tab = sequence_gradient_table(*drift_pair(8, 0.5), 32)
    row = tab.row["sum_k3_loss"]
    assert row.target == "mixed"
    assert row.cos_forward < 1 - 1e-6 and row.cos_reverse < 1 - 1e-6


def test_losses_agree_with_the_true_gradient_to_first_order_in_the_drift():
    """Near π_θ = π_ref every error is one order smaller than the gradient: 1 − cos ∝ δ²."""
    gaps = {key: [] for key in ("sum_k2_loss", "sum_k3_loss")}
    for drift in (0.4, 0.1, 0.025):
        tab = sequence_gradient_table(*drift_pair(6, drift), 16)
        for key in gaps:
            gaps[key].append(1.0 - tab.row[key].cos_reverse)
    for key, g in gaps.items():
        assert g[0] > 0 and g[1] < g[0] / 10 and g[2] < g[1] / 10, (key, g)


def test_identical_chains_have_zero_gradients():
    tab = sequence_gradient_table(*drift_pair(4, 0.0), 8)
    assert tab.reverse.norm == tab.forward.norm == 0.0
    assert {r.target for r in tab.rows} == {"zero"}
    assert np.isnan(tab.later_share)


def test_gradient_layout():
    policy, ref = random_chain(3, 51), random_chain(3, 52)
    g = expected_sequence_gradient("sum_k2_loss", policy, ref, 4)
    assert isinstance(g, SequenceGradient)
    assert g.first.shape == (3,) and g.transitions.shape == (3, 3)
    assert np.array_equal(g.flat, np.concatenate([g.first, g.transitions.ravel()]))
    assert g.norm == pytest.approx(float(np.linalg.norm(g.flat)), rel=1e-15)
    # every block of a softmax gradient sums to 0
    assert abs(g.first.sum()) < 1e-12 and np.allclose(g.transitions.sum(axis=1), 0.0, atol=1e-12)


def test_bad_arguments_name_the_parameter():
    policy, ref = drift_pair(3, 0.5)
    with pytest.raises(ValueError, match="option"):
        expected_sequence_gradient("k2", policy, ref, 4)
    with pytest.raises(ValueError, match="length"):
        sequence_gradient_table(policy, ref, 0)
    with pytest.raises(ValueError, match="policy"):
        sequence_kl_gradients(MarkovChain((0.0,), ((0.0,),)), MarkovChain((0.0,), ((0.0,),)), 3)
    with pytest.raises(ValueError, match="ref"):
        sequence_gradient_table(policy, "markov(0,0; 0,0)", 3)
    with pytest.raises(ValueError, match="K = 4"):
        sequence_gradient_table(policy, drift_pair(4, 0.5)[1], 3)
