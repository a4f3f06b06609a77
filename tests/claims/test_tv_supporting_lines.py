"""Claim 16 (issue 17): total variation has many supporting lines at u = 1, not none.

The Bregman gap page said for TV: "no tangent line there and no gap estimator"
and "no single line touches it there".  Every line through (1, 0) with a slope
s in [f′(1⁻), f′(1⁺)] = [−½, ½] touches ½|u − 1| there and stays below, so
f(r) − s(r − 1) ≥ 0 is unbiased for TV for each such s; what fails is
uniqueness.  Checked over the page's f menu, its u grid and its default pair,
against difference quotients of f and scipy's quad, independently of the core.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import integrate, stats

from kl_core.estimation.distributions import parse
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.exact import f_divergence
from lab.notes import bregman_gap as notes

F_ORDER = ("kl_pq", "k2", "pearson", "hellinger", "js", "tv")   # pages/bregman-gap.py
U_GRID = np.concatenate([np.geomspace(0.05, 1.0, 41), np.linspace(1.0, 5.0, 81)[1:]])
Q, P = parse("normal(0,1)"), parse("normal(1,1)")                 # the page's default pair


def test_the_page_menu_is_the_registry():
    page = open("pages/bregman-gap.py", encoding="utf-8").read()
    assert "F_ORDER = " + str(F_ORDER).replace("'", '"') in page
    assert "np.geomspace(R_MIN, 1.0, 41), np.linspace(1.0, R_MAX, 81)[1:]" in page and "R_MIN, R_MAX = 0.05, 5.0" in page
    assert 'distribution_pair("normal(0,1)", "normal(1,1)")' in page
    assert set(F_ORDER) == set(DIVERGENCES) - {"kl_qp"}


def _one_sided(key: str) -> tuple[float, float]:
    """f′(1⁻), f′(1⁺) from difference quotients of f itself."""
    f = DIVERGENCES[key].f
    h = 1e-7
    return float((f(1.0) - f(1.0 - h))[()] / h), float((f(1.0 + h) - f(1.0))[()] / h)


@pytest.mark.parametrize("key", F_ORDER)
def test_the_slopes_the_page_shows(key):
    d = DIVERGENCES[key]
    lo, hi = d.slopes_at_1
    ql, qh = _one_sided(key)
    assert lo == pytest.approx(ql, abs=1e-5) and hi == pytest.approx(qh, abs=1e-5)
    if d.fprime_at_1 is not None:
        assert lo == pytest.approx(d.fprime_at_1, abs=1e-12) and hi == pytest.approx(d.fprime_at_1, abs=1e-12)
        return
    note, caption = notes.kink_note(key), notes.kink_caption(key)
    shown = [float(x) for x in re.findall(r"slope jumps from (\S+) to (\S+) there", note)[0]]
    assert shown == [pytest.approx(lo, abs=5e-4), pytest.approx(hi, abs=5e-4)]
    shown = [float(x) for x in re.search(r"two slopes at u = 1 \((\S+) and (\S+)\)", caption).groups()]
    assert shown == [pytest.approx(lo, abs=5e-4), pytest.approx(hi, abs=5e-4)]
    assert "no gap estimator" not in note and "no single line" not in caption
    assert "whole family of gap estimators" in note and "none is 'the' tangent" in caption


def _r(x: float) -> float:
    """r = p/q at x for the page's default pair, from the distributions' log-densities."""
    return math.exp(P.logpdf(np.array([x]))[0] - Q.logpdf(np.array([x]))[0])


def test_every_slope_between_gives_a_supporting_line_and_an_unbiased_gap():
    d = DIVERGENCES["tv"]
    lo, hi = d.slopes_at_1
    u = np.concatenate([U_GRID, np.linspace(0.0, 50.0, 2001)])
    exact = f_divergence("tv", P, Q)
    assert exact == pytest.approx(2 * stats.norm.cdf(0.5) - 1, rel=1e-9)   # TV of two unit normals 1 apart
    for s in np.linspace(lo, hi, 5):
        gap = d.f(u) - s * (u - 1.0)
        assert (gap >= -1e-14 * (1.0 + u)).all()                          # the line stays below: gap ≥ 0
        assert float(d.f(1.0)) == 0.0                                     # and touches at u = 1
        g = lambda x, s=s: stats.norm.pdf(x) * (0.5 * abs(_r(x) - 1.0) - s * (_r(x) - 1.0))  # noqa: E731
        mean = sum(integrate.quad(g, a, b, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
                   for a, b in ((-40.0, 0.5), (0.5, 40.0)))                 # r = 1 at x = ½
        assert mean == pytest.approx(exact, rel=1e-9)                      # unbiased for TV for every such s
    for s in (lo - 0.01, hi + 0.01):                                      # outside [lo, hi]: crosses f
        assert (d.f(u) - s * (u - 1.0) < 0).any()


def test_tv_is_the_one_kink():
    kinked = [k for k, d in DIVERGENCES.items() if d.fprime_at_1 is None]
    assert kinked == ["tv"]
    assert notes.kink_note("tv").endswith("No other entry of the registry has a kink at u = 1.")
    assert "With s = 0 the gap is f(r) itself." in notes.kink_note("tv")
