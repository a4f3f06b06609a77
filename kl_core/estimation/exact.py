r"""Exact values, with no sampling: KL, f-divergences and estimator moments.

Everything here is an expectation under the sampler ``q`` of a function of the
log-ratio :math:`\log r = \log p(x) - \log q(x)`:

.. math:: \mathbb{E}_q[g(\log r)] = \int q(x)\, g(\log r(x))\, dx
          \quad\text{or}\quad \sum_k q_k\, g(\log r_k).

Categorical pairs are summed exactly.  Continuous pairs use closed forms where
a family module declares one (Gaussian–Gaussian, Laplace–Laplace, Laplace–Gaussian:
``KL_CLOSED_FORMS`` in :mod:`kl_core.estimation.families`) and adaptive Gauss–Kronrod
quadrature otherwise (``kl_core.estimation._expectation``), to about 1e-12 relative.
Finiteness is decided before integrating, in closed form, from the families'
tail exponents (:mod:`kl_core.estimation.tails`): an infinite KL, variance or fourth
moment is reported as ``inf`` with the reason, and a finite one is integrated
however slowly its integrand decays (Student t down to df = 0.1).  A variance that is
finite but past the largest double is ``inf`` too, with a note saying so, and its log
(:func:`log_estimator_variance`, worked out in log space) in ``Moments.log_var``: the
standard deviation, its square root, often fits.

KL and the f-divergences are integrated in their Bregman form
:math:`f(r) - f'(1)(r-1) \ge 0` (equal in expectation because
:math:`\mathbb{E}_q[r] = 1`), which has no cancellation when ``p`` ≈ ``q``.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from kl_core._docfill import docfill
from kl_core.estimation import estimators as est
from kl_core.estimation._docstrings import SECTIONS
from kl_core.estimation._expectation import (
    DEVIATION_NOISE,
    EPSREL,
    OVERFLOW_NOTE,
    expect,
    log_integral,
    tail_note,
)
from kl_core.estimation._integrands import (
    ExpPoly,
    Integrand,
    divergence_integrand,
    estimator_integrand,
)
from kl_core.estimation._quadrature import QuadratureError
from kl_core.estimation.distributions import Distribution, log_ratio
from kl_core.estimation.divergences import DIVERGENCES, get_divergence
from kl_core.estimation.families import closed_form_kl
from kl_core.estimation.families.categorical import log_ratio_table
from kl_core.numbers import SMALLEST_NORMAL, unresolved
from kl_core.validation import Message, check_finite

__all__ = [
    "CHI2_OVERFLOW_NOTE", "MEAN_PRECISION", "LambdaStar", "Moments", "estimator_fourth_moment", "estimator_kurtosis_log_space",
    "estimator_moments", "f_divergence",
    "kl", "lambda_star", "log_estimator_variance", "optimal_lambda",
]

#: The relative precision the exact moments are integrated to (the adaptive quadrature's ``epsrel``): two exact
#: values closer than this, relative to their size, are not told apart (an estimator's exact bias against the KL).
MEAN_PRECISION: float = EPSREL

#: :func:`lambda_star`'s note where χ²(p‖q) is finite but past a double: λ* = Cov/χ² is then
#: positive but so small that Var(k_λ*) equals Var(log r) to double precision.
CHI2_OVERFLOW_NOTE = Message(
    "χ²(p‖q) = Var_q(r) is finite but larger than the largest double, so λ* = "
    "(KL[p‖q] + KL[q‖p])/χ² is tiny and k1 (λ = 0) is optimal to double precision"
)


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
        Empty, or one sentence saying why a moment is infinite: a
        :class:`~kl_core.validation.Message` (English text; ``params["why"]``
        is the reason without its head), which the app translates.
    log_var : float
        :math:`\\log\\mathrm{Var}_q[k]` (:func:`log_estimator_variance`), filled only where
        ``var`` is ``inf`` because the variance is finite but past the largest double
        (the note then says so); nan everywhere else.
    """

    mean: float
    var: float
    note: str = ""
    log_var: float = math.nan

    @property
    def std(self) -> float:
        """Per-sample standard deviation (``inf`` where ``var`` is, see :attr:`log_std`)."""
        return math.sqrt(self.var) if self.var >= 0 else math.nan

    @property
    def log_std(self) -> float:
        """½ log Var_q[k]: from ``log_var`` where the variance is past a double
        (then finite, though ``std`` is ``inf``), else from ``var`` (``-inf`` for 0, ``inf`` for ``inf``)."""
        if math.isfinite(self.log_var):
            return 0.5 * self.log_var
        if math.isnan(self.var) or self.var < 0.0:
            return math.nan
        return 0.5 * math.log(self.var) if self.var > 0.0 else -math.inf

    @property
    def finite(self) -> bool:
        """True if both the mean and the variance are finite."""
        return math.isfinite(self.mean) and math.isfinite(self.var)

    @property
    def var_unresolved(self) -> bool:
        """The variance's digits are lost to subnormal doubles: it is below the smallest normal
        double, or 0 where values as small as the mean (below √2.2e-308 ≈ 1.5e-154) have squares
        that underflow (Var(k2) ≈ 2 KL² for a KL of 5e-201)."""
        if unresolved(self.var):
            return True
        return self.var == 0.0 and math.isfinite(self.mean) and 0.0 < abs(self.mean) < math.sqrt(SMALLEST_NORMAL)


# ------------------------------------------------------------ the engine


def _check_pair(q: Distribution, p: Distribution) -> None:
    for name, d in (("q", q), ("p", p)):
        if not isinstance(d, Distribution):
            raise ValueError(f"{name} must be a kl_core Distribution, got {type(d).__name__}")
    if q.discrete != p.discrete:
        raise ValueError("q and p must both be continuous or both be categorical")
    if q.discrete and p.discrete and q.k != p.k:
        raise ValueError(f"p has {p.k} categories but q has {q.k}; they must match")


# ------------------------------------------------------------ public API


def kl(a: Distribution, b: Distribution) -> float:
    r"""The KL divergence :math:`\mathrm{KL}[a\,\|\,b] = \mathbb{E}_{x\sim a}[\log a(x) - \log b(x)]`.

    Closed forms (written through :math:`k_3` to avoid cancellation):

    * Gaussians: :math:`\tfrac12 k_3(2\log\tfrac{\sigma_a}{\sigma_b}) + \tfrac{(\mu_a-\mu_b)^2}{2\sigma_b^2}`;
    * Laplaces (:math:`\delta = |\mu_a-\mu_b|`, :math:`\rho = b_a/b_b`):
      :math:`\log\tfrac1\rho + \tfrac{\delta}{b_b} + \rho e^{-\delta/b_a} - 1`;
    * Laplace :math:`(m, b)` against Gaussian :math:`(\mu, \sigma)`, :math:`d = m - \mu`:
      :math:`\log\tfrac{\sigma\sqrt{2\pi}}{2b} - 1 + \tfrac{2b^2 + d^2}{2\sigma^2}`
      (the Laplace's second moment about :math:`\mu` is :math:`2b^2 + d^2`), and
      the other way :math:`\log\tfrac{2b}{\sigma\sqrt{2\pi}} - \tfrac12 + \tfrac{\mathbb{E}|x - m|}{b}`
      with the folded-normal mean
      :math:`\mathbb{E}|x - m| = \sigma\sqrt{2/\pi}\,e^{-d^2/2\sigma^2} + d\,(1 - 2\Phi(-d/\sigma))`,
      :math:`d = \mu - m`.  For the standard pair these are
      :math:`\tfrac12\log 2\pi - \log 2` and :math:`\sqrt{2/\pi} + \log 2 - \tfrac12\log 2\pi - \tfrac12`;
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
    continuous distributions" (2013) for the Laplace closed form; the Laplace–Gaussian
    ones are the two log-densities' expectations (moments of the Laplace, folded-normal mean).

    Examples
    --------
    >>> kl(Gaussian(0, 1), Gaussian(1, 1))
    0.5
    """
    _check_pair(a, b)
    closed = closed_form_kl(a, b)  # declared by the family modules (KL_CLOSED_FORMS)
    if closed is not None:
        return closed(a, b)
    return expect(a, b, divergence_integrand("kl_qp"))[0]


def f_divergence(name: str, p: Distribution, q: Distribution) -> float:
    r"""The f-divergence :math:`D_f(p, q) = \mathbb{E}_{x\sim q}[f(p(x)/q(x))]`.

    Integrated in the Bregman form :math:`\mathbb{E}_q[f(r) - f'(1)(r-1)]`,
    which equals :math:`D_f` because :math:`\mathbb{E}_q[r] = 1` and is free of
    cancellation.  ``kl_qp`` and ``kl_pq`` use :func:`kl`'s closed forms.

    Parameters
    ----------
    name : str
        A key of :data:`kl_core.estimation.divergences.DIVERGENCES`.
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
    value = expect(q, p, divergence_integrand(name))[0]
    return min(value, _UPPER[name]) if name in _UPPER else value


# The bounded divergences' maxima (disjoint supports): the quadrature's rounding must not pass them.
_UPPER = {"hellinger": 2.0, "tv": 1.0, "js": math.log(2.0)}


def _divergence_note(name: str, q: Distribution, p: Distribution) -> str:
    return tail_note(q, p, divergence_integrand(name))


def _check_key_lam(key: str, lam: float | None) -> float:
    if key not in est.ESTIMATORS:
        raise ValueError(f"key must be one of {sorted(est.ESTIMATORS)}, got {key!r}")
    if est.ESTIMATORS[key].parameter is not None:
        if lam is None:
            raise ValueError(f"lam is required for key={key!r}")
        return check_finite(lam, "lam")
    return 1.0 if lam is None else check_finite(lam, "lam")


def _mean(key: str, q: Distribution, p: Distribution, g: Integrand) -> tuple[float, str]:
    """The exact mean, and the note if it is infinite."""
    info = est.ESTIMATORS[key]
    if info.unbiased_for is not None:
        mean = f_divergence(info.unbiased_for, p, q)
        note = _divergence_note(info.unbiased_for, q, p) if math.isinf(mean) else ""
    else:
        mean, note = expect(q, p, g)
    if math.isfinite(mean):
        return mean, ""
    # the KL an unbiased estimator's mean is; else the mean itself, E_q[k2] (its f's name, "½ log² (the f of k2) is
    # infinite", read as the function)
    what = DIVERGENCES[info.unbiased_for].name if info.unbiased_for else f"E_q[{info.name}]"
    return mean, (Message("{what} is infinite: {why}", what=what, why=note) if note else "")


# Above this |mean|/sd, the mean's own 1e-12 relative error would show in the
# variance ((δm)² against σ²), so deviations are centred on a refined mean.
_REFINE = 1e4


@functools.lru_cache(maxsize=1024)
def _centred(
    key: str, q: Distribution, p: Distribution, lam: float
) -> tuple[float, str, float, float, str]:
    """(mean, its note, the centre for deviations, variance, its note)."""
    g = estimator_integrand(key, lam)
    mean, note = _mean(key, q, p, g)
    if not math.isfinite(mean):
        return mean, note, mean, math.inf, ""
    var, vnote = expect(q, p, g.deviation(mean, 2), noise_floor=DEVIATION_NOISE)
    centre = mean
    if math.isfinite(var) and var > 0.0 and abs(mean) > _REFINE * math.sqrt(var):
        # E_q[k − m̂] = m − m̂ is small and integrates to ~1e-12 of the spread
        shift, _ = expect(
            q, p, g.deviation(mean, 1), noise_floor=DEVIATION_NOISE, abs_floor=1e-14 * math.sqrt(var)
        )
        centre = mean + shift
        var, vnote = expect(q, p, g.deviation(centre, 2), noise_floor=DEVIATION_NOISE)
    return mean, note, centre, var, vnote


def _moment_note(what: str, note: str) -> str:
    """The note on a moment: a :class:`Message` (``why`` holds the reason), or ''."""
    if note == OVERFLOW_NOTE:
        return Message("{what} is reported as inf: {why}", what=what, why=note)
    return Message("{what} is infinite: {why}", what=what, why=note) if note else ""


@docfill(**SECTIONS)
def estimator_moments(
    key: str, q: Distribution, p: Distribution, lam: float | None = None
) -> Moments:
    r"""Exact mean and variance of one estimator's per-sample value, :math:`x \sim q`.

    .. math:: \mu = \mathbb{E}_q[k(\log r)], \qquad \sigma^2 = \mathbb{E}_q[(k(\log r) - \mu)^2]

    For the unbiased estimators :math:`\mu` is the KL they target.  The variance
    is integrated directly as :math:`\mathbb{E}_q[(k-\mu)^2]`.  An infinite
    variance (e.g. :math:`k_3` when :math:`\mathbb{E}_q[r^2] = \infty`, as for
    :math:`q = \mathcal N(0,1)`, :math:`p = \mathcal N(0,\sigma^2)` with
    :math:`\sigma \ge \sqrt2`) is returned as ``inf`` with a note; finiteness
    is decided from the tail exponents (:mod:`kl_core.estimation.tails`).  The moments are
    accurate to about 1e-12 relative, also where the mean dwarfs the spread
    (densities a million scales apart: the deviations are then centred on a
    refined mean and evaluated around :math:`\log r` at the densities'
    centres); where even that is out of reach in double precision the
    quadrature stops at 1e-6, and beyond that a
    :class:`~kl_core.estimation._quadrature.QuadratureError` says so.

    %(estimator_pair_lam_params)s

    Returns
    -------
    Moments
        ``mean``, ``var`` and a ``note`` saying why a moment is infinite; where the
        variance is finite but past the largest double (``var`` is ``inf``), ``log_var``
        holds its log (:func:`log_estimator_variance`), so that the standard deviation
        is known wherever it fits a double.

    %(schulman_references)s

    Examples
    --------
    >>> m = estimator_moments("k3", Gaussian(0, 1), Gaussian(1, 1))
    >>> round(m.var, 10) == round(math.e - 2, 10)
    True
    """
    lam = _check_key_lam(key, lam)
    _check_pair(q, p)
    info = est.ESTIMATORS[key]
    mean, note, _, var, vnote = _centred(key, q, p, lam)
    if not math.isfinite(mean):
        return Moments(mean, math.inf, note)
    log_var = _overflowed_log_var(key, q, p, lam) if vnote == OVERFLOW_NOTE else math.nan
    return Moments(mean, max(var, 0.0), _moment_note(f"Var({info.name})", vnote), log_var)


# ------------------------------------------------------------ log Var, past a double


def _signed_log_sum(logs: list[np.ndarray], signs: list[np.ndarray]) -> np.ndarray:
    """log|Σ sᵢ e^{lᵢ}|, term by term, with no exp of a large l (−inf where every term is 0)."""
    big, sgn = np.stack(logs), np.stack(signs)
    top = np.max(big, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        out = safe + np.log(np.abs(np.sum(sgn * np.exp(big - safe), axis=0)))
    out = np.where(top == -np.inf, -np.inf, out)
    return np.where(top == np.inf, np.inf, out)


def _log_abs_expansion(poly: ExpPoly, t: np.ndarray) -> np.ndarray:
    r""":math:`\log|\sum_k P_k(t)\,e^{kt}|` in log space: :math:`\log|P_k(t)| + kt` per term, then summed.

    :math:`P_k(t) = t^d (c_d + c_{d-1}/t + \dots)`, so neither :math:`e^t` nor :math:`t^d` is formed.
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        sign_t, logabs_t = np.sign(t), np.log(np.abs(t))
        inv_t = sign_t * np.exp(-logabs_t)
        logs, signs = [], []
        for k, c in poly.terms:
            deg = len(c) - 1
            horner = np.full_like(t, c[-1])
            for j in range(deg - 1, -1, -1):
                horner = horner * inv_t + c[j]
            logs.append(deg * logabs_t + np.log(np.abs(horner)) + k * t)
            signs.append(np.sign(horner) * sign_t**deg)
    return _signed_log_sum(logs, signs)


def _log_abs_deviation(key: str, lam: float, centre: float, t: np.ndarray) -> np.ndarray:
    r""":math:`\log|k(t) - \mu|` at :math:`t = \log r`, also where :math:`k` itself overflows a double.

    Where :math:`k(t)` is a double it is evaluated as the estimator (series near
    :math:`t = 0`); beyond, from the integrand's expansion
    :math:`k - \mu = A(t)\,e^t + B(t)`, in log space (:func:`_log_abs_expansion`).
    """
    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        direct = est.evaluate(key, t, lam=lam) - centre
        out = np.log(np.abs(direct))
    far = ~np.isfinite(direct)
    if far.any():
        g = estimator_integrand(key, lam)
        tf = t[far]
        out[far] = np.where(
            tf > 0.0, _log_abs_expansion(g.up.shift(centre), tf), _log_abs_expansion(g.down.shift(centre), tf)
        )
    return out


def _log_central_moment(
    key: str, q: Distribution, p: Distribution, lam: float, centre: float, power: int = 2
) -> float:
    r"""The log of a central moment, :math:`\log\mathbb{E}_q[|k - \mu|^n]`, :math:`\mu` = ``centre``,
    :math:`n` = ``power`` (2: the variance; 4: the kurtosis's numerator), with no value past a double
    or below the smallest one.

    Categorical: a log-sum-exp of :math:`\log q_k + n\log|k(t_k) - \mu|`.  Continuous:
    :func:`~kl_core.estimation._expectation.log_integral` of :math:`\log q + n\log|k - \mu|`.
    """
    if q.discrete:
        lq, t = q.log_probs, log_ratio_table(q, p)
        keep = np.isfinite(lq)  # q_k = 0: no weight
        terms = lq[keep] + power * _log_abs_deviation(key, lam, centre, t[keep])
        top = float(np.max(terms))
        if not math.isfinite(top):
            return top
        return top + math.log(float(np.sum(np.exp(terms - top))))

    def log_f(x: np.ndarray) -> np.ndarray:
        return q.logpdf(x) + power * _log_abs_deviation(key, lam, centre, log_ratio(p, q, x))

    return log_integral(log_f, q, p, marks=[loc for loc, _s in q.centres() + p.centres()])


@functools.lru_cache(maxsize=256)
def _overflowed_log_var(key: str, q: Distribution, p: Distribution, lam: float) -> float:
    """:func:`_log_central_moment` about the core's mean, for a ``Var`` that overflowed (nan if the
    quadrature fails: ``log_var`` is then left unfilled, as before)."""
    _, _, centre, _, _ = _centred(key, q, p, lam)
    try:
        return _log_central_moment(key, q, p, lam, centre)
    except QuadratureError:
        return math.nan


@docfill(**SECTIONS)
def log_estimator_variance(
    key: str, q: Distribution, p: Distribution, lam: float | None = None
) -> float:
    r"""The natural log of an estimator's per-sample variance, finite wherever the variance is.

    .. math:: \log\mathrm{Var}_q(k) = \log\mathbb{E}_q[(k - \mu)^2]
              = M + \log\int e^{h(x) - M}\,dx, \qquad h = \log q + 2\log|k - \mu|,
              \quad M = \max_x h(x)

    Where the variance fits in a double this is the log of
    :func:`estimator_moments`' ``var``.  Where it is finite but past the largest double
    (``var`` is ``inf``: :math:`q = \mathcal N(0,1)`, :math:`p = \mathcal N(30,1)` gives
    :math:`\mathrm{Var}(k_3) = e^{\mu^2} - 1 - \mu^2 = e^{900} - 901`) it is worked out in
    log space, and so is the standard deviation, :math:`e^{450}`, which fits.  So is a variance
    below the smallest normal double (Var(k2) ≈ μ⁴/2 for Gaussians μ = 1e-90 apart underflows to 0,
    its log is −829.6).  Every
    estimator whose values can pass a double has the form

    .. math:: k - \mu = A(t)\,e^t + B(t), \qquad t = \log r

    (:math:`k_3`: :math:`A = 1`, :math:`B = -1 - t - \mu`; :math:`k_\lambda`:
    :math:`A = \lambda`, :math:`B = -\lambda - t - \mu`; :math:`k_3` of
    :math:`\mathrm{KL}[p\|q]`, :math:`r\log r - (r - 1)`: :math:`A = t - 1`,
    :math:`B = 1 - \mu`), so :math:`\log|k - \mu|` is the log of a sum of two terms,
    each taken as a log without forming :math:`e^t`.  :math:`e^{h - M}` is then
    integrated around the peak :math:`M` and :math:`M` added back
    (:func:`kl_core.estimation._expectation.log_integral`, as for
    :func:`kl_core.estimation.control_variates.log_second_moment`); a categorical pair is a
    log-sum-exp.  Accurate to about 1e-12 relative in the variance, i.e. 1e-12 absolute in its
    log (or 1e-16 of the log, where that is larger: the rounding of :math:`\log r`).

    %(estimator_pair_lam_params)s

    Returns
    -------
    float
        :math:`\log\mathrm{Var}_q(k)`; ``-inf`` where the variance is 0 (``p == q``),
        ``inf`` where it (or the mean) diverges.  A
        :class:`~kl_core.estimation._quadrature.QuadratureError` where the integral cannot
        be resolved in double precision (as for :func:`estimator_moments`).

    %(schulman_references)s

    Examples
    --------
    >>> from kl_core.estimation.distributions import Gaussian
    >>> estimator_moments("k3", Gaussian(0, 1), Gaussian(30, 1)).var
    inf
    >>> round(log_estimator_variance("k3", Gaussian(0, 1), Gaussian(30, 1)), 9)  # log(e^900 − 901)
    900.0
    >>> round(log_estimator_variance("k3", Gaussian(0, 1), Gaussian(1, 1)), 12) == round(math.log(math.e - 2), 12)
    True
    """
    lam = _check_key_lam(key, lam)
    _check_pair(q, p)
    mean, _, centre, var, vnote = _centred(key, q, p, lam)
    if not math.isfinite(mean) or (math.isinf(var) and vnote != OVERFLOW_NOTE):
        return math.inf  # the mean or the variance diverges
    if vnote == OVERFLOW_NOTE:
        log_var = _overflowed_log_var(key, q, p, lam)
        if math.isnan(log_var):
            raise QuadratureError("the variance is past a double, and its log could not be integrated",
                                  math.inf, math.inf)
        return log_var
    if var >= SMALLEST_NORMAL or (var == 0.0 and mean == 0.0):  # p = q gives 0 exactly
        return math.log(var) if var > 0.0 else -math.inf
    try:  # below the smallest normal double: its digits are lost, its log is not
        log_var = _log_central_moment(key, q, p, lam, centre)
    except QuadratureError:
        log_var = math.nan
    return log_var if math.isfinite(log_var) or var == 0.0 else math.log(var)


@docfill(**SECTIONS)
def estimator_fourth_moment(
    key: str, q: Distribution, p: Distribution, lam: float | None = None
) -> tuple[float, str]:
    r"""The exact fourth central moment of one estimator's per-sample value, :math:`x \sim q`.

    .. math:: m_4 = \mathbb{E}_q[(k(\log r) - \mu)^4], \qquad \mu = \mathbb{E}_q[k(\log r)]

    It decides whether a sample standard deviation can be trusted: the sample
    variance of :math:`N` values has relative standard error
    :math:`\sqrt{(\kappa - 1)/N}` with :math:`\kappa = m_4/\sigma^4`
    (:mod:`kl_core.estimation.reliability`).  Finiteness is decided from the tail
    exponents, as for the variance: e.g. :math:`k_3` for
    :math:`q = \mathcal N(0,1)`, :math:`p = \mathcal N(0,\sigma^2)` needs
    :math:`\mathbb{E}_q[r^4] < \infty`, i.e. :math:`\sigma < 2/\sqrt3`.

    %(estimator_pair_lam_params)s

    Returns
    -------
    (float, str)
        :math:`m_4` (``inf`` if it diverges or overflows a double) and a note
        saying why it is infinite (empty if finite).  Accurate to about 1e-12
        relative, or to 1e-6 where the rounding of :math:`\log r` itself
        limits the quadrature (see :func:`estimator_moments`).

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html;
    H. Cramér, *Mathematical Methods of Statistics* (1946), ch. 27.

    Examples
    --------
    >>> m4, _ = estimator_fourth_moment("k1", Gaussian(0, 1), Gaussian(1, 1))
    >>> round(m4, 10)  # log r ~ N(−½, 1): m4 = 3σ⁴ = 3
    3.0
    """
    lam = _check_key_lam(key, lam)
    _check_pair(q, p)
    info = est.ESTIMATORS[key]
    mean, note, centre, _, _ = _centred(key, q, p, lam)
    if not math.isfinite(mean):
        return math.inf, note
    g = estimator_integrand(key, lam)
    m4, note4 = expect(q, p, g.deviation(centre, 4), noise_floor=DEVIATION_NOISE)
    return max(m4, 0.0), _moment_note(f"E[({info.name} − mean)⁴]", note4)


@docfill(**SECTIONS)
def estimator_kurtosis_log_space(
    key: str, q: Distribution, p: Distribution, lam: float | None = None
) -> float:
    r"""The kurtosis of one estimator's per-sample value, from its moments' logs.

    .. math:: \kappa = \frac{m_4}{\sigma^4}
              = \exp\bigl(\log\mathbb{E}_q[(k - \mu)^4] - 2\log\mathbb{E}_q[(k - \mu)^2]\bigr)

    For pairs so close that :math:`\sigma^4` (or :math:`\sigma^2` itself) is below the smallest
    normal double, where :func:`estimator_fourth_moment` divided by :func:`estimator_moments`' variance
    gives 0 or NaN for a figure that is at least 1: :math:`\log|k - \mu|` is a modest number there,
    so both logs are integrated as for :func:`log_estimator_variance`.

    %(estimator_pair_lam_params)s

    Returns
    -------
    float
        :math:`\kappa \ge 1`; ``nan`` where every value equals the mean (:math:`\sigma = 0`), the
        mean is infinite, or the quadrature cannot resolve a log.

    References
    ----------
    H. Cramér, *Mathematical Methods of Statistics* (1946), ch. 27;
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> round(estimator_kurtosis_log_space("k1", Gaussian(0, 1), Gaussian(1e-100, 1)), 9)  # k1 ~ normal
    3.0
    """
    lam = _check_key_lam(key, lam)
    _check_pair(q, p)
    mean, _, centre, _, _ = _centred(key, q, p, lam)
    if not math.isfinite(mean):
        return math.nan
    try:
        log_m4 = _log_central_moment(key, q, p, lam, centre, power=4)
        log_var = _log_central_moment(key, q, p, lam, centre)
    except QuadratureError:
        return math.nan
    if not (math.isfinite(log_m4) and math.isfinite(log_var)):
        return math.nan
    return math.exp(log_m4 - 2.0 * log_var)


@dataclass(frozen=True)
class LambdaStar:
    r"""The variance-optimal :math:`\lambda^*` of :math:`k_\lambda`, or why it does not exist.

    Attributes
    ----------
    value : float or None
        :math:`\lambda^*`; None where every :math:`\lambda` has infinite variance.
    note : str
        Empty, or one sentence saying why :math:`\lambda^*` is undefined, 0 or not resolved
        (a :class:`~kl_core.validation.Message`, which the app translates).
    resolved : bool
        False where :math:`\lambda^*` divides figures below the smallest normal double
        (:func:`kl_core.numbers.unresolved`): ``value`` is then the quotient as computed, whose
        digits are lost (1.111 for Gaussians 1e-161 apart, where it is 1).
    """

    value: float | None
    note: str = ""
    resolved: bool = True

    @property
    def defined(self) -> bool:
        """True if some λ has a finite variance, so that λ* exists."""
        return self.value is not None


def _var_log_r_note(q: Distribution, p: Distribution) -> str:
    """Why Var_q(log r) is infinite (from the tails alone), or ''."""
    if q.discrete:
        return ""
    kl_note = tail_note(q, p, divergence_integrand("kl_qp"))
    if kl_note:
        return Message("{what} is infinite: {why}", what="KL[q‖p] = E_q[−log r]", why=kl_note)
    var_note = tail_note(q, p, estimator_integrand("k1", 0.0).deviation(0.0, 2))
    return Message("{what} is infinite: {why}", what="Var(log r)", why=var_note) if var_note else ""


@docfill(**SECTIONS)
def lambda_star(q: Distribution, p: Distribution) -> LambdaStar:
    r"""The variance-optimal coefficient of :math:`k_\lambda = -\log r + \lambda(r-1)`, with a reason.

    .. math:: \lambda^* = \frac{\mathrm{Cov}_q(\log r, r)}{\mathrm{Var}_q(r)}
              = \frac{\mathrm{KL}[p\|q] + \mathrm{KL}[q\|p]}{\chi^2(p\,\|\,q)}

    since :math:`\mathbb{E}_q[r] = 1`, :math:`\mathbb{E}_q[r\log r] = \mathrm{KL}[p\|q]`,
    :math:`\mathbb{E}_q[\log r] = -\mathrm{KL}[q\|p]` and
    :math:`\mathrm{Var}_q(r) = \chi^2(p\|q)`.  For :math:`q = \mathcal N(0,1)`,
    :math:`p = \mathcal N(\mu,1)` it is :math:`\mu^2/(e^{\mu^2}-1)`.

    Where :math:`\mathrm{Var}_q(\log r) = \infty` (or the KL itself is), every
    :math:`k_\lambda` has infinite variance: adding :math:`\lambda(r-1)` cannot
    cancel the :math:`\log r` part, because where :math:`r \to 0` it is
    :math:`-\log r` alone, and where :math:`r \to \infty` the term
    :math:`\lambda r` dominates :math:`\log r` (so its variance is infinite as
    soon as that of :math:`\log r` is).  Then no :math:`\lambda` helps and
    :math:`\lambda^*` does not exist.

    %(pair_params)s

    Returns
    -------
    LambdaStar
        ``value`` = :math:`\lambda^*`, or None (with a ``note``) where every
        :math:`\lambda` has infinite variance.  When :math:`\mathrm{Var}_q(r) = \infty`
        but :math:`\mathrm{Var}_q(\log r)` is finite only :math:`\lambda = 0`
        has a finite variance, so 0 is returned (with a note); when ``p == q``
        every :math:`\lambda` is optimal and 1 is returned.  ``resolved`` is False (with
        a note) where the quotient divides figures below the smallest normal double.

    %(schulman_references)s

    Examples
    --------
    >>> from kl_core.estimation.distributions import StudentT
    >>> lambda_star(StudentT(3), Gaussian(0, 1)).value is None
    True
    """
    _check_pair(q, p)
    why = _var_log_r_note(q, p)
    if why:
        return LambdaStar(
            None,
            Message(
                "λ* is undefined: {why}, so every kλ = −log r + λ(r − 1) has infinite variance "
                "and no λ helps",
                why=why,
            ),
        )
    chi2, chi2_note = expect(q, p, divergence_integrand("pearson"))
    if math.isinf(chi2) and chi2_note == OVERFLOW_NOTE:
        return LambdaStar(0.0, CHI2_OVERFLOW_NOTE)
    if math.isinf(chi2):
        return LambdaStar(
            0.0,
            Message("χ²(p‖q) = Var_q(r) is infinite, so only λ = 0 (k1) has a finite variance"),
        )
    if chi2 == 0.0:  # normal(1e-200, 1) against normal(0, 1): χ² = 1e-400, 0 in a double
        return LambdaStar(1.0, Message("p = q: every λ gives variance 0") if p == q else
                          Message("p = q to double precision: every λ gives variance 0"))
    kl_pq, kl_qp = kl(p, q), kl(q, p)
    tiny = [f"{name} = {x:.3g}" for name, x in (("χ²(p‖q)", chi2), ("KL[p‖q]", kl_pq), ("KL[q‖p]", kl_qp))
            if unresolved(x)]
    if tiny:
        return LambdaStar(
            (kl_pq + kl_qp) / chi2,
            Message(
                "λ* = (KL[p‖q] + KL[q‖p]) / χ²(p‖q) is not resolved: it divides figures below the "
                "smallest normal double, where a double keeps fewer significant digits ({figures})",
                figures=", ".join(tiny),
            ),
            resolved=False,
        )
    return LambdaStar((kl_pq + kl_qp) / chi2)


@docfill(**SECTIONS)
def optimal_lambda(q: Distribution, p: Distribution) -> float | None:
    r"""The variance-optimal coefficient of :math:`k_\lambda = -\log r + \lambda(r-1)`.

    .. math:: \lambda^* = \frac{\mathrm{Cov}_q(\log r, r)}{\mathrm{Var}_q(r)}
              = \frac{\mathrm{KL}[p\|q] + \mathrm{KL}[q\|p]}{\chi^2(p\,\|\,q)}

    :func:`lambda_star` gives the same value with the reason when it is
    undefined or 0.

    %(pair_params)s

    Returns
    -------
    float or None
        :math:`\lambda^*`; None where every :math:`\lambda` has infinite
        variance (:math:`\mathrm{Var}_q(\log r) = \infty`).  When
        :math:`\mathrm{Var}_q(r) = \infty` every :math:`\lambda \ne 0` has
        infinite variance, so 0 is returned; when ``p == q`` every
        :math:`\lambda` is optimal and 1 is returned.

    %(schulman_references)s

    Examples
    --------
    >>> round(optimal_lambda(Gaussian(0, 1), Gaussian(1, 1)), 12) == round(1 / (math.e - 1), 12)
    True
    """
    return lambda_star(q, p).value
