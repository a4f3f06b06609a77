r"""Exact values, with no sampling: KL, f-divergences and estimator moments.

Everything here is an expectation under the sampler ``q`` of a function of the
log-ratio :math:`\log r = \log p(x) - \log q(x)`:

.. math:: \mathbb{E}_q[g(\log r)] = \int q(x)\, g(\log r(x))\, dx
          \quad\text{or}\quad \sum_k q_k\, g(\log r_k).

Categorical pairs are summed exactly.  Continuous pairs use closed forms where
they exist (Gaussian–Gaussian, Laplace–Laplace) and adaptive Gauss–Kronrod
quadrature otherwise, to about 1e-12 relative.  Divergence is detected before
integrating: each integrand is bounded by :math:`q(x)\,|C(\log r)|\,r^k`, whose
log–log slope far in each tail decides whether the integral is finite, so an
infinite KL or variance is reported as ``inf`` with the reason, not as a large
finite number.

KL and the f-divergences are integrated in their Bregman form
:math:`f(r) - f'(1)(r-1) \ge 0` (equal in expectation because
:math:`\mathbb{E}_q[r] = 1`), which has no cancellation when ``p`` ≈ ``q``.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kl_core import estimators as est
from kl_core._quadrature import QuadratureError, integrate_real_line
from kl_core._validation import check_finite
from kl_core.distributions import (
    Categorical,
    Distribution,
    Gaussian,
    GaussianMixture,
    Laplace,
    StudentT,
    log_ratio,
)
from kl_core.divergences import DIVERGENCES, get_divergence

__all__ = ["Moments", "estimator_moments", "f_divergence", "kl", "optimal_lambda"]

_LOG2 = math.log(2.0)
# Above this log-ratio the integrand is evaluated term by term in log space,
# q·C_k(t)·e^{kt} = C_k(t)·exp(log q + k t), so r**2 may overflow while q underflows.
_LOG_SPACE_T = 30.0
# The tail test reads the log–log slope of the integrand between these
# multiples of the bulk's half-width; slope >= -1 - _SLOPE_EPS means divergence.
_TAIL_DECADES = (6, 7)
_SLOPE_EPS = 1e-3

Terms = tuple[tuple[float, Callable[[np.ndarray], np.ndarray]], ...]


@dataclass(frozen=True)
class Moments:
    """Exact mean and variance of one per-sample estimator value under ``x ~ q``.

    Attributes
    ----------
    mean : float
        :math:`\\mathbb{E}_q[k]`; ``inf`` if it diverges.
    var : float
        :math:`\\mathrm{Var}_q[k]`; ``inf`` if it diverges.
    note : str
        Empty, or one sentence saying why a moment is infinite.
    """

    mean: float
    var: float
    note: str = ""

    @property
    def std(self) -> float:
        """Per-sample standard deviation."""
        return math.sqrt(self.var) if self.var >= 0 else math.nan

    @property
    def finite(self) -> bool:
        """True if both the mean and the variance are finite."""
        return math.isfinite(self.mean) and math.isfinite(self.var)


@dataclass(frozen=True)
class _Integrand:
    """g(t) accurate where finite, and g(t) = sum_k C_k(t) e^{k t} for large t."""

    value: Callable[[np.ndarray], np.ndarray]
    terms: Terms


# ------------------------------------------------------------ integrands


def _poly_exp_terms(key: str, lam: float) -> Terms:
    """k = A(t) + B(t) e^t for every estimator in the registry."""
    table: dict[str, Terms] = {
        "k1": ((0.0, lambda t: -t),),
        "k2": ((0.0, lambda t: 0.5 * t * t),),
        "k3": ((0.0, lambda t: -1.0 - t), (1.0, lambda t: np.ones_like(t))),
        "k_lambda": ((0.0, lambda t: -lam - t), (1.0, lambda t: np.full_like(t, lam))),
        "k3_pq": ((0.0, lambda t: np.ones_like(t)), (1.0, lambda t: t - 1.0)),
        "abs": ((0.0, np.abs),),
    }
    return table[key]


def _f_terms(key: str) -> Terms:
    """f(e^t) = sum_k C_k(t) e^{kt}, valid for t > 30, for every registry f."""

    def js0(t: np.ndarray) -> np.ndarray:
        return -0.5 * (t + np.log1p(np.exp(-t)) - _LOG2)

    def js1(t: np.ndarray) -> np.ndarray:
        return 0.5 * (_LOG2 - np.log1p(np.exp(-t)))

    table: dict[str, Terms] = {
        "kl_pq": ((1.0, lambda t: t),),
        "kl_qp": ((0.0, lambda t: -t),),
        "k2": ((0.0, lambda t: 0.5 * t * t),),
        "pearson": (
            (0.0, lambda t: np.ones_like(t)),
            (1.0, lambda t: np.full_like(t, -2.0)),
            (2.0, lambda t: np.ones_like(t)),
        ),
        "hellinger": (
            (0.0, lambda t: np.ones_like(t)),
            (0.5, lambda t: np.full_like(t, -2.0)),
            (1.0, lambda t: np.ones_like(t)),
        ),
        "js": ((0.0, js0), (1.0, js1)),
        "tv": ((0.0, lambda t: np.full_like(t, -0.5)), (1.0, lambda t: np.full_like(t, 0.5))),
    }
    return table[key]


def _sum_of(fns: list[Callable[[np.ndarray], np.ndarray]]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda t: sum(fn(t) for fn in fns)


def _minus(fn: Callable[[np.ndarray], np.ndarray], m: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda t: fn(t) - m


def _product(
    fa: Callable[[np.ndarray], np.ndarray], fb: Callable[[np.ndarray], np.ndarray]
) -> Callable[[np.ndarray], np.ndarray]:
    return lambda t: fa(t) * fb(t)


def _estimator_integrand(key: str, lam: float) -> _Integrand:
    return _Integrand(lambda t: est.evaluate(key, t, lam=lam), _poly_exp_terms(key, lam))


def _divergence_integrand(name: str) -> _Integrand:
    """The Bregman form f(r) − f'(1)(r − 1) (f itself where f'(1) is undefined)."""
    div = get_divergence(name)
    terms = _f_terms(name)
    if div.fprime_at_1 is None:
        return _Integrand(lambda t: div.f_log(np.asarray(t, dtype=float)), terms)
    c = div.fprime_at_1
    merged: dict[float, list[Callable[[np.ndarray], np.ndarray]]] = {}
    for k, fn in terms:
        merged.setdefault(k, []).append(fn)
    merged.setdefault(0.0, []).append(lambda t: np.full_like(t, c))
    merged.setdefault(1.0, []).append(lambda t: np.full_like(t, -c))
    summed = tuple((k, _sum_of(fns)) for k, fns in merged.items())
    return _Integrand(lambda t: est.bregman(name, t), summed)


def _squared_deviation(g: _Integrand, m: float) -> _Integrand:
    """(g − m)², with its exponential terms multiplied out."""
    shifted = tuple((k, _minus(fn, m) if k == 0.0 else fn) for k, fn in g.terms)
    if not any(k == 0.0 for k, _ in shifted):
        shifted = ((0.0, lambda t: np.full_like(t, -m)), *shifted)
    products: Terms = tuple(
        (ka + kb, _product(fa, fb)) for ka, fa in shifted for kb, fb in shifted
    )
    return _Integrand(lambda t: (g.value(t) - m) ** 2, products)


# ------------------------------------------------------------ the engine


def _check_pair(q: Distribution, p: Distribution) -> None:
    for name, d in (("q", q), ("p", p)):
        if not isinstance(d, Distribution):
            raise ValueError(f"{name} must be a kl_core Distribution, got {type(d).__name__}")
    if q.discrete != p.discrete:
        raise ValueError("q and p must both be continuous or both be categorical")
    if isinstance(q, Categorical) and isinstance(p, Categorical) and q.k != p.k:
        raise ValueError(f"p has {p.k} categories but q has {q.k}; they must match")


def _log_abs_integrand(q: Distribution, p: Distribution, g: _Integrand, x: np.ndarray) -> np.ndarray:
    """log |q(x) g(log r(x))|, computed in log space so nothing overflows."""
    logq = q.logpdf(x)
    t = log_ratio(p, q, x)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        small = logq + np.log(np.abs(g.value(t)))
        parts = [k * t + np.log(np.abs(fn(t))) for k, fn in g.terms]
    big = logq + np.logaddexp.reduce(np.stack(parts), axis=0)
    return np.where(t > _LOG_SPACE_T, big, small)


def _dominant_power(g: _Integrand, t: float) -> float:
    ta = np.array([t])
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        sizes = [k * t + float(np.log(np.abs(fn(ta)))[0]) for k, fn in g.terms]
    return g.terms[int(np.nanargmax(sizes))][0]


def _bulk(q: Distribution, p: Distribution) -> tuple[float, float, list[float]]:
    """Centre and half-width of q's bulk, and the points where integrands bend."""
    lo, hi = q.interval(0.999)
    plo, phi = p.interval(0.999)
    marks = [lo, hi, plo, phi]
    for d in (q, p):
        if isinstance(d, Gaussian):
            marks.append(d.mu)
        elif isinstance(d, (Laplace, StudentT)):
            marks.append(d.loc)
        elif isinstance(d, GaussianMixture):
            marks.extend(d.means)
    return 0.5 * (lo + hi), 0.5 * (hi - lo), marks


def _tail_note(q: Distribution, p: Distribution, g: _Integrand) -> str:
    """Empty if E_q|g| is finite in both tails, else why it diverges."""
    c, s, _ = _bulk(q, p)
    for side, where in ((1.0, "+∞"), (-1.0, "−∞")):
        x = np.array([c + side * s * 10.0**d for d in _TAIL_DECADES])
        logh = _log_abs_integrand(q, p, g, x)
        if not np.isfinite(logh).any() and np.all(logh == -np.inf):
            continue
        slope = (logh[1] - logh[0]) / (math.log(10.0) * (_TAIL_DECADES[1] - _TAIL_DECADES[0]))
        if np.isnan(slope) or slope >= -1.0 - _SLOPE_EPS:
            t_far = float(log_ratio(p, q, x[-1:])[0])
            k = _dominant_power(g, t_far) if t_far > _LOG_SPACE_T else 0.0
            if k >= 1.0:
                why = (
                    f"the factor r^{k:g} = (p/q)^{k:g} grows faster than q decays "
                    "(p's tail is too heavy relative to q's)"
                )
            else:
                why = "q's tail is too heavy for the powers of log r in the integrand"
            return f"the integral diverges as x → {where}: {why}"
    return ""


class _Overflow(ArithmeticError):
    """The integrand exceeds the largest double somewhere in the bulk."""


_OVERFLOW_NOTE = (
    "it is finite in exact arithmetic but larger than the largest double (about 1.8e308), "
    "e.g. E_q[r²] = e^{μ²} for Gaussians μ apart"
)


def _expect(q: Distribution, p: Distribution, g: _Integrand) -> tuple[float, str]:
    """E_q[g(log r)] and, if it is infinite, the reason."""
    if isinstance(q, Categorical):
        support = np.arange(q.k, dtype=np.float64)
        w = q.probs
        with np.errstate(over="ignore", invalid="ignore"):
            v = g.value(log_ratio(p, q, support))
        total = float(np.sum(np.where(w > 0, w * v, 0.0)))
        return total, ("" if math.isfinite(total) else "a term of the sum overflows")
    note = _tail_note(q, p, g)
    if note:
        return math.inf, note

    def integrand(x: np.ndarray) -> np.ndarray:
        logq = q.logpdf(x)
        t = log_ratio(p, q, x)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            direct = np.exp(logq) * g.value(np.minimum(t, _LOG_SPACE_T))
            big = np.zeros_like(t)
            hot = t > _LOG_SPACE_T
            if hot.any():
                th, lq = t[hot], logq[hot]
                # log(q·r^k) as k·log p + (1−k)·log q: far out, log q + k·log r
                # cancels two huge numbers (log p itself is moderate when p is heavy).
                lp = p.logpdf(x[hot])
                big[hot] = sum(fn(th) * np.exp(k * lp + (1.0 - k) * lq) for k, fn in g.terms)
        out = np.where(hot, big, direct)
        if np.isposinf(out).any():
            raise _Overflow
        return np.where(np.isnan(out), 0.0, out)  # 0·inf where q underflows

    c, s, marks = _bulk(q, p)
    try:
        value, _ = integrate_real_line(integrand, c, s, breakpoints=marks)
    except (_Overflow, QuadratureError) as exc:
        if isinstance(exc, QuadratureError) and math.isfinite(exc.value):
            raise
        return math.inf, _OVERFLOW_NOTE
    if not math.isfinite(value):
        return math.inf, _OVERFLOW_NOTE
    return value, ""


# ------------------------------------------------------------ public API


def kl(a: Distribution, b: Distribution) -> float:
    r"""The KL divergence :math:`\mathrm{KL}[a\,\|\,b] = \mathbb{E}_{x\sim a}[\log a(x) - \log b(x)]`.

    Closed forms (written through :math:`k_3` to avoid cancellation):

    * Gaussians: :math:`\tfrac12 k_3(2\log\tfrac{\sigma_a}{\sigma_b}) + \tfrac{(\mu_a-\mu_b)^2}{2\sigma_b^2}`;
    * Laplaces (:math:`\delta = |\mu_a-\mu_b|`, :math:`\rho = b_a/b_b`):
      :math:`\log\tfrac1\rho + \tfrac{\delta}{b_b} + \rho e^{-\delta/b_a} - 1`;
    * Categoricals: :math:`\sum_k a_k\, k_3(\log b_k - \log a_k)`.

    Other pairs use quadrature of :math:`\mathbb{E}_a[(r-1) - \log r]`, accurate
    to about 1e-12 relative.

    Parameters
    ----------
    a, b : Distribution
        Both continuous, or both categorical with the same number of categories.

    Returns
    -------
    float
        The divergence, ≥ 0; ``inf`` when the integral diverges.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html;
    Gil, Alajaji & Linder, "Rényi divergence measures for commonly used univariate
    continuous distributions" (2013) for the Laplace closed form.

    Examples
    --------
    >>> kl(Gaussian(0, 1), Gaussian(1, 1))
    0.5
    """
    _check_pair(a, b)
    if isinstance(a, Gaussian) and isinstance(b, Gaussian):
        var_term = 0.5 * float(est.k3([2.0 * math.log(a.sigma / b.sigma)])[0])
        return var_term + (a.mu - b.mu) ** 2 / (2.0 * b.sigma**2)
    if isinstance(a, Laplace) and isinstance(b, Laplace):
        delta = abs(a.loc - b.loc)
        s = math.log(a.scale / b.scale) - delta / a.scale
        return float(est.k3([s])[0]) - delta / a.scale + delta / b.scale
    return _expect(a, b, _divergence_integrand("kl_qp"))[0]


def f_divergence(name: str, p: Distribution, q: Distribution) -> float:
    r"""The f-divergence :math:`D_f(p, q) = \mathbb{E}_{x\sim q}[f(p(x)/q(x))]`.

    Integrated in the Bregman form :math:`\mathbb{E}_q[f(r) - f'(1)(r-1)]`,
    which equals :math:`D_f` because :math:`\mathbb{E}_q[r] = 1` and is free of
    cancellation.  ``kl_qp`` and ``kl_pq`` use :func:`kl`'s closed forms.

    Parameters
    ----------
    name : str
        A key of :data:`kl_core.divergences.DIVERGENCES`.
    p, q : Distribution
        Target and sampler.

    Returns
    -------
    float
        The divergence; ``inf`` if it diverges.

    References
    ----------
    I. Csiszár (1967); J. Schulman, "Approximating KL Divergence" (2020),
    http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> round(f_divergence("kl_pq", Gaussian(1, 1), Gaussian(0, 1)), 12)
    0.5
    """
    get_divergence(name)
    _check_pair(q, p)
    if name == "kl_qp":
        return kl(q, p)
    if name == "kl_pq":
        return kl(p, q)
    return _expect(q, p, _divergence_integrand(name))[0]


def _divergence_note(name: str, q: Distribution, p: Distribution) -> str:
    return _tail_note(q, p, _divergence_integrand(name)) if not q.discrete else ""


def estimator_moments(
    key: str, q: Distribution, p: Distribution, lam: float | None = None
) -> Moments:
    r"""Exact mean and variance of one estimator's per-sample value, :math:`x \sim q`.

    .. math:: \mu = \mathbb{E}_q[k(\log r)], \qquad \sigma^2 = \mathbb{E}_q[(k(\log r) - \mu)^2]

    For the unbiased estimators :math:`\mu` is the KL they target.  The variance
    is integrated directly as :math:`\mathbb{E}_q[(k-\mu)^2]`.  An infinite
    variance (e.g. :math:`k_3` when :math:`\mathbb{E}_q[r^2] = \infty`, as for
    :math:`q = \mathcal N(0,1)`, :math:`p = \mathcal N(0,\sigma^2)` with
    :math:`\sigma \ge \sqrt2`) is returned as ``inf`` with a note.

    Parameters
    ----------
    key : str
        A key of :data:`kl_core.estimators.ESTIMATORS`.
    q, p : Distribution
        Sampler and target.
    lam : float, optional
        :math:`\lambda` for ``k_lambda`` (required there, ignored elsewhere).

    Returns
    -------
    Moments
        ``mean``, ``var`` and a ``note`` saying why a moment is infinite.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> m = estimator_moments("k3", Gaussian(0, 1), Gaussian(1, 1))
    >>> round(m.var, 10) == round(math.e - 2, 10)
    True
    """
    if key not in est.ESTIMATORS:
        raise ValueError(f"key must be one of {sorted(est.ESTIMATORS)}, got {key!r}")
    _check_pair(q, p)
    if key == "k_lambda":
        if lam is None:
            raise ValueError("lam is required for key='k_lambda'")
        lam = check_finite(lam, "lam")
    else:
        lam = 1.0 if lam is None else check_finite(lam, "lam")
    info = est.ESTIMATORS[key]
    g = _estimator_integrand(key, lam)
    if info.unbiased_for is not None:
        mean = f_divergence(info.unbiased_for, p, q)
        note = _divergence_note(info.unbiased_for, q, p) if math.isinf(mean) else ""
    else:
        mean, note = _expect(q, p, g)
    if not math.isfinite(mean):
        what = DIVERGENCES[info.divergence].name if info.divergence else f"E_q[{info.name}]"
        return Moments(mean, math.inf, f"{what} is infinite: {note}" if note else "")
    var, vnote = _expect(q, p, _squared_deviation(g, mean))
    if vnote == _OVERFLOW_NOTE:
        vnote = f"Var({info.name}) is reported as inf: {vnote}"
    elif vnote:
        vnote = f"Var({info.name}) is infinite: {vnote}"
    return Moments(mean, max(var, 0.0), vnote)


def optimal_lambda(q: Distribution, p: Distribution) -> float:
    r"""The variance-optimal coefficient of :math:`k_\lambda = -\log r + \lambda(r-1)`.

    .. math:: \lambda^* = \frac{\mathrm{Cov}_q(\log r, r)}{\mathrm{Var}_q(r)}
              = \frac{\mathrm{KL}[p,q] + \mathrm{KL}[q,p]}{\chi^2(p\,\|\,q)}

    since :math:`\mathbb{E}_q[r] = 1`, :math:`\mathbb{E}_q[r\log r] = \mathrm{KL}[p,q]`,
    :math:`\mathbb{E}_q[\log r] = -\mathrm{KL}[q,p]` and
    :math:`\mathrm{Var}_q(r) = \chi^2(p\|q)`.  For :math:`q = \mathcal N(0,1)`,
    :math:`p = \mathcal N(\mu,1)` it is :math:`\mu^2/(e^{\mu^2}-1)`.

    Parameters
    ----------
    q, p : Distribution
        Sampler and target.

    Returns
    -------
    float
        :math:`\lambda^*`.  When :math:`\mathrm{Var}_q(r) = \infty` every
        :math:`\lambda \ne 0` has infinite variance, so 0 is returned; when
        ``p == q`` every :math:`\lambda` is optimal and 1 is returned.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> round(optimal_lambda(Gaussian(0, 1), Gaussian(1, 1)), 12) == round(1 / (math.e - 1), 12)
    True
    """
    _check_pair(q, p)
    chi2 = f_divergence("pearson", p, q)
    if math.isinf(chi2):
        return 0.0
    if chi2 == 0.0:
        return 1.0
    return (kl(p, q) + kl(q, p)) / chi2
