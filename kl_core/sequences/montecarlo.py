r"""Monte Carlo of the six sequence estimators: n sequences of a Markov chain, drawn position by position.

:func:`simulate_sequences` draws :math:`x^{(1)}, \dots, x^{(n)} \sim \pi_\theta`
and evaluates, for each sequence, every estimator of
:data:`kl_core.sequences.estimators.SEQUENCE_KEYS`.  The sequences are never stored:
position by position, one uniform per sequence gives the next token
(:class:`kl_core.sequences.markov.TokenSampler`), and per-token values are looked up in
K×K tables of :math:`k_1, k_2, k_3` and of the next-token KL, then added to
running sums.  Memory is a few arrays of n floats, whatever T is.

Reproducibility: one ``np.random.default_rng(seed)`` stream, ``rng.random(n)``
per position in order; the same arguments give identical values.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; A. Amini, T. Vieira, R. Cotterell (2025),
arXiv:2504.10637 (the Rao–Blackwellized ``rb``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kl_core.estimation import estimators as est
from kl_core.sequences.markov import (
    MarkovChain,
    TokenSampler,
    check_length,
    check_pair,
    log_ratios,
    next_token_kl,
)
from kl_core.validation import check_positive_int

__all__ = [
    "MAX_SAMPLED_TOKENS",
    "MAX_SEQUENCES",
    "POSITION_KEYS",
    "ROUNDING_SPREAD",
    "SequenceSample",
    "SampleSummary",
    "check_sample_size",
    "simulate_sequences",
]

MAX_SEQUENCES = 1_000_000
"""Largest n: the per-sequence values of six estimators take 48 bytes each."""

MAX_SAMPLED_TOKENS = 100_000_000
"""Largest n · T in one run (about 4 s on the project's machine)."""


def check_sample_size(n: int, length: int) -> int:
    r"""Validate a number of sampled sequences: :math:`1 \le n \le n_{\max}` and :math:`n\,T \le` :data:`MAX_SAMPLED_TOKENS`.

    Parameters
    ----------
    n : int
        Sequences, at most :data:`MAX_SEQUENCES`.
    length : int
        T, already checked (:func:`kl_core.sequences.markov.check_length`).

    Returns
    -------
    int
        n as an int; ``ValueError`` naming ``n`` (and ``length``) otherwise.
    """
    n = check_positive_int(n, "n")
    if n > MAX_SEQUENCES:
        raise ValueError(f"n must be at most MAX_SEQUENCES = {MAX_SEQUENCES:,}, got {n:,}")
    if n * length > MAX_SAMPLED_TOKENS:
        raise ValueError(
            f"n × length = {n * length:,} tokens is more than MAX_SAMPLED_TOKENS = "
            f"{MAX_SAMPLED_TOKENS:,}; lower n or length"
        )
    return n

POSITION_KEYS: tuple[str, ...] = ("k1", "k3", "rb")
"""Per-token terms whose mean and SE are kept per position."""


@dataclass(frozen=True)
class SampleSummary:
    r"""Mean, standard deviation (ddof = 1) and standard error of n per-sequence values.

    Attributes
    ----------
    mean, std, se : float
        ``inf`` if a value overflowed; ``std`` and ``se`` are ``nan`` for n = 1, and 0 where
        the values agree to rounding (a spread below :data:`ROUNDING_SPREAD` times the
        largest value: an estimator that is constant on the sample, like ``rb`` at T = 1).
    std_se : float
        Standard error of ``std`` itself: to first order
        :math:`\mathrm{Var}(s^2) \approx (m_4 - \sigma^4)/n` with :math:`m_4`
        the fourth central moment, and by the delta method
        :math:`\mathrm{se}(s) \approx \tfrac{s}{2}\sqrt{(m_4/s^4 - 1)/n}`.
        ``nan`` for n < 2, a zero spread or an overflow.  Only as reliable as
        the sample :math:`m_4`: for heavy tails (``seq_k3``) it understates.
    """

    mean: float
    std: float
    se: float
    std_se: float = math.nan


@dataclass(frozen=True, eq=False)
class SequenceSample:
    """The values of :func:`simulate_sequences`.

    Attributes
    ----------
    length, n, seed : int
        T, the number of sequences and the seed.
    values : dict of str to numpy.ndarray
        Per key of :data:`kl_core.sequences.estimators.SEQUENCE_KEYS`, one value per sequence.
    position_mean, position_se : dict of str to numpy.ndarray
        Per key of :data:`POSITION_KEYS`, the mean of the per-token term at each
        position over the n sequences, and its standard error (T floats each).
    checkpoints : dict of int to dict of str to SampleSummary
        For each length asked for in ``checkpoints``, the summary of every
        estimator over the sequences' first T′ tokens, which are n sequences of
        length T′ (one run gives Monte Carlo points for many T).
    """

    length: int
    n: int
    seed: int
    values: dict[str, np.ndarray] = field(repr=False)
    position_mean: dict[str, np.ndarray] = field(repr=False)
    position_se: dict[str, np.ndarray] = field(repr=False)
    checkpoints: dict[int, dict[str, SampleSummary]] = field(default_factory=dict, repr=False)

    def summary(self, key: str) -> SampleSummary:
        """Mean, std and SE of one estimator's per-sequence values.

        Parameters
        ----------
        key : str
            A key of :attr:`values`.

        Returns
        -------
        SampleSummary
        """
        if key not in self.values:
            raise ValueError(f"key must be one of {list(self.values)}, got {key!r}")
        return _summarise(self.values[key])


#: A sample standard deviation at most this fraction of the largest |value| is rounding, and taken as 0:
#: a sum of T ≤ 4096 per-token terms in doubles is off by about T·1.1e-16 of its terms' size.
ROUNDING_SPREAD = 1e-12


def _summarise(v: np.ndarray) -> SampleSummary:
    if not np.isfinite(v).all():
        return SampleSummary(math.inf, math.inf, math.inf)
    n = v.size
    mean = float(np.mean(v))
    if n < 2:
        return SampleSummary(mean, math.nan, math.nan)
    std = float(np.std(v, ddof=1))
    if std <= ROUNDING_SPREAD * float(np.max(np.abs(v))):
        std = 0.0  # the values agree to rounding: their ±4e-19 is the sums' last bits, not a spread
    std_se = math.nan
    if 0 < std < math.inf:
        kurtosis = float(np.mean(((v - mean) / std) ** 4))  # m4 / s^4, scaled first: no overflow
        std_se = 0.5 * std * math.sqrt(max(kurtosis - 1.0, 0.0) / n)
    return SampleSummary(mean, std, std / math.sqrt(n), std_se)


def _estimates(sums: dict[str, np.ndarray], length: int) -> dict[str, np.ndarray]:
    """The six per-sequence values from the running sums after ``length`` tokens."""
    return {
        "sum_k1": sums["k1"],
        "sum_k3": sums["k3"],
        "seq_k3": est.k3(-sums["k1"]),  # log R = sum of log r_t = -sum_k1
        "sum_k2": sums["k2"],
        "rb": sums["rb"],
        "mean_k3": sums["k3"] / length,
    }


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    return int(seed)


def simulate_sequences(
    policy: MarkovChain | str,
    ref: MarkovChain | str,
    length: int,
    n: int,
    seed: int = 0,
    checkpoints: Sequence[int] = (),
) -> SequenceSample:
    r"""Draw n sequences from the policy and evaluate the six estimators on each.

    With :math:`\log r_t = \log\pi_{\mathrm{ref}}(x_t\mid x_{t-1}) - \log\pi_\theta(x_t\mid x_{t-1})`:

    .. math::

        \text{sum\_k1} = -\sum_t \log r_t, \quad
        \text{seq\_k3} = k_3\Bigl(\sum_t \log r_t\Bigr), \quad
        \text{rb} = \sum_t \mathrm{KL}[\pi_\theta(\cdot\mid x_{t-1}) \| \pi_{\mathrm{ref}}(\cdot\mid x_{t-1})],

    and ``sum_k3``, ``sum_k2``, ``mean_k3`` as in :mod:`kl_core.sequences.estimators`.

    Parameters
    ----------
    policy : MarkovChain or str
        :math:`\pi_\theta`, which draws the sequences.
    ref : MarkovChain or str
        :math:`\pi_{\mathrm{ref}}`, same K.
    length : int
        T.
    n : int
        Sequences, 1 … :data:`MAX_SEQUENCES`, with n · T ≤ :data:`MAX_SAMPLED_TOKENS`.
    seed : int, default 0
        Seed of ``np.random.default_rng``.
    checkpoints : sequence of int, optional
        Lengths T′ ≤ T at which to summarise the estimators of the first T′
        tokens as well (:attr:`SequenceSample.checkpoints`).

    Returns
    -------
    SequenceSample

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html;
    A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637.

    Examples
    --------
    >>> from kl_core.sequences.markov import drift_pair
    >>> s = simulate_sequences(*drift_pair(4, 0.3), length=8, n=100, seed=1)
    >>> s.values["rb"].shape
    (100,)
    """
    policy, ref = check_pair(policy, ref)
    length = check_length(length)
    n = check_sample_size(n, length)
    seed = _check_seed(seed)
    marks = sorted({_check_checkpoint(c, length) for c in checkpoints})
    rng = np.random.default_rng(seed)
    k = policy.k
    logr_first, logr = log_ratios(policy, ref)
    logr = logr.ravel()
    k0, kap = next_token_kl(policy, ref)
    # Per-token values, looked up by token (first step) or by prev * K + next.
    tables_first = {"k1": est.k1(logr_first), "k3": est.k3(logr_first), "k2": est.k2(logr_first)}
    tables = {"k1": est.k1(logr), "k3": est.k3(logr), "k2": est.k2(logr)}
    sampler = TokenSampler(policy)

    sums = {key: np.zeros(n) for key in ("k1", "k3", "k2", "rb")}
    pos_mean = {key: np.empty(length) for key in POSITION_KEYS}
    pos_se = {key: np.empty(length) for key in POSITION_KEYS}

    def record(t: int, terms: dict[str, np.ndarray | float]) -> None:
        for key in POSITION_KEYS:
            v = terms[key]
            if np.ndim(v) == 0:  # rb's first term is the same for every sequence
                pos_mean[key][t], pos_se[key][t] = float(v), 0.0
            else:
                pos_mean[key][t] = v.mean()
                pos_se[key][t] = v.std(ddof=1) / math.sqrt(n) if n > 1 else math.nan

    summaries: dict[int, dict[str, SampleSummary]] = {}

    def mark(t: int) -> None:
        if t in marks:
            summaries[t] = {key: _summarise(v) for key, v in _estimates(sums, t).items()}

    x = sampler.first(rng.random(n))
    terms: dict[str, np.ndarray | float] = {key: tab[x] for key, tab in tables_first.items()}
    terms["rb"] = k0
    for key in sums:
        sums[key] += terms[key]
    record(0, terms)
    mark(1)
    for t in range(1, length):
        nxt = sampler.next(x, rng.random(n))
        flat = x * k + nxt
        terms = {key: tab[flat] for key, tab in tables.items()}
        terms["rb"] = kap[x]
        for key in sums:
            sums[key] += terms[key]
        record(t, terms)
        mark(t + 1)
        x = nxt

    return SequenceSample(
        length=length,
        n=n,
        seed=seed,
        values=_estimates(sums, length),
        position_mean=pos_mean,
        position_se=pos_se,
        checkpoints=summaries,
    )


def _check_checkpoint(c: int, length: int) -> int:
    t = check_positive_int(c, "checkpoints")
    if t > length:
        raise ValueError(f"checkpoints must be <= length = {length}, got {t}")
    return t
