"""Tests for kl_core.gradients.flow: where exact expected-gradient ascent ends, against closed forms.

The two analytic optima are checked by their defining equations (normalisation
and the stationarity of E[R] − β·KL, by finite differences), and every run that
reports an interior fixed point is checked against the optimum of the KL its
expected gradient is (:data:`kl_core.libraries.crosswalk.CrosswalkEntry.grad_target`).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax

from kl_core.gradients import flow as gradient_flow
from kl_core.gradients.expected import BASIC_OPTIONS, loss_entries
from kl_core.gradients.flow import (
    MAX_REWARD_RANGE_OVER_BETA,
    analytic_optima,
    training_run,
    training_runs,
)
from kl_core.libraries.crosswalk import lookup

SEED = 20251202
REF = np.array([0.4, 0.1, -0.2, 0.3, -0.5, 0.0])
START = np.array([0.0, 0.5, -0.3, 0.2, 0.1, -0.4])
REWARD = np.array([1.0, 0.2, 0.5, -0.3, 0.0, 0.8])
BETA = 0.5


def _objective(theta: np.ndarray, lr: np.ndarray, r: np.ndarray, beta: float, direction: str) -> float:
    lp = log_softmax(theta)
    p, q = np.exp(lp), np.exp(lr)
    kl = float(p @ (lp - lr)) if direction == "reverse" else float(q @ (lr - lp))
    return float(p @ r) - beta * kl


def _fd(f, x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# --------------------------------------------------------------------------- #
# The analytic optima
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("beta", [0.05, 0.5, 3.0])
def test_analytic_optima_are_stationary_points_of_the_objective(beta):
    lr = log_softmax(REF)
    rev, fwd = analytic_optima(REF, REWARD, beta)
    assert rev.sum() == pytest.approx(1.0, abs=1e-15) and fwd.sum() == pytest.approx(1.0, abs=1e-15)
    for probs, direction in ((rev, "reverse"), (fwd, "forward")):
        g = _fd(lambda t, d=direction: _objective(t, lr, REWARD, beta, d), np.log(probs))
        np.testing.assert_allclose(g, 0.0, atol=1e-8)


def test_analytic_optima_closed_forms():
    q = np.exp(log_softmax(REF))
    rev, fwd = analytic_optima(REF, REWARD, BETA)
    want = q * np.exp(REWARD / BETA)
    np.testing.assert_allclose(rev, want / want.sum(), rtol=1e-13)
    c = REWARD + BETA * q / fwd  # π_i = β q_i/(c − R_i): the same c for every token, above max R
    np.testing.assert_allclose(c, c.mean(), rtol=1e-12)
    assert c.mean() > REWARD.max()


def test_analytic_optima_with_a_constant_reward_is_the_reference():
    q = np.exp(log_softmax(REF))
    rev, fwd = analytic_optima(REF, np.full(6, 2.0), 0.3)
    np.testing.assert_allclose(rev, q, rtol=1e-13)
    np.testing.assert_allclose(fwd, q, rtol=1e-12)


# --------------------------------------------------------------------------- #
# Where each option ends
# --------------------------------------------------------------------------- #
REVERSE = ["k2", "k1_score", "k_lambda", "verl:k3+", "verl:mse", "TRL:use_bias_correction_kl", "OpenRLHF:k3+unbiased_gradient"]
FORWARD = ["k3", "verl:low_var_kl", "TRL:beta", "OpenRLHF:k3"]


@pytest.mark.parametrize("name", REVERSE)
def test_reverse_kl_options_end_at_the_reverse_optimum(name):
    rev, _ = analytic_optima(REF, REWARD, BETA)
    run = training_run(name, START, REF, REWARD, BETA)
    assert run.fixed_point is not None, run.note
    np.testing.assert_allclose(run.fixed_point, rev, rtol=1e-8)
    assert run.vanished == () and "interior" in run.note
    np.testing.assert_array_equal(run.limit, run.fixed_point)


@pytest.mark.parametrize("name", FORWARD)
def test_forward_kl_options_end_at_the_forward_optimum(name):
    _, fwd = analytic_optima(REF, REWARD, BETA)
    run = training_run(name, START, REF, REWARD, BETA)
    assert run.fixed_point is not None, run.note
    np.testing.assert_allclose(run.fixed_point, fwd, rtol=1e-8)


@pytest.mark.parametrize("name", ["k1", "verl:kl"])
def test_k1_as_a_loss_drifts_to_the_best_reward_token(name):
    run = training_run(name, START, REF, REWARD, BETA)
    best = int(np.argmax(REWARD))
    assert run.fixed_point is None
    assert run.vanished == tuple(i for i in range(6) if i != best)
    assert "no interior fixed point" in run.note and f"[{best}]" in run.note
    np.testing.assert_array_equal(run.limit, np.eye(6)[best])  # it ends on the best-reward token
    # Along the recorded ascent the best token only gains.
    assert np.all(np.diff(run.probs[:, best]) > 0)


def test_clamped_k1_leaves_tokens_hovering_at_the_clamp_edge():
    # OpenRLHF clamps k1 to [-10, 10]: below π_ref·e^-10 a token loses its (constant) k1
    # gradient, so h = R there instead of R − β.  Tokens whose R is within β of the best
    # token's level keep crossing that edge; the others (R + 0 below it) still vanish.
    run = training_run("OpenRLHF:k1", START, REF, REWARD, BETA)
    assert run.fixed_point is None
    assert run.vanished == (1, 3, 4)
    assert "have not settled" in run.note and "5" in run.note
    assert "has a clamp" in run.note  # the cause it names is this option's


#: Start, reference and reward of runs that stop before they settle.
_UNSETTLING = ([0.5, -1.0, 0.2, 0.0, 1.0, -0.3], np.zeros(6), [1.0, 0.0, 2.0, 0.5, -1.0, 1.5])


@pytest.mark.parametrize("option", ["k2", "k3", "verl:k3+", "OpenRLHF:k1+unbiased_gradient"])
def test_a_run_cut_short_with_a_smooth_gradient_blames_no_kink_or_clamp(option):
    # One step per token and no room to continue: the run stops before it settles.  These
    # gradients never jump (verl's "+" and OpenRLHF's unbiased_gradient take k2's on-policy),
    # so the note must not name a kink or a clamp as the cause.
    run = training_run(option, *_UNSETTLING, 0.05, steps=1, max_steps=1)
    assert "have not settled" in run.note
    assert "has no jump" in run.note
    assert "kink" not in run.note and "clamp" not in run.note


def test_a_run_with_abs_that_does_not_settle_names_the_kink():
    run = training_run("verl:abs", *_UNSETTLING, 0.5)
    assert "have not settled" in run.note
    assert "kink at log r = 0" in run.note


def test_clamped_k3_lets_tokens_fall_when_the_forward_optimum_is_below_its_dead_zone():
    # Uniform reference, one token 3 above the rest, β = 0.1: the forward optimum gives the
    # others π = β q/(c − R) < 0.08 q, where verl clamps k3 (k3 > 10) and its gradient is 0.
    ref, start, reward, beta = np.zeros(6), np.zeros(6), np.array([3.0, 0, 0, 0, 0, 0]), 0.1
    q = np.full(6, 1 / 6)
    _, fwd = analytic_optima(ref, reward, beta)
    assert np.all(fwd[1:] < 0.08 * q[1:])
    unclamped = training_run("k3", start, ref, reward, beta)
    np.testing.assert_allclose(unclamped.fixed_point, fwd, rtol=1e-8)
    for name in ("verl:low_var_kl", "OpenRLHF:k3"):
        run = training_run(name, start, ref, reward, beta)
        assert run.fixed_point is None and run.vanished == (1, 2, 3, 4, 5), name
    fixed = training_run("verl:k3+", start, ref, reward, beta)  # verl's own fix: not clamped
    np.testing.assert_allclose(fixed.fixed_point, analytic_optima(ref, reward, beta)[0], rtol=1e-8)


def test_clamped_k3_is_harmless_when_the_optimum_stays_out_of_the_dead_zone():
    _, fwd = analytic_optima(REF, REWARD, BETA)
    q = np.exp(log_softmax(REF))
    assert np.all(fwd > 0.08 * q)
    run = training_run("verl:low_var_kl", START, REF, REWARD, BETA)
    np.testing.assert_allclose(run.fixed_point, fwd, rtol=1e-8)


def test_k3_in_the_reward_empties_the_tokens_below_the_reference():
    # Score gradient of k3 is ∇KL[θ‖ref] − ∇KL[ref‖θ]: tokens below π_ref are pushed further down.
    run = training_run(lookup("verl", "low_var_kl", acts_on="reward"), START, REF, REWARD, BETA)
    assert run.fixed_point is None and len(run.vanished) >= 1
    k1_reward = training_run(lookup("verl", "kl", acts_on="reward"), START, REF, REWARD, BETA)
    np.testing.assert_allclose(k1_reward.fixed_point, analytic_optima(REF, REWARD, BETA)[0], rtol=1e-8)


def test_constant_reward_and_k1_stay_at_the_start():
    run = training_run("k1", START, REF, np.full(6, 0.7), BETA)
    np.testing.assert_allclose(run.fixed_point, np.exp(log_softmax(START)), rtol=1e-12)


def test_trajectory_is_the_recorded_ascent():
    run = training_run("k2", START, REF, REWARD, BETA, steps=50)
    assert run.steps.tolist() == list(range(51)) and run.probs.shape == (51, 6)
    np.testing.assert_allclose(run.probs[0], np.exp(log_softmax(START)), rtol=1e-14)
    np.testing.assert_allclose(run.probs.sum(axis=1), 1.0, atol=1e-14)
    np.testing.assert_array_equal(run.end, run.probs[-1])
    # k2's expected gradient is ∇KL[π‖π_ref]: the run climbs E[R] − β·KL[π‖π_ref] at every step.
    lr = log_softmax(REF)
    values = [_objective(np.log(p), lr, REWARD, BETA, "reverse") for p in run.probs]
    assert np.all(np.diff(values) > 0)
    assert run.lr == pytest.approx(1.0 / (REWARD.max() - REWARD.min() + BETA))


def test_small_beta_and_k64():
    rng = np.random.default_rng(SEED)
    k = 64
    start, ref, reward = rng.standard_normal(k), rng.standard_normal(k), rng.standard_normal(k)
    rev, fwd = analytic_optima(ref, reward, 0.3)
    np.testing.assert_allclose(training_run("k2", start, ref, reward, 0.3).fixed_point, rev, rtol=1e-7)
    np.testing.assert_allclose(training_run("k3", start, ref, reward, 0.3).fixed_point, fwd, rtol=1e-7)
    small = 2.0 / 200  # (max R − min R)/β = 200 on a reward in [0, 2]
    r8 = rng.uniform(0, 2, 8)
    r8[:2] = 0.0, 2.0
    s8, q8 = rng.standard_normal(8), rng.standard_normal(8)
    rev8, fwd8 = analytic_optima(q8, r8, small)
    np.testing.assert_allclose(training_run("k1_score", s8, q8, r8, small).fixed_point, rev8, rtol=1e-7, atol=1e-300)
    np.testing.assert_allclose(training_run("k3", s8, q8, r8, small).fixed_point, fwd8, rtol=1e-7)


def test_training_runs_covers_every_row():
    runs = training_runs(START, REF, REWARD, BETA, steps=20)
    assert list(runs)[: len(BASIC_OPTIONS)] == list(BASIC_OPTIONS)
    assert len(runs) == len(BASIC_OPTIONS) + len(loss_entries())
    for run in runs.values():
        assert (run.fixed_point is None) == bool(run.note and not run.note.startswith("interior"))


# --------------------------------------------------------------------------- #
# Bad input
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: training_run("k2", START, REF, REWARD, 0.0), "beta must be > 0"),
        (lambda: training_run("k2", START, REF, REWARD, -1.0), "beta must be > 0"),
        (lambda: training_run("k2", START, REF, REWARD[:3], BETA), "reward must have one value per token"),
        (lambda: training_run("k2", START, REF, [np.nan] * 6, BETA), "reward contains NaN"),
        (lambda: training_run("k2", START, REF, [np.inf] + [0.0] * 5, BETA), "reward must be finite"),
        (lambda: training_run("k2", START, REF[:3], REWARD, BETA), "ref must have the policy's 6 tokens"),
        (lambda: training_run("k2", START, REF, [0, 0, 0, 0, 0, 10.0], 0.01), "beta must be at least"),
        (lambda: training_run("k2", START, REF, REWARD, BETA, steps=0), "steps must be >= 1"),
        (lambda: training_run("k2", START, REF, REWARD, BETA, lr=-1.0), "lr must be > 0"),
        (lambda: training_run("nope", START, REF, REWARD, BETA), "option must be one of"),
        (lambda: analytic_optima(REF, REWARD, float("nan")), "beta must be finite"),
    ],
)
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_limit_on_reward_range_over_beta_is_the_documented_one():
    spread = REWARD.max() - REWARD.min()
    training_run("k2", START, REF, REWARD, 1.001 * spread / MAX_REWARD_RANGE_OVER_BETA, steps=5)
    with pytest.raises(ValueError, match="beta must be at least"):
        training_run("k2", START, REF, REWARD, 0.99 * spread / MAX_REWARD_RANGE_OVER_BETA, steps=5)


def test_module_exports_exist():
    for name in gradient_flow.__all__:
        assert hasattr(gradient_flow, name)
