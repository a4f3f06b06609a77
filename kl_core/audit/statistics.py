r"""Audit a user's own per-token log-probabilities: which KL, how large, how noisy.

The input is what RL training code stores for each sampled token: its log-prob
under the policy that sampled it and under one other policy.  Two roles name
them (the same as :mod:`kl_core.libraries.crosswalk`):

``logp_sampler``
    :math:`\log q(x)`, the policy that generated the tokens (``q`` in
    :mod:`kl_core.estimation.estimators`), e.g. the current policy in RLHF, or
    :math:`\pi_{\mathrm{old}}` in a PPO update.
``logp_other``
    :math:`\log p(x)`, the policy it is compared with, e.g. the reference
    model, or :math:`\pi_{\mathrm{new}}`.

Throughout, :math:`\log r = \text{logp\_other} - \text{logp\_sampler}`: the
ratio is *target / sampler*, because only then is :math:`\mathbb{E}_q[r-1] = 0`,
the control variate behind ``k3`` (seed notes, section 3).

Directions and estimators
-------------------------
``direction="sampler-other"`` audits :math:`\mathrm{KL}[q\|p] =
\mathbb{E}_q[-\log r]`, with Schulman's estimators unchanged:

==  =================================  ==========================================
k1  :math:`-\log r`                    unbiased; single values can be < 0
k2  :math:`\tfrac12(\log r)^2`         biased, ≥ 0; :math:`D_f` with :math:`f=\tfrac12\log^2u`
k3  :math:`(r-1)-\log r`               unbiased, ≥ 0
==  =================================  ==========================================

``direction="other-sampler"`` audits :math:`\mathrm{KL}[p\|q] =
\mathbb{E}_p[\log r] = \mathbb{E}_q[r\log r]`.  Each estimator is the one you
would compute *if you had samples of p* (whose own log-ratio is
:math:`\log(q/p) = -\log r`), carried back to samples of ``q`` by the
importance weight :math:`r = p/q`, since :math:`\mathbb{E}_q[r\,g] = \mathbb{E}_p[g]`:

==  =========================================================  ======================================
k1  :math:`r\,k_1(-\log r) = r\log r`                          unbiased; single values can be < 0
k2  :math:`r\,k_2(-\log r) = \tfrac12 r(\log r)^2`             biased, ≥ 0; :math:`\mathbb{E}_p[\tfrac12\log^2 r]`
k3  :math:`r\,k_3(-\log r) = r\log r-(r-1)`                    unbiased, ≥ 0; this is ``k3_pq``
==  =========================================================  ======================================

Second-order check for the mirrored k2 (with :math:`t = \log r`):
:math:`r\log r-(r-1) = \tfrac12t^2+\tfrac13t^3+O(t^4)` and
:math:`\tfrac12 r t^2 = \tfrac12t^2+\tfrac12t^3+O(t^4)`, so its bias is
:math:`+\mathbb{E}_q[t^3]/6 + O(t^4)`: third order, the mirror of the plain
``k2`` whose bias for :math:`\mathrm{KL}[q\|p]` is :math:`-\mathbb{E}_q[t^3]/6`.
As an f-divergence its :math:`f(u)=\tfrac12u\log^2u` has :math:`f''(1)=1`, the
same Fisher curvature as KL.

Rollout correction
------------------
When the tokens were drawn by a third policy :math:`\mu` (an asynchronous
rollout engine, a replay buffer), pass ``logp_rollout``.  Every token then gets
the weight :math:`w = e^{\text{logp\_sampler}-\text{logp\_rollout}} = q/\mu`,
and every figure is the self-normalised importance-sampling (SNIS) estimate of
the same figure under ``q``:

.. math::

    \hat m = \frac{\sum_i w_i k_i}{\sum_i w_i}, \quad
    \widehat{\mathrm{se}}^2 = \frac{n}{n-1}\,\frac{\sum_i w_i^2 (k_i-\hat m)^2}{(\sum_i w_i)^2}, \quad
    \mathrm{ESS} = \frac{(\sum_i w_i)^2}{\sum_i w_i^2}.

The standard error is the delta-method variance of a ratio estimator (Owen,
2013, §9.2), with the factor :math:`n/(n-1)` so that it equals
:math:`s/\sqrt n` when every :math:`w_i = 1`.  The token weight corrects the
next-token distribution only: the prefixes still come from :math:`\mu`, so the
token-level figures estimate the mean over :math:`\mu`'s prefixes of the
per-token KL of ``q``'s next-token distribution (the "token-level" correction
RL libraries use).  Sequence-level figures use the product of the token
weights of each sequence, which corrects whole sequences; their ESS is
reported separately and is usually much smaller.

Rao–Blackwellized column
------------------------
A trainer that has the full next-token logits of both policies can store, for
every sampled token, the exact KL of the next-token distributions at that
token's prefix (``exact_kl``, ``--kl-col``): :math:`\mathrm{KL}[q(\cdot\mid
x_{<t})\|p(\cdot\mid x_{<t})]` for ``"sampler-other"``, the other order for
``"other-sampler"``.  It is the conditional mean of ``k1`` (and of ``k3``)
given the prefix, so its average estimates the same KL with a variance no
larger, token by token (Rao–Blackwell; Amini, Vieira & Cotterell 2025).  The
audit then reports it as ``rb``, beside ``k1`` and ``k3``, and the variance
reduction :math:`\mathrm{Var}(k_1)/\mathrm{Var}(\mathrm{rb})` and
:math:`\mathrm{Var}(k_3)/\mathrm{Var}(\mathrm{rb})`, per token and for the
sequence sums.  For sums over sequences the reduction is typical but not
guaranteed (see :mod:`kl_core.sequences.estimators`).

References
----------
J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
A. Amini, T. Vieira, R. Cotterell, "Better Estimation of the KL Divergence
Between Language Models" (2025), arXiv:2504.10637 (the Rao–Blackwellized ``rb``).
A. B. Owen, *Monte Carlo theory, methods and examples* (2013), ch. 9,
https://artowen.su.domains/mc/.
A. Kong, "A note on importance sampling using standardized weights" (1992),
for the effective sample size.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import ArrayLike

from kl_core.audit import DIRECTIONS, table_files
from kl_core.estimation import estimators
from kl_core.estimation.distributions import Gaussian, log_ratio
from kl_core.estimation.exact import kl
from kl_core.numbers import from_log
from kl_core.validation import N_, InputError, Message, check_finite

__all__ = [
    "DEFINITIONS",
    "DIRECTIONS",
    "ESTIMATOR_KEYS",
    "KL_TOLERANCE",
    "LOGP_TOLERANCE",
    "MAX_FILE_BYTES",
    "MAX_POSITION_BUCKETS",
    "MIN_FOR_SE",
    "P99_MIN",
    "RB_DEFINITIONS",
    "RB_KEY",
    "TARGETS",
    "AuditReport",
    "AuditTable",
    "SECoverage",
    "EstimatorSummary",
    "PositionBucket",
    "SampleSizeCheck",
    "SequenceSummary",
    "audit",
    "count_text",
    "sample_size_check",
    "se_band_coverage",
    "shown_positions",
    "load_table",
    "position_bucket",
]


ESTIMATOR_KEYS = ("k1", "k2", "k3")

RB_KEY = "rb"
"""The key of the Rao–Blackwellized estimate, present when an exact-KL column is given."""

RB_DEFINITIONS: dict[str, dict[str, str]] = {
    "sampler-other": {
        "formula": r"\mathrm{KL}[\text{sampler}(\cdot \mid x_{<t}) \,\|\, \text{other}(\cdot \mid x_{<t})]",
        "meaning": (
            "Rao-Blackwellized: the exact next-token KL at each prefix; if the column holds it, unbiased "
            "for KL[sampler||other], and in expectation no more variable per token than k1 or k3"
        ),
    },
    "other-sampler": {
        "formula": r"\mathrm{KL}[\text{other}(\cdot \mid x_{<t}) \,\|\, \text{sampler}(\cdot \mid x_{<t})]",
        "meaning": (
            "Rao-Blackwellized: the exact next-token KL at each prefix; if the column holds it, unbiased "
            "for KL[other||sampler], and in expectation no more variable per token than k1 or k3"
        ),
    },
}
"""Per direction, what the ``rb`` column must hold and what it estimates."""

KL_TOLERANCE = 1e-6
"""Most negative exact-KL value accepted as float noise (a float32 KL of two
nearly equal distributions can come out at about -1e-7)."""

TARGETS = {"sampler-other": "KL[sampler||other]", "other-sampler": "KL[other||sampler]"}
"""The KL each direction estimates, in plain text."""

DEFINITIONS: dict[str, dict[str, dict[str, str]]] = {
    "sampler-other": {
        "k1": {
            "formula": r"-\log r",
            "meaning": "unbiased for KL[sampler||other]; single values can be negative",
        },
        "k2": {
            "formula": r"\tfrac12 (\log r)^2",
            "meaning": "biased (f = 1/2 log^2 u), >= 0; equals the KL to second order in log r",
        },
        "k3": {
            "formula": r"(r - 1) - \log r",
            "meaning": "unbiased for KL[sampler||other], every value >= 0",
        },
    },
    "other-sampler": {
        "k1": {
            "formula": r"r \log r",
            "meaning": "unbiased for KL[other||sampler]; single values can be negative",
        },
        "k2": {
            "formula": r"\tfrac12\, r (\log r)^2",
            "meaning": "biased (f = 1/2 u log^2 u), >= 0; equals the KL to second order in log r",
        },
        "k3": {
            "formula": r"r \log r - (r - 1)",
            "meaning": "unbiased for KL[other||sampler], every value >= 0 (k3_pq)",
        },
    },
}
"""Per direction, what ``k1``, ``k2`` and ``k3`` are, with :math:`\\log r` = other − sampler."""

LOGP_TOLERANCE = 1e-6
"""Largest log-prob accepted.  A float32 ``log_softmax`` of a near-certain token
can come out at about +1e-7; anything above 1e-6 means a wrong column (logits,
probabilities, a negated log-prob).  Accepted values are used unchanged."""

MAX_FILE_BYTES = table_files.MAX_FILE_BYTES
"""Largest file :func:`load_table` reads (50 MiB), checked before parsing (:mod:`kl_core.audit.table_files`)."""

MAX_POSITION_BUCKETS = 20
"""Number of log2-width position buckets; the last one is open-ended."""

# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class EstimatorSummary:
    r"""Summary of one estimator's per-item values (tokens or sequences).

    With importance weights every field except ``max`` is the self-normalised
    weighted figure (see the module docstring); without, ``std`` uses
    ``ddof=1``, ``se`` is :math:`s/\sqrt n` and the percentiles are the
    inverse empirical CDF (``numpy.quantile(method="inverted_cdf")``).

    Attributes
    ----------
    mean, std, se : float
        Mean, standard deviation of one value, standard error of the mean.
        ``nan`` when undefined (one item); ``inf`` when finite but past the
        largest double (see ``log_mean`` …).
    neg_fraction : float
        Fraction of values < 0 (only ``k1`` can be negative).
    p95, p99, max : float
        95th and 99th percentiles and the largest value.
    log_mean, log_std, log_se, log_p95, log_p99, log_max : float
        Where the figure is finite but past the largest double (about
        :math:`1.8\times10^{308}`, e.g. a mean of ``k3`` with one token at
        :math:`\log r = 800`: about :math:`e^{800}/n`), its natural log
        :math:`\log|x|`, worked out in log space, and the figure itself is
        ``inf``; ``nan`` everywhere else (the figure is then the float).
    """

    mean: float
    std: float
    se: float
    neg_fraction: float
    p95: float
    p99: float
    max: float
    log_mean: float = math.nan
    log_std: float = math.nan
    log_se: float = math.nan
    log_p95: float = math.nan
    log_p99: float = math.nan
    log_max: float = math.nan

    def log_abs(self, name: str) -> float:
        r"""The natural log of the magnitude of a figure, :math:`\log|x|`, also where it is past a double.

        Parameters
        ----------
        name : {"mean", "std", "se", "p95", "p99", "max"}
            The figure.

        Returns
        -------
        float
            ``log_<name>`` where the figure is past a double; else :math:`\log|x|`
            (``-inf`` for 0, ``inf`` for a figure that is truly infinite, ``nan``
            for an undefined one).

        Raises
        ------
        ValueError
            If ``name`` is not one of the six.
        """
        if name not in _LOG_FIELDS:
            raise ValueError(f"name must be one of {list(_LOG_FIELDS)}, got {name!r}")
        log_x = getattr(self, f"log_{name}")
        if math.isfinite(log_x):
            return log_x
        x = getattr(self, name)
        if math.isnan(x):
            return math.nan
        return -math.inf if x == 0.0 else math.log(abs(x)) if math.isfinite(x) else math.inf

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict (``inf`` → ``"inf"``, ``nan`` → None).

        A figure past the largest double is written as a string in scientific
        notation (``"1.23456789012e+347"``, :func:`kl_core.numbers.from_log`),
        followed by its natural log as a number under ``log_<name>``
        (``"log_mean": 799.8``); the ``log_`` keys appear only then.
        """
        out: dict[str, Any] = {}
        for k in _SUMMARY_FIELDS:
            _put(out, k, getattr(self, k), getattr(self, f"log_{k}", math.nan))
        return out


_SUMMARY_FIELDS = ("mean", "std", "se", "neg_fraction", "p95", "p99", "max")
_LOG_FIELDS = ("mean", "std", "se", "p95", "p99", "max")


@dataclass(frozen=True)
class PositionBucket:
    """One row of the per-position table: tokens with ``lo <= position < hi``.

    Attributes
    ----------
    lo : int
        First position in the bucket.
    hi : int or None
        One past the last position; None for the open-ended last bucket.
    count : int
        Counted tokens in the bucket.
    mean, se : dict of str to float
        Per estimator key, the (weighted) mean and its standard error.
    ess : float or None
        The bucket's effective sample size :math:`(\\sum w)^2/\\sum w^2` when a
        rollout policy weights the tokens, else None.
    log_mean, log_se : dict of str to float
        Per estimator key, the natural log of the mean and of its SE where that
        figure is past the largest double (the float in ``mean``/``se`` is then
        ``inf``), ``nan`` elsewhere; a key may be missing (read with ``.get``).
    """

    lo: int
    hi: int | None
    count: int
    mean: dict[str, float]
    se: dict[str, float]
    ess: float | None = None
    log_mean: dict[str, float] = field(default_factory=dict)
    log_se: dict[str, float] = field(default_factory=dict)

    def sample_size(self) -> SampleSizeCheck:
        """:func:`sample_size_check` of the bucket: its tokens, or its effective tokens with a rollout policy."""
        if self.ess is not None:
            return sample_size_check(self.ess, "effective tokens")
        return sample_size_check(self.count, "tokens")

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON-ready row: lo, hi, count, k1_mean, k1_se, …

        A figure past the largest double is a string (``"1.23456789012e+347"``)
        followed by its natural log under ``log_<key>`` (``log_k3_mean``).
        """
        row: dict[str, Any] = {"lo": self.lo, "hi": "inf" if self.hi is None else self.hi}
        row["count"] = self.count
        if self.ess is not None:
            row["ess"] = _json_float(self.ess)
        for k in self.mean:
            _put(row, f"{k}_mean", self.mean[k], self.log_mean.get(k, math.nan))
            _put(row, f"{k}_se", self.se[k], self.log_se.get(k, math.nan))
        return row


def shown_positions(positions: Sequence[PositionBucket], file_se: bool = True) -> tuple[PositionBucket, ...]:
    r"""The position buckets with each SE withheld (``nan``) where it means nothing.

    Every bucket's when the file itself has too few tokens for a standard error (``file_se`` False,
    :meth:`AuditReport.sample_size`); else each bucket's with fewer than :data:`MIN_FOR_SE` (effective)
    tokens (:meth:`PositionBucket.sample_size`), since :math:`\mathrm{SE} = \hat\sigma/\sqrt n` needs
    :math:`\hat\sigma` first.  A bucket kept whole is the same object.

    Parameters
    ----------
    positions : sequence of PositionBucket
        ``AuditReport.positions``.
    file_se : bool, default True
        Whether the file's token count allows a standard error.

    Returns
    -------
    tuple of PositionBucket

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
    """
    return tuple(b if file_se and b.sample_size().se
                 else replace(b, se={k: math.nan for k in b.se}, log_se={}) for b in positions)


@dataclass(frozen=True)
class SequenceSummary:
    r"""Per-sequence sums of each estimator and their summary over sequences.

    Attributes
    ----------
    n_sequences : int
        Sequences with at least one counted token.
    ids : numpy.ndarray
        The sequence ids, sorted.
    tokens : numpy.ndarray
        Counted tokens per sequence.
    sums : dict of str to numpy.ndarray
        Per estimator key, the sum over each sequence's counted tokens
        (``inf`` where it is past the largest double, see ``log_sums``).
    stats : dict of str to EstimatorSummary
        Per estimator key, the summary of the sums over sequences (weighted by
        the sequence importance weight when a rollout policy is given).
    ess : float or None
        Effective number of sequences under the rollout correction.
    variance_ratio : dict of str to float, or None
        With an exact-KL column, :math:`\mathrm{Var}(k)/\mathrm{Var}(\mathrm{rb})`
        of the sums, for ``k1`` and ``k3`` (``inf`` where past a double, see
        ``log_variance_ratio``).
    log_sums : dict of str to numpy.ndarray
        Per estimator key with a sum past the largest double, the natural log
        of each sum where it is (``nan`` elsewhere); keys without one are absent.
    log_variance_ratio : dict of str to float, or None
        Beside ``variance_ratio``: its natural log where it is past a double,
        ``nan`` elsewhere.
    """

    n_sequences: int
    ids: np.ndarray = field(repr=False, compare=False)
    tokens: np.ndarray = field(repr=False, compare=False)
    sums: dict[str, np.ndarray] = field(repr=False, compare=False)
    stats: dict[str, EstimatorSummary]
    ess: float | None = None
    variance_ratio: dict[str, float] | None = None
    log_sums: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    log_variance_ratio: dict[str, float] | None = None

    def sample_size(self) -> SampleSizeCheck:
        """:func:`sample_size_check` of the sequences (the SE of a sequence sum needs 30 sequences too).

        With a rollout policy the sums are weighted by the sequence weights, so
        the count is the effective number of sequences :attr:`ess`.
        """
        if self.ess is not None:
            return sample_size_check(self.ess, "effective sequences")
        return sample_size_check(self.n_sequences, "sequences")

    def to_dict(self, per_sequence: bool = False) -> dict[str, Any]:
        """JSON-ready summary; with ``per_sequence`` also ids, token counts and sums.

        Figures past the largest double are written as in
        :meth:`EstimatorSummary.to_dict` (a string, then ``log_<key>``); with
        ``per_sequence``, a sum past a double is such a string and
        ``log_sums`` (only then) lists the natural log of every sum of that
        estimator (null where the sum fits a double).
        """
        out: dict[str, Any] = {"n": self.n_sequences}
        out.update({k: s.to_dict() for k, s in self.stats.items()})
        out["ess"] = _json_float(self.ess) if self.ess is not None else None
        if self.variance_ratio is not None:
            out["variance_ratio"] = _ratio_dict(self.variance_ratio, self.log_variance_ratio)
        if per_sequence:
            out["ids"] = [i.item() if isinstance(i, np.generic) else i for i in self.ids]
            out["tokens"] = [int(t) for t in self.tokens]
            out["sums"] = {
                k: [_json_figure(v, lv) for v, lv in zip(s, self._log_sums(k), strict=True)]
                for k, s in self.sums.items()
            }
            if self.log_sums:
                out["log_sums"] = {k: [_json_float(lv) for lv in ls] for k, ls in self.log_sums.items()}
        return out

    def _log_sums(self, key: str) -> np.ndarray:
        ls = self.log_sums.get(key)
        return np.full(len(self.sums[key]), math.nan) if ls is None else ls


@dataclass(frozen=True)
class AuditReport:
    """The result of :func:`audit`.

    Attributes
    ----------
    n : int
        Tokens counted (after the mask).
    n_total : int
        Tokens given (before the mask).
    direction : str
        ``"sampler-other"`` or ``"other-sampler"``.
    k1, k2, k3 : EstimatorSummary
        Token-level summaries; :data:`DEFINITIONS` says what each is in ``direction``.
    positions : tuple of PositionBucket, or None
        Non-empty log2 position buckets, when positions were given.
    sequences : SequenceSummary or None
        Per-sequence sums, when sequence ids were given.
    ess : float or None
        Token-level effective sample size :math:`(\\sum w)^2/\\sum w^2`, when a
        rollout policy was given.
    ess_fraction : float or None
        ``ess / n``.
    values : dict of str to numpy.ndarray
        Per counted token, each estimator's value (for histograms); with an
        exact-KL column also ``"rb"``.
    weights : numpy.ndarray or None
        Per counted token, the importance weight scaled to a maximum of 1.
    rb : EstimatorSummary or None
        The Rao–Blackwellized estimate (the exact-KL column), when given.
    variance_ratio : dict of str to float, or None
        With ``rb``: :math:`\\mathrm{Var}(k_1)/\\mathrm{Var}(\\mathrm{rb})` and
        :math:`\\mathrm{Var}(k_3)/\\mathrm{Var}(\\mathrm{rb})` per token, keys
        ``"k1"`` and ``"k3"`` (``inf`` when rb's variance is 0, or when the
        ratio is past a double: see ``log_variance_ratio``).
    log_values : dict of str to numpy.ndarray
        Per estimator key with a value past the largest double (where ``values``
        holds ``inf``), the natural log of every such value, ``nan`` elsewhere;
        keys without one are absent.
    log_variance_ratio : dict of str to float, or None
        Beside ``variance_ratio``: the natural log of a ratio past a double, ``nan`` elsewhere.
    """

    n: int
    n_total: int
    direction: str
    k1: EstimatorSummary
    k2: EstimatorSummary
    k3: EstimatorSummary
    positions: tuple[PositionBucket, ...] | None = None
    sequences: SequenceSummary | None = None
    ess: float | None = None
    ess_fraction: float | None = None
    values: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    weights: np.ndarray | None = field(default=None, repr=False, compare=False)
    rb: EstimatorSummary | None = None
    variance_ratio: dict[str, float] | None = None
    log_values: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    log_variance_ratio: dict[str, float] | None = None

    @property
    def target(self) -> str:
        """The KL being estimated, e.g. ``"KL[sampler||other]"``."""
        return TARGETS[self.direction]

    @property
    def weighted(self) -> bool:
        """True if a rollout policy's importance weights were applied."""
        return self.ess is not None

    @property
    def summaries(self) -> dict[str, EstimatorSummary]:
        """``{"k1": …, "k2": …, "k3": …}``."""
        return {"k1": self.k1, "k2": self.k2, "k3": self.k3}

    def sample_size(self) -> SampleSizeCheck:
        """:func:`sample_size_check` of the counted tokens (their effective number with a rollout policy)."""
        if self.weighted and self.ess is not None:
            return sample_size_check(self.ess, "effective tokens")
        return sample_size_check(self.n, "tokens")

    def shown(self) -> AuditReport:
        """The report with every statistic that means nothing at its count withheld (``nan``), as the app shows it.

        The per-token SE, std, p95 and p99 of :meth:`sample_size` (rb's too); each position bucket's SE
        where the file or the bucket has fewer than :data:`MIN_FOR_SE` (effective) tokens
        (:meth:`PositionBucket.sample_size`); the sequence sums' figures by
        :meth:`SequenceSummary.sample_size`.  :meth:`withheld_notes` says why.
        """
        check = self.sample_size()
        positions = None if self.positions is None else shown_positions(self.positions, check.se)
        sequences = self.sequences
        if sequences is not None:
            sequences = replace(sequences, stats=sequences.sample_size().masked_all(sequences.stats))
        masked = check.masked_all(self.summaries)
        return replace(self, **masked, positions=positions, sequences=sequences,
                       rb=None if self.rb is None else check.masked(self.rb))

    def withheld_notes(self) -> list[Message]:
        """Why :meth:`shown` withholds figures: the tokens' note, a note on thin position buckets, the sequences'."""
        notes = []
        check = self.sample_size()
        if check.note is not None:
            notes.append(check.note)
        if self.positions is not None and check.se:
            thin = sum(1 for a, b in zip(self.positions, shown_positions(self.positions), strict=True) if a is not b)
            if thin:
                notes.append(Message(
                    "{thin} of {buckets} position buckets have fewer than {least} (effective) tokens: their SE is "
                    "not shown (—).", thin=thin, buckets=len(self.positions), least=MIN_FOR_SE))
        if self.sequences is not None and (note := self.sequences.sample_size().note) is not None:
            notes.append(note)
        return notes

    @property
    def all_summaries(self) -> dict[str, EstimatorSummary]:
        """:attr:`summaries` plus ``"rb"`` when an exact-KL column was given."""
        out = self.summaries
        if self.rb is not None:
            out[RB_KEY] = self.rb
        return out

    def to_dict(self, per_sequence: bool = False) -> dict[str, Any]:
        """A JSON-ready dict with top-level keys ``n``, ``direction``, ``k1``, ``k2``, ``k3``.

        Extra keys: ``n_total``, ``target``, ``definitions``, ``weighted``,
        ``ess``, ``ess_fraction``, ``positions`` (list of rows or None),
        ``sequences`` (or None), ``rb`` (a summary, or None without an
        exact-KL column) and ``variance_ratio`` (or None); with ``rb`` the
        definitions, positions and sequences include it too.  Floats are plain floats; ``inf`` is written
        ``"inf"`` and an undefined figure (``nan``) is None, so the result
        passes ``json.dumps(..., allow_nan=False)``.

        A figure that is finite but past the largest double (a JSON number
        cannot hold it) is written as a string in scientific notation,
        ``"1.23456789012e+347"`` (12 significant digits,
        :func:`kl_core.numbers.from_log`), and its natural log follows as a
        number under the same key prefixed by ``log_``: ``"log_mean"`` in a
        summary, ``"log_k3_mean"`` in a position row, ``"log_k1"`` in
        ``variance_ratio``.  Those ``log_`` keys appear only for such figures,
        so ``"inf"`` still means infinite.

        Parameters
        ----------
        per_sequence : bool, default False
            Also list every sequence's id, token count and sums.
        """
        out: dict[str, Any] = {"n": self.n, "direction": self.direction}
        out.update({k: s.to_dict() for k, s in self.summaries.items()})
        out["n_total"] = self.n_total
        out["target"] = self.target
        out["definitions"] = {k: dict(v) for k, v in DEFINITIONS[self.direction].items()}
        if self.rb is not None:
            out["definitions"][RB_KEY] = dict(RB_DEFINITIONS[self.direction])
        out["weighted"] = self.weighted
        out["ess"] = _json_float(self.ess) if self.ess is not None else None
        out["ess_fraction"] = (
            _json_float(self.ess_fraction) if self.ess_fraction is not None else None
        )
        out["positions"] = None if self.positions is None else [b.to_dict() for b in self.positions]
        out["sequences"] = None if self.sequences is None else self.sequences.to_dict(per_sequence)
        out["rb"] = None if self.rb is None else self.rb.to_dict()
        out["variance_ratio"] = (
            None
            if self.variance_ratio is None
            else _ratio_dict(self.variance_ratio, self.log_variance_ratio)
        )
        return out


def _json_float(x: float) -> float | str | None:
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


_JSON_DIGITS = 12
"""Significant digits of a figure past a double written as a JSON string: its log
carries about 13 (a log near 800 has an absolute rounding of about 1e-13)."""


def _json_figure(x: float, log_x: float = math.nan) -> float | str | None:
    """:func:`_json_float`, but a figure past a double (``log_x`` finite) as ``"1.23456789012e+347"``."""
    if math.isinf(x) and math.isfinite(log_x):
        return from_log(log_x, _JSON_DIGITS, sign="-" if x < 0 else "")
    return _json_float(x)


def _put(out: dict[str, Any], key: str, x: float, log_x: float) -> None:
    """``out[key]`` as JSON; a figure past a double also gets ``out["log_" + key]``."""
    out[key] = _json_figure(x, log_x)
    if math.isinf(x) and math.isfinite(log_x):
        out[f"log_{key}"] = float(log_x)


def _ratio_dict(ratio: dict[str, float], logs: dict[str, float] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in ratio.items():
        _put(out, k, v, math.nan if logs is None else logs.get(k, math.nan))
    return out


# ---------------------------------------------------------------- validation


def _float_vector(
    x: ArrayLike,
    not_numeric: Callable[[str], InputError],
    not_1d: Callable[[tuple[int, ...]], InputError],
) -> np.ndarray:
    """``x`` as a 1-D float64 array; else raise ``not_numeric(repr(x)[:60])`` or ``not_1d(shape)``.

    The validators below share these two steps and word their errors themselves.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise not_numeric(repr(x)[:60]) from exc
    if arr.ndim != 1:
        raise not_1d(arr.shape)
    return arr


def _index(i: int) -> Message:
    """Where a bad value of an array is, for an array the caller passed: its 0-based index."""
    return Message("index {i}", i=i)


def _data_row(i: int) -> Message:
    """Where a bad value of a file's column is: its data row, counted from 1 under the header (a
    spreadsheet's count: the first value is data row 1), as every message about a file says it."""
    return _data_rows(np.array([i]))


#: The lowest log-probability the audit takes.  Below it a value is a fill value of a masked token, and the
#: log-space sums (:func:`_scaled`: :math:`\log|v| - k\ln 2`) would lose their integer part to rounding.
LOGP_FLOOR = -1e12


def _refuse_values(arr: np.ndarray, bad: np.ndarray, where: Callable[[int], Message], one: str, many: str,
                   **params: Any) -> None:
    """Raise :class:`InputError` where ``bad`` marks a value: ``one`` names it, ``many`` counts them (``n``) and names
    the first; both get ``where`` and ``value``."""
    if not bad.any():
        return
    i = int(np.argmax(bad))
    if int(bad.sum()) == 1:
        raise InputError(one, where=where(i), value=arr[i], **params)
    raise InputError(many, n=int(bad.sum()), where=where(i), value=arr[i], **params)


def _logp_array(x: ArrayLike, name: str, tol: float, where: Callable[[int], Message] = _index) -> np.ndarray:
    """Validate log-probs: numeric, 1-D, finite, ≥ :data:`LOGP_FLOOR`, ≤ tol; ``name`` appears in every message, and
    ``where(i)`` says where the first bad value is (an index; a data row for a file's column)."""
    arr = _float_vector(
        x,
        lambda got: InputError("{name} must be numeric log-probabilities, got {got}", name=name, got=got),
        lambda shape: InputError(
            "{name} must be 1-D (one value per token; flatten first), got shape {shape}", name=name, shape=shape
        ),
    )
    _refuse_values(arr, ~np.isfinite(arr), where,
                   N_("{name} has a NaN or infinite value at {where}: {value}"),
                   N_("{name} has {n} NaN or infinite values (first at {where}: {value})"), name=name)
    _refuse_values(arr, arr < LOGP_FLOOR, where,
                   N_("{name} has a value below {floor:g} at {where}: {value:.6g}; that is a fill value (float32's "
                      "smallest is -3.4e38), not a log-probability a model gives: drop that token"),
                   N_("{name} has {n} values below {floor:g} (first at {where}: {value:.6g}); those are fill values "
                      "(float32's smallest is -3.4e38), not log-probabilities a model gives: drop those tokens"),
                   name=name, floor=LOGP_FLOOR)
    _refuse_values(arr, arr > tol, where,
                   N_("{name} has a value > 0 at {where}: {value:.6g}; "
                      "log-probabilities are <= 0 (is this a logit, a probability or a negated log-prob?)"),
                   N_("{name} has {n} values > 0 (first at {where}: {value:.6g}); "
                      "log-probabilities are <= 0 (is this a logit, a probability or a negated log-prob?)"),
                   name=name)
    return arr


def _rows(idx: np.ndarray, what: str) -> Message:
    """``"rows 3, 8, 12"`` or ``"rows 3, 8, 12, 20, 31, … (40 in all)"``; ``what``: ``"rows"`` or ``"data rows"``."""
    shown = ", ".join(str(int(i)) for i in idx[:5])
    data = what == "data rows"
    if idx.size == 1:
        return Message("data row {shown}", shown=shown) if data else Message("row {shown}", shown=shown)
    if idx.size <= 5:
        return Message("data rows {shown}", shown=shown) if data else Message("rows {shown}", shown=shown)
    if data:
        return Message("data rows {shown}, … ({n} in all)", shown=shown, n=idx.size)
    return Message("rows {shown}, … ({n} in all)", shown=shown, n=idx.size)


def _kl_array(x: ArrayLike, name: str, tol: float, what: str = "rows") -> np.ndarray:
    """Validate exact per-token KLs: numeric, 1-D, finite, ≥ -tol; name the bad rows: their
    indices (``what="rows"``, an array's), or a file's data rows counted from 1 (``"data rows"``)."""
    arr = _float_vector(
        x,
        lambda got: InputError("{name} must be numeric KL values, got {got}", name=name, got=got),
        lambda shape: InputError("{name} must be 1-D (one value per token), got shape {shape}", name=name, shape=shape),
    )
    first = 1 if what == "data rows" else 0  # a file's data rows are counted from 1, an array's from 0
    bad = np.flatnonzero(~np.isfinite(arr)) + first
    if bad.size == 1:
        raise InputError(
            "{name} has a NaN or infinite value ({rows}); an exact KL of two next-token distributions is finite",
            name=name, rows=_rows(bad, what),
        )
    if bad.size:
        raise InputError(
            "{name} has {n} NaN or infinite values ({rows}); "
            "an exact KL of two next-token distributions is finite",
            name=name, n=bad.size, rows=_rows(bad, what),
        )
    neg = np.flatnonzero(arr < -tol)
    if neg.size == 1:
        raise InputError(
            "{name} has a negative value ({rows}: {value:.6g}); "
            "a KL is >= 0 (is this a per-token log-ratio rather than the KL of the full "
            "next-token distributions?)",
            name=name, rows=_rows(neg + first, what), value=arr[neg[0]],
        )
    if neg.size:
        raise InputError(
            "{name} has {n} negative values ({rows}, e.g. {value:.6g}); "
            "a KL is >= 0 (is this a per-token log-ratio rather than the KL of the full "
            "next-token distributions?)",
            name=name, n=neg.size, rows=_rows(neg + first, what), value=arr[neg[0]],
        )
    return arr


def _mask_array(x: ArrayLike, name: str, where: Callable[[int], Message] = _index) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise InputError("{name} must be 1-D, got shape {shape}", name=name, shape=arr.shape)
    if arr.dtype == bool:
        return arr
    try:
        f = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError("{name} must be boolean or 0/1, got {got}", name=name, got=repr(x)[:60]) from exc
    bad = ~((f == 0) | (f == 1))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            "{name} must be boolean or 0/1, got {value!r} at {where}", name=name, value=f[i].item(), where=where(i)
        )
    return f == 1


def _positions_array(x: ArrayLike, name: str, where: Callable[[int], Message] = _index) -> np.ndarray:
    f = _float_vector(
        x,
        lambda got: InputError("{name} must be integer token positions, got {got}", name=name, got=got),
        lambda shape: InputError("{name} must be 1-D, got shape {shape}", name=name, shape=shape),
    )
    bad = ~np.isfinite(f) | (f < 0) | (f != np.round(f)) | (f > 2.0**53)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            "{name} must be integers >= 0, got {value!r} at {where}", name=name, value=f[i].item(), where=where(i)
        )
    return f.astype(np.int64)


def _ids_array(x: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise InputError("{name} must be 1-D, got shape {shape}", name=name, shape=arr.shape)
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise InputError("{name} contains NaN", name=name)
    if arr.dtype.kind == "O" and any(v is None or v != v for v in arr):
        raise InputError("{name} contains missing values", name=name)
    return arr


def _check_length(arr: np.ndarray, name: str, n: int) -> None:
    if arr.shape[0] != n:
        raise InputError(
            "{name} has length {got}, but logp_sampler has length {n}", name=name, got=arr.shape[0], n=n
        )


# ---------------------------------------------------------------- statistics


_LN2 = math.log(2.0)


def _moments(v: np.ndarray, w: np.ndarray | None, n: int) -> tuple[float, float, float]:
    """Mean, SD and SE of ``v`` (``w``: live weights, or None), in doubles; ``inf`` where one overflowed.

    ``n`` counts every item, including those whose weight underflowed to 0.  Where every value is the same the
    mean is that value and the SD and SE are 0 (the rounding of the mean of 50 copies of 0.10653 gave an SE of 4e-18).
    """
    if n > 1 and v.size and np.isfinite(v[0]) and bool(np.all(v == v[0])):
        return float(v[0]), 0.0, 0.0
    if w is None:
        with np.errstate(over="ignore"):  # values too large to sum or square: an inf mean or SD
            mean = float(np.mean(v))
            std = float(np.std(v, ddof=1)) if n > 1 else math.nan
        return mean, std, std / math.sqrt(n)
    sw = w.sum()
    with np.errstate(over="ignore"):  # values too large to sum or square: an inf mean or SD
        mean = float(np.dot(w, v) / sw)
        d2 = (v - mean) ** 2
    sw2 = float(np.dot(w, w))
    # Reliability-weights correction: equals n - 1 when every weight is 1.
    denom = sw - sw2 / sw
    std = math.sqrt(float(np.dot(w, d2)) / denom) if n > 1 and denom > 0 else math.nan
    se = math.sqrt(n / (n - 1) * float(np.dot(w * w, d2))) / sw if n > 1 else math.nan
    return mean, std, se


def _log_abs(v: np.ndarray, log_v: np.ndarray | None) -> np.ndarray:
    r""":math:`\log|v|`, from ``log_v`` where ``v`` is past a double (``inf``), ``-inf`` for 0."""
    out = np.full(v.shape, -np.inf)
    nz = np.isfinite(v) & (v != 0)
    out[nz] = np.log(np.abs(v[nz]))
    big = np.isinf(v)
    out[big] = np.inf if log_v is None else log_v[big]
    out[np.isnan(out) & big] = np.inf  # no log given: truly infinite
    return out


#: A shift past which every double scales to 0 (:math:`2^{1024} \cdot 2^{-2200} < 2^{-1074}`); ``ldexp`` takes
#: no larger exponent than an int32.
_LDEXP_MAX = 2200


def _scaled(v: np.ndarray, la: np.ndarray) -> tuple[np.ndarray, int] | None:
    r"""``(u, k)`` with :math:`v = u\,2^k` and :math:`\max|u| \le 1`; None if a value is truly infinite.

    Finite values are scaled exactly (``ldexp``); those past a double from their
    log, :math:`u = \pm e^{\log|v| - k\ln 2}`.  Values below :math:`2^{k-1074}`
    become 0, which changes no figure of the whole.
    """
    top = float(la.max())
    if not math.isfinite(top):
        return None
    k = int(math.ceil(top / _LN2)) + 1
    big = np.isinf(v)
    u = np.empty_like(v)
    u[~big] = np.ldexp(v[~big], -min(k, _LDEXP_MAX))
    u[big] = np.sign(v[big]) * np.exp(la[big] - k * _LN2)
    return u, k


def _unscaled(x: float, k: int) -> tuple[float, float]:
    r""":math:`x\,2^k` as ``(float, nan)`` where it fits a double, else ``(±inf, log|x 2^k|)``."""
    if not math.isfinite(x) or x == 0.0:
        return x, math.nan
    try:
        return math.ldexp(x, k), math.nan
    except OverflowError:
        return math.copysign(math.inf, x), math.log(abs(x)) + k * _LN2


def _from_log(log_x: float) -> tuple[float, float]:
    r""":math:`e^{\ell}` as ``(float, nan)`` where it fits a double, else ``(inf, ℓ)``; ``(inf, nan)`` for ℓ = ∞."""
    if math.isnan(log_x):
        return math.nan, math.nan
    if math.isinf(log_x):
        return (math.inf if log_x > 0 else 0.0), math.nan
    try:
        return math.exp(log_x), math.nan
    except OverflowError:
        return math.inf, log_x


def _value(x: float, log_x: float) -> tuple[float, float]:
    """A value of ``v`` as ``(float, nan)``, or ``(inf, log)`` where it is past a double."""
    if math.isinf(x) and x > 0 and math.isfinite(log_x):
        return _from_log(float(log_x))
    return float(x), math.nan


def _summarise(v: np.ndarray, w: np.ndarray | None, log_v: np.ndarray | None = None) -> EstimatorSummary:
    r"""Summary of values ``v``; with weights ``w`` (max 1) the SNIS versions.

    ``log_v`` holds :math:`\log v` where ``v`` is ``inf`` because it is past a
    double (:func:`_log_values`).  Where nothing overflows the figures are the
    plain double ones.  Where a value, a sum or a square does, every SNIS
    figure is homogeneous of degree 1 in ``v`` (:math:`\hat m`, :math:`\hat s`
    and :math:`\widehat{\mathrm{se}}` of :math:`c\,v` are :math:`c` times those of
    ``v``), so they are computed from :math:`u = v\,2^{-k}` with
    :math:`\max|u| \le 1` and scaled back, :math:`\log x = \log x_u + k\ln 2`
    where :math:`x = x_u 2^k` is past a double.  Percentiles and the maximum
    are values, ranked by their log where they are past a double.
    """
    n = v.size
    # a weight that underflowed to 0 must not turn an inf value into nan
    live = np.ones(n, dtype=bool) if w is None else w > 0
    vl, wl = (v, None) if w is None else (v[live], w[live])
    lv = None if log_v is None else log_v[live]
    overflow = not np.isfinite(vl).all()
    logs = dict.fromkeys(_LOG_FIELDS, math.nan)
    if overflow:
        mean = std = se = math.inf
    else:
        mean, std, se = _moments(vl, wl, n)
    if overflow or math.isinf(mean) or math.isinf(std) or math.isinf(se):
        la = _log_abs(vl, lv)
        scaled = _scaled(vl, la)
        if scaled is not None:  # else a value is truly infinite: so are the mean, SD and SE
            u, k = scaled
            mean_u, std_u, se_u = _moments(u, wl, n)
            figures = {"mean": mean, "std": std, "se": se}
            for name, x_u in (("mean", mean_u), ("std", std_u), ("se", se_u)):
                if not math.isfinite(figures[name]):  # a figure that fitted stays as computed
                    figures[name], logs[name] = _unscaled(x_u, k)
            mean, std, se = figures["mean"], figures["std"], figures["se"]
        elif n == 1:
            std = se = math.nan
    if w is None:
        neg_fraction = float(np.mean(v < 0))
    else:
        neg_fraction = float(wl[vl < 0].sum() / wl.sum())
    if not overflow:
        if w is None:
            p95 = float(np.quantile(v, 0.95, method="inverted_cdf"))
            p99 = float(np.quantile(v, 0.99, method="inverted_cdf"))
        else:
            p95, p99 = _weighted_quantile(vl, wl, 0.95), _weighted_quantile(vl, wl, 0.99)
        vmax = float(np.max(v))
    else:
        la = _log_abs(vl, lv)
        tie = np.where(np.isinf(vl), la, 0.0)  # values past a double are ranked by their log
        order = np.lexsort((tie, vl))
        picks = {}
        for name, q in (("p95", 0.95), ("p99", 0.99)):
            if w is None:  # numpy's own inverted-CDF rank, on 0 … n−1
                i = int(np.quantile(np.arange(n, dtype=np.float64), q, method="inverted_cdf"))
            else:
                i = _weighted_quantile_rank(wl[order], q)
            picks[name] = int(order[i])
        got = {}
        for name, i in picks.items():
            got[name], logs[name] = _value(vl[i], la[i])
        p95, p99 = got["p95"], got["p99"]
        la_all = _log_abs(v, log_v)
        top = int(np.lexsort((np.where(np.isinf(v), la_all, 0.0), v))[-1])  # over every value, as below
        vmax, logs["max"] = _value(v[top], la_all[top])
    return EstimatorSummary(  # + 0.0: a −0.0 (k1 = −log r at log r = 0) is 0, not "-0.0000"
        mean=mean + 0.0,
        std=std,
        se=se,
        neg_fraction=neg_fraction,
        p95=p95 + 0.0,
        p99=p99 + 0.0,
        max=vmax + 0.0,
        **{f"log_{k}": x for k, x in logs.items()},
    )


def _weighted_quantile(v: np.ndarray, w: np.ndarray, q: float) -> float:
    """Smallest value whose weighted empirical CDF reaches ``q`` (inverted CDF)."""
    order = np.argsort(v, kind="stable")
    return float(v[order][_weighted_quantile_rank(w[order], q)])


def _weighted_quantile_rank(w_sorted: np.ndarray, q: float) -> int:
    """The rank (in sorted order) of the weighted inverted-CDF ``q``-quantile, given the weights in that order."""
    cw = np.cumsum(w_sorted)
    i = int(np.searchsorted(cw, q * cw[-1], side="left"))
    return min(i, w_sorted.size - 1)


def _ess(w: np.ndarray) -> float:
    return float(w.sum() ** 2 / np.dot(w, w))


def _scaled_weights(logw: np.ndarray) -> np.ndarray:
    # SNIS figures and the ESS do not change when every weight is scaled, so
    # scale the largest to 1 and never overflow.
    return np.exp(logw - logw.max())


def position_bucket(positions: ArrayLike) -> np.ndarray:
    r"""The log2 position bucket of each token position.

    Bucket 0 is position 0; bucket :math:`b \in [1, 18]` holds positions
    :math:`[2^{b-1}, 2^b)`; bucket 19 holds every position :math:`\ge 2^{18}`.
    Widths grow with position because early tokens are few per sequence but
    many per batch, and late ones the reverse: log2 buckets keep the early,
    fast-changing positions apart and the table short (≤ 20 rows).

    Parameters
    ----------
    positions : array_like of int
        Token index within its sequence, ≥ 0.

    Returns
    -------
    numpy.ndarray of int
        Bucket index, 0 … :data:`MAX_POSITION_BUCKETS` − 1.

    Examples
    --------
    >>> position_bucket([0, 1, 2, 3, 4, 127, 128]).tolist()
    [0, 1, 2, 2, 3, 7, 8]
    """
    p = _positions_array(positions, "positions")
    # frexp gives p = m * 2**e with m in [0.5, 1): e is p's bit length (0 for p = 0).
    _, e = np.frexp(p.astype(np.float64))
    return np.minimum(e, MAX_POSITION_BUCKETS - 1).astype(np.int64)


def _bucket_edges(b: int) -> tuple[int, int | None]:
    if b == 0:
        return 0, 1
    if b == MAX_POSITION_BUCKETS - 1:
        return 2 ** (b - 1), None
    return 2 ** (b - 1), 2**b


def _per_token_values(direction: str, logr: np.ndarray) -> dict[str, np.ndarray]:
    if direction == "sampler-other":
        with np.errstate(over="ignore"):  # (log r)^2 past a double: inf here, its log in _log_values
            return {"k1": estimators.k1(logr), "k2": estimators.k2(logr), "k3": estimators.k3(logr)}
    # KL[other||sampler]: the estimator seen from samples of `other` (whose
    # log-ratio is -logr), importance-weighted back to the sampler by r.
    with np.errstate(over="ignore"):
        r = np.exp(logr)
    with np.errstate(over="ignore", invalid="ignore"):  # past a double: inf here, its log in _log_values
        k1 = r * estimators.k1(-logr)
        k2 = r * estimators.k2(-logr)
    return {
        "k1": k1,
        "k2": np.where(r == 0.0, 0.0, k2),  # r = 0 and (log r)^2 past a double: 0, not 0 * inf
        "k3": estimators.k3_pq(logr),  # = r * k3(-logr), without the cancellation
    }


def _log_values(direction: str, logr: np.ndarray, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    r"""The natural log of every value that is ``inf`` in ``values`` but finite (past a double).

    With :math:`t = \log r`, where a value overflows (:math:`t > 0` for every
    term with :math:`e^t`):

    ================  ==========================================  =========================================
    key               value                                       its log
    ================  ==========================================  =========================================
    k2 (both)         :math:`\tfrac12 t^2` (times :math:`e^t`)    :math:`2\log|t| - \log 2` (:math:`+\,t`)
    k3 sampler-other  :math:`e^t - 1 - t`                         :math:`t + \log(1 - (1+t)e^{-t})`
    k1 other-sampler  :math:`t e^t`                               :math:`t + \log t`
    k3 other-sampler  :math:`(t-1)e^t + 1`                        :math:`t + \log(t - 1 + e^{-t})`
    ================  ==========================================  =========================================

    A value whose log turns out to fit a double (the last ulps before
    overflow) is written back into ``values`` as a float.  Keys with no such
    value are left out.
    """
    out: dict[str, np.ndarray] = {}
    for key, v in values.items():
        big = np.isinf(v) & (v > 0)
        if key == RB_KEY or not big.any():
            continue
        t = logr[big]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if key == "k2":
                lb = 2.0 * np.log(np.abs(t)) - _LN2 + (t if direction == "other-sampler" else 0.0)
            elif key == "k3" and direction == "sampler-other":
                lb = t + np.log1p(-(1.0 + t) * np.exp(-t))
            elif key == "k1":
                lb = t + np.log(t)
            else:
                lb = t + np.log((t - 1.0) + np.exp(-t))
        lb = np.where(np.isfinite(lb), lb, np.nan)  # not past a double but infinite: no log
        fits = lb < _LOG_MAX_DOUBLE
        if fits.any():
            idx = np.flatnonzero(big)[fits]
            v[idx] = np.exp(lb[fits])
            lb = np.where(fits, np.nan, lb)
        if np.isfinite(lb).any():
            logs = np.full(v.shape, np.nan)
            logs[big] = lb
            out[key] = logs
    return out


_LOG_MAX_DOUBLE = math.log(np.finfo(np.float64).max)


# ---------------------------------------------------------------- too few tokens

MIN_FOR_SE = 30
r"""Fewest counted tokens (or effective tokens, or sequences) for which a ±SE is shown.

The SE is :math:`\hat\sigma/\sqrt n` with the *sample* SD :math:`\hat\sigma`.
Even for normal values, the relative standard error of :math:`\hat\sigma` is
about :math:`1/\sqrt{2(n-1)}`: 13% at :math:`n = 30`, 41% at :math:`n = 4`; and
the ±1.96 SE band should be :math:`\pm t_{0.975,\,n-1}` SE, 4% wider at
:math:`n = 30` (2.045) but 62% wider at :math:`n = 4` (3.18).  The per-token
KL estimators are skewed and heavy-tailed (:mod:`kl_core.estimation.reliability`), which
only makes small :math:`n` worse.  30 is the usual textbook threshold for the
normal approximation of a mean; below it the SE is withheld, not just flagged."""


@dataclass(frozen=True)
class SampleSizeCheck:
    r"""Which of an audit's statistics mean something for ``n`` items, and a note when some don't.

    Attributes
    ----------
    n : float
        The items counted: tokens, the effective sample size with a rollout
        policy, or sequences.
    se : bool
        True if ``n >= MIN_FOR_SE``: the standard error and the SD are shown.
    p95, p99 : bool
        True if the percentile is shown.  A :math:`p`-percentile needs at
        least one value above it, :math:`n \ge 1/(1-p)` (20 and 100), else the
        inverse-CDF percentile *is* the largest value; p95 is also withheld
        with the SE (below 30), so that the spread statistics go together.
    note : Message or None
        None when everything is meaningful; else one sentence for the user.
    """

    n: float
    se: bool
    p95: bool
    p99: bool
    note: Message | None

    @property
    def all_meaningful(self) -> bool:
        """True if no statistic is withheld."""
        return self.se and self.p95 and self.p99

    def masked_all(self, summaries: dict[str, EstimatorSummary]) -> dict[str, EstimatorSummary]:
        """:meth:`masked` of every summary (``{"k1": …, "k2": …}``)."""
        return {key: self.masked(v) for key, v in summaries.items()}

    def masked(self, summary: EstimatorSummary) -> EstimatorSummary:
        """``summary`` with the statistics that mean nothing at this ``n`` set to ``nan``."""
        nan = math.nan
        return EstimatorSummary(
            mean=summary.mean, std=summary.std if self.se else nan, se=summary.se if self.se else nan,
            neg_fraction=summary.neg_fraction, p95=summary.p95 if self.p95 else nan,
            p99=summary.p99 if self.p99 else nan, max=summary.max,
            log_mean=summary.log_mean, log_std=summary.log_std if self.se else nan,
            log_se=summary.log_se if self.se else nan, log_p95=summary.log_p95 if self.p95 else nan,
            log_p99=summary.log_p99 if self.p99 else nan, log_max=summary.log_max,
        )


P99_MIN = 100
"""Fewest items for which p99 is shown: :math:`1/(1-0.99)`; with fewer it is the largest value."""

_COUNT_LIMITS = (MIN_FOR_SE, P99_MIN)


def count_text(n: float) -> str:
    r"""A count of items as the audit writes it, never rounded across :data:`MIN_FOR_SE` or 100.

    A whole number is written with thousands separators (``1,234``); an
    effective count :math:`(\sum w)^2/\sum w^2` with one decimal, or with
    as many more as it takes for the text to stay on the same side of every
    threshold :math:`t \in \{30, 100\}` as ``n`` (an ESS of 29.99 is
    ``29.99``, not ``30.0``: 30 tokens would get a standard error).  Past six
    decimals the value is truncated, which never rounds up.

    Parameters
    ----------
    n : float
        The count, finite and >= 0.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``n`` is negative or not finite.

    Examples
    --------
    >>> count_text(1234), count_text(12.34), count_text(29.99), count_text(99.96)
    ('1,234', '12.3', '29.99', '99.96')
    """
    n = check_finite(n, "n")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n!r}")
    if n == int(n):
        return f"{n:,.0f}"
    for digits in range(1, 7):
        text = f"{n:,.{digits}f}"
        shown = float(text.replace(",", ""))
        if all((shown >= t) == (n >= t) for t in _COUNT_LIMITS):
            return text
    return f"{math.floor(n * 1e6) / 1e6:,.6f}"


#: What :func:`sample_size_check` says below :data:`MIN_FOR_SE` items, by what is counted: a note for one
#: item and one for n (whole counts as {n:,.0f}; effective counts as :func:`count_text` writes them).
#: Literal Message calls, so that Babel extracts every template.
_FEW_FOR_SE = {
    "tokens": (
        lambda least: Message(
            "Only 1 token: too few for a standard error (it needs at least {least}), so the per-token SE, std, "
            "p95 and p99 are not shown, and the mean can be far from the true KL. Audit more tokens (a whole "
            "batch) before reading anything into these numbers.", least=least),
        lambda n, least: Message(
            "Only {n:,.0f} tokens: too few for a standard error (it needs at least {least}), so the "
            "per-token SE, std, p95 and p99 are not shown, and the means can be far from the true KL. Audit more "
            "tokens (a whole batch) before reading anything into these numbers.", n=n, least=least),
    ),
    "effective tokens": (
        lambda least: Message(
            "Only 1 effective token (the rollout weights leave that few): too few for a standard error (it needs "
            "at least {least}), so the per-token SE, std, p95 and p99 are not shown, and the means can be far "
            "from the true KL.", least=least),
        lambda n, least: Message(
            "Only {n} effective tokens (the rollout weights leave that few): too few for a "
            "standard error (it needs at least {least}), so the per-token SE, std, p95 and p99 are not "
            "shown, and the means can be far from the true KL.", n=n, least=least),
    ),
    "sequences": (
        lambda least: Message(
            "Only 1 sequence: too few for a standard error of the sequence sums (it needs at least {least}), so "
            "their SE, std, p95 and p99 are not shown.", least=least),
        lambda n, least: Message(
            "Only {n:,.0f} sequences: too few for a standard error of the sequence sums (it needs at "
            "least {least}), so their SE, std, p95 and p99 are not shown.", n=n, least=least),
    ),
    "effective sequences": (
        lambda least: Message(
            "Only 1 effective sequence (the rollout weights leave that few): too few for a standard error of the "
            "sequence sums (it needs at least {least}), so their SE, std, p95 and p99 are not shown.",
            least=least),
        lambda n, least: Message(
            "Only {n} effective sequences (the rollout weights leave that few): too few for a standard error of "
            "the sequence sums (it needs at least {least}), so their SE, std, p95 and p99 are not shown.",
            n=n, least=least),
    ),
}
_FEW_FOR_P99 = {  # whole counts keep {n:,.0f}; effective counts get count_text's digits
    "tokens": lambda n: Message(
        "Only {n:,.0f} tokens: p99 needs at least 100 (with fewer it is just the largest value), "
        "so it is not shown.", n=n),
    "effective tokens": lambda n: Message(
        "Only {n} effective tokens: p99 needs at least 100 (with fewer it is just the "
        "largest value), so it is not shown.", n=n),
    "sequences": lambda n: Message(
        "Only {n:,.0f} sequences: p99 of the sequence sums needs at least 100 (with fewer it is "
        "just the largest value), so it is not shown.", n=n),
    "effective sequences": lambda n: Message(
        "Only {n} effective sequences: p99 of the sequence sums needs at least 100 "
        "(with fewer it is just the largest value), so it is not shown.", n=n),
}


def sample_size_check(n: float, what: str = "tokens") -> SampleSizeCheck:
    r"""Which statistics of :func:`audit`'s summaries mean something for ``n`` items.

    The SE and SD need :math:`n \ge` :data:`MIN_FOR_SE` (30; see there for
    why); so does p95.  p99 needs :math:`n \ge 1/(1-0.99) = 100`: with fewer
    values the inverse-CDF percentile is the maximum itself.  The note writes
    ``n`` with :func:`count_text` (an ESS of 29.99 is not "30.0").

    Parameters
    ----------
    n : float
        Counted tokens (:attr:`AuditReport.n`), or the effective sample size
        :attr:`AuditReport.ess` when a rollout policy weights the tokens, or
        sequences, or their effective number :attr:`SequenceSummary.ess`.
    what : {"tokens", "effective tokens", "sequences", "effective sequences"}
        What ``n`` counts, for the note.

    Returns
    -------
    SampleSizeCheck

    Raises
    ------
    ValueError
        If ``n`` is negative or not finite, or ``what`` is not one of the four.

    Examples
    --------
    >>> c = sample_size_check(4)
    >>> c.se, c.p95, c.p99
    (False, False, False)
    >>> sample_size_check(250).all_meaningful
    True
    """
    n = check_finite(n, "n")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n!r}")
    if what not in _FEW_FOR_SE:
        raise ValueError(
            f"what must be 'tokens', 'effective tokens', 'sequences' or 'effective sequences', got {what!r}")
    se = p95 = n >= MIN_FOR_SE  # ≥ 30 also covers p95's own 1/(1 - 0.95) = 20
    p99 = n >= P99_MIN
    note = None
    whole = not what.startswith("effective")  # a count of items: {n:,.0f}; an ESS: count_text
    shown = n if whole else count_text(n)
    if not se:
        one, many = _FEW_FOR_SE[what]
        single = n == 1 if whole else shown == "1"
        note = one(MIN_FOR_SE) if single else many(shown, MIN_FOR_SE)
    elif not p99:
        note = _FEW_FOR_P99[what](shown)
    return SampleSizeCheck(n=n, se=se, p95=p95, p99=p99, note=note)


@dataclass(frozen=True)
class SECoverage:
    """How often a ±z SE band from data alone held the exact mean, in a seeded simulation.

    Attributes
    ----------
    key : str
        The estimator (``"k3"``).
    q, p : str
        The sampler and the other distribution, by name (``"N(0, 1)"``).
    n : int
        Values per run.
    runs : int
        Independent runs.
    z : float
        Half-width of the band in SEs.
    coverage : float
        Fraction of runs whose band ``mean ± z·sd/√n`` held the exact KL[q‖p].
    """

    key: str
    q: str
    p: str
    n: int
    runs: int
    z: float
    coverage: float


@lru_cache(maxsize=1)
def se_band_coverage() -> SECoverage:
    r"""The coverage of the ±1.96 SE band of k3, q = N(0, 1), p = N(3, 1), N = 1000: it is too narrow.

    2,000 runs from one seeded stream (under a second, computed once per process):
    the case the page cites for an SE that is too narrow because the log-ratios
    have heavy tails (``benchmarks/coverage_study.py`` runs the same count over
    many pairs).  Its binomial standard error is about 0.011.
    """
    q, p, key, n, runs, z = Gaussian(0.0, 1.0), Gaussian(3.0, 1.0), "k3", 1000, 2000, 1.96
    target = kl(q, p)
    rng = np.random.default_rng(20250101)
    hits, rows = 0, 200
    for _ in range(runs // rows):
        v = estimators.evaluate(key, log_ratio(p, q, q.sample(rng, rows * n).reshape(rows, n)))
        m, sd = v.mean(axis=1), v.std(axis=1, ddof=1)
        hits += int(np.sum(np.abs(m - target) <= z * sd / math.sqrt(n)))
    return SECoverage(key=key, q=q.name, p=p.name, n=n, runs=runs, z=z, coverage=hits / runs)


# ---------------------------------------------------------------- audit


def audit(
    logp_sampler: ArrayLike,
    logp_other: ArrayLike,
    *,
    direction: str = "sampler-other",
    mask: ArrayLike | None = None,
    positions: ArrayLike | None = None,
    sequence_ids: ArrayLike | None = None,
    logp_rollout: ArrayLike | None = None,
    logp_tolerance: float = LOGP_TOLERANCE,
    exact_kl: ArrayLike | None = None,
) -> AuditReport:
    r"""Estimate a KL divergence from per-token log-probs, with its error bars.

    With :math:`\log r = \text{logp\_other} - \text{logp\_sampler}`:

    .. math::

        \mathrm{KL}[q\|p] = \mathbb{E}_q[-\log r] = \mathbb{E}_q[(r-1)-\log r], \qquad
        \mathrm{KL}[p\|q] = \mathbb{E}_q[r\log r] = \mathbb{E}_q[r\log r-(r-1)],

    where ``q`` is the sampler.  :data:`DEFINITIONS` and the module docstring
    give ``k1``, ``k2`` and ``k3`` in each direction.

    Parameters
    ----------
    logp_sampler : array_like, 1-D
        Log-prob of each sampled token under the policy that sampled it.
    logp_other : array_like, 1-D
        Log-prob of the same tokens under the other policy.
    direction : {"sampler-other", "other-sampler"}
        ``"sampler-other"`` estimates KL[sampler‖other] (e.g. KL[policy‖ref]
        on the policy's own samples, or PPO's KL[old‖new]);
        ``"other-sampler"`` estimates KL[other‖sampler].
    mask : array_like of bool or 0/1, optional
        Which tokens count (e.g. response tokens, not prompt or padding).
        Masked tokens must still hold valid numbers.
    positions : array_like of int, optional
        Token index within its sequence; gives the per-position table
        (:func:`position_bucket`).
    sequence_ids : array_like, optional
        Sequence label of each token (any sortable values); gives per-sequence
        sums and their summary.
    logp_rollout : array_like, optional
        Log-prob under the policy that actually drew the tokens, when that is
        not the sampler; every figure is then importance-weighted to the
        sampler with :math:`w = e^{\text{logp\_sampler} - \text{logp\_rollout}}`.
    logp_tolerance : float, default :data:`LOGP_TOLERANCE`
        Largest log-prob accepted as float noise.
    exact_kl : array_like, optional
        Per token, the exact KL of the two next-token distributions at its
        prefix, in the audited direction (:data:`RB_DEFINITIONS`), computed
        from full logits; adds the Rao–Blackwellized ``rb`` and the variance
        reductions.  Finite and ≥ 0 (down to −:data:`KL_TOLERANCE`), masked
        tokens included.

    Returns
    -------
    AuditReport

    Raises
    ------
    ValueError
        Naming the parameter: non-numeric, not 1-D, NaN or infinite values,
        log-probs above ``logp_tolerance``, lengths that differ from
        ``logp_sampler``, an empty input or a mask that keeps no token,
        mask values other than 0/1, positions that are not integers ≥ 0,
        an ``exact_kl`` that is negative or not finite (the message lists the
        rows), or an unknown ``direction``.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html;
    A. B. Owen, *Monte Carlo theory, methods and examples* (2013), ch. 9 (SNIS
    standard error and ESS); A. Amini, T. Vieira, R. Cotterell (2025),
    arXiv:2504.10637 (``rb``).

    Examples
    --------
    >>> rep = audit([-1.0, -2.0, -0.5], [-1.5, -1.0, -0.5])
    >>> rep.n, round(rep.k1.mean, 6), round(rep.k3.mean, 6)
    (3, -0.166667, 0.274937)
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {list(DIRECTIONS)}, got {direction!r}")
    tol = check_finite(logp_tolerance, "logp_tolerance")
    if tol < 0:
        raise ValueError(f"logp_tolerance must be >= 0, got {logp_tolerance!r}")
    ls = _logp_array(logp_sampler, "logp_sampler", tol)
    n_total = ls.size
    if n_total == 0:
        raise InputError("logp_sampler is empty: nothing to audit")
    lo = _logp_array(logp_other, "logp_other", tol)
    _check_length(lo, "logp_other", n_total)

    keep = np.ones(n_total, dtype=bool)
    if mask is not None:
        keep = _mask_array(mask, "mask")
        _check_length(keep, "mask", n_total)
    pos = None
    if positions is not None:
        pos = _positions_array(positions, "positions")
        _check_length(pos, "positions", n_total)
    ids = None
    if sequence_ids is not None:
        ids = _ids_array(sequence_ids, "sequence_ids")
        _check_length(ids, "sequence_ids", n_total)
    lr = None
    if logp_rollout is not None:
        lr = _logp_array(logp_rollout, "logp_rollout", tol)
        _check_length(lr, "logp_rollout", n_total)

    kl_tok = None
    if exact_kl is not None:
        kl_tok = _kl_array(exact_kl, "exact_kl", KL_TOLERANCE)
        _check_length(kl_tok, "exact_kl", n_total)

    n = int(keep.sum())
    if n == 0:
        raise InputError("mask keeps none of the {n} tokens: nothing to audit", n=n_total)

    logr = lo[keep] - ls[keep]
    values = _per_token_values(direction, logr)
    log_values = _log_values(direction, logr, values)
    if kl_tok is not None:
        values[RB_KEY] = kl_tok[keep]

    w = ess = ess_fraction = None
    logw = None
    if lr is not None:
        logw = ls[keep] - lr[keep]
        w = _scaled_weights(logw)
        ess = _ess(w)
        ess_fraction = ess / n

    summaries = {k: _summarise(v, w, log_values.get(k)) for k, v in values.items()}

    buckets = None
    if pos is not None:
        b = position_bucket(pos[keep])
        rows = []
        for bi in np.unique(b):
            sel = b == bi
            wb = None if logw is None else _scaled_weights(logw[sel])
            stats = {
                k: _summarise(v[sel], wb, None if k not in log_values else log_values[k][sel])
                for k, v in values.items()
            }
            lo_edge, hi_edge = _bucket_edges(int(bi))
            rows.append(
                PositionBucket(
                    lo=lo_edge,
                    hi=hi_edge,
                    count=int(sel.sum()),
                    mean={k: s.mean for k, s in stats.items()},
                    se={k: s.se for k, s in stats.items()},
                    ess=None if wb is None else _ess(wb),
                    log_mean={k: s.log_mean for k, s in stats.items()},
                    log_se={k: s.log_se for k, s in stats.items()},
                )
            )
        buckets = tuple(rows)

    seqs = None
    if ids is not None:
        seqs = _sequence_summary(ids[keep], values, logw, log_values)

    ratio, log_ratio = _variance_ratio(summaries)
    return AuditReport(
        n=n,
        n_total=n_total,
        direction=direction,
        k1=summaries["k1"],
        k2=summaries["k2"],
        k3=summaries["k3"],
        positions=buckets,
        sequences=seqs,
        ess=ess,
        ess_fraction=ess_fraction,
        values=values,
        weights=w,
        rb=summaries.get(RB_KEY),
        variance_ratio=ratio,
        log_values=log_values,
        log_variance_ratio=log_ratio,
    )


def _variance_ratio(
    stats: dict[str, EstimatorSummary],
) -> tuple[dict[str, float] | None, dict[str, float] | None]:
    r"""Var(k)/Var(rb) for k1 and k3, from the summaries' standard deviations, and the logs of those past a double.

    A spread below 1e-12 of the mean is the rounding of a constant column and counts as 0.
    Where an SD or a mean is past a double, or the ratio or a variance is, the
    ratio is :math:`\exp(2\log s_k - 2\log s_{\mathrm{rb}})`, in logs.
    """
    if RB_KEY not in stats:
        return None, None

    def var(s: EstimatorSummary) -> float:
        return 0.0 if s.std <= 1e-12 * abs(s.mean) else s.std**2

    def log_var(s: EstimatorSummary) -> float:
        ls, lm = s.log_abs("std"), s.log_abs("mean")
        if math.isnan(ls):
            return math.nan
        return -math.inf if ls <= _LOG_1E_12 + lm else 2.0 * ls

    rb = stats[RB_KEY]
    out, logs = {}, {}
    for k in ("k1", "k3"):
        s = stats[k]
        logs[k] = math.nan
        plain = None
        if all(math.isfinite(x) for x in (s.std, s.mean, rb.std, rb.mean)):
            try:  # a finite SD whose square is past a double raises OverflowError
                v, v_rb = var(s), var(rb)
            except OverflowError:
                pass
            else:
                if math.isnan(v) or math.isnan(v_rb):
                    plain = math.nan
                elif v_rb > 0:
                    plain = v / v_rb  # inf when past a double: then in logs below
                else:
                    plain = math.nan if v == 0 else math.inf
                if math.isinf(plain) and v_rb > 0:
                    plain = None
        if plain is not None:
            out[k] = plain
            continue
        lv, lrb = log_var(s), log_var(rb)
        if math.isnan(lv) or math.isnan(lrb):
            out[k] = math.nan
        elif lrb == -math.inf:
            out[k] = math.nan if lv == -math.inf else math.inf
        else:
            out[k], logs[k] = _from_log(lv - lrb)
    return out, logs


_LOG_1E_12 = math.log(1e-12)


def _sums_by_sequence(
    inv: np.ndarray, m: int, v: np.ndarray, log_v: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    r"""Per sequence, the sum of ``v``; and the log of each sum past a double (None if there is none).

    A sum that overflows (a value past a double, or finite values whose sum is
    not) is recomputed as :math:`2^{k_s}\sum_i v_i 2^{-k_s}`, with :math:`2^{k_s}`
    above the sequence's largest :math:`|v_i|` (:func:`_scaled`), so that
    :math:`\log|S| = \log|\textstyle\sum_i u_i| + k_s \ln 2`.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.bincount(inv, weights=v, minlength=m)
    bad = ~np.isfinite(sums)
    if not bad.any():
        return sums, None
    la = _log_abs(v, log_v)
    top = np.full(m, -np.inf)
    np.maximum.at(top, inv, la)
    redo = bad & np.isfinite(top)  # else a value is truly infinite, and so is the sum
    k = np.zeros(m, dtype=np.int64)
    k[redo] = np.ceil(top[redo] / _LN2).astype(np.int64) + 1
    kt = k[inv]
    big = np.isinf(v)
    u = np.empty_like(v)
    u[~big] = np.ldexp(v[~big], -np.minimum(kt[~big], _LDEXP_MAX))
    with np.errstate(over="ignore"):
        u[big] = np.sign(v[big]) * np.exp(la[big] - kt[big] * _LN2)
    su = np.bincount(inv, weights=u, minlength=m)
    logs = np.full(m, np.nan)
    for seq in np.flatnonzero(redo):
        sums[seq], logs[seq] = _unscaled(float(su[seq]), int(k[seq]))
    return sums, (logs if np.isfinite(logs).any() else None)


def _sequence_summary(
    ids: np.ndarray,
    values: dict[str, np.ndarray],
    logw: np.ndarray | None,
    log_values: dict[str, np.ndarray] | None = None,
) -> SequenceSummary:
    try:
        uniq, inv = np.unique(ids, return_inverse=True)
    except TypeError as exc:
        raise InputError("sequence_ids must be mutually comparable values: {why}", why=str(exc)) from exc
    inv = inv.ravel()
    m = uniq.size
    tokens = np.bincount(inv, minlength=m)
    log_values = log_values or {}
    sums, log_sums = {}, {}
    for k, v in values.items():
        sums[k], ls = _sums_by_sequence(inv, m, v, log_values.get(k))
        if ls is not None:
            log_sums[k] = ls
    w = None
    ess = None
    if logw is not None:
        # A whole sequence's weight is the product of its token weights.
        w = _scaled_weights(np.bincount(inv, weights=logw, minlength=m))
        ess = _ess(w)
    stats = {k: _summarise(s, w, log_sums.get(k)) for k, s in sums.items()}
    ratio, log_ratio = _variance_ratio(stats)
    return SequenceSummary(
        n_sequences=m,
        ids=uniq,
        tokens=tokens,
        sums=sums,
        stats=stats,
        ess=ess,
        variance_ratio=ratio,
        log_sums=log_sums,
        log_variance_ratio=log_ratio,
    )


# ---------------------------------------------------------------- loading


@dataclass(frozen=True)
class AuditTable:
    """Arrays read by :func:`load_table`, ready for :func:`audit`.

    Attributes
    ----------
    logp_sampler, logp_other : numpy.ndarray
        The two log-prob columns, float64.
    mask, positions, sequence_ids, logp_rollout : numpy.ndarray or None
        The optional columns, when named.
    columns : dict of str to str
        The column read for each role, e.g. ``{"logp_sampler": "logp_policy", …}``.
    n_rows : int
        Rows in the file.
    exact_kl : numpy.ndarray or None
        The exact per-token KL column, when named.
    """

    logp_sampler: np.ndarray = field(repr=False)
    logp_other: np.ndarray = field(repr=False)
    mask: np.ndarray | None = field(default=None, repr=False)
    positions: np.ndarray | None = field(default=None, repr=False)
    sequence_ids: np.ndarray | None = field(default=None, repr=False)
    logp_rollout: np.ndarray | None = field(default=None, repr=False)
    columns: dict[str, str] = field(default_factory=dict)
    n_rows: int = 0
    exact_kl: np.ndarray | None = field(default=None, repr=False)

    def as_kwargs(self) -> dict[str, np.ndarray | None]:
        """Keyword arguments for :func:`audit`: ``audit(**table.as_kwargs(), direction=…)``."""
        return {
            "logp_sampler": self.logp_sampler,
            "logp_other": self.logp_other,
            "mask": self.mask,
            "positions": self.positions,
            "sequence_ids": self.sequence_ids,
            "logp_rollout": self.logp_rollout,
            "exact_kl": self.exact_kl,
        }


COLUMN_ROLES: dict[str, Message] = {
    "sampler_col": Message("the sampler's log-probs"),
    "other_col": Message("the other policy's log-probs"),
    "mask_col": Message("the mask"),
    "position_col": Message("the positions"),
    "sequence_col": Message("the sequence ids"),
    "rollout_col": Message("the rollout policy's log-probs"),
    "kl_col": Message("the exact next-token KL"),
}
"""What each column parameter of :func:`load_table` holds, in words (for the app's messages)."""


def _column_error(exc: InputError, file: str | None, col: str, role: str, why: Message | str) -> InputError:
    """``exc`` (naming the parameter), worded for a user: the file, the column, its role, the reason."""
    return exc.worded(
        "“{file}”, column “{col}” ({role}): {why}",
        file=table_files.file_label(file), col=col, role=COLUMN_ROLES[role], why=why,
    )


def _data_rows(idx: np.ndarray) -> Message:
    """Data rows as a user counts them (1 = the first row under the header): ``"data rows 2, 5, 9"``."""
    return _rows(np.asarray(idx) + 1, "data rows")


def _value_problem(values: np.ndarray, role: str, tol: float) -> Message | None:
    """What a user must fix in a log-prob or exact-KL column, rows counted from 1; None if nothing."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None  # left to the check itself
    if arr.ndim != 1:
        return None
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        return Message(
            "there are infinite or non-numeric values at {rows}: fix or drop those rows.", rows=_data_rows(bad)
        )
    if role == "kl_col":
        neg = np.flatnonzero(arr < -tol)
        if neg.size:
            return Message(
                "there are values below 0 at {rows} (e.g. {value:.6g}), but a KL is ≥ 0. Is this a "
                "per-token log-ratio rather than the KL of the full next-token distributions?",
                rows=_data_rows(neg), value=arr[neg[0]],
            )
        return None
    low = np.flatnonzero(arr < LOGP_FLOOR)
    if low.size:
        return Message(
            "there are values below {floor:g} at {rows} (e.g. {value:.6g}): fill values such as float32's "
            "smallest, -3.4e38, not log-probabilities a model gives. Drop those rows.",
            floor=LOGP_FLOOR, rows=_data_rows(low), value=arr[low[0]],
        )
    pos = np.flatnonzero(arr > tol)
    if pos.size:
        return Message(
            "there are values above 0 at {rows} (e.g. {value:.6g}), but a log-probability is ≤ 0. "
            "Is this a logit, a probability or a negated log-prob column?",
            rows=_data_rows(pos), value=arr[pos[0]],
        )
    return None


def _checked(check: Any, values: Any, role: str, col: str, file: str | None, *args: Any) -> np.ndarray:
    """``check(values, "role='col'", *args)``; on failure the error also names the column for the user.

    Log-prob and exact-KL columns get their own sentence (:func:`_value_problem`,
    rows counted from 1 as in a spreadsheet); other columns the check's own
    reason, with "the column" for the parameter.
    """
    # a file's rows are data rows counted from 1 (_kl_array is told so by its "data rows" argument)
    where = {} if check is _kl_array else {"where": _data_row}
    try:
        return check(values, f"{role}={col!r}", *args, **where)
    except InputError as exc:
        tol = args[0] if args and isinstance(args[0], float) else 0.0
        why = _value_problem(values, role, tol) if check in (_logp_array, _kl_array) else None
        if why is None:
            try:
                check(values, Message("the column"), *args, **where)
            except InputError as plain:
                why = plain.message
            else:
                raise
        raise _column_error(exc, file, col, role, why) from None


def _column(df: Any, col: str, role: str, numeric: bool = True, file: str | None = None) -> np.ndarray:
    import pandas as pd

    s = df[col]
    if numeric and not (pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s)):
        # the first cell that is neither a number nor empty (an empty one is reported as missing below);
        # where every cell reads as a number (a Parquet column of strings such as "-1.5"), the first string
        text = ~pd.to_numeric(s, errors="coerce").notna() & s.notna()
        if not text.any():
            text = s.map(lambda v: not isinstance(v, int | float | np.number)) & s.notna()
        row = int(np.argmax(text.to_numpy())) if text.any() else 0
        value = s.iloc[row]
        value = value.item() if isinstance(value, np.generic) else value  # 'x', not np.str_('x')
        exc = InputError(
            "{role}={col!r}: column is not numeric (dtype {dtype}); first non-numeric value at {where}: {value!r}",
            role=role, col=col, dtype=str(s.dtype), where=_data_row(row), value=value,
        )
        raise _column_error(exc, file, col, role, Message(
            "it holds text, not numbers (data row {row}: {value!r}). Choose a column of numbers, "
            "or fix that row.", row=row + 1, value=value,
        ))
    na = s.isna().to_numpy()
    if na.any():  # data rows counted from 1, as in the user's sentence and every other message on a file
        exc = InputError(
            "{role}={col!r}: column has {n} NaN/missing values (first at data row {row})",
            role=role, col=col, n=int(na.sum()), row=int(np.argmax(na)) + 1,
        ) if int(na.sum()) > 1 else InputError(
            "{role}={col!r}: column has a NaN/missing value (data row {row})",
            role=role, col=col, row=int(np.argmax(na)) + 1,
        )
        raise _column_error(exc, file, col, role, Message(
            "there are empty or non-numeric cells at {rows}: fill them in, or drop those rows.",
            rows=_data_rows(np.flatnonzero(na)),
        ))
    return s.to_numpy()


def load_table(
    path_or_buffer: str | os.PathLike[str] | BinaryIO,
    sampler_col: str,
    other_col: str,
    *,
    mask_col: str | None = None,
    position_col: str | None = None,
    sequence_col: str | None = None,
    rollout_col: str | None = None,
    kl_col: str | None = None,
    fmt: str | None = None,
    logp_tolerance: float = LOGP_TOLERANCE,
    max_bytes: int | None = None,
) -> AuditTable:
    r"""Read a CSV or Parquet table of per-token log-probs for :func:`audit`.

    The file is read by :func:`kl_core.audit.table_files.read_table`, free of any
    UI, so that the app page and the command line read files the same way; this
    function checks the chosen columns.

    Parameters
    ----------
    path_or_buffer : str, path or binary file-like
        A ``.csv``, ``.parquet`` or ``.pq`` file, or an open binary file (an
        upload); its ``name`` gives the format unless ``fmt`` is given.
    sampler_col, other_col : str
        Columns of log-probs under the sampler and the other policy.
    mask_col, position_col, sequence_col, rollout_col : str, optional
        Columns for ``mask``, ``positions``, ``sequence_ids`` and ``logp_rollout``.
    kl_col : str, optional
        Column of exact per-token KLs for ``exact_kl`` (the Rao–Blackwellized ``rb``).
    fmt : {"csv", "parquet"}, optional
        The format, overriding the file name.
    logp_tolerance : float, default :data:`LOGP_TOLERANCE`
        Largest log-prob accepted as float noise.
    max_bytes : int, optional
        Size limit; defaults to :data:`MAX_FILE_BYTES` (read at call time).

    Returns
    -------
    AuditTable
        ``audit(**table.as_kwargs(), direction=...)`` runs the audit.

    Raises
    ------
    ValueError
        If the file is not CSV/Parquet (by name or because it fails to parse),
        is larger than the limit or has no rows; if a named column is missing
        (the message lists the available ones), repeated, non-numeric or has
        NaN; if a log-prob column fails :func:`audit`'s checks, or the KL
        column has negative or infinite values (the message gives their data
        rows).  The message names the parameter and the column.

    Examples
    --------
    >>> import io
    >>> buf = io.BytesIO(b"lp,lq\n-1.0,-1.5\n-2.0,-1.0\n")
    >>> load_table(buf, "lp", "lq", fmt="csv").logp_other.tolist()
    [-1.5, -1.0]
    """
    limit = MAX_FILE_BYTES if max_bytes is None else max_bytes
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_bytes must be a positive integer, got {max_bytes!r}")
    tol = check_finite(logp_tolerance, "logp_tolerance")
    df, name = table_files.read_table(path_or_buffer, fmt=fmt, max_bytes=limit)

    roles = {
        "sampler_col": sampler_col,
        "other_col": other_col,
        "mask_col": mask_col,
        "position_col": position_col,
        "sequence_col": sequence_col,
        "rollout_col": rollout_col,
        "kl_col": kl_col,
    }
    named = {role: col for role, col in roles.items() if col is not None}
    available = ", ".join(repr(str(c)) for c in df.columns)
    for role, col in named.items():
        if col not in df.columns:
            raise InputError(
                "{role}={col!r} is not a column; available columns: {available}",
                role=role, col=col, available=available,
            ).worded(
                "“{file}” has no column “{col}” (chosen for {role_words}). Its columns are: "
                "{available}. Choose one of those.",
                file=table_files.file_label(name), col=col, role_words=COLUMN_ROLES[role],
                available=", ".join(str(c) for c in df.columns),
            )
    seen: dict[str, str] = {}
    for role, col in named.items():
        if col in seen:
            raise InputError(
                "{role}={col!r} is the same column as {other}", role=role, col=col, other=seen[col]
            ).worded(
                "Column “{col}” is chosen for both {first} and {second}. Choose a different column for one.",
                col=col, first=COLUMN_ROLES[seen[col]], second=COLUMN_ROLES[role],
            )
        seen[col] = role

    def values(role: str, numeric: bool = True) -> np.ndarray:
        return _column(df, named[role], role, numeric=numeric, file=name)

    def logp(role: str) -> np.ndarray:
        return _checked(_logp_array, values(role), role, named[role], name, tol)

    out = {
        "logp_sampler": logp("sampler_col"),
        "logp_other": logp("other_col"),
        "logp_rollout": logp("rollout_col") if rollout_col is not None else None,
        "mask": None,
        "positions": None,
        "sequence_ids": None,
    }
    if mask_col is not None:
        out["mask"] = _checked(_mask_array, values("mask_col"), "mask_col", mask_col, name)
    if position_col is not None:
        out["positions"] = _checked(_positions_array, values("position_col"), "position_col", position_col, name)
    if sequence_col is not None:
        out["sequence_ids"] = values("sequence_col", numeric=False)
    if kl_col is not None:
        out["exact_kl"] = _checked(
            _kl_array, values("kl_col"), "kl_col", kl_col, name, KL_TOLERANCE, "data rows"
        )
    columns = {
        "logp_sampler": sampler_col,
        "logp_other": other_col,
        "mask": mask_col,
        "positions": position_col,
        "sequence_ids": sequence_col,
        "logp_rollout": rollout_col,
        "exact_kl": kl_col,
    }
    return AuditTable(
        **out,
        columns={k: v for k, v in columns.items() if v is not None},
        n_rows=len(df),
    )
