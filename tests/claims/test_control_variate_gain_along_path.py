"""Claim 7 (Control variates, section 4): how λ* and the gain Var(k3)/Var(kλ*) move along a path.

The page once said the limiting gain is "1 only for the Gaussian mean shift" and that
"further away χ² grows faster than the KLs, λ* moves away from 1 and the gain grows".
On its own scale path with θ < 0, λ* rises to 2.04 and the gain falls from 2.29 to 1.41;
on the logit path with θ < 0 it falls from 2.53 to 2.03.  The limit is 1 whenever the
score of the step has zero third moment (any symmetric location shift).  The intro is now
true on every path, and the path's own behaviour is composed from the computed curve.
"""

import math

import numpy as np
import pytest

from kl_core.estimation.control_variates import gain_along_path, lambda_parabola
from kl_core.estimation.distributions import StudentT
from kl_core.estimation.paths import PATHS
from lab.notes import control_variates as notes

PHRASES = {
    "rises": "the gain rises from ×{ga} to ×{gb}",
    "falls": "the gain falls from ×{ga} to ×{gb}",
    "rises-falls": "the gain rises from ×{ga} to ×{gt} (θ = {tt}), then falls to ×{gb}",
    "falls-rises": "the gain falls from ×{ga} to ×{gt} (θ = {tt}), then rises to ×{gb}",
    "mixed": "moves up and down",
}


def _side_data(curve, positive: bool):
    th = np.asarray(curve.thetas)
    mask = th > 0 if positive else th < 0
    order = np.argsort(np.abs(th[mask]))
    return th[mask][order], np.asarray(curve.gain)[mask][order], np.asarray(curve.lam_star)[mask][order]


def test_the_intro_makes_no_false_general_claim():
    text = notes.PATH_INTRO
    assert "1 only for the Gaussian mean shift" not in text
    assert "the gain grows" not in text and "grows faster than the KLs" not in text
    assert "zero third moment" in text and "the gain may rise or fall" in text


@pytest.mark.parametrize("path", list(PATHS))
def test_gain_sentence_is_true_on_every_path(path):
    curve = gain_along_path(path, notes.PATH_THETAS[path])  # the page's own θ grid
    text = notes.path_trend(curve)
    sides = notes.gain_sides(curve)
    assert [s.side for s in sides] == [s for s, pos in (("θ > 0", True), ("θ < 0", False))
                                       if (np.sign(curve.thetas) == (1 if pos else -1)).any()]
    for s in sides:
        t, g, lam = _side_data(curve, s.side == "θ > 0")
        finite = np.isfinite(g)
        if not finite.all():  # an infinite tail (χ² = ∞), announced from its first θ
            first_inf = int(np.argmin(finite))
            assert finite[:first_inf].all() and not finite[first_inf:].any()
            assert s.t_infinite == t[first_inf]
            assert f"From θ = {t[first_inf]:.2g} on, Var(k3) and so the gain are infinite" in text
            t, g, lam = t[:first_inf], g[:first_inf], lam[:first_inf]
        assert (s.g_a, s.g_b, s.lam_a, s.lam_b) == (g[0], g[-1], lam[0], lam[-1])
        d = np.diff(g)
        if s.trend == "rises":
            assert (d > 0).all()
        elif s.trend == "falls":
            assert (d < 0).all()
        elif s.trend in ("rises-falls", "falls-rises"):
            k = int(np.argmax(g)) if s.trend == "rises-falls" else int(np.argmin(g))
            up, down = (d[:k], d[k:]) if s.trend == "rises-falls" else (d[k:], d[:k])
            assert 0 < k < g.size - 1 and (up > 0).all() and (down < 0).all()
            assert (s.t_turn, s.g_turn) == (t[k], g[k])
        else:
            assert s.trend == "mixed"
        values = dict(ga=f"{s.g_a:.4g}", gb=f"{s.g_b:.4g}", gt=f"{s.g_turn:.4g}", tt=f"{s.t_turn:.2g}")
        assert PHRASES[s.trend].format(**values) in text
        assert f"λ\\* goes from {s.lam_a:.3g} to {s.lam_b:.3g}" in text


def test_the_numbers_of_the_review():
    scale = {s.side: s for s in notes.gain_sides(gain_along_path("scale", notes.PATH_THETAS["scale"]))}
    assert scale["θ < 0"].trend == "falls"
    assert (scale["θ < 0"].lam_b, scale["θ < 0"].g_a, scale["θ < 0"].g_b) == (
        pytest.approx(2.04, abs=0.01), pytest.approx(2.29, abs=0.01), pytest.approx(1.41, abs=0.01))
    logit = {s.side: s for s in notes.gain_sides(gain_along_path("logit", notes.PATH_THETAS["logit"]))}
    assert logit["θ < 0"].g_a == pytest.approx(2.53, abs=0.01)
    assert logit["θ < 0"].g_min == pytest.approx(2.03, abs=0.01)
    shift = notes.gain_sides(gain_along_path("shift", notes.PATH_THETAS["shift"]))
    assert [s.trend for s in shift] == ["rises"]


def test_limiting_gain_is_one_exactly_when_the_score_has_no_third_moment():
    """Limit = Var(u²)/(Var(u²) − E[u³]²/Var(u)) for the score u of the step."""
    small = [1e-3, -1e-3]
    shift = gain_along_path("shift", small).gain
    assert shift == pytest.approx([1.0, 1.0], abs=1e-5)  # u = x: E[u³] = 0
    # scale: u = x² − 1, E[u²] = 2, E[u³] = 8, E[u⁴] = 60: limit 56 / (56 − 32) = 7/3
    assert gain_along_path("scale", small).gain == pytest.approx([7 / 3, 7 / 3], abs=0.01)
    assert (gain_along_path("logit", small).gain > 2.0).all()  # a skewed score: above 1
    # a symmetric location shift that is not Gaussian: Student t (df 5), also 1 in the limit
    q = StudentT(5.0, 0.0, 1.0)
    gains = [lambda_parabola(q, StudentT(5.0, mu, 1.0)).gain for mu in (0.1, 0.03, 0.01)]
    assert abs(gains[-1] - 1.0) < abs(gains[0] - 1.0) and gains[-1] == pytest.approx(1.0, abs=1e-3)
    assert math.isfinite(gains[0])
