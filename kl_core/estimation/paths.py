r"""One-parameter paths :math:`\theta \mapsto p_\theta` away from a base distribution.

Each path starts at :math:`p_0` (which plays the sampler ``q``) and knows its
Fisher information at :math:`\theta = 0`,

.. math:: F = \mathbb{E}_{p_0}\!\left[\left(\partial_\theta \log p_\theta(x)\big|_{\theta=0}\right)^2\right],

so that every smooth f-divergence can be compared with its quadratic
approximation :math:`\tfrac12 f''(1) F \theta^2`.

========  ===============================================  =====================
key       path                                             Fisher information
========  ===============================================  =====================
shift     :math:`\mathcal N(\theta, 1)`                    :math:`1`
scale     :math:`\mathcal N(0, e^{2\theta})`               :math:`2`
logit     :math:`\mathrm{softmax}(\ell_0 + \theta v)`      :math:`\mathrm{Var}_{p_0}(v)`
========  ===============================================  =====================

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html (the Fisher view of k2).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kl_core._docfill import docfill, lookup_sections
from kl_core.estimation.distributions import Categorical, Distribution, Gaussian
from kl_core.validation import N_, by_key, check_finite, registry_entry

__all__ = ["PATHS", "DistributionPath", "get_path"]

# A five-token next-token distribution and a direction that moves mass from
# the likely tokens to the unlikely ones, as a fine-tuning step might.
_LOGITS0 = (2.0, 1.0, 0.5, 0.0, -1.0)
_DIRECTION = (-1.0, -0.5, 0.0, 0.5, 1.0)


def _logit_fisher() -> float:
    p0 = Categorical(_LOGITS0).probs
    v = np.asarray(_DIRECTION)
    return float(p0 @ v**2 - (p0 @ v) ** 2)


@dataclass(frozen=True)
class DistributionPath:
    r"""A one-parameter family :math:`p_\theta` with its Fisher information at 0.

    Attributes
    ----------
    key : str
        Registry key.
    name : str
        Display name.
    theta_latex : str
        What :math:`\theta` is, in LaTeX.
    family_latex : str
        :math:`p_\theta` in LaTeX.
    fisher : float
        Fisher information :math:`F` of :math:`\theta` at :math:`\theta = 0`.
    theta_max : float
        A sensible largest :math:`|\theta|` to plot.
    make : callable
        :math:`\theta \mapsto p_\theta`.
    """

    key: str
    name: str
    theta_latex: str
    family_latex: str
    fisher: float
    theta_max: float
    make: Callable[[float], Distribution]

    @property
    def base(self) -> Distribution:
        """:math:`p_0`, the sampler ``q`` along the path."""
        return self.make(0.0)

    def at(self, theta: float) -> Distribution:
        r"""Return :math:`p_\theta`.

        Parameters
        ----------
        theta : float
            Position along the path.

        Returns
        -------
        Distribution
            :math:`p_\theta`.
        """
        return self.make(check_finite(theta, "theta"))


PATHS: dict[str, DistributionPath] = by_key(
    DistributionPath(
        key="shift",
        name=N_("Gaussian mean shift"),
        theta_latex=r"\theta = \mu",
        family_latex=r"p_\theta = \mathcal N(\theta, 1)",
        fisher=1.0,
        theta_max=3.0,
        make=lambda th: Gaussian(th, 1.0),
    ),
    DistributionPath(
        key="scale",
        name=N_("Gaussian scale change"),
        theta_latex=r"\theta = \log\sigma",
        family_latex=r"p_\theta = \mathcal N(0, e^{2\theta})",
        fisher=2.0,
        theta_max=0.6,
        make=lambda th: Gaussian(0.0, math.exp(th)),
    ),
    DistributionPath(
        key="logit",
        name=N_("Categorical logit direction"),
        theta_latex=r"\theta \text{ along } v = (" + ", ".join(f"{v:g}" for v in _DIRECTION) + ")",
        family_latex=r"p_\theta = \mathrm{softmax}(\ell_0 + \theta v),\ \ell_0 = ("
        + ", ".join(f"{v:g}" for v in _LOGITS0)
        + ")",
        fisher=_logit_fisher(),
        theta_max=3.0,
        make=lambda th: Categorical(tuple(a + th * b for a, b in zip(_LOGITS0, _DIRECTION, strict=True))),
    ),
)


@docfill(lookup=lookup_sections("key", "PATHS", "DistributionPath"))
def get_path(key: str) -> DistributionPath:
    """Return the path ``key``.

    %(lookup)s

    Examples
    --------
    >>> get_path("shift").fisher
    1.0
    """
    return registry_entry(PATHS, key, "key")
