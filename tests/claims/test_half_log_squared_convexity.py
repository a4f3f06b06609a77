"""Claim 6 (Bregman gap's k2 caption; f-divergences' small print and "a common slip").

f(u) = ½ log² u has f′(u) = log u / u and f″(u) = (1 − log u)/u²: convex for u ≤ e,
concave above e.  The caption once said "not convex below u = 1/e", the slip of the
seed notes ((1 + log u)/u², a sign lost in the quotient rule).
"""

import math

import numpy as np

from kl_core.estimation.divergences import DIVERGENCES
from lab.notes import bregman_gap, f_divergences


def test_f_second_derivative_changes_sign_at_e_not_at_1_over_e():
    f = DIVERGENCES["k2"].f  # the registry's f of k2, the one the pages draw
    u = np.geomspace(0.05, 20.0, 400)
    assert np.allclose(f(u), 0.5 * np.log(u) ** 2, rtol=1e-12, atol=0)
    h = 1e-5 * u  # central second difference, relative step
    fd = (f(u + h) - 2 * f(u) + f(u - h)) / h**2
    exact = (1 - np.log(u)) / u**2
    assert np.allclose(fd, exact, rtol=1e-4, atol=1e-4)
    assert ((fd > 0) == (u < math.e)).all()  # convex below e, concave above
    near_1_over_e = np.abs(u - 1 / math.e) < 0.05
    assert near_1_over_e.any() and (fd[near_1_over_e] > 0).all()  # nothing happens at 1/e
    wrong = (1 + np.log(u)) / u**2  # the slip: not the second derivative
    assert not np.allclose(fd, wrong, rtol=1e-2, atol=1e-2)
    assert fd[u < 1 / math.e].min() > 0 > wrong[u < 1 / math.e].max()


def test_the_captions_say_convex_up_to_e():
    k2_caption = bregman_gap.f_caption("k2", "k2", 200, 1.0, 1.0)
    assert "not convex below u = 1/e" not in k2_caption
    assert "convex only up to u = e and concave beyond" in k2_caption
    assert "convex only for u ≤ e" in f_divergences.K2_SMALL_PRINT
    assert "(1 − log u)/u²" in f_divergences.K2_SMALL_PRINT
    slip = f_divergences.K2_COMMON_SLIP
    assert slip.startswith("A common slip")
    assert "(1 + log u)/u²" in slip and "(1 − log u)/u²" in slip
    assert "convex below e (1/e included) and concave above it" in slip
