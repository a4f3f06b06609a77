r"""The Student t family ``t(df,loc,scale)``: :class:`StudentT`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families._base import PRACTICAL, Family, LocationScale, Param, Tail, num
from kl_core.validation import N_, Message, as_float_array, check_positive

__all__ = ["FAMILY", "StudentT"]

DF_SLIDER = (0.5, 100.0)  # log-scale steps


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
        from scipy import special

        nu = self.df
        z = (as_float_array(x, "x") - self.loc) / self.scale
        const = (
            special.gammaln((nu + 1) / 2)
            - special.gammaln(nu / 2)
            - 0.5 * math.log(nu * math.pi)
            - math.log(self.scale)
        )
        return const - (nu + 1) / 2 * np.log1p(z * z / nu)

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
            math.lgamma(half) - math.lgamma(nu / 2.0) - 0.5 * math.log(nu * math.pi)
            - math.log(self.scale) + half * (2.0 * math.log(self.scale) + math.log(nu))
        )  # fmt: skip
        return Tail.algebraic(-(Fraction(nu) + 1), float(const))

    def log_density_delta(self, x: np.ndarray) -> np.ndarray:
        z, z0 = (x - self.loc) / self.scale, -self.loc / self.scale
        return -(self.df + 1.0) / 2.0 * np.log1p((x / self.scale) * (z + z0) / (self.df + z0 * z0))

    def practical_issue(self) -> str:
        if self.df < PRACTICAL["df"]:
            return Message("df = {df:g} is below {least:g}", df=self.df, least=PRACTICAL["df"])
        return super().practical_issue()


FAMILY = Family.of_location_scale(
    StudentT, N_("Student t"), N_("`t(ν,loc,scale)` (Student t)"),
    before=(Param("df", N_("ν, degrees of freedom (log scale): small ν, heavy tails"), "positive", 3.0, "log",
                  DF_SLIDER),),
    location=N_("Location"), scale=N_("Scale (log scale)"),
    order=40, aliases=("studentt", "student_t"), min_args=1,
)
