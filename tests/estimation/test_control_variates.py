"""Tests for kl_core.estimation.control_variates: the λ-parabola where λ* does not exist.

(The parabola itself is checked against closed forms in tests/estimation/test_fisher.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kl_core.estimation.control_variates import gain_along_path, lambda_parabola
from kl_core.estimation.distributions import Gaussian, StudentT
from kl_core.estimation.exact import estimator_moments, lambda_star


def test_lambda_star_is_nan_with_a_note_where_every_lambda_has_infinite_variance():
    """t_3 against N(0,1): Var(log r) = ∞, so Var(kλ) = ∞ for every λ (issue 11, part 5)."""
    q, p = StudentT(3.0), Gaussian(0.0, 1.0)
    par = lambda_parabola(q, p)
    assert math.isnan(par.lam_star) and not par.lam_star_defined
    assert par.lam_star_note == lambda_star(q, p).note != ""
    assert par.var_log_r == math.inf
    assert par.var_optimal == math.inf and math.isnan(par.gain)
    assert np.all(par.variance([-2.0, 0.0, 1.0, 8.187]) == np.inf)
    assert estimator_moments("k_lambda", q, p, lam=8.187).var == math.inf


def test_lambda_star_is_zero_where_only_k1_is_finite():
    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(0.0, 1.5))  # χ² = ∞
    assert par.lam_star == 0.0 and par.lam_star_defined
    assert "only λ = 0" in par.lam_star_note
    assert par.var_optimal == pytest.approx(par.var_log_r)


def test_lambda_star_is_defined_for_schulmans_pair():
    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(1.0, 1.0))
    assert par.lam_star_defined and par.lam_star_note == ""
    assert par.lam_star == pytest.approx(1 / (math.e - 1), rel=1e-12)
    assert math.isfinite(gain_along_path("shift", [1.0]).lam_star[0])


def test_where_the_parabola_cancels_the_variances_are_integrated_directly():
    """The parabola Var(log r) − 2λ Cov + λ² χ² loses its digits near its minimum."""
    from kl_core.estimation.distributions import parse

    # one logit moved: r takes two values, log r is linear in r on them, k_λ* is constant
    q = parse("categorical(2,1,0.5,0,-1,-2,-3,-19.5)")
    p = parse("categorical(2,1,0.5,0,-1,-2,-3,-24.9)")
    par = lambda_parabola(q, p)
    assert par.var_optimal == 0.0 and par.gain == math.inf and par.var_k3 > 0.0
    # a scale change of 1e-6: the gain near p = q on the scale path, about 2.33 (the parabola gave 1.05)
    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(0.0, 1.000001))
    assert par.gain == pytest.approx(7 / 3, rel=1e-4)
    # a mean shift of 1e-7: Var(k3) = e^{μ²} − 1 − μ² ≈ μ⁴/2, and the gain is ≥ 1 to rounding
    mu = 1e-7
    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(mu, 1.0))
    assert par.var_k3 == pytest.approx(mu**4 / 2, rel=1e-6)
    assert par.var_optimal <= par.var_k3 and par.gain >= 1.0
    # Schulman's μ = 1 is untouched: the parabola is accurate there
    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(1.0, 1.0))
    assert par.direct_var_k3 is None and par.direct_var_optimal is None


def test_a_lambda_star_rounding_decides_is_not_resolved():
    """q = N(0, 1), p = N(0, σ²): at σ = 1 + 1e-8 the computed λ* = 0.999999993 (exact 1 − 2θ =
    0.99999998) moved Var(kλ*) by 60%, and the gain read 1.467 instead of ≈ 7/3."""
    from kl_core.estimation.distributions import Categorical, parse

    for sigma in (1.00000001, 1.000000001, 1.00000000001):
        par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(0.0, sigma))
        assert not par.resolved and math.isnan(par.gain)
    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(0.0, 1.0000001))  # 10× further: resolved
    assert par.resolved and par.gain == pytest.approx(7 / 3, rel=1e-5)
    assert 1 - par.lam_star == pytest.approx(2 * math.log(1.0000001), rel=1e-3)
    # Var(k3) rounded to 0 (5e-49 next to Var(log r) = 1e-24) cannot be compared: not resolved
    assert not lambda_parabola(Gaussian(0.0, 1.0), Gaussian(1e-12, 1.0)).resolved
    assert not lambda_parabola(parse("categorical(0,0,0,0,0)"), parse("categorical(1e-12,0,0,0,0)")).resolved
    # a mean shift keeps its digits (log r = μx − μ²/2 in closed form), and so does Schulman's pair
    assert lambda_parabola(Gaussian(0.0, 1.0), Gaussian(1e-7, 1.0)).resolved
    assert lambda_parabola(Gaussian(0.0, 1.0), Gaussian(1.0, 1.0)).resolved
    # Var(kλ*) = 0 is kept only where r takes two values
    par = lambda_parabola(Categorical((0.0, 0.0)), Categorical((1e-3, 0.0)))
    assert par.resolved and par.var_optimal == 0.0 and par.gain == math.inf


def test_ratio_takes_at_most_two_values():
    from kl_core.estimation.control_variates import ratio_takes_at_most_two_values
    from kl_core.estimation.distributions import Categorical

    assert ratio_takes_at_most_two_values(Categorical((2.0, 1.0, 0.5, -19.5)), Categorical((2.0, 1.0, 0.5, -24.9)))
    assert not ratio_takes_at_most_two_values(Categorical((0.0, 0.0, 0.0)), Categorical((1e-6, 2e-6, 0.0)))
    assert not ratio_takes_at_most_two_values(Gaussian(0.0, 1.0), Gaussian(1.0, 1.0))
    with pytest.raises(ValueError, match="q must be a kl_core Distribution"):
        ratio_takes_at_most_two_values("normal(0,1)", Gaussian(0.0, 1.0))
    with pytest.raises(ValueError, match="categories"):
        ratio_takes_at_most_two_values(Categorical((0.0, 0.0)), Categorical((0.0, 0.0, 1.0)))


def test_log_second_moment_is_finite_where_chi2_passes_a_double():
    """log E_q[r²] for N(0, 1) against N(μ, s²) is μ²/(2 − s²) − log(s√(2 − s²)), past a double or not."""
    import math

    from kl_core.estimation.control_variates import lambda_parabola, log_second_moment
    from kl_core.estimation.distributions import parse

    for mu, s in ((1.0, 1.0), (26.7, 1.0), (-30.0, 0.9), (40.0, 1.1)):
        exact = mu**2 / (2 - s**2) - math.log(s * math.sqrt(2 - s**2))
        got = log_second_moment(parse("normal(0,1)"), parse(f"normal({mu},{s})"))
        assert abs(got - exact) <= 1e-10 * max(1.0, exact), (mu, s)
    assert math.isinf(log_second_moment(parse("normal(0,1)"), parse("normal(0,1.5)")))
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(26.7,1)"))
    assert math.isinf(par.var_r) and math.isinf(float(par.variance(0.2)))
    mu2 = 26.7**2  # Var(kλ) = μ² − 2λμ² + λ²(e^{μ²} − 1) = 1.608e308 at λ = 0.2
    exact = mu2 - 0.4 * mu2 + math.exp(mu2 + 2 * math.log(0.2))
    assert abs(par.variance_at(0.2) / exact - 1) < 1e-9 and exact > 1.6e308
    assert math.isinf(par.variance_at(0.25)) and par.variance_at(0.0) == par.var_log_r


def test_log_lambda_star_and_the_lambda_limit_past_a_double():
    """q = N(0,1), p = N(30,1): E_q[r²] = e^{μ²} = e^900 and Cov = KL[p‖q] + KL[q‖p] = μ² = 900,
    so log λ* = log 900 − 900 and Var(kλ) fits a double for |λ| < exp(½(log DBL_MAX − 900))."""
    import sys

    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(30.0, 1.0))
    assert par.lam_star == 0.0 and math.isinf(par.var_r)  # the core's λ* is 0 there
    assert par.log_lam_star == pytest.approx(math.log(900.0) - 900.0, rel=1e-9)
    limit = 0.5 * (math.log(sys.float_info.max) - 900.0)
    assert par.log_lam_limit == pytest.approx(limit, rel=1e-9)
    inside, outside = math.exp(limit) * 0.99, math.exp(limit) * 1.01
    assert math.isfinite(par.variance_at(inside)) and math.isinf(par.variance_at(outside))
    # Var(kλ) = λ²(e^s − 1) + s − 2λs with s = μ² (closed form), at the edge of a double
    assert par.variance_at(inside) == pytest.approx(math.exp(2 * math.log(inside) + 900.0) + 900.0, rel=1e-9)
    near = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(1.0, 1.0))
    assert near.log_lam_star == pytest.approx(-math.log(math.e - 1.0), rel=1e-10)  # λ* = 1/(e − 1)
    assert math.isinf(near.log_lam_limit)
