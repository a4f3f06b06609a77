"""Claim 3 (Home, question 3): a log-ratio written the other way round.

It once said this "silently changes what k2 and k3 estimate".  k2 = ½(log r)² is the
same for log r and −log r; it is k1 whose sign flips and k3 whose mean changes.
"""

import math

import numpy as np
import pytest
from scipy import integrate

from kl_core.estimation import estimators
from kl_core.estimation.distributions import Gaussian
from kl_core.estimation.exact import kl
from lab.notes import home as notes

Q = Gaussian(0.0, 1.0)  # Home's pair: q = N(0, 1), p = N(μ, 1)


def _answer(number: str) -> str:
    return next(answer for question, answer in notes.QUESTIONS if question.startswith(number))


def _mean_reversed(key: str, mu: float) -> float:
    """E_q[k(−log r)]: the estimator fed q(x)/p(x) instead of p(x)/q(x), by quadrature."""
    p = Gaussian(mu, 1.0)
    fn = getattr(estimators, key)

    def f(x):
        logr = p.logpdf(x) - Q.logpdf(x)
        return float(np.exp(Q.logpdf(x)) * fn(np.atleast_1d(-logr))[0])

    return integrate.quad(f, -40, 40, limit=400, epsabs=1e-12, epsrel=1e-10)[0]


def test_the_answer_names_k1_and_k3_not_k2():
    text = _answer("3.")
    assert "changes what k2 and k3 estimate" not in text
    assert "flips the sign of k1" in text
    assert "changes what k3 estimates" in text
    assert "k2 = ½(log r)² stays the same" in text


def test_reversed_log_ratio_leaves_k2_and_changes_k1_and_k3():
    t = np.linspace(-6, 6, 241)
    assert np.allclose(estimators.k2(-t), estimators.k2(t), rtol=0, atol=0)  # exactly even
    assert np.array_equal(estimators.k1(-t), -estimators.k1(t))
    assert not np.allclose(estimators.k3(-t), estimators.k3(t))
    s = notes.MU_SLIDER
    for mu in np.arange(s.step, s.hi + s.step / 2, 0.25):  # Home's slider, p ≠ q
        true_kl = kl(Q, Gaussian(mu, 1.0))
        assert _mean_reversed("k2", mu) == pytest.approx(mu**4 / 8 + mu**2 / 2, rel=1e-8)
        assert _mean_reversed("k1", mu) == pytest.approx(-true_kl, rel=1e-8)
        # k3 of q/p averages E_q[p/q... reversed]: E_q[1/r] − 1 − KL = e^{μ²} − 1 − μ²/2
        k3_rev = _mean_reversed("k3", mu)
        assert k3_rev == pytest.approx(math.expm1(mu**2) - mu**2 / 2, rel=1e-7)
        assert k3_rev > true_kl * (1 + 1e-3)
