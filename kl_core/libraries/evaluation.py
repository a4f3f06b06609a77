r"""The per-token value a library computes for one crosswalk entry, clamps and weights included.

:func:`evaluate` clamps ``logr``, calls the estimator from
:mod:`kl_core.estimation.estimators` (the single implementation of every formula),
clamps the value and applies the importance weight where the library does.

Source: J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation import estimators
from kl_core.libraries.schema import FULL, CrosswalkEntry
from kl_core.validation import as_float_array

__all__ = ["evaluate"]


def _logp(x: ArrayLike, name: str) -> np.ndarray:
    """Validate one array of log-probabilities: numeric, non-empty, finite, ≤ 0."""
    arr = np.atleast_1d(as_float_array(x, name))
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (log-probabilities of sampled tokens)")
    if (arr > 0).any():
        raise ValueError(f"{name} must be <= 0 (log-probabilities), got max {arr.max():.6g}")
    return arr


def evaluate(
    entry: CrosswalkEntry,
    logp_sampler: ArrayLike,
    logp_other: ArrayLike,
    *,
    logp_current: ArrayLike | None = None,
    check: bool = True,
) -> np.ndarray:
    r"""Compute the per-token value the library produces for ``entry``.

    Steps, in the library's order: ``logr = logp_other - logp_sampler`` (for
    entries with a ``current`` role ``logp_other - logp_current``), clamp ``logr``
    to :attr:`CrosswalkEntry.logr_clamp`, apply the estimator from
    :mod:`kl_core.estimation.estimators`, clamp to :attr:`CrosswalkEntry.value_clamp`, and
    multiply by :math:`\pi_\theta/\pi_{\mathrm{old}} = e^{\text{logp\_current} - \text{logp\_sampler}}`
    where the library does.  The result is per token, before the library's
    (masked) mean over tokens.

    For straight-through entries (verl ``"k3+"``, OpenRLHF ``unbiased_gradient``)
    the value equals the base estimator's: only the gradient the library
    back-propagates differs (:mod:`kl_core.gradients.expected`).

    Parameters
    ----------
    entry : CrosswalkEntry
        A row of :data:`kl_core.libraries.registry.CROSSWALK`, e.g. from :func:`kl_core.libraries.lookups.lookup`.
    logp_sampler : array_like
        Log-probs of the sampled tokens under the policy that generated them.
    logp_other : array_like
        Log-probs of the same tokens under the other policy (same shape).
    logp_current : array_like, optional
        Only for entries with a ``current`` role (importance-weighted TRL, OpenRLHF
        ``unbiased_gradient``): log-probs under the policy being updated,
        :math:`\pi_\theta`.  Defaults to ``logp_sampler`` (on-policy, weight 1),
        which is what TRL uses when no old log-probs are stored.
    check : bool, default True
        Validate the arrays.  :mod:`kl_core.gradients.expected` passes False from its
        inner loops, on float arrays it has already checked.

    Returns
    -------
    numpy.ndarray
        Per-token values, same shape as the inputs (at least 1-D).

    Raises
    ------
    ValueError
        If an array is non-numeric, empty, non-finite, has a log-prob > 0, or
        the shapes differ (the message names the parameter); if ``entry`` is the
        exact ``"full"`` KL, which needs full distributions; or if
        ``logp_current`` is given for an entry that does not use it.
    TypeError
        If ``entry`` is not a :class:`CrosswalkEntry`.

    Examples
    --------
    >>> from kl_core.libraries.lookups import lookup
    >>> e = lookup("verl", "low_var_kl", acts_on="loss")
    >>> evaluate(e, [-50.0], [0.0]).tolist()  # logr = 50 -> clamped to 20 -> k3 clamped to 10
    [10.0]
    """
    if not isinstance(entry, CrosswalkEntry):
        raise TypeError(f"entry must be a CrosswalkEntry, got {type(entry).__name__}")
    if entry.estimator == FULL:
        raise ValueError(
            f"{entry.library} option {entry.option!r} is the exact 'full' KL: it needs the full "
            "distributions over the vocabulary, not log-probs of sampled tokens"
        )
    if not check:
        ls, lo = np.asarray(logp_sampler), np.asarray(logp_other)
        lc = ls if logp_current is None or not entry.uses_current else np.asarray(logp_current)
        return _value(entry, ls, lo, lc)
    ls = _logp(logp_sampler, "logp_sampler")
    lo = _logp(logp_other, "logp_other")
    if lo.shape != ls.shape:
        raise ValueError(
            f"logp_other must have the shape of logp_sampler {ls.shape}, got {lo.shape}"
        )
    if entry.uses_current:
        lc = ls if logp_current is None else _logp(logp_current, "logp_current")
        if lc.shape != ls.shape:
            raise ValueError(
                f"logp_current must have the shape of logp_sampler {ls.shape}, got {lc.shape}"
            )
    else:
        if logp_current is not None:
            raise ValueError(
                f"logp_current applies only to entries with a 'current' role, not {entry.library} "
                f"option {entry.option!r}"
            )
        lc = ls
    return _value(entry, ls, lo, lc)


def _value(entry: CrosswalkEntry, ls: np.ndarray, lo: np.ndarray, lc: np.ndarray) -> np.ndarray:
    """The steps of :func:`evaluate` on arrays it has checked (``lc`` is ``ls`` without a current role)."""
    logr = lo - (lc if entry.uses_current else ls)
    if entry.logr_clamp is not None:
        logr = np.clip(logr, *entry.logr_clamp)
    value = estimators.evaluate(entry.estimator, logr)
    if entry.value_clamp is not None:
        value = np.clip(value, *entry.value_clamp)
    if entry.importance_weighted:
        value = value * np.exp(lc - ls)
    return value
