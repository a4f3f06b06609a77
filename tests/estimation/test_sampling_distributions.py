"""Tests for kl_core.estimation.sampling_distributions: the normal approximation of a batch mean and the SEs.

Analytic values where they exist (normal and exponential moments, Schulman's
closed forms), Monte Carlo at fixed seeds otherwise, with tolerances of a few
standard errors computed from the same run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from kl_core.estimation.distributions import Gaussian, parse
from kl_core.estimation.exact import estimator_moments, kl
from kl_core.estimation.montecarlo import simulate
from kl_core.estimation.published import SCHULMAN_2020
from kl_core.estimation.sampling_distributions import (
    NormalApproximation,
    batch_mean_normal,
    exact_relative_figures,
    mc_relative_standard_errors,
    mc_standard_errors,
    observed_spread,
)

# ------------------------------------------------------------ batch_mean_normal


def test_se_is_sigma_over_root_n():
    a = batch_mean_normal(0.5, math.e - 2, 1000)
    assert isinstance(a, NormalApproximation)
    assert a.se == pytest.approx(math.sqrt((math.e - 2) / 1000), rel=1e-15)
    assert a.has_density


@pytest.mark.parametrize(("mean", "var", "n"), [(0.0, 1.0, 1), (0.125, 0.034, 1000), (-3.0, 7.0, 17)])
def test_pdf_is_the_normal_density_and_integrates_to_one(mean, var, n):
    a = batch_mean_normal(mean, var, n)
    x = np.linspace(mean - 6 * a.se, mean + 6 * a.se, 101)
    np.testing.assert_allclose(a.pdf(x), stats.norm(mean, math.sqrt(var / n)).pdf(x), rtol=1e-12)
    total, _ = integrate.quad(a.pdf, mean - 12 * a.se, mean + 12 * a.se, points=[mean])
    assert total == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("var", [math.inf, 0.0])
def test_no_density_for_infinite_or_zero_variance(var):
    a = batch_mean_normal(0.1, var, 100)
    assert not a.has_density
    with pytest.raises(ValueError, match="no normal density"):
        a.pdf([0.0])


def test_infinite_variance_has_infinite_se():
    assert batch_mean_normal(0.1, math.inf, 100).se == math.inf


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.0, -1.0, 10), "var must be >= 0"),
        ((math.nan, 1.0, 10), "must not be NaN"),
        ((0.0, math.nan, 10), "must not be NaN"),
        ((0.0, 1.0, 0), "n must be >= 1"),
        ((0.0, 1.0, 2.5), "n must be a positive integer"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_message(args, message):
    with pytest.raises(ValueError, match=message):
        batch_mean_normal(*args)


@pytest.mark.parametrize("key", ["k1", "k2", "k3"])
def test_batch_means_follow_the_normal_approximation(key):
    """R = 4000 batch means of N = 1000: mean, spread and shape match N(μ, σ²/N)."""
    q, p = Gaussian(0, 1), Gaussian(1, 1)
    m = estimator_moments(key, q, p)
    approx = batch_mean_normal(m.mean, m.var, 1000)
    sim = simulate(q, p, 1000, repeats=4000, seed=7, keys=(key,))
    bm = np.asarray(sim[key].batch_means)
    r = bm.size
    assert abs(bm.mean() - approx.mean) < 4 * approx.se / math.sqrt(r)
    # SE of a sample std of near-normal values: σ/√(2R)
    assert abs(bm.std(ddof=1) - approx.se) < 4 * approx.se / math.sqrt(2 * r)
    # the shape: at N = 1000 the skewness left over is far below what KS detects at R = 4000
    assert stats.kstest(bm, stats.norm(approx.mean, approx.se).cdf).pvalue > 1e-3


# ------------------------------------------------------------ exact_relative_figures


@pytest.mark.parametrize("experiment", SCHULMAN_2020, ids=lambda e: f"mu={e.p.mu:g}")
def test_exact_relative_figures_round_to_schulmans_table(experiment):
    q, p = experiment.q, experiment.p
    true_kl = kl(q, p)
    for row in experiment.rows:
        m = estimator_moments(row.estimator, q, p)
        bias, std = exact_relative_figures(m.mean, m.var, true_kl)
        # to the printed rounding; the k2 μ=0.1 bias sits on its boundary (0.0025)
        assert abs(bias - row.bias.value) <= row.bias.rounding + 1e-12
        assert abs(std - row.std.value) <= row.std.rounding + 1e-12


def test_exact_relative_figures_closed_forms():
    # q = N(0,1), p = N(1,1): k2 has mean 5/8 and variance 3/4, k3 variance e − 2
    assert exact_relative_figures(0.625, 0.75, 0.5) == pytest.approx((0.25, math.sqrt(3.0)))
    bias, std = exact_relative_figures(0.5, math.e - 2, 0.5)
    assert bias == 0.0
    assert std == pytest.approx(2 * math.sqrt(math.e - 2), rel=1e-15)


def test_exact_relative_figures_undefined_at_zero_target_and_infinite_with_the_variance():
    assert all(math.isnan(v) for v in exact_relative_figures(0.0, 0.0, 0.0))
    assert all(math.isnan(v) for v in exact_relative_figures(1.0, 1.0, math.inf))
    q, p = parse("normal(0,1)"), parse("normal(0,1.5)")  # Var(k3) = ∞
    m = estimator_moments("k3", q, p)
    bias, std = exact_relative_figures(m.mean, m.var, kl(q, p))
    assert bias == 0.0 and std == math.inf


# ------------------------------------------------------------ mc_relative_standard_errors


def test_mc_standard_errors_for_normal_values():
    v = np.random.default_rng(1).standard_normal(200_000)
    se_bias, se_std = mc_relative_standard_errors(v, v.std(ddof=1), v.size, 0.5)
    assert se_bias == pytest.approx(v.std(ddof=1) / math.sqrt(v.size) / 0.5, rel=1e-15)
    assert se_std == pytest.approx(1.0 / math.sqrt(2 * v.size) / 0.5, rel=0.02)  # κ = 3


def test_mc_standard_error_of_the_std_matches_repeated_runs():
    """Exponential values (κ = 9): SE(σ̂) = σ·√(8/(4M)) = √(2/M); check it empirically too."""
    rng = np.random.default_rng(2)
    m, runs = 2_000, 3_000
    stds = np.array([rng.exponential(size=m).std(ddof=1) for _ in range(runs)])
    v = rng.exponential(size=200_000)
    _, se_std = mc_relative_standard_errors(v[:20_000], 1.0, m, 1.0)  # a subsample: its κ
    assert se_std == pytest.approx(math.sqrt(2.0 / m), rel=0.1)
    # the empirical spread of σ̂ over the runs agrees within its own SE (≈ 1/√(2·runs) relative)
    assert stds.std(ddof=1) == pytest.approx(math.sqrt(2.0 / m), rel=0.08)


def test_mc_standard_errors_from_a_simulation_cover_the_exact_figures():
    q, p = Gaussian(0, 1), Gaussian(1, 1)
    true_kl = kl(q, p)
    n, repeats = 1000, 200
    sim = simulate(q, p, n, repeats=repeats, seed=3, keys=("k1", "k2", "k3"))
    for key in ("k1", "k2", "k3"):
        s = sim[key]
        m = estimator_moments(key, q, p)
        exact_bias, exact_std = exact_relative_figures(m.mean, m.var, true_kl)
        se_bias, se_std = mc_relative_standard_errors(s.samples, s.std, n * repeats, true_kl)
        assert abs(s.bias_over_true - exact_bias) < 4 * se_bias
        assert abs(s.std_over_true - exact_std) < 4 * se_std


@pytest.mark.parametrize(
    ("std", "target"), [(1.0, 0.0), (1.0, math.inf), (1.0, math.nan), (math.inf, 1.0), (math.nan, 1.0)]
)
def test_mc_standard_errors_are_nan_when_undefined(std, target):
    assert all(math.isnan(v) for v in mc_relative_standard_errors([0.0, 1.0], std, 10, target))


def test_mc_standard_error_of_constant_values():
    se_bias, se_std = mc_relative_standard_errors(np.zeros(10), 0.0, 10, 1.0)
    assert se_bias == 0.0 and math.isnan(se_std)
    with pytest.raises(ValueError, match="count must be >= 1"):
        mc_relative_standard_errors([0.0], 1.0, 0, 1.0)


def test_absolute_standard_errors_are_the_relative_ones_times_the_target():
    v = np.random.default_rng(4).exponential(size=50_000)
    se_mean, se_std = mc_standard_errors(v, v.std(ddof=1), v.size)
    assert se_mean == pytest.approx(v.std(ddof=1) / math.sqrt(v.size), rel=1e-15)
    assert se_std == pytest.approx(math.sqrt(2.0 / v.size), rel=0.1)  # exponential: κ = 9
    rel = mc_relative_standard_errors(v, v.std(ddof=1), v.size, 0.25)
    assert rel == pytest.approx((se_mean / 0.25, se_std / 0.25), rel=1e-15)
    assert all(math.isnan(x) for x in mc_standard_errors(v, math.inf, v.size))


def test_the_se_of_a_subnormal_variance_is_not_0():
    """σ² = 1e-322 (Gaussians 1e-161 apart): σ²/N underflowed to 0, so the SE printed as 0."""
    from kl_core.estimation.sampling_distributions import batch_mean_normal

    se = batch_mean_normal(0.0, 1e-322, 1000).se
    assert se > 0.0 and abs(se / (1e-161 / 1000**0.5) - 1) < 1e-2


# ------------------------------------------------------------ observed_spread


def test_observed_spread_is_the_mean_and_ddof1_sd_of_the_finite_estimates():
    v = np.random.default_rng(3).standard_normal(501)
    centre, sd = observed_spread(np.append(v, [np.inf, np.nan]))
    assert centre == pytest.approx(float(np.mean(v)), rel=1e-12)
    assert sd == pytest.approx(math.sqrt(float(np.sum((v - v.mean()) ** 2)) / 500), rel=1e-12)
    assert observed_spread([2.0]) == (2.0, pytest.approx(math.nan, nan_ok=True))
    assert all(math.isnan(x) for x in observed_spread([math.inf]))
