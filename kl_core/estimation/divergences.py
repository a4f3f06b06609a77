r"""The f-divergence registry.

An f-divergence is :math:`D_f(p, q) = \mathbb{E}_{x\sim q}[f(p(x)/q(x))]` for a
convex :math:`f` with :math:`f(1) = 0`.  Near :math:`p = q` every smooth one is
:math:`\tfrac{f''(1)}{2}\,\theta^\top F \theta + O(\theta^3)` along a path
:math:`p_\theta` with Fisher information :math:`F`, which is why ``k2``
(:math:`f''(1) = 1`) tracks KL for small distances.

Each :class:`FDivergence` evaluates ``f`` through ``f_log(t) = f(e^t)`` so that
it can be fed the log-ratio directly without overflow.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; I. Csiszár, "Information-type measures
of difference of probability distributions" (1967).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core._docfill import docfill, lookup_sections
from kl_core.estimation.estimators import k3_pq
from kl_core.validation import N_, as_float_array, by_key, registry_entry

__all__ = ["DIVERGENCES", "FDivergence", "get_divergence"]

_LOG2 = math.log(2.0)


@dataclass(frozen=True)
class FDivergence:
    r"""One entry of the f-divergence registry.

    Attributes
    ----------
    key : str
        Registry key, e.g. ``"kl_pq"``.
    name : str
        Display name.
    f_latex : str
        :math:`f(u)` in LaTeX.
    divergence_latex : str
        What :math:`D_f(p,q) = \mathbb{E}_q[f(p/q)]` is, in LaTeX.
    f_log : callable
        :math:`t \mapsto f(e^t)`, vectorised, finite-safe at :math:`t = -\infty`.
    fprime : callable
        :math:`u \mapsto f'(u)`, vectorised.
    fprime_at_1 : float or None
        :math:`f'(1)`; None where f has a kink at 1 (total variation: no unique tangent,
        see :attr:`slopes_at_1`).
    f2_at_1 : float or None
        :math:`f''(1)`; None where it is undefined (total variation).
    source : str
        Where the divergence is defined.
    """

    key: str
    name: str
    f_latex: str
    divergence_latex: str
    f_log: Callable[[np.ndarray], np.ndarray]
    fprime: Callable[[np.ndarray], np.ndarray]
    fprime_at_1: float | None
    f2_at_1: float | None
    source: str

    @property
    def smooth(self) -> bool:
        """True if :math:`f''(1)` exists, so the Fisher quadratic applies."""
        return self.f2_at_1 is not None

    @property
    def slopes_at_1(self) -> tuple[float, float]:
        r"""The one-sided slopes :math:`(f'(1^-), f'(1^+))`, from :attr:`fprime` next to 1.

        .. math:: f'(1^\mp) = \lim_{u \to 1^\mp} f'(u)

        Equal (to :attr:`fprime_at_1`) where f is smooth; for total variation
        :math:`(-\tfrac12, \tfrac12)`.  Every line through :math:`(1, 0)` with a
        slope :math:`s` between them stays below the convex f, so
        :math:`f(r) - s(r - 1) \ge 0` is an unbiased estimate of :math:`D_f` for
        each such s (:math:`\mathbb{E}_q[r - 1] = 0`): at a kink the supporting
        line, and so the gap estimator, is not unique.
        """
        below, above = np.nextafter(1.0, 0.0), np.nextafter(1.0, 2.0)
        return float(self.fprime(np.array(below))), float(self.fprime(np.array(above)))

    def f(self, u: ArrayLike) -> np.ndarray:
        r"""Evaluate :math:`f(u)` for :math:`u \ge 0`.

        Parameters
        ----------
        u : array_like
            Likelihood ratios, ≥ 0.

        Returns
        -------
        numpy.ndarray
            :math:`f(u)`; at :math:`u = 0` the limit :math:`f(0^+)`.
        """
        arr = as_float_array(u, "u")
        if (arr < 0).any():
            raise ValueError("u must be >= 0")
        with np.errstate(divide="ignore"):
            return self.f_log(np.log(arr))


def _xlogx_of_log(t: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        out = t * np.exp(t)
    return np.where(t == -np.inf, 0.0, out)


def _js_of_log(t: np.ndarray) -> np.ndarray:
    # f(u) = ½[u log(u/m) + log(1/m)] with m = (1+u)/2.  As (u − m) + (1 − m) = 0 this is
    # ½·m·[g(log(u/m)) + g(−log m)] with g(a) = a·e^a − (e^a − 1) = k3_pq(a) ≥ 0: a sum of
    # two non-negative terms, free of the cancellation that the direct form suffers near u = 1.
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        low = t < 1.0
        log_m = np.where(low, np.log1p(0.5 * np.expm1(np.minimum(t, 1.0))), np.logaddexp(0.0, t) - _LOG2)
        log_u_over_m = np.where(low, t - log_m, _LOG2 - np.log1p(np.exp(-np.maximum(t, 1.0))))
        return 0.5 * np.exp(log_m) * (k3_pq(log_u_over_m) + k3_pq(-log_m))


def _as_t(t: ArrayLike) -> np.ndarray:
    return np.asarray(t, dtype=np.float64)


_CSISZAR = "I. Csiszár (1967); see also Schulman (2020), http://joschu.net/blog/kl-approx.html"

DIVERGENCES: dict[str, FDivergence] = by_key(
    FDivergence(
        key="kl_pq",
        name="KL[p‖q]",
        f_latex=r"u \log u",
        divergence_latex=r"\mathrm{KL}[p\|q]",
        f_log=lambda t: _xlogx_of_log(_as_t(t)),
        fprime=lambda u: np.log(u) + 1.0,
        fprime_at_1=1.0,
        f2_at_1=1.0,
        source=_CSISZAR,
    ),
    FDivergence(
        key="kl_qp",
        name="KL[q‖p]",
        f_latex=r"-\log u",
        divergence_latex=r"\mathrm{KL}[q\|p]",
        f_log=lambda t: -_as_t(t),
        fprime=lambda u: -1.0 / np.asarray(u, dtype=np.float64),
        fprime_at_1=-1.0,
        f2_at_1=1.0,
        source=_CSISZAR,
    ),
    FDivergence(
        key="k2",
        name=N_("½ log² (the f of k2)"),
        f_latex=r"\tfrac12 \log^2 u",
        divergence_latex=r"\mathbb{E}_q[\tfrac12 \log^2 r]",
        f_log=lambda t: 0.5 * _as_t(t) ** 2,
        fprime=lambda u: np.log(u) / np.asarray(u, dtype=np.float64),
        fprime_at_1=0.0,
        f2_at_1=1.0,
        source="J. Schulman, Approximating KL Divergence (2020), http://joschu.net/blog/kl-approx.html",
    ),
    FDivergence(
        key="pearson",
        name=N_("Pearson χ²"),
        f_latex=r"(u - 1)^2",
        divergence_latex=r"\chi^2(p\,\|\,q)",
        f_log=lambda t: np.expm1(_as_t(t)) ** 2,
        fprime=lambda u: 2.0 * (np.asarray(u, dtype=np.float64) - 1.0),
        fprime_at_1=0.0,
        f2_at_1=2.0,
        source=_CSISZAR,
    ),
    FDivergence(
        key="hellinger",
        name=N_("squared Hellinger"),
        f_latex=r"(\sqrt{u} - 1)^2",
        divergence_latex=r"H^2(p,q) = \int (\sqrt{p} - \sqrt{q})^2",
        f_log=lambda t: np.expm1(0.5 * _as_t(t)) ** 2,
        fprime=lambda u: 1.0 - 1.0 / np.sqrt(np.asarray(u, dtype=np.float64)),
        fprime_at_1=0.0,
        f2_at_1=0.5,
        source=_CSISZAR,
    ),
    FDivergence(
        key="js",
        name=N_("Jensen–Shannon"),
        f_latex=r"\tfrac12\left[u\log u - (1+u)\log\tfrac{1+u}{2}\right]",
        divergence_latex=r"\mathrm{JS}(p,q)",
        f_log=lambda t: _js_of_log(_as_t(t)),
        fprime=lambda u: 0.5 * np.log(2.0 * np.asarray(u, dtype=np.float64) / (1.0 + np.asarray(u))),
        fprime_at_1=0.0,
        f2_at_1=0.25,
        source="J. Lin, Divergence measures based on the Shannon entropy (1991); " + _CSISZAR,
    ),
    FDivergence(
        key="tv",
        name=N_("total variation"),
        f_latex=r"\tfrac12 |u - 1|",
        divergence_latex=r"\mathrm{TV}(p,q)",
        f_log=lambda t: 0.5 * np.abs(np.expm1(_as_t(t))),
        fprime=lambda u: 0.5 * np.sign(np.asarray(u, dtype=np.float64) - 1.0),
        fprime_at_1=None,
        f2_at_1=None,
        source=_CSISZAR,
    ),
)


@docfill(lookup=lookup_sections("name", "DIVERGENCES", "FDivergence"))
def get_divergence(name: str) -> FDivergence:
    """Return the registry entry ``name``.

    %(lookup)s

    Examples
    --------
    >>> get_divergence("pearson").f2_at_1
    2.0
    """
    return registry_entry(DIVERGENCES, name, "name")
