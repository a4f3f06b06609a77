"""Claim 9 (Tokens & sequences, the drift slider's help): what the tilt π_ref e^{δv} optimises.

It once said "the RLHF optimum for a reward v/β".  The tilt π_ref(j|i) e^{δ v_j} maximises
E[R] − β KL[π‖π_ref] one step at a time for the reward R = βδ·v, not v/β; over T ≥ 2
tilted tokens the sequence optimum π*(x) ∝ π_ref(x) e^{Σ_t R(x_t)/β} also weighs the
reward still to come (K = 4, T = 3, δ = β = 1: objective 1.5292 against the tilt's 1.4776).
With the first token only, the tilt is the sequence optimum too.
"""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from kl_core.sequences.markov import drift_pair, per_position_kl
from lab.notes import sequences as notes


def _reward(k: int, drift: float, beta: float) -> np.ndarray:
    return beta * drift * (1.0 - 2.0 * np.arange(k) / (k - 1))  # R = βδ·v, v from +1 to −1


def _objective(policy, ref, reward, beta, length, first_only=False) -> float:
    """J(π) = E_π[Σ_t R(x_t)] − β KL[π‖π_ref] over sequences of T tokens."""
    m = policy.marginals(length)
    gain = m[0] @ reward if first_only else float(np.sum(m @ reward))
    return gain - beta * float(per_position_kl(policy, ref, length).sum())


def _optimum(ref, reward, beta, length, first_only=False) -> float:
    """max_π J(π) = β log E_ref[e^{Σ R/β}], by the backward recursion of soft values."""
    value = np.zeros(ref.k)  # V_{T+1}
    for _position in range(length, 1, -1):  # T, T − 1, …, 2
        r = 0.0 if first_only else reward
        value = beta * logsumexp(ref.log_transitions + (r + value)[None, :] / beta, axis=1)
    return float(beta * logsumexp(ref.log_first + (reward + value) / beta))


def test_the_help_says_per_token_optimum_for_beta_delta_v():
    text = notes.DRIFT_HELP
    assert r"v/\beta" not in text and "RLHF optimum for a reward" not in text
    assert r"\beta\delta\, v" in text and "token by token" in text
    assert "With the first token only it is also the sequence optimum" in text


def test_tilt_is_the_optimum_per_token_and_not_per_sequence():
    beta = 1.0
    for k, drift, length in itertools.product((2, 4, notes.K_MAX), (0.0, 0.5, 1.0, 3.0),
                                              (1, 2, 3, 8)):
        reward = _reward(k, drift, beta)
        pol, ref = drift_pair(k, drift, "every")
        j_tilt = _objective(pol, ref, reward, beta, length)
        j_star = _optimum(ref, reward, beta, length)
        assert j_star >= j_tilt - 1e-9
        if length == 1 or drift == 0.0:
            assert j_tilt == pytest.approx(j_star, abs=1e-9)
        else:
            assert j_star > j_tilt + 1e-6, (k, drift, length)
        first, ref1 = drift_pair(k, drift, "first")  # first token only: the sequence optimum
        assert _objective(first, ref1, reward, beta, length, first_only=True) == pytest.approx(
            _optimum(ref1, reward, beta, length, first_only=True), abs=1e-9)


def test_review_numbers_by_enumeration():
    """K = 4, T = 3, δ = β = 1, over all 64 sequences: 1.5292 against 1.4776."""
    k, length, beta = 4, 3, 1.0
    pol, ref = drift_pair(k, 1.0, "every")
    reward = _reward(k, 1.0, beta)
    x = np.array(list(itertools.product(range(k), repeat=length)))
    total = reward[x].sum(axis=1)
    log_ref, log_pol = ref.log_prob(x), pol.log_prob(x)
    j_star = beta * logsumexp(log_ref + total / beta)
    j_tilt = float(np.sum(np.exp(log_pol) * (total - beta * (log_pol - log_ref))))
    assert (round(j_star, 4), round(j_tilt, 4)) == (1.5292, 1.4776)
    assert j_star == pytest.approx(_optimum(ref, reward, beta, length), abs=1e-12)
    assert j_tilt == pytest.approx(_objective(pol, ref, reward, beta, length), abs=1e-12)
    # one step: the tilt beats every perturbation of itself (it is the per-token optimum)
    rng = np.random.default_rng(0)
    row_ref, row_pol = ref.transition_probs[0], pol.transition_probs[0]

    def one_step(p):
        return p @ reward - beta * np.sum(p * np.log(p / row_ref))

    for _ in range(200):
        other = row_pol * np.exp(0.1 * rng.standard_normal(k))
        assert one_step(other / other.sum()) < one_step(row_pol)
