r"""The Laplace family ``laplace(loc,scale)``: :class:`Laplace`, and its closed-form KLs with normals."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families._base import Family, LocationScale, Tail, abs_delta
from kl_core.estimation.families.normal import Gaussian
from kl_core.validation import N_, as_float_array

__all__ = ["FAMILY", "Laplace"]


@dataclass(frozen=True)
class Laplace(LocationScale):
    r"""Laplace distribution with location :math:`\mu` and scale :math:`b`.

    .. math:: \log q(x) = -\frac{|x - \mu|}{b} - \log 2b

    ========  ===========  ========  ================
    support   mean         variance  spec
    ========  ===========  ========  ================
    ℝ         :math:`\mu`  2b²       laplace(μ,b)
    ========  ===========  ========  ================

    Tail: exponential, :math:`b_{\text{tail}} = -1/b`, exact once :math:`\pm x > |\mu|`.

    Parameters
    ----------
    loc : float
        Location (mean and median).
    scale : float
        Scale :math:`b`, > 0.

    Examples
    --------
    >>> Laplace(0, 1).name
    'Laplace(0, 1)'
    """

    loc: float = 0.0
    scale: float = 1.0
    display_name: ClassVar[str] = "Laplace"
    spec_name: ClassVar[str] = "laplace"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        return -np.abs(as_float_array(x, "x") - self.loc) / self.scale - math.log(2.0 * self.scale)

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.laplace(self.loc, self.scale, n)

    def _interval(self, coverage: float) -> tuple[float, float]:
        half = -self.scale * math.log(1.0 - coverage)
        return (self.loc - half, self.loc + half)

    def _tail(self, side: int) -> Tail:
        # -|x - loc|/b = -|x|/b + side·loc/b once side·x > |loc|
        return Tail.exponential(self.scale, side * self.loc / self.scale - math.log(2.0 * self.scale))

    def log_density_delta(self, x: np.ndarray) -> np.ndarray:
        return -abs_delta(x, self.loc) / self.scale


def _kl_laplace(a: Laplace, b: Laplace) -> float:
    # log(1/ρ) + δ/b_b + ρ e^{−δ/b_a} − 1, ρ = b_a/b_b, written through k3 (Gil, Alajaji & Linder 2013)
    from kl_core.estimation import estimators as est

    delta = abs(a.loc - b.loc)
    s = math.log(a.scale / b.scale) - delta / a.scale
    return float(est.k3([s])[0]) - delta / a.scale + delta / b.scale


def _kl_laplace_normal(a: Laplace, b: Gaussian) -> float:
    # log(σ√(2π)/(2b)) − 1 + (2b² + d²)/(2σ²), d = m − μ: the Laplace's second moment about μ
    d = a.loc - b.mu
    return (math.log(b.sigma * math.sqrt(2.0 * math.pi) / (2.0 * a.scale)) - 1.0
            + (2.0 * a.scale**2 + d * d) / (2.0 * b.sigma**2))


def _kl_normal_laplace(a: Gaussian, b: Laplace) -> float:
    # log(2b/(σ√(2π))) − ½ + E|x − m|/b, with the folded-normal mean E|x − m|
    d = a.mu - b.loc
    mean_abs = (a.sigma * math.sqrt(2.0 / math.pi) * math.exp(-d * d / (2.0 * a.sigma**2))
                + d * math.erf(d / (a.sigma * math.sqrt(2.0))))
    return math.log(2.0 * b.scale / (a.sigma * math.sqrt(2.0 * math.pi))) - 0.5 + mean_abs / b.scale


FAMILY = Family.of_location_scale(
    Laplace, N_("Laplace"), N_("`laplace(loc,scale)`"),
    location=N_("Location"), scale=N_("Scale b (log scale)"), order=20,
)

#: Closed forms of KL[a ‖ b], keyed by (type(a), type(b)).
KL_CLOSED_FORMS = {
    (Laplace, Laplace): _kl_laplace,
    (Laplace, Gaussian): _kl_laplace_normal,
    (Gaussian, Laplace): _kl_normal_laplace,
}
