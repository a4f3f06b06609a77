"""Claim 14 (issue 17): the Laplace/Gaussian preset's KLs have closed forms.

The preset said "Different shapes, no closed form".  KL[Laplace(0,1)‖N(0,1)] =
½log 2π − log 2 and KL[N(0,1)‖Laplace(0,1)] = √(2/π) + log 2 − ½log 2π − ½; in
general, from the two log-densities' expectations.  kl_core.estimation.exact.kl now uses
them; checked here against scipy's quad, independently of the core, and the
preset's sentence against them.
"""

from __future__ import annotations

import itertools
import math

import pytest
from scipy import integrate, stats

from kl_core.estimation.distributions import Gaussian, Laplace, parse
from kl_core.estimation.exact import estimator_moments, kl
from kl_core.estimation.presets import PRESETS

LAP = [(0.0, 1.0), (1.3, 0.4), (-2.0, 3.0), (0.5, 0.05)]
NORM = [(0.0, 1.0), (-0.5, 2.0), (2.0, 0.3), (0.0, 20.0)]


def _quad_kl(a, b) -> float:
    """∫ a log(a/b), split at the Laplace's kink, on a's bulk (scipy only)."""
    lo, hi = a.ppf(1e-15), a.isf(1e-15)
    cut = [x for x in (getattr(a, "kink", None), getattr(b, "kink", None)) if x is not None and lo < x < hi]
    f = lambda x: a.pdf(x) * (a.logpdf(x) - b.logpdf(x))  # noqa: E731
    edges = [lo, *sorted(cut), hi]
    return sum(integrate.quad(f, u, v, epsabs=0, epsrel=1e-12, limit=500)[0] for u, v in itertools.pairwise(edges))


class _Lap:
    """Laplace by hand (scipy's logpdf underflows to -inf far out, as log of the pdf)."""

    def __init__(self, loc: float, scale: float) -> None:
        self.loc, self.scale, self.kink = loc, scale, loc
        self._f = stats.laplace(loc, scale)
        self.ppf, self.isf = self._f.ppf, self._f.isf

    def logpdf(self, x):
        return -math.log(2 * self.scale) - abs(x - self.loc) / self.scale

    def pdf(self, x):
        return math.exp(self.logpdf(x))


def _frozen(d):
    return _Lap(d.loc, d.scale) if isinstance(d, Laplace) else stats.norm(d.mu, d.sigma)


def test_the_standard_pair():
    lap, nor = Laplace(0.0, 1.0), Gaussian(0.0, 1.0)
    assert kl(lap, nor) == pytest.approx(0.5 * math.log(2 * math.pi) - math.log(2), rel=1e-14)
    assert kl(nor, lap) == pytest.approx(math.sqrt(2 / math.pi) + math.log(2) - 0.5 * math.log(2 * math.pi) - 0.5,
                                         rel=1e-14)
    assert kl(lap, nor) == pytest.approx(0.225791, abs=5e-7) and kl(nor, lap) == pytest.approx(0.072093, abs=5e-7)


@pytest.mark.parametrize("lap", LAP)
@pytest.mark.parametrize("nor", NORM)
def test_closed_forms_against_quadrature(lap, nor):
    a, b = Laplace(*lap), Gaussian(*nor)
    assert kl(a, b) == pytest.approx(_quad_kl(_frozen(a), _frozen(b)), rel=1e-9)
    assert kl(b, a) == pytest.approx(_quad_kl(_frozen(b), _frozen(a)), rel=1e-9)


def test_the_preset_says_so_and_its_numbers_agree():
    preset = PRESETS["laplace-gaussian"]
    assert "no closed form" not in preset.blurb and "both KLs have closed forms" in preset.blurb
    q, p = parse(preset.q_spec), parse(preset.p_spec)
    assert isinstance(q, Laplace) and isinstance(p, Gaussian)
    # the lab's KL[q‖p] (k1's mean) is the closed form; the other moments come from quadrature
    assert estimator_moments("k1", q, p).mean == pytest.approx(kl(q, p), rel=1e-10)
    assert kl(q, p) == pytest.approx(0.5 * math.log(2 * math.pi) - math.log(2), rel=1e-14)
