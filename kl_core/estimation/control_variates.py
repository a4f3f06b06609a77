r"""The control-variate family :math:`k_\lambda = -\log r + \lambda(r - 1)`.

Because :math:`\mathbb{E}_q[r - 1] = 0`, every :math:`k_\lambda` is unbiased for
:math:`\mathrm{KL}[q\|p]`, and its variance is a parabola in :math:`\lambda`:

.. math:: \mathrm{Var}_q(k_\lambda) = \mathrm{Var}_q(\log r)
          - 2\lambda\,\big(\mathrm{KL}[p\|q] + \mathrm{KL}[q\|p]\big)
          + \lambda^2\,\chi^2(p\,\|\,q),

using :math:`\mathrm{Cov}_q(\log r, r) = \mathrm{KL}[p\|q] + \mathrm{KL}[q\|p]` and
:math:`\mathrm{Var}_q(r) = \chi^2(p\|q)`.  Its minimum is at
:math:`\lambda^* = (\mathrm{KL}[p\|q] + \mathrm{KL}[q\|p]) / \chi^2(p\|q)`;
Schulman's k3 takes :math:`\lambda = 1`, the only value that keeps every sample
non-negative.  Where :math:`\mathrm{Var}_q(\log r) = \infty` every
:math:`\lambda` has infinite variance and :math:`\lambda^*` does not exist
(:func:`kl_core.estimation.exact.lambda_star`).

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from kl_core._docfill import docfill
from kl_core.estimation._docstrings import SECTIONS
from kl_core.estimation._expectation import log_integral
from kl_core.estimation.distributions import Distribution
from kl_core.estimation.exact import (
    CHI2_OVERFLOW_NOTE,
    estimator_moments,
    f_divergence,
    kl,
    lambda_star,
)
from kl_core.estimation.paths import get_path
from kl_core.validation import as_float_array, check_finite

__all__ = ["GainCurve", "LambdaParabola", "gain_along_path", "lambda_parabola",
           "log_second_moment", "ratio_takes_at_most_two_values"]


@dataclass(frozen=True)
class LambdaParabola:
    r"""The exact variance of :math:`k_\lambda` as a function of :math:`\lambda`.

    Attributes
    ----------
    var_log_r : float
        :math:`\mathrm{Var}_q(\log r)`, the variance of k1 (:math:`\lambda = 0`).
    cov : float
        :math:`\mathrm{Cov}_q(\log r, r) = \mathrm{KL}[p\|q] + \mathrm{KL}[q\|p]`.
    var_r : float
        :math:`\mathrm{Var}_q(r) = \chi^2(p\|q)`.
    true_kl : float
        :math:`\mathrm{KL}[q\|p]`, the common mean.
    lam_star : float
        The variance-optimal :math:`\lambda^*`; nan where it does not exist
        (every :math:`\lambda` has infinite variance).
    lam_star_note : str
        Empty, or why :math:`\lambda^*` is undefined (or 0).
    direct_var_k3, direct_var_optimal : float or None
        :math:`\mathrm{Var}(k_3)` and :math:`\mathrm{Var}(k_{\lambda^*})` integrated directly,
        where the parabola's three terms cancel to rounding noise (see :data:`CANCELLATION`);
        None where the parabola is accurate.
    resolved : bool
        False where double precision cannot pin down :math:`\lambda^*` and
        :math:`\mathrm{Var}(k_{\lambda^*})` (see :func:`lambda_parabola`): ``gain`` is then
        NaN, and ``lam_star`` and ``var_optimal`` are not to be shown as values.
    log_second_moment : float
        :math:`\log \mathbb{E}_q[r^2] = \log(1 + \chi^2)` (:func:`log_second_moment`), finite
        where :math:`\chi^2` is finite but past the largest double (``var_r`` is then ``inf``);
        ``inf`` where :math:`\chi^2` diverges.
    """

    var_log_r: float
    cov: float
    var_r: float
    true_kl: float
    lam_star: float
    lam_star_note: str = ""
    direct_var_k3: float | None = None
    direct_var_optimal: float | None = None
    resolved: bool = True
    log_second_moment: float = math.nan

    @property
    def lam_star_defined(self) -> bool:
        """True if some λ has a finite variance, so that λ* exists."""
        return not math.isnan(self.lam_star)

    def variance(self, lam: ArrayLike) -> np.ndarray:
        r""":math:`\mathrm{Var}_q(k_\lambda)` at each :math:`\lambda` (``inf`` where infinite).

        Parameters
        ----------
        lam : array_like
            Values of :math:`\lambda`.

        Returns
        -------
        numpy.ndarray
            The exact variance.
        """
        lam_arr = as_float_array(lam, "lam")
        if math.isinf(self.var_r) or math.isinf(self.cov):
            return np.where(lam_arr == 0.0, self.var_log_r, np.inf)
        out = self.var_log_r - 2.0 * lam_arr * self.cov + lam_arr**2 * self.var_r
        return np.maximum(out, 0.0)

    @property
    def log_lam_star(self) -> float:
        r""":math:`\log\lambda^*`, also where :math:`\chi^2` is past a double (``lam_star`` is 0 there).

        There :math:`\lambda^* = \mathrm{Cov}/\chi^2` with :math:`\chi^2 = \mathbb{E}_q[r^2] - 1`
        equal to :math:`\mathbb{E}_q[r^2]` to double precision, so
        :math:`\log\lambda^* = \log\mathrm{Cov} - \log\mathbb{E}_q[r^2]`.  NaN where
        :math:`\lambda^*` is undefined or not positive.
        """
        if math.isinf(self.var_r) and math.isfinite(self.log_second_moment):
            return math.log(self.cov) - self.log_second_moment if self.cov > 0.0 else math.nan
        return math.log(self.lam_star) if self.lam_star > 0.0 else math.nan

    @property
    def log_lam_limit(self) -> float:
        r"""Where :math:`\chi^2` is past a double, the log of the :math:`|\lambda|` below which
        :math:`\mathrm{Var}(k_\lambda)` fits in a double; ``inf`` elsewhere.

        .. math:: \log|\lambda|_{\max} = \tfrac12\left(\log x_{\max} - \log\mathbb{E}_q[r^2]\right)

        with :math:`x_{\max}` the largest double: :math:`\lambda^2\mathbb{E}_q[r^2]`, the
        parabola's largest term, fits below it (the other terms are at most
        :math:`\mathrm{Var}(\log r) + 2|\lambda|\,\mathrm{Cov}`).
        """
        if math.isinf(self.var_r) and math.isfinite(self.log_second_moment):
            return 0.5 * (math.log(sys.float_info.max) - self.log_second_moment)
        return math.inf

    def variance_at(self, lam: float) -> float:
        r""":math:`\mathrm{Var}_q(k_\lambda)` at one :math:`\lambda`, finite wherever it fits a double.

        Unlike :meth:`variance`, which is ``inf`` for every :math:`\lambda \ne 0` where
        :math:`\chi^2` is past a double, this sums
        :math:`\mathrm{Var}(\log r) - 2\lambda\,\mathrm{Cov} + \lambda^2(e^{L} - 1)`,
        :math:`L = \log\mathbb{E}_q[r^2]`, with :math:`\lambda^2 e^{L} = e^{2\log|\lambda| + L}`.

        Parameters
        ----------
        lam : float
            The coefficient :math:`\lambda`.

        Returns
        -------
        float
            The exact variance; ``inf`` where it is infinite or past the largest double.
        """
        lam = check_finite(lam, "lam")
        if not (math.isinf(self.var_r) and math.isfinite(self.log_second_moment)) or lam == 0.0:
            return float(self.variance(lam))
        if math.log(abs(lam)) > self.log_lam_limit:
            return math.inf
        out = self.var_log_r - 2.0 * lam * self.cov + (math.exp(2.0 * math.log(abs(lam)) + self.log_second_moment)
                                                      - lam * lam)
        return max(out, 0.0)

    @property
    def var_k3(self) -> float:
        """The variance at :math:`\\lambda = 1` (Schulman's k3)."""
        if self.direct_var_k3 is not None:
            return self.direct_var_k3
        return float(self.variance(1.0))

    @property
    def var_optimal(self) -> float:
        """The variance at :math:`\\lambda^*` (``inf`` where λ* does not exist)."""
        if not self.lam_star_defined:
            return math.inf
        if self.direct_var_optimal is not None:  # 0 where k_λ* is constant to rounding
            return min(self.direct_var_optimal, self.var_k3, self.var_log_r)  # a minimum, to rounding too
        return float(self.variance(self.lam_star))

    @property
    def gain(self) -> float:
        r""":math:`\mathrm{Var}(k_3) / \mathrm{Var}(k_{\lambda^*}) \ge 1`: how much λ* beats λ = 1.

        NaN when ``p == q``: both variances vanish, and the limit as ``p → q``
        depends on the direction of approach (1 for a mean shift, about 2.3
        for a Gaussian scale change).  NaN also where λ* does not exist, and
        where it is not ``resolved`` (p so close to q that rounding decides it).
        """
        if not self.resolved:
            return math.nan
        if self.var_optimal == 0.0:
            return math.nan if self.var_k3 == 0.0 else math.inf
        return self.var_k3 / self.var_optimal


@docfill(**SECTIONS)
def lambda_parabola(q: Distribution, p: Distribution) -> LambdaParabola:
    r"""Exact variance of :math:`k_\lambda` as a parabola in :math:`\lambda`.

    .. math:: \mathrm{Var}_q(k_\lambda) = \mathrm{Var}_q(\log r) - 2\lambda\,\mathrm{Cov}_q(\log r, r)
              + \lambda^2\,\mathrm{Var}_q(r)

    Near its minimum the parabola is a small difference of large terms, so there
    :math:`V_3 = \mathrm{Var}(k_3)` and :math:`\hat V = \mathrm{Var}(k_{\hat\lambda})`, at the
    computed :math:`\hat\lambda = \mathrm{Cov}/\chi^2`, are integrated directly.  Since
    :math:`\mathrm{Var}(k_\lambda) = V^* + \chi^2 (\lambda - \lambda^*)^2`, an error
    :math:`\Delta = \hat\lambda - \lambda^*` shows in

    .. math:: d = V_3 - \hat V - \chi^2 (1 - \hat\lambda)^2 = 2\chi^2 (1 - \hat\lambda)\,\Delta,
              \qquad \hat V - V^* = \chi^2\Delta^2 = \frac{d^2}{4\chi^2 (1-\hat\lambda)^2}.

    Where that excess exceeds :data:`RESOLVED_SHARE` of :math:`\hat V` (or cannot be checked:
    :math:`\hat\lambda = 1`, a variance rounded to 0), ``resolved`` is False: near ``p = q``
    the rounding of :math:`\log r = \log p - \log q` (about 1e-16) is a relative error of
    about 1e-16 / sd(log r) in the coefficients.  A :math:`\hat V` rounded to 0 is kept only
    where r takes at most two values (a categorical pair), where :math:`k_{\lambda^*}` is
    constant: a straight line meets the curve :math:`\log r` in at most two points.

    %(pair_params)s

    Returns
    -------
    LambdaParabola
        The three coefficients, the true KL and :math:`\lambda^*` (nan, with
        ``lam_star_note``, where every :math:`\lambda` has infinite variance).

    %(schulman_references)s

    Examples
    --------
    >>> from kl_core.estimation.distributions import Gaussian
    >>> par = lambda_parabola(Gaussian(0, 1), Gaussian(1, 1))
    >>> round(par.var_k3, 12) == round(math.e - 2, 12)
    True
    >>> lambda_parabola(Gaussian(0, 1), Gaussian(0, 1.00000001)).resolved
    False
    """
    m1 = estimator_moments("k1", q, p)
    star = lambda_star(q, p)
    chi2 = f_divergence("pearson", p, q)
    par = LambdaParabola(
        var_log_r=m1.var,
        cov=kl(p, q) + kl(q, p),
        var_r=chi2,
        true_kl=m1.mean,
        lam_star=math.nan if star.value is None else star.value,
        lam_star_note=star.note,
        log_second_moment=(math.log1p(chi2) if math.isfinite(chi2)
                           else log_second_moment(q, p) if star.note == CHI2_OVERFLOW_NOTE
                           else math.inf),
    )
    if not (math.isfinite(par.var_log_r) and par.var_log_r > 0.0 and math.isfinite(par.var_r)):
        return par
    # Near its minimum the parabola is a small difference of large terms: integrate instead.
    direct = {}
    if par.var_k3 < CANCELLATION * par.var_log_r:
        direct["direct_var_k3"] = _rounded_to_zero(estimator_moments("k3", q, p).var, par.var_log_r)
    if par.lam_star_defined and par.var_optimal < CANCELLATION * par.var_log_r:
        v = estimator_moments("k_lambda", q, p, lam=par.lam_star).var
        direct["direct_var_optimal"] = _rounded_to_zero(v, par.var_log_r)
        v3 = direct.get("direct_var_k3", par.var_k3)
        direct["resolved"] = _resolved(v3, direct["direct_var_optimal"], par.var_r, par.lam_star, q, p)
    return replace(par, **direct) if direct else par


#: Where the parabola's value falls below this share of Var(log r), its terms have cancelled
#: most of their digits, and :func:`lambda_parabola` integrates the variance directly.
CANCELLATION = 1e-6
#: A directly integrated variance below this share of Var(log r) is rounding noise: the
#: estimator is constant (r takes two values, where log r is linear in r; or p = q).
ZERO_TO_ROUNDING = 1e-24
#: Var(k_λ*) is ``resolved`` when the excess that the error of the computed λ* adds to it is at
#: most this share of it (the gain is then right to about 6 digits).
RESOLVED_SHARE = 1e-6


def _rounded_to_zero(var: float, var_log_r: float) -> float:
    return 0.0 if var < ZERO_TO_ROUNDING * var_log_r else var


def _resolved(v3: float, v_hat: float, chi2: float, lam_hat: float, q: Distribution,
              p: Distribution) -> bool:
    """Whether V̂ = Var(k_λ̂) is Var(k_λ*) to :data:`RESOLVED_SHARE` (see :func:`lambda_parabola`)."""
    if v3 == 0.0:  # Var(k3) > 0 for p ≠ q: rounded to 0, nothing to compare with
        return False
    if v_hat == 0.0:
        return ratio_takes_at_most_two_values(q, p)
    a = 1.0 - lam_hat
    if a == 0.0:
        return False
    d = v3 - v_hat - chi2 * a * a
    return d * d / (4.0 * chi2 * a * a) <= RESOLVED_SHARE * v_hat


@docfill(**SECTIONS)
def log_second_moment(q: Distribution, p: Distribution) -> float:
    r""":math:`\log\mathbb{E}_q[r^2] = \log\int p^2/q = \log(1 + \chi^2(p\|q))`, in log space.

    Finite wherever :math:`\chi^2` is, including where :math:`\chi^2` is past the largest
    double (Gaussians of one width more than 26.6 widths apart): the integrand
    :math:`e^{g(x)}`, :math:`g = 2\log p - \log q`, is integrated as :math:`e^{g - M}` around
    its peak :math:`M = \max g` (found from every pair of the densities' centres), and
    :math:`M` added back (:func:`kl_core.estimation._expectation.log_integral`, which
    :func:`kl_core.estimation.exact.log_estimator_variance` uses too).  A categorical pair is a
    log-sum-exp.

    %(pair_params)s

    Returns
    -------
    float
        The log second moment; ``inf`` where :math:`\chi^2` diverges.

    %(schulman_references)s

    Examples
    --------
    >>> from kl_core.estimation.distributions import Gaussian
    >>> round(log_second_moment(Gaussian(0, 1), Gaussian(30, 1)), 9)  # e^{μ²}
    900.0
    """
    for name, d in (("q", q), ("p", p)):
        if not isinstance(d, Distribution):
            raise ValueError(f"{name} must be a kl_core Distribution, got {type(d).__name__}")
    if q.discrete != p.discrete:
        raise ValueError("q and p must both be continuous or both be categorical")
    if q.discrete:
        lq, lp = q.log_probs, p.log_probs
        if lq.shape != lp.shape:
            raise ValueError(f"p has {lp.size} categories but q has {lq.size}; they must match")
        g = np.where(np.isneginf(lq), -np.inf, 2.0 * lp - lq)
        top = float(np.max(g))
        return top + math.log(float(np.sum(np.exp(g - top))))
    chi2 = f_divergence("pearson", p, q)
    if math.isfinite(chi2):
        return math.log1p(chi2)
    if lambda_star(q, p).note != CHI2_OVERFLOW_NOTE:
        return math.inf  # χ² diverges (or Var(log r) does, and with it E_q[r²])

    def g(x: np.ndarray) -> np.ndarray:
        return 2.0 * p.logpdf(x) - q.logpdf(x)

    return log_integral(g, q, p)


@docfill(**SECTIONS)
def ratio_takes_at_most_two_values(q: Distribution, p: Distribution) -> bool:
    r"""Whether :math:`r = p(x)/q(x)` takes at most two values under :math:`x \sim q`.

    Then :math:`\log r` is a linear function of :math:`r` on its values, so
    :math:`k_{\lambda^*} = -\log r + \lambda^*(r - 1)` is constant and
    :math:`\mathrm{Var}_q(k_{\lambda^*}) = 0` (a straight line meets the curve
    :math:`\log r` in at most two points).  Only a categorical pair can do this:
    the continuous families have smooth densities, whose ratio is constant or
    takes a continuum of values.  Values of :math:`\log r = \log p_k - \log q_k`
    within rounding (64 ulps of the log-probabilities) count as one.

    %(pair_params)s

    Returns
    -------
    bool
        True for a categorical pair with at most two distinct ratios.

    %(schulman_references)s

    Examples
    --------
    >>> from kl_core.estimation.distributions import Categorical, Gaussian
    >>> ratio_takes_at_most_two_values(Categorical((0.0, 0.0, 0.0)), Categorical((1.0, 0.0, 0.0)))
    True
    >>> ratio_takes_at_most_two_values(Gaussian(0, 1), Gaussian(1, 1))
    False
    """
    for name, d in (("q", q), ("p", p)):
        if not isinstance(d, Distribution):
            raise ValueError(f"{name} must be a kl_core Distribution, got {type(d).__name__}")
    if not (q.discrete and p.discrete):
        return False
    lq, lp = q.log_probs, p.log_probs
    if lq.shape != lp.shape:
        raise ValueError(f"p has {lp.size} categories but q has {lq.size}; they must match")
    logr = np.sort(lp - lq)
    tol = 64 * np.finfo(float).eps * max(1.0, float(np.max(np.abs(lq))), float(np.max(np.abs(lp))))
    return int(np.count_nonzero(np.diff(logr) > tol)) + 1 <= 2


@dataclass(frozen=True)
class GainCurve:
    """λ*, and the variances at λ = 1 and λ*, along a path (relative to KL², per sample)."""

    thetas: np.ndarray
    true_kl: np.ndarray
    lam_star: np.ndarray
    var_k3: np.ndarray
    var_optimal: np.ndarray

    @property
    def gain(self) -> np.ndarray:
        r""":math:`\mathrm{Var}(k_3)/\mathrm{Var}(k_{\lambda^*})` at each :math:`\theta`."""
        # 0/0 at θ = 0 is NaN on purpose: the limit depends on the path.
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.var_k3 / self.var_optimal


@docfill(**SECTIONS)
def gain_along_path(path: str, thetas: ArrayLike) -> GainCurve:
    r"""How the advantage of :math:`\lambda^*` over :math:`\lambda = 1` changes with distance.

    For each :math:`\theta`, :math:`q = p_0` and :math:`p = p_\theta` on the path.

    Parameters
    ----------
    path : str
        A key of :data:`kl_core.estimation.paths.PATHS`.
    thetas : array_like
        Positions along the path; at :math:`\theta = 0` the gain is 0/0 (NaN).

    Returns
    -------
    GainCurve
        KL, :math:`\lambda^*`, :math:`\mathrm{Var}(k_3)` and :math:`\mathrm{Var}(k_{\lambda^*})`.

    %(schulman_references)s

    Examples
    --------
    >>> curve = gain_along_path("shift", [0.5, 1.0])
    >>> bool(curve.gain[1] > curve.gain[0] > 1.0)
    True
    """
    pth = get_path(path)
    th = np.atleast_1d(as_float_array(thetas, "thetas"))
    if th.ndim != 1 or th.size == 0:
        raise ValueError("thetas must be a non-empty 1-d array")
    pars = [lambda_parabola(pth.base, pth.at(float(t))) for t in th]
    return GainCurve(
        thetas=th,
        true_kl=np.array([pp.true_kl for pp in pars]),
        lam_star=np.array([pp.lam_star for pp in pars]),
        var_k3=np.array([pp.var_k3 for pp in pars]),
        var_optimal=np.array([pp.var_optimal for pp in pars]),
    )
