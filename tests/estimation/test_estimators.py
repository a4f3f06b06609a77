"""Tests for kl_core.estimation.estimators: every per-sample formula, its numerics and its registry.

The reference values come from mpmath at a working precision high enough that
the reference itself does not cancel (800 digits: ``exp(t) - 1 - t`` for
``t = 5e-324`` needs about 650), in the style of scipy.stats' ``_entropy``
tests: fixed inputs, explicit tolerances, bad input checked with ``match=``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kl_core.estimation import estimators as est
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.estimators import (
    COMPARED_KEYS,
    ESTIMATORS,
    bregman,
    evaluate,
    k1,
    k2,
    k3,
    k3_pq,
    k_abs,
    k_lambda,
)

TINY = np.finfo(np.float64).tiny  # smallest normal double
SUBNORMAL_ULP = 5e-324
SMOOTH = [key for key, d in DIVERGENCES.items() if d.smooth]
FINITE = st.floats(allow_nan=False, allow_infinity=False)
MODERATE = st.floats(min_value=-30.0, max_value=30.0, allow_nan=False)


# ------------------------------------------------------------ mpmath references


def _mp_refs(t: float) -> tuple[float, float, float]:
    """k2, k3 and k3_pq at float ``t``, in 800-digit arithmetic, rounded once."""
    with mpmath.workdps(800):
        x = mpmath.mpf(t)
        e = mpmath.exp(x)
        return float(x * x / 2), float(e - 1 - x), float(x * e - (e - 1))


_MP_F = {
    "kl_pq": lambda u: u * mpmath.log(u),
    "kl_qp": lambda u: -mpmath.log(u),
    "k2": lambda u: mpmath.log(u) ** 2 / 2,
    "pearson": lambda u: (u - 1) ** 2,
    "hellinger": lambda u: (mpmath.sqrt(u) - 1) ** 2,
    "js": lambda u: (u * mpmath.log(u) - (1 + u) * mpmath.log((1 + u) / 2)) / 2,
}
# f'(1) of each smooth f, derived by hand (independent of the registry).
_FPRIME_1 = {"kl_pq": 1.0, "kl_qp": -1.0, "k2": 0.0, "pearson": 0.0, "hellinger": 0.0, "js": 0.0}


def _mp_bregman(name: str, t: float) -> float:
    # The gap is O(t²): about 2·|log10 t| digits cancel, plus 40 to spare.
    digits = 40 + (int(-2 * math.log10(abs(t))) if 0 < abs(t) < 1 else 0)
    with mpmath.workdps(digits):
        u = mpmath.exp(mpmath.mpf(t))
        return float(_MP_F[name](u) - _FPRIME_1[name] * (u - 1))


def _numerics_grid() -> np.ndarray:
    """Random and edge log-ratios across [-700, 700]."""
    rng = np.random.default_rng(20200307)
    uniform = rng.uniform(-700.0, 700.0, 300)
    # Log-uniform magnitudes: all the way down to subnormals, and densely over
    # the range where k3 = O(logr²) is still a normal double.
    magnitudes = np.concatenate(
        [
            10.0 ** rng.uniform(-323.0, math.log10(700.0), 500),
            10.0 ** rng.uniform(-150.0, math.log10(700.0), 500),
        ]
    )
    signs = rng.choice([-1.0, 1.0], magnitudes.size)
    near_cutoff = np.concatenate(
        [0.1 + rng.uniform(-1e-3, 1e-3, 40), -0.1 + rng.uniform(-1e-3, 1e-3, 40)]
    )
    edges = [
        0.0, 5e-324, 1e-320, 1e-308, 1e-300, 1e-200, 1.5e-154, 1e-154, 1e-100, 1e-30,
        1e-16, 1e-9, 9.99e-9, 1e-8, 1.01e-8, 1e-4, 0.05,
        np.nextafter(0.1, 0.0), 0.1, np.nextafter(0.1, 1.0), 0.0999999, 0.1000001,
        0.5, 1.0, 2.0, 10.0, 100.0, 699.0, 700.0,
    ]  # fmt: skip
    edges = np.array(edges)
    return np.concatenate([uniform, signs * magnitudes, near_cutoff, edges, -edges])


GRID = _numerics_grid()
REFS = np.array([_mp_refs(float(t)) for t in GRID])


# ------------------------------------------------------------ formulas


POINTS = np.array([-3.0, -1.0, -0.5, 0.25, 0.5, 1.5, 3.0])


def test_k1_is_minus_logr():
    np.testing.assert_array_equal(k1(POINTS), -POINTS)
    assert k1([0.5, -0.5]).tolist() == [-0.5, 0.5]


def test_k2_is_half_logr_squared():
    np.testing.assert_allclose(k2(POINTS), 0.5 * POINTS**2, rtol=1e-15)
    assert k2([0.5, -0.5]).tolist() == [0.125, 0.125]


def test_k3_is_r_minus_1_minus_logr():
    r = np.exp(POINTS)
    np.testing.assert_allclose(k3(POINTS), (r - 1.0) - POINTS, rtol=1e-13)
    # r = 2: (2 - 1) - log 2
    assert k3([math.log(2.0)])[0] == pytest.approx(1.0 - math.log(2.0), rel=1e-15, abs=0)
    assert k3([0.0])[0] == 0.0


def test_k3_pq_is_r_logr_minus_r_minus_1():
    r = np.exp(POINTS)
    np.testing.assert_allclose(k3_pq(POINTS), r * POINTS - (r - 1.0), rtol=1e-13)
    # r = 2: 2 log 2 - 1
    assert k3_pq([math.log(2.0)])[0] == pytest.approx(2.0 * math.log(2.0) - 1.0, rel=1e-14, abs=0)
    assert k3_pq([0.0])[0] == 0.0


@pytest.mark.parametrize("lam", [-2.0, -0.5, 0.0, 0.3, 0.58, 1.0, 1.7])
def test_k_lambda_is_minus_logr_plus_lambda_r_minus_1(lam):
    r = np.exp(POINTS)
    np.testing.assert_allclose(
        k_lambda(POINTS, lam), -POINTS + lam * (r - 1.0), rtol=1e-13, atol=1e-15
    )


def test_k_abs_is_absolute_logr():
    np.testing.assert_array_equal(k_abs(POINTS), np.abs(POINTS))
    assert k_abs([-2.0, 3.0]).tolist() == [2.0, 3.0]


@pytest.mark.parametrize("name", SMOOTH)
def test_bregman_is_f_of_r_minus_tangent(name):
    """bregman(f) = f(r) − f′(1)(r − 1), checked against mpmath on a spread of log r."""
    t = np.array([-20.0, -5.0, -1.0, -0.3, -1e-3, -1e-7, 1e-7, 1e-3, 0.3, 1.0, 5.0, 20.0])
    ref = np.array([_mp_bregman(name, float(x)) for x in t])
    np.testing.assert_allclose(bregman(name, t), ref, rtol=1e-12)


def test_bregman_of_the_kl_entries_is_k3_and_k3_pq():
    t = np.linspace(-5.0, 5.0, 41)
    np.testing.assert_array_equal(bregman("kl_qp", t), k3(t))
    np.testing.assert_array_equal(bregman("kl_pq", t), k3_pq(t))
    np.testing.assert_array_equal(bregman("k2", t), k2(t))  # f'(1) = 0


def test_bregman_rejects_total_variation_and_unknown_names():
    with pytest.raises(ValueError, match="name='tv'.*not differentiable"):
        bregman("tv", [0.0])
    with pytest.raises(ValueError, match="name must be one of"):
        bregman("renyi", [0.0])


@pytest.mark.parametrize("func", [k1, k2, k3, k3_pq, k_abs, lambda t: k_lambda(t, 0.4)])
def test_shapes_are_preserved_and_input_is_not_modified(func):
    x = np.array([[0.05, -2.0, 3.0], [0.0, 0.2, -0.01]])
    before = x.copy()
    out = func(x)
    assert out.shape == x.shape and out.dtype == np.float64
    np.testing.assert_array_equal(x, before)
    assert func(0.05).shape == ()
    assert func([]).shape == (0,)


@pytest.mark.parametrize("func", [k3, k3_pq])
def test_memory_layout_does_not_change_the_values(func):
    """The series samples are found by flat index, so every layout must give the C-order result."""
    c = GRID[:600].reshape(20, 30)
    assert (np.abs(c) < 0.01).sum() > 50  # the series is used
    strided = np.zeros((20, 60))
    strided[:, ::2] = c
    expected = func(c)
    for x in (np.asfortranarray(c), strided[:, ::2], c.T.copy().T):
        np.testing.assert_array_equal(func(x), expected)


# ------------------------------------------------------------ numerics


def _check_against_reference(out: np.ndarray, ref: np.ndarray) -> None:
    """Relative error <= 1e-12; below the smallest normal double, a few subnormal ulps."""
    normal = np.abs(ref) >= TINY
    rel = np.abs(out[normal] - ref[normal]) / np.abs(ref[normal])
    worst = int(np.argmax(rel))
    assert rel[worst] <= 1e-12, f"logr={GRID[normal][worst]!r}: relative error {rel[worst]:.3g}"
    absolute = np.abs(out[~normal] - ref[~normal])
    assert (absolute <= 4 * SUBNORMAL_ULP).all(), GRID[~normal][absolute > 4 * SUBNORMAL_ULP]


def test_numerics_grid_covers_the_required_cases():
    """The grid itself has what the spec asks for, so the next tests cannot pass vacuously."""
    assert GRID.min() == -700.0 and GRID.max() == 700.0
    assert ((np.abs(GRID) < 1e-8) & (GRID != 0)).sum() > 100
    assert ((GRID > 0.1) & (GRID < 0.101)).any() and ((GRID < 0.1) & (GRID > 0.099)).any()
    assert ((GRID < -0.1) & (GRID > -0.101)).any() and ((GRID > -0.1) & (GRID < -0.099)).any()
    assert (np.abs(REFS[:, 1]) < TINY).sum() > 50 and (np.abs(REFS[:, 1]) >= TINY).sum() > 1000


@pytest.mark.parametrize(
    ("column", "func"), [(0, k2), (1, k3), (2, k3_pq)], ids=["k2", "k3", "k3_pq"]
)
def test_relative_error_against_mpmath(column, func):
    _check_against_reference(func(GRID), REFS[:, column])


@pytest.mark.parametrize(
    ("column", "func"), [(0, k2), (1, k3), (2, k3_pq)], ids=["k2", "k3", "k3_pq"]
)
def test_scalar_calls_match_the_vectorised_result(column, func):
    """The series/closed-form switch must not depend on what else is in the array."""
    picks = GRID[::25]
    scalars = np.array([func(float(t)) for t in picks])
    np.testing.assert_array_equal(scalars, func(picks))


def test_series_and_closed_form_agree_across_the_cutoff():
    """Either side of |logr| = 0.1 the two branches meet to 1e-13 (no jump)."""
    for c in (0.1, -0.1):
        below, above = np.nextafter(c, 0.0), c
        for func, col in ((k3, 1), (k3_pq, 2)):
            vals = func(np.array([below, above]))
            refs = [_mp_refs(float(below))[col], _mp_refs(float(above))[col]]
            np.testing.assert_allclose(vals, refs, rtol=1e-13)


def test_k3_and_k3_pq_are_never_negative_on_the_grid():
    assert (k3(GRID) >= 0).all()
    assert (k3_pq(GRID) >= 0).all()
    assert (k2(GRID) >= 0).all()


OVERFLOW_CASES = [710.0, 1e4, 1e308, np.inf, -710.0, -1e4, -1e308, -np.inf]


def test_overflow_gives_inf_never_nan():
    t = np.array(OVERFLOW_CASES)
    with np.errstate(over="ignore"):  # k2(±1e308) overflows to inf, as it should
        got = {f.__name__: f(t) for f in (k1, k2, k3, k3_pq, k_abs)}
    for name, vals in got.items():
        assert not np.isnan(vals).any(), name
    np.testing.assert_array_equal(got["k3"][:4], np.inf)
    np.testing.assert_array_equal(got["k3_pq"][:4], np.inf)
    np.testing.assert_array_equal(got["k2"][[3, 7]], np.inf)
    # r -> 0: k3 = (r - 1) - log r -> +inf; k3_pq = r log r - (r - 1) -> 1.
    assert got["k3"][4] == 709.0 and got["k3"][5] == 9999.0
    np.testing.assert_array_equal(got["k3"][6:], [1e308, np.inf])
    np.testing.assert_array_equal(got["k3_pq"][4:], 1.0)


@pytest.mark.parametrize(
    ("lam", "expected"),
    [
        # logr:        710      1e4      inf      -710   -1e4    -inf
        (0.0, [-710.0, -1e4, -np.inf, 710.0, 1e4, np.inf]),
        (-0.5, [-np.inf, -np.inf, -np.inf, 710.5, 1e4 + 0.5, np.inf]),
        (-3.0, [-np.inf, -np.inf, -np.inf, 713.0, 1e4 + 3.0, np.inf]),
        (0.5, [np.inf, np.inf, np.inf, 709.5, 1e4 - 0.5, np.inf]),
        (1.0, [np.inf, np.inf, np.inf, 709.0, 1e4 - 1.0, np.inf]),
        (2.0, [np.inf, np.inf, np.inf, 708.0, 1e4 - 2.0, np.inf]),
    ],
)
def test_k_lambda_overflow_gives_signed_inf_never_nan(lam, expected):
    t = np.array([710.0, 1e4, np.inf, -710.0, -1e4, -np.inf])
    out = k_lambda(t, lam)
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("name", SMOOTH)
def test_bregman_extreme_logr_never_nan(name):
    """Beyond ±700: inf where the true value overflows, the right finite value elsewhere."""
    t = np.array([705.0, 710.0, 1e4, -710.0, -1e4])
    out = bregman(name, t)
    assert not np.isnan(out).any()
    ref = np.array([_mp_bregman(name, float(x)) for x in t])  # float(huge mpf) is inf
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    assert bregman(name, np.inf) == np.inf


# ------------------------------------------------------------ properties


@settings(max_examples=300, deadline=None)
@given(FINITE)
def test_k3_and_k3_pq_nonnegative_and_never_nan_for_every_finite_float(t):
    a, b = k3(t), k3_pq(t)
    assert a >= 0 and b >= 0
    assert not (np.isnan(a) or np.isnan(b))


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-700.0, max_value=700.0, allow_nan=False))
def test_k2_k3_k3_pq_relative_error_property(t):
    ref = _mp_refs(t)
    for func, r in zip((k2, k3, k3_pq), ref, strict=True):
        v = float(func(t))
        if abs(r) >= TINY:
            assert abs(v - r) <= 1e-12 * abs(r), (func.__name__, t, v, r)
        else:
            assert abs(v - r) <= 4 * SUBNORMAL_ULP, (func.__name__, t, v, r)


@settings(max_examples=200, deadline=None)
@given(FINITE)
def test_k_lambda_at_one_is_k3_and_at_zero_is_k1(t):
    np.testing.assert_array_equal(k_lambda(t, 1.0), k3(t))
    np.testing.assert_array_equal(k_lambda(t, 0.0), k1(t))


@settings(max_examples=200, deadline=None)
@given(MODERATE, st.floats(min_value=-3.0, max_value=3.0, allow_nan=False))
def test_k_lambda_interpolates_k1_and_k3(t, lam):
    """-log r + λ(r−1) = (1−λ)·k1 + λ·k3, exactly in real arithmetic."""
    expected = (1.0 - lam) * k1(t) + lam * k3(t)
    scale = abs(t) + abs(lam) * math.exp(t) + 1.0
    assert abs(float(k_lambda(t, lam)) - float(expected)) <= 1e-13 * scale


@settings(max_examples=200, deadline=None)
@given(FINITE)
def test_bregman_estimators_are_nonnegative(t):
    """Every smooth registry f is convex (or, for k2, ≥ 0 with f′(1) = 0): the gap is ≥ 0."""
    for name in SMOOTH:
        v = bregman(name, t)
        assert v >= 0, (name, t, float(v))


@settings(max_examples=150, deadline=None)
@given(st.floats(min_value=-50.0, max_value=50.0, allow_nan=False))
def test_bregman_relative_error_property(t):
    for name in SMOOTH:
        ref = _mp_bregman(name, t)
        v = float(bregman(name, t))
        assert abs(v - ref) <= 1e-12 * abs(ref) + 4 * SUBNORMAL_ULP, (name, t, v, ref)


@settings(max_examples=200, deadline=None)
@given(FINITE)
def test_k1_k2_abs_exact_identities(t):
    assert float(k1(t)) == -t
    assert float(k_abs(t)) == abs(t)
    with np.errstate(over="ignore"):
        assert float(k2(t)) == 0.5 * t * t


# ------------------------------------------------------------ registry


def test_registry_keys_and_dispatch():
    assert set(ESTIMATORS) == {"k1", "k2", "k3", "k_lambda", "k3_pq", "abs"}
    t = np.linspace(-4.0, 4.0, 33)
    expected = {"k1": k1(t), "k2": k2(t), "k3": k3(t), "k3_pq": k3_pq(t), "abs": k_abs(t)}
    for key, want in expected.items():
        np.testing.assert_array_equal(evaluate(key, t), want)
        np.testing.assert_array_equal(ESTIMATORS[key](t), want)
    np.testing.assert_array_equal(evaluate("k_lambda", t, lam=0.3), k_lambda(t, 0.3))
    np.testing.assert_array_equal(ESTIMATORS["k_lambda"](t, lam=0.3), k_lambda(t, 0.3))
    np.testing.assert_array_equal(evaluate("k_lambda", t), k3(t))  # default λ = 1


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_registry_metadata_is_complete(key):
    info = ESTIMATORS[key]
    assert info.key == key
    for field in (
        info.name,
        info.latex,
        info.estimates,
        info.estimates_latex,
        info.summary,
        info.source,
    ):
        assert isinstance(field, str) and field.strip()
    assert info.divergence is None or info.divergence in DIVERGENCES
    assert info.unbiased_for in (None, "kl_qp", "kl_pq")
    assert info.unbiased == (info.unbiased_for is not None)
    if info.unbiased_for is not None:
        assert info.divergence == info.unbiased_for
    if key != "abs":
        assert "joschu.net" in info.source


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_nonnegative_flag_matches_the_values(key):
    """``nonnegative`` is True exactly when no sample value is < 0 (k_lambda at λ ≠ 1 can be)."""
    t = np.concatenate([np.linspace(-30.0, 30.0, 601), [-1e-6, 1e-6]])
    lam = 0.5 if ESTIMATORS[key].parameter is not None else 1.0
    has_negative = bool((evaluate(key, t, lam=lam) < 0).any())
    assert ESTIMATORS[key].nonnegative == (not has_negative)


def test_unbiased_flags_are_the_schulman_ones():
    flags = {k: (e.unbiased_for, e.nonnegative) for k, e in ESTIMATORS.items()}
    assert flags == {
        "k1": ("kl_qp", False),
        "k2": (None, True),
        "k3": ("kl_qp", True),
        "k_lambda": ("kl_qp", False),
        "k3_pq": ("kl_pq", True),
        "abs": (None, True),
    }
    assert ESTIMATORS["k2"].divergence == "k2"


def test_only_k_lambda_declares_a_parameter_and_its_same_as_values_hold():
    """The registry, not a name test, says which estimator takes λ, and where it IS another one."""
    assert [k for k, e in ESTIMATORS.items() if e.parameter is not None] == ["k_lambda"]
    par = ESTIMATORS["k_lambda"].parameter
    assert (par.name, par.symbol) == ("lam", "λ")
    t = np.linspace(-30.0, 30.0, 601)
    assert dict(par.same_as) == {0.0: "k1", 1.0: "k3"}
    for value, other in par.same_as:  # the Monte Carlo engine reuses the other's array
        np.testing.assert_array_equal(evaluate("k_lambda", t, lam=value), evaluate(other, t))


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_registry_function_is_the_public_function(key):
    info = ESTIMATORS[key]
    assert info.function is getattr(est, "k_abs" if key == "abs" else key)
    t = np.linspace(-3.0, 3.0, 13)
    kwargs = {} if info.parameter is None else {info.parameter.name: 0.25}
    np.testing.assert_array_equal(info.function(t, **kwargs), evaluate(key, t, lam=0.25))


def test_compared_keys_are_the_registry_order_without_abs():
    assert COMPARED_KEYS == ("k1", "k2", "k3", "k_lambda", "k3_pq")
    assert COMPARED_KEYS == tuple(k for k in ESTIMATORS if k != "abs")


def test_every_estimator_declares_a_distinct_look():
    looks = [(e.color.upper(), tuple(e.dash), e.shape) for e in ESTIMATORS.values()]
    for color, dash, shape in looks:
        assert len(color) == 7 and color.startswith("#") and dash and shape
    for i, name in enumerate(("colour", "dash", "shape")):
        assert len({look[i] for look in looks}) == len(looks), f"two estimators share a {name}"


# ------------------------------------------------------------ bad input


@pytest.mark.parametrize("func", [k1, k2, k3, k3_pq, k_abs, lambda t: k_lambda(t, 0.5)])
def test_nan_and_non_numeric_logr_are_rejected(func):
    with pytest.raises(ValueError, match="logr contains NaN"):
        func([0.0, math.nan])
    with pytest.raises(ValueError, match="logr must be numeric"):
        func(["a", "b"])


@pytest.mark.parametrize("lam", [math.nan, math.inf, -math.inf, "x", None])
def test_bad_lambda_is_rejected(lam):
    with pytest.raises(ValueError, match="lam"):
        k_lambda([0.0], lam)


def test_unknown_estimator_key():
    with pytest.raises(ValueError, match="key must be one of .*'k9'"):
        evaluate("k9", [0.0])


def test_bregman_nan_is_rejected():
    with pytest.raises(ValueError, match="logr contains NaN"):
        bregman("pearson", [math.nan])


def test_module_exports_exist():
    for name in est.__all__:
        assert hasattr(est, name), name
