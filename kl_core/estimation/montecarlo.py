r"""Monte Carlo runs of the KL estimators, chunked so that 10^8 samples fit in memory.

:func:`simulate` draws ``repeats`` independent batches of ``n`` samples
:math:`x \sim q`, evaluates every requested estimator on the log-ratio
:math:`\log r = \log p(x) - \log q(x)` and summarises the per-sample values:

.. math:: \hat\mu = \frac1N\sum_{i=1}^N k(x_i), \qquad
          \hat\sigma^2 = \frac{1}{N-1}\sum_{i=1}^N \bigl(k(x_i) - \hat\mu\bigr)^2,
          \qquad N = n \cdot \text{repeats},

reported the way Schulman's table reports them: ``bias_over_true`` =
:math:`(\hat\mu - \mathrm{KL})/\mathrm{KL}` and ``std_over_true`` =
:math:`\hat\sigma/\mathrm{KL}`, where the per-sample standard deviation (not
the standard error of the mean) is divided by the true value.

Numerics
--------
Samples are processed in chunks of ``chunk_size`` values (default :math:`2^{17}`),
so memory stays bounded whatever ``n · repeats`` is.  Each chunk's mean and sum
of squared deviations :math:`M_2` are computed in two passes and merged with
Chan, Golub & LeVeque's pairwise update

.. math:: \delta = \bar x_B - \bar x_A, \quad
          \bar x = \bar x_A + \delta\,\frac{n_B}{n}, \quad
          M_2 = M_{2,A} + M_{2,B} + \delta^2 \frac{n_A n_B}{n},

which does not lose precision when the mean is small compared with the spread
(the :math:`k_1` case, where :math:`\sigma/\mu = 20`).

Reproducibility
---------------
Every draw comes from one ``np.random.default_rng(seed)`` stream: batch 0
first, then batch 1, and so on.  The same arguments give bit-identical results
in every run.  Chunk boundaries always fall on batch boundaries, and for
:class:`Gaussian`, :class:`Laplace`, :class:`StudentT` and :class:`Categorical`
the stream of draws does not depend on how it is cut, so a different
``chunk_size`` sees the same samples and changes the summaries only by
floating-point rounding (about 1e-15 relative).  :class:`GaussianMixture` draws
all component labels of a call before the normals, so for it a different
``chunk_size`` gives a different (equally valid) sample.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; T. F. Chan, G. H. Golub and
R. J. LeVeque, "Algorithms for computing the sample variance" (1983).
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from kl_core.estimation import estimators as est
from kl_core.estimation.distributions import Distribution, log_ratio, parse
from kl_core.estimation.exact import kl
from kl_core.numbers import SMALLEST_NORMAL, unresolved
from kl_core.validation import check_finite, check_positive_int

__all__ = [
    "DEFAULT_KEYS",
    "QUANTILE_SAMPLE_MIN",
    "EstimatorSummary",
    "Simulation",
    "ratio_to_target",
    "simulate",
    "target_of",
]

DEFAULT_KEYS: tuple[str, ...] = est.COMPARED_KEYS
# p95/p99 come from every value up to twice this many, else from a strided
# subsample of at least this many; a quantile's standard error from 10^6
# values is far below the precision anyone reads a percentile to.
QUANTILE_SAMPLE_MIN = 1_000_000
# 2^17 float64 values (1 MB) per array: on the 10M-sample table with two
# threads it measured faster than 2^15, 2^16 and 2^18.
_CHUNK_SIZE = 2**17


# ------------------------------------------------------------ accumulators


@dataclass
class _Moments:
    """Count, mean and sum of squared deviations of a stream of values.

    The sum of squares is ``m2 * scale**2`` with ``scale`` a power of two: near the largest
    deviation where the squares overflow (values near 1e200) or fall below the smallest
    normal double (values near 1e-161), so that the standard deviation keeps its digits
    whenever it is itself a normal double.  Scaling by a power of two is exact, so
    elsewhere the standard deviation is the unscaled one to the last bit.
    """

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    scale: float = 1.0

    @classmethod
    def of(cls, v: np.ndarray, scratch: np.ndarray | None = None) -> _Moments:
        """Moments of ``v``; ``scratch`` (at least ``v.size`` floats) saves an allocation."""
        m = v.size
        if m == 0:
            return cls()
        with np.errstate(over="ignore", invalid="ignore"):  # values near ±1e308 sum to ±inf: handled below
            total = float(np.sum(v))
        if not math.isfinite(total):
            # An infinite value makes the mean infinite (or undefined when both
            # signs occur) and the spread infinite.
            mean = total / m
            return cls(m, mean, math.nan if math.isnan(mean) else math.inf)
        mean = total / m
        d = v - mean if scratch is None else np.subtract(v, mean, out=scratch[:m])
        # einsum, not np.dot: BLAS may start threads that fight over the cores.
        with np.errstate(over="ignore"):
            m2 = float(np.einsum("i,i->", d, d))
        if _SQUARES_RESOLVED[0] <= m2 < _SQUARES_RESOLVED[1]:
            return cls(m, mean, m2)
        top = float(np.max(np.abs(d)))
        if top == 0.0:  # every value the same
            return cls(m, mean, 0.0)
        scale = _power_of_two(top)
        np.multiply(d, 1.0 / scale, out=d)  # exact: a power of two
        return cls(m, mean, float(np.einsum("i,i->", d, d)), scale)

    def merge(self, other: _Moments) -> None:
        """Chan–Golub–LeVeque update of ``self`` with ``other`` (in place)."""
        if other.count == 0:
            return
        n = self.count + other.count
        delta = other.mean - self.mean
        if math.isfinite(delta):
            self.mean += delta * (other.count / n)
            between = self.count * other.count / n
            # On a common power-of-two scale (exact): the parts' own and the gap's, whichever is largest.
            scale = max(
                self.scale if self.m2 > 0.0 else 0.0,
                other.scale if other.m2 > 0.0 else 0.0,
                _power_of_two(abs(delta)) if delta != 0.0 and between > 0.0 else 0.0,
            )
            if scale == 0.0:  # no spread on either side and equal means
                self.m2, self.scale = 0.0, 1.0
            else:
                a, b, g = self.scale / scale, other.scale / scale, delta / scale
                self.m2, self.scale = _rescaled(self.m2 * a * a + other.m2 * b * b + g * g * between, scale)
        else:
            with np.errstate(invalid="ignore"):
                self.mean = float(
                    np.float64(self.mean) * (self.count / n)
                    + np.float64(other.mean) * (other.count / n)
                )
            self.m2 = math.nan if math.isnan(self.mean) else math.inf
        self.count = n

    @property
    def std(self) -> float:
        """Sample standard deviation with ``ddof=1``; nan for fewer than two values."""
        if self.count < 2:
            return math.nan
        with np.errstate(over="ignore"):
            return float(np.sqrt(self.m2 / (self.count - 1)) * self.scale)


#: Sums of squares in this range keep their digits unscaled (:class:`_Moments`).
_SQUARES_RESOLVED = (SMALLEST_NORMAL * 2.0**60, 2.0**1000)


def _rescaled(m2: float, scale: float) -> tuple[float, float]:
    """``(m2, scale)`` with the same ``m2 * scale**2``, ``m2`` moved back into the resolved range."""
    if m2 >= _SQUARES_RESOLVED[1] and math.isfinite(m2):
        return m2 * 2.0**-512, scale * 2.0**256
    if 0.0 < m2 < _SQUARES_RESOLVED[0]:
        return m2 * 2.0**512, scale * 2.0**-256
    return m2, scale


def _power_of_two(x: float) -> float:
    """The power of two at or just above ``x > 0`` (1 for 0), within 2^-1021 to 2^1023 (its inverse is a double)."""
    return math.ldexp(1.0, min(max(math.frexp(x)[1], -1021), 1023)) if x > 0.0 else 1.0


@dataclass
class _Accumulator:
    """Everything collected for one estimator while the chunks stream past."""

    batch_means: np.ndarray
    total: _Moments = field(default_factory=_Moments)
    running: _Moments = field(default_factory=_Moments)  # the first values of batch 0
    piece: _Moments = field(default_factory=_Moments)  # the batch in progress (n > chunk)
    negatives: int = 0
    # filled in place: value g of the stream lands at g // stride
    quantile: np.ndarray = field(default_factory=lambda: np.empty(0))
    samples: np.ndarray = field(default_factory=lambda: np.empty(0))
    running_mean: list[float] = field(default_factory=list)
    running_se: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class _Chunk:
    """Where a chunk sits: values ``offset … offset+length`` of batch ``batch``
    (``rows == 1``), or ``rows`` whole batches from ``batch`` on (``offset == 0``)."""

    batch: int
    offset: int
    rows: int
    length: int
    start: int  # global index of its first value, batch * n + offset


@dataclass
class _KeyChunk:
    """One estimator's reductions of one chunk; merged in chunk order."""

    moments: _Moments
    negatives: int
    quantile: np.ndarray
    sample: np.ndarray
    batch_means: np.ndarray | None  # rows > 1
    running: list[_Moments]  # batch 0 cut at the checkpoints
    running_marks: list[bool]  # True where a piece ends at a checkpoint


# ------------------------------------------------------------ results


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _frozen_int(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.int64)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class EstimatorSummary:
    r"""Monte Carlo summary of one estimator over all ``n · repeats`` samples.

    Attributes
    ----------
    key : str
        Key in :data:`kl_core.estimation.estimators.ESTIMATORS`.
    name : str
        Display name.
    target_name : str
        ``"KL[q‖p]"`` or ``"KL[p‖q]"``: what the mean is compared with.
    target : float
        Its exact value: :math:`\mathrm{KL}[p\|q]` for ``k3_pq``, else
        :math:`\mathrm{KL}[q\|p]` (also for the biased ``k2`` and ``abs``, as in
        Schulman's table).
    mean : float
        :math:`\hat\mu`, the mean of all per-sample values.
    std : float
        :math:`\hat\sigma`, their standard deviation (``ddof=1``).
    bias_over_true : float
        :math:`(\hat\mu - \text{target})/\text{target}`; nan when the target is
        0 (``p == q``), infinite or nan.
    std_over_true : float
        :math:`\hat\sigma/\text{target}` (Schulman's definition); nan under the
        same conditions.
    se : float
        :math:`\hat\sigma/\sqrt n`, the standard error of ONE batch mean.
    neg_fraction : float
        Fraction of per-sample values < 0.
    p95, p99 : float
        95th and 99th percentiles of the per-sample values, from every value
        when ``n · repeats ≤ 2 · QUANTILE_SAMPLE_MIN``, else from the strided
        subsample of ``quantile_count`` values described under :func:`simulate`;
        nan when :func:`simulate` ran with ``percentiles=False``.
    quantile_count : int
        How many values ``p95`` and ``p99`` were computed from (0 without percentiles).
    batch_means : numpy.ndarray
        Shape ``(repeats,)``: the mean of each batch of ``n``.
    samples : numpy.ndarray
        A uniform subsample of at most ``sample_size`` per-sample values.
    running_n : numpy.ndarray
        Checkpoints :math:`1 \le m \le n`, log-spaced, ending at ``n``.
    running_mean : numpy.ndarray
        Mean of the first ``m`` values of batch 0; the last entry is
        ``batch_means[0]``.
    running_se : numpy.ndarray
        :math:`s_m/\sqrt m`, with :math:`s_m` the standard deviation of those
        ``m`` values; nan at ``m = 1``.
    """

    key: str
    name: str
    target_name: str
    target: float
    mean: float
    std: float
    bias_over_true: float
    std_over_true: float
    se: float
    neg_fraction: float
    p95: float
    p99: float
    quantile_count: int
    batch_means: np.ndarray
    samples: np.ndarray
    running_n: np.ndarray
    running_mean: np.ndarray
    running_se: np.ndarray

    @property
    def std_unresolved(self) -> bool:
        r"""The standard deviation's digits are lost: it is itself below the smallest normal double
        (:math:`\hat\sigma < 2.2\times10^{-308}`), or is 0 although the values differ; so ``std``,
        ``se`` and ``std_over_true`` are not resolved.  (Values whose squares underflow, near
        1e-161, keep their std: the moments are summed on a power-of-two scale.)"""
        if 0.0 < self.std < SMALLEST_NORMAL:
            return True
        return self.std == 0.0 and self.samples.size > 1 and bool(np.ptp(self.samples) > 0.0)

    def to_row(self) -> dict[str, float | int | str]:
        """The scalar figures as a plain dict (no arrays)."""
        return {
            "estimator": self.key,
            "name": self.name,
            "target_name": self.target_name,
            "target": self.target,
            "mean": self.mean,
            "std": self.std,
            "bias_over_true": self.bias_over_true,
            "std_over_true": self.std_over_true,
            "se": self.se,
            "neg_fraction": self.neg_fraction,
            "p95": self.p95,
            "p99": self.p99,
        }


@dataclass(frozen=True, eq=False)
class Simulation:
    r"""The result of :func:`simulate`.

    Attributes
    ----------
    q, p : Distribution
        Sampler and target.
    n, repeats, seed : int
        Batch size, number of batches, seed of ``np.random.default_rng``.
    lam : float
        :math:`\lambda` used by ``k_lambda``.
    true_kl : float
        :math:`\mathrm{KL}[q\|p]`, exact.
    true_kl_pq : float
        :math:`\mathrm{KL}[p\|q]`, exact.
    summaries : tuple of EstimatorSummary
        One per requested key, in the order requested; ``sim["k3"]`` looks one
        up by key.
    """

    q: Distribution
    p: Distribution
    n: int
    repeats: int
    seed: int
    lam: float
    true_kl: float
    true_kl_pq: float
    summaries: tuple[EstimatorSummary, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        """The estimator keys, in order."""
        return tuple(s.key for s in self.summaries)

    def __getitem__(self, key: str) -> EstimatorSummary:
        for s in self.summaries:
            if s.key == key:
                return s
        raise KeyError(key)

    def to_rows(self) -> list[dict[str, float | int | str]]:
        """One plain dict per estimator, for tables and JSON.

        Each row holds the scalar fields of :class:`EstimatorSummary` plus the
        run's ``q``, ``p`` (as specs), ``n``, ``repeats``, ``seed`` and ``lam``.
        Floats stay floats (``inf``/``nan`` included); converting them for
        JSON is the caller's choice.
        """
        run = {
            "q": self.q.spec,
            "p": self.p.spec,
            "n": self.n,
            "repeats": self.repeats,
            "seed": self.seed,
            "lam": self.lam,
        }
        return [{**s.to_row(), **run} for s in self.summaries]


# ------------------------------------------------------------ the engine


def _check_distribution(d: Distribution | str, name: str) -> Distribution:
    if isinstance(d, str):
        return parse(d)
    if not isinstance(d, Distribution):
        raise ValueError(
            f"{name} must be a kl_core Distribution or a spec string, got {type(d).__name__}"
        )
    return d


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    return int(seed)


def _check_keys(keys: Sequence[str]) -> tuple[str, ...]:
    if isinstance(keys, str):
        keys = (keys,)
    try:
        out = tuple(keys)
    except TypeError:
        raise ValueError(f"keys must be a sequence of estimator keys, got {keys!r}") from None
    if not out:
        raise ValueError("keys must name at least one estimator")
    bad = [k for k in out if k not in est.ESTIMATORS]
    if bad:
        raise ValueError(f"keys must be a subset of {sorted(est.ESTIMATORS)}, got unknown {bad!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"keys must not repeat an estimator, got {list(out)!r}")
    return out


def _checkpoints(n: int, points: int) -> np.ndarray:
    """At most ``points`` distinct integers in [1, n], log-spaced, ending at n."""
    grid = np.rint(np.geomspace(1.0, float(n), num=min(points, n)))
    grid = np.unique(np.clip(grid.astype(np.int64), 1, n))
    grid[-1] = n
    return grid


def _chunks(n: int, repeats: int, chunk_size: int) -> Iterator[_Chunk]:
    """Cut the stream of ``n · repeats`` values into chunks on batch boundaries."""
    if n >= chunk_size:
        for b in range(repeats):
            for off in range(0, n, chunk_size):
                yield _Chunk(b, off, 1, min(chunk_size, n - off), b * n + off)
    else:
        per = chunk_size // n
        for b in range(0, repeats, per):
            rows = min(per, repeats - b)
            yield _Chunk(b, 0, rows, rows * n, b * n)


def _strided(v: np.ndarray, start: int, stride: int) -> np.ndarray:
    """View of the values of ``v`` whose global index ``start + i`` is a multiple of ``stride``."""
    return v[(-start) % stride :: stride]


def _default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def ratio_to_target(value: float, target: float) -> float:
    r"""``value / target``, the way Schulman's table reports figures.

    .. math:: \text{bias/true} = \frac{\hat\mu - \mathrm{KL}}{\mathrm{KL}}, \qquad
              \text{stdev/true} = \frac{\hat\sigma}{\mathrm{KL}}

    Parameters
    ----------
    value : float
        The numerator, e.g. a bias or a standard deviation.
    target : float
        The true KL.

    Returns
    -------
    float
        The ratio; nan when the target is 0 (``p == q``), infinite or nan,
        since no relative figure is meaningful then, and when it is below the
        smallest normal double (:func:`kl_core.numbers.unresolved`), whose digits
        a quotient would not keep.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> ratio_to_target(0.1, 0.005)
    20.0
    >>> ratio_to_target(0.1, 0.0)
    nan
    """
    if target == 0.0 or not math.isfinite(target) or unresolved(target):
        return math.nan
    return value / target


def target_of(key: str, true_kl: float, true_kl_pq: float) -> tuple[str, float]:
    r"""What an estimator's mean is compared with: name and value.

    :math:`\mathrm{KL}[p\|q]` for the estimator unbiased for it (``k3_pq``);
    :math:`\mathrm{KL}[q\|p]` for every other key, including the biased ``k2``
    and ``abs`` (Schulman's table compares k2 with :math:`\mathrm{KL}[q\|p]`).

    Parameters
    ----------
    key : str
        A key of :data:`kl_core.estimation.estimators.ESTIMATORS`.
    true_kl, true_kl_pq : float
        :math:`\mathrm{KL}[q\|p]` and :math:`\mathrm{KL}[p\|q]`.

    Returns
    -------
    tuple of (str, float)
        ``("KL[q‖p]", true_kl)`` or ``("KL[p‖q]", true_kl_pq)``.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> target_of("k3_pq", 0.5, 0.7)
    ('KL[p‖q]', 0.7)
    """
    if key not in est.ESTIMATORS:
        raise ValueError(f"key must be one of {sorted(est.ESTIMATORS)}, got {key!r}")
    if est.ESTIMATORS[key].unbiased_for == "kl_pq":
        return "KL[p‖q]", true_kl_pq
    return "KL[q‖p]", true_kl


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    if values.size == 0:
        return math.nan, math.nan
    with np.errstate(invalid="ignore"):
        # overwrite_input: partition in place rather than copy 8 MB per 10^6 values
        p95, p99 = np.percentile(values, [95.0, 99.0], overwrite_input=True)
    return float(p95), float(p99)


def simulate(
    q: Distribution | str,
    p: Distribution | str,
    n: int,
    repeats: int = 1,
    seed: int = 0,
    lam: float = 1.0,
    keys: Sequence[str] = DEFAULT_KEYS,
    sample_size: int = 20_000,
    running_points: int = 200,
    *,
    chunk_size: int = _CHUNK_SIZE,
    workers: int | None = None,
    percentiles: bool = True,
) -> Simulation:
    r"""Run the estimators on ``repeats`` independent batches of ``n`` samples of ``q``.

    For every key, with :math:`x_i \sim q` and :math:`\log r_i = \log p(x_i) - \log q(x_i)`,
    the per-sample values :math:`k(\log r_i)` are summarised as

    .. math:: \hat\mu = \frac1N\sum_i k_i, \quad
              \frac{\hat\mu - \mathrm{KL}}{\mathrm{KL}}, \quad
              \frac{\hat\sigma}{\mathrm{KL}}, \quad
              \mathrm{SE} = \frac{\hat\sigma}{\sqrt n},

    the last being the standard error of one batch mean.  Each formula is taken
    from :func:`kl_core.estimation.estimators.evaluate`; ``k_lambda`` with
    :math:`\lambda = 1` (or 0) reuses the ``k3`` (or ``k1``) values of the same
    chunk, which is what :func:`kl_core.estimation.estimators.k_lambda` returns there.

    Parameters
    ----------
    q, p : Distribution or str
        Sampler and target (a :func:`kl_core.estimation.distributions.parse` spec is
        accepted); both continuous or both categorical.
    n : int
        Samples per batch, ≥ 1.
    repeats : int, default 1
        Number of independent batches, ≥ 1.
    seed : int, default 0
        Seed of ``np.random.default_rng``, ≥ 0.
    lam : float, default 1.0
        :math:`\lambda` for ``k_lambda``; finite.
    keys : sequence of str, default ``("k1", "k2", "k3", "k_lambda", "k3_pq")``
        Estimators to run; a subset of :data:`kl_core.estimation.estimators.ESTIMATORS`.
    sample_size : int, default 20000
        At most this many per-sample values are kept per estimator (every
        ``s``-th value of the stream, :math:`s = \lceil N/\text{sample\_size}\rceil`),
        for histograms.
    running_points : int, default 200
        At most this many log-spaced checkpoints for the running mean of batch 0.
    chunk_size : int, default 131072
        Values processed at once; bounds memory.  See the module notes on how
        it affects the numbers.
    workers : int, optional
        Threads that evaluate and reduce chunks while the main thread draws the
        next ones; default ``min(2, os.cpu_count())``.  The draws stay on one
        stream and the chunks are merged in stream order, so the results are
        bit-identical for every value.
    percentiles : bool, default True
        Collect the values behind ``p95`` and ``p99`` (up to
        :math:`2\cdot 10^6` per estimator, 16 MB).  False leaves them nan with
        ``quantile_count`` 0 and changes no other figure: the command line's
        table, which shows no percentiles, runs leaner without them.

    Returns
    -------
    Simulation
        Exact targets and one :class:`EstimatorSummary` per key.

    Raises
    ------
    ValueError
        Naming the offending parameter.

    Notes
    -----
    Because the samples are i.i.d., keeping every ``s``-th value is a uniform
    random subsample.  ``p95``/``p99`` use every value when
    :math:`N \le 2\cdot 10^6`, else every :math:`\lfloor N/10^6 \rfloor`-th
    value (between :math:`10^6` and :math:`2\cdot 10^6` values).  Memory is a
    few chunks in flight plus these subsamples and ``8 · repeats`` bytes of
    batch means per estimator, whatever :math:`N` is: about 75 MB of arrays for
    five estimators at :math:`N = 10^8` (benchmarks/bench_table.py).

    When the target is 0 (``p == q``) or infinite, ``bias_over_true`` and
    ``std_over_true`` are nan; an infinite per-sample value makes ``mean``
    infinite and ``std`` infinite (nan if both signs occur).

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html;
    T. F. Chan, G. H. Golub, R. J. LeVeque, "Algorithms for computing the
    sample variance: analysis and recommendations", Am. Stat. 37 (1983).

    Examples
    --------
    >>> sim = simulate("normal(0,1)", "normal(1,1)", n=10_000, keys=("k1", "k3"))
    >>> sim.true_kl
    0.5
    >>> abs(sim["k3"].mean - 0.5) < 4 * sim["k3"].se
    True
    """
    q = _check_distribution(q, "q")
    p = _check_distribution(p, "p")
    if q.discrete != p.discrete:
        raise ValueError("p must be of the same kind as q: both continuous or both categorical")
    n = check_positive_int(n, "n")
    repeats = check_positive_int(repeats, "repeats")
    seed = _check_seed(seed)
    lam = check_finite(lam, "lam")
    keys = _check_keys(keys)
    sample_size = check_positive_int(sample_size, "sample_size")
    running_points = check_positive_int(running_points, "running_points")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    workers = _default_workers() if workers is None else check_positive_int(workers, "workers")
    if not isinstance(percentiles, (bool, np.bool_)):
        raise ValueError(f"percentiles must be True or False, got {percentiles!r}")

    true_kl = kl(q, p)
    true_kl_pq = kl(p, q)

    total_n = n * repeats
    q_stride = 1 if total_n <= 2 * QUANTILE_SAMPLE_MIN else total_n // QUANTILE_SAMPLE_MIN
    q_stride = q_stride if percentiles else 0  # 0: no values kept
    s_stride = -(-total_n // sample_size)
    checkpoints = _checkpoints(n, running_points)
    accs = {
        k: _Accumulator(
            batch_means=np.empty(repeats),
            quantile=np.empty(-(-total_n // q_stride) if q_stride else 0),
            samples=np.empty(-(-total_n // s_stride)),
        )
        for k in keys
    }
    plan = _Plan(q, p, keys, lam, n, checkpoints, q_stride, s_stride)
    rng = np.random.default_rng(seed)
    chunks = list(_chunks(n, repeats, chunk_size))
    for ch, reduced in _run(plan, rng, chunks, workers):
        for key, kc in zip(keys, reduced, strict=True):
            _merge_chunk(accs[key], kc, ch, plan)

    summaries = []
    for key in keys:
        info = est.ESTIMATORS[key]
        acc = accs[key]
        target_name, target = target_of(key, true_kl, true_kl_pq)
        bm = acc.batch_means
        quantile_count = acc.quantile.size
        p95, p99 = _percentiles(acc.quantile)
        acc.quantile = np.empty(0)  # free it before the next estimator's percentiles
        std = acc.total.std
        mean = acc.total.mean
        summaries.append(
            EstimatorSummary(
                key=key,
                name=info.name,
                target_name=target_name,
                target=target,
                mean=mean,
                std=std,
                bias_over_true=ratio_to_target(mean - target, target)
                if math.isfinite(mean)
                else math.nan,
                std_over_true=ratio_to_target(std, target),
                se=std / math.sqrt(n),
                neg_fraction=acc.negatives / total_n,
                p95=p95,
                p99=p99,
                quantile_count=int(quantile_count),
                batch_means=_frozen(bm),
                samples=_frozen(acc.samples),
                running_n=_frozen_int(checkpoints),
                running_mean=_frozen(np.asarray(acc.running_mean)),
                running_se=_frozen(np.asarray(acc.running_se)),
            )
        )
    return Simulation(
        q=q,
        p=p,
        n=n,
        repeats=repeats,
        seed=seed,
        lam=lam,
        true_kl=true_kl,
        true_kl_pq=true_kl_pq,
        summaries=tuple(summaries),
    )


def _evaluate(key: str, logr: np.ndarray, lam: float, done: dict[str, np.ndarray]) -> np.ndarray:
    """Per-sample values of ``key``, reusing an identical array of this chunk."""
    # k_lambda(lam=1) IS k3 and k_lambda(lam=0) IS k1 (estimators.k_lambda
    # returns exactly those: Parameter.same_as), so the expm1 pass is not paid twice.
    parameter = est.ESTIMATORS[key].parameter
    if parameter is not None:
        for value, other in parameter.same_as:
            if lam == value and other in done:
                return done[other]
    return est.evaluate(key, logr, lam=lam)


@dataclass(frozen=True)
class _Plan:
    """What every chunk needs to know; shared read-only by the worker threads."""

    q: Distribution
    p: Distribution
    keys: tuple[str, ...]
    lam: float
    n: int
    checkpoints: np.ndarray
    q_stride: int
    s_stride: int


def _reduce_chunk(plan: _Plan, ch: _Chunk, x: np.ndarray) -> list[_KeyChunk]:
    """Evaluate every estimator on one chunk of draws and reduce it (pure; thread-safe)."""
    logr = log_ratio(plan.p, plan.q, x)
    scratch = np.empty(x.size)  # the deviations of every moment below
    done: dict[str, np.ndarray] = {}
    out: list[_KeyChunk] = []
    for key in plan.keys:
        v = _evaluate(key, logr, plan.lam, done)
        same = next((i for i, k in enumerate(done) if done[k] is v), None)
        done[key] = v
        if same is not None:  # the very same values: the same reductions
            out.append(out[same])
            continue
        batch_means = None
        if ch.rows > 1:
            with np.errstate(invalid="ignore", over="ignore"):
                batch_means = v.reshape(ch.rows, plan.n).mean(axis=1)
        pieces: list[_Moments] = []
        marks: list[bool] = []
        if ch.batch == 0:
            # Batch 0 is cut at the checkpoints; its pieces also make the chunk's total.
            head = v[: plan.n] if ch.rows > 1 else v
            moments = _Moments()
            cuts = plan.checkpoints - ch.offset
            cuts = cuts[(cuts > 0) & (cuts <= head.size)]
            pos = 0
            for cut in (*cuts.tolist(), head.size):
                if cut > pos:
                    piece = _Moments.of(head[pos:cut], scratch)
                    pieces.append(piece)
                    marks.append(cut in cuts)
                    moments.merge(piece)
                    pos = cut
            if ch.rows > 1:
                moments.merge(_Moments.of(v[plan.n :], scratch))
        else:
            moments = _Moments.of(v, scratch)
        # views: the copy happens once, into the accumulator's buffer
        q_part = _strided(v, ch.start, plan.q_stride) if plan.q_stride else v[:0]
        out.append(
            _KeyChunk(
                moments=moments,
                # the registry's non-negative estimators (tested on every float) need no count
                negatives=0 if est.ESTIMATORS[key].nonnegative else int(np.count_nonzero(v < 0)),
                quantile=q_part,
                sample=_strided(v, ch.start, plan.s_stride),
                batch_means=batch_means,
                running=pieces,
                running_marks=marks,
            )
        )
    return out


def _merge_chunk(acc: _Accumulator, kc: _KeyChunk, ch: _Chunk, plan: _Plan) -> None:
    """Fold one chunk's reductions into an estimator's accumulator, in stream order."""
    acc.total.merge(kc.moments)
    acc.negatives += kc.negatives
    for buf, part, stride in (
        (acc.quantile, kc.quantile, plan.q_stride),
        (acc.samples, kc.sample, plan.s_stride),
    ):
        if not stride:
            continue
        at = -(-ch.start // stride)  # index of the first value of the chunk that is kept
        buf[at : at + part.size] = part
    if kc.batch_means is not None:
        acc.batch_means[ch.batch : ch.batch + ch.rows] = kc.batch_means
    for piece, mark in zip(kc.running, kc.running_marks, strict=True):
        acc.running.merge(piece)
        if mark:
            acc.running_mean.append(acc.running.mean)
            acc.running_se.append(acc.running.std / math.sqrt(acc.running.count))
    if ch.batch == 0:
        if ch.offset + (plan.n if ch.rows > 1 else ch.length) == plan.n:
            acc.batch_means[0] = acc.running.mean  # the running mean's end point
    elif ch.rows == 1:
        if ch.offset == 0:
            acc.piece = _Moments()
        acc.piece.merge(kc.moments)
        if ch.offset + ch.length == plan.n:
            acc.batch_means[ch.batch] = acc.piece.mean


def _run(
    plan: _Plan, rng: np.random.Generator, chunks: list[_Chunk], workers: int
) -> Iterator[tuple[_Chunk, list[_KeyChunk]]]:
    """Yield every chunk's reductions in stream order.

    The draws are made here, in order, from the one generator; only the pure
    per-chunk work goes to the threads (numpy releases the GIL inside its
    loops), so the results do not depend on ``workers``.
    """
    if workers <= 1 or len(chunks) < 4:
        for ch in chunks:
            yield ch, _reduce_chunk(plan, ch, plan.q.sample(rng, ch.length))
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque[tuple[_Chunk, Future[list[_KeyChunk]]]] = deque()
        for ch in chunks:
            x = plan.q.sample(rng, ch.length)
            pending.append((ch, pool.submit(_reduce_chunk, plan, ch, x)))
            # A short queue bounds memory to a few chunks in flight.
            while len(pending) > 2 * workers:
                done_ch, fut = pending.popleft()
                yield done_ch, fut.result()
        while pending:
            done_ch, fut = pending.popleft()
            yield done_ch, fut.result()
