"""Tests for kl_core.estimation.distributions: densities against scipy.stats, sampling, specs.

In the style of preliz, each family is cross-checked against ``scipy.stats``;
sampling moments are checked at a fixed seed within 4 standard errors, and
every bad parameter or spec must raise a ``ValueError`` that names it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from kl_core.estimation.distributions import (
    Categorical,
    Distribution,
    Gaussian,
    GaussianMixture,
    Laplace,
    StudentT,
    log_ratio,
    parse,
)

X = np.concatenate([np.linspace(-40.0, 40.0, 161), [-1e3, -7.25, 0.0, 1e-9, 3.3, 1e3]])
SEED = 20200307
N_SAMPLES = 200_000


# ------------------------------------------------------------ densities


@pytest.mark.parametrize(("mu", "sigma"), [(0.0, 1.0), (0.1, 1.0), (-3.0, 0.2), (2.5, 7.0)])
def test_gaussian_logpdf_matches_scipy(mu, sigma):
    np.testing.assert_allclose(
        Gaussian(mu, sigma).logpdf(X), stats.norm.logpdf(X, mu, sigma), rtol=1e-13, atol=1e-13
    )


@pytest.mark.parametrize(("loc", "scale"), [(0.0, 1.0), (0.5, 0.3), (-2.0, 4.0)])
def test_laplace_logpdf_matches_scipy(loc, scale):
    got = Laplace(loc, scale).logpdf(X)
    ref = stats.laplace.logpdf(X, loc, scale)
    finite = np.isfinite(ref)  # scipy takes log(pdf), which underflows far out
    assert finite.sum() > 150
    np.testing.assert_allclose(got[finite], ref[finite], rtol=1e-13, atol=1e-13)
    far = X[~finite]
    np.testing.assert_allclose(
        got[~finite], -np.abs(far - loc) / scale - math.log(2 * scale), rtol=1e-15
    )


@pytest.mark.parametrize(
    ("df", "loc", "scale"),
    [
        (1.0, 0.0, 1.0),
        (2.0, 0.0, 1.0),
        (3.0, 0.2, 1.3),
        (5.0, -1.0, 0.5),
        (0.5, 0, 2),
        (300.0, 0, 1),
    ],
)
def test_student_t_logpdf_matches_scipy(df, loc, scale):
    np.testing.assert_allclose(
        StudentT(df, loc, scale).logpdf(X),
        stats.t.logpdf(X, df, loc, scale),
        rtol=1e-12,
        atol=1e-12,
    )


def test_mixture_logpdf_matches_a_hand_built_mixture():
    w, m, s = (0.2, 0.5, 0.3), (-1.0, 0.5, 3.0), (0.5, 1.0, 2.0)
    mix = GaussianMixture(w, m, s)
    with np.errstate(divide="ignore"):
        by_hand = np.log(
            sum(wk * stats.norm.pdf(X, mk, sk) for wk, mk, sk in zip(w, m, s, strict=True))
        )
    finite = np.isfinite(by_hand)  # far out, the hand-built sum underflows to log 0
    assert finite.sum() > 150
    np.testing.assert_allclose(mix.logpdf(X[finite]), by_hand[finite], rtol=1e-12, atol=1e-12)
    # Where the naive sum underflows, the log-sum-exp still gives the widest component.
    far = np.array([-1e3, 1e3])
    expected = np.logaddexp.reduce(
        [math.log(wk) + stats.norm.logpdf(far, mk, sk) for wk, mk, sk in zip(w, m, s, strict=True)]
    )
    np.testing.assert_allclose(mix.logpdf(far), expected, rtol=1e-13)


def test_single_component_mixture_is_the_gaussian():
    np.testing.assert_allclose(
        GaussianMixture((1.0,), (0.3,), (1.7,)).logpdf(X),
        Gaussian(0.3, 1.7).logpdf(X),
        rtol=1e-14,
        atol=1e-14,
    )


@pytest.mark.parametrize(
    "d",
    [
        Gaussian(0.3, 1.7),
        Laplace(-1.0, 0.5),
        StudentT(3.0, 0.5, 2.0),
        GaussianMixture((0.3, 0.7), (-2.0, 1.0), (0.5, 1.5)),
    ],
    ids=lambda d: d.spec,
)
def test_continuous_densities_integrate_to_one(d):
    from scipy import integrate

    lo, hi = d.interval(0.9)
    total = sum(
        integrate.quad(lambda x: float(d.pdf(x)), a, b, epsabs=0, epsrel=1e-12, limit=200)[0]
        for a, b in ((-np.inf, lo), (lo, hi), (hi, np.inf))
    )
    assert total == pytest.approx(1.0, rel=1e-10, abs=0)


@pytest.mark.parametrize(
    "logits", [(0.0,), (0.1, 2.0, -1.0), (-30.0, 30.0, 0.0, 5.0), tuple(np.linspace(-5, 5, 50))]
)
def test_categorical_pmf_is_normalised(logits):
    c = Categorical(logits)
    support = np.arange(c.k, dtype=float)
    pmf = c.pdf(support)
    assert math.fsum(pmf) == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(pmf, special.softmax(np.asarray(logits, dtype=float)), rtol=1e-13)
    np.testing.assert_allclose(c.logpdf(support), c.log_probs, rtol=0, atol=0)
    assert c.probs == pytest.approx(pmf, rel=1e-15, abs=0)


def test_categorical_is_zero_off_its_support():
    c = Categorical((0.1, 2.0, -1.0))
    np.testing.assert_array_equal(c.logpdf([-1.0, 0.5, 3.0, 2.0000001, 1e9]), -np.inf)
    assert c.logpdf([2.0])[0] == pytest.approx(c.log_probs[2])
    assert c.k == 3 and c.discrete and not Gaussian().discrete


def test_categorical_logits_are_shift_invariant():
    a, b = Categorical((0.1, 2.0, -1.0)), Categorical((100.1, 102.0, 99.0))
    np.testing.assert_allclose(a.log_probs, b.log_probs, rtol=1e-13)


# ------------------------------------------------------------ sampling


def _moments(d: Distribution) -> tuple[float, float, float]:
    """Mean, variance and fourth central moment, from scipy.stats (or by hand for mixtures)."""
    if isinstance(d, Gaussian):
        frozen = stats.norm(d.mu, d.sigma)
    elif isinstance(d, Laplace):
        frozen = stats.laplace(d.loc, d.scale)
    elif isinstance(d, StudentT):
        frozen = stats.t(d.df, d.loc, d.scale)
    elif isinstance(d, Categorical):
        frozen = stats.rv_discrete(values=(np.arange(d.k), d.probs))
    else:
        w, m, s = map(np.asarray, (d.weights, d.means, d.sigmas))
        mean = float(w @ m)
        var = float(w @ (s**2 + m**2)) - mean**2
        dm = m - mean  # E[(X - mean)^4] for each normal component, then mixed
        mu4 = float(w @ (dm**4 + 6 * dm**2 * s**2 + 3 * s**4))
        return mean, var, mu4
    mean, var = float(frozen.mean()), float(frozen.var())
    mu4 = (
        float(frozen.expect(lambda x: (x - mean) ** 4))
        if isinstance(d, Categorical)
        else ((float(frozen.stats(moments="k")) + 3.0) * var**2)
    )
    return mean, var, mu4


@pytest.mark.parametrize(
    "d",
    [
        Gaussian(0.1, 1.0),
        Gaussian(-2.0, 3.0),
        Laplace(0.5, 2.0),
        StudentT(7.0, 1.0, 0.5),
        GaussianMixture((0.5, 0.5), (-1.0, 1.0), (1.0, 1.0)),
        GaussianMixture((0.2, 0.5, 0.3), (-3.0, 0.0, 4.0), (0.5, 1.0, 2.0)),
        Categorical((0.1, 2.0, -1.0)),
        Categorical(tuple(np.linspace(-2, 2, 11))),
    ],
    ids=lambda d: d.spec,
)
def test_sample_mean_and_variance_within_4_standard_errors(d):
    x = d.sample(np.random.default_rng(SEED), N_SAMPLES)
    assert x.shape == (N_SAMPLES,) and x.dtype == np.float64
    mean, var, mu4 = _moments(d)
    se_mean = math.sqrt(var / N_SAMPLES)
    se_var = math.sqrt((mu4 - var**2) / N_SAMPLES)
    assert abs(x.mean() - mean) < 4 * se_mean
    assert abs(x.var() - var) < 4 * se_var


def test_categorical_sample_frequencies_within_4_standard_errors():
    c = Categorical((0.1, 2.0, -1.0, -4.0))
    x = c.sample(np.random.default_rng(SEED), N_SAMPLES)
    assert set(np.unique(x)) <= {0.0, 1.0, 2.0, 3.0}
    freq = np.bincount(x.astype(int), minlength=c.k) / N_SAMPLES
    se = np.sqrt(c.probs * (1 - c.probs) / N_SAMPLES)
    assert (np.abs(freq - c.probs) < 4 * se).all()


@pytest.mark.parametrize(
    "d",
    [
        Gaussian(0, 1),
        Laplace(0, 1),
        StudentT(3),
        GaussianMixture((1.0,), (0.0,), (1.0,)),
        Categorical((0, 1)),
    ],
)
def test_sampling_is_reproducible_and_uses_the_generator(d):
    a = d.sample(np.random.default_rng(7), 1000)
    b = d.sample(np.random.default_rng(7), 1000)
    c = d.sample(np.random.default_rng(8), 1000)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "d",
    [Gaussian(1, 2), Laplace(0, 1), StudentT(3), GaussianMixture((0.5, 0.5), (-1, 1), (1, 1))],
    ids=lambda d: d.spec,
)
def test_interval_holds_its_coverage(d):
    lo, hi = d.interval(0.999)
    x = d.sample(np.random.default_rng(SEED), N_SAMPLES)
    outside = np.mean((x < lo) | (x > hi))
    assert outside < 0.001 + 4 * math.sqrt(0.001 / N_SAMPLES)


# ------------------------------------------------------------ names and specs


@pytest.mark.parametrize("coverage", [0.5, 0.9, 0.95, 0.999, 0.999999, 1e-6])
def test_gaussian_interval_is_the_normal_quantile(coverage):
    # the standard library's quantile, checked against scipy's ndtri
    lo, hi = Gaussian(1.5, 2.0).interval(coverage)
    z = -special.ndtri((1.0 - coverage) / 2.0)
    assert hi == pytest.approx(1.5 + 2.0 * z, rel=1e-14)
    assert lo == pytest.approx(1.5 - 2.0 * z, rel=1e-14, abs=1e-14)


def test_names():
    assert Gaussian(0, 1).name == "N(0, 1)"
    assert Gaussian(0.1, 2).name == "N(0.1, 2²)"
    assert Laplace(0, 1).name == "Laplace(0, 1)"
    assert StudentT(3).name == "t₃(0, 1)"
    assert GaussianMixture((0.5, 0.5), (-1, 1), (1, 1)).name == "0.5·N(-1, 1) + 0.5·N(1, 1)"
    assert Categorical((0.0, 0.0)).name == "Cat(0.5, 0.5)"
    assert str(Gaussian(0, 1)) == "N(0, 1)"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("normal(0,1)", Gaussian(0.0, 1.0)),
        ("  Normal( 0.1 , 1 ) ", Gaussian(0.1, 1.0)),
        ("gaussian(-2,3e-1)", Gaussian(-2.0, 0.3)),
        ("n(0,1)", Gaussian(0.0, 1.0)),
        ("laplace(0,1)", Laplace(0.0, 1.0)),
        ("t(3,0,1)", StudentT(3.0, 0.0, 1.0)),
        ("t(3)", StudentT(3.0, 0.0, 1.0)),
        ("t(5,2)", StudentT(5.0, 2.0, 1.0)),
        ("mixture(0.5:-1:1,0.5:1:1)", GaussianMixture((0.5, 0.5), (-1.0, 1.0), (1.0, 1.0))),
        ("categorical(0.1,2.0,-1.0)", Categorical((0.1, 2.0, -1.0))),
        ("cat(.5)", Categorical((0.5,))),
    ],
)
def test_parse_reads_the_documented_specs(spec, expected):
    assert parse(spec) == expected


_real = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
_pos = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, exclude_min=False)
_any_real = st.floats(allow_nan=False, allow_infinity=False)
_any_pos = st.floats(min_value=5e-324, allow_nan=False, allow_infinity=False)


@st.composite
def _mixtures(draw):
    k = draw(st.integers(1, 5))
    raw = draw(st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=k, max_size=k))
    total = math.fsum(raw)
    weights = tuple(v / total for v in raw)
    means = tuple(draw(st.lists(_real, min_size=k, max_size=k)))
    sigmas = tuple(draw(st.lists(_pos, min_size=k, max_size=k)))
    return GaussianMixture(weights, means, sigmas)


DISTRIBUTIONS = st.one_of(
    st.builds(Gaussian, _any_real, _any_pos),
    st.builds(Laplace, _any_real, _any_pos),
    st.builds(StudentT, _any_pos, _any_real, _any_pos),
    _mixtures(),
    st.builds(lambda v: Categorical(tuple(v)), st.lists(_any_real, min_size=1, max_size=30)),
)


@settings(max_examples=300, deadline=None)
@given(DISTRIBUTIONS)
def test_parse_round_trips_every_family(d):
    assert parse(d.spec) == d
    with np.errstate(over="ignore"):  # logits near ±1e308 overflow inside logsumexp, harmlessly
        assert isinstance(d.name, str) and d.name


# ------------------------------------------------------------ log_ratio


@pytest.mark.parametrize(
    ("p", "q"),
    [
        (Gaussian(0.1, 1), Gaussian(0, 1)),
        (Gaussian(-1, 0.5), Gaussian(2, 3)),
        (StudentT(3), Gaussian(0, 1)),
        (Laplace(0.3, 1), GaussianMixture((0.4, 0.6), (-1, 1), (1, 0.5))),
    ],
    ids=lambda d: d.spec,
)
def test_log_ratio_is_the_difference_of_log_densities(p, q):
    x = np.linspace(-30.0, 30.0, 241)
    ref = stats_logpdf(p, x) - stats_logpdf(q, x)
    np.testing.assert_allclose(log_ratio(p, q, x), ref, rtol=1e-12, atol=1e-12)


def stats_logpdf(d: Distribution, x: np.ndarray) -> np.ndarray:
    if isinstance(d, Gaussian):
        return stats.norm.logpdf(x, d.mu, d.sigma)
    if isinstance(d, Laplace):
        return stats.laplace.logpdf(x, d.loc, d.scale)
    if isinstance(d, StudentT):
        return stats.t.logpdf(x, d.df, d.loc, d.scale)
    comps = [
        math.log(w) + stats.norm.logpdf(x, m, s)
        for w, m, s in zip(d.weights, d.means, d.sigmas, strict=True)
    ]
    return special.logsumexp(comps, axis=0)


def test_gaussian_log_ratio_is_the_blog_line():
    """q = N(0,1), p = N(μ,1): log r = μx − μ²/2, exact and free of tail cancellation."""
    x = np.array([-1e8, -3.0, 0.0, 2.0, 1e8])
    np.testing.assert_allclose(
        log_ratio(Gaussian(0.1, 1), Gaussian(0, 1), x), 0.1 * x - 0.005, rtol=1e-15
    )


def test_log_ratio_rejects_mixed_kinds():
    with pytest.raises(ValueError, match="both be continuous or both be categorical"):
        log_ratio(Categorical((0.0, 1.0)), Gaussian(), [0.0])


# ------------------------------------------------------------ bad parameters


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Gaussian(0, 0), "sigma must be > 0"),
        (lambda: Gaussian(0, -1), "sigma must be > 0"),
        (lambda: Gaussian(0, math.nan), "sigma must be finite"),
        (lambda: Gaussian(math.nan, 1), "mu must be finite"),
        (lambda: Gaussian(math.inf, 1), "mu must be finite"),
        (lambda: Gaussian("a", 1), "mu must be a number"),
        (lambda: Laplace(0, 0), "scale must be > 0"),
        (lambda: Laplace(math.nan, 1), "loc must be finite"),
        (lambda: StudentT(0), "df must be > 0"),
        (lambda: StudentT(-2), "df must be > 0"),
        (lambda: StudentT(math.nan), "df must be finite"),
        (lambda: StudentT(3, 0, 0), "scale must be > 0"),
        (lambda: StudentT(3, math.inf, 1), "loc must be finite"),
        (lambda: GaussianMixture((0.5, 0.4), (0, 1), (1, 1)), "weights must sum to 1"),
        (lambda: GaussianMixture((0.5, 0.5), (0, 1), (1, 0)), "sigmas must be > 0"),
        (lambda: GaussianMixture((1.5, -0.5), (0, 1), (1, 1)), "weights must be > 0"),
        (lambda: GaussianMixture((0.5, 0.5), (0, math.nan), (1, 1)), "means must be finite"),
        (lambda: GaussianMixture((math.nan,), (0,), (1,)), "weights must be finite"),
        (lambda: GaussianMixture((0.5, 0.5), (0,), (1, 1)), "same length"),
        (lambda: GaussianMixture((), (), ()), "weights must have at least one component"),
        (lambda: Categorical(()), "logits must not be empty"),
        (lambda: Categorical((0.0, math.nan)), "logits must be finite"),
        (lambda: Categorical((0.0, math.inf)), "logits must be finite"),
        (lambda: Categorical(("a",)), "logits must be a number"),
    ],
)
def test_bad_parameters_name_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("normal(0,0)", "sigma must be > 0"),
        ("normal(0,-1)", "sigma must be > 0"),
        ("laplace(0,0)", "scale must be > 0"),
        ("t(0,0,1)", "df must be > 0"),
        ("t(-1)", "df must be > 0"),
        ("t(3,0,0)", "scale must be > 0"),
        ("mixture(0.5:0:1,0.4:1:1)", "weights must sum to 1"),
        ("mixture(0.5:0:1,0.5:1:0)", "sigmas must be > 0"),
        ("mixture(1:0)", "not weight:mean:sigma"),
        ("mixture()", "mixture needs at least one"),
        ("normal(nan,1)", "'nan' is not a number"),
        ("normal(0,inf)", "'inf' is not a number"),
        ("categorical()", "logits must not be empty"),
        ("gamma(1,1)", "unknown family 'gamma'"),
        ("normal(0)", "normal takes 2 numbers, got 1"),
        ("normal(0,1,2)", "normal takes 2 numbers, got 3"),
        ("laplace(1)", "laplace takes 2 numbers, got 1"),
        ("t(1,2,3,4)", "t takes 1 to 3 numbers, got 4"),
        ("normal(a,1)", "'a' is not a number"),
        ("normal(0,1", r"missing closing bracket '\)'"),
        ("normal0,1)", r"missing opening bracket '\('"),
        ("normal", "the numbers are missing; write them in brackets"),
        ("", "spec is empty"),
        ("(0,1)", "the family name is missing"),
        ("normal(0,1)x", "unexpected text after the closing bracket: 'x'"),
        ("normla(0,1)", r"unknown family 'normla' \(did you mean normal\?\); families: normal"),
        ("normal[0,1]", "not of the form family"),
        ("categorical(1,,2)", "'' is not a number"),
        ("mixture(0.5:x:1,0.5:1:1)", "'x' is not a number"),
    ],
)
def test_bad_specs_give_one_line_value_errors(spec, match):
    with pytest.raises(ValueError, match=match) as info:
        parse(spec)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("spec ")


def test_parse_rejects_non_strings():
    with pytest.raises(ValueError, match="spec must be a string, got int"):
        parse(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "d",
    [
        Gaussian(),
        Laplace(),
        StudentT(),
        GaussianMixture((1.0,), (0.0,), (1.0,)),
        Categorical((0.0,)),
    ],
)
def test_bad_sampling_and_interval_arguments(d):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        d.sample(rng, 0)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        d.sample(rng, 2.5)
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        d.sample(np.random.RandomState(0), 10)  # noqa: NPY002 - checking that the legacy API is refused
    with pytest.raises(ValueError, match="coverage must be in"):
        d.interval(1.0)
    with pytest.raises(ValueError, match="x contains NaN"):
        d.logpdf([math.nan])


def test_distributions_are_frozen_and_hashable():
    g = Gaussian(0, 1)
    with pytest.raises(AttributeError):
        g.mu = 2.0  # type: ignore[misc]
    assert len({Gaussian(0, 1), Gaussian(0.0, 1.0), parse("normal(0,1)")}) == 1
