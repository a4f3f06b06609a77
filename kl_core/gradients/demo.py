r"""The toy setting of the "Gradients" page and the README's ``grad`` example.

A categorical policy :math:`\pi_t = \mathrm{softmax}(t\,v)` over :math:`K`
tokens that has moved a distance :math:`t` along a fixed logit direction
:math:`v` (:data:`DEMO_DIRECTION`) from a uniform reference, and a fixed reward
:math:`R` (:data:`DEMO_REWARD`); both patterns repeat for more than six tokens.
The exact expected gradients of this setting are :mod:`kl_core.gradients.expected`'s.
"""

from __future__ import annotations

import numpy as np

from kl_core.gradients.expected import MAX_TOKENS
from kl_core.validation import check_finite, check_positive_int

__all__ = ["DEMO_DIRECTION", "DEMO_REWARD", "DEMO_TOKENS", "demo_logits", "demo_reward"]

DEMO_TOKENS = 6
"""Vocabulary size of the toy setting (:func:`demo_logits`, :func:`demo_reward`)."""

DEMO_DIRECTION: tuple[float, ...] = (1.0, 0.0, -1.0, 0.5, 0.0, 0.0)
"""The logit direction :math:`v` of the toy setting, for six tokens (repeated for more)."""

DEMO_REWARD: tuple[float, ...] = (1.0, 0.2, 0.5, -0.3, 0.0, 0.8)
"""The reward :math:`R` of the toy setting, for six tokens (repeated for more)."""


def _tiled(pattern: tuple[float, ...], k: int) -> np.ndarray:
    return np.resize(np.asarray(pattern, dtype=np.float64), k)


def demo_logits(k: int, drift: float) -> np.ndarray:
    r"""Logits of the toy policy :math:`\pi_t = \mathrm{softmax}(\ell_{\mathrm{ref}} + t\,v)`.

    :math:`\ell_{\mathrm{ref}} = 0` (a uniform :math:`\pi_{\mathrm{ref}}`, which is
    ``demo_logits(k, 0)``) and :math:`v` is :data:`DEMO_DIRECTION`, repeated to
    :math:`K` tokens.  At :math:`K = 6`, :math:`t = 1` this is the README's
    ``grad --policy "categorical(1,0,-1,0.5,0,0)"``.

    Parameters
    ----------
    k : int
        Number of tokens, 2 to :data:`MAX_TOKENS`.
    drift : float
        :math:`t`, how far along :math:`v` the policy has moved from :math:`\pi_{\mathrm{ref}}`.

    Returns
    -------
    numpy.ndarray
        The :math:`K` logits :math:`t\,v`.

    Examples
    --------
    >>> demo_logits(6, 1.0).tolist()
    [1.0, 0.0, -1.0, 0.5, 0.0, 0.0]
    """
    k = _check_tokens(k)
    t = check_finite(drift, "drift")
    return 0.0 + t * _tiled(DEMO_DIRECTION, k)  # 0.0 + turns −0.0 into 0.0


def demo_reward(k: int) -> np.ndarray:
    r"""The toy reward :math:`R`: :data:`DEMO_REWARD`, repeated to :math:`K` tokens.

    Parameters
    ----------
    k : int
        Number of tokens, 2 to :data:`MAX_TOKENS`.

    Returns
    -------
    numpy.ndarray
        :math:`R_x` for each token :math:`x`.

    Examples
    --------
    >>> demo_reward(3).tolist()
    [1.0, 0.2, 0.5]
    """
    return _tiled(DEMO_REWARD, _check_tokens(k))


def _check_tokens(k: int) -> int:
    k = check_positive_int(k, "k")
    if not 2 <= k <= MAX_TOKENS:
        raise ValueError(f"k must be between 2 and {MAX_TOKENS} tokens, got {k}")
    return k
