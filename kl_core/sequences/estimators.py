r"""Six estimators of a sequence-level KL, with exact means and variances by dynamic programming.

Sequences :math:`x = (x_1, \dots, x_T) \sim \pi_\theta` (a
:class:`~kl_core.sequences.markov.MarkovChain`) are compared with :math:`\pi_{\mathrm{ref}}`.
Per token, :math:`\log r_t = \log\pi_{\mathrm{ref}}(x_t \mid x_{<t}) - \log\pi_\theta(x_t \mid x_{<t})`,
and Schulman's :math:`k_1, k_2, k_3` of :mod:`kl_core.estimation.estimators` apply to it.
With :math:`R = \prod_t r_t = \pi_{\mathrm{ref}}(x)/\pi_\theta(x)`:

===========  ====================================================  ==============================
key          per sequence                                          mean
===========  ====================================================  ==============================
``sum_k1``   :math:`\sum_t k_{1,t} = \log\pi_\theta(x)/\pi_{\mathrm{ref}}(x)`  KL (unbiased)
``sum_k3``   :math:`\sum_t k_{3,t}`                                KL (unbiased; each term for its position)
``seq_k3``   :math:`(R - 1) - \log R`                              KL (unbiased; variance grows like :math:`e^{cT}`)
``sum_k2``   :math:`\sum_t k_{2,t}`                                :math:`\sum_t \mathbb{E}[\tfrac12\log^2 r_t]` (biased)
``rb``       :math:`\sum_t \mathrm{KL}[\pi_\theta(\cdot\mid x_{<t}) \| \pi_{\mathrm{ref}}(\cdot\mid x_{<t})]`  KL (Rao–Blackwellized)
``mean_k3``  :math:`\tfrac1T \sum_t k_{3,t}`                       KL / T (the per-token average logs show)
===========  ====================================================  ==============================

Exact moments
-------------
Every estimator but ``seq_k3`` is an additive functional
:math:`S_T = \sum_t g(x_{t-1}, x_t)` of the chain.  Its mean and variance for
every :math:`T \le T_{\max}` come from one forward pass over (state, centred
moments), :math:`O(T K^2)`: with :math:`\mu_t = \mathbb{E}[g_t]`,
:math:`\tilde g = g - \mu_t` and :math:`m_k(j) = \mathbb{E}[(S_t - \mathbb{E}S_t)^k;\, x_t = j]`,

.. math::

    m_0'(j) &= \textstyle\sum_i m_0(i) P(i,j), \\
    m_1'(j) &= \textstyle\sum_i P(i,j)\,[m_1(i) + m_0(i)\,\tilde g(i,j)], \\
    m_2'(j) &= \textstyle\sum_i P(i,j)\,[m_2(i) + 2 m_1(i)\,\tilde g(i,j) + m_0(i)\,\tilde g(i,j)^2],

and :math:`\mathrm{Var}\,S_T = \sum_j m_2(j)`; centring first keeps the
variance free of the cancellation of :math:`\mathbb{E}S^2 - (\mathbb{E}S)^2`.
The cross term :math:`2 m_1 \tilde g` carries the covariances between positions.

For ``seq_k3``, :math:`\mathbb{E}[R] = 1`, :math:`\mathbb{E}[R \log R] =
\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]` and :math:`\mathbb{E}[\log R] = -\mathrm{KL}`, so

.. math::

    \mathrm{Var}[(R-1)-\log R] = \chi^2 + \mathrm{Var}[\log R]
        - 2\,(\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}] + \mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]),

with :math:`\chi^2 = \mathbb{E}[R^2] - 1`.  :math:`\mathbb{E}[R^2] = \sum_x
\pi_{\mathrm{ref}}(x)^2/\pi_\theta(x)` is a product-form sum, run forward in log
space (a normalised vector and its log scale) and built from the per-row
:math:`\chi^2` terms, all ≥ 0, so it keeps full relative precision however
small the drift.  Where :math:`\mathbb{E}[R^2]` exceeds the largest double,
the variance is ``inf``, but the std, :math:`\exp(\tfrac12\log\mathbb{E}[R^2])` to
double precision there, stays finite until :math:`\mathbb{E}[R^2] > e^{1419}`.

Rao–Blackwellization, and its limit
-----------------------------------
Per position, :math:`\mathrm{rb}_t = \mathbb{E}[k_{1,t} \mid x_{<t}]`, so
:math:`\mathrm{Var}(\mathrm{rb}_t) \le \mathrm{Var}(k_{1,t})` always (law of
total variance).  For the *sums*, the covariances between positions also
count: :math:`\mathrm{Var}(\sum k_1) - \mathrm{Var}(\sum \mathrm{rb}) = \sum_t
\mathbb{E}\,[\mathrm{Var}(k_{1,t} \mid x_{<t}) + 2\,\mathrm{Cov}(k_{1,t}, V_t \mid x_{<t})]`,
with :math:`V_t` the KL still to come after :math:`x_t`.  A token whose
log-ratio is high exactly when the remaining KL is low makes it negative:
:data:`RB_COUNTEREXAMPLE` is built that way, and the drift family shows it
with a steep tilt (K = 50, :math:`\delta = 10`, T = 256: std 7.108 for ``rb``
against 7.048 for ``sum_k1``, confirmed by Monte Carlo).  For
:math:`|\delta| \le 5`, K ≤ 50 and T ≤ 256, ``rb`` has the lower variance
everywhere (tested), usually by one or two orders of magnitude.

Source: A. Amini, T. Vieira and R. Cotterell, "Better Estimation of the KL
Divergence Between Language Models" (2025), arXiv:2504.10637 (the
Rao–Blackwellized estimator); J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html (k1, k2, k3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kl_core.estimation import estimators as est
from kl_core.estimation.reliability import count_text
from kl_core.sequences.markov import (
    MarkovChain,
    check_length,
    check_pair,
    log_ratios,
    next_token_kl,
    per_position_kl,
)
from kl_core.validation import Message, by_key, check_positive_int

__all__ = [
    "ADDITIVE_KEYS",
    "RB_COUNTEREXAMPLE",
    "SEQUENCE_ESTIMATORS",
    "SEQUENCE_KEYS",
    "SequenceCurves",
    "SequenceEstimatorInfo",
    "SequenceExact",
    "SequenceReport",
    "SequenceRow",
    "exact_curves",
    "exact_moments",
    "likely_missed",
    "rare_sequences",
    "se_shortfall",
    "sequence_report",
]

AMINI = "A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637"

SEQUENCE_KEYS: tuple[str, ...] = ("sum_k1", "sum_k3", "seq_k3", "sum_k2", "rb", "mean_k3")
"""The six estimators, in the order they are reported."""

ADDITIVE_KEYS: tuple[str, ...] = ("sum_k1", "sum_k3", "sum_k2", "rb")
"""The estimators that are sums of one term per position."""

# log of the largest double: E[R^2] above exp(this) overflows (seq_k3's std is then exp(log_r2 / 2)).
_LOG_MAX = math.log(np.finfo(np.float64).max)

RB_COUNTEREXAMPLE = (
    "markov(0,0,-30; 0,-30,-30; -30,0,-30; -30,-30,0)",
    "markov(0,-1,-0.45867514538708193; -1,-0.45867514538708193,-30; -30,0,-30; -30,-30,0)",
)
"""``(policy, ref)`` specs where ``rb`` has *more* variance than ``sum_k1`` (every T ≥ 2).

The policy picks token 0 or 1 (even odds) and then repeats it.  The
reference gives token 1 a first-token probability e times smaller, and
after token 0 repeats it with probability 1/e only.  Every token after a
first 0 adds 1 to both :math:`\\log\\pi_\\theta(x)/\\pi_{\\mathrm{ref}}(x)` and
the next-token KL, every token after a first 1 adds 0, and the first token 1
adds 1 more to the log-ratio than token 0 (rb's first term is the same for
both).  So the two likely sequences differ by T − 2 in ``sum_k1`` and by
T − 1 in ``rb``: std |T − 2|/2 against (T − 1)/2 (at T = 2 ``sum_k1`` is
nearly constant; at T = 1 it is the noisier one)."""


@dataclass(frozen=True)
class SequenceEstimatorInfo:
    """What one sequence estimator is: formula, target, guarantees, source.

    Attributes
    ----------
    key : str
        Registry key, e.g. ``"sum_k3"``.
    name : str
        Display name.
    latex : str
        The per-sequence value in LaTeX.
    target : str
        ``"KL"`` (the sequence KL), ``"KL/T"`` or ``"E[sum_k2]"`` (biased).
    unbiased : bool
        True if its mean equals its target exactly.
    summary : str
        One line on its character.
    source : str
        Where it comes from.
    """

    key: str
    name: str
    latex: str
    target: str
    unbiased: bool
    summary: str
    source: str


SEQUENCE_ESTIMATORS: dict[str, SequenceEstimatorInfo] = by_key(
    SequenceEstimatorInfo(
        "sum_k1",
        "Σ k1",
        r"\sum_t k_{1,t} = \log\frac{\pi_\theta(x)}{\pi_{\mathrm{ref}}(x)}",
        "KL",
        True,
        "The plain Monte Carlo estimate of the sequence KL; single values can be < 0.",
        est.BLOG,
    ),
    SequenceEstimatorInfo(
        "sum_k3",
        "Σ k3",
        r"\sum_t \left[(r_t - 1) - \log r_t\right]",
        "KL",
        True,
        "Each term is unbiased for its own position's KL, and never negative.",
        est.BLOG,
    ),
    SequenceEstimatorInfo(
        "seq_k3",
        "k3 of the sequence ratio",
        r"(R - 1) - \log R,\ R = \prod_t r_t",
        "KL",
        True,
        "k3 applied to the whole-sequence ratio: unbiased, but its variance can grow like e^{cT}.",
        est.BLOG,
    ),
    SequenceEstimatorInfo(
        "sum_k2",
        "Σ k2",
        r"\sum_t \tfrac12 (\log r_t)^2",
        "E[sum_k2]",
        False,
        "Biased: its mean is the sum of each position's E[½ log² r], in general not the KL (both are 0 when the chains agree).",
        est.BLOG,
    ),
    SequenceEstimatorInfo(
        "rb",
        "Rao–Blackwellized",
        r"\sum_t \mathrm{KL}\left[\pi_\theta(\cdot \mid x_{<t}) \,\|\, \pi_{\mathrm{ref}}(\cdot \mid x_{<t})\right]",
        "KL",
        True,
        "The exact next-token KL at each sampled prefix; needs the full next-token distributions.",
        AMINI,
    ),
    SequenceEstimatorInfo(
        "mean_k3",
        "mean k3 per token",
        r"\frac1T \sum_t k_{3,t}",
        "KL/T",
        True,
        "The per-token average most training logs show: it estimates KL / T, the KL only at T = 1 or where the KL is 0.",
        est.BLOG,
    ),
)


# ---------------------------------------------------------------- exact


@dataclass(frozen=True, eq=False)
class SequenceCurves:
    """Exact figures for every length T = 1 … ``max_length`` at once (:func:`exact_curves`).

    Attributes
    ----------
    lengths : numpy.ndarray of int
        1 … ``max_length``.
    true_kl, true_kl_reverse : numpy.ndarray
        :math:`\\mathrm{KL}[\\pi_\\theta\\|\\pi_{\\mathrm{ref}}]` and
        :math:`\\mathrm{KL}[\\pi_{\\mathrm{ref}}\\|\\pi_\\theta]` over sequences of each length.
    mean, std : dict of str to numpy.ndarray
        Per key of :data:`SEQUENCE_KEYS`, the exact mean and standard
        deviation of one sequence's value; ``inf`` where it exceeds a double
        (seq_k3's std is finite while :math:`\\mathbb{E}[R^2] \\le e^{1419}`, although its
        variance overflows from :math:`e^{709.8}`).
    log_r2 : numpy.ndarray
        :math:`\\log\\mathbb{E}[R^2]`, finite even where :math:`\\mathbb{E}[R^2]` is not.
    per_position_kl, per_position_kl_reverse : numpy.ndarray
        Each position's contribution; ``true_kl`` is their cumulative sum.
    """

    lengths: np.ndarray
    true_kl: np.ndarray
    true_kl_reverse: np.ndarray
    mean: dict[str, np.ndarray]
    std: dict[str, np.ndarray]
    log_r2: np.ndarray
    per_position_kl: np.ndarray
    per_position_kl_reverse: np.ndarray

    def relative_std(self, key: str) -> np.ndarray:
        """Standard deviation per sequence over the KL it is compared with, for every T.

        As in Schulman's table (stdev/true): the sequence KL for every
        estimator (the biased ``sum_k2`` included), KL / T for ``mean_k3``.

        Parameters
        ----------
        key : str
            A key of :data:`SEQUENCE_KEYS`.

        Returns
        -------
        numpy.ndarray
            One ratio per T; ``nan`` where the KL is 0 (identical chains).
        """
        if key not in self.std:
            raise ValueError(f"key must be one of {list(self.std)}, got {key!r}")
        target = self.true_kl / self.lengths if key == "mean_k3" else self.true_kl
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(target > 0, self.std[key] / target, np.nan)


@dataclass(frozen=True, eq=False)
class SequenceExact:
    """Exact figures for one length T (:func:`exact_moments`).

    Attributes
    ----------
    length : int
        T.
    true_kl, true_kl_reverse : float
        The sequence KL in both directions.
    per_position_kl, per_position_kl_reverse : numpy.ndarray
        T contributions each, summing to the two KLs.
    mean, std : dict of str to float
        Per key of :data:`SEQUENCE_KEYS`.
    log_r2 : float
        :math:`\\log\\mathbb{E}[R^2]` (for ``seq_k3``).
    """

    length: int
    true_kl: float
    true_kl_reverse: float
    per_position_kl: np.ndarray
    per_position_kl_reverse: np.ndarray
    mean: dict[str, float]
    std: dict[str, float]
    log_r2: float


def _step_tables(
    policy: MarkovChain, ref: MarkovChain
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-token values of the additive estimators: first step (F, K), later steps (F, K, K).

    Also their conditional means (the expected next term from each state),
    first step (F,) and later steps (F, K): for k1, k3 and rb this is the
    next-token KL, taken from :func:`kl_core.sequences.markov.bregman_terms` (no
    cancellation); for k2 the direct sum.
    """
    l0, L = log_ratios(policy, ref)  # log r of each token, ref over policy, from the logits
    k0, kap = next_token_kl(policy, ref)
    k = policy.k
    first = np.stack([est.k1(l0), est.k3(l0), est.k2(l0), np.full(k, k0)])
    later = np.stack([est.k1(L), est.k3(L), est.k2(L), np.broadcast_to(kap[:, None], (k, k))])
    p1, P = policy.first_probs, policy.transition_probs
    first_mean = np.array([k0, k0, float(p1 @ first[2]), k0])
    later_mean = np.stack([kap, kap, (P * later[2]).sum(axis=1), kap])
    return first, later, first_mean, later_mean


def _additive_moments(
    policy: MarkovChain, ref: MarkovChain, length: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means and variances (F, T) of the additive estimators, and each position's KL (T,)."""
    first, later, first_mean, later_mean = _step_tables(policy, ref)
    p1, P = policy.first_probs, policy.transition_probs
    n_f = first.shape[0]
    mean = np.empty((n_f, length))
    var = np.empty((n_f, length))
    mu = first_mean
    g = first - mu[:, None]
    m0 = p1
    m1 = g * p1
    m2 = g * g * p1
    c = mu.copy()
    mean[:, 0], var[:, 0] = c, m2.sum(axis=1)
    for t in range(1, length):
        mu = later_mean @ m0
        g = later - mu[:, None, None]
        Pg = P * g
        m1, m2 = (
            m1 @ P + m0 @ Pg,
            m2 @ P + 2.0 * np.einsum("fi,fij->fj", m1, Pg) + m0 @ (Pg * g),
        )
        m0 = m0 @ P
        c = c + mu
        mean[:, t] = c
        var[:, t] = m2.sum(axis=1)
    per_pos = np.diff(mean[3], prepend=0.0)  # rb's expected term = that position's KL
    return mean, np.maximum(var, 0.0), per_pos


def _chi2_terms(log_q: np.ndarray, log_p: np.ndarray, lr: np.ndarray) -> np.ndarray:
    r"""Elementwise :math:`q\,(r-1)^2` with :math:`r = p/q` and ``lr`` :math:`= \log r` (from the logits:
    :func:`kl_core.sequences.markov.log_ratios`): each ≥ 0, summing to :math:`\chi^2(p\|q)`."""
    q = np.exp(log_q)
    near = np.abs(lr) < 1.0
    far = np.exp(2.0 * log_p - log_q) - 2.0 * np.exp(log_p) + q  # no cancellation for |lr| >= 1
    return np.where(near, q * np.expm1(np.where(near, lr, 0.0)) ** 2, far)


def _log_second_moment(policy: MarkovChain, ref: MarkovChain, length: int) -> np.ndarray:
    r""":math:`\log\mathbb{E}_{\pi_\theta}[R^2]` for T = 1 … length, with :math:`R = \pi_{\mathrm{ref}}/\pi_\theta`.

    The forward vector :math:`u_t(j) = \sum_{x_{\le t},\,x_t=j} \pi_{\mathrm{ref}}^2/\pi_\theta`
    is kept as a distribution times a scale; the scale grows by
    :math:`1 + \sum_i \tilde u_t(i)\,\chi^2_i` per step.
    """
    a, b = policy.log_first, ref.log_first
    A, B = policy.log_transitions, ref.log_transitions
    l0, L = log_ratios(policy, ref)  # χ²'s terms on the same log-ratios as the KLs and Var(log R) it cancels with
    chi_first = float(_chi2_terms(a, b, l0).sum())
    chi_rows = _chi2_terms(A, B, L).sum(axis=1)
    M = np.exp(2.0 * B - A)  # finite: every log-prob is above -306 (MAX_LOGIT_SPREAD)
    out = np.empty(length)
    u = np.exp(2.0 * b - a)
    u = u / u.sum()
    log_s = math.log1p(chi_first)
    out[0] = log_s
    for t in range(1, length):
        grow = float(u @ chi_rows)
        log_s += math.log1p(grow)
        out[t] = log_s
        u = (u @ M) / (1.0 + grow)
    return out


#: A difference of terms of size S is rounding below this multiple of S (16 ulps).
_CANCELLATION = 16.0 * np.finfo(float).eps


def exact_curves(
    policy: MarkovChain | str, ref: MarkovChain | str, max_length: int
) -> SequenceCurves:
    r"""Exact mean and standard deviation of all six estimators for every T ≤ ``max_length``.

    One forward pass, :math:`O(T K^2)` (see the module docstring):

    .. math::

        \mathbb{E}[S_T] = \sum_{t \le T} \mu_t, \qquad
        \mathrm{Var}[S_T] = \sum_j m_2^{(T)}(j), \qquad
        \mathrm{Var}[\text{seq\_k3}] = \chi^2 + \mathrm{Var}[\log R] - 2(\mathrm{KL} + \mathrm{KL}_{\mathrm{rev}}).

    Where :math:`\mathbb{E}[R^2]` exceeds the largest double, the other terms are
    below :math:`10^{-300}` of it, so seq_k3's std is
    :math:`\exp(\tfrac12\log\mathbb{E}[R^2])`: finite until :math:`\mathbb{E}[R^2] > e^{1419}`,
    ``inf`` beyond.

    Parameters
    ----------
    policy : MarkovChain or str
        :math:`\pi_\theta`, the chain sequences are drawn from (or its spec).
    ref : MarkovChain or str
        :math:`\pi_{\mathrm{ref}}`, same K.
    max_length : int
        The longest T, 1 … :data:`kl_core.sequences.markov.MAX_LENGTH`.

    Returns
    -------
    SequenceCurves
        Arrays indexed by T − 1.

    References
    ----------
    A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637;
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> from kl_core.sequences.markov import drift_pair
    >>> c = exact_curves(*drift_pair(4, 0.3), 3)
    >>> bool(c.std["rb"][-1] < c.std["sum_k1"][-1])
    True
    """
    policy, ref = check_pair(policy, ref)
    length = check_length(max_length)
    mean_f, var_f, per_pos = _additive_moments(policy, ref, length)
    per_pos_rev = per_position_kl(ref, policy, length)
    kl = np.cumsum(per_pos)
    kl_rev = np.cumsum(per_pos_rev)
    lengths = np.arange(1, length + 1)
    mean = dict(zip(ADDITIVE_KEYS, mean_f, strict=True))
    std = dict(zip(ADDITIVE_KEYS, np.sqrt(var_f), strict=True))
    log_r2 = _log_second_moment(policy, ref, length)
    with np.errstate(over="ignore"):
        chi2 = np.where(log_r2 < _LOG_MAX, np.expm1(np.minimum(log_r2, _LOG_MAX)), np.inf)
        var_seq = chi2 + var_f[0] - 2.0 * (kl + kl_rev)
    mean["seq_k3"] = kl.copy()
    std["seq_k3"] = np.sqrt(np.maximum(var_seq, 0.0))
    # Var = χ² + Var(log R) − 2(KL + KL_rev) cancels: for chains a hair apart (logits 1e-9) the terms are 1e-19 and
    # the variance 1e-57, below their rounding.  There the std is not resolved (NaN), not 0.
    with np.errstate(over="ignore", invalid="ignore"):
        scale = chi2 + var_f[0] + 2.0 * (kl + kl_rev)
        lost = np.isfinite(scale) & (scale > 0.0) & (var_seq <= _CANCELLATION * scale)
    std["seq_k3"][lost] = np.nan
    # Where E[R^2] exceeds a double, the other terms are below 1e-300 of it: the std is
    # sqrt(E[R^2]) = exp(log E[R^2] / 2), finite up to E[R^2] = e^1419.
    over = ~np.isfinite(var_seq)
    with np.errstate(over="ignore"):
        std["seq_k3"][over] = np.exp(0.5 * log_r2[over])
    mean["mean_k3"] = mean["sum_k3"] / lengths
    std["mean_k3"] = std["sum_k3"] / lengths
    return SequenceCurves(
        lengths=lengths,
        true_kl=kl,
        true_kl_reverse=kl_rev,
        mean={k: mean[k] for k in SEQUENCE_KEYS},
        std={k: std[k] for k in SEQUENCE_KEYS},
        log_r2=log_r2,
        per_position_kl=per_pos,
        per_position_kl_reverse=per_pos_rev,
    )


def exact_moments(policy: MarkovChain | str, ref: MarkovChain | str, length: int) -> SequenceExact:
    r"""Exact mean and standard deviation of the six estimators at one length T.

    The last entry of :func:`exact_curves`; the KL in both directions and
    their per-position contributions

    .. math:: \mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}] = \sum_{t=1}^T \mathbb{E}_{x_{<t}}\,
              \mathrm{KL}[\pi_\theta(\cdot\mid x_{<t}) \| \pi_{\mathrm{ref}}(\cdot\mid x_{<t})].

    Parameters
    ----------
    policy, ref : MarkovChain or str
        :math:`\pi_\theta` (sampled) and :math:`\pi_{\mathrm{ref}}`, same K.
    length : int
        T.

    Returns
    -------
    SequenceExact

    References
    ----------
    A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637.
    """
    c = exact_curves(policy, ref, length)
    return SequenceExact(
        length=int(c.lengths[-1]),
        true_kl=float(c.true_kl[-1]),
        true_kl_reverse=float(c.true_kl_reverse[-1]),
        per_position_kl=c.per_position_kl,
        per_position_kl_reverse=c.per_position_kl_reverse,
        mean={k: float(v[-1]) for k, v in c.mean.items()},
        std={k: float(v[-1]) for k, v in c.std.items()},
        log_r2=float(c.log_r2[-1]),
    )


def rare_sequences(log_r2: float, n: int) -> tuple[float, float]:
    r"""Where :math:`\mathbb{E}[R^2]` lives: a set of rare sequences, and how likely ``n`` draws are to meet it.

    With :math:`M = \mathbb{E}_{\pi_\theta}[R^2]`, :math:`c = \sqrt M` and :math:`\mathbb{E}_{\pi_\theta}[R] = 1`,
    Markov's inequality gives

    .. math::

        P(R > c) \le \frac{\mathbb{E}[R]}{c} = \frac{1}{\sqrt M} = p, \qquad
        \mathbb{E}[R^2;\, R \le c] \le c\,\mathbb{E}[R] = \sqrt M,

    so sequences of total probability at most :math:`p` carry at least :math:`1 - p` of
    :math:`M`, the term behind seq_k3's variance; ``n`` independent draws include one of them with
    probability at most :math:`1 - (1 - p)^n`.  Where none is drawn, the sample's :math:`R^2` average
    has expectation at most :math:`\sqrt M`, a fraction :math:`p` of :math:`M`.

    Parameters
    ----------
    log_r2 : float
        :math:`\log M` (``SequenceExact.log_r2``; ``SequenceCurves.log_r2`` per T).
    n : int
        Sequences drawn.

    Returns
    -------
    (float, float)
        :math:`p` (1 where :math:`M \le 1`: no rare set), and the bound on the chance that ``n`` draws
        include such a sequence.

    References
    ----------
    A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637 (seq_k3's variance).

    Examples
    --------
    >>> p, hit = rare_sequences(math.log(1e10), 1000)
    >>> f"{p:.3g}", f"{hit:.3g}"
    ('1e-05', '0.00995')
    """
    log_r2 = float(log_r2)
    if math.isnan(log_r2):
        raise ValueError("log_r2 must not be NaN")
    n = check_positive_int(n, "n")
    p = math.exp(-0.5 * log_r2) if log_r2 > 0 else 1.0
    return p, -math.expm1(n * math.log1p(-p)) if p < 1.0 else 1.0


def likely_missed(rare: float, hit: float) -> bool:
    r"""Whether a sample likely misses the rare sequences of :func:`rare_sequences` *and* so falls far short.

    True where ``n`` draws include none of them with probability at least 1/2 (``hit`` :math:`\le 1/2`)
    and they carry at least 99% of :math:`\mathbb{E}[R^2]` (``rare`` :math:`= p \le 0.01`): a sample
    without them averages :math:`R^2` to at most :math:`p/(1 - p)`, about 1%, of :math:`\mathbb{E}[R^2]`
    in expectation.

    Parameters
    ----------
    rare, hit : float
        :func:`rare_sequences`'s :math:`p` and its bound on meeting the rare set.

    Returns
    -------
    bool

    References
    ----------
    A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637 (seq_k3's variance).

    Examples
    --------
    >>> likely_missed(1e-5, 0.01), likely_missed(0.2, 0.2), likely_missed(1e-3, 0.63)
    (True, False, False)
    """
    return hit <= 0.5 and rare <= 0.01


# ---------------------------------------------------------------- report


@dataclass(frozen=True)
class SequenceRow:
    """One estimator's figures per sequence: exact beside Monte Carlo.

    Attributes
    ----------
    name : str
        A key of :data:`SEQUENCE_KEYS`.
    exact_mean : float
        Exact mean of one sequence's value.
    exact_std : float or None
        Exact standard deviation; ``inf`` where it exceeds a double,
        None where it is not computed.
    mc_mean, mc_std, mc_se : float or None
        Monte Carlo mean, standard deviation (ddof = 1) and standard error;
        None without sampling.
    """

    name: str
    exact_mean: float
    exact_std: float | None
    mc_mean: float | None = None
    mc_std: float | None = None
    mc_se: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The six fields as a dict (floats may be ``inf``/``nan``: see :func:`kl_core.cli.main.json_value`)."""
        return {
            "name": self.name,
            "exact_mean": self.exact_mean,
            "exact_std": self.exact_std,
            "mc_mean": self.mc_mean,
            "mc_std": self.mc_std,
            "mc_se": self.mc_se,
        }


@dataclass(frozen=True, eq=False)
class SequenceReport:
    """What ``python -m kl_core sequence`` prints (:func:`sequence_report`).

    Attributes
    ----------
    policy, ref : MarkovChain
        The chains compared.
    length : int
        T.
    n, seed : int or None
        Monte Carlo sequences and seed; None with ``exact_only``.
    exact : SequenceExact
        The exact figures.
    rows : tuple of SequenceRow
        One per key of :data:`SEQUENCE_KEYS`.
    variance_ratio : dict of str to float
        Exact :math:`\\mathrm{Var}(\\text{key}) / \\mathrm{Var}(\\mathrm{rb})` for
        ``sum_k1`` and ``sum_k3`` (``inf`` if rb's variance is 0, ``nan`` if both are).
    notes : tuple of str
        Warnings worth reading beside the numbers.
    sample : SequenceSample or None
        The Monte Carlo values, per sequence.
    """

    policy: MarkovChain
    ref: MarkovChain
    length: int
    n: int | None
    seed: int | None
    exact: SequenceExact
    rows: tuple[SequenceRow, ...]
    variance_ratio: dict[str, float]
    notes: tuple[str, ...] = ()
    sample: Any = field(default=None, repr=False)

    @property
    def row(self) -> dict[str, SequenceRow]:
        """The rows by name."""
        return {r.name: r for r in self.rows}

    def as_dict(self) -> dict[str, Any]:
        """The JSON of ``sequence --json`` before :func:`kl_core.cli.main.json_value`.

        Keys ``true_kl``, ``true_kl_reverse``, ``per_position_kl`` (T floats) and
        ``rows`` (``name``, ``exact_mean``, ``exact_std``, ``mc_mean``, ``mc_std``,
        ``mc_se`` each), then ``T``, ``K``, ``n``, ``seed``, ``policy``, ``ref``
        (specs), ``per_position_kl_reverse``, ``variance_ratio`` and ``notes``.

        Returns
        -------
        dict
        """
        ex = self.exact
        return {
            "true_kl": ex.true_kl,
            "true_kl_reverse": ex.true_kl_reverse,
            "per_position_kl": [float(v) for v in ex.per_position_kl],
            "rows": [r.as_dict() for r in self.rows],
            "T": self.length,
            "K": self.policy.k,
            "n": self.n,
            "seed": self.seed,
            "policy": self.policy.spec,
            "ref": self.ref.spec,
            "per_position_kl_reverse": [float(v) for v in ex.per_position_kl_reverse],
            "variance_ratio": dict(self.variance_ratio),
            "notes": list(self.notes),
        }


def _ratio(a: float, b: float) -> float:
    if b > 0:
        return a / b
    return math.nan if a == 0 else math.inf


def _sequences_for_tenth(times: float) -> str:
    """n ≥ (std / (KL/10))² = 100 · times²: the sequences a standard error of 10% of the KL takes, as the
    notes print a count (``count_text``: rounded up), also past a double."""
    need = 100.0 * times * times
    if math.isfinite(need):
        return count_text(math.ceil(need))
    log10_need = 2.0 * math.log10(10.0 * times)
    exponent = math.floor(log10_need)
    mantissa = math.ceil(1000.0 * 10.0 ** (log10_need - exponent)) / 1000.0
    if mantissa >= 10.0:
        mantissa, exponent = 1.0, exponent + 1
    return f"{mantissa:.4g}e+{exponent:02d}"


#: A Monte Carlo SE more than this many times below the exact one is flagged: with light tails a
#: sample std falls that far short with negligible probability; it does when rare sequences carry
#: the variance and the sample has none of them.
SE_SHORTFALL = 10.0


def se_shortfall(row: SequenceRow, n: int) -> float:
    r"""How many times the Monte Carlo SE of ``row`` is below the exact one: :math:`(\sigma/\sqrt n)/\widehat{\mathrm{se}}`.

    Parameters
    ----------
    row : SequenceRow
        With Monte Carlo figures (``mc_se``).
    n : int
        The sequences drawn.

    Returns
    -------
    float
        ``nan`` without a Monte Carlo SE or an exact std; ``inf`` where the Monte Carlo SE is 0 but the
        exact one is not, or the exact one is past a double.

    References
    ----------
    A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637.

    Examples
    --------
    >>> se_shortfall(SequenceRow("sum_k3", 1.0, 50.0, 0.9, 2.0, 2.0 / 10), 100)
    25.0
    """
    n = check_positive_int(n, "n")
    if row.mc_se is None or row.exact_std is None or math.isnan(row.mc_se) or math.isnan(row.exact_std):
        return math.nan
    exact = row.exact_std / math.sqrt(n)
    if row.mc_se == 0.0:
        return math.inf if exact > 0 else math.nan
    return exact / row.mc_se


def _notes(ex: SequenceExact, rows: dict[str, SequenceRow], n: int | None) -> list[str]:
    notes = []
    if math.isinf(ex.std["seq_k3"]):
        notes.append(Message(
            "seq_k3: E[R^2] = e^{power} is beyond the largest double, so its exact std is reported as inf.",
            power=format(ex.log_r2, ".4g"),
        ))
    elif ex.true_kl > 0 and ex.std["seq_k3"] > 10 * ex.true_kl:
        times = ex.std["seq_k3"] / ex.true_kl
        rare, hit = rare_sequences(ex.log_r2, n) if n is not None and n >= 1 else (1.0, 1.0)
        if likely_missed(rare, hit):
            notes.append(Message(
                "seq_k3: its std is {times} times the KL. Sequences of total probability at most p = {rare} "
                "carry at least 1 − p of E[R^2], and n = {n:,} draws include one with probability at most "
                "{hit}, so its Monte Carlo std likely falls far short of the exact one.",
                times=format(times, ".3g"), rare=format(rare, ".3g"), n=n, hit=format(hit, ".3g"),
            ))
        else:
            notes.append(Message(
                "seq_k3: its std is {times} times the KL, so a standard error of 10% of the KL takes "
                "n ≥ {need} sequences.",
                times=format(times, ".3g"), need=_sequences_for_tenth(times),
            ))
    short = [key for key, row in rows.items() if n is not None and se_shortfall(row, n) > SE_SHORTFALL]
    if short:
        notes.append(Message(
            "{keys}: the Monte Carlo SE is more than {times:g} times below the exact one (the exact std over "
            "√n), so that ± SE cannot be trusted here (marked !).",
            keys=", ".join(short), times=SE_SHORTFALL,
        ))
    if ex.std["rb"] > ex.std["sum_k1"] * (1 + 1e-12):
        notes.append(Message(
            "rb has more variance than sum_k1 here: each position's term has less, but the "
            "log-ratio of a token is anti-correlated with the KL still to come."
        ))
    if n is not None and n < 2:
        notes.append(Message("n = {n}: the Monte Carlo std and SE are undefined (null).", n=n))
    return notes


def sequence_report(
    policy: MarkovChain | str,
    ref: MarkovChain | str,
    length: int,
    n: int = 2000,
    seed: int = 0,
    exact_only: bool = False,
) -> SequenceReport:
    r"""All six estimators for sequences of length T: exact figures beside Monte Carlo.

    For each key of :data:`SEQUENCE_KEYS`, the exact mean and standard deviation
    of one sequence's value (:func:`exact_moments`) and, unless ``exact_only``,
    the mean, standard deviation and standard error of ``n`` sampled sequences
    (:func:`kl_core.sequences.montecarlo.simulate_sequences`):

    .. math:: \hat\mu = \frac1n \sum_{i=1}^n S(x^{(i)}), \qquad
              \widehat{\mathrm{se}} = \hat\sigma / \sqrt n.

    Parameters
    ----------
    policy : MarkovChain or str
        :math:`\pi_\theta`, which draws the sequences.
    ref : MarkovChain or str
        :math:`\pi_{\mathrm{ref}}`.
    length : int
        T.
    n : int, default 2000
        Monte Carlo sequences.
    seed : int, default 0
        Seed of ``np.random.default_rng``.
    exact_only : bool, default False
        Skip the sampling (``mc_*`` are None).

    Returns
    -------
    SequenceReport

    References
    ----------
    A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637;
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
    """
    policy, ref = check_pair(policy, ref)
    length = check_length(length)
    if not exact_only:  # before the exact figures, which take a while at a large T
        from kl_core.sequences.montecarlo import check_sample_size, simulate_sequences

        check_sample_size(n, length)
    ex = exact_moments(policy, ref, length)
    sample = None
    if not exact_only:
        sample = simulate_sequences(policy, ref, length, n, seed=seed)
    rows = []
    for key in SEQUENCE_KEYS:
        row = SequenceRow(key, ex.mean[key], ex.std[key])
        if sample is not None:
            s = sample.summary(key)
            row = SequenceRow(key, ex.mean[key], ex.std[key], s.mean, s.std, s.se)
        rows.append(row)
    var_rb = ex.std["rb"] ** 2
    ratio = {k: _ratio(ex.std[k] ** 2, var_rb) for k in ("sum_k1", "sum_k3")}
    by_name = {r.name: r for r in rows}
    return SequenceReport(
        policy=policy,
        ref=ref,
        length=length,
        n=None if exact_only else int(n),
        seed=None if exact_only else int(seed),
        exact=ex,
        rows=tuple(rows),
        variance_ratio=ratio,
        notes=tuple(_notes(ex, by_name, None if exact_only else int(n))),
        sample=sample,
    )
