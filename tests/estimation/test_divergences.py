"""Tests for kl_core.estimation.divergences: the f-divergence registry.

Every entry's f is checked against a hand-written reference, its f′ against a
central finite difference of f, f′(1) against f′, and f″(1) against a finite
difference of f′ at 1.  Total variation has a kink at 1 and must say so.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from kl_core.estimation import exact
from kl_core.estimation.distributions import Gaussian
from kl_core.estimation.divergences import DIVERGENCES, FDivergence, get_divergence

# Independent references for f(u), u > 0, in 50-digit arithmetic (the direct
# forms cancel near u = 1, so a float64 reference would not be good enough there).
_MP_F = {
    "kl_pq": lambda u: u * mpmath.log(u),
    "kl_qp": lambda u: -mpmath.log(u),
    "k2": lambda u: mpmath.log(u) ** 2 / 2,
    "pearson": lambda u: (u - 1) ** 2,
    "hellinger": lambda u: (mpmath.sqrt(u) - 1) ** 2,
    "js": lambda u: (u * mpmath.log(u) - (1 + u) * mpmath.log((1 + u) / 2)) / 2,
    "tv": lambda u: abs(u - 1) / 2,
}


def reference_f(key: str, u: np.ndarray) -> np.ndarray:
    with mpmath.workdps(50):
        return np.array([float(_MP_F[key](mpmath.mpf(float(x)))) for x in u])


def reference_f_log(key: str, t: np.ndarray) -> np.ndarray:
    """f(e^t) with e^t taken exactly, not rounded to a double first."""
    with mpmath.workdps(50):
        return np.array([float(_MP_F[key](mpmath.exp(mpmath.mpf(float(x))))) for x in t])


# f(0+) = lim_{u -> 0} f(u).
LIMIT_AT_ZERO = {
    "kl_pq": 0.0,
    "kl_qp": math.inf,
    "k2": math.inf,
    "pearson": 1.0,
    "hellinger": 1.0,
    "js": 0.5 * math.log(2.0),
    "tv": 0.5,
}
# f''(1), derived by hand: u log u -> 1/u; -log u -> 1/u²; ½log²u -> (1 - log u)/u²;
# (u-1)² -> 2; (√u-1)² -> ½u^{-3/2}; JS -> ½(1/u - 1/(1+u)).
F2_AT_1 = {"kl_pq": 1.0, "kl_qp": 1.0, "k2": 1.0, "pearson": 2.0, "hellinger": 0.5, "js": 0.25}

U = np.array([0.01, 0.1, 0.37, 0.8, 0.999, 1.0, 1.001, 1.5, 2.0, 7.3, 50.0])
SMOOTH = sorted(F2_AT_1)


def test_registry_has_the_required_entries():
    assert set(DIVERGENCES) == set(_MP_F)
    for key, d in DIVERGENCES.items():
        assert isinstance(d, FDivergence) and d.key == key
        for text in (d.name, d.f_latex, d.divergence_latex, d.source):
            assert isinstance(text, str) and text.strip()


@pytest.mark.parametrize("key", sorted(_MP_F))
def test_f_matches_its_formula(key):
    d = DIVERGENCES[key]
    ref = reference_f(key, U)
    np.testing.assert_allclose(d.f(U), ref, rtol=1e-13, atol=1e-300)
    t = np.array([-1e-9, -1e-6, 1e-6, 1e-9])  # close to u = 1, where cancellation bites
    np.testing.assert_allclose(d.f_log(t), reference_f_log(key, t), rtol=1e-12)


@pytest.mark.parametrize("key", sorted(_MP_F))
def test_f_vanishes_at_one(key):
    assert DIVERGENCES[key].f(1.0) == 0.0
    assert DIVERGENCES[key].f_log(0.0) == 0.0


@pytest.mark.parametrize("key", sorted(_MP_F))
def test_f_at_zero_is_the_limit(key):
    d = DIVERGENCES[key]
    assert d.f(0.0) == LIMIT_AT_ZERO[key]
    assert d.f_log(-np.inf) == LIMIT_AT_ZERO[key]
    # ... and the limit is approached continuously from u > 0.
    if math.isfinite(LIMIT_AT_ZERO[key]):
        assert d.f(1e-12) == pytest.approx(LIMIT_AT_ZERO[key], abs=1e-5)  # √u: 2e-6 away


@pytest.mark.parametrize("key", sorted(_MP_F))
def test_fprime_matches_a_central_difference_of_f(key):
    d = DIVERGENCES[key]
    u = U[U != 1.0]  # TV has its kink at 1
    h = 1e-6 * u
    fd = (d.f(u + h) - d.f(u - h)) / (2.0 * h)
    np.testing.assert_allclose(d.fprime(u), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("key", SMOOTH)
def test_fprime_at_1_matches_fprime_and_a_central_difference(key):
    d = DIVERGENCES[key]
    assert d.fprime_at_1 == pytest.approx(float(d.fprime(np.array(1.0))), abs=1e-15)
    h = 1e-6
    fd = (float(d.f(1.0 + h)) - float(d.f(1.0 - h))) / (2.0 * h)
    assert d.fprime_at_1 == pytest.approx(fd, abs=1e-8)


@pytest.mark.parametrize("key", SMOOTH)
def test_f2_at_1_matches_a_central_difference_of_fprime(key):
    d = DIVERGENCES[key]
    h = 1e-5
    fd = (float(d.fprime(np.array(1.0 + h))) - float(d.fprime(np.array(1.0 - h)))) / (2.0 * h)
    assert d.f2_at_1 == pytest.approx(fd, rel=1e-8, abs=0)
    assert d.f2_at_1 == F2_AT_1[key]
    assert d.smooth


def test_total_variation_is_flagged_as_not_smooth():
    tv = get_divergence("tv")
    assert tv.fprime_at_1 is None and tv.f2_at_1 is None
    assert not tv.smooth
    # The kink: one-sided difference quotients at 1 are -1/2 and +1/2.
    h = 1e-7
    left = (float(tv.f(1.0)) - float(tv.f(1.0 - h))) / h
    right = (float(tv.f(1.0 + h)) - float(tv.f(1.0))) / h
    assert left == pytest.approx(-0.5, rel=1e-6, abs=0) and right == pytest.approx(
        0.5, rel=1e-6, abs=0
    )


@pytest.mark.parametrize("key", sorted(set(_MP_F) - {"k2"}))
def test_f_is_convex(key):
    """Second differences on a grid are >= 0 (k2's ½log²u is convex only on (0, e])."""
    u = np.linspace(0.05, 20.0, 2001)
    f = DIVERGENCES[key].f(u)
    assert (f[:-2] - 2.0 * f[1:-1] + f[2:] >= -1e-12).all()


def test_k2_f_is_not_convex_beyond_e():
    """A property worth knowing: E_q[k2] is an 'f-divergence' whose f is not convex."""
    u = np.array([3.0, 5.0, 7.0])
    f = get_divergence("k2").f(u)
    assert f[0] - 2.0 * f[1] + f[2] < 0


@pytest.mark.parametrize("key", sorted(_MP_F))
def test_f_log_does_not_overflow_to_nan(key):
    d = DIVERGENCES[key]
    with np.errstate(over="ignore"):
        big = d.f_log(np.array([800.0, 1e4, np.inf]))
    assert not np.isnan(big).any()
    expected_inf = key not in ("kl_qp", "k2")  # those grow like log u, not like u
    assert np.isinf(big).all() == expected_inf


@pytest.mark.parametrize("key", SMOOTH)
def test_fisher_limit_is_half_f2_at_1(key):
    r"""D_f(N(ε,1), N(0,1)) = ½ f″(1) ε² (1 + O(ε)): Fisher information of the location is 1."""
    eps = 1e-3
    d = exact.f_divergence(key, Gaussian(eps, 1.0), Gaussian(0.0, 1.0))
    assert d / eps**2 == pytest.approx(0.5 * F2_AT_1[key], rel=1e-5, abs=0)


def test_get_divergence_and_bad_input():
    assert get_divergence("pearson") is DIVERGENCES["pearson"]
    with pytest.raises(ValueError, match="name must be one of .*'renyi'"):
        get_divergence("renyi")
    with pytest.raises(ValueError, match="u must be >= 0"):
        get_divergence("pearson").f([-1.0])
    with pytest.raises(ValueError, match="u contains NaN"):
        get_divergence("pearson").f([math.nan])
    with pytest.raises(ValueError, match="u must be numeric"):
        get_divergence("pearson").f("abc")
