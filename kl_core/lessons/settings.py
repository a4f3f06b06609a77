r"""What a lesson step's setting picture plots: the setting, computed from the step's params.

A step's picture comes before the reader answers, so it shows the *setting*
only, the two distributions the setup names, never a quantity a question asks
for (:mod:`kl_core.lessons.quantities`).  Two settings have no q and p to draw
as densities, and get a pair of distributions over tokens instead:

* lesson 5's token steps: the policy :math:`\pi_\theta = \mathrm{softmax}(t\,v)`
  and the uniform :math:`\pi_{\mathrm{ref}}` over ``k`` tokens
  (:func:`kl_core.gradients.demo.demo_logits`), read from the very
  :class:`~kl_core.gradients.expected.GradientTable` the answers come from;
* lesson 6's steps on the spread of sequence estimators: how often each token appears in a sequence of
  ``T`` tokens drawn from each chain of the drift family
  (:func:`kl_core.sequences.markov.drift_pair`), the mean over the positions of
  the chain's marginals :math:`d_t = d_{t-1} P`.

A step names its picture in ``Step.setting`` (:data:`SETTINGS`); lesson 4's
single log-ratio steps and lesson 7's configs have none (:func:`token_pair` says why).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SETTINGS", "TokenPair", "chain_token_shares", "policy_pair", "token_pair"]


@dataclass(frozen=True)
class TokenPair:
    r"""Two distributions over the same ``k`` tokens: the one sampled from, and the one compared with.

    Attributes
    ----------
    kind : str
        ``"policy"`` (:func:`policy_pair`) or ``"chain"`` (:func:`chain_token_shares`).
    sampled : numpy.ndarray
        :math:`\pi_\theta`, shape (k,), summing to 1: tokens are drawn from it.
    reference : numpy.ndarray
        :math:`\pi_{\mathrm{ref}}`, shape (k,), summing to 1.
    """

    kind: str
    sampled: np.ndarray
    reference: np.ndarray

    @property
    def k(self) -> int:
        """The number of tokens."""
        return int(self.sampled.size)


def policy_pair(k: int, t: float) -> TokenPair:
    r"""Lesson 5's :math:`\pi_\theta = \mathrm{softmax}(t\,v)` and uniform :math:`\pi_{\mathrm{ref}}` over ``k`` tokens.

    Parameters
    ----------
    k : int
        The number of tokens (2 … :data:`kl_core.gradients.expected.MAX_TOKENS`).
    t : float
        The drift :math:`s` of the setup, :math:`\theta = s\,v`.

    Returns
    -------
    TokenPair
        ``kind="policy"``; the probabilities of the gradient table that the
        step's answer is computed from.

    Examples
    --------
    >>> pair = policy_pair(4, 0.0)
    >>> pair.sampled.round(2).tolist(), pair.reference.round(2).tolist()
    ([0.25, 0.25, 0.25, 0.25], [0.25, 0.25, 0.25, 0.25])
    """
    from kl_core.lessons.quantities import _gradient_table

    table = _gradient_table(int(k), float(t))
    return TokenPair("policy", table.policy_probs.copy(), np.exp(table.ref_log_probs))


def chain_token_shares(k: int, drift: float, length: int) -> TokenPair:
    r"""Lesson 6's two chains: the share of each token in a sequence of ``length`` tokens drawn from it.

    For a chain with first-token distribution :math:`d_1` and transitions
    :math:`P`, the expected share of token :math:`j` among
    :math:`x_1, \dots, x_T` is :math:`\tfrac1T \sum_t d_t(j)` with
    :math:`d_t = d_{t-1} P` (:meth:`kl_core.sequences.markov.MarkovChain.marginals`).

    Parameters
    ----------
    k : int
        K, the number of tokens.
    drift : float
        :math:`\delta`, the policy's tilt in every transition.
    length : int
        T, the sequence length.

    Returns
    -------
    TokenPair
        ``kind="chain"``; ``sampled`` for sequences of the policy, ``reference``
        for sequences of the reference chain (each drawn from its own chain).

    Examples
    --------
    >>> pair = chain_token_shares(4, 0.0, 8)
    >>> bool(np.allclose(pair.sampled, pair.reference))
    True
    """
    from kl_core.sequences.markov import drift_pair

    policy, ref = drift_pair(int(k), float(drift), "every")
    return TokenPair("chain", policy.marginals(int(length)).mean(axis=0), ref.marginals(int(length)).mean(axis=0))


#: The pictures of settings without q and p: ``Step.setting`` → the params it reads.
SETTINGS: dict[str, tuple[str, ...]] = {"policies": ("k", "t"), "chains": ("K", "drift", "T")}


def token_pair(setting: str, params: Mapping[str, Any]) -> TokenPair:
    r"""The token distributions a step's setting picture plots (``Step.setting``).

    ``"policies"`` (lesson 5, params ``k``, ``t``): :func:`policy_pair`;
    ``"chains"`` (lesson 6, ``K``, ``drift``, ``T``): :func:`chain_token_shares`.
    Steps without either get no picture before the answer: lesson 6's first
    step (β and T only, no chain) and second (its answer, KL / T, lies among
    the token shares, and the per-position KL averages to it), lesson 7 (its
    config is shown), and lesson 4's single log-ratio steps on purpose,
    because a curve of k1, k2, k3 against :math:`\log r` would show which one
    is symmetric (step 4's answer) and let the reader read
    :math:`k_3(-\log r)` off it (step 5's).

    Parameters
    ----------
    setting : str
        A key of :data:`SETTINGS`.
    params : mapping
        The step's params (:attr:`kl_core.lessons.catalog.Question.params`).

    Returns
    -------
    TokenPair

    Raises
    ------
    ValueError
        For an unknown ``setting`` or params without the ones it reads.
    """
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {sorted(SETTINGS)}, got {setting!r}")
    missing = [name for name in SETTINGS[setting] if name not in params]
    if missing:
        raise ValueError(f"params of a {setting!r} setting need {missing}")
    if setting == "policies":
        return policy_pair(params["k"], params["t"])
    return chain_token_shares(params["K"], params["drift"], params["T"])
