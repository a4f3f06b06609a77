r"""The tangent-gap (Bregman) picture of the KL estimators, as numbers to draw.

Schulman's :math:`k_3` is the vertical gap between the concave curve
:math:`\log r` and its tangent line :math:`r - 1` at :math:`r = 1`:

.. math:: k_3 = (r - 1) - \log r \;\ge\; 0, \qquad r = p(x)/q(x).

The same construction works for every f-divergence whose convex :math:`f` is
differentiable at 1: the gap between :math:`f` and its tangent there,

.. math:: \hat D_f(u) = f(u) - \bigl(f(1) + f'(1)(u - 1)\bigr) \;\ge\; 0,

is an unbiased, non-negative per-sample estimator of
:math:`D_f(p, q) = \mathbb{E}_q[f(r)]` (:func:`kl_core.estimation.estimators.bregman`).
With :math:`f(u) = u\log u` it is :math:`k_3^{pq} = r\log r - (r - 1)`, the
estimator of :math:`\mathrm{KL}[p\|q]`.

This module turns that picture into arrays (curve, tangent and gap at given
ratios, and the log-ratios of seeded draws), and says where the other members
of the control-variate family :math:`k_\lambda = -\log r + \lambda(r - 1)`
dip below zero.  Every formula is taken from :mod:`kl_core.estimation.estimators` and
:mod:`kl_core.estimation.divergences`; nothing is re-derived here.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core._docfill import docfill
from kl_core.estimation import estimators as est
from kl_core.estimation._docstrings import SECTIONS
from kl_core.estimation.distributions import Distribution, log_ratio
from kl_core.estimation.divergences import get_divergence
from kl_core.validation import as_float_array, check_finite, check_positive_int

__all__ = [
    "TangentPicture", "draw_log_ratios", "k_lambda_negative_interval", "tangent_latex",
    "tangent_picture",
]


def _seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    return int(seed)


@docfill(**SECTIONS)
def draw_log_ratios(q: Distribution, p: Distribution, n: int, seed: int = 0) -> np.ndarray:
    r"""Log-ratios :math:`\log r_i = \log p(x_i) - \log q(x_i)` of ``n`` seeded draws :math:`x_i \sim q`.

    Parameters
    ----------
    q, p : Distribution
        Sampler and target, both continuous or both categorical.
    n : int
        Number of draws, ≥ 1.
    seed : int, default 0
        Seed of ``np.random.default_rng``, ≥ 0.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``.  These are the first ``n`` draws of
        :func:`kl_core.estimation.montecarlo.simulate` with the same seed (for ``n`` up
        to its chunk size), so a page that shows both shows the same samples.

    %(schulman_references)s

    Examples
    --------
    >>> from kl_core.estimation.distributions import Gaussian
    >>> draw_log_ratios(Gaussian(0, 1), Gaussian(0, 1), 3).tolist()
    [0.0, 0.0, 0.0]
    """
    if not isinstance(q, Distribution) or not isinstance(p, Distribution):
        raise ValueError("q and p must be kl_core Distributions")
    if q.discrete != p.discrete:
        raise ValueError("p must be of the same kind as q: both continuous or both categorical")
    n = check_positive_int(n, "n")
    rng = np.random.default_rng(_seed(seed))
    return np.asarray(log_ratio(p, q, q.sample(rng, n)), dtype=np.float64)


def _times_u_minus_1(c: float) -> str:
    """LaTeX for c·(u − 1): ``u - 1``, ``-(u - 1)``, ``2\\,(u - 1)`` or empty for c = 0."""
    if c == 0.0:
        return ""
    if c == 1.0:
        return "u - 1"
    if c == -1.0:
        return "-(u - 1)"
    return f"{c:g}\\,(u - 1)"


def tangent_latex(name: str) -> str | None:
    r"""The tangent line :math:`f(1) + f'(1)(u - 1)` of registry entry ``name``, in LaTeX.

    Parameters
    ----------
    name : str
        A key of :data:`kl_core.estimation.divergences.DIVERGENCES`.

    Returns
    -------
    str or None
        E.g. ``"u - 1"`` for :math:`f(u) = u\log u`, ``"0"`` where
        :math:`f'(1) = 0`; None where f has no unique tangent at 1 (total variation: a kink).

    Examples
    --------
    >>> tangent_latex("kl_pq"), tangent_latex("pearson"), tangent_latex("tv")
    ('u - 1', '0', None)
    """
    div = get_divergence(name)
    if div.fprime_at_1 is None:
        return None
    f1 = float(div.f_log(np.array(0.0)))
    slope = _times_u_minus_1(div.fprime_at_1)
    if f1 == 0.0:
        return slope or "0"
    if not slope:
        return f"{f1:g}"
    return f"{f1:g} {slope}" if slope.startswith("-") else f"{f1:g} + {slope}"


@dataclass(frozen=True, eq=False)
class TangentPicture:
    r"""A curve, its tangent line at :math:`u = 1`, and the vertical gap, at given ratios.

    For ``name="kl_qp"`` the picture is Schulman's: the concave curve
    :math:`\log u` *under* its tangent :math:`u - 1`, gap :math:`k_3`.  (The
    registry's :math:`f(u) = -\log u` is this picture upside down; the gap is
    the same.)  For every other entry it is the convex :math:`f(u)` *over*
    :math:`f(1) + f'(1)(u - 1)`, gap :func:`kl_core.estimation.estimators.bregman`.

    Attributes
    ----------
    name : str
        Registry key of :data:`kl_core.estimation.divergences.DIVERGENCES`.
    title : str
        What the gap estimates, e.g. ``"KL[q‖p]"``.
    curve_latex, tangent_latex, gap_latex : str or None
        The curve, the tangent and the gap in LaTeX, in the variable :math:`u`;
        ``tangent_latex`` and ``gap_latex`` are None without a tangent.
    estimator : str or None
        The key of :data:`kl_core.estimation.estimators.ESTIMATORS` the gap equals
        (``"k3"``, ``"k3_pq"``, ``"k2"``), else None.
    logu, u : numpy.ndarray
        The ratios, as :math:`\log u` and :math:`u = e^{\log u}`.
    curve : numpy.ndarray
        The curve at ``u``.
    tangent, gap : numpy.ndarray or None
        The tangent line and the gap (≥ 0) at ``u``; None where f has a kink
        at 1 (total variation): there every slope between the one-sided ones
        gives a supporting line, and none is the tangent.
    note : str
        Empty, or why there is no unique tangent.
    """

    name: str
    title: str
    curve_latex: str
    tangent_latex: str | None
    gap_latex: str | None
    estimator: str | None
    logu: np.ndarray
    u: np.ndarray
    curve: np.ndarray
    tangent: np.ndarray | None
    gap: np.ndarray | None
    note: str = ""

    @property
    def smooth(self) -> bool:
        """True if the curve has a unique tangent at 1 (so the gap is defined)."""
        return self.gap is not None

    @property
    def mean_gap(self) -> float:
        r"""The average gap: the Monte Carlo estimate of :math:`D_f(p,q)` when ``u`` are draws of r.

        .. math:: \frac1n \sum_{i=1}^n \hat D_f(r_i)

        nan without a tangent or without points.
        """
        if self.gap is None or self.gap.size == 0:
            return math.nan
        with np.errstate(over="ignore", invalid="ignore"):
            return float(np.mean(self.gap))


_GAP_ESTIMATOR = {"kl_qp": "k3", "kl_pq": "k3_pq", "k2": "k2"}


def tangent_picture(
    name: str, *, logu: ArrayLike | None = None, u: ArrayLike | None = None
) -> TangentPicture:
    r"""The curve of ``name``, its tangent at :math:`u = 1` and the gap between them.

    .. math:: \text{tangent}(u) = f(1) + f'(1)(u - 1), \qquad
              \text{gap}(u) = f(u) - \text{tangent}(u) = \hat D_f(u) \ge 0

    For ``"kl_qp"`` the curve is :math:`\log u`, the tangent :math:`u - 1`
    and the gap :math:`(u - 1) - \log u = k_3`.

    Parameters
    ----------
    name : str
        A key of :data:`kl_core.estimation.divergences.DIVERGENCES`.
    logu, u : array_like
        The ratios, given either as :math:`\log u` (e.g. sampled log-ratios)
        or as :math:`u \ge 0`; exactly one of the two.

    Returns
    -------
    TangentPicture
        The arrays and their LaTeX.  The gap is computed by
        :func:`kl_core.estimation.estimators.bregman` (``k3``/``k3_pq`` for the two KLs),
        accurate near :math:`u = 1` where ``curve - tangent`` would cancel.
        For total variation (a kink at 1) ``tangent`` and ``gap`` are None.

    Raises
    ------
    ValueError
        For an unknown ``name``, or unless exactly one of ``logu``, ``u`` is given.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html;
    L. M. Bregman, "The relaxation method of finding the common point of convex sets" (1967).

    Examples
    --------
    >>> pic = tangent_picture("kl_qp", u=[2.0])
    >>> float(pic.tangent[0]), round(float(pic.curve[0]), 6), round(float(pic.gap[0]), 6)
    (1.0, 0.693147, 0.306853)
    """
    div = get_divergence(name)
    if (logu is None) == (u is None):
        raise ValueError("give exactly one of logu and u")
    if logu is not None:
        t = np.atleast_1d(as_float_array(logu, "logu"))
    else:
        ua = np.atleast_1d(as_float_array(u, "u"))
        if (ua < 0).any():
            raise ValueError("u must be >= 0")
        with np.errstate(divide="ignore"):
            t = np.log(ua)
    with np.errstate(over="ignore"):
        uu = np.exp(t)
    estimator = _GAP_ESTIMATOR.get(div.key)
    if div.key == "kl_qp":
        return TangentPicture(
            name=div.key,
            title=div.name,
            curve_latex=r"\log u",
            tangent_latex="u - 1",
            gap_latex=r"k_3 = (u - 1) - \log u",
            estimator=estimator,
            logu=t,
            u=uu,
            curve=t.copy(),
            tangent=np.expm1(t),
            gap=est.k3(t),
        )
    with np.errstate(over="ignore", invalid="ignore"):
        curve = np.asarray(div.f_log(t), dtype=np.float64)
    if div.fprime_at_1 is None:
        lo, hi = div.slopes_at_1
        return TangentPicture(
            name=div.key,
            title=div.name,
            curve_latex=div.f_latex,
            tangent_latex=None,
            gap_latex=None,
            estimator=None,
            logu=t,
            u=uu,
            curve=curve,
            tangent=None,
            gap=None,
            note=(
                f"The f of {div.name} has a kink at u = 1: its slope jumps from {lo:g} to {hi:g}, so "
                "f′(1) does not exist and no tangent is unique. Every line through (1, 0) with a "
                "slope s between them stays below f, so f(r) − s(r − 1) is a gap estimator for each "
                "such s: none is 'the' one."
            ),
        )
    f1 = float(div.f_log(np.array(0.0)))
    with np.errstate(over="ignore", invalid="ignore"):
        tangent = f1 + div.fprime_at_1 * np.expm1(t) if div.fprime_at_1 != 0.0 else np.full_like(t, f1)
    gap_name = est.ESTIMATORS[estimator].latex.split("=")[0].strip() if estimator else r"\hat D_f"
    tangent_tex = tangent_latex(div.key)
    gap_tex = div.f_latex if tangent_tex == "0" else rf"{div.f_latex} - ({tangent_tex})"
    return TangentPicture(
        name=div.key,
        title=div.name,
        curve_latex=div.f_latex,
        tangent_latex=tangent_tex,
        gap_latex=f"{gap_name} = {gap_tex}",
        estimator=estimator,
        logu=t,
        u=uu,
        curve=curve,
        tangent=np.asarray(tangent, dtype=np.float64),
        gap=np.asarray(est.bregman(div.key, t), dtype=np.float64),
    )


def _log_expm1_over(t: float) -> float:
    """log(expm1(t) / t), increasing in t, 0 at t = 0; no overflow for large |t|."""
    if t == 0.0:
        return 0.0
    if abs(t) <= 1.0:
        return math.log(math.expm1(t) / t)
    if t > 0.0:
        return t + math.log(-math.expm1(-t)) - math.log(t)
    return math.log(-math.expm1(t)) - math.log(-t)


def k_lambda_negative_interval(lam: float) -> tuple[float, float] | None:
    r"""The open interval of :math:`\log r` on which :math:`k_\lambda = -\log r + \lambda(r - 1) < 0`.

    Write :math:`k_\lambda = k_3 + (\lambda - 1)(r - 1)`.  :math:`k_3 \ge 0`
    touches 0 at :math:`r = 1` with zero slope, while :math:`(\lambda-1)(r-1)`
    changes sign there, so for :math:`\lambda \ne 1` the sum dips below 0 on
    one side of :math:`r = 1`: between 0 and the other root :math:`t^*` of
    :math:`\lambda(e^t - 1) = t`, which in closed form is

    .. math:: t^* = -\lambda - W_k\!\left(-\lambda e^{-\lambda}\right),
              \qquad k = -1 \text{ if } 0 < \lambda < 1, \quad k = 0 \text{ if } \lambda > 1,

    with :math:`W_k` the branches of the Lambert W function (the other branch
    gives the root :math:`t = 0`).  For :math:`\lambda \le 0` both terms are
    negative for every :math:`\log r > 0`.

    Parameters
    ----------
    lam : float
        The coefficient :math:`\lambda`, finite.

    Returns
    -------
    (float, float) or None
        ``(0, t*)`` for :math:`0 < \lambda < 1`, ``(t*, 0)`` for :math:`\lambda > 1`,
        ``(0, inf)`` for :math:`\lambda \le 0`, and None for :math:`\lambda = 1`
        (:math:`k_3` is never negative).  A sample of :math:`k_\lambda` is
        negative exactly when its :math:`\log r` lies inside.

    Notes
    -----
    Near :math:`\lambda = 1` the two Lambert branches meet and the closed form
    loses digits, so :math:`t^*` is found instead as the root of the
    increasing, well-conditioned :math:`\log\bigl((e^t - 1)/t\bigr) = -\log\lambda`
    (Brent's method, to a few ulps); the tests check it against the closed form.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html;
    R. M. Corless et al., "On the Lambert W function", Adv. Comput. Math. 5 (1996).

    Examples
    --------
    >>> lo, hi = k_lambda_negative_interval(0.5)
    >>> lo, round(hi, 6)
    (0.0, 1.256431)
    >>> k_lambda_negative_interval(1.0) is None
    True
    """
    lam = check_finite(lam, "lam")
    if lam == 1.0:
        return None
    if lam <= 0.0:
        return (0.0, math.inf)
    target = -math.log(lam)

    def excess(t: float) -> float:
        return _log_expm1_over(t) - target

    if lam > 1.0:  # (e^t - 1)/t < 1/λ at t = -λ, = 1 > 1/λ at t = 0
        lo, hi = -lam, 0.0
    else:
        lo, hi = 0.0, 1.0
        while excess(hi) < 0.0:
            lo, hi = hi, 2.0 * hi
    from scipy import optimize  # here, not at the top: importing scipy costs 0.1-0.3 s

    t = optimize.brentq(excess, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return (0.0, float(t)) if lam < 1.0 else (float(t), 0.0)
