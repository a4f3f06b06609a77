r"""The Student t family ``t(df,loc,scale)``: :class:`StudentT`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families._base import PRACTICAL, Family, LocationScale, Param, Tail, num
from kl_core.estimation.families.normal import Gaussian
from kl_core.validation import N_, Message, as_float_array, check_positive

__all__ = ["FAMILY", "StudentT"]

DF_SLIDER = (0.5, 100.0)  # log-scale steps
#: Above this ν the t's algebraic tail starts beyond the quadrature's far cut (√ν scales out,
#: past 1e50 scales): the exact values are computed up to here (KL against N(0,1) ≈ 1.75/ν²).
DF_MAX = 1e40


@dataclass(frozen=True)
class StudentT(LocationScale):
    r"""Student's t distribution with ``df`` degrees of freedom, location and scale.

    .. math:: \log q(x) = \log\Gamma\!\left(\tfrac{\nu+1}{2}\right) - \log\Gamma\!\left(\tfrac{\nu}{2}\right)
        - \tfrac12\log(\nu\pi) - \log s - \tfrac{\nu+1}{2}\log\!\left(1 + \tfrac{z^2}{\nu}\right),
        \quad z = \tfrac{x-\mu}{s}

    ========  =====================  ==========================  ==============
    support   mean                   variance                    spec
    ========  =====================  ==========================  ==============
    ℝ         μ (ν > 1)              s²ν/(ν−2) (ν > 2)           t(ν,μ,s)
    ========  =====================  ==========================  ==============

    Tail: algebraic, :math:`c = -(\nu + 1)`, with a correction
    :math:`O(\mathrm{loc}/x + \nu s^2/x^2)`.

    Parameters
    ----------
    df : float
        Degrees of freedom :math:`\nu`, > 0.
    loc : float
        Location :math:`\mu`.
    scale : float
        Scale :math:`s`, > 0.

    Examples
    --------
    >>> StudentT(3).name
    't₃(0, 1)'
    """

    df: float = 3.0
    loc: float = 0.0
    scale: float = 1.0
    spec_name: ClassVar[str] = "t"

    def __post_init__(self) -> None:
        object.__setattr__(self, "df", check_positive(self.df, "df"))
        super().__post_init__()

    @property
    def name(self) -> str:
        sub = str(f"{self.df:g}").translate(str.maketrans("0123456789.", "₀₁₂₃₄₅₆₇₈₉."))
        return f"t{sub}({self.loc:g}, {self.scale:g})"

    @property
    def spec(self) -> str:
        return f"{self.spec_name}({num(self.df)},{num(self.loc)},{num(self.scale)})"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        nu = self.df
        z = (as_float_array(x, "x") - self.loc) / self.scale
        const = log_t_norm(nu) - math.log(self.scale)
        z2 = z * z
        u = z2 / nu
        # ½(ν+1)·log1p(u) = ½z²(1 + 1/ν)·log1p(u)/u: no subnormal u for huge ν
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(u < 1e-8, 1.0 - u / 2.0 + u * u / 3.0, np.log1p(u) / np.where(u > 0, u, 1.0))
            body = np.where(u < 1e-8, 0.5 * z2 * (1.0 + 1.0 / nu) * ratio, (nu + 1) / 2 * np.log1p(u))
        return const - body

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.loc + self.scale * rng.standard_t(self.df, n)

    def _interval(self, coverage: float) -> tuple[float, float]:
        from scipy import special

        z = float(special.stdtrit(self.df, 0.5 + coverage / 2.0))
        return (self.loc - z * self.scale, self.loc + z * self.scale)

    def _tail(self, side: int) -> Tail:
        # log(1 + z²/ν) = 2 log|x| − 2 log s − log ν + O(loc/x + ν s²/x²)
        nu = self.df
        half = (nu + 1.0) / 2.0
        const = (
            log_t_norm(nu) - math.log(self.scale) + half * (2.0 * math.log(self.scale) + math.log(nu))
        )  # fmt: skip
        return Tail.algebraic(-(Fraction(nu) + 1), float(const))

    def log_density_delta(self, x: np.ndarray) -> np.ndarray:
        z, z0 = (x - self.loc) / self.scale, -self.loc / self.scale
        return -(self.df + 1.0) / 2.0 * np.log1p((x / self.scale) * (z + z0) / (self.df + z0 * z0))

    def practical_issue(self) -> str:
        if self.df < PRACTICAL["df"]:
            return Message("df = {df:g} is below {least:g}", df=self.df, least=PRACTICAL["df"])
        if self.df > DF_MAX:
            return Message("df = {df:g} is above {most:g}", df=self.df, most=DF_MAX)
        return super().practical_issue()


# log Γ(a + ½) − log Γ(a) − ½ log a = Σ_n (−1)ⁿ (B_n(½) − B_n(0)) / (n(n−1) a^{n−1}) (Stirling):
# coefficients of a^{-1}, a^{-3}, …, a^{-11}; truncation error < 1e-20 for a ≥ 25.
_HALF_STEP = (-1 / 8, 1 / 192, -1 / 640, 17 / 14336, -31 / 18432, 691 / 180224)
_SERIES_FROM = 50.0


def _half_step(nu: float) -> float:
    """log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(ν/2), by the series for ν ≥ 50."""
    if nu < _SERIES_FROM:
        return math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu / 2)
    inv = 2.0 / nu
    inv2 = inv * inv
    acc = 0.0
    for c in reversed(_HALF_STEP):
        acc = acc * inv2 + c
    return acc * inv


def _l_minus_1(u: np.ndarray) -> np.ndarray:
    """log1p(u)/u − 1, without cancellation for small u (series Σ (−u)^k/(k+1))."""
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = np.log1p(u) / np.where(u > 0, u, 1.0) - 1.0
    small = u < 0.05
    acc = np.zeros_like(u)
    for k in range(14, 0, -1):
        acc = (-u) * (1.0 / (k + 1) + acc)
    return np.where(small, acc, direct)


def _log_ratio_normal_t(p: Gaussian, q: StudentT, x: ArrayLike) -> np.ndarray:
    """log N(x; μ, σ²) − log t_ν(x; loc, s), with the z²/2 of both cancelled analytically."""
    xa = as_float_array(x, "x")
    nu = q.df
    d = (xa - p.mu) / p.sigma
    z = (xa - q.loc) / q.scale
    z2 = z * z
    with np.errstate(over="ignore", invalid="ignore"):
        body = 0.5 * z2 * (1.0 / nu + (1.0 + 1.0 / nu) * _l_minus_1(z2 / nu))
        out = -0.5 * (d - z) * (d + z) + body
    return out + (math.log(q.scale / p.sigma) - _half_step(nu))


def log_t_norm(nu: float) -> float:
    r"""The log normaliser of the standard t density, :math:`\log\Gamma(\tfrac{\nu+1}{2}) - \log\Gamma(\tfrac{\nu}{2}) - \tfrac12\log(\nu\pi)`.

    For :math:`\nu \ge 50` it is :math:`-\tfrac12\log 2\pi + \sum_j c_j a^{-(2j+1)}`,
    :math:`a = \nu/2`, the Stirling series of :math:`\log\Gamma(a+\tfrac12) - \log\Gamma(a) - \tfrac12\log a`
    (NIST DLMF 5.11.13 with Bernoulli polynomials), since the difference of the two
    log-gammas loses :math:`\sim 10^{-16}\log\Gamma(\nu/2)` to cancellation (at
    :math:`\nu = 10^{15}` more than the whole KL against a normal).

    Parameters
    ----------
    nu : float
        Degrees of freedom, > 0.

    Returns
    -------
    float

    Examples
    --------
    >>> round(log_t_norm(1.0), 12) == round(-math.log(math.pi), 12)
    True
    """
    nu = check_positive(nu, "nu")
    if nu < _SERIES_FROM:
        return math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)
    return _half_step(nu) - 0.5 * math.log(2.0 * math.pi)


FAMILY = Family.of_location_scale(
    StudentT, N_("Student t"), N_("`t(ν,loc,scale)` (Student t)"),
    before=(Param("df", N_("ν, degrees of freedom (log scale): small ν, heavy tails"), "positive", 3.0, "log",
                  DF_SLIDER),),
    location=N_("Location"), scale=N_("Scale (log scale)"),
    order=40, aliases=("studentt", "student_t"), min_args=1,
)

#: Fast log-ratios log p − log q, keyed by (type(p), type(q)): t against a normal
#: without the cancellation of two z²/2 (large ν, where the pair is close).
LOG_RATIOS = {
    (Gaussian, StudentT): _log_ratio_normal_t,
    (StudentT, Gaussian): lambda p, q, x: -_log_ratio_normal_t(q, p, x),
}
