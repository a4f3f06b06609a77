"""The logistic family, added through the registry alone (kl_core/estimation/families/logistic.py).

Its density, sampler and interval are checked against scipy.stats.logistic; its
exact KL (both ways, against a normal and another logistic) against
scipy.integrate.quad on the two densities, written here independently, and
against the closed form KL[logistic(0,1) ‖ N(0,1)] = π²/6 + ½ log 2π − 2
(the standard logistic's entropy is 2 and its variance π²/3); its tails against
conditions derived by hand; sliders, spec and the command line from the registry.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

from kl_core.cli import main as cli
from kl_core.estimation import exact, families
from kl_core.estimation.distributions import Gaussian, parse, practical_issue
from kl_core.estimation.families.logistic import Logistic
from lab import spec_params as sp


def _logistic_logpdf(x: float, loc: float, s: float) -> float:
    z = (x - loc) / s
    return -abs(z) - 2.0 * math.log1p(math.exp(-abs(z))) - math.log(s)


def _normal_logpdf(x: float, mu: float, sigma: float) -> float:
    return -0.5 * ((x - mu) / sigma) ** 2 - math.log(sigma) - 0.5 * math.log(2.0 * math.pi)


def _quad_kl(log_a, log_b) -> tuple[float, float]:
    """KL[a ‖ b] = ∫ a (log a − log b) by scipy.integrate.quad on the densities (not kl_core's)."""
    def f(x: float) -> float:
        la = log_a(x)
        return math.exp(la) * (la - log_b(x))

    value, err = integrate.quad(f, -math.inf, math.inf, epsabs=1e-14, epsrel=1e-12, limit=500)
    return value, err


def _density(spec: str):
    name, args = spec.rstrip(")").split("(")
    a, b = (float(v) for v in args.split(","))
    if name == "logistic":
        return lambda x: _logistic_logpdf(x, a, b)
    return lambda x: _normal_logpdf(x, a, b)


# ------------------------------------------------------------------ density, sampler


@pytest.mark.parametrize(("loc", "scale"), [(0.0, 1.0), (1.5, 0.3), (-2.0, 4.0)])
def test_logpdf_matches_scipy_including_far_out(loc, scale):
    x = np.array([-800.0, -30.0, -1.0, 0.0, 0.2, 3.0, 50.0, 900.0]) * scale + loc
    np.testing.assert_allclose(Logistic(loc, scale).logpdf(x), stats.logistic.logpdf(x, loc, scale), rtol=1e-13)
    assert np.isfinite(Logistic(loc, scale).logpdf([1e300])).all()


def test_density_integrates_to_one():
    total, _ = integrate.quad(lambda x: float(Logistic(0.3, 2.0).pdf([x])[0]), -math.inf, math.inf, epsrel=1e-12)
    assert total == pytest.approx(1.0, rel=1e-10)


def test_interval_holds_its_coverage():
    lo, hi = Logistic(1.0, 2.0).interval(0.999)
    assert stats.logistic.cdf(hi, 1.0, 2.0) - stats.logistic.cdf(lo, 1.0, 2.0) == pytest.approx(0.999, rel=1e-12)


def test_sampler_mean_and_variance_within_standard_errors():
    n, loc, s = 200_000, 0.5, 2.0
    x = Logistic(loc, s).sample(np.random.default_rng(18), n)
    var = math.pi**2 * s**2 / 3.0
    assert abs(x.mean() - loc) < 5 * math.sqrt(var / n)
    # Var(s²) ≈ σ⁴ (κ − 1)/n with the logistic's kurtosis κ = 4.2
    assert abs(x.var() - var) < 5 * var * math.sqrt(3.2 / n)


# ------------------------------------------------------------------ spec and registry


def test_spec_reads_back_and_the_registry_knows_the_family():
    d = parse("logistic(0.5,2)")
    assert d == Logistic(0.5, 2.0) and parse(d.spec) == d
    assert families.family_of(d).key == "logistic"
    assert "logistic(loc,scale)" in families.syntax()
    assert d.name == "Logistic(0.5, 2)"


@pytest.mark.parametrize(("spec", "words"), [
    ("logistic(0)", "logistic takes 2 numbers, got 1"),
    ("logistic(0,-1)", "scale"),
    ("logistik(0,1)", "did you mean logistic"),
])
def test_bad_specs_name_the_mistake(spec, words):
    with pytest.raises(ValueError, match=words):
        parse(spec)


def test_practical_range_names_the_scale():
    assert "scale" in practical_issue(Logistic(0.0, 1e-9))
    assert "loc" in practical_issue(Logistic(2e6, 1.0))
    assert practical_issue(Logistic(0.0, 1.0)) == ""


# ------------------------------------------------------------------ exact KL against quadrature

PAIRS = [
    ("logistic(0,1)", "normal(0,1)"),
    ("normal(0,1)", "logistic(0,1)"),
    ("logistic(0,1)", "logistic(1,1)"),  # shift
    ("logistic(0,1)", "logistic(0.5,2)"),  # shift and scale
    ("logistic(1,2)", "logistic(0,1)"),
    ("logistic(-1,0.5)", "normal(0.5,1.5)"),
]


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_kl_matches_independent_quadrature(a, b):
    ref, err = _quad_kl(_density(a), _density(b))
    assert err < 1e-11
    assert exact.kl(parse(a), parse(b)) == pytest.approx(ref, rel=1e-10)


def test_kl_logistic_to_normal_closed_form():
    # E[log q] = −2 (entropy 2), E[log N(x;0,1)] = −½ log 2π − ½·π²/3
    closed = math.pi**2 / 6.0 + 0.5 * math.log(2.0 * math.pi) - 2.0
    assert exact.kl(Logistic(0, 1), Gaussian(0, 1)) == pytest.approx(closed, rel=1e-12)


def test_kl_is_zero_for_the_same_logistic_and_shift_invariant():
    assert exact.kl(Logistic(0.3, 2.0), Logistic(0.3, 2.0)) == pytest.approx(0.0, abs=1e-15)
    far = exact.kl(Logistic(1e4, 1.0), Logistic(1e4 + 0.5, 2.0))
    assert far == pytest.approx(exact.kl(Logistic(0.0, 1.0), Logistic(0.5, 2.0)), rel=1e-10)


def test_moments_of_k1_match_quadrature():
    q, p = Logistic(0.0, 1.0), Gaussian(0.5, 1.0)
    m = exact.estimator_moments("k1", q, p)

    def second(x: float) -> float:
        lq = _logistic_logpdf(x, 0.0, 1.0)
        return math.exp(lq) * (lq - _normal_logpdf(x, 0.5, 1.0)) ** 2

    m2, _ = integrate.quad(second, -math.inf, math.inf, epsabs=1e-13, epsrel=1e-12, limit=500)
    assert m.mean == pytest.approx(exact.kl(q, p), rel=1e-10)
    assert m.var == pytest.approx(m2 - m.mean**2, rel=1e-9)


# ------------------------------------------------------------------ tails


def test_tail_is_exponential_and_matches_logpdf_far_out():
    d = Logistic(0.7, 1.5)
    for side in (1, -1):
        t = d.tail(side)
        assert (t.quadratic, t.log) == (0, 0) and float(t.linear) == pytest.approx(-1 / 1.5)
        for x in (side * 15.0, side * 60.0):
            form = float(t.linear) * abs(x) + t.const
            # the rest is −2 log(1 + e^{−|z|}): exponentially small, not part of the form
            rest = -2.0 * math.log1p(math.exp(-abs(x - 0.7) / 1.5))
            assert float(d.logpdf([x])[0]) - form == pytest.approx(rest, rel=1e-6, abs=1e-12)


def test_cauchy_sampler_against_logistic_has_infinite_kl():
    # KL[t₁ ‖ logistic] needs E|x| under a Cauchy: infinite
    assert exact.kl(parse("t(1,0,1)"), Logistic(0, 1)) == math.inf
    # t₃ has E|x| < ∞: finite, and equal to quadrature of the densities
    value = exact.kl(parse("t(3,0,1)"), Logistic(0, 1))

    def f(x: float) -> float:
        lt = float(stats.t.logpdf(x, 3))
        return math.exp(lt) * (lt - _logistic_logpdf(x, 0.0, 1.0))

    ref, _ = integrate.quad(f, -math.inf, math.inf, epsabs=1e-14, epsrel=1e-12, limit=500)
    assert value == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize(("s_p", "finite"), [(1.5, True), (1.99, True), (2.0, False), (3.0, False)])
def test_pearson_is_finite_iff_the_target_scale_is_below_twice_the_sampler_scale(s_p, finite):
    # E_q[r²] = ∫ p²/q ~ ∫ e^{−2|x|/s_p + |x|}: finite iff s_p < 2 (s_q = 1)
    value = exact.f_divergence("pearson", Logistic(0, s_p), Logistic(0, 1))
    assert math.isfinite(value) is finite


# ------------------------------------------------------------------ sliders and the command line


def test_sliders_come_from_the_registry():
    d = parse("logistic(0.5,2)")
    knobs = sp.knobs(d)
    assert [k.id for k in knobs] == ["loc", "scale"]
    assert not knobs[0].log and knobs[1].log and 2.0 in knobs[1].steps
    assert sp.with_knob(d, "scale", 0.5).spec == "logistic(0.5,0.5)"
    assert sp.switch_family(Gaussian(1.0, 2.0), "logistic") == Logistic(1.0, 2.0)
    assert sp.switch_family(d, "normal") == Gaussian(0.5, 2.0)
    assert "logistic" in sp.FAMILIES


def test_cli_kl_both_ways(capsys):
    code = cli.main(["kl", "--q", "logistic(0,1)", "--p", "normal(0,1)", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    closed = math.pi**2 / 6.0 + 0.5 * math.log(2.0 * math.pi) - 2.0
    assert out["kl_qp"] == pytest.approx(closed, rel=1e-12)
    ref, _ = _quad_kl(_density("normal(0,1)"), _density("logistic(0,1)"))
    assert out["kl_pq"] == pytest.approx(ref, rel=1e-10)
