r"""Sum against mean: how RL libraries reduce a per-token KL loss, and what that does to β.

A KL penalty enters the loss per token, :math:`\beta\,k_{i,t}` for token
:math:`t` of sequence :math:`i` (of :math:`L_i` counted tokens, :math:`B`
sequences in the batch), and the library then reduces the
:math:`B \times L` matrix to one number.  Every reduction in use is, for each
sequence, a weight :math:`c_i` on that sequence's token sum:

.. math::

    \text{loss} = \frac1B \sum_{i=1}^B c_i \sum_{t=1}^{L_i} \beta\,k_{i,t},
    \qquad
    \mathbb{E}[\text{loss}] = \beta\,c\;\mathrm{KL}_{\text{sequence}}
    \ \text{ when every } L_i = T,

because :math:`\mathbb{E}\sum_t k_{3,t}` is the KL between whole sequences.
So :math:`\beta` on a per-token *mean* is :math:`\beta/T` on the sequence KL:
the same β regularises long sequences less, per sequence.

=============================  ==========================================================  ==========================
mode (verl ``loss_agg_mode``)  reduction                                                   :math:`c_i`
=============================  ==========================================================  ==========================
``token-mean``                 :math:`\sum_{i,t} \ell_{i,t} \,/\, \sum_j L_j`              :math:`B / \sum_j L_j`
``seq-mean-token-mean``        :math:`\frac1B \sum_i \frac1{L_i}\sum_t \ell_{i,t}`         :math:`1 / L_i`
``seq-mean-token-sum``         :math:`\frac1B \sum_i \sum_t \ell_{i,t}`                    :math:`1`
``seq-mean-token-sum-norm``    :math:`\frac1B \sum_i \sum_t \ell_{i,t} \,/\, L_{\max}`     :math:`1 / L_{\max}`
=============================  ==========================================================  ==========================

(:math:`L_{\max}` is a constant: verl's ``loss_scale_factor``, by default the
padded response length; TRL's ``max_completion_length``.)  With unequal
lengths, ``seq-mean-token-mean`` (GRPO's :math:`1/|o_i|`) gives each token of
a short sequence more weight than a token of a long one; ``token-mean``
weighs every token alike.  (verl's ``token-sum``, :math:`\sum_{i,t}\ell_{i,t}`,
scales with the batch size and is left out.)

Sources, as read: verl 0.9.1, ``verl/trainer/ppo/core_algos.py::agg_loss``,
applied to the KL loss in ``verl/workers/utils/losses.py`` with the actor's
``loss_agg_mode`` (default ``token-mean``); TRL 1.16.0,
``trl/trainer/grpo_trainer.py``, which adds :math:`\beta` times the per-token
KL to the per-token loss and reduces it by ``loss_type``; Z. Shao et al.,
"DeepSeekMath" (2024), arXiv:2402.03300, eq. (3) (GRPO's :math:`\frac1G\sum_i \frac1{|o_i|}\sum_t`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core.validation import as_float_array, by_key, check_finite, check_positive_int

__all__ = [
    "LOSS_AGGREGATIONS",
    "LossAggregation",
    "aggregate",
    "kl_coefficient",
    "sequence_weights",
]


@dataclass(frozen=True)
class LossAggregation:
    """One way to reduce a matrix of per-token losses to a number.

    Attributes
    ----------
    key : str
        verl's ``loss_agg_mode`` name.
    latex : str
        The reduction of per-token losses :math:`\\ell_{i,t}`, in LaTeX.
    weight_latex : str
        The weight :math:`c_i` on sequence :math:`i`'s token sum.
    per_token : bool
        True if :math:`c` shrinks like 1/length (a per-token average).
    used_by : tuple of str
        Library options that reduce this way (versions in the module docstring).
    """

    key: str
    latex: str
    weight_latex: str
    per_token: bool
    used_by: tuple[str, ...]


LOSS_AGGREGATIONS: dict[str, LossAggregation] = by_key(
    LossAggregation(
        "token-mean",
        r"\sum_{i,t} \ell_{i,t} \big/ \textstyle\sum_j L_j",
        r"B \big/ \textstyle\sum_j L_j",
        True,
        ("verl loss_agg_mode=token-mean (its default)", "TRL GRPO loss_type=dapo (its default)",
         "TRL GRPO loss_type=bnpo"),
    ),
    LossAggregation(
        "seq-mean-token-mean",
        r"\frac1B \sum_i \frac1{L_i} \sum_t \ell_{i,t}",
        r"1 / L_i",
        True,
        ("verl loss_agg_mode=seq-mean-token-mean", "TRL GRPO loss_type=grpo",
         "GRPO (DeepSeekMath, arXiv:2402.03300)"),
    ),
    LossAggregation(
        "seq-mean-token-sum-norm",
        r"\frac1B \sum_i \sum_t \ell_{i,t} \big/ L_{\max}",
        r"1 / L_{\max}",
        True,
        ("verl loss_agg_mode=seq-mean-token-sum-norm", "TRL GRPO loss_type=dr_grpo"),
    ),
    LossAggregation(
        "seq-mean-token-sum",
        r"\frac1B \sum_i \sum_t \ell_{i,t}",
        r"1",
        False,
        ("verl loss_agg_mode=seq-mean-token-sum", "TRL GRPO loss_type=luspo"),
    ),
)
"""The reductions, by verl's name (see the module docstring for the sources)."""


def _mode(mode: str) -> str:
    if mode not in LOSS_AGGREGATIONS:
        raise ValueError(f"mode must be one of {list(LOSS_AGGREGATIONS)}, got {mode!r}")
    return mode


def _max_length(max_length: int | None, lengths: np.ndarray) -> int:
    if max_length is None:
        return int(lengths.max())
    m = check_positive_int(max_length, "max_length")
    if m < lengths.max():
        raise ValueError(f"max_length must be at least the longest length {int(lengths.max())}, got {m}")
    return m


def sequence_weights(mode: str, lengths: ArrayLike, max_length: int | None = None) -> np.ndarray:
    r"""The weight :math:`c_i` of each sequence's token sum in the reduced loss.

    .. math:: \text{loss} = \frac1B \sum_{i=1}^B c_i \sum_{t=1}^{L_i} \ell_{i,t}

    Parameters
    ----------
    mode : str
        A key of :data:`LOSS_AGGREGATIONS`.
    lengths : array_like of int
        :math:`L_i`, the counted tokens of each of the :math:`B` sequences (each ≥ 1).
    max_length : int, optional
        :math:`L_{\max}` of ``seq-mean-token-sum-norm``; by default the longest
        of ``lengths`` (verl's default, the padded length, when nothing is padded).

    Returns
    -------
    numpy.ndarray
        :math:`c_i`, one per sequence.

    References
    ----------
    verl 0.9.1, ``verl/trainer/ppo/core_algos.py::agg_loss``.

    Examples
    --------
    >>> sequence_weights("seq-mean-token-mean", [2, 4]).tolist()
    [0.5, 0.25]
    >>> sequence_weights("token-mean", [2, 4]).tolist()
    [0.3333333333333333, 0.3333333333333333]
    """
    mode = _mode(mode)
    lens = as_float_array(lengths, "lengths").ravel()
    if lens.size == 0 or not np.all(np.isfinite(lens)) or np.any(lens < 1) or np.any(lens % 1):
        raise ValueError("lengths must be a non-empty list of whole numbers >= 1")
    b = lens.size
    if mode == "token-mean":
        return np.full(b, b / lens.sum())
    if mode == "seq-mean-token-mean":
        return 1.0 / lens
    if mode == "seq-mean-token-sum-norm":
        return np.full(b, 1.0 / _max_length(max_length, lens))
    return np.ones(b)  # seq-mean-token-sum


def aggregate(mode: str, values: ArrayLike, mask: ArrayLike, max_length: int | None = None) -> float:
    r"""Reduce a :math:`B \times L` matrix of per-token losses as the library does (one process).

    .. math:: \text{loss} = \frac1B \sum_i c_i \sum_t m_{i,t}\,\ell_{i,t}, \qquad L_i = \sum_t m_{i,t}

    Parameters
    ----------
    mode : str
        A key of :data:`LOSS_AGGREGATIONS`.
    values : array_like, shape (B, L)
        Per-token losses :math:`\ell_{i,t}` (padding may hold anything finite).
    mask : array_like of 0/1, shape (B, L)
        1 for a counted token; every sequence needs at least one.
    max_length : int, optional
        :math:`L_{\max}` of ``seq-mean-token-sum-norm``; by default ``L``, the
        padded length (verl's default).

    Returns
    -------
    float

    References
    ----------
    verl 0.9.1, ``verl/trainer/ppo/core_algos.py::agg_loss`` (``dp_size = 1``).
    """
    v = as_float_array(values, "values")
    m = as_float_array(mask, "mask")
    if v.ndim != 2 or m.shape != v.shape:
        raise ValueError(f"values and mask must be 2-D arrays of one shape, got {v.shape} and {m.shape}")
    if not np.all(np.isin(m, (0.0, 1.0))):
        raise ValueError("mask must hold only 0 and 1")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite")
    lengths = m.sum(axis=1)
    if np.any(lengths == 0):
        raise ValueError("mask must keep at least one token of every sequence")
    c = sequence_weights(mode, lengths, v.shape[1] if max_length is None else max_length)
    return float(np.mean(c * (v * m).sum(axis=1)))


def kl_coefficient(mode: str, beta: float, length: int, max_length: int | None = None) -> float:
    r"""The coefficient a KL penalty :math:`\beta` puts on the *sequence* KL, all sequences of length T.

    .. math::

        \mathbb{E}[\text{loss}] = \beta\,c(T)\,\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]_{\text{sequence}},
        \qquad c(T) = \tfrac1T \text{ for a per-token mean}, \ 1 \text{ for a sum}

    Parameters
    ----------
    mode : str
        A key of :data:`LOSS_AGGREGATIONS`.
    beta : float
        The KL coefficient as configured.
    length : int
        T, every sequence's counted tokens.
    max_length : int, optional
        :math:`L_{\max}` of ``seq-mean-token-sum-norm``; by default T.

    Returns
    -------
    float
        :math:`\beta\,c(T)`.

    References
    ----------
    verl 0.9.1, ``agg_loss``; TRL 1.16.0, ``GRPOTrainer``; Z. Shao et al. (2024), arXiv:2402.03300.

    Examples
    --------
    >>> kl_coefficient("seq-mean-token-mean", 0.1, 50)
    0.002
    """
    beta = check_finite(beta, "beta")
    length = check_positive_int(length, "length")
    return beta * float(sequence_weights(mode, [length], max_length)[0])
