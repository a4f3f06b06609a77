"""kl_core.gradients.flow at every scale of the reward: E[R] − β·KL and its ascent depend on R/β.

Multiplying R and β by c (and the step size by 1/c) changes neither the fixed points nor the
path, so a run must not change either: not at R = ±1e308 (where max R − min R overflows),
nor at R = ±1e200, β = 1e198 (where β·∂c/∂ℓ overflows), nor at R = 1e-12 (where a fixed
tolerance of 1e-10 passes any policy).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kl_core.gradients.expected import BASIC_OPTIONS
from kl_core.gradients.flow import analytic_optima, training_run, training_runs

START = np.array([1.0, 0.0, -1.0])
FLAT = np.zeros(3)
R = np.array([100.0, -100.0, 0.0])


def test_the_beta_bound_does_not_overflow_at_the_largest_rewards():
    # (max R − min R)/500 = 2e308/500 = 4e305 < 1e307: accepted, and nothing overflows on the way.
    r = np.array([1e308, -1e308, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = training_run("k2", START, FLAT, r, 1e307)
        rev, fwd = analytic_optima(FLAT, r, 1e307)
    assert np.isfinite(rev).all() and np.isfinite(fwd).all()
    np.testing.assert_allclose(run.fixed_point, rev, rtol=1e-8)
    np.testing.assert_allclose(training_run("k3", START, FLAT, r, 1e307).fixed_point, fwd, rtol=1e-8)
    # … and a β below it is refused with the bound as a number, not inf.
    with pytest.raises(ValueError, match=r"= 4e\+305 for this reward, got 1e\+300"):
        training_run("k2", START, FLAT, r, 1e300)


@pytest.mark.parametrize("option", BASIC_OPTIONS)
def test_a_huge_reward_and_beta_end_where_the_same_ratio_does(option):
    # R = ±1e200, β = 1e198 is R = ±100, β = 1 times 1e198; k3_pq found no fixed point there.
    small, huge = training_run(option, START, FLAT, R, 1.0), training_run(option, START, FLAT, R * 1e198, 1e198)
    assert (small.fixed_point is None) == (huge.fixed_point is None)
    np.testing.assert_allclose(huge.limit, small.limit, rtol=1e-8, atol=1e-300)
    assert huge.vanished == small.vanished


def test_k3_pq_settles_at_a_huge_reward():
    run = training_run("k3_pq", START, FLAT, R * 1e198, 1e198)
    assert run.fixed_point is not None and run.note.startswith("interior fixed point")
    np.testing.assert_allclose(run.fixed_point, [0.9821, 0.006559, 0.01132], rtol=1e-3)


@pytest.mark.parametrize("scale", [1e-7, 1e-12, 1e-200])
def test_a_tiny_reward_and_beta_reach_the_optimum(scale):
    # At R = 1e-12 the tolerance was 1e-10: the run stopped where it was and called it a fixed point.
    r, beta = np.array([1.0, -2.0, 0.5]) * scale, 0.3 * scale
    rev, fwd = analytic_optima(FLAT, r, beta)
    np.testing.assert_allclose(training_run("k2", START, FLAT, r, beta).fixed_point, rev, rtol=1e-8)
    np.testing.assert_allclose(training_run("k3", START, FLAT, r, beta).fixed_point, fwd, rtol=1e-8)


def test_powers_of_two_give_the_same_bits_below_the_unit_tolerance():
    # Below max|R| + β = 1/1024 the tolerance is relative too: the run is the same to the bit.
    r, beta = np.array([1.0, -2.0, 0.5]) * 2.0**-20, 0.3 * 2.0**-20
    a = training_runs(START, FLAT, r, beta, steps=30)
    b = training_runs(START, FLAT, r * 2.0**-900, beta * 2.0**-900, steps=30)
    for name, run in a.items():
        np.testing.assert_array_equal(b[name].probs, run.probs)
        np.testing.assert_array_equal(b[name].limit, run.limit)
        assert b[name].note.template == run.note.template  # verl:abs's kink keeps a token from settling
        assert b[name].residual == run.residual * 2.0**-900
        assert b[name].lr == run.lr * 2.0**900


def test_the_step_size_is_in_units_of_one_over_the_reward():
    # η·F is unchanged when R, β and 1/η are multiplied by the same power of 2.
    a = training_run("k3", START, FLAT, R, 1.0, lr=0.004, steps=40)
    b = training_run("k3", START, FLAT, R * 2.0**600, 2.0**600, lr=0.004 * 2.0**-600, steps=40)
    np.testing.assert_array_equal(b.probs, a.probs)
    assert b.lr == 0.004 * 2.0**-600
    default = training_run("k3", START, FLAT, R * 2.0**600, 2.0**600, steps=5)
    assert default.lr == pytest.approx(1.0 / (200.0 * 2.0**600 + 2.0**600), rel=1e-15)


def test_a_constant_reward_far_above_beta_moves_nothing_but_the_kl():
    # R = 1e300 everywhere: only R − E R enters the ascent, so the run ends at π_ref as for R = 0.
    ref = np.array([0.5, 0.0, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = training_run("k2", START, ref, [1e300] * 3, 1e-300)
        rev, fwd = analytic_optima(ref, [1e300] * 3, 1e-300)
    expected = np.exp(ref) / np.exp(ref).sum()
    np.testing.assert_allclose(run.fixed_point, expected, rtol=1e-8)
    np.testing.assert_allclose(rev, expected, rtol=1e-12)
    np.testing.assert_allclose(fwd, expected, rtol=1e-12)
