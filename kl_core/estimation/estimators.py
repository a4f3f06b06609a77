r"""Per-sample Monte Carlo estimators of KL divergence.

Every function takes ``logr`` = :math:`\log p(x) - \log q(x)` for samples
:math:`x \sim q` and returns one value per sample, as a float64 array.  With
:math:`r = e^{\log r}`:

=========  ==========================================  ==================
key        per-sample value                            mean under ``q``
=========  ==========================================  ==================
k1         :math:`-\log r`                             KL[q‖p]
k2         :math:`\tfrac12 (\log r)^2`                 :math:`D_f`, f = ½log²u
k3         :math:`(r - 1) - \log r`                    KL[q‖p]
k_lambda   :math:`-\log r + \lambda (r - 1)`           KL[q‖p]
k3_pq      :math:`r \log r - (r - 1)`                  KL[p‖q]
abs        :math:`|\log r|`                            not a divergence
=========  ==========================================  ==================

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.

Numerics: ``k3`` and ``k3_pq`` cancel catastrophically near ``logr = 0``; both
switch to their Taylor series for ``|logr| < 0.01`` so that the relative error
stays below 1e-12 for every float ``logr`` in [-700, 700].  Overflow gives
``inf``, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core._docfill import docfill
from kl_core.estimation._docstrings import SECTIONS
from kl_core.validation import N_, as_float_array, by_key, check_finite

__all__ = [
    "BLOG",
    "COMPARED_KEYS",
    "ESTIMATORS",
    "EstimatorInfo",
    "Parameter",
    "bregman",
    "evaluate",
    "k1",
    "k2",
    "k3",
    "k3_pq",
    "k_abs",
    "k_lambda",
]

BLOG = "J. Schulman, Approximating KL Divergence (2020), http://joschu.net/blog/kl-approx.html"

# Below this |logr| the closed forms of k3 and k3_pq lose more than ~1e-13 to
# cancellation (about 2·eps/|logr|), so the series takes over.  Terms up to
# logr**9 keep the truncation error below 1e-20 (relative) at the threshold.
# A small cutoff keeps the series off most samples: it is the slow path.
_SERIES_CUTOFF = 0.01
_N_TERMS = 8
# k3 = sum_{n>=2} t^n / n!       -> t^2 * sum_m t^m / (m+2)!
_K3_COEFS = tuple(1.0 / math.factorial(m + 2) for m in range(_N_TERMS))
# k3_pq = sum_{n>=2} (n-1) t^n / n! -> t^2 * sum_m (m+1) t^m / (m+2)!
_K3PQ_COEFS = tuple((m + 1) / math.factorial(m + 2) for m in range(_N_TERMS))


def _logr(logr: ArrayLike) -> np.ndarray:
    return as_float_array(logr, "logr")


def _t2_series(t: np.ndarray, coefs: tuple[float, ...]) -> np.ndarray:
    """Evaluate t**2 * sum_m coefs[m] * t**m by Horner's rule."""
    acc = np.full_like(t, coefs[-1])
    for c in reversed(coefs[:-1]):
        acc = acc * t + c
    return t * t * acc


# Only beyond this |logr| can r = e^logr or r·log r overflow (e^709.8 is the
# largest double), so the fix-ups for inf and NaN are skipped below it.
_OVERFLOW_LOGR = 700.0


def _series_where_small(out: np.ndarray, t: np.ndarray, coefs: tuple[float, ...]) -> float:
    """Put the series t²·Σ coefs[m] tᵐ into ``out`` where |t| < the cutoff; return max |t|."""
    a = np.abs(t)
    # integer indices, not a boolean mask: several times faster when few are small
    small = np.flatnonzero(a < _SERIES_CUTOFF)
    if small.size:
        np.put(out, small, _t2_series(np.take(t, small), coefs))
    return float(a.max()) if a.size else 0.0


@docfill(**SECTIONS)
def k1(logr: ArrayLike) -> np.ndarray:
    r"""The naive estimator :math:`k_1 = -\log r`.

    %(logr_params)s

    Returns
    -------
    numpy.ndarray
        Per-sample values.  Unbiased for :math:`\mathrm{KL}[q\|p]`, but a single
        sample is negative whenever :math:`p(x) > q(x)`.

    %(schulman_references)s

    Examples
    --------
    >>> k1([0.5, -0.5]).tolist()
    [-0.5, 0.5]
    """
    return -_logr(logr)


@docfill(**SECTIONS)
def k2(logr: ArrayLike) -> np.ndarray:
    r"""The squared-log estimator :math:`k_2 = \tfrac12 (\log r)^2`.

    Its mean under ``q`` is the f-divergence with :math:`f(u) = \tfrac12\log^2 u`,
    which agrees with :math:`\mathrm{KL}[q\|p]` to second order because both have
    :math:`f''(1) = 1`.  Biased, never negative, low variance when ``p`` ≈ ``q``.

    %(logr_params)s

    Returns
    -------
    numpy.ndarray
        Per-sample values, all ≥ 0.

    %(schulman_references)s

    Examples
    --------
    >>> k2([0.5, -0.5]).tolist()
    [0.125, 0.125]
    """
    t = _logr(logr)
    return 0.5 * t * t


@docfill(**SECTIONS)
def k3(logr: ArrayLike) -> np.ndarray:
    r"""Schulman's unbiased, non-negative estimator :math:`k_3 = (r-1) - \log r`.

    It is :math:`k_1` plus the control variate :math:`r - 1`, whose mean under
    ``q`` is zero; equivalently the Bregman gap between :math:`\log r` and its
    tangent :math:`r - 1` at :math:`r = 1`, so every sample is ≥ 0.

    %(logr_params)s

    Returns
    -------
    numpy.ndarray
        Per-sample values, all ≥ 0; ``inf`` where :math:`r` overflows.

    Notes
    -----
    Computed as ``expm1(logr) - logr``, or by its series
    :math:`\sum_{n\ge2} (\log r)^n / n!` when :math:`|\log r| < 0.01`.

    %(schulman_references)s

    Examples
    --------
    >>> float(k3([1e-9])[0])  # 1e-18 / 2, with no cancellation
    5.000000001666667e-19
    """
    t = _logr(logr)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(np.expm1(t) - t)  # 0-d array, not a scalar, for scalar logr
    largest = _series_where_small(out, t, _K3_COEFS)
    if largest == np.inf:
        out[np.isinf(t)] = np.inf  # r = 0 or r = inf: the gap is infinite
    return out


@docfill(**SECTIONS)
def k_lambda(logr: ArrayLike, lam: float) -> np.ndarray:
    r"""The control-variate family :math:`k_\lambda = -\log r + \lambda (r-1)`.

    Unbiased for :math:`\mathrm{KL}[q\|p]` for every real :math:`\lambda`, because
    :math:`\mathbb{E}_q[r-1] = 0`.  :math:`\lambda = 0` is :math:`k_1`,
    :math:`\lambda = 1` is :math:`k_3`, and only :math:`\lambda = 1` makes every
    sample ≥ 0 (it is the tangent of :math:`\log r` at 1).

    %(logr_params)s
    lam : float
        The control-variate coefficient :math:`\lambda`.

    %(per_sample_returns)s

    Examples
    --------
    >>> k_lambda([0.0, 1.0], lam=0.0).tolist()
    [-0.0, -1.0]
    """
    lam = check_finite(lam, "lam")
    if lam == 1.0:
        return k3(logr)
    t = _logr(logr)
    if lam == 0.0:
        return -t
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(lam * np.expm1(t) - t)
    # r = inf: the lambda*(r-1) term wins; r = 0: -log r = +inf wins.
    out[t == np.inf] = np.copysign(np.inf, lam)
    out[t == -np.inf] = np.inf
    return out


@docfill(**SECTIONS)
def k3_pq(logr: ArrayLike) -> np.ndarray:
    r"""The Bregman estimator of the other direction, :math:`r\log r - (r-1)`.

    Unbiased for :math:`\mathrm{KL}[p\|q] = \mathbb{E}_q[r \log r]` from samples of
    ``q``; every sample is ≥ 0 because :math:`u \log u` is convex with tangent
    :math:`u - 1` at :math:`u = 1`.

    %(logr_params)s

    Returns
    -------
    numpy.ndarray
        Per-sample values, all ≥ 0; ``inf`` where :math:`r\log r` overflows.

    Notes
    -----
    Computed as ``logr * exp(logr) - expm1(logr)``, or by its series
    :math:`\sum_{n\ge2} (n-1)(\log r)^n / n!` when :math:`|\log r| < 0.01`.

    %(schulman_references)s

    Examples
    --------
    >>> float(k3_pq([0.0])[0])
    0.0
    """
    t = _logr(logr)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(t * np.exp(t) - np.expm1(t))
    largest = _series_where_small(out, t, _K3PQ_COEFS)
    if largest > _OVERFLOW_LOGR:
        out[np.isnan(out) & (t > 0)] = np.inf  # inf - inf once exp(logr) overflows
        out[t == -np.inf] = 1.0  # r log r -> 0 and -(r - 1) -> 1 as r -> 0
    return out


@docfill(**SECTIONS)
def k_abs(logr: ArrayLike) -> np.ndarray:
    r"""The absolute log-ratio :math:`|\log r|`, offered as ``abs`` by TRL and verl.

    Its mean is not a divergence in the f-divergence family (:math:`|\log u|`
    is not convex), nor an unbiased estimate of either KL direction; it is
    listed so that the library crosswalk can name what it computes.

    %(logr_params)s

    Returns
    -------
    numpy.ndarray
        Per-sample values, all ≥ 0.

    References
    ----------
    TRL ``kl_penalty="abs"``; verl ``kl_penalty="abs"`` (``core_algos.kl_penalty``).

    Examples
    --------
    >>> k_abs([-2.0, 3.0]).tolist()
    [2.0, 3.0]
    """
    return np.abs(_logr(logr))


@docfill(**SECTIONS)
def bregman(name: str, logr: ArrayLike) -> np.ndarray:
    r"""The Bregman (tangent-gap) estimator of any smooth f-divergence.

    .. math:: \hat D_f = f(r) - f'(1)\,(r - 1), \qquad \mathbb{E}_q[\hat D_f] = D_f(p, q)

    It is unbiased because :math:`\mathbb{E}_q[r-1] = 0`, and non-negative when
    ``f`` is convex, since it is the gap between ``f`` and its tangent at 1.
    With ``name="kl_qp"`` it is :math:`k_3`; with ``name="kl_pq"`` it is
    :math:`k_3^{pq}`.

    Parameters
    ----------
    name : str
        A key of :data:`kl_core.estimation.divergences.DIVERGENCES` whose ``f`` is
        differentiable at 1 (not ``"tv"``).
    %(logr)s

    %(per_sample_returns)s

    Examples
    --------
    >>> bregman("pearson", [0.0]).tolist()
    [0.0]
    """
    from kl_core.estimation.divergences import get_divergence

    div = get_divergence(name)
    if div.key == "kl_qp":
        return k3(logr)
    if div.key == "kl_pq":
        return k3_pq(logr)
    if div.fprime_at_1 is None:
        raise ValueError(
            f"name={name!r}: f is not differentiable at u = 1, so the tangent gap is undefined"
        )
    t = _logr(logr)
    with np.errstate(over="ignore", invalid="ignore"):
        tangent = div.fprime_at_1 * np.expm1(t) if div.fprime_at_1 != 0.0 else 0.0
        return div.f_log(t) - tangent


@dataclass(frozen=True)
class Parameter:
    r"""A real parameter an estimator takes besides ``logr``, such as :math:`\lambda` of :math:`k_\lambda`.

    Attributes
    ----------
    name : str
        Its keyword, e.g. ``"lam"`` (the ``lam`` of :func:`evaluate`, the CLI's ``--lam``).
    symbol : str
        How it is written in labels, e.g. ``"λ"``.
    same_as : tuple of (float, str)
        Values at which the estimator IS another one, value for value (:math:`k_\lambda` at
        :math:`\lambda = 0` is ``k1``, at 1 ``k3``): the Monte Carlo engine reuses that one's array.
    """

    name: str
    symbol: str
    same_as: tuple[tuple[float, str], ...] = ()


@dataclass(frozen=True)
class EstimatorInfo:
    r"""What one estimator is, in one place: formula, target, guarantees, source.

    Attributes
    ----------
    key : str
        Registry key, e.g. ``"k3"``.
    name : str
        Display name, e.g. ``"k3"``.
    latex : str
        The per-sample formula in LaTeX, in terms of :math:`r = p(x)/q(x)`.
    estimates : str
        The divergence its mean equals under ``x ~ q``, in words.
    estimates_latex : str
        The same, in LaTeX.
    divergence : str or None
        Key of that divergence in :data:`kl_core.estimation.divergences.DIVERGENCES`.
    unbiased_for : str or None
        ``"kl_qp"`` or ``"kl_pq"`` if its mean equals that KL exactly, else None.
    nonnegative : bool
        True if every single sample is ≥ 0.
    summary : str
        One line on its character.
    source : str
        Where it comes from.
    function : callable
        The per-sample function of ``logr`` (and of its :attr:`parameter`, by keyword).
    parameter : Parameter or None
        The real parameter it takes (:math:`\lambda` of ``k_lambda``), None for most.
    compared : bool
        True if it is one of the estimators the ``table`` command, the Estimator Lab and
        :func:`kl_core.estimation.montecarlo.simulate` compare by default (:data:`COMPARED_KEYS`);
        False for ``abs``, listed so that the library crosswalk can name it.
    color, dash, shape : str, tuple of float, str
        How every chart draws it (``charts.palette``): hex colour, line ``strokeDash``
        (``(1, 0)`` is solid) and Vega-Lite point shape.
    """

    key: str
    name: str
    latex: str
    estimates: str
    estimates_latex: str
    divergence: str | None
    unbiased_for: str | None
    nonnegative: bool
    summary: str
    source: str
    function: Callable[..., np.ndarray]
    parameter: Parameter | None
    compared: bool
    color: str
    dash: tuple[float, ...]
    shape: str

    @property
    def unbiased(self) -> bool:
        """True if the estimator is unbiased for a KL direction."""
        return self.unbiased_for is not None

    def __call__(self, logr: ArrayLike, lam: float = 1.0) -> np.ndarray:
        """Evaluate the estimator; ``lam`` is used only by one with a :attr:`parameter`."""
        return evaluate(self.key, logr, lam=lam)


# How every chart draws each estimator (read by ``charts.palette``; issue 17).
#
# Colours: Okabe–Ito.  Orange and sky blue are Okabe–Ito's darkened by 15 % and 20 %
# (lightness): the originals have a contrast of only 2.3 against white; every colour here has
# at least 3:1 (the WCAG minimum for graphics) on white AND on Streamlit's dark background
# #0E1117 (``tests/app/test_palette.py`` checks it).
#
# Dashes: k3, the estimator to use, is the one solid line.  k1 is dotted everywhere,
# the Estimator Lab included (issue 17): the Lab, the most-viewed page, shows k1, k2 and k3
# by default, and k1 and k3 have the same target, so their running means run on top of each
# other; both solid, colour was the only thing telling them apart.  A dotted k1 reads as
# "the naive, noisy one" and lets the solid k3 show through it.  k2 is long dashes, kλ
# dash-dot (it sits between k1 and k3), k3_pq short dashes.  Every dash differs from the
# exact value's black ``charts.palette.REFERENCE_DASH``.
_SOLID: tuple[float, float] = (1, 0)

# What k1, k3 and kλ estimate, alike: their mean is KL[q‖p] exactly.
_UNBIASED_FOR_KL_QP: dict[str, str] = {
    "estimates": "KL[q‖p]",
    "estimates_latex": r"\mathrm{KL}[q\|p]",
    "divergence": "kl_qp",
    "unbiased_for": "kl_qp",
}

ESTIMATORS: dict[str, EstimatorInfo] = by_key(
    EstimatorInfo(
        key="k1",
        name="k1",
        latex=r"k_1 = -\log r",
        **_UNBIASED_FOR_KL_QP,
        nonnegative=False,
        summary=N_("Unbiased but noisy: a single sample is negative whenever p(x) > q(x)."),
        source=BLOG,
        function=k1,
        parameter=None,
        compared=True,
        color="#D55E00",  # vermillion: the naive, noisy one
        dash=(2, 3),
        shape="circle",
    ),
    EstimatorInfo(
        key="k2",
        name="k2",
        latex=r"k_2 = \tfrac12 (\log r)^2",
        estimates=N_("the f-divergence with f(u) = ½ log² u (≈ KL[q‖p] when p ≈ q)"),
        estimates_latex=r"D_f(p,q),\ f(u)=\tfrac12\log^2 u",
        divergence="k2",
        unbiased_for=None,
        nonnegative=True,
        summary=N_("Never negative, and low-variance and almost unbiased while p is close to q "
                   "and neither has heavier tails than the other; otherwise its bias can be large, "
                   "of either sign."),
        source=BLOG,
        function=k2,
        parameter=None,
        compared=True,
        color="#0072B2",  # blue
        dash=(9, 4),
        shape="square",
    ),
    EstimatorInfo(
        key="k3",
        name="k3",
        latex=r"k_3 = (r - 1) - \log r",
        **_UNBIASED_FOR_KL_QP,
        nonnegative=True,
        summary=N_("Unbiased and never negative: k1 plus the control variate r − 1, which cuts "
                   "the variance while p is close to q and has no heavier tails than q "
                   "(otherwise it can add to it, even make it infinite)."),
        source=BLOG,
        function=k3,
        parameter=None,
        compared=True,
        color="#009E73",  # bluish green
        dash=_SOLID,
        shape="triangle-up",
    ),
    EstimatorInfo(
        key="k_lambda",
        name="kλ",
        latex=r"k_\lambda = -\log r + \lambda (r - 1)",
        **_UNBIASED_FOR_KL_QP,
        nonnegative=False,
        summary=N_("Unbiased for every λ; only λ = 1 keeps every sample ≥ 0 whatever q and p are."),
        source=BLOG,
        function=k_lambda,
        parameter=Parameter("lam", "λ", same_as=((0.0, "k1"), (1.0, "k3"))),
        compared=True,
        color="#CC79A7",  # reddish purple
        dash=(9, 3, 2, 3),
        shape="diamond",
    ),
    EstimatorInfo(
        key="k3_pq",
        name="k3 (KL[p‖q])",
        latex=r"k_3^{pq} = r \log r - (r - 1)",
        estimates="KL[p‖q]",
        estimates_latex=r"\mathrm{KL}[p\|q]",
        divergence="kl_pq",
        unbiased_for="kl_pq",
        nonnegative=True,
        summary=N_("The same tangent-gap trick for the other direction, still from samples of q."),
        source=BLOG,
        function=k3_pq,
        parameter=None,
        compared=True,
        color="#C38700",  # orange (Okabe–Ito #E69F00, darkened)
        dash=(5, 2),
        shape="triangle-down",
    ),
    EstimatorInfo(
        key="abs",
        name="|log r|",
        latex=r"|\log r|",
        estimates=N_("E_q|log r| (not a divergence)"),
        estimates_latex=r"\mathbb{E}_q|\log r|",
        divergence=None,
        unbiased_for=None,
        nonnegative=True,
        summary=N_("Offered as 'abs' by TRL and verl; its mean is not a KL in either direction."),
        source="TRL and verl kl_penalty='abs'",
        function=k_abs,
        parameter=None,
        compared=False,
        color="#1E9BE2",  # sky blue (#56B4E9, darkened)
        dash=(2, 2, 2, 2, 9, 2),
        shape="cross",
    ),
)

#: The estimators compared by default, in registry order: the rows of the ``table`` command,
#: the Estimator Lab's choices and :func:`kl_core.estimation.montecarlo.simulate`'s default keys.
COMPARED_KEYS: tuple[str, ...] = tuple(k for k, e in ESTIMATORS.items() if e.compared)


@docfill(**SECTIONS)
def evaluate(key: str, logr: ArrayLike, lam: float = 1.0) -> np.ndarray:
    r"""Evaluate the estimator named ``key`` on ``logr``.

    Parameters
    ----------
    key : str
        A key of :data:`ESTIMATORS`.
    %(logr)s
    lam : float, default 1.0
        The value of the estimator's :attr:`EstimatorInfo.parameter` (:math:`\lambda` of
        ``k_lambda``); ignored by the estimators without one.

    %(per_sample_returns)s

    Examples
    --------
    >>> evaluate("k3", [0.0]).tolist()
    [0.0]
    """
    if key not in ESTIMATORS:
        raise ValueError(f"key must be one of {sorted(ESTIMATORS)}, got {key!r}")
    info = ESTIMATORS[key]
    if info.parameter is not None:
        return info.function(logr, **{info.parameter.name: lam})
    return info.function(logr)
