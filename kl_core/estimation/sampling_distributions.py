r"""Sampling distributions of Monte Carlo KL estimates, and their standard errors.

An estimate of :math:`\mathrm{KL}` is the mean of :math:`N` per-sample values
:math:`k(x_i)`, :math:`x_i \sim q`.  With the exact per-sample mean
:math:`\mu = \mathbb{E}_q[k]` and variance :math:`\sigma^2 = \mathrm{Var}_q[k]`
(:func:`kl_core.estimation.exact.estimator_moments`), the central limit theorem gives the
normal approximation of that estimate's distribution,

.. math:: \bar k_N = \frac1N \sum_{i=1}^N k(x_i) \;\approx\; \mathcal N\!\left(\mu,\ \frac{\sigma^2}{N}\right),

which is exact in its mean and variance but only approximate in its shape
(the per-sample values are skewed, so :math:`\bar k_N` is too for small
:math:`N`).  When :math:`\sigma^2 = \infty` there is no such approximation.

This module also turns exact moments into Schulman's relative figures
(bias/true and stdev/true) and gives the standard errors of the same figures
computed by Monte Carlo.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; H. Cramér, *Mathematical Methods of
Statistics* (1946), ch. 27 (moments of sample moments).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core._docfill import docfill
from kl_core.estimation.montecarlo import ratio_to_target
from kl_core.validation import as_float_array, check_positive_int

__all__ = [
    "NormalApproximation", "batch_mean_normal", "exact_relative_figures",
    "mc_relative_standard_errors", "mc_standard_errors", "observed_spread",
]

#: Docstring sections several functions here share (filled in by :func:`kl_core._docfill.docfill`).
_DOC_SECTIONS = {
    "values_std_params": r"""Parameters
----------
values : array_like
    Per-sample values (all of them, or a uniform subsample).
std : float
    :math:`\hat\sigma` over all ``count`` values.""",
}

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class NormalApproximation:
    r"""The CLT approximation :math:`\mathcal N(\mu, \sigma^2/N)` of a mean of ``n`` values.

    Attributes
    ----------
    mean : float
        :math:`\mu`, the exact per-sample mean.
    var : float
        :math:`\sigma^2`, the exact per-sample variance (may be ``inf``).
    n : int
        :math:`N`, the number of values averaged.
    """

    mean: float
    var: float
    n: int

    @property
    def se(self) -> float:
        r"""The standard error :math:`\sigma/\sqrt N` of one mean of ``n`` values.

        Computed as :math:`\sigma/\sqrt N`, not :math:`\sqrt{\sigma^2/N}`: a tiny
        :math:`\sigma^2` (1e-322, for Gaussians 1e-161 apart) divided by N underflows to 0.
        """
        return math.sqrt(self.var) / math.sqrt(self.n)

    @property
    def has_density(self) -> bool:
        """True if the approximation is a proper normal density (finite, σ > 0)."""
        return math.isfinite(self.mean) and math.isfinite(self.var) and self.var > 0.0

    def pdf(self, x: ArrayLike) -> np.ndarray:
        r"""The normal density :math:`\varphi\bigl((x-\mu)/\mathrm{SE}\bigr)/\mathrm{SE}` at ``x``.

        Parameters
        ----------
        x : array_like
            Points.

        Returns
        -------
        numpy.ndarray
            Density values.

        Raises
        ------
        ValueError
            If :attr:`has_density` is False (infinite or zero variance).
        """
        if not self.has_density:
            raise ValueError(
                f"no normal density: var = {self.var!r}, mean = {self.mean!r} "
                "(the variance must be finite and > 0)"
            )
        z = (as_float_array(x, "x") - self.mean) / self.se
        return _INV_SQRT_2PI / self.se * np.exp(-0.5 * z * z)


def batch_mean_normal(mean: float, var: float, n: int) -> NormalApproximation:
    r"""The normal approximation of the mean of ``n`` i.i.d. per-sample values.

    .. math:: \bar k_N \approx \mathcal N\!\left(\mu,\ \frac{\sigma^2}{N}\right),
              \qquad \mu = \mathbb{E}_q[k],\ \sigma^2 = \mathrm{Var}_q[k]

    Its mean and variance are those of :math:`\bar k_N` exactly; its shape is
    the central limit theorem's approximation.

    Parameters
    ----------
    mean, var : float
        Exact per-sample mean and variance, e.g. from
        :func:`kl_core.estimation.exact.estimator_moments`; ``var`` may be ``inf``.
    n : int
        Number of values averaged, ≥ 1.

    Returns
    -------
    NormalApproximation
        With ``se`` = :math:`\sigma/\sqrt N`; check ``has_density`` before
        drawing it (False when the variance is infinite or zero).

    Raises
    ------
    ValueError
        If ``mean`` or ``var`` is NaN, ``var < 0`` or ``n < 1``.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> a = batch_mean_normal(0.5, math.e - 2, 1000)   # k3, q = N(0,1), p = N(1,1)
    >>> round(a.se, 6)
    0.026801
    >>> batch_mean_normal(0.1, math.inf, 1000).has_density
    False
    """
    n = check_positive_int(n, "n")
    mean, var = float(mean), float(var)
    if math.isnan(mean) or math.isnan(var):
        raise ValueError(f"mean and var must not be NaN, got mean={mean!r}, var={var!r}")
    if var < 0.0:
        raise ValueError(f"var must be >= 0, got {var!r}")
    return NormalApproximation(mean, var, n)


def exact_relative_figures(mean: float, var: float, target: float) -> tuple[float, float]:
    r"""Schulman's bias/true and stdev/true from exact per-sample moments.

    .. math:: \frac{\mu - \mathrm{KL}}{\mathrm{KL}}, \qquad \frac{\sigma}{\mathrm{KL}}

    with :math:`\mu`, :math:`\sigma^2` the exact per-sample mean and variance
    and :math:`\mathrm{KL}` the estimator's target.

    Parameters
    ----------
    mean, var : float
        Exact per-sample mean and variance (``var`` may be ``inf``).
    target : float
        The KL the estimator is compared with (see
        :func:`kl_core.estimation.montecarlo.target_of`).

    Returns
    -------
    (float, float)
        ``(bias_over_true, std_over_true)``; both nan when the target is 0
        (``p == q``), infinite or nan; stdev/true is ``inf`` when the variance is.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> exact_relative_figures(0.625, 0.75, 0.5)   # k2, q = N(0,1), p = N(1,1)
    (0.25, 1.7320508075688772)
    >>> exact_relative_figures(0.0, 0.0, 0.0)
    (nan, nan)
    """
    std = math.sqrt(var) if var >= 0 else math.nan
    bias = ratio_to_target(mean - target, target) if math.isfinite(mean) else math.nan
    return bias, ratio_to_target(std, target)


def observed_spread(estimates: ArrayLike) -> tuple[float, float]:
    r"""The mean and sample standard deviation of the finite ``estimates``: what a histogram of them shows.

    .. math:: \bar e = \frac1R \sum_{j=1}^R e_j, \qquad
              s = \sqrt{\frac{1}{R-1} \sum_{j=1}^R (e_j - \bar e)^2},

    to set beside the normal approximation's :math:`\mu` and :math:`\sigma/\sqrt N`
    (:func:`batch_mean_normal`).  Non-finite estimates are left out.

    Parameters
    ----------
    estimates : array_like
        The :math:`R` estimates (e.g. ``EstimatorSummary.batch_means``).

    Returns
    -------
    (float, float)
        :math:`\bar e` (nan with no finite estimate) and :math:`s` (nan with fewer than two).

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> observed_spread([1.0, 2.0, 3.0, math.inf])
    (2.0, 1.0)
    """
    v = np.asarray(estimates, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    centre = float(np.mean(v)) if v.size else math.nan
    return centre, float(np.std(v, ddof=1)) if v.size > 1 else math.nan


@docfill(**_DOC_SECTIONS)
def mc_standard_errors(values: ArrayLike, std: float, count: int) -> tuple[float, float]:
    r"""Standard errors of a Monte Carlo mean and standard deviation.

    For :math:`M` = ``count`` i.i.d. values with sample standard deviation
    :math:`\hat\sigma`,

    .. math:: \mathrm{SE}(\hat\mu) = \frac{\hat\sigma}{\sqrt M}, \qquad
              \mathrm{SE}(\hat\sigma) \approx \hat\sigma\sqrt{\frac{\hat\kappa - 1}{4M}},

    the second from :math:`\mathrm{Var}(\hat\sigma^2) \approx (m_4 - \sigma^4)/M
    = (\kappa - 1)\,\sigma^4/M` (Cramér 1946, ch. 27) and the delta method,
    with the kurtosis :math:`\hat\kappa = \hat m_4/\hat m_2^2` estimated from
    ``values``: all :math:`M` values or a uniform subsample of them (e.g.
    ``EstimatorSummary.samples``).  For normal values :math:`\kappa = 3` and
    :math:`\mathrm{SE}(\hat\sigma) = \hat\sigma/\sqrt{2M}`.

    %(values_std_params)s
    count : int
        :math:`M`, how many values the mean and ``std`` were computed from.

    Returns
    -------
    (float, float)
        SE of the mean and SE of the standard deviation; nan where ``std`` is
        not finite, and (second figure) where ``values`` has fewer than 2
        distinct finite entries.  Both are meaningful only when the exact
        variance (for the second, the fourth moment) of a value is finite;
        :func:`kl_core.estimation.reliability.error_bar_check` says whether the first can
        be trusted for a given pair and N, from the exact fourth moment.

    References
    ----------
    H. Cramér, *Mathematical Methods of Statistics* (1946), ch. 27.

    Examples
    --------
    >>> v = np.random.default_rng(0).standard_normal(100_000)
    >>> se_mean, se_std = mc_standard_errors(v, 1.0, 100_000)
    >>> round(se_mean, 5), abs(se_std - 1 / math.sqrt(2 * 100_000)) < 1e-4
    (0.00316, True)
    """
    count = check_positive_int(count, "count")
    std = float(std)
    if not math.isfinite(std):
        return math.nan, math.nan
    se_mean = std / math.sqrt(count)
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    if v.size < 2:
        return se_mean, math.nan
    d = v - v.mean()
    scale = float(np.max(np.abs(d)))
    if scale == 0.0:
        return se_mean, math.nan
    d = d / scale  # the kurtosis is scale-free; unscaled, m2² underflows to 0 for |d| below ~1e-77
    m2 = float(np.mean(d * d))
    kurtosis = float(np.mean(d**4)) / (m2 * m2)
    return se_mean, std * math.sqrt(max(kurtosis - 1.0, 0.0) / (4.0 * count))


@docfill(**_DOC_SECTIONS)
def mc_relative_standard_errors(
    values: ArrayLike, std: float, count: int, target: float
) -> tuple[float, float]:
    r"""Standard errors of the Monte Carlo bias/true and stdev/true.

    .. math:: \mathrm{SE}\Bigl(\frac{\hat\mu - \mathrm{KL}}{\mathrm{KL}}\Bigr)
              = \frac{\mathrm{SE}(\hat\mu)}{\mathrm{KL}}, \qquad
              \mathrm{SE}\Bigl(\frac{\hat\sigma}{\mathrm{KL}}\Bigr)
              = \frac{\mathrm{SE}(\hat\sigma)}{\mathrm{KL}},

    with the standard errors of :func:`mc_standard_errors`.

    %(values_std_params)s
    count : int
        How many values the Monte Carlo figures were computed from.
    target : float
        The KL the figures are relative to.

    Returns
    -------
    (float, float)
        SE of bias/true and SE of stdev/true; nan where the target is 0
        (``p == q``), infinite or nan, and where :func:`mc_standard_errors`
        gives nan.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> v = np.random.default_rng(0).standard_normal(100_000)
    >>> round(mc_relative_standard_errors(v, 1.0, 100_000, 0.5)[0], 5)
    0.00632
    >>> mc_relative_standard_errors(v, 1.0, 100_000, 0.0)
    (nan, nan)
    """
    se_mean, se_std = mc_standard_errors(values, std, count)
    return ratio_to_target(se_mean, target), ratio_to_target(se_std, target)
