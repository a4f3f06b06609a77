r"""The logistic family ``logistic(loc,scale)``: :class:`Logistic`.

Everything else (spec, picker sliders, exact KL and moments by quadrature, the
tail rules, the command line's help) comes from the registry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families._base import Family, LocationScale, Tail, abs_delta
from kl_core.validation import N_, as_float_array

__all__ = ["FAMILY", "Logistic"]


def _softplus_neg(a: np.ndarray) -> np.ndarray:
    """log(1 + e^{−a}) for a ≥ 0 (no overflow, no loss for large a)."""
    return np.log1p(np.exp(-a))


@dataclass(frozen=True)
class Logistic(LocationScale):
    r"""Logistic distribution with location :math:`\mu` and scale :math:`s`.

    .. math:: \log q(x) = -|z| - 2\log\!\left(1 + e^{-|z|}\right) - \log s,
              \quad z = \tfrac{x-\mu}{s}

    (the symmetric form of :math:`-z - 2\log(1 + e^{-z}) - \log s`, which
    neither overflows nor cancels for large :math:`|z|`).

    ========  ===========  ======================  ================
    support   mean         variance                spec
    ========  ===========  ======================  ================
    ℝ         :math:`\mu`  :math:`\pi^2 s^2/3`     logistic(μ,s)
    ========  ===========  ======================  ================

    Tail: exponential like Laplace's, :math:`\log q = -|x|/s \pm \mu/s - \log s + O(e^{-|x|/s})`,
    so :class:`~kl_core.estimation.families.Tail` describes it with
    :math:`b = -1/s` and no new term.

    Parameters
    ----------
    loc : float
        Location :math:`\mu` (mean, median and mode).
    scale : float
        Scale :math:`s`, > 0.

    References
    ----------
    N. L. Johnson, S. Kotz and N. Balakrishnan, *Continuous Univariate
    Distributions*, vol. 2, ch. 23 (1995).

    Examples
    --------
    >>> Logistic(0, 1).name
    'Logistic(0, 1)'
    >>> round(float(Logistic(0, 1).pdf([0.0])[0]), 6)
    0.25
    """

    loc: float = 0.0
    scale: float = 1.0
    display_name: ClassVar[str] = "Logistic"
    spec_name: ClassVar[str] = "logistic"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        a = np.abs(as_float_array(x, "x") - self.loc) / self.scale
        return -a - 2.0 * _softplus_neg(a) - math.log(self.scale)

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.logistic(self.loc, self.scale, n)

    def _interval(self, coverage: float) -> tuple[float, float]:
        # the quantile function is μ + s·log(u/(1 − u)); the central interval is ±s·log((1 + c)/(1 − c))
        half = self.scale * math.log((1.0 + coverage) / (1.0 - coverage))
        return (self.loc - half, self.loc + half)

    def _tail(self, side: int) -> Tail:
        # −|x − μ|/s = −|x|/s + side·μ/s once side·x > |μ|; −2 log(1 + e^{−|z|}) = O(e^{−|z|})
        return Tail.exponential(self.scale, side * self.loc / self.scale - math.log(self.scale))

    def log_density_delta(self, x: np.ndarray) -> np.ndarray:
        a, a0 = np.abs(x - self.loc) / self.scale, abs(self.loc) / self.scale
        return -abs_delta(x, self.loc) / self.scale - 2.0 * (_softplus_neg(a) - _softplus_neg(np.float64(a0)))


FAMILY = Family.of_location_scale(
    Logistic, N_("Logistic"), N_("`logistic(loc,scale)`"),
    location=N_("Location"), scale=N_("Scale s (log scale)"), order=45,
)
