"""Tests for kl_core.estimation.tails: the closed-form decision of which integrals are finite.

The references are conditions derived by hand from the densities' tails, one
family pair at a time (never from kl_core's own table), e.g.
E_q[r²] = ∫ p²/q < ∞ for two Gaussians iff σ_p² < 2σ_q²; E_q|log r|^j for a t
sampler against a Gaussian iff ν_q > 2j.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from kl_core.estimation.distributions import (
    Categorical,
    Gaussian,
    GaussianMixture,
    Laplace,
    StudentT,
)
from kl_core.estimation.exact import estimator_fourth_moment, estimator_moments, f_divergence, kl
from kl_core.estimation.tails import TailVerdict, tail_verdict

# Leading terms (k, d) of the integrands as log r → +∞ and → −∞.
PEARSON = ((2.0, 0), (0.0, 0))  # (e^t − 1)²
VAR_K1 = ((0.0, 2), (0.0, 2))  # (−t − m)²
VAR_K3_PQ = ((2.0, 2), (0.0, 0))  # (t e^t − e^t + 1 − m)²
M4_K3 = ((4.0, 0), (0.0, 4))  # (e^t − 1 − t − m)⁴


def both_sides(q, p, terms) -> list[TailVerdict]:
    up, down = terms
    return [tail_verdict(q.tail(side), p.tail(side), up, down) for side in (1, -1)]


def finite(q, p, terms) -> bool:
    return all(v.finite for v in both_sides(q, p, terms))


# ------------------------------------------------------------ E_q[r²] (Pearson χ²)


@pytest.mark.parametrize(
    ("sigma_p", "expect"),
    [(1.0, True), (1.4, True), (math.nextafter(math.sqrt(2.0), 0.0), True), (math.sqrt(2.0), False), (2.0, False)],
)
def test_gaussian_chi2_is_finite_iff_sigma_p_below_root2(sigma_p, expect):
    """∫ p²/q: exponent x²(1/(2σ_q²) − 1/σ_p²); the float √2 is just above √2."""
    assert finite(Gaussian(0.0, 1.0), Gaussian(0.3, sigma_p), PEARSON) is expect
    if sigma_p != math.nextafter(math.sqrt(2.0), 0.0):  # finite there, but ≈ e^{10^14}
        chi2 = f_divergence("pearson", Gaussian(0.3, sigma_p), Gaussian(0.0, 1.0))
        assert (chi2 < math.inf) is expect


def test_laplace_chi2_boundary_is_exact():
    """∫ p²/q for Laplaces: e^{|x|(1/b_q − 2/b_p)}: finite iff b_p < 2 b_q; at b_p = 2 b_q the integrand → const."""
    q = Laplace(0.0, 1.0)
    assert finite(q, Laplace(0.0, 1.999), PEARSON)
    verdicts = both_sides(q, Laplace(0.5, 2.0), PEARSON)
    assert not any(v.finite for v in verdicts)
    assert all(v.decay == "algebraic" and v.exponent == 0 for v in verdicts)


@pytest.mark.parametrize(
    ("q", "p", "expect"),
    [
        (Gaussian(0, 1), Laplace(0, 1), False),  # p²/q ~ e^{x²/2}
        (Gaussian(0, 1), StudentT(30), False),
        (Laplace(0, 1), StudentT(30), False),  # e^{|x|}·|x|^-62
        (Laplace(0, 1), Gaussian(0, 5), True),
        (StudentT(3), Gaussian(0, 1), True),
        (StudentT(3), StudentT(1.5001), True),  # |x|^{ν_q − 2ν_p − 1}: finite iff ν_q < 2ν_p
        (StudentT(3), StudentT(1.5), False),
        (GaussianMixture((0.5, 0.5), (-1, 1), (1, 2)), Gaussian(0, 2.8), True),  # widest σ = 2
        (GaussianMixture((0.5, 0.5), (-1, 1), (1, 2)), Gaussian(0, 2.9), False),
    ],
)
def test_chi2_across_families(q, p, expect):
    assert finite(q, p, PEARSON) is expect


# ------------------------------------------------------------ powers of log r


@pytest.mark.parametrize(("df", "expect"), [(3.9, False), (4.0, False), (4.0001, True), (9.0, True)])
def test_var_log_r_for_t_against_gaussian_needs_df_above_4(df, expect):
    """E_t[x⁴] < ∞ iff ν > 4; log r ~ −x²/2."""
    assert finite(StudentT(df), Gaussian(0, 1), VAR_K1) is expect


@pytest.mark.parametrize(("df", "expect"), [(1.9, False), (2.0, False), (2.1, True)])
def test_var_log_r_for_t_against_laplace_needs_df_above_2(df, expect):
    """log r ~ −|x|/b: E_t[x²] < ∞ iff ν > 2."""
    assert finite(StudentT(df), Laplace(0, 1), VAR_K1) is expect


def test_var_log_r_between_t_is_always_finite():
    """log r ~ (ν_q − ν_p) log|x|: any power of log|x| against |x|^{-(ν_q+1)}."""
    for nu_q, nu_p in ((0.1, 0.2), (0.1, 50.0), (30.0, 0.1)):
        assert finite(StudentT(nu_q), StudentT(nu_p), VAR_K1)
        assert finite(StudentT(nu_q), StudentT(nu_p), M4_K3) is (3 * nu_q < 4 * nu_p)


# ------------------------------------------------------------ issue 11, part 2


@pytest.mark.parametrize(
    ("nu_q", "nu_p"), [(3.0, 1.55), (3.9, 2.0), (5.0, 2.55), (2.0, 1.05), (4.0, 2.05)]
)
def test_var_k3_pq_between_t_is_finite_iff_nu_q_below_twice_nu_p(nu_q, nu_p):
    """The integrand decays like |x|^{ν_q − 2ν_p − 1} log²|x|; the old slope test missed 0 < 2ν_p − ν_q ≲ 0.13."""
    q, p = StudentT(nu_q), StudentT(nu_p)
    for v in both_sides(q, p, VAR_K3_PQ):
        assert v.finite and v.decay == "algebraic"
        assert v.exponent == Fraction(nu_q) - 2 * Fraction(nu_p) - 1 and v.log_power == 2
    assert math.isfinite(estimator_moments("k3_pq", q, p).var)
    assert not finite(StudentT(2 * nu_p), p, VAR_K3_PQ)  # the boundary itself diverges


# ------------------------------------------------------------ the other cases


def test_log_r_tending_to_a_constant_is_finite():
    """Same tails (a shifted t): log r → const, the integrand is O(q)."""
    (v, _) = both_sides(StudentT(3, 0, 1), StudentT(3, 5, 1), PEARSON)
    assert v.finite and v.log_r_sign == 0 and v.exponent == -4
    (v, _) = both_sides(Gaussian(0, 1), Gaussian(0, 1), PEARSON)
    assert v.finite and v.decay == "exponential"


def test_reasons_name_the_heavy_tail():
    (v, _) = both_sides(StudentT(3), Gaussian(0, 1), VAR_K1)
    assert v.reason == "q's tail is too heavy for the powers of log r in the integrand"
    (v, _) = both_sides(Gaussian(0, 1), Gaussian(0, 2), PEARSON)
    assert v.decay == "growth" and v.reason.startswith("the factor r^2 = (p/q)^2 grows faster")
    # KL[p‖q] = E_p[log r] for p = t_2 against q = N: p's tail, through r = p/q
    (v, _) = both_sides(Gaussian(0, 1), StudentT(2.0), ((1.0, 1), (0.0, 0)))
    assert not v.finite and v.reason.startswith("p's tail is too heavy")


def test_a_vanishing_direction_is_finite():
    assert tail_verdict(Gaussian(0, 1).tail(1), Gaussian(0, 2).tail(1), None, None).finite


def test_categorical_has_no_tail_and_side_is_checked():
    with pytest.raises(ValueError, match="no tails"):
        Categorical((0.0, 1.0)).tail(1)
    with pytest.raises(ValueError, match="side must be"):
        Gaussian().tail(0)


@pytest.mark.parametrize(
    "d",
    [
        Gaussian(1.5, 2.0),
        Laplace(-2.0, 0.5),
        StudentT(0.3, 2.0, 3.0),
        StudentT(7.0, -1.0, 0.2),
        GaussianMixture((0.3, 0.2, 0.5), (1.0, 3.0, -2.0), (2.0, 2.0, 1.0)),
    ],
    ids=["normal", "laplace", "t0.3", "t7", "mixture"],
)
@pytest.mark.parametrize("side", [1, -1])
def test_tail_matches_the_log_density_far_out(d, side):
    """a x² + b|x| + c log|x| + k against logpdf at |x| = 1e8 (t: up to O(loc/x))."""
    tail = d.tail(side)
    x = side * 1e8
    approx = float(tail.quadratic) * x * x + float(tail.linear) * abs(x) + float(tail.log) * math.log(abs(x)) + tail.const
    exact = float(d.logpdf([x])[0])
    assert approx == pytest.approx(exact, rel=1e-12, abs=1e-6)


# ------------------------------------------------------------ consistency with exact


def test_exact_moments_follow_the_verdicts():
    q, p = StudentT(5.0), Gaussian(0.0, 1.0)
    assert math.isfinite(kl(q, p))
    assert math.isfinite(estimator_moments("k1", q, p).var)  # ν > 4
    m4, note = estimator_fourth_moment("k1", q, p)  # needs ν > 8
    assert m4 == math.inf and "q's tail" in note
