"""Tests for kl_core.estimation.fisher, kl_core.estimation.paths and kl_core.estimation.control_variates against closed forms.

Along the Gaussian mean-shift path q = N(0, 1), p = N(θ, 1), with log r = θx − θ²/2:

* KL[q‖p] = KL[p‖q] = θ²/2 exactly;
* E_q[k2] = ½ E[(θx − θ²/2)²] = ½(θ² + θ⁴/4), so (E[k2] − KL)/KL = θ²/4;
* χ²(p‖q) = E_q[r²] − 1 = e^{θ²} − 1;
* H²(p,q) = 2(1 − BC) with the Bhattacharyya coefficient BC = e^{−θ²/8};
* Var(log r) = θ², Cov(log r, r) = KL[p‖q] + KL[q‖p] = θ², Var(r) = χ², hence
  λ* = θ²/(e^{θ²} − 1) and Var(k3) = e^{θ²} − 1 − θ².

Along the scale path p = N(0, σ²), σ = e^θ: KL[q‖p] = θ + e^{−2θ}/2 − ½,
KL[p‖q] = −θ + e^{2θ}/2 − ½, χ² = 1/(σ√(2 − σ²)) − 1 for σ² < 2 (∞ beyond) and
H² = 2(1 − √(2σ/(1 + σ²))).  The logit path is checked against direct sums
over its five tokens.  Each path's Fisher information is checked by a finite
difference of KL, and for the logit path against Var_{p0}(v).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kl_core.estimation.control_variates import gain_along_path, lambda_parabola
from kl_core.estimation.distributions import Gaussian
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.fisher import (
    FisherCurve,
    divergence_along_path,
    fisher_curve,
    k2_bias_along_path,
    quadratic_approximation,
    smooth_divergences,
)
from kl_core.estimation.paths import PATHS, get_path

SMOOTH = [k for k, d in DIVERGENCES.items() if d.f2_at_1 is not None]
THETAS = np.array([-2.0, -0.7, -0.1, 0.05, 0.3, 1.0, 2.5])

# ------------------------------------------------------------------ closed forms: mean shift

SHIFT = {
    "kl_qp": lambda t: t**2 / 2,
    "kl_pq": lambda t: t**2 / 2,
    "k2": lambda t: 0.5 * (t**2 + t**4 / 4),
    "pearson": lambda t: np.expm1(t**2),
    "hellinger": lambda t: 2.0 * -np.expm1(-(t**2) / 8),
}


@pytest.mark.parametrize("name", sorted(SHIFT))
def test_shift_path_matches_closed_forms(name):
    got = divergence_along_path("shift", name, THETAS)
    np.testing.assert_allclose(got, SHIFT[name](THETAS), rtol=1e-9, atol=1e-14)


def test_shift_path_k2_bias_is_theta4_over_8_and_relative_bias_theta2_over_4():
    b = k2_bias_along_path("shift", THETAS)
    np.testing.assert_allclose(b.bias, THETAS**4 / 8, rtol=1e-8, atol=1e-15)
    np.testing.assert_allclose(b.relative_bias, THETAS**2 / 4, rtol=1e-8, atol=1e-12)


def test_schulmans_two_points():
    b = k2_bias_along_path("shift", [0.1, 1.0])
    assert b.kl.tolist() == pytest.approx([0.005, 0.5], rel=1e-12)
    assert b.mean_k2.tolist() == pytest.approx([0.0050125, 0.625], rel=1e-10)
    assert b.relative_bias[0] == pytest.approx(0.0025, rel=1e-8)
    assert b.relative_bias[1] == pytest.approx(0.25, rel=1e-10)


def test_relative_bias_is_nan_where_kl_is_zero():
    b = k2_bias_along_path("shift", [0.0, 0.5])
    assert math.isnan(b.relative_bias[0])
    assert b.bias[0] == 0.0


# ------------------------------------------------------------------ closed forms: scale


def _scale_chi2(t):
    s = np.exp(t)
    with np.errstate(invalid="ignore"):
        return np.where(s**2 < 2, 1.0 / (s * np.sqrt(2.0 - s**2)) - 1.0, np.inf)


SCALE = {
    "kl_qp": lambda t: t + np.exp(-2 * t) / 2 - 0.5,
    "kl_pq": lambda t: -t + np.exp(2 * t) / 2 - 0.5,
    "pearson": _scale_chi2,
    "hellinger": lambda t: 2.0 * (1.0 - np.sqrt(2 * np.exp(t) / (1 + np.exp(2 * t)))),
}
SCALE_THETAS = np.array([-0.6, -0.25, -0.02, 0.01, 0.2, 0.34, 0.36, 0.6])


@pytest.mark.parametrize("name", sorted(SCALE))
def test_scale_path_matches_closed_forms(name):
    got = divergence_along_path("scale", name, SCALE_THETAS)
    want = SCALE[name](SCALE_THETAS)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-8, atol=1e-14)


def test_chi2_on_the_scale_path_is_infinite_exactly_beyond_sigma_squared_2():
    edge = 0.5 * math.log(2.0)
    got = divergence_along_path("scale", "pearson", [edge - 1e-3, edge + 1e-3])
    assert math.isfinite(got[0]) and math.isinf(got[1])


# ------------------------------------------------------------------ the logit path, by direct sums


def _softmax(z):
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


@pytest.mark.parametrize("name", SMOOTH)
def test_logit_path_matches_a_direct_sum(name):
    pth = get_path("logit")
    q = pth.base.probs
    for t in (-2.0, 0.3, 1.5):
        p = pth.at(t).probs
        want = float(np.sum(q * DIVERGENCES[name].f(p / q)))
        got = divergence_along_path("logit", name, [t])[0]
        assert got == pytest.approx(want, rel=1e-10, abs=1e-14)


def test_logit_path_is_softmax_of_the_stated_logits():
    pth = get_path("logit")
    l0 = np.array([2.0, 1.0, 0.5, 0.0, -1.0])
    v = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    np.testing.assert_allclose(pth.at(0.7).probs, _softmax(l0 + 0.7 * v), rtol=1e-12)


# ------------------------------------------------------------------ Fisher information


def test_logit_fisher_information_is_the_variance_of_v_under_p0():
    p0 = _softmax([2.0, 1.0, 0.5, 0.0, -1.0])
    v = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    var_v = float(p0 @ v**2 - (p0 @ v) ** 2)
    assert PATHS["logit"].fisher == pytest.approx(var_v, rel=1e-12)


def test_gaussian_fisher_informations_from_the_score():
    # shift: s = x, E[x²] = 1; scale (θ = log σ): s = x² − 1, E[(x² − 1)²] = 2.
    assert PATHS["shift"].fisher == 1.0
    assert PATHS["scale"].fisher == 2.0


@pytest.mark.parametrize("path", sorted(PATHS))
def test_fisher_information_is_the_curvature_of_kl_at_zero(path):
    # KL(θ) = ½Fθ² + O(θ³): the central second difference (KL(h) + KL(−h))/h² → F.
    F = PATHS[path].fisher
    for h in (1e-2, 1e-3):
        kl_p, kl_m = divergence_along_path(path, "kl_qp", [h, -h])
        assert (kl_p + kl_m) / h**2 == pytest.approx(F, rel=5 * h**2 + 1e-7)
    # and the one-sided ratio KL / ½Fθ² → 1, the error shrinking with θ
    errs = [abs(divergence_along_path(path, "kl_qp", [t])[0] / (0.5 * F * t**2) - 1) for t in (0.1, 0.01, 0.001)]
    assert errs[2] < 1e-2 and errs[2] <= errs[1] + 1e-12 <= errs[0] + 1e-12


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("name", SMOOTH)
def test_every_smooth_divergence_starts_as_its_fisher_parabola(path, name):
    curve = fisher_curve(path, name, [-1e-3, 0.0, 1e-3, 1e-2])
    assert isinstance(curve, FisherCurve)
    assert curve.ratio[1] == 1.0  # the limit, at θ = 0
    np.testing.assert_allclose(curve.ratio[[0, 2]], 1.0, atol=5e-3)
    # the ratio's distance from 1 is O(θ): ten times closer for a ten times smaller θ (roughly)
    assert abs(curve.ratio[2] - 1) <= 0.2 * abs(curve.ratio[3] - 1) + 1e-9


def test_fisher_curve_carries_the_core_values():
    th = np.array([-0.5, 0.0, 0.25])
    c = fisher_curve("scale", "js", th)
    np.testing.assert_array_equal(c.exact, divergence_along_path("scale", "js", th))
    np.testing.assert_array_equal(c.quadratic, quadratic_approximation("js", 2.0, th))
    assert (c.path, c.name, c.fisher, c.f2_at_1) == ("scale", "js", 2.0, 0.25)
    np.testing.assert_allclose(c.ratio[[0, 2]], c.exact[[0, 2]] / c.quadratic[[0, 2]])


def test_fisher_curve_ratio_is_inf_where_the_divergence_is():
    c = fisher_curve("scale", "pearson", [0.5])
    assert math.isinf(c.exact[0]) and math.isinf(c.ratio[0])


def test_quadratic_approximation_values():
    np.testing.assert_allclose(quadratic_approximation("pearson", 3.0, [2.0]), [12.0])
    np.testing.assert_allclose(quadratic_approximation("hellinger", 1.0, [-2.0]), [1.0])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: quadratic_approximation("tv", 1.0, [0.1]), "undefined"),
        (lambda: fisher_curve("shift", "tv", [0.1]), "undefined"),
        (lambda: divergence_along_path("nope", "kl_qp", [0.1]), "key must be one of"),
        (lambda: divergence_along_path("shift", "nope", [0.1]), "name must be one of"),
        (lambda: divergence_along_path("shift", "kl_qp", []), "non-empty"),
        (lambda: divergence_along_path("shift", "kl_qp", [np.nan]), "NaN"),
        (lambda: divergence_along_path("shift", "kl_qp", [np.inf]), "finite"),
        (lambda: k2_bias_along_path("shift", [[0.1]]), "1-d"),
    ],
)
def test_bad_input_is_rejected_clearly(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_smooth_divergences_are_those_with_f2_at_1():
    assert list(smooth_divergences()) == SMOOTH
    assert "tv" not in smooth_divergences()


def test_paths_start_at_their_base_and_know_their_range():
    for pth in PATHS.values():
        assert pth.at(0.0) == pth.base
        assert pth.theta_max > 0
    assert get_path("shift").at(0.3) == Gaussian(0.3, 1.0)
    assert get_path("scale").at(math.log(2.0)) == Gaussian(0.0, 2.0)
    with pytest.raises(ValueError, match="key must be one of"):
        get_path("sideways")


# ------------------------------------------------------------------ control variates along the shift path


@pytest.mark.parametrize("theta", [0.1, 0.5, 1.0, 2.0])
def test_lambda_parabola_on_the_shift_path(theta):
    par = lambda_parabola(Gaussian(0, 1), Gaussian(theta, 1))
    chi2 = math.expm1(theta**2)
    assert par.var_log_r == pytest.approx(theta**2, rel=1e-9)
    assert par.cov == pytest.approx(theta**2, rel=1e-12)
    assert par.var_r == pytest.approx(chi2, rel=1e-9)
    assert par.true_kl == pytest.approx(theta**2 / 2, rel=1e-9)
    assert par.lam_star == pytest.approx(theta**2 / chi2, rel=1e-8)
    assert par.var_k3 == pytest.approx(chi2 - theta**2, rel=1e-7)
    assert par.var_optimal == pytest.approx(theta**2 - theta**4 / chi2, rel=1e-6)
    assert par.gain >= 1.0


def test_gain_along_the_shift_path_matches_the_closed_forms():
    th = np.array([0.25, 0.5, 1.0, 1.5])
    chi2 = np.expm1(th**2)
    curve = gain_along_path("shift", th)
    np.testing.assert_allclose(curve.true_kl, th**2 / 2, rtol=1e-9)
    np.testing.assert_allclose(curve.lam_star, th**2 / chi2, rtol=1e-8)
    np.testing.assert_allclose(curve.var_k3, chi2 - th**2, rtol=1e-7)
    np.testing.assert_allclose(curve.var_optimal, th**2 - th**4 / chi2, rtol=1e-6)
    np.testing.assert_allclose(curve.gain, (chi2 - th**2) / (th**2 - th**4 / chi2), rtol=1e-6)
    assert np.all(np.diff(curve.gain) > 0)  # the advantage of λ* grows with the distance
