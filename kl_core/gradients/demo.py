r"""The toy settings of the "Gradients" page and the README's ``grad`` example.

A categorical policy :math:`\pi_s = \mathrm{softmax}(\ell_{\mathrm{ref}} + s\,v)`
over :math:`K` tokens that has moved a distance :math:`s` (the drift) along a
fixed logit direction :math:`v` from a reference
:math:`\pi_{\mathrm{ref}} = \mathrm{softmax}(\ell_{\mathrm{ref}})`, and a fixed
reward :math:`R` (:data:`DEMO_REWARD`); every pattern repeats for more than six
tokens.  Two references (:data:`DEMO_REFERENCES`):

* ``"uniform"``: :math:`\ell_{\mathrm{ref}} = 0`, :math:`v` = :data:`DEMO_DIRECTION`
  (the README's example and the lessons' setting);
* ``"uneven"``: :math:`\ell_{\mathrm{ref}}` = :data:`UNEVEN_REF` (π_ref likes
  tokens 0 and 2, token 1 is rare), :math:`v` = :data:`UNEVEN_DIRECTION` (π_θ
  drops token 0 and favours the rare token 1).  Here the two KLs' gradients
  part early: at :math:`K = 6`, :math:`s = 1` the cosine between
  :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]` and
  :math:`\nabla\mathrm{KL}[\pi_\mathrm{ref}\|\pi_\theta]` is 0.59 (0.96 for
  ``"uniform"``), the Gradients page's default (issue 20).

The exact expected gradients of these settings are :mod:`kl_core.gradients.expected`'s.
"""

from __future__ import annotations

import numpy as np

from kl_core.gradients.expected import MAX_TOKENS
from kl_core.validation import check_finite, check_positive_int

__all__ = [
    "DEMO_DIRECTION",
    "DEMO_REFERENCES",
    "DEMO_REWARD",
    "DEMO_TOKENS",
    "UNEVEN_DIRECTION",
    "UNEVEN_REF",
    "demo_logits",
    "demo_reward",
]

DEMO_TOKENS = 6
"""Vocabulary size of the toy setting (:func:`demo_logits`, :func:`demo_reward`)."""

DEMO_DIRECTION: tuple[float, ...] = (1.0, 0.0, -1.0, 0.5, 0.0, 0.0)
"""The logit direction :math:`v` of the toy setting, for six tokens (repeated for more)."""

DEMO_REWARD: tuple[float, ...] = (1.0, 0.2, 0.5, -0.3, 0.0, 0.8)
"""The reward :math:`R` of the toy setting, for six tokens (repeated for more)."""

UNEVEN_REF: tuple[float, ...] = (2.0, 0.0, 2.0, 0.0, 0.0, 0.0)
"""The logits of the uneven :math:`\\pi_{\\mathrm{ref}}`, for six tokens (repeated for more)."""

UNEVEN_DIRECTION: tuple[float, ...] = (-2.0, 2.0, 1.0, 0.0, 0.0, 0.0)
"""The logit direction :math:`v` from the uneven reference, for six tokens (repeated for more)."""

DEMO_REFERENCES: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "uniform": ((0.0,), DEMO_DIRECTION),
    "uneven": (UNEVEN_REF, UNEVEN_DIRECTION),
}
"""Each reference's name: (its logits :math:`\\ell_{\\mathrm{ref}}`, the direction :math:`v`), as patterns."""


def _tiled(pattern: tuple[float, ...], k: int) -> np.ndarray:
    return np.resize(np.asarray(pattern, dtype=np.float64), k)


def demo_logits(k: int, drift: float, *, reference: str = "uniform") -> np.ndarray:
    r"""Logits of the toy policy :math:`\pi_s = \mathrm{softmax}(\ell_{\mathrm{ref}} + s\,v)`.

    ``demo_logits(k, 0, reference=...)`` is :math:`\pi_{\mathrm{ref}}` itself.
    For ``"uniform"``, :math:`\ell_{\mathrm{ref}} = 0` and :math:`v` is
    :data:`DEMO_DIRECTION`; at :math:`K = 6`, :math:`s = 1` this is the README's
    ``grad --policy "categorical(1,0,-1,0.5,0,0)"``.  For ``"uneven"``,
    :math:`\ell_{\mathrm{ref}}` is :data:`UNEVEN_REF` and :math:`v` is
    :data:`UNEVEN_DIRECTION`.  Patterns repeat to :math:`K` tokens.

    Parameters
    ----------
    k : int
        Number of tokens, 2 to :data:`MAX_TOKENS`.
    drift : float
        :math:`s`, how far along :math:`v` the policy has moved from :math:`\pi_{\mathrm{ref}}`.
    reference : str
        A key of :data:`DEMO_REFERENCES`: ``"uniform"`` (the default) or ``"uneven"``.

    Returns
    -------
    numpy.ndarray
        The :math:`K` logits :math:`\ell_{\mathrm{ref}} + s\,v`.

    Examples
    --------
    >>> demo_logits(6, 1.0).tolist()
    [1.0, 0.0, -1.0, 0.5, 0.0, 0.0]
    >>> demo_logits(6, 1.0, reference="uneven").tolist()
    [0.0, 2.0, 3.0, 0.0, 0.0, 0.0]
    """
    k = _check_tokens(k)
    s = check_finite(drift, "drift")
    if reference not in DEMO_REFERENCES:
        raise ValueError(f"reference must be one of {sorted(DEMO_REFERENCES)}, got {reference!r}")
    ref, direction = DEMO_REFERENCES[reference]
    return 0.0 + _tiled(ref, k) + s * _tiled(direction, k)  # 0.0 + turns −0.0 into 0.0


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
