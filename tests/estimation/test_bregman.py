"""Tests for kl_core.estimation.bregman: the tangent-gap picture, the seeded draws, where kλ < 0.

References are independent of the code under test: mpmath at high precision
for the tangent lines and for the root of λ(e^t − 1) = t, the Lambert-W
closed form for that root, and kl_core.estimation.montecarlo for the draws.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import special

from kl_core.estimation import estimators as est
from kl_core.estimation.bregman import (
    TangentPicture,
    draw_log_ratios,
    k_lambda_negative_interval,
    tangent_latex,
    tangent_picture,
)
from kl_core.estimation.distributions import parse
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.montecarlo import simulate

SMOOTH = [k for k, d in DIVERGENCES.items() if d.smooth]
U = np.array([0.0, 1e-6, 0.05, 0.3, 0.9, 0.999, 1.0, 1.001, 1.5, 2.5, 5.0, 40.0])

# f and f'(1) of each smooth entry, written out by hand (not read from the registry)
_MP_F = {
    "kl_pq": lambda u: u * mpmath.log(u) if u > 0 else mpmath.mpf(0),
    "kl_qp": lambda u: -mpmath.log(u),
    "k2": lambda u: mpmath.log(u) ** 2 / 2,
    "pearson": lambda u: (u - 1) ** 2,
    "hellinger": lambda u: (mpmath.sqrt(u) - 1) ** 2,
    "js": lambda u: (
        (u * mpmath.log(u) if u > 0 else 0) - (1 + u) * mpmath.log((1 + u) / 2)
    ) / 2,
}
_FPRIME_1 = {"kl_pq": 1.0, "kl_qp": -1.0, "k2": 0.0, "pearson": 0.0, "hellinger": 0.0, "js": 0.0}


# ------------------------------------------------------------ draw_log_ratios


@pytest.mark.parametrize(
    ("q", "p"),
    [
        ("normal(0,1)", "normal(1,1)"),
        ("normal(0,1)", "normal(0,1.5)"),
        ("laplace(0,1)", "t(3,0,1)"),
        ("mixture(0.5:-1:1,0.5:1:1)", "normal(0,1)"),
        ("categorical(2,1,0.5,0,-1)", "categorical(1,0.5,0.5,0.5,0)"),
    ],
)
def test_draws_are_the_first_draws_of_simulate(q, p):
    logr = draw_log_ratios(parse(q), parse(p), 500, seed=11)
    sim = simulate(q, p, 500, seed=11, keys=("k1",), sample_size=500)
    np.testing.assert_array_equal(-logr, sim["k1"].samples)
    np.testing.assert_array_equal(logr, draw_log_ratios(parse(q), parse(p), 500, seed=11))
    assert not np.array_equal(logr, draw_log_ratios(parse(q), parse(p), 500, seed=12))


def test_draws_of_p_equal_q_are_all_zero():
    assert draw_log_ratios(parse("normal(0,1)"), parse("normal(0,1)"), 50).tolist() == [0.0] * 50


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("normal(0,1)", "categorical(0,1)", 5, 0), "same kind"),
        (("normal(0,1)", "normal(1,1)", 0, 0), "n must be >= 1"),
        (("normal(0,1)", "normal(1,1)", 5, -1), "seed must be"),
        (("normal(0,1)", "normal(1,1)", 5, 1.5), "seed must be"),
    ],
)
def test_draws_reject_bad_input(args, match):
    q, p, n, seed = args
    with pytest.raises(ValueError, match=match):
        draw_log_ratios(parse(q), parse(p), n, seed)
    with pytest.raises(ValueError, match="Distributions"):
        draw_log_ratios("normal(0,1)", parse("normal(0,1)"), 5)  # type: ignore[arg-type]


# ------------------------------------------------------------ tangent_picture


def test_kl_qp_is_schulmans_picture():
    pic = tangent_picture("kl_qp", u=U[1:])
    u = U[1:]
    np.testing.assert_allclose(pic.curve, np.log(u), rtol=1e-15)
    np.testing.assert_allclose(pic.tangent, u - 1.0, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(pic.gap, est.k3(np.log(u)))
    # the gap is tangent − curve, measured where nothing cancels
    far = np.abs(u - 1.0) > 0.1
    np.testing.assert_allclose(pic.gap[far], (pic.tangent - pic.curve)[far], rtol=1e-13)
    assert (pic.gap >= 0).all() and pic.gap[u == 1.0] == 0.0
    assert pic.estimator == "k3" and pic.smooth
    assert pic.tangent_latex == "u - 1" and "k_3" in pic.gap_latex


@pytest.mark.parametrize("key", SMOOTH)
def test_curve_tangent_and_gap_against_mpmath(key):
    pic = tangent_picture(key, u=U)
    for i, u in enumerate(U):
        if u == 0.0 and key in ("kl_qp", "k2"):
            continue  # f(0) = inf
        with mpmath.workdps(60):
            uu = mpmath.mpf(float(u))
            f = _MP_F[key](uu)
            tangent = _FPRIME_1[key] * (uu - 1)  # f(1) = 0 for every entry
            gap = f - tangent
        if key == "kl_qp":  # drawn upside down: log u under u − 1
            f, tangent = -f, -tangent
        assert float(pic.curve[i]) == pytest.approx(float(f), rel=1e-12, abs=1e-300)
        assert float(pic.tangent[i]) == pytest.approx(float(tangent), rel=1e-12, abs=1e-300)
        assert float(pic.gap[i]) == pytest.approx(float(gap), rel=1e-9, abs=1e-300)
        assert pic.gap[i] >= 0.0
    np.testing.assert_array_equal(pic.gap, est.bregman(key, pic.logu))


@pytest.mark.parametrize("key", SMOOTH)
def test_logu_and_u_give_the_same_picture(key):
    a = tangent_picture(key, u=U[1:])
    b = tangent_picture(key, logu=np.log(U[1:]))
    for field in ("u", "curve", "tangent", "gap"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_kl_pq_gap_is_k3_pq_and_k2_gap_is_k2():
    logu = np.linspace(-4, 4, 81)
    pq = tangent_picture("kl_pq", logu=logu)
    assert pq.estimator == "k3_pq" and pq.tangent_latex == "u - 1"
    np.testing.assert_array_equal(pq.gap, est.k3_pq(logu))
    assert pq.gap_latex == r"k_3^{pq} = u \log u - (u - 1)"
    k2 = tangent_picture("k2", logu=logu)
    assert k2.estimator == "k2" and k2.tangent_latex == "0"
    np.testing.assert_array_equal(k2.gap, est.k2(logu))
    assert tangent_picture("pearson", logu=logu).estimator is None


def test_total_variation_has_no_tangent():
    pic = tangent_picture("tv", u=[0.5, 1.0, 2.0])
    assert not pic.smooth
    assert pic.tangent is None and pic.gap is None and pic.tangent_latex is None
    assert "kink at u = 1" in pic.note
    np.testing.assert_allclose(pic.curve, [0.25, 0.0, 0.5])
    assert math.isnan(pic.mean_gap)
    assert tangent_latex("tv") is None


def test_mean_gap_is_the_average_of_the_gaps():
    logr = draw_log_ratios(parse("normal(0,1)"), parse("normal(1,1)"), 20_000, seed=1)
    pic = tangent_picture("kl_qp", logu=logr)
    assert pic.mean_gap == pytest.approx(float(np.mean(est.k3(logr))), rel=1e-15)
    assert pic.mean_gap == pytest.approx(0.5, abs=4 * math.sqrt((math.e - 2) / 20_000))
    assert isinstance(pic, TangentPicture)


def test_overflow_gives_inf_not_nan():
    pic = tangent_picture("kl_pq", logu=[800.0, -800.0])
    assert np.isinf(pic.curve[0]) and pic.gap[0] == np.inf
    assert pic.gap[1] == pytest.approx(1.0)  # r → 0: the gap tends to 1
    assert not np.isnan(pic.gap).any()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "exactly one of logu and u"),
        ({"u": [1.0], "logu": [0.0]}, "exactly one of logu and u"),
        ({"u": [-1.0]}, "u must be >= 0"),
        ({"logu": [np.nan]}, "logu contains NaN"),
    ],
)
def test_tangent_picture_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tangent_picture("kl_qp", **kwargs)
    with pytest.raises(ValueError, match="name must be one of"):
        tangent_picture("kl", u=[1.0])


# ------------------------------------------------------------ k_lambda_negative_interval


def _mp_root(lam: float) -> float:
    """The non-zero root of λ(e^t − 1) = t, from mpmath at 50 digits."""
    with mpmath.workdps(50):
        lam_mp = mpmath.mpf(lam)
        # expm1(t)/t = 1/λ: the same equation without the root at t = 0
        g = lambda t: mpmath.expm1(t) / t - 1 / lam_mp  # noqa: E731
        guess = 2 * (1 - lam_mp) / lam_mp if abs(1 - lam) < 0.2 else (
            -lam_mp if lam > 1 else mpmath.log(1 / lam_mp) + 1
        )
        return float(mpmath.findroot(g, guess))


@pytest.mark.parametrize("lam", [1e-6, 1e-3, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9, 1 + 1e-9, 1.001, 1.5,
                                 2.0, 3.0, 10.0])
def test_the_root_against_mpmath(lam):
    lo, hi = k_lambda_negative_interval(lam)
    t = hi if lam < 1 else lo
    assert (lo, hi) == ((0.0, t) if lam < 1 else (t, 0.0))
    assert t == pytest.approx(_mp_root(lam), rel=1e-12)


@pytest.mark.parametrize("lam", [1e-3, 0.2, 0.5, 0.8, 1.3, 2.0, 3.0, 7.0])
def test_the_root_against_the_lambert_w_closed_form(lam):
    lo, hi = k_lambda_negative_interval(lam)
    branch = -1 if lam < 1 else 0
    closed = -lam - special.lambertw(-lam * math.exp(-lam), k=branch).real
    assert (hi if lam < 1 else lo) == pytest.approx(closed, rel=1e-10)


@pytest.mark.parametrize("lam", [-1.0, 0.0, 0.3, 0.5, 0.95, 1.0, 1.05, 2.0, 3.0])
def test_k_lambda_is_negative_exactly_inside(lam):
    interval = k_lambda_negative_interval(lam)
    t = np.linspace(-6, 6, 4001)
    values = est.k_lambda(t, lam)
    if interval is None:
        assert lam == 1.0 and (values >= 0).all()
        return
    lo, hi = interval
    inside = (t > lo) & (t < hi)
    margin = 1e-9 + 1e-9 * np.abs(t)
    clear = (np.abs(t - lo) > 1e-6) & (np.abs(t - hi) > 1e-6)
    assert (values[inside & clear] < 0).all()
    assert (values[~inside & clear] >= -margin[~inside & clear]).all()


def test_the_interval_shrinks_to_nothing_as_lambda_tends_to_1():
    widths = [k_lambda_negative_interval(lam)[1] for lam in (0.5, 0.9, 0.99, 0.999)]
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] == pytest.approx(2 * 0.001 / 0.999, rel=1e-3)  # t* ≈ 2(1 − λ)/λ
    assert k_lambda_negative_interval(0.0) == (0.0, math.inf)
    assert k_lambda_negative_interval(-2.0) == (0.0, math.inf)
    assert k_lambda_negative_interval(1.0) is None


def test_the_negative_share_of_the_draws_is_the_share_inside_the_interval():
    logr = draw_log_ratios(parse("normal(0,1)"), parse("normal(1,1)"), 50_000, seed=0)
    for lam in (0.5, 2.0):
        lo, hi = k_lambda_negative_interval(lam)
        negative = est.k_lambda(logr, lam) < 0
        inside = (logr > lo) & (logr < hi)
        assert np.array_equal(negative, inside)
        sim = simulate("normal(0,1)", "normal(1,1)", 50_000, seed=0, lam=lam, keys=("k_lambda",))
        assert sim["k_lambda"].neg_fraction == pytest.approx(float(np.mean(inside)), abs=1e-15)


@pytest.mark.parametrize("bad", [math.nan, math.inf, "x"])
def test_interval_rejects_bad_lambda(bad):
    with pytest.raises(ValueError, match="lam must be"):
        k_lambda_negative_interval(bad)


def test_tangent_latex_of_every_entry():
    assert tangent_latex("kl_pq") == "u - 1"
    assert tangent_latex("kl_qp") == "-(u - 1)"
    for key in ("k2", "pearson", "hellinger", "js"):
        assert tangent_latex(key) == "0"
