r"""Can the ±SE of a Monte Carlo KL estimate be trusted?  Decided from the exact fourth moment.

A Monte Carlo estimate is the mean of :math:`N` per-sample values
:math:`k(x_i)`, reported with the error bar :math:`\pm z\,\hat\sigma/\sqrt N`,
where :math:`\hat\sigma` is the *sample* standard deviation.  That bar is only
as good as :math:`\hat\sigma`.  With :math:`\sigma^2` the exact variance and
:math:`\kappa = m_4/\sigma^4` the kurtosis of one value,

.. math:: \frac{\mathrm{SE}(\hat\sigma^2)}{\sigma^2} \approx \sqrt{\frac{\kappa - 1}{N}}

(Cramér 1946, ch. 27).  When :math:`m_4 = \infty`, or :math:`\kappa` is
comparable to :math:`N`, the variance lives in rare, huge values that most
runs of :math:`N` draws do not contain: :math:`\hat\sigma` is then usually far
*below* :math:`\sigma` (for :math:`k_3` with :math:`q = \mathcal N(0,1)`,
:math:`p = \mathcal N(3,1)`, :math:`N = 1000`, its median is 7% of
:math:`\sigma`) and the bar is too narrow.

**The rule.**  The error bar is reliable iff the variance is finite and

.. math:: \frac{\kappa - 1}{N} \le \tau = \tfrac12, \quad\text{i.e.}\quad N \ge 2(\kappa - 1),

which also bounds the skewness term of the CLT (:math:`\gamma^2 \le \kappa - 1`).
:math:`\tau` was set by a seeded coverage study
(``benchmarks/coverage_study.py``: 19 pairs × 5 estimators × N = 100, 1000,
10 000, 2 000 runs each).  Where the rule says reliable, the
:math:`\pm1.96\,\mathrm{SE}` band held the exact mean in 88–96% of runs
(median 94.7%; 91–96% at N ≥ 1000); where it does not, in 29–94% (median
81%).  It keeps Schulman's two tables unflagged at his N = 10⁷ and at the
app's N = 1000: the largest :math:`(\kappa-1)/N` there is 0.385, :math:`k_3` at
:math:`\mu = 1`, N = 1000, where the band held in 94.3% of runs; a smaller
:math:`\tau` would flag that table.

Source: H. Cramér, *Mathematical Methods of Statistics* (1946), ch. 27;
J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kl_core._docfill import docfill
from kl_core.estimation import estimators as est
from kl_core.estimation._docstrings import SECTIONS
from kl_core.estimation._expectation import OVERFLOW_NOTE
from kl_core.estimation.distributions import Distribution
from kl_core.estimation.exact import (
    Moments,
    estimator_fourth_moment,
    estimator_kurtosis_log_space,
    estimator_moments,
    log_estimator_variance,
)
from kl_core.numbers import SMALLEST_NORMAL, unresolved
from kl_core.validation import Message, check_positive_int

__all__ = [
    "FOURTH_MOMENT_OVERFLOW",
    "MAX_VAR_RELATIVE_VARIANCE",
    "ErrorBarCheck",
    "count_text",
    "error_bar_check",
    "kurtosis_allows",
    "least_reliable_n",
]

#: Why an error bar is unreliable when E[(k − mean)⁴] is finite but overflows a double.
FOURTH_MOMENT_OVERFLOW = Message(
    "its fourth moment exceeds the largest double, so the sample SD of N values is usually far below the true SD"
)

_SMALLEST_TEXT = f"{SMALLEST_NORMAL:.4g}"  # 2.225e-308, as the table and the pages print it


def _unresolved_note(name: str) -> Message:
    """Why no error bar check is made where the moments fall below the smallest normal double."""
    return Message(
        "no error bar check for {name}: its variance or fourth moment is below the smallest normal double "
        "({smallest}), and the kurtosis that decides whether a ±SE holds could not be computed from their logs",
        name=name, smallest=_SMALLEST_TEXT,
    )


#: τ: the largest (κ − 1)/N, the squared relative standard error of the sample
#: variance, at which a ±SE is called reliable (see the module notes).
MAX_VAR_RELATIVE_VARIANCE = 0.5


@dataclass(frozen=True)
class ErrorBarCheck:
    r"""Whether a Monte Carlo ±SE from ``n`` values can be trusted, and why not.

    Attributes
    ----------
    reliable : bool
        True if the sample SD of ``n`` values estimates the true SD well
        enough for :math:`\pm z\,\hat\sigma/\sqrt N` to hold its coverage.
    note : str
        Empty if reliable; else one sentence: what is wrong, why, the exact SD (a
        :class:`~kl_core.validation.Message`, which the app translates).
    exact_sd : float
        :math:`\sigma`, the exact per-sample standard deviation (``inf`` if infinite; from its log where
        :math:`\sigma^2` is below the smallest normal double, nan where that log is not resolved either).
    kurtosis : float
        :math:`\kappa = m_4/\sigma^4` (``inf`` if :math:`m_4` is; nan if :math:`\sigma = 0` or it cannot be
        resolved); from the moments' logs where :math:`\sigma^4` is below the smallest normal double.
    n : int
        N.
    """

    reliable: bool
    note: str
    exact_sd: float
    kurtosis: float
    n: int

    @property
    def exact_se(self) -> float:
        r"""The exact standard error of the mean, :math:`\sigma/\sqrt N`."""
        return self.exact_sd / math.sqrt(self.n)

    @property
    def var_relative_se(self) -> float:
        r"""The relative standard error of the sample variance (the :math:`N - 1` one), exactly:

        .. math:: \frac{\mathrm{SE}(\hat\sigma^2)}{\sigma^2} = \sqrt{\frac{\kappa}{N} - \frac{N-3}{N(N-1)}}
                  \approx \sqrt{\frac{\kappa - 1}{N}},

        NaN for :math:`N = 1` (no sample variance).  At :math:`N = 2` and :math:`\kappa = 3` (normal draws) it is
        :math:`\sqrt2`, the :math:`\chi^2_1`'s, where the large-N form gave 1 (Cramér 1946, ch. 27.4).
        """
        if math.isnan(self.kurtosis) or self.n < 2:
            return math.nan
        n = self.n
        return math.sqrt(max(self.kurtosis / n - (n - 3) / (n * (n - 1)), 0.0))

    @property
    def sd_relative_se(self) -> float:
        r"""Half :attr:`var_relative_se`, the relative standard error of the sample SD (delta method).

        .. math:: \frac{\mathrm{SE}(\hat\sigma)}{\sigma} \approx \frac12\,\frac{\mathrm{SE}(\hat\sigma^2)}{\sigma^2}
                  \approx \sqrt{\frac{\kappa - 1}{4N}},

        since :math:`d\sqrt v / dv = 1/(2\sqrt v)` (Cramér 1946, ch. 27-28); a
        first-order figure, rough once it is not small.
        """
        return 0.5 * self.var_relative_se


def kurtosis_allows(kurtosis: float, n: int) -> bool:
    r"""The rule: :math:`(\kappa - 1)/N \le \tau` with :math:`\tau` = :data:`MAX_VAR_RELATIVE_VARIANCE`.

    Parameters
    ----------
    kurtosis : float
        :math:`\kappa = m_4/\sigma^4` of one per-sample value (``inf`` allowed).
    n : int
        N, the number of values averaged.

    Returns
    -------
    bool
        True if the sample variance of ``n`` values is accurate enough.

    References
    ----------
    H. Cramér, *Mathematical Methods of Statistics* (1946), ch. 27.

    Examples
    --------
    >>> kurtosis_allows(386.0, 1000), kurtosis_allows(4.3e15, 10_000), kurtosis_allows(3.0, 4)
    (True, False, True)
    """
    n = check_positive_int(n, "n")
    if math.isnan(kurtosis):
        raise ValueError("kurtosis must not be NaN")
    return (kurtosis - 1.0) / n <= MAX_VAR_RELATIVE_VARIANCE


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.4g}"


def least_reliable_n(kurtosis: float) -> int:
    r"""The least whole N whose ±SE :func:`kurtosis_allows` calls reliable.

    .. math:: N_{\min} = \lceil 2(\kappa - 1) \rceil,

    moved to where the rule :math:`(\kappa - 1)/N \le \tfrac12`, evaluated in floating
    point, first accepts it: a sample count is whole, and the one printed must be one the
    rule accepts.

    Parameters
    ----------
    kurtosis : float
        :math:`\kappa = m_4/\sigma^4` of one per-sample value; finite.

    Returns
    -------
    int
        :math:`N_{\min} \ge 1`.

    References
    ----------
    H. Cramér, *Mathematical Methods of Statistics* (1946), ch. 27.

    Examples
    --------
    >>> least_reliable_n(15.77), least_reliable_n(501.0), least_reliable_n(501.2)
    (30, 1000, 1001)
    """
    if not math.isfinite(kurtosis):
        raise ValueError(f"kurtosis must be finite, got {kurtosis}")
    d = kurtosis - 1.0  # as kurtosis_allows computes it
    twice = 2.0 * d
    need = max(math.ceil(twice) if math.isfinite(twice) else 2 * math.ceil(d), 1)
    if need < 2**53:  # beyond, N is not exact in a double and ⌈2(κ − 1)⌉ is already accepted
        while not kurtosis_allows(kurtosis, need):
            need += 1
        while need > 1 and kurtosis_allows(kurtosis, need - 1):
            need -= 1
    return need


def count_text(n: int) -> str:
    r"""A sample count as the notes print it, never below ``n``.

    ``1,001`` up to 12 digits; beyond, the :math:`d`-digit ``n`` rounded up to 4 significant
    digits, :math:`\lceil n / 10^{d-4} \rceil \cdot 10^{d-4}` (``8.644e+15``).

    Parameters
    ----------
    n : int
        The count, ``>= 0``.

    Returns
    -------
    str

    Examples
    --------
    >>> count_text(1001), count_text(8_643_800_000_000_001)
    ('1,001', '8.644e+15')
    """
    digits = len(str(n))
    if digits <= 12:
        return f"{n:,}"
    lead = -(-n // 10 ** (digits - 4))  # the first 4 digits, rounded up: 1000 … 10000
    if lead == 10_000:
        lead, digits = 1000, digits + 1
    return f"{lead / 1000:.4g}e+{digits - 1:02d}"


@docfill(**SECTIONS)
def error_bar_check(
    key: str,
    q: Distribution,
    p: Distribution,
    n: int,
    lam: float | None = None,
    moments: Moments | None = None,
) -> ErrorBarCheck:
    r"""Is the Monte Carlo ±SE of estimator ``key`` from ``n`` draws of ``q`` reliable?

    Reliable iff :math:`\sigma^2 < \infty` and :math:`(\kappa - 1)/N \le \tfrac12`,
    with :math:`\kappa = \mathbb{E}_q[(k-\mu)^4]/\sigma^4` computed exactly
    (:func:`kl_core.estimation.exact.estimator_fourth_moment`); see the module notes for
    the rule and its coverage study.

    %(estimator_pair_params)s
    n : int
        N, the draws per estimate.
    lam : float, optional
        :math:`\lambda` for ``k_lambda`` (required there, ignored elsewhere).
    moments : Moments, optional
        ``estimator_moments(key, q, p, lam)`` if already computed.

    Returns
    -------
    ErrorBarCheck
        ``reliable``, a ``note`` saying why not, ``exact_sd`` and ``kurtosis``.

    References
    ----------
    H. Cramér, *Mathematical Methods of Statistics* (1946), ch. 27;
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> from kl_core.estimation.distributions import Gaussian
    >>> error_bar_check("k3", Gaussian(0, 1), Gaussian(1, 1), 1000).reliable
    True
    >>> check = error_bar_check("k3", Gaussian(0, 1), Gaussian(3, 1), 10_000)
    >>> check.reliable, round(check.exact_sd, 2)
    (False, 89.96)
    """
    n = check_positive_int(n, "n")
    m = moments if moments is not None else estimator_moments(key, q, p, lam=lam)
    name = est.ESTIMATORS[key].name
    if not math.isfinite(m.var):
        why = m.note or Message("{what} is infinite", what="Var({name})".format(name=name))
        if math.isfinite(m.log_var):  # finite in exact arithmetic: so is the SE, but its check is past a double
            note = Message(
                "no error bar check for {name}: {why}; whether a ±SE can be trusted turns on the "
                "kurtosis, and the fourth moment is past the largest double too",
                name=name, why=why,
            )
        else:
            note = Message("no error bar for {name}: {why}; a ±SE from any N is meaningless", name=name, why=why)
        return ErrorBarCheck(False, note, math.inf, math.inf, n)
    sd = m.std
    if m.var == 0.0 and not m.var_unresolved:  # p = q: every value equals the mean, and so does the estimate
        return ErrorBarCheck(True, "", 0.0, math.nan, n)
    m4, why4 = estimator_fourth_moment(key, q, p, lam=lam)
    if m.var_unresolved:
        sd = math.exp(0.5 * log_estimator_variance(key, q, p, lam=lam))  # nan if its log is not resolved
    if m.var_unresolved or m4 == 0.0 or unresolved(m4):
        # σ⁴ is below the smallest normal double: m4 / σ⁴ would be 0, NaN or a few digits; κ is scale-free
        kappa = estimator_kurtosis_log_space(key, q, p, lam=lam)
        if math.isnan(kappa):
            return ErrorBarCheck(False, _unresolved_note(name), sd, math.nan, n)
    else:
        kappa = m4 / m.var / m.var  # not m4 / var²: var² can overflow where m4 / var does not (inf / inf = NaN)
    if kurtosis_allows(kappa, n):
        return ErrorBarCheck(True, "", sd, kappa, n)
    if math.isinf(kappa):
        # the reason without its "E[(k − mean)⁴] is infinite: " head
        detail = why4.params.get("why", why4) if isinstance(why4, Message) else why4
        if getattr(detail, "template", None) == OVERFLOW_NOTE.template:  # finite in exact arithmetic
            reason = FOURTH_MOMENT_OVERFLOW
        else:
            reason = Message(
                "its fourth moment is infinite ({detail}), so the sample SD of N values "
                "is usually far below the true SD",
                detail=detail,
            )
    else:
        reason = Message(
            "the kurtosis of {name} is {kappa}, so the sample variance of N = {n:,} values "
            "has a relative standard error of {rel} (it needs N ≥ {need})",
            name=name, kappa=_fmt(kappa), n=n, rel=_fmt(math.sqrt((kappa - 1.0) / n)),
            need=count_text(least_reliable_n(kappa)),
        )
    return ErrorBarCheck(
        False,
        Message(
            "unreliable error bar for {name} at N = {n:,}: {reason}; the exact SD is {sd}",
            name=name, n=n, reason=reason, sd=_fmt(sd),
        ),
        sd,
        kappa,
        n,
    )
