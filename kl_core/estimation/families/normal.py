r"""The normal family ``normal(mu,sigma)``: :class:`Gaussian`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families._base import (
    LOG_SQRT_2PI,
    Family,
    LocationScale,
    Tail,
    gaussian_tail,
)
from kl_core.validation import N_, as_float_array

__all__ = ["FAMILY", "Gaussian"]


@dataclass(frozen=True)
class Gaussian(LocationScale):
    r"""Normal distribution :math:`\mathcal N(\mu, \sigma^2)`.

    .. math:: \log q(x) = -\tfrac12\left(\tfrac{x-\mu}{\sigma}\right)^2 - \log\sigma - \tfrac12\log 2\pi

    ========  ===========  ========  ============
    support   mean         variance  spec
    ========  ===========  ========  ============
    ℝ         :math:`\mu`  σ²        normal(μ,σ)
    ========  ===========  ========  ============

    Tail: :math:`a = -1/(2\sigma^2)`, :math:`b = \pm\mu/\sigma^2`, :math:`c = 0`.

    Parameters
    ----------
    mu : float
        Mean.
    sigma : float
        Standard deviation, > 0.

    Examples
    --------
    >>> Gaussian(0, 1).name
    'N(0, 1)'
    """

    mu: float = 0.0
    sigma: float = 1.0
    location_field: ClassVar[str] = "mu"
    scale_field: ClassVar[str] = "sigma"
    spec_name: ClassVar[str] = "normal"

    @property
    def name(self) -> str:
        return f"N({self.mu:g}, {self.sigma:g}²)" if self.sigma != 1 else f"N({self.mu:g}, 1)"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        z = (as_float_array(x, "x") - self.mu) / self.sigma
        return -0.5 * z * z - math.log(self.sigma) - LOG_SQRT_2PI

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        x = rng.standard_normal(n)
        if self.sigma != 1.0:  # skipped passes change nothing: x * 1 == x, x + 0 == x
            x *= self.sigma
        if self.mu != 0.0:
            x += self.mu
        return x

    def _interval(self, coverage: float) -> tuple[float, float]:
        # The standard library's normal quantile (Wichura's AS 241, ~1e-16 relative):
        # the exact values of Gaussian pairs need their bulk, and no scipy.
        from statistics import NormalDist

        z = -NormalDist().inv_cdf((1.0 - coverage) / 2.0)
        return (self.mu - z * self.sigma, self.mu + z * self.sigma)

    def _tail(self, side: int) -> Tail:
        return gaussian_tail(self.mu, self.sigma, side)

    def log_density_delta(self, x: np.ndarray) -> np.ndarray:
        return gauss_delta(x, self.mu, self.sigma)


def gauss_delta(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    """log N(x; μ, σ²) − log N(0; μ, σ²) = −((x − μ)² − μ²)/(2σ²), factored so that nothing cancels."""
    return -(x * (x - 2.0 * mu)) / (2.0 * sigma * sigma)


def _log_ratio(p: Gaussian, q: Gaussian, x: ArrayLike) -> np.ndarray:
    # log r is the quadratic a x² + b x + c: faster, and no cancellation of two
    # large log-densities far in the tails.
    xa = as_float_array(x, "x")
    a = 0.5 / q.sigma**2 - 0.5 / p.sigma**2
    b = p.mu / p.sigma**2 - q.mu / q.sigma**2
    c = 0.5 * q.mu**2 / q.sigma**2 - 0.5 * p.mu**2 / p.sigma**2 + math.log(q.sigma / p.sigma)
    if a != 0.0:
        out = a * xa
        out += b
        out *= xa
    else:  # equal sigmas: log r is linear, (0 + b)·x = b·x
        out = np.multiply(b, xa, out=np.empty_like(xa))
    out += c
    return out


def _kl(a: Gaussian, b: Gaussian) -> float:
    # ½ k3(2 log σa/σb) + (μa − μb)²/(2σb²), k3(s) = e^s − 1 − s without cancellation
    from kl_core.estimation import estimators as est

    var_term = 0.5 * float(est.k3([2.0 * math.log(a.sigma / b.sigma)])[0])
    return var_term + (a.mu - b.mu) ** 2 / (2.0 * b.sigma**2)


FAMILY = Family.of_location_scale(
    Gaussian, N_("Normal"), N_("`normal(μ,σ)`, e.g. `normal(0.5,1)`"),
    location=N_("μ, the mean"), scale=N_("σ, the standard deviation (log scale)"),
    order=10, aliases=("gaussian", "n"),
)

#: Closed forms of KL[a ‖ b], keyed by (type(a), type(b)).
KL_CLOSED_FORMS = {(Gaussian, Gaussian): _kl}
#: Fast log-ratios log p − log q, keyed by (type(p), type(q)).
LOG_RATIOS = {(Gaussian, Gaussian): _log_ratio}
