"""Claim 4 (Home, question 2): "KL[p‖q] is a different number".

For Home's own pair q = N(0, 1), p = N(μ, 1) the two directions coincide
(both μ²/2); they differ in general, e.g. for the heavy-tails or the
Laplace–Gaussian preset.  The answer now says "in general".
"""

import numpy as np
import pytest

from kl_core.estimation.distributions import Gaussian
from kl_core.estimation.exact import kl
from kl_core.estimation.presets import PRESETS
from lab.notes import home as notes

Q = Gaussian(0.0, 1.0)


def test_kl_pq_differs_only_in_general():
    text = next(a for q, a in notes.QUESTIONS if q.startswith("2."))
    assert "KL[p‖q] is in general a different number" in text
    assert "both are μ²/2" in text
    s = notes.MU_SLIDER
    for mu in np.arange(s.lo, s.hi + s.step / 2, s.step):  # Home's slider: equal
        p = Gaussian(float(mu), 1.0)
        assert kl(Q, p) == pytest.approx(mu**2 / 2, abs=1e-12)
        assert kl(p, Q) == pytest.approx(kl(Q, p), rel=1e-12, abs=1e-15)
    for key in ("heavy-tails", "laplace-gaussian"):  # in general: different
        q, p = PRESETS[key].q, PRESETS[key].p
        assert abs(kl(q, p) - kl(p, q)) > 0.01 * kl(q, p), key


def test_both_kls_are_their_parabola_on_the_mean_shift():
    """f-divergences page, path caption: on the shift path KL[q‖p] = KL[p‖q] = θ²/2 exactly."""
    from kl_core.estimation.distributions import Gaussian
    from kl_core.estimation.exact import kl as exact_kl

    for theta in (-3.0, -1.0, 0.5, 2.0, 3.0):
        q, p = Gaussian(0.0, 1.0), Gaussian(theta, 1.0)
        assert exact_kl(q, p) == pytest.approx(theta**2 / 2, rel=1e-9)
        assert exact_kl(p, q) == pytest.approx(theta**2 / 2, rel=1e-9)
