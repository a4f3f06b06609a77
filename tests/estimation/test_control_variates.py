"""Tests for kl_core.estimation.control_variates: the λ-parabola where λ* does not exist.

(The parabola itself is checked against closed forms in tests/estimation/test_fisher.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kl_core.estimation.control_variates import gain_along_path, lambda_parabola
from kl_core.estimation.distributions import Gaussian, StudentT
from kl_core.estimation.exact import estimator_moments, lambda_star


def test_lambda_star_is_nan_with_a_note_where_every_lambda_has_infinite_variance():
    """t_3 against N(0,1): Var(log r) = ∞, so Var(kλ) = ∞ for every λ (issue 11, part 5)."""
    q, p = StudentT(3.0), Gaussian(0.0, 1.0)
    par = lambda_parabola(q, p)
    assert math.isnan(par.lam_star) and not par.lam_star_defined
    assert par.lam_star_note == lambda_star(q, p).note != ""
    assert par.var_log_r == math.inf
    assert par.var_optimal == math.inf and math.isnan(par.gain)
    assert np.all(par.variance([-2.0, 0.0, 1.0, 8.187]) == np.inf)
    assert estimator_moments("k_lambda", q, p, lam=8.187).var == math.inf


def test_lambda_star_is_zero_where_only_k1_is_finite():
    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(0.0, 1.5))  # χ² = ∞
    assert par.lam_star == 0.0 and par.lam_star_defined
    assert "only λ = 0" in par.lam_star_note
    assert par.var_optimal == pytest.approx(par.var_log_r)


def test_lambda_star_is_defined_for_schulmans_pair():
    par = lambda_parabola(Gaussian(0.0, 1.0), Gaussian(1.0, 1.0))
    assert par.lam_star_defined and par.lam_star_note == ""
    assert par.lam_star == pytest.approx(1 / (math.e - 1), rel=1e-12)
    assert math.isfinite(gain_along_path("shift", [1.0]).lam_star[0])
