"""Claim 1 (lab/widgets.py, the "Set λ = λ*" help): λ* = Cov(log r, r)/Var(r).

d/dλ Var(−log r + λ(r − 1)) = 0 gives λ* = Cov(log r, r)/Var(r) = (KL[p‖q] + KL[q‖p])/χ²;
the help once said Cov(−log r, r)/Var(r), the negative (−0.582 at μ = 1 instead of 0.582).
"""

import math

import numpy as np
import pytest
from scipy import integrate

from kl_core.estimation.distributions import Categorical
from kl_core.estimation.exact import estimator_moments, lambda_star
from kl_core.estimation.presets import PRESETS
from lab.widgets import LAMBDA_STAR_HELP


def _expect(q, p, g) -> float:
    """E_q[g(log r)] by independent quadrature (a sum for a categorical pair)."""
    if isinstance(q, Categorical):
        x = np.arange(q.k)
        return float(np.sum(np.exp(q.logpdf(x)) * g(p.logpdf(x) - q.logpdf(x))))

    def f(x):
        return float(np.exp(q.logpdf(x)) * g(p.logpdf(x) - q.logpdf(x)))

    lo, hi = q.interval(1 - 1e-13)
    return integrate.quad(f, lo, hi, limit=400, epsabs=1e-13, epsrel=1e-11)[0]


def test_the_help_states_the_right_sign():
    assert "Cov(log r, r)/Var(r)" in LAMBDA_STAR_HELP
    assert "Cov(−log r" not in LAMBDA_STAR_HELP
    assert "(KL[p‖q] + KL[q‖p])/χ²(p‖q)" in LAMBDA_STAR_HELP


@pytest.mark.parametrize("key", list(PRESETS))
def test_lambda_star_is_cov_log_r_r_over_var_r(key):
    """Every preset of the Estimator Lab (where the button lives) with a finite λ*."""
    preset = PRESETS[key]
    q, p = preset.q, preset.p
    star = lambda_star(q, p)
    if math.isinf(estimator_moments("k3", q, p).var):  # χ² = Var(r) = ∞ (heavy tails)
        assert star.value == 0.0 and "infinite" in star.note  # only λ = 0 is finite
        return
    mean_log_r = _expect(q, p, lambda t: t)
    cov = _expect(q, p, lambda t: (t - mean_log_r) * np.expm1(t))  # E_q[r] = 1
    var_r = _expect(q, p, lambda t: np.expm1(t) ** 2)
    assert star.value == pytest.approx(cov / var_r, rel=1e-6)
    assert star.value > 0  # Cov(log r, r) > 0: the wrong sign would give a negative λ*
    # ... and it is the minimum of the exact variance parabola.
    at = estimator_moments("k_lambda", q, p, lam=star.value).var
    for step in (-0.05, 0.05):
        assert at < estimator_moments("k_lambda", q, p, lam=star.value + step).var


def test_schulman_mu_1_value():
    """At μ = 1, λ* = μ²/(e^{μ²} − 1) = 0.582, and −Cov(log r, r)/Var(r) would be −0.582."""
    preset = PRESETS["schulman-large"]
    star = lambda_star(preset.q, preset.p).value
    assert star == pytest.approx(1 / (math.e - 1), rel=1e-10)
    assert round(star, 3) == 0.582
