r"""A toy autoregressive language model: a Markov chain over K tokens, run for T steps.

The first token is drawn from :math:`\mathrm{softmax}(a)`; after token ``i``
the next one is drawn from :math:`\mathrm{softmax}(B_{i\cdot})`, so a sequence
:math:`x = (x_1, \dots, x_T)` has probability

.. math:: \pi(x) = \pi_1(x_1) \prod_{t=2}^{T} P(x_{t-1}, x_t).

It is small enough for exact answers: every expectation over the
:math:`K^T` sequences is a dynamic programme in :math:`O(T K^2)`.  The spec
string, read by :func:`parse_markov` and written by :attr:`MarkovChain.spec`,
lists the first-token logits, then one row of next-token logits per token::

    markov(a1,...,aK; b11,...,b1K; ...; bK1,...,bKK)

It is *not* a one-dimensional distribution, so :func:`kl_core.estimation.distributions.parse`
refuses it; the sequence tools (:mod:`kl_core.sequences.estimators`, ``python -m kl_core
sequence``) take it.

The **drift family** (:func:`drift_pair`) builds a reference chain and a policy
tilted away from it by a per-token reward, the way RLHF moves a model:
:math:`\pi_\theta(j \mid i) \propto \pi_{\mathrm{ref}}(j \mid i)\, e^{\delta v_j}`,
either at every step or in the first token only.

Source: the sequence-level view of KL estimation follows A. Amini, T. Vieira
and R. Cotterell, "Better Estimation of the KL Divergence Between Language
Models" (2025), arXiv:2504.10637; the per-token estimators are J. Schulman's,
"Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.estimators import k3
from kl_core.estimation.families.categorical import log_ratio_from_logits, log_softmax
from kl_core.validation import InputError, Message, check_finite, check_positive_int, reason

__all__ = [
    "DEFAULT_DRIFT",
    "DEFAULT_K",
    "DEFAULT_PLACEMENT",
    "MAX_LENGTH",
    "MAX_LOGIT_SPREAD",
    "MAX_TOKENS",
    "PLACEMENTS",
    "MarkovChain",
    "TokenSampler",
    "alias_table",
    "bregman_terms",
    "check_length",
    "check_pair",
    "drift_pair",
    "log_ratios",
    "next_token_kl",
    "parse_markov",
    "per_position_kl",
]

MAX_TOKENS = 256
"""Largest vocabulary K: the exact programmes cost :math:`O(T K^2)`."""

MAX_LENGTH = 4096
"""Longest sequence T accepted by the sequence tools."""

MAX_LOGIT_SPREAD = 300.0
"""Largest gap between two logits of one row.  Every probability then stays
above :math:`e^{-306}`, so ratios, :math:`r^2` and every per-token term are
finite doubles; only products over many tokens (``seq_k3``) can overflow."""

PLACEMENTS = {"every": "every transition", "first": "first token only"}
"""Where the drift family puts the drift: key → label."""

DEFAULT_K = 8
DEFAULT_DRIFT = 0.5
DEFAULT_PLACEMENT = "every"
# Zipf exponent of the reference chain: token j (or the j-th successor) has weight (1 + j)^-s.
_ZIPF = 1.0


def _num(x: float) -> str:
    """A float as the shortest text that reads back to the same value (-0 written as 0)."""
    x = float(x) + 0.0
    return repr(x).removesuffix(".0") if x.is_integer() else repr(x)


def log_ratios(policy: MarkovChain, ref: MarkovChain) -> tuple[np.ndarray, np.ndarray]:
    r"""Each token's :math:`\log r = \log\pi_{\mathrm{ref}} - \log\pi_\theta`: first token (K,), next token (K, K).

    Computed from the logits (:func:`kl_core.estimation.families.categorical.log_ratio_from_logits`), so a pair of
    chains whose logits differ by 1e-9 keeps every digit of its log-ratios, k3 values and KLs.

    Parameters
    ----------
    policy, ref : MarkovChain
        :math:`\pi_\theta` and :math:`\pi_{\mathrm{ref}}`, same K.

    Returns
    -------
    tuple of numpy.ndarray
        ``(first, transitions)``.
    """
    return (log_ratio_from_logits(policy.first, ref.first),
            log_ratio_from_logits(policy.transitions, ref.transitions))


@dataclass(frozen=True)
class MarkovChain:
    r"""A Markov chain over tokens 0 … K−1: first-token logits and a K×K logit table.

    .. math::

        \pi_1(j) = \frac{e^{a_j}}{\sum_k e^{a_k}}, \qquad
        P(i, j) = \frac{e^{B_{ij}}}{\sum_k e^{B_{ik}}}

    Parameters
    ----------
    first : sequence of float
        :math:`a`, the K logits of the first token.
    transitions : sequence of sequences of float
        :math:`B`, K rows of K logits; row ``i`` gives the next token after ``i``.

    Raises
    ------
    ValueError
        If a row has the wrong length, a value is not finite, K exceeds
        :data:`MAX_TOKENS`, or a row's logits spread over more than
        :data:`MAX_LOGIT_SPREAD`.

    Examples
    --------
    >>> c = MarkovChain((0.0, 0.0), ((0.0, 1.0), (1.0, 0.0)))
    >>> c.k, c.spec
    (2, 'markov(0,0; 0,1; 1,0)')
    """

    first: tuple[float, ...]
    transitions: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        first = tuple(
            check_finite(v, "first") for v in np.atleast_1d(np.asarray(self.first, dtype=object))
        )
        k = len(first)
        if k == 0:
            raise InputError("first must hold at least one logit")
        if k > MAX_TOKENS:
            raise InputError(
                "first has {k} logits: at most MAX_TOKENS = {most} tokens", k=k, most=MAX_TOKENS
            )
        rows = tuple(self.transitions)
        if len(rows) != k:
            raise InputError(
                "transitions has {rows} rows, expected K = {k} "
                "(one row of next-token logits per token)",
                rows=len(rows), k=k,
            )
        table = []
        for i, row in enumerate(rows):
            vals = tuple(
                check_finite(v, f"transitions[{i}] (after token {i})")
                for v in np.atleast_1d(np.asarray(row, dtype=object))
            )
            if len(vals) != k:
                raise InputError(
                    "transitions[{i}] (after token {i}) has {n} logits, expected K = {k}",
                    i=i, n=len(vals), k=k,
                )
            table.append(vals)
        for label, vals in (
            ("first", first),
            *((Message("transitions[{i}] (after token {i})", i=i), r) for i, r in enumerate(table)),
        ):
            spread = max(vals) - min(vals)
            if spread > MAX_LOGIT_SPREAD:
                raise InputError(
                    "{label}: logits spread over {spread:.6g}, more than {most:g} "
                    "(so that every ratio of probabilities, and its square, stays a finite double)",
                    label=label, spread=spread, most=MAX_LOGIT_SPREAD,
                )
        object.__setattr__(self, "first", first)
        object.__setattr__(self, "transitions", tuple(table))

    @classmethod
    def from_arrays(cls, first: ArrayLike, transitions: ArrayLike) -> MarkovChain:
        """Build a chain from a K-vector and a K×K array of logits.

        Parameters
        ----------
        first : array_like, shape (K,)
            First-token logits.
        transitions : array_like, shape (K, K)
            Next-token logits, one row per previous token.

        Returns
        -------
        MarkovChain
        """
        a = np.asarray(first, dtype=np.float64).ravel()
        b = np.asarray(transitions, dtype=np.float64)
        if b.ndim != 2:
            raise ValueError(f"transitions must be a K×K array, got shape {b.shape}")
        return cls(tuple(a.tolist()), tuple(tuple(r) for r in b.tolist()))

    @property
    def k(self) -> int:
        """The number of tokens K."""
        return len(self.first)

    @property
    def spec(self) -> str:
        """The string :func:`parse_markov` reads back into this chain."""
        rows = [self.first, *self.transitions]
        return "markov(" + "; ".join(",".join(_num(v) for v in r) for r in rows) + ")"

    @property
    def name(self) -> str:
        """A short readable name, e.g. ``Markov chain, K = 8``."""
        return f"Markov chain, K = {self.k}"

    @cached_property
    def log_first(self) -> np.ndarray:
        """Normalised log-probabilities of the first token, shape (K,)."""
        return log_softmax(self.first)

    @cached_property
    def log_transitions(self) -> np.ndarray:
        """Normalised next-token log-probabilities, shape (K, K); row = previous token."""
        return log_softmax(self.transitions)

    @property
    def first_probs(self) -> np.ndarray:
        """Probabilities of the first token."""
        return np.exp(self.log_first)

    @property
    def transition_probs(self) -> np.ndarray:
        """The transition matrix :math:`P`, rows summing to 1."""
        return np.exp(self.log_transitions)

    def marginals(self, length: int) -> np.ndarray:
        r"""The distribution of each token, :math:`d_t = d_{t-1} P`, shape (T, K).

        Parameters
        ----------
        length : int
            T, the number of tokens.

        Returns
        -------
        numpy.ndarray
            Row ``t - 1`` is the distribution of :math:`x_t`.
        """
        length = check_length(length)
        out = np.empty((length, self.k))
        out[0] = self.first_probs
        p = self.transition_probs
        for t in range(1, length):
            out[t] = out[t - 1] @ p
        return out

    def log_prob(self, sequences: ArrayLike) -> np.ndarray:
        r"""Log-probability :math:`\log \pi(x)` of each sequence (one per row).

        Parameters
        ----------
        sequences : array_like of int, shape (n, T)
            Token ids in 0 … K−1.

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        x = _token_array(sequences, self.k)
        out = self.log_first[x[:, 0]].copy()
        if x.shape[1] > 1:
            out += self.log_transitions[x[:, :-1], x[:, 1:]].sum(axis=1)
        return out

    def sample(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        """Draw ``n`` sequences of ``length`` tokens.

        Parameters
        ----------
        rng : numpy.random.Generator
            The random generator (one uniform draw per token, position by position).
        n : int
            Number of sequences.
        length : int
            T, tokens per sequence.

        Returns
        -------
        numpy.ndarray of int, shape (n, T)
        """
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        n = check_positive_int(n, "n")
        length = check_length(length)
        sampler = TokenSampler(self)
        out = np.empty((n, length), dtype=np.int64)
        out[:, 0] = sampler.first(rng.random(n))
        for t in range(1, length):
            out[:, t] = sampler.next(out[:, t - 1], rng.random(n))
        return out


def alias_table(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Walker's alias table of a distribution over K outcomes (Vose's construction).

    Outcome ``j`` is drawn as: pick a column :math:`c` uniformly in 0 … K−1,
    keep it with probability ``accept[c]``, else take ``alias[c]``; so

    .. math:: \Pr(j) = \frac1K \Bigl(\text{accept}_j + \sum_{c:\,\text{alias}_c = j} (1 - \text{accept}_c)\Bigr).

    Parameters
    ----------
    probs : numpy.ndarray, shape (K,)
        Probabilities, summing to 1.

    Returns
    -------
    tuple of numpy.ndarray
        ``(accept, alias)``: float probabilities and int outcomes, shape (K,).

    References
    ----------
    M. D. Vose, "A linear algorithm for generating random numbers with a given
    distribution", IEEE Trans. Software Eng. 17 (1991) 972–975.
    """
    k = probs.size
    scaled = (probs / probs.sum() * k).tolist()
    accept = [1.0] * k
    alias = list(range(k))
    small = [i for i, v in enumerate(scaled) if v < 1.0]
    large = [i for i, v in enumerate(scaled) if v >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        accept[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    # Leftovers are 1 up to rounding: they keep their own column.
    return np.asarray(accept), np.asarray(alias, dtype=np.int64)


class TokenSampler:
    """Draws of the next token for many sequences at once, by alias tables.

    Every row of the transition matrix (and the first-token distribution) has
    an :func:`alias_table`; one uniform ``u`` per sequence gives the column
    (``floor(u K)``) and, from its remaining bits, the accept test.  Each draw
    is O(1) whatever K is: a few gathers per position for all sequences.
    """

    def __init__(self, chain: MarkovChain) -> None:
        k = chain.k
        rows = [alias_table(p) for p in chain.transition_probs]
        self._accept = np.concatenate([a for a, _ in rows])
        self._alias = np.concatenate([b for _, b in rows])
        self._accept_first, self._alias_first = alias_table(chain.first_probs)
        self._k = k

    def _split(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = u * self._k
        col = np.minimum(v.astype(np.int64), self._k - 1)
        return col, v - col

    def first(self, u: np.ndarray) -> np.ndarray:
        """First tokens for uniforms ``u`` in [0, 1)."""
        col, frac = self._split(u)
        return np.where(frac < self._accept_first[col], col, self._alias_first[col])

    def next(self, prev: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Next tokens after tokens ``prev`` for uniforms ``u`` in [0, 1)."""
        col, frac = self._split(u)
        idx = prev * self._k + col
        return np.where(frac < self._accept[idx], col, self._alias[idx])


def _token_array(x: ArrayLike, k: int) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"sequences must be a 2-D array (n, T) with T >= 1, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"sequences must hold integer token ids, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= k):
        raise ValueError(f"sequences must hold token ids in 0 … {k - 1}")
    return arr.astype(np.int64, copy=False)


def check_length(length: int) -> int:
    r"""Validate a sequence length: a whole number :math:`1 \le T \le T_{\max}` (:data:`MAX_LENGTH`).

    Parameters
    ----------
    length : int
        T.

    Returns
    -------
    int
        T as an int; ``ValueError`` naming ``length`` otherwise.
    """
    t = check_positive_int(length, "length")
    if t > MAX_LENGTH:
        raise ValueError(f"length must be at most MAX_LENGTH = {MAX_LENGTH:,}, got {t:,}")
    return t


def check_pair(
    policy: MarkovChain | str, ref: MarkovChain | str
) -> tuple[MarkovChain, MarkovChain]:
    r"""Read ``policy`` and ``ref`` (chains or ``markov(...)`` specs); check :math:`K_\theta = K_{\mathrm{ref}}`.

    Parameters
    ----------
    policy, ref : MarkovChain or str
        The sampling policy and the reference, or their specs.

    Returns
    -------
    tuple of MarkovChain
        ``(policy, ref)``; ``ValueError`` naming the parameter otherwise.
    """
    chains = []
    for name, c in (("policy", policy), ("ref", ref)):
        if isinstance(c, str):
            try:
                c = parse_markov(c)
            except ValueError as exc:
                raise InputError("{name}: {reason}", name=name, reason=reason(exc)) from None
        elif not isinstance(c, MarkovChain):
            raise ValueError(
                f"{name} must be a MarkovChain or a markov(...) spec, got {type(c).__name__}"
            )
        chains.append(c)
    if chains[0].k != chains[1].k:
        raise InputError(
            "policy has K = {kp} tokens but ref has K = {kr}", kp=chains[0].k, kr=chains[1].k
        )
    return chains[0], chains[1]


# ---------------------------------------------------------------- the spec


def parse_markov(spec: str) -> MarkovChain:
    r"""Read ``markov(a1,...,aK; b11,...,b1K; ...; bK1,...,bKK)`` into a chain.

    Row 1 holds the first-token logits :math:`a`, row :math:`i + 1` the
    next-token logits :math:`B_{i\cdot}` after token :math:`i` (see :class:`MarkovChain`).

    Parameters
    ----------
    spec : str
        First-token logits, then K rows of next-token logits, rows separated by
        ``;`` and numbers by ``,``.

    Returns
    -------
    MarkovChain
        ``parse_markov(c.spec) == c`` for every chain.

    Raises
    ------
    ValueError
        One line naming the problem: not ``markov(...)``, the wrong number of
        rows or of numbers in a row, a value that is not a finite number, K
        above :data:`MAX_TOKENS`, or a row whose logits spread too far.

    Examples
    --------
    >>> parse_markov("markov(0,0; 0,1; 1,0)").k
    2
    """
    if not isinstance(spec, str):
        raise InputError("spec must be a string, got {type}", type=type(spec).__name__)
    label = spec if len(spec) <= 60 else spec[:57] + "..."
    m = re.fullmatch(r"\s*markov\s*\((.*)\)\s*", spec, flags=re.IGNORECASE | re.DOTALL)
    if not m:
        if re.match(r"\s*markov\s*\(", spec, flags=re.IGNORECASE) and spec.count("(") > spec.count(")"):
            raise InputError("spec {spec!r}: missing closing bracket ')'", spec=label)
        raise InputError(
            "spec {spec!r} is not of the form markov(a1,...,aK; b11,...,b1K; ...; bK1,...,bKK)",
            spec=label,
        )
    rows_text = [r.strip() for r in m.group(1).split(";")]
    rows: list[list[float]] = []
    for i, text in enumerate(rows_text):
        where = (
            Message("first row") if i == 0
            else Message("row {row} (after token {token})", row=i + 1, token=i - 1)
        )
        if not text:
            raise InputError("spec {spec!r}: the {where} is empty", spec=label, where=where)
        vals = []
        for item in text.split(","):
            s = item.strip()
            try:
                v = float(s)
            except ValueError:
                raise InputError(
                    "spec {spec!r}: {where}: {s!r} is not a number", spec=label, where=where, s=s
                ) from None
            if not math.isfinite(v):
                raise InputError(
                    "spec {spec!r}: {where}: {s!r} is not a finite number", spec=label, where=where, s=s
                )
            vals.append(v)
        rows.append(vals)
    k = len(rows[0])
    if len(rows) != k + 1:
        raise InputError(
            "spec {spec!r}: the first row has K = {k} logits, so K + 1 = {k1} rows are "
            "needed (first-token logits, then one row per token), got {rows}",
            spec=label, k=k, k1=k + 1, rows=len(rows),
        )
    for i, r in enumerate(rows[1:]):
        if len(r) != k:
            raise InputError(
                "spec {spec!r}: row {row} (after token {token}) has {n} numbers, expected K = {k}",
                spec=label, row=i + 2, token=i, n=len(r), k=k,
            )
    try:
        return MarkovChain(tuple(rows[0]), tuple(tuple(r) for r in rows[1:]))
    except ValueError as exc:
        raise InputError("spec {spec!r}: {reason}", spec=label, reason=reason(exc)) from None


# ---------------------------------------------------------------- drift family


def drift_pair(
    k: int = DEFAULT_K, drift: float = DEFAULT_DRIFT, placement: str = DEFAULT_PLACEMENT
) -> tuple[MarkovChain, MarkovChain]:
    r"""A policy and a reference chain, the policy tilted by a per-token reward.

    The reference is Zipf-like: :math:`a_j = -\log(1+j)` for the first token and
    :math:`B_{ij} = -\log(1 + (j - i) \bmod K)` after token ``i`` (the next
    token tends to follow the previous one).  The policy adds
    :math:`\delta\, v_j` with :math:`v_j = 1 - 2j/(K-1)` (a reward from +1 for
    token 0 down to −1 for token K−1):

    .. math:: \pi_\theta(j \mid i) \propto \pi_{\mathrm{ref}}(j \mid i)\, e^{\delta v_j},

    in every transition (``placement="every"``: the KL grows with T) or in the
    first token only (``"first"``: the KL stays that of the first token).

    Parameters
    ----------
    k : int, default :data:`DEFAULT_K`
        K, the number of tokens, 2 … :data:`MAX_TOKENS`.
    drift : float, default :data:`DEFAULT_DRIFT`
        :math:`\delta`; 0 gives identical chains.  :math:`|\delta| \le 100`.
    placement : {"every", "first"}, default :data:`DEFAULT_PLACEMENT`
        Where the tilt acts (:data:`PLACEMENTS`).

    Returns
    -------
    tuple of MarkovChain
        ``(policy, ref)``.

    References
    ----------
    For one step, the tilt :math:`\pi_{\mathrm{ref}} e^{\beta^{-1} r}` is the optimum of the
    KL-regularised RLHF objective (e.g. Rafailov et al., arXiv:2305.18290); here
    :math:`r = \beta\delta v`.  With ``placement="first"`` it is also the sequence
    optimum; with ``"every"`` and :math:`T \ge 2` it is only the token-by-token
    optimum, because the sequence optimum also weighs the reward still to come.

    Examples
    --------
    >>> policy, ref = drift_pair(3, 0.0)
    >>> policy == ref
    True
    """
    k = check_positive_int(k, "k")
    if not 2 <= k <= MAX_TOKENS:
        raise ValueError(f"k must be in 2 … {MAX_TOKENS}, got {k}")
    d = check_finite(drift, "drift")
    if abs(d) > 100:
        raise ValueError(f"drift must be within ±100, got {drift!r}")
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {list(PLACEMENTS)}, got {placement!r}")
    j = np.arange(k)
    first_ref = -_ZIPF * np.log1p(j)
    trans_ref = -_ZIPF * np.log1p((j[None, :] - j[:, None]) % k)
    reward = 1.0 - 2.0 * j / (k - 1)
    first_pol = first_ref + d * reward
    trans_pol = trans_ref + d * reward[None, :] if placement == "every" else trans_ref
    return (
        MarkovChain.from_arrays(first_pol, trans_pol),
        MarkovChain.from_arrays(first_ref, trans_ref),
    )


# ---------------------------------------------------------------- exact KL


def bregman_terms(log_q: np.ndarray, log_p: np.ndarray, log_ratio: np.ndarray | None = None) -> np.ndarray:
    r"""Elementwise :math:`q\,k_3(\log p - \log q) = q\,[(r - 1) - \log r]`, each ≥ 0.

    Summed over a row they give :math:`\mathrm{KL}[q\|p]` (the terms
    :math:`q(r-1)` sum to 0), without the cancellation of
    :math:`\sum q \log(q/p)` when :math:`p \approx q`.  Where
    :math:`|\log r| \ge 1` the same value is computed as :math:`p - q - q\log r`,
    which never overflows.

    Parameters
    ----------
    log_q, log_p : numpy.ndarray
        Normalised log-probabilities of the sampler ``q`` and the target ``p``,
        same shape.
    log_ratio : numpy.ndarray, optional
        :math:`\log p - \log q` where it is known more precisely than the difference of the two
        (:func:`log_ratios`, from the logits).

    Returns
    -------
    numpy.ndarray
        The terms, same shape, all ≥ 0.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html (k3).
    """
    lr = log_p - log_q if log_ratio is None else log_ratio
    q = np.exp(log_q)
    near = np.abs(lr) < 1.0
    far = np.exp(log_p) - q - q * lr
    out = np.where(near, q * k3(np.where(near, lr, 0.0)), far)
    return np.maximum(out, 0.0)


def next_token_kl(policy: MarkovChain | str, ref: MarkovChain | str) -> tuple[float, np.ndarray]:
    r"""The exact KL of each next-token distribution: first token and after each token.

    .. math::

        \kappa_0 = \mathrm{KL}[\pi_{\theta,1} \| \pi_{\mathrm{ref},1}], \qquad
        \kappa(i) = \mathrm{KL}[P_\theta(i, \cdot) \| P_{\mathrm{ref}}(i, \cdot)]

    These are the terms of the Rao–Blackwellized estimator ``rb``.

    Parameters
    ----------
    policy, ref : MarkovChain or str
        :math:`\pi_\theta` and :math:`\pi_{\mathrm{ref}}` (or their specs), same K.

    Returns
    -------
    tuple
        ``(kappa0, kappa)`` with ``kappa`` of shape (K,).

    References
    ----------
    A. Amini, T. Vieira, R. Cotterell (2025), arXiv:2504.10637.
    """
    policy, ref = check_pair(policy, ref)
    first, later = log_ratios(policy, ref)
    k0 = float(bregman_terms(policy.log_first, ref.log_first, first).sum())
    kap = bregman_terms(policy.log_transitions, ref.log_transitions, later).sum(axis=1)
    return k0, kap


def per_position_kl(policy: MarkovChain | str, ref: MarkovChain | str, length: int) -> np.ndarray:
    r"""The KL contributed by each position: :math:`\mathbb{E}_{x_{t-1} \sim \pi_\theta}[\kappa(x_{t-1})]`.

    By the chain rule :math:`\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}] = \sum_t c_t` with

    .. math:: c_1 = \kappa_0, \qquad c_t = \sum_i d_{t-1}(i)\, \kappa(i), \quad d_t = d_{t-1} P_\theta,

    :math:`O(T K^2)`.  Swap the arguments for :math:`\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`.

    Parameters
    ----------
    policy, ref : MarkovChain or str
        The chain sequences are drawn from, and the one it is compared with.
    length : int
        T.

    Returns
    -------
    numpy.ndarray, shape (T,)

    References
    ----------
    T. M. Cover and J. A. Thomas, *Elements of Information Theory* (2006), thm. 2.5.3 (chain rule).
    """
    length = check_length(length)
    policy, ref = check_pair(policy, ref)
    k0, kap = next_token_kl(policy, ref)
    out = np.empty(length)
    out[0] = k0
    if length > 1:
        out[1:] = policy.marginals(length - 1) @ kap
    return out
