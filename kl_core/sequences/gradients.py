r"""The gradient of a sequence: which per-token KL losses give :math:`\nabla\mathrm{KL}` over whole sequences.

The policy :math:`\pi_\theta` is a :class:`~kl_core.sequences.markov.MarkovChain` whose
parameters :math:`\theta` are all its logits: the :math:`K` first-token logits
:math:`a` and the :math:`K \times K` next-token logits :math:`B`.  Sequences
:math:`x = (x_1, \dots, x_T) \sim \pi_\theta` are compared with
:math:`\pi_{\mathrm{ref}}`; per token, :math:`\log r_t = \log\pi_{\mathrm{ref}}(x_t\mid x_{t-1})
- \log\pi_\theta(x_t\mid x_{t-1})` and :math:`s_t = \nabla_\theta\log\pi_\theta(x_t\mid x_{t-1})`
(the score: :math:`e_{x_t} - \pi_\theta(\cdot\mid x_{t-1})` in the logits of
the row that drew :math:`x_t`, zero elsewhere).

The true gradient (score function, then causality: :math:`\mathbb{E}[s_t\,k_{1,u}] = 0`
for :math:`u < t`) is

.. math::

    \nabla_\theta\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]
    = \mathbb{E}\Big[\sum_t s_t \sum_{u \ge t} k_{1,u}\Big]
    = \underbrace{\mathbb{E}\Big[\sum_t s_t\,k_{1,t}\Big]}_{\text{local}}
    + \underbrace{\mathbb{E}\Big[\sum_t s_t\,W_t(x_t)\Big]}_{\text{later prefixes}},

with :math:`W_t(j) = \sum_{u > t}\mathbb{E}[k_{1,u} \mid x_t = j]` the KL
still to come after token :math:`j` at position :math:`t`.  The *local* part
is each position's own next-token KL differentiated with the prefix held fixed;
the *later-prefix* part is how the choice of :math:`x_t` changes the prefixes
every later token is drawn from.  Differentiating a per-token loss with the
sampled tokens held fixed (autograd) gives, in expectation (:data:`OPTIONS`):

=====================  ======================================================  ================================================
option                 per-sample gradient                                     expected gradient
=====================  ======================================================  ================================================
``sum_k1_loss``        :math:`\nabla\sum_t k_{1,t} = \sum_t s_t`               0
``sum_k2_loss``        :math:`\nabla\sum_t \tfrac12\log^2 r_t = \sum_t k_{1,t}\,s_t`  local part only
``sum_k3_loss``        :math:`\nabla\sum_t k_{3,t} = \sum_t (1 - r_t)\,s_t`    :math:`\sum_t \mathbb{E}_{x_{<t}\sim\pi_\theta}\nabla\mathrm{KL}[\pi_{\mathrm{ref}}(\cdot\mid x_{<t})\|\pi_\theta(\cdot\mid x_{<t})]`
``rb_loss``            :math:`\sum_t \nabla\mathrm{KL}[\pi_\theta(\cdot\mid x_{<t})\|\pi_{\mathrm{ref}}(\cdot\mid x_{<t})]`  local part only
``k1_reward_to_go``    :math:`\sum_t s_t\,\mathrm{sg}\big(\sum_{u\ge t} k_{1,u}\big)`  the true gradient
=====================  ======================================================  ================================================

So ``sum_k2_loss`` (and the exact per-token KL as a loss, ``rb_loss``) miss
the later-prefix terms.  They vanish, and these options give the true
gradient, when :math:`T = 1` or when every next-token KL
:math:`\kappa(i) = \mathrm{KL}[\pi_\theta(\cdot\mid i)\|\pi_{\mathrm{ref}}(\cdot\mid i)]`
is the same (then :math:`W_t` does not depend on :math:`x_t`; e.g. drift in
the first token only, :math:`\kappa \equiv 0`); for :math:`T = 2` that
condition is also necessary.  ``sum_k3_loss`` gives the per-row gradient of
the *forward* KL, weighted by :math:`\pi_\theta`'s prefix frequencies, while

.. math::

    \nabla_\theta\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]
    = \sum_t \mathbb{E}_{x_{<t}\sim\pi_{\mathrm{ref}}}\big[\pi_\theta(\cdot\mid x_{<t}) - \pi_{\mathrm{ref}}(\cdot\mid x_{<t})\big]

weights them by :math:`\pi_{\mathrm{ref}}`'s: it is the gradient of neither
direction unless the two chains visit prefixes equally often (:math:`T = 1`, or
e.g. uniform first tokens and doubly stochastic transitions).

Every expectation is exact, by dynamic programming in :math:`O(T K^2)`: the
marginals :math:`d_t = d_{t-1}P_\theta`, the occupancy :math:`n(i) =
\sum_{t<T} d_t(i)` of each row, and :math:`W_T = 0`, :math:`W_t = \kappa +
P_\theta W_{t+1}`.  The per-row pieces are :mod:`kl_core.gradients.expected`' exact
expected gradients of a categorical policy (one source of truth).

Source: Y. Tang and R. Munos, "On a few pitfalls in KL divergence gradient
estimation for RL" (2025), arXiv:2506.09477 (per-token losses give a partial
gradient; the reward-to-go score function gives the full one); the score
function is R. J. Williams, "Simple statistical gradient-following algorithms
for connectionist reinforcement learning", Machine Learning 8 (1992) 229–256.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kl_core._docfill import docfill
from kl_core.gradients import expected as gradients
from kl_core.gradients._docstrings import SECTIONS
from kl_core.sequences.markov import MarkovChain, check_length, check_pair, next_token_kl

__all__ = [
    "OPTIONS", "SequenceGradient", "SequenceGradientRow", "SequenceGradientTable",
    "expected_sequence_gradient", "sequence_gradient_table", "sequence_kl_gradients",
]

#: Docstring sections several functions here share (filled in by :func:`kl_core._docfill.docfill`).
_DOC_SECTIONS = {
    **SECTIONS,
    "chains_length": r"""policy : MarkovChain or str
    :math:`\pi_\theta`, K ≥ 2.
ref : MarkovChain or str
    :math:`\pi_{\mathrm{ref}}`, same K.
length : int
    T.""",
}

OPTIONS: dict[str, str] = {
    "sum_k1_loss": "Σ k1 as a loss",
    "sum_k2_loss": "Σ k2 as a loss",
    "sum_k3_loss": "Σ k3 as a loss",
    "rb_loss": "Σ exact next-token KL as a loss",
    "k1_reward_to_go": "k1 as a reward, reward-to-go",
}
"""The per-sequence gradient options, key → display name (see the module docstring)."""

# What each option's per-row piece is, as an option of kl_core.gradients.expected (the
# categorical gradient of one token's loss with its prefix held fixed).
_ROW_OPTION = {
    "sum_k1_loss": "k1",
    "sum_k2_loss": "k2",
    "sum_k3_loss": "k3",
    "k1_reward_to_go": "k1_score",
}
# Options whose expectation includes the later-prefix term.
_WITH_LATER = frozenset({"k1_reward_to_go"})


@dataclass(frozen=True, eq=False)
class SequenceGradient:
    r"""A gradient in all of :math:`\pi_\theta`'s logits: :math:`K + K^2` numbers.

    Attributes
    ----------
    first : numpy.ndarray, shape (K,)
        The part in the first-token logits :math:`a`.
    transitions : numpy.ndarray, shape (K, K)
        The part in the next-token logits :math:`B`; row ``i`` is the row
        used after token ``i``.
    """

    first: np.ndarray
    transitions: np.ndarray

    @property
    def flat(self) -> np.ndarray:
        """All :math:`K + K^2` components: ``first``, then ``transitions`` row by row."""
        return np.concatenate([self.first, self.transitions.ravel()])

    @property
    def norm(self) -> float:
        """The Euclidean norm of :attr:`flat`."""
        return float(np.linalg.norm(self.flat))

    def __add__(self, other: SequenceGradient) -> SequenceGradient:
        return SequenceGradient(self.first + other.first, self.transitions + other.transitions)

    def __sub__(self, other: SequenceGradient) -> SequenceGradient:
        return SequenceGradient(self.first - other.first, self.transitions - other.transitions)


def _chains(
    policy: MarkovChain | str, ref: MarkovChain | str, length: int
) -> tuple[MarkovChain, MarkovChain, int]:
    policy, ref = check_pair(policy, ref)
    if policy.k < 2:
        raise ValueError(f"policy must have at least K = 2 tokens for a gradient, got K = {policy.k}")
    return policy, ref, check_length(length)


def _occupancy(chain: MarkovChain, length: int) -> np.ndarray:
    r"""How often each row is used: :math:`n(i) = \sum_{t=1}^{T-1} d_t(i)`, shape (K,)."""
    if length == 1:
        return np.zeros(chain.k)
    return chain.marginals(length - 1).sum(axis=0)


def _log_probs(chain: MarkovChain) -> np.ndarray:
    """The first-token row, then the K next-token rows: normalised log-probabilities, (K + 1, K)."""
    return np.vstack([chain.log_first, chain.log_transitions])


def _weights(chain: MarkovChain, length: int) -> np.ndarray:
    """How often each row draws a token: 1 for the first-token row, then n(i) after token i."""
    return np.concatenate([[1.0], _occupancy(chain, length)])


def _per_row(option: str, lp: np.ndarray, lr: np.ndarray, weights: np.ndarray) -> SequenceGradient:
    r"""Row :math:`i` gets :math:`w_i\,\mathbb{E}_{x\sim\pi_i}[c(x)\,(e_x - \pi_i)]`, on-policy.

    :math:`c(x)` is :mod:`kl_core.gradients.expected`' per-token coefficient of
    ``option`` (a key of :data:`kl_core.gradients.expected.BASIC_OPTIONS`), so each row
    is that module's categorical expected gradient, scaled by how often the row is used.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        c = gradients._basic_coef(option, lr - lp, 1.0)
    p = np.exp(lp)
    v = p * c
    rows = weights[:, None] * (v - p * v.sum(axis=1, keepdims=True))
    return SequenceGradient(rows[0].copy(), rows[1:].copy())


def _later(policy: MarkovChain, ref: MarkovChain, length: int) -> SequenceGradient:
    p1, P = policy.first_probs, policy.transition_probs
    k = policy.k
    if length == 1:
        return SequenceGradient(np.zeros(k), np.zeros((k, k)))
    _, kappa = next_token_kl(policy, ref)
    # W[t-1] = W_t for t = 1 … T: the KL still to come after x_t (W_T = 0).
    W = np.zeros((length, k))
    for t in range(length - 2, -1, -1):
        W[t] = kappa + P @ W[t + 1]
    first = p1 * (W[0] - p1 @ W[0])
    d = policy.marginals(length - 1)  # d_1 … d_{T-1}: the row that draws x_2 … x_T
    U = d.T @ W[1:]  # U[i, j] = Σ_{t=2}^{T} d_{t-1}(i) W_t(j)
    rows = P * (U - (P * U).sum(axis=1, keepdims=True))
    return SequenceGradient(first, rows)


@docfill(**_DOC_SECTIONS)
def sequence_kl_gradients(
    policy: MarkovChain | str, ref: MarkovChain | str, length: int
) -> tuple[SequenceGradient, SequenceGradient]:
    r"""The true gradients, in all of :math:`\pi_\theta`'s logits, of both sequence KLs.

    .. math::

        \nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]
        &= \mathbb{E}_{\pi_\theta}\Big[\sum_t s_t \sum_{u\ge t} k_{1,u}\Big]
         = \text{local} + \text{later prefixes}, \\
        \nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]
        &= (\pi_{\theta,1} - \pi_{\mathrm{ref},1}) \oplus
           \Big(n_{\mathrm{ref}}(i)\,\big[P_\theta(i,\cdot) - P_{\mathrm{ref}}(i,\cdot)\big]\Big)_i,

    with :math:`n_{\mathrm{ref}}(i) = \sum_{t<T}\Pr_{\pi_{\mathrm{ref}}}(x_t = i)`.

    Parameters
    ----------
    %(chains_length)s

    Returns
    -------
    tuple of SequenceGradient
        ``(reverse, forward)``: the gradients of :math:`\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]`
        and of :math:`\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]` over sequences of length T.

    References
    ----------
    Y. Tang and R. Munos (2025), arXiv:2506.09477; R. J. Williams (1992),
    Machine Learning 8, 229–256 (the score function).

    Examples
    --------
    >>> from kl_core.sequences.markov import drift_pair
    >>> rev, fwd = sequence_kl_gradients(*drift_pair(3, 0.0), 4)
    >>> rev.norm, fwd.norm
    (0.0, 0.0)
    """
    pieces = _Pieces(*_chains(policy, ref, length))
    return pieces.reverse, pieces.forward


class _Pieces:
    """The parts every option is made of, computed once for one (policy, ref, T)."""

    def __init__(self, policy: MarkovChain, ref: MarkovChain, length: int) -> None:
        self.lp, self.lr = _log_probs(policy), _log_probs(ref)
        self.weights = _weights(policy, length)
        # ∇ of each position's next-token KL with its prefix held fixed: E[sg(k1)·score]
        # per row (kl_core.gradients.expected: k1_score's expectation is ∇KL[π_θ‖π_ref] of the row).
        self.local = self.row_option("k1_score")
        self.later = _later(policy, ref, length)
        self.reverse = self.local + self.later
        # ∇KL[π_ref‖π_θ] of a row is π_θ − π_ref; rows weighted by π_ref's own occupancy.
        rows = _weights(ref, length)[:, None] * (np.exp(self.lp) - np.exp(self.lr))
        self.forward = SequenceGradient(rows[0].copy(), rows[1:].copy())

    def row_option(self, option: str) -> SequenceGradient:
        return _per_row(option, self.lp, self.lr, self.weights)

    def option(self, key: str) -> SequenceGradient:
        if key == "rb_loss":  # the exact next-token KL differentiated with its prefix fixed
            return self.local
        if key in _WITH_LATER:
            return self.local + self.later
        return self.row_option(_ROW_OPTION[key])


@docfill(**_DOC_SECTIONS)
def expected_sequence_gradient(
    option: str, policy: MarkovChain | str, ref: MarkovChain | str, length: int
) -> SequenceGradient:
    r"""The exact expected gradient of one per-sequence option, sequences drawn on-policy.

    .. math::

        \mathbb{E}_{x\sim\pi_\theta}\big[g(x)\big], \qquad
        g(x) = \sum_{t=1}^T c_t\,s_t \ \text{(see the module's table)}

    Parameters
    ----------
    option : str
        A key of :data:`OPTIONS`.
    %(chains_length)s

    Returns
    -------
    SequenceGradient

    %(tang_munos_references)s

    Examples
    --------
    >>> from kl_core.sequences.markov import drift_pair
    >>> g = expected_sequence_gradient("sum_k1_loss", *drift_pair(3, 0.5), 4)
    >>> bool(g.norm < 1e-15)
    True
    """
    if option not in OPTIONS:
        raise ValueError(f"option must be one of {list(OPTIONS)}, got {option!r}")
    return _Pieces(*_chains(policy, ref, length)).option(option)


@dataclass(frozen=True, eq=False)
class SequenceGradientRow:
    r"""One option's exact expected gradient beside the true ones.

    Attributes
    ----------
    key : str
        A key of :data:`OPTIONS`.
    name : str
        Its display name.
    grad : SequenceGradient
        The expected gradient.
    cos_reverse, cos_forward : float or None
        Cosine to :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` and to
        :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`; None when either is zero.
    relative_error : float
        :math:`\|g - \nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]\| / \|\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]\|`
        (``nan`` when the true gradient is zero).
    target : str
        What ``grad`` is (:func:`kl_core.gradients.expected.classify`): ``"reverse_kl"``,
        ``"forward_kl"``, ``"zero"`` or ``"mixed"``.
    later_terms : bool
        True if the option's expectation includes the later-prefix terms.
    """

    key: str
    name: str
    grad: SequenceGradient
    cos_reverse: float | None
    cos_forward: float | None
    relative_error: float
    target: str
    later_terms: bool


@dataclass(frozen=True, eq=False)
class SequenceGradientTable:
    r"""Every option at one setting (:func:`sequence_gradient_table`).

    Attributes
    ----------
    length : int
        T.
    k : int
        K.
    reverse, forward : SequenceGradient
        :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` and
        :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`.
    local, later : SequenceGradient
        The two parts of ``reverse``: each position's own KL with the prefix
        held fixed, and the later-prefix terms (``local + later = reverse``).
    rows : tuple of SequenceGradientRow
        One per key of :data:`OPTIONS`, in its order.
    """

    length: int
    k: int
    reverse: SequenceGradient
    forward: SequenceGradient
    local: SequenceGradient
    later: SequenceGradient
    rows: tuple[SequenceGradientRow, ...]

    @property
    def row(self) -> dict[str, SequenceGradientRow]:
        """The rows by key."""
        return {r.key: r for r in self.rows}

    @property
    def later_share(self) -> float:
        r""":math:`\|\text{later}\| / \|\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]\|` (``nan`` when it is zero)."""
        n = self.reverse.norm
        return self.later.norm / n if n > 0 else math.nan


def _cos(a: np.ndarray, b: np.ndarray) -> float | None:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0 or not (math.isfinite(na) and math.isfinite(nb)):
        return None
    return float(np.clip(a @ b / (na * nb), -1.0, 1.0))


@docfill(**_DOC_SECTIONS)
def sequence_gradient_table(
    policy: MarkovChain | str, ref: MarkovChain | str, length: int
) -> SequenceGradientTable:
    r"""All options of :data:`OPTIONS` beside the true gradients, with cosines.

    .. math::

        \cos(g, \nabla\mathrm{KL}) = \frac{g\cdot\nabla\mathrm{KL}}{\|g\|\,\|\nabla\mathrm{KL}\|},
        \qquad
        \nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}] = \text{local} + \text{later}

    over all :math:`K + K^2` logits.

    Parameters
    ----------
    %(chains_length)s

    Returns
    -------
    SequenceGradientTable

    %(tang_munos_references)s

    Examples
    --------
    >>> from kl_core.sequences.markov import drift_pair
    >>> tab = sequence_gradient_table(*drift_pair(4, 0.5), 8)
    >>> tab.row["k1_reward_to_go"].target, tab.row["sum_k2_loss"].target
    ('reverse_kl', 'mixed')
    """
    policy, ref, length = _chains(policy, ref, length)
    pieces = _Pieces(policy, ref, length)
    rv, fw = pieces.reverse.flat, pieces.forward.flat
    nr = float(np.linalg.norm(rv))
    scale = max(nr, float(np.linalg.norm(fw))) or 1.0
    rows = []
    for key, name in OPTIONS.items():
        g = pieces.option(key)
        flat = g.flat
        target = gradients.classify(flat, rv, fw, scale=scale)
        rel = float(np.linalg.norm(flat - rv)) / nr if nr > 0 else math.nan
        rows.append(
            SequenceGradientRow(
                key=key,
                name=name,
                grad=g,
                cos_reverse=None if target == "zero" else _cos(flat, rv),
                cos_forward=None if target == "zero" else _cos(flat, fw),
                relative_error=rel,
                target=target,
                later_terms=key in _WITH_LATER,
            )
        )
    return SequenceGradientTable(
        length=length,
        k=policy.k,
        reverse=pieces.reverse,
        forward=pieces.forward,
        local=pieces.local,
        later=pieces.later,
        rows=tuple(rows),
    )
