r"""Value ≠ gradient: the exact expected gradient of a KL estimator put into a loss.

The setting is the smallest one where the difference shows: a categorical
policy :math:`\pi_\theta = \mathrm{softmax}(\theta)` over :math:`K` tokens, a
reference :math:`\pi_{\mathrm{ref}}`, and a sampler :math:`s` that draws the
tokens (:math:`s = \pi_\theta` on-policy, or an older policy
:math:`\pi_{\mathrm{old}}`).  A per-sample loss is differentiated with the
sample held fixed, as autograd does, and every expectation is an exact sum over
the :math:`K` tokens.

Every option here depends on :math:`\theta` only through
:math:`\ell(x) = \log\pi_\theta(x)` of the sampled token, so its per-sample
gradient is a scalar times the score:

.. math::

    g(x) = c(x)\,\nabla_\theta\log\pi_\theta(x) = c(x)\,(e_x - \pi_\theta),
    \qquad
    \mathbb{E}_s[g] = \sum_x s(x)\,c(x)\,(e_x - \pi_\theta),
    \qquad
    \text{spread} = \sqrt{\mathbb{E}_s\|g - \mathbb{E}_s g\|^2}.

With :math:`t = \log r = \log\pi_{\mathrm{ref}}(x) - \log\pi_\theta(x)`, the
coefficients :math:`c(x)` of the basic options (:data:`BASIC_OPTIONS`) are

==========  ===========================================================  ====================================
option      per-sample loss                                              :math:`c(x)`
==========  ===========================================================  ====================================
k1          :math:`k_1 = -t`                                             :math:`1`
k2          :math:`k_2 = \tfrac12 t^2`                                   :math:`-t`
k3          :math:`k_3 = e^t - 1 - t`                                    :math:`1 - e^t`
k3_pq       :math:`k_3^{pq} = t e^t - (e^t - 1)`                         :math:`-t e^t`
k1_score    :math:`\mathrm{sg}(k_1)\log\pi_\theta(x)`                    :math:`-t`
k_lambda    :math:`\mathrm{sg}(k_\lambda)\log\pi_\theta(x) + k_\lambda`  :math:`k_\lambda - \partial_t k_\lambda = 1 - \lambda - t`
==========  ===========================================================  ====================================

so that on-policy :math:`\mathbb{E}\nabla k_1 = 0`,
:math:`\mathbb{E}\nabla k_2 = \mathbb{E}[\mathrm{sg}(k_1)\nabla\log\pi_\theta] =
\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` and
:math:`\mathbb{E}\nabla k_3 = \nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`, with

.. math::

    \nabla_\theta\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}] = \pi_\theta\odot\big(k_1 - \mathbb{E}_{\pi_\theta}k_1\big),
    \qquad
    \nabla_\theta\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta] = \pi_\theta - \pi_{\mathrm{ref}}.

``k_lambda`` is the full (score-function plus pathwise) estimator of
:math:`\nabla\mathbb{E}_{\pi_\theta}[k_\lambda] = \nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]`,
unbiased on-policy for every :math:`\lambda`; its squared spread is a quadratic
in :math:`\lambda` whose minimum is :func:`lambda_grad_opt`, not the value's
:math:`\lambda^*` (:func:`kl_core.estimation.exact.optimal_lambda`).

Library options are the loss entries of :data:`kl_core.libraries.crosswalk.CROSSWALK`,
each with its own clamps, straight-through trick and importance weight
(:attr:`kl_core.libraries.crosswalk.CrosswalkEntry.grad_mode`): the per-token value is
:func:`kl_core.libraries.crosswalk.evaluate` (one source of truth for every formula) and
:math:`c(x)` is its derivative in :math:`\ell`, zero where ``torch.clamp``
clamps.  A value in the reward is detached and enters as
:math:`c(x) = \tfrac{\pi_\theta(x)}{s(x)}\,\mathrm{sg}(k(x))` (the PPO ratio,
unclipped).

Training picture (:mod:`kl_core.gradients.flow`): exact expected-gradient ascent on
:math:`\mathbb{E}_{\pi_\theta}[R] - \beta\cdot(\text{the option's KL loss})`,
on-policy at every step.  Its direction in the logits is
:math:`\pi_\theta\odot(h - \mathbb{E}_{\pi_\theta}h)` with
:math:`h = R - \beta c`, so an interior fixed point is a :math:`\pi` at which
:math:`h` is the same for every token.  The two analytic optima
(:func:`kl_core.gradients.flow.analytic_optima`) are :math:`\pi\propto\pi_{\mathrm{ref}}e^{R/\beta}`
for :math:`\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` and
:math:`\pi_i = \beta\pi_{\mathrm{ref},i}/(c - R_i)`, :math:`c > \max R` fixed
by normalisation, for :math:`\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`.

Source: the estimators are J. Schulman's, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; the gradient pitfalls are Y. Tang and
R. Munos, "On a few pitfalls in KL divergence gradient estimation for RL",
arXiv:2506.09477 (2025).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from kl_core._docfill import docfill
from kl_core.estimation import estimators
from kl_core.estimation.distributions import Categorical
from kl_core.gradients._docstrings import SECTIONS
from kl_core.libraries.crosswalk import CROSSWALK, CrosswalkEntry, evaluate
from kl_core.validation import as_float_array, check_finite, check_positive_int

__all__ = [
    "BASIC_CLAIMS",
    "BASIC_OPTIONS",
    "MAX_TOKENS",
    "GradientRow",
    "GradientTable",
    "LogVector",
    "classify",
    "entry_name",
    "expected_gradient",
    "gradient_coefficients",
    "gradient_entries",
    "gradient_row",
    "gradient_spread",
    "gradient_table",
    "k_lambda_spread",
    "lambda_grad_opt",
    "loss_entries",
    "projection_moments",
    "sample_projection_means",
    "true_gradients",
]

BASIC_OPTIONS: tuple[str, ...] = ("k1", "k2", "k3", "k3_pq", "k1_score", "k_lambda")
"""The options that are not a library's: four estimators as a loss, and two score-function forms."""

MAX_TOKENS = 1024
"""Largest vocabulary accepted: the exact spread sums a K × K matrix per option."""

BASIC_CLAIMS: dict[str, str] = {
    "k1": "zero",
    "k2": "reverse_kl",
    "k3": "forward_kl",
    "k3_pq": "mixed",
    "k1_score": "reverse_kl",
    "k_lambda": "reverse_kl",
}
"""What each basic option's expected gradient is on-policy (see :data:`kl_core.libraries.crosswalk.GRADIENT_TARGETS`)."""

# Relative size under which a vector counts as zero: rounding level of the sums.
_ZERO_RTOL = 1e-12
# Relative distance under which an expected gradient counts as equal to a true one.
_MATCH_RTOL = 1e-9
Policy = Categorical | ArrayLike


# --------------------------------------------------------------------------- #
# Inputs
# --------------------------------------------------------------------------- #
def _log_probs(d: Policy, name: str) -> np.ndarray:
    """Normalised log-probabilities of a Categorical, or of a vector of logits."""
    if isinstance(d, Categorical):
        if not 2 <= d.k <= MAX_TOKENS:
            raise ValueError(f"{name} must have between 2 and {MAX_TOKENS} tokens, got {d.k}")
        return d.log_probs
    if hasattr(d, "discrete"):
        raise ValueError(f"{name} must be a categorical distribution, got {d!r}")
    lg = np.atleast_1d(as_float_array(d, name))
    if lg.ndim != 1 or not 2 <= lg.size <= MAX_TOKENS:
        raise ValueError(
            f"{name} must be a 1-D vector of 2 to {MAX_TOKENS} logits, got shape {lg.shape}"
        )
    if not np.isfinite(lg).all():
        raise ValueError(f"{name} must have finite logits")
    return Categorical(tuple(lg.tolist())).log_probs


def _triple(policy: Policy, ref: Policy, sampler: Policy | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lp = _log_probs(policy, "policy")
    lr = _log_probs(ref, "ref")
    if lr.size != lp.size:
        raise ValueError(f"ref must have the policy's {lp.size} tokens, got {lr.size}")
    if sampler is None:
        return lp, lr, lp
    ls = _log_probs(sampler, "sampler")
    if ls.size != lp.size:
        raise ValueError(f"sampler must have the policy's {lp.size} tokens, got {ls.size}")
    return lp, lr, ls


def _log_softmax(x: np.ndarray) -> np.ndarray:
    """Rows of logits to log-probabilities (the training loop's fast path)."""
    m = x.max(axis=-1, keepdims=True)
    z = x - m
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


# --------------------------------------------------------------------------- #
# Coefficients c(x)
# --------------------------------------------------------------------------- #
# Derivative in t = log r of each estimator of :mod:`kl_core.estimation.estimators`, and
# k(t) − k'(t) in closed form (the difference of the two cancels for large t: k3 gives
# e^t − 1 − t − (e^t − 1) = −t).  ``lam`` is the estimator's parameter (λ of k_lambda);
# the others ignore it.  Overflow gives inf.
_DK_DT: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "k1": lambda t, lam: np.full_like(t, -1.0),
    "k2": lambda t, lam: t.copy(),
    "k3": lambda t, lam: np.expm1(t),
    "k3_pq": lambda t, lam: t * np.exp(t),
    "abs": lambda t, lam: np.sign(t),
    "k_lambda": lambda t, lam: lam * np.exp(t) - 1.0,
}
_K_MINUS_DK: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "k1": lambda t, lam: 1.0 - t,
    "k2": lambda t, lam: 0.5 * t * t - t,
    "k3": lambda t, lam: -t,
    "k3_pq": lambda t, lam: -np.expm1(t),
    "abs": lambda t, lam: np.abs(t) - np.sign(t),
    "k_lambda": lambda t, lam: (1.0 - lam) - t,
}


def _dk_dt(key: str, t: np.ndarray, lam: float = 1.0) -> np.ndarray:
    """Derivative in t = log r of the estimator ``key`` of :mod:`kl_core.estimation.estimators` (overflow gives inf)."""
    if key not in _DK_DT:
        raise ValueError(f"key must be one of {sorted(estimators.ESTIMATORS)}, got {key!r}")
    return _DK_DT[key](t, lam)


def _k_minus_dk(key: str, t: np.ndarray, lam: float = 1.0) -> np.ndarray:
    """k(t) − k'(t) in closed form: the difference of the two cancels for large t (k3: e^t − 1 − t − (e^t − 1) = −t)."""
    if key not in _K_MINUS_DK:
        raise ValueError(f"key must be one of {sorted(estimators.ESTIMATORS)}, got {key!r}")
    return _K_MINUS_DK[key](t, lam)


def _inside(x: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    """Where torch.clamp passes a gradient: lo <= x <= hi."""
    if bounds is None:
        return np.ones(x.shape, dtype=bool)
    return (x >= bounds[0]) & (x <= bounds[1])


def _basic_coef(key: str, t: np.ndarray, lam: float) -> np.ndarray:
    if key == "k1_score":
        return estimators.k1(t)
    info = estimators.ESTIMATORS.get(key)
    if info is not None and info.parameter is not None:
        # an estimator with a parameter enters as sg(k)·∇log π + ∇k (k_λ: the score-function
        # form of the control variate): c = k − ∂_t k = 1 − λ − t for k_λ
        return _k_minus_dk(key, t, lam)
    return -_dk_dt(key, t)


def _entry_coef(
    e: CrosswalkEntry, lp: np.ndarray, lr: np.ndarray, ls: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """c(x) of a crosswalk entry, and where a clamp changes it (policy lp, reference lr, sampler ls)."""
    t = lr - lp
    mode = e.grad_mode
    # The caller, _coef, has silenced overflow warnings: an overflow gives inf, not a warning.
    w = np.exp(lp - ls)  # π_θ/π_old; 1 on-policy
    if mode == "k2":
        return -t, np.zeros(t.shape, dtype=bool)
    if mode == "k2_is":
        clip = float(e.grad_is_clip)  # type: ignore[arg-type]
        return np.minimum(w, clip) * -t, w > clip
    if mode in ("score", "score_current"):
        if e.estimator == "full":
            base = ls if mode == "score" else lp
            kl = float(np.sum(np.exp(base) * (base - lr)))
            return w * kl, np.zeros(t.shape, dtype=bool)
        base = ls if mode == "score" else lp
        value = evaluate(e, base, lr, check=False)
        raw = evaluate(_unclamped(e), base, lr, check=False) if e.clamped else value
        return w * value, value != raw
    if mode != "autograd" or e.estimator == "full":
        raise ValueError(f"entry {e.library}:{e.option} ({e.acts_on}) has no gradient to take")
    tt = np.clip(t, *e.logr_clamp) if e.logr_clamp is not None else t
    raw = estimators.evaluate(e.estimator, tt)
    passes = _inside(t, e.logr_clamp) & _inside(raw, e.value_clamp)
    dvalue_dt = np.where(passes, _dk_dt(e.estimator, tt), 0.0)
    if not e.importance_weighted:
        return -dvalue_dt, ~passes
    # d/dℓ [w·V] = w·(V − dV/dt): the clamped value where a clamp is active (its
    # derivative is 0), else k − k' in closed form, which does not cancel.
    value = evaluate(e, ls, lr, logp_current=lp, check=False) / w
    return w * np.where(passes, _k_minus_dk(e.estimator, tt), value), ~passes


@cache
def _unclamped(e: CrosswalkEntry) -> CrosswalkEntry:
    """The same entry without its clamps (to see which tokens a clamp changes)."""
    return replace(e, logr_clamp=None, value_clamp=None) if e.clamped else e


def _option(option: str | CrosswalkEntry) -> str | CrosswalkEntry:
    if isinstance(option, CrosswalkEntry):
        if option.grad_mode == "none":
            raise ValueError(
                f"option {option.library}:{option.option} is a logged metric: it has no gradient"
            )
        return option
    if option in BASIC_OPTIONS:
        return option
    for e in loss_entries():
        if entry_name(e) == option:
            return e
    raise ValueError(
        f"option must be one of {list(BASIC_OPTIONS)}, a 'LIBRARY:OPTION' loss entry such as "
        f"'verl:low_var_kl', or a CrosswalkEntry, got {option!r}"
    )


#: Docstring sections the functions below share: parameters and the reference (filled in by
#: :func:`kl_core._docfill.docfill`).
_POLICY_SAMPLER = r"""policy, ref : Categorical or array_like
    :math:`\pi_\theta` and :math:`\pi_{\mathrm{ref}}`.
sampler : Categorical or array_like, optional
    The policy that drew the tokens; :math:`\pi_\theta` if omitted."""
_LAM = r"""lam : float, default 1.0
    :math:`\lambda` of ``k_lambda``."""
_PARAMS = {
    **SECTIONS,
    "policy_sampler": _POLICY_SAMPLER,
    "policy_sampler_lam": f"{_POLICY_SAMPLER}\n{_LAM}",
    "option_policy_sampler_lam": f"option : str or CrosswalkEntry\n    As in :func:`gradient_coefficients`.\n{_POLICY_SAMPLER}\n{_LAM}",
}


class _Setting(NamedTuple):
    """The checked arguments of a per-option function, in :func:`_coef`'s order."""

    option: str | CrosswalkEntry
    lp: np.ndarray
    lr: np.ndarray
    ls: np.ndarray
    lam: float


def _setting(
    option: str | CrosswalkEntry, policy: Policy, ref: Policy, sampler: Policy | None, lam: float
) -> _Setting:
    """Check ``lam``, the three policies (as log-probabilities) and the option, in that order."""
    lam = check_finite(lam, "lam")
    lp, lr, ls = _triple(policy, ref, sampler)
    return _Setting(_option(option), lp, lr, ls, lam)


def _coef(
    option: str | CrosswalkEntry, lp: np.ndarray, lr: np.ndarray, ls: np.ndarray, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore", invalid="ignore"):
        if isinstance(option, CrosswalkEntry):
            return _entry_coef(option, lp, lr, ls)
        if option == "k_lambda" and min(float(np.min(lp)), float(np.min(lr))) < _LOG_TINY:
            # 1 − λ − log ρ + log π summed exactly: at the gradient-optimal λ of a nearly one-hot
            # policy, λ ≈ −400 and log ρ − log π ≈ 400 cancel to the last digits, and two
            # roundings there decided the sign of a gradient of size 1e-15
            c = np.array([math.fsum((1.0, -lam, -a, b)) for a, b in zip(lr.tolist(), lp.tolist(), strict=True)])
            return c, np.zeros(lp.shape, dtype=bool)
        return _basic_coef(option, lr - lp, lam), np.zeros(lp.shape, dtype=bool)


# −dk/dt of the estimators whose derivative grows like e^t, as Σ_j P_j(t) e^{jt}
# (coefficients lowest degree first): s·c is then summed in log space.
_MINUS_DK_DT_EXP: dict[str, Callable[[float], dict[float, list[float]]]] = {
    "k3": lambda lam: {0.0: [1.0], 1.0: [-1.0]},
    "k3_pq": lambda lam: {1.0: [0.0, -1.0]},
    "k_lambda": lambda lam: {0.0: [1.0], 1.0: [-lam]},
}


def _exp_key(option: str | CrosswalkEntry) -> str | None:
    """The estimator whose −dk/dt is the coefficient of ``option``, if it grows like e^t."""
    if isinstance(option, CrosswalkEntry):
        ok = option.grad_mode == "autograd" and not option.importance_weighted
        key = option.estimator if ok else None
    else:
        key = option if option in ("k3", "k3_pq") else None
    return key if key in _MINUS_DK_DT_EXP else None


def _weighted(
    option: str | CrosswalkEntry, lp: np.ndarray, lr: np.ndarray, ls: np.ndarray, lam: float, c: np.ndarray
) -> np.ndarray:
    """s(x)·c(x), with 0·c = 0 where s = 0, and in log space where c overflows.

    A token whose probability underflows (a logit ~745 below the others) has
    c = 1 − r = −inf for k3, yet s·c = π − ρ is finite: it is summed as
    Σ_j P_j(t) e^{log s + j t}, t = log ρ − log π.
    """
    from kl_core.estimation._integrands import ExpPoly

    with np.errstate(invalid="ignore", over="ignore"):
        v = np.where(np.exp(ls) > 0, np.exp(ls) * c, 0.0)
    key = _exp_key(option)
    bad = ~np.isfinite(c) & np.isfinite(ls) & (c != 0)
    if key is None or not bad.any():
        return v
    if isinstance(option, CrosswalkEntry) and option.logr_clamp is not None:
        return v  # a clamped log-ratio cannot overflow
    t = (lr - lp)[bad]
    poly = ExpPoly.of(_MINUS_DK_DT_EXP[key](lam))
    lsb = ls[bad]
    v[bad] = poly.weighted(np.sign(t), np.log(np.abs(t)), lambda k, a=lsb, tt=t: a + k * tt)
    return v


@docfill(**_PARAMS)
def gradient_coefficients(
    option: str | CrosswalkEntry, policy: Policy, ref: Policy, sampler: Policy | None = None, lam: float = 1.0
) -> np.ndarray:
    r"""The per-token coefficient :math:`c(x)` with :math:`g(x) = c(x)\,\nabla_\theta\log\pi_\theta(x)`.

    See the module docstring for the table of :math:`c(x)`; for a crosswalk
    entry it is the derivative of :func:`kl_core.libraries.crosswalk.evaluate`'s value in
    :math:`\log\pi_\theta(x)` (zero where a clamp is active), times the
    detached importance weight where the library applies one.

    Parameters
    ----------
    option : str or CrosswalkEntry
        One of :data:`BASIC_OPTIONS`, a ``"LIBRARY:OPTION"`` name of a loss
        entry (:func:`entry_name`), or any crosswalk entry with a gradient.
    policy, ref : Categorical or array_like
        :math:`\pi_\theta` and :math:`\pi_{\mathrm{ref}}`, as distributions or logits.
    sampler : Categorical or array_like, optional
        The policy that drew the tokens; :math:`\pi_\theta` if omitted.
    lam : float, default 1.0
        :math:`\lambda` of ``k_lambda``.

    Returns
    -------
    numpy.ndarray
        :math:`c(x)` for each of the :math:`K` tokens.

    %(tang_munos_references)s

    Examples
    --------
    >>> gradient_coefficients("k1", [0.0, 1.0], [1.0, 0.0]).tolist()
    [1.0, 1.0]
    """
    return _coef(*_setting(option, policy, ref, sampler, lam))[0]


# --------------------------------------------------------------------------- #
# Exact moments
# --------------------------------------------------------------------------- #
def _expected(s: np.ndarray, c: np.ndarray, pi: np.ndarray, v: np.ndarray | None = None) -> np.ndarray:
    """Σ_x s(x) c(x) (e_x − π), with 0·c = 0 for tokens the sampler never draws.

    Its entries sum to 0 (Σ_y (e_x − π)_y = 0), so the entry of the likeliest token, where
    v − π·Σv cancels when π is nearly one-hot, is set to minus the sum of the others.
    ``v``: s·c computed already (:func:`_weighted`).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        if v is None:
            v = np.where(s > 0, s * c, 0.0)
        m = v - pi * v.sum()
    if np.isfinite(m).all() and m.size > 1:
        top = int(np.argmax(pi))
        m[top] = -np.delete(m, top).sum()
    return m + 0.0  # + 0.0 turns −0.0 into 0.0


def _rounding_scale(s: np.ndarray, c: np.ndarray, pi: np.ndarray, v: np.ndarray | None = None) -> float:
    """The size of the terms :func:`_expected` sums, so ``1e-12`` of it is rounding noise.

    Entry x of v − π·Σv adds |s(x) c(x)| and π_x·Σ|s c|; the likeliest token's entry is minus the
    others' sum, so only the others count.  A nearly one-hot π_θ makes these terms tiny, and
    with them a real (not rounded-off) expected gradient; ``sum |s c|`` alone would call it zero.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.abs(np.where(s > 0, s * c, 0.0) if v is None else v)
        terms = v + pi * v.sum()
    if terms.size > 1:
        terms = np.delete(terms, int(np.argmax(pi)))
    return float(np.linalg.norm(terms))


def _spread(
    s: np.ndarray, c: np.ndarray, pi: np.ndarray, m: np.ndarray,
    v: np.ndarray | None = None, ls: np.ndarray | None = None,
) -> float:
    """sqrt(E_s‖c(x)(e_x − π) − m‖²), each token's deviation summed exactly (O(K²)).

    Summed as the norm of the per-token roots sqrt(s)·‖c(e_x − π) − m‖, scaled by the
    largest, so that a spread that fits a double is not lost to c² overflowing.  With
    ``v`` = s·c (:func:`_weighted`) and ``ls`` = log s, a token where s underflows or c
    overflows has root² = (v²/s)‖e_x − π‖² − 2v (e_x − π)·m (+ s‖m‖², negligible), in logs.
    """
    if v is None or ls is None:
        if not np.isfinite(c[s > 0]).all():
            return math.inf
        v = np.where(s > 0, s * c, 0.0)
        with np.errstate(divide="ignore"):
            ls = np.log(s)
    if not np.isfinite(v).all():
        return math.inf
    roots = np.zeros(pi.size)
    live = (s > 0) & np.isfinite(c)
    eye = np.eye(pi.size)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        if live.any():
            dev = c[live, None] * (eye[live] - pi) - m
            mx = np.max(np.abs(dev), axis=1)
            safe = np.where(mx > 0, mx, 1.0)
            roots[live] = np.sqrt(s[live]) * mx * np.sqrt(np.sum((dev / safe[:, None]) ** 2, axis=1))
        odd = ~live & (v != 0.0)
        if odd.any():
            e = eye[odd] - pi
            lv = np.log(np.abs(v[odd]))
            rel = np.einsum("ij,ij->i", e, e) - 2.0 * np.sign(v[odd]) * (e @ m) * np.exp(ls[odd] - lv)
            roots[odd] = np.exp(lv - 0.5 * ls[odd]) * np.sqrt(np.maximum(rel, 0.0))
        top = float(np.max(roots))
        if not math.isfinite(top):
            return math.inf
        if top == 0.0:
            return 0.0
        return top * math.sqrt(float(np.sum((roots / top) ** 2)))


def true_gradients(policy: Policy, ref: Policy) -> tuple[np.ndarray, np.ndarray]:
    r"""The exact gradients, in the logits :math:`\theta`, of both KL directions.

    .. math::

        \nabla_\theta\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}] = \pi_\theta\odot\big(k_1 - \mathbb{E}_{\pi_\theta}k_1\big),
        \quad k_1 = \log\pi_\theta - \log\pi_{\mathrm{ref}};
        \qquad
        \nabla_\theta\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta] = \pi_\theta - \pi_{\mathrm{ref}}.

    Parameters
    ----------
    policy, ref : Categorical or array_like
        :math:`\pi_\theta = \mathrm{softmax}(\theta)` and :math:`\pi_{\mathrm{ref}}`.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``(reverse_kl, forward_kl)``: the gradients of
        :math:`\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` and of
        :math:`\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> rev, fwd = true_gradients([0.0, 0.0], [0.0, 0.0])
    >>> rev.tolist(), fwd.tolist()
    ([0.0, 0.0], [0.0, 0.0])
    """
    lp, lr, _ = _triple(policy, ref, None)
    return _true(lp, lr)


def _true(lp: np.ndarray, lr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = _truth(lp, lr)
    return t.reverse, t.forward


class _Truth(NamedTuple):
    """Both true gradients as doubles and scaled (entries past a double keep their value)."""

    reverse: np.ndarray
    forward: np.ndarray
    reverse_scaled: _Scaled
    forward_scaled: _Scaled


def _truth(lp: np.ndarray, lr: np.ndarray) -> _Truth:
    pi = np.exp(lp)
    rev_s, fwd_s = _true_scaled(lp, lr)
    if float(np.min(lp)) < math.log(_DBL_MIN):  # a probability is subnormal or 0 in doubles
        return _Truth(rev_s.to_double(), fwd_s.to_double(), rev_s, fwd_s)
    return _Truth(_expected(pi, estimators.k1(lr - lp), pi), pi - np.exp(lr), rev_s, fwd_s)


@docfill(**_PARAMS)
def expected_gradient(
    option: str | CrosswalkEntry, policy: Policy, ref: Policy, sampler: Policy | None = None, lam: float = 1.0
) -> np.ndarray:
    r"""The exact expected gradient :math:`\mathbb{E}_{x\sim s}[\nabla_\theta\,\mathrm{loss}(x)]` of one option.

    .. math:: \mathbb{E}_s[g] = \sum_x s(x)\,c(x)\,(e_x - \pi_\theta)

    Parameters
    ----------
    %(option_policy_sampler_lam)s

    Returns
    -------
    numpy.ndarray
        One value per logit; the values sum to 0.

    %(tang_munos_references)s

    Examples
    --------
    >>> g = expected_gradient("k3", [0.5, 0.0, -0.5], [0.0, 0.0, 0.0])
    >>> rev, fwd = true_gradients([0.5, 0.0, -0.5], [0.0, 0.0, 0.0])
    >>> bool(np.allclose(g, fwd))
    True
    """
    setting = _setting(option, policy, ref, sampler, lam)
    if _tiny(setting.lp, setting.lr, setting.ls):  # in logs, as the gradient table's row
        return _row(*setting, _truth(setting.lp, setting.lr), sampler is None).expected_grad
    c, _ = _coef(*setting)
    return _expected(np.exp(setting.ls), c, np.exp(setting.lp), _weighted(*setting, c))


@docfill(**_PARAMS)
def gradient_spread(
    option: str | CrosswalkEntry, policy: Policy, ref: Policy, sampler: Policy | None = None, lam: float = 1.0
) -> float:
    r"""The per-sample gradient spread :math:`\sqrt{\mathbb{E}_s\|g(x) - \mathbb{E}_s g\|^2}`.

    The standard deviation of an :math:`N`-sample mean gradient is this over
    :math:`\sqrt N` (in norm).

    Parameters
    ----------
    %(option_policy_sampler_lam)s

    Returns
    -------
    float
        The spread; ``inf`` if it is past a double (its log is
        :attr:`GradientRow.log_grad_spread`), or a coefficient overflows where no closed form sums it.

    %(tang_munos_references)s

    Examples
    --------
    >>> gradient_spread("k1", [0.0, 0.0], [0.0, 0.0])
    0.7071067811865476
    """
    setting = _setting(option, policy, ref, sampler, lam)
    if _tiny(setting.lp, setting.lr, setting.ls):  # in logs, as the gradient table's row
        return _row(*setting, _truth(setting.lp, setting.lr), sampler is None).grad_spread
    c, _ = _coef(*setting)
    pi, s = np.exp(setting.lp), np.exp(setting.ls)
    return _spread(s, c, pi, _expected(s, c, pi))


@docfill(**_PARAMS)
def lambda_grad_opt(policy: Policy, ref: Policy, sampler: Policy | None = None) -> float:
    r"""The :math:`\lambda` that minimises the spread of the ``k_lambda`` gradient estimator.

    With :math:`u = e_x - \pi_\theta` and :math:`c = a - t`, :math:`a = 1 - \lambda`,
    the squared spread :math:`\operatorname{tr}\operatorname{Cov}_s(c\,u)` is a
    quadratic in :math:`a`, minimal at

    .. math::

        a^* = \frac{\operatorname{tr}\operatorname{Cov}_s(u,\ t\,u)}{\operatorname{tr}\operatorname{Cov}_s(u)}
            = \frac{\mathbb{E}_s[t\|u\|^2] - \mathbb{E}_s[t\,u]\cdot\mathbb{E}_s[u]}
                   {\mathbb{E}_s\|u\|^2 - \|\mathbb{E}_s u\|^2},
        \qquad \lambda_{\mathrm{grad}} = 1 - a^*.

    On-policy :math:`\mathbb{E}_s u = 0` and :math:`\|u\|^2 = 1 - 2\pi_x + \|\pi\|^2`.
    It is not the value's :math:`\lambda^*` (:func:`kl_core.estimation.exact.optimal_lambda`).

    Parameters
    ----------
    %(policy_sampler)s

    Returns
    -------
    float
        :math:`\lambda_{\mathrm{grad}}`; 1.0 when the sampler is a point mass
        (every :math:`\lambda` then gives the same spread).

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> lambda_grad_opt([0.0, 0.0], [0.0, 0.0])
    1.0
    """
    lp, lr, ls = _triple(policy, ref, sampler)
    return _lambda_grad(lp, lr, ls)


def _lambda_grad(lp: np.ndarray, lr: np.ndarray, ls: np.ndarray) -> float:
    if min(float(np.min(lp)), float(np.min(ls))) < _LOG_TINY:
        # the sums below lose 1 − π of a nearly one-hot policy, and past 1e-300 fall back to 1.0
        return _log_lambda_grad(lp, lr, ls)
    pi, s, t = np.exp(lp), np.exp(ls), lr - lp
    u = np.eye(pi.size) - pi  # row x is e_x − π
    eu = s @ u
    eu2 = s @ np.einsum("ij,ij->i", u, u)
    denom = eu2 - eu @ eu
    if not denom > 1e-300:
        return 1.0
    etu = (s * t) @ u
    num = (s * t) @ np.einsum("ij,ij->i", u, u) - etu @ eu
    return 1.0 - num / denom


@docfill(**_PARAMS)
def k_lambda_spread(
    policy: Policy, ref: Policy, sampler: Policy | None = None, lam: ArrayLike = 1.0
) -> np.ndarray:
    r"""The per-sample spread of the ``k_lambda`` gradient estimator at many :math:`\lambda` at once.

    With :math:`u_x = e_x - \pi_\theta`, :math:`t = \log r` and :math:`c = a - t`,
    :math:`a = 1 - \lambda`, the squared spread is a quadratic in :math:`a`:

    .. math::

        \operatorname{tr}\operatorname{Cov}_s(c\,u)
        = a^2\big(\mathbb{E}_s\|u\|^2 - \|\mathbb{E}_s u\|^2\big)
        - 2a\big(\mathbb{E}_s[t\|u\|^2] - \mathbb{E}_s[t\,u]\cdot\mathbb{E}_s u\big)
        + \mathbb{E}_s[t^2\|u\|^2] - \|\mathbb{E}_s[t\,u]\|^2,

    minimal at :func:`lambda_grad_opt`.  Equal to :func:`gradient_spread` of
    ``"k_lambda"`` at each :math:`\lambda`, for the cost of one call.

    Parameters
    ----------
    %(policy_sampler)s
    lam : array_like, default 1.0
        One or more finite :math:`\lambda`.

    Returns
    -------
    numpy.ndarray
        :math:`\sqrt{\mathbb{E}_s\|g - \mathbb{E}_s g\|^2}` at each :math:`\lambda`, shaped like ``lam``.

    References
    ----------
    Y. Tang and R. Munos, arXiv:2506.09477 (2025); J. Schulman, "Approximating KL
    Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> np.round(k_lambda_spread([0.0, 0.0], [0.0, 0.0], lam=[0.0, 1.0]), 4).tolist()  # k1's, then k3's
    [0.7071, 0.0]
    """
    lams = as_float_array(lam, "lam")
    if not np.isfinite(lams).all():
        raise ValueError("lam must be finite")
    lp, lr, ls = _triple(policy, ref, sampler)
    pi, s, t = np.exp(lp), np.exp(ls), lr - lp
    live = s > 0
    s, t = s[live], t[live]
    u = (np.eye(pi.size) - pi)[live]  # row x is e_x − π
    nu = np.einsum("ij,ij->i", u, u)
    eu, etu = s @ u, (s * t) @ u
    quad = float(s @ nu - eu @ eu)
    lin = float((s * t) @ nu - etu @ eu)
    const = float((s * t * t) @ nu - etu @ etu)
    a = 1.0 - lams
    return np.sqrt(np.maximum(a * a * quad - 2.0 * a * lin + const, 0.0))


def classify(
    grad: ArrayLike, reverse: ArrayLike, forward: ArrayLike, scale: float | None = None
) -> str:
    r"""Name what an expected gradient is: ``reverse_kl``, ``forward_kl``, ``zero`` or ``mixed``.

    Matches are tested first, relative to the true gradient itself, so a
    tiny expected gradient that equals a tiny true gradient is that gradient,
    not zero (a nearly one-hot :math:`\pi_\theta` makes
    :math:`\|\nabla\mathrm{KL}\|` as small as :math:`10^{-40}` while the
    per-sample gradients stay of order one):

    1. ``reverse_kl`` if :math:`\|\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]\| > 0` and
       :math:`\|g - \nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]\| \le 10^{-9}\,\|\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]\|`;
    2. ``forward_kl`` likewise for :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`;
    3. ``zero`` if :math:`\|g\| \le 10^{-12}\cdot\text{scale}` (rounding noise of the sums);
    4. otherwise ``mixed``.

    The tolerances are the rounding level of the sums.

    Parameters
    ----------
    grad, reverse, forward : array_like
        The expected gradient and the two true gradients (:func:`true_gradients`).
    scale : float, optional
        The size of the terms summed into ``grad``, against which "zero" is
        judged (the gradient tables pass the terms' size without the likeliest
        token's, whose entry is minus the others' sum, so a tiny but real
        gradient of a nearly one-hot policy is not called zero); by default the
        larger norm of ``reverse`` and ``forward``, or 1.

    Returns
    -------
    str
        One of ``"reverse_kl"``, ``"forward_kl"``, ``"zero"``, ``"mixed"``.

    Raises
    ------
    ValueError
        If ``reverse`` or ``forward`` does not have the shape of ``grad``, or
        ``scale`` is not finite and positive.

    References
    ----------
    Y. Tang and R. Munos, arXiv:2506.09477 (2025), for which option gives which gradient.

    Examples
    --------
    >>> classify([0.1, -0.1], [0.1, -0.1], [0.3, -0.3])
    'reverse_kl'
    >>> classify([1e-16, -1e-16], [1e-16, -1e-16], [0.3, -0.3], scale=40.0)
    'reverse_kl'
    >>> classify([1e-16, -1e-16], [2e-16, -2e-16], [0.3, -0.3], scale=40.0)
    'zero'
    """
    g = as_float_array(grad, "grad")
    r = as_float_array(reverse, "reverse")
    f = as_float_array(forward, "forward")
    if not (g.shape == r.shape == f.shape):
        raise ValueError(f"reverse and forward must have the shape of grad {g.shape}")
    if scale is not None and not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be finite and positive, got {scale!r}")
    # _norm, not np.linalg.norm: the squares of entries near 1e-171 underflow to 0, and a
    # gradient of that size was called "zero" with its cosines left out
    nr, nf = _norm(r), _norm(f)
    if nr > 0 and _norm(g - r) <= _MATCH_RTOL * nr:
        return "reverse_kl"
    if nf > 0 and _norm(g - f) <= _MATCH_RTOL * nf:
        return "forward_kl"
    ref_scale = scale if scale is not None else (max(nr, nf) or 1.0)
    if _norm(g) <= _ZERO_RTOL * ref_scale:
        return "zero"
    return "mixed"


def _classify_scaled(g: _Scaled, r: _Scaled, f: _Scaled, log_noise: float) -> str:
    """:func:`classify` on scaled vectors, whose entries may be past a double (log_noise: log of its scale)."""
    lg = g.log_norm
    for name, t in (("reverse_kl", r), ("forward_kl", f)):
        if not math.isfinite(t.log_norm) or not math.isfinite(lg):
            continue  # a zero g is not a nonzero t: ‖g − t‖ = ‖t‖
        d = g.log_scale - t.log_scale
        if abs(d) < 700.0 and _norm(g.mant * math.exp(d) - t.mant) <= _MATCH_RTOL * _norm(t.mant):
            return name
    if not math.isfinite(log_noise):
        log_noise = max(r.log_norm, f.log_norm)
        log_noise = log_noise if math.isfinite(log_noise) else 0.0
    if not math.isfinite(lg) or lg <= math.log(_ZERO_RTOL) + log_noise:
        return "zero"
    return "mixed"


def _cos(a: np.ndarray, b: np.ndarray, zero_a: bool) -> float | None:
    na, nb = _norm(a), _norm(b)
    if zero_a or na == 0.0 or nb == 0.0 or not (math.isfinite(na) and math.isfinite(nb)):
        return None
    return float(np.clip((a / na) @ (b / nb), -1.0, 1.0))  # normalised first: tiny vectors stay exact


# --------------------------------------------------------------------------- #
# The same moments in log space (probabilities far below a double's precision)
# --------------------------------------------------------------------------- #
# A log-probability under which the moments are computed in log space: below it the double
# sums lose digits of 1 − π_top (all of them at e^-37 < 2^-52), squares of entries near 1e-171
# underflow, and past e^-708 (the smallest normal double) the probabilities themselves do.
_LOG_TINY = -20.0
# The smallest normal double: a value below it has lost digits (a subnormal) or is 0.
_DBL_MIN = 2.2250738585072014e-308


def _tiny(lp: np.ndarray, lr: np.ndarray, ls: np.ndarray) -> bool:
    """Whether a probability is below e^-20, where the moments are computed in log space."""
    return min(float(np.min(lp)), float(np.min(lr)), float(np.min(ls))) < _LOG_TINY


class LogVector(NamedTuple):
    r"""A vector :math:`x` as signs and natural logs of magnitudes, also past a double's range.

    :math:`x_i = \mathrm{sign}_i\,e^{\mathrm{log\_abs}_i}`, with ``log_abs`` :math:`-\infty`
    where :math:`x_i = 0`.  The gradients of a nearly one-hot :math:`\pi_\theta` (a logit
    745 above the others) have entries below the smallest double; here they keep their value.

    Attributes
    ----------
    sign : numpy.ndarray
        −1, 0 or +1 per entry.
    log_abs : numpy.ndarray
        :math:`\log|x_i|`.
    """

    sign: np.ndarray
    log_abs: np.ndarray


class _Scaled(NamedTuple):
    """A vector ``mant · e^{log_scale}`` with max |mant| of order 1 (log_scale −inf: the zero vector)."""

    mant: np.ndarray
    log_scale: float

    @property
    def log_norm(self) -> float:
        n = _norm(self.mant)
        return self.log_scale + math.log(n) if n > 0 and math.isfinite(self.log_scale) else -math.inf

    def log_vector(self) -> LogVector:
        with np.errstate(divide="ignore"):
            la = np.log(np.abs(self.mant)) + self.log_scale
        return LogVector(np.sign(self.mant), np.where(self.mant != 0, la, -np.inf))

    def to_double(self) -> np.ndarray:
        """The entries as doubles (rounded to the nearest, subnormal or 0 past the smallest double)."""
        sign, la = self.log_vector()
        with np.errstate(under="ignore", over="ignore"):  # past a double: 0 or ±inf
            return sign * np.exp(la) + 0.0


def _norm(v: np.ndarray) -> float:
    """‖v‖ scaled by its largest entry, so squares neither underflow (1e-171²) nor overflow."""
    a = np.abs(v)
    top = float(a.max()) if a.size else 0.0
    if top == 0.0 or not math.isfinite(top):
        return top
    return top * math.sqrt(float(np.sum((a / top) ** 2)))


def _row_norms(a: np.ndarray) -> np.ndarray:
    """:func:`_norm` of each row of a matrix."""
    a = np.abs(a)
    top = np.max(a, axis=1)
    safe = np.where((top > 0) & np.isfinite(top), top, 1.0)
    with np.errstate(invalid="ignore"):
        out = safe * np.sqrt(np.sum((a / safe[:, None]) ** 2, axis=1))
    return np.where((top > 0) & np.isfinite(top), out, top)


def _lse(la: np.ndarray) -> float:
    """log Σ e^{la} (−inf for an empty or all −inf ``la``)."""
    top = float(np.max(la)) if la.size else -math.inf
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(la - top))))


def _signed_lse(sign: np.ndarray, la: np.ndarray) -> tuple[float, float]:
    """(sign, log|Σ sign·e^{la}|) of a signed sum of terms given by their logs."""
    la = np.where(sign != 0, la, -np.inf)
    top = float(np.max(la)) if la.size else -math.inf
    if not math.isfinite(top):
        return 0.0, -math.inf
    total = float(np.sum(sign * np.exp(la - top)))
    if total == 0.0:
        return 0.0, -math.inf
    return math.copysign(1.0, total), top + math.log(abs(total))


def _log_complement(lp: np.ndarray) -> np.ndarray:
    """log(1 − π_x) per token: log(−expm1(log π)) except the likeliest, whose 1 − π is the others' sum."""
    with np.errstate(divide="ignore"):
        out = np.log(-np.expm1(np.minimum(lp, 0.0)))
    if lp.size > 1:
        top = int(np.argmax(lp))
        out[top] = _lse(np.delete(lp, top))
    return out


def _log_sc(
    option: str | CrosswalkEntry, lp: np.ndarray, lr: np.ndarray, ls: np.ndarray, lam: float,
    c: np.ndarray, v: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(sign, log|s c|) per token, also where c overflows (NaN where no closed form is known).

    Where c is not a double, two closed forms: c = −dk/dt = Σ_j P_j(t) e^{jt} for the
    estimators that grow like e^t (k3, k3_pq), summed in logs at log s + j t; and
    c = w (k − k'), w = π/s, for an unclamped importance-weighted loss, so s c = π (k − k').
    """
    from kl_core.estimation._integrands import ExpPoly

    sg, lv = _log_terms(ls, c, v)
    entry = option if isinstance(option, CrosswalkEntry) else None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if entry is not None and entry.grad_mode == "k2_is":
            # s·min(w, clip)·(−t), w = π/s: w underflows (π ≪ s) or overflows (s ≪ π) in doubles
            t = lr - lp
            lw = np.minimum(lp - ls, math.log(float(entry.grad_is_clip)))  # type: ignore[arg-type]
            return -np.sign(t), np.where(t != 0, ls + lw + np.log(np.abs(t)), -np.inf)
        if entry is not None and entry.grad_mode == "autograd" and entry.importance_weighted and not entry.clamped:
            x = _k_minus_dk(entry.estimator, lr - lp)  # s·w·(k − k') = π·(k − k')
            return np.sign(x), np.where(x != 0, lp + np.log(np.abs(x)), -np.inf)
    fix = ~np.isfinite(c) | ~np.isfinite(v)
    if not fix.any():
        return sg, lv
    sg, lv = sg.astype(float), lv.copy()
    sg[fix], lv[fix] = np.nan, np.nan
    t = (lr - lp)[fix]
    key = _exp_key(option)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if key is not None and (entry is None or entry.logr_clamp is None):
            terms = ExpPoly.of(_MINUS_DK_DT_EXP[key](lam)).terms
            st, lt = np.sign(t), np.log(np.abs(t))
            logs, signs = [], []
            for k, coefs in terms:
                horner = np.full_like(t, coefs[0])  # P(t) = t^d (c_d + c_{d-1}/t + … + c_0/t^d)
                for a in coefs[1:]:
                    horner = horner * st * np.exp(-lt) + a
                d = len(coefs) - 1
                logs.append((d * lt if d else 0.0) + np.log(np.abs(horner)) + ls[fix] + k * t)
                signs.append(np.sign(horner) * st**d)
            pairs = [_signed_lse(np.array(col_s), np.array(col_l)) for col_s, col_l in zip(np.array(signs).T, np.array(logs).T, strict=True)]
            sg[fix] = [p[0] for p in pairs]
            lv[fix] = [p[1] for p in pairs]
    return sg, lv


def _log_terms(ls: np.ndarray, c: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sign, log|s c|) per token: from v = s·c where it is a normal double, else log s + log|c|."""
    with np.errstate(divide="ignore", invalid="ignore"):
        use_v = np.isfinite(v) & (np.abs(v) >= _DBL_MIN)
        lv = np.where(use_v, np.log(np.abs(v)), ls + np.log(np.abs(c)))
        sg = np.where(use_v, np.sign(v), np.sign(c))
    return sg, np.where(sg != 0, lv, -np.inf)


def _expected_scaled(lp: np.ndarray, sg: np.ndarray, lv: np.ndarray) -> _Scaled:
    """Σ_x s(x) c(x) (e_x − π) from the terms s·c given as (sign, log), scaled (:func:`_expected` in logs)."""
    k = lp.size
    vs, lvs = _signed_lse(sg, lv)  # Σ_x s c
    others = np.arange(k) != int(np.argmax(lp))
    lb = lp + lvs  # log|π_y Σ s c|
    big = max(float(np.max(lv[others])), float(np.max(lb[others])))
    if not math.isfinite(big):
        return _Scaled(np.zeros(k), -math.inf)
    mant = np.zeros(k)
    with np.errstate(invalid="ignore"):  # sign 0 times e^{−inf}
        mant[others] = np.where(sg[others] != 0, sg[others] * np.exp(lv[others] - big), 0.0) - (
            vs * np.exp(lb[others] - big) if vs != 0 else 0.0)
    mant[~others] = -np.sum(mant[others])  # the entries sum to 0
    top = float(np.max(np.abs(mant)))
    if top == 0.0:
        return _Scaled(np.zeros(k), -math.inf)
    return _Scaled(mant / top + 0.0, big + math.log(top))


def _true_scaled(lp: np.ndarray, lr: np.ndarray) -> tuple[_Scaled, _Scaled]:
    """Both true gradients scaled: π ⊙ (k1 − E k1) as Σ π k1 (e_x − π), and π − ρ."""
    k1 = lp - lr
    sg = np.sign(k1)
    with np.errstate(divide="ignore"):
        rev = _expected_scaled(lp, sg, np.where(sg != 0, lp + np.log(np.abs(k1)), -np.inf))
    top = int(np.argmax(lp))
    others = np.arange(lp.size) != top
    big = float(max(np.max(lp[others]), np.max(lr[others])))
    mant = np.zeros(lp.size)
    mant[others] = np.exp(lp[others] - big) - np.exp(lr[others] - big)
    mant[top] = -np.sum(mant[others])
    scale = float(np.max(np.abs(mant)))
    fwd = _Scaled(mant / scale + 0.0, big + math.log(scale)) if scale > 0 else _Scaled(np.zeros(lp.size), -math.inf)
    return rev, fwd


def _log_rounding_scale(lp: np.ndarray, sg: np.ndarray, lv: np.ndarray) -> float:
    """log of :func:`_rounding_scale`: ‖|s c| + π Σ|s c|‖ over all tokens but the likeliest."""
    total = _lse(np.where(sg != 0, lv, -np.inf))
    terms = np.logaddexp(np.where(sg != 0, lv, -np.inf), lp + total)
    terms = np.delete(terms, int(np.argmax(lp)))
    top = float(np.max(terms)) if terms.size else -math.inf
    if not math.isfinite(top):
        return top
    return top + math.log(_norm(np.exp(terms - top)))


def _log_spread(
    lp: np.ndarray, ls: np.ndarray, c: np.ndarray, sg: np.ndarray, lv: np.ndarray, m: _Scaled,
    exact_c: bool = True,
) -> float:
    r"""log sqrt(E_s‖c(x)(e_x − π) − m‖²), every term in logs (:func:`_spread` past a double).

    Row x of the K × K deviations is c_x u_x − m with u_x = e_x − π, whose diagonal entry
    1 − π_x is :func:`_log_complement` (the likeliest token's 1 − π is not lost to rounding).
    """
    k = lp.size
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # log|c| exactly where c is a double (k_λ's c cancels to its last digits), else from log|s c|
        exact = np.isfinite(c) & exact_c
        lc = np.where(exact, np.log(np.abs(c)), lv - ls)
        sc = np.where(exact, np.sign(c), sg)
        lc = np.where(sc != 0, lc, -np.inf)
        lu = np.broadcast_to(lp, (k, k)).copy()
        su = -np.ones((k, k))
        idx = np.arange(k)
        lu[idx, idx] = _log_complement(lp)
        su[idx, idx] = 1.0
        la = lc[:, None] + lu  # log|c_x u_xy|
        sa = sc[:, None] * su
        lm = m.log_vector()
        # each row sums to 0: the likeliest token's entry, which cancels, is minus the others'
        # (and is left out of the scale, which the others set: they may be 1e-320 beside it)
        ptop = int(np.argmax(lp))
        rest = np.arange(k) != ptop if k > 1 else np.ones(k, dtype=bool)
        big = np.maximum(np.max(np.where(sa != 0, la, -np.inf)[:, rest], axis=1),
                         float(np.max(lm.log_abs[rest])))
        safe = np.where(np.isfinite(big), big, 0.0)[:, None]
        dev = np.where(sa != 0, sa * np.exp(la - safe), 0.0) - lm.sign * np.exp(lm.log_abs - safe)
        if k > 1:
            dev[:, ptop] = -np.sum(dev[:, rest], axis=1)
        norms = _row_norms(dev)
        lroot = 0.5 * ls + safe[:, 0] + np.log(norms)
        top = int(np.argmax(ls))
        if top != int(np.argmax(lp)):
            lroot[top] = 0.5 * ls[top] + _log_top_deviation(lp, ls, c, sc, lc, top)
    if np.isnan(lroot).any():
        return math.inf
    return 0.5 * _lse(2.0 * lroot)


def _log_top_deviation(
    lp: np.ndarray, ls: np.ndarray, c: np.ndarray, sc: np.ndarray, lc: np.ndarray, top: int
) -> float:
    """log‖c_x u_x − m‖ for the sampler's likeliest token x, where u_x and m nearly cancel.

    m = Σ_z s_z c_z u_z, so c_x u_x − m = Σ_{z≠x} s_z (c_x u_x − c_z u_z), whose entry y is
    c_x (1 − s_x)[y = x] − s_y c_y [y ≠ x] + π_y Σ_{z≠x} s_z (c_z − c_x): only the other
    tokens' weights enter (with a sampler far from the policy, u_x − m lost them to rounding).
    """
    k = lp.size
    others = np.arange(k) != top
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        diff = np.where(np.isfinite(c), c - c[top], c) if math.isfinite(c[top]) else -c[top] * np.ones(k)
        ld = np.where(np.isfinite(diff), np.log(np.abs(diff)), lc)
        sd = np.sign(diff)
        d_sign, d_log = _signed_lse(sd[others], ls[others] + ld[others])  # Σ_{z≠x} s_z (c_z − c_x)
        sign = np.where(others, -sc, sc)
        la = np.where(others, ls + lc, lc + _log_complement(ls))
        lb = lp + d_log
        rest = np.arange(k) != int(np.argmax(lp))  # the entry replaced below sets no scale
        big = max(float(np.max(np.where(sign != 0, la, -np.inf)[rest])), float(np.max(lb[rest])))
        if not math.isfinite(big):
            return -math.inf
        dev = np.where(sign != 0, sign * np.exp(la - big), 0.0) + d_sign * np.exp(lb - big)
    # the entries sum to 0: the policy's likeliest token's cancels, the others' do not
    dev[~rest] = -np.sum(dev[rest])
    n = _norm(dev)
    return big + math.log(n) if n > 0 else -math.inf


def _log_lambda_grad(lp: np.ndarray, lr: np.ndarray, ls: np.ndarray) -> float:
    r""":func:`lambda_grad_opt` from its terms in logs, for probabilities below a double's precision.

    tr Cov_s(u) = Σ_y s_y (1 − s_y) (u_x − u_z = e_x − e_z), and
    tr Cov_s(u, t u) = Σ_y s_y t_y (1 − s_y) − π_y s_y (t_y − E_s t): no term cancels.
    """
    t = lr - lp
    l1s = _log_complement(ls)
    lden = _lse(ls + l1s)
    if not math.isfinite(lden):
        return 1.0
    ref = int(np.argmax(ls))
    d = t - t[ref]  # t_y − E_s t = d_y − Σ_z s_z d_z: the sampler's likeliest token adds nothing
    sd, ld = _signed_lse(np.sign(d), ls + np.log(np.abs(np.where(d != 0, d, 1.0))))
    with np.errstate(divide="ignore", invalid="ignore"):
        dt_sign, dt_log = np.sign(d), np.where(d != 0, np.log(np.abs(d)), -np.inf)
        # t_y − E_s t = d_y − D per token, D = sd e^{ld}, summed in logs
        top = np.maximum(dt_log, ld)
        safe = np.where(np.isfinite(top), top, 0.0)
        total = np.where(dt_sign != 0, dt_sign * np.exp(dt_log - safe), 0.0) - (sd * np.exp(ld - safe) if sd else 0.0)
        ps = np.sign(total)
        pl = np.where(total != 0, safe + np.log(np.abs(total)), -np.inf)
        lt = np.log(np.abs(t))
    sign = np.concatenate([np.sign(t), -ps])
    logs = np.concatenate([ls + lt + l1s, lp + ls + pl])
    sn, ln = _signed_lse(sign, logs)
    return 1.0 - sn * math.exp(ln - lden) if sn != 0 else 1.0


# --------------------------------------------------------------------------- #
# Rows and the table
# --------------------------------------------------------------------------- #
def entry_name(entry: CrosswalkEntry) -> str:
    """The row name of a crosswalk entry: ``"LIBRARY:OPTION"``, plus ``":reward"`` for a reward entry.

    Parameters
    ----------
    entry : CrosswalkEntry
        An entry with a gradient.

    Returns
    -------
    str
        E.g. ``"verl:low_var_kl"`` (loss) or ``"verl:low_var_kl:reward"``.

    Examples
    --------
    >>> from kl_core.libraries.crosswalk import lookup
    >>> entry_name(lookup("OpenRLHF", "k3", acts_on="loss"))
    'OpenRLHF:k3'
    """
    if not isinstance(entry, CrosswalkEntry):
        raise ValueError(f"entry must be a CrosswalkEntry, got {type(entry).__name__}")
    base = f"{entry.library}:{entry.option}"
    return base if entry.acts_on == "loss" else f"{base}:{entry.acts_on}"


def loss_entries() -> tuple[CrosswalkEntry, ...]:
    """Every crosswalk entry that acts on a loss, in table order.

    Returns
    -------
    tuple of CrosswalkEntry
        The entries with ``acts_on == "loss"``.
    """
    return tuple(e for e in CROSSWALK if e.acts_on == "loss")


def gradient_entries() -> tuple[CrosswalkEntry, ...]:
    """Every crosswalk entry with a gradient: the loss entries and the reward entries, in table order.

    Returns
    -------
    tuple of CrosswalkEntry
        The entries whose ``grad_mode`` is not ``"none"`` (metrics have no gradient).
    """
    return tuple(e for e in CROSSWALK if e.grad_mode != "none")


@dataclass(frozen=True)
class GradientRow:
    r"""One option's exact expected gradient, beside the two true gradients.

    Attributes
    ----------
    name : str
        ``"k1"`` … ``"k_lambda"``, or ``"LIBRARY:OPTION"`` (:func:`entry_name`).
    library, option : str or None
        The crosswalk entry's library and option; None for a basic option.
    entry : CrosswalkEntry or None
        The crosswalk entry, if any.
    coef : numpy.ndarray
        :math:`c(x)` per token (:func:`gradient_coefficients`).
    clamped : numpy.ndarray of bool
        Tokens on which a clamp (or the importance weight's clip) changes :math:`c(x)`.
    expected_grad : numpy.ndarray
        :math:`\mathbb{E}_s[g]`, one value per logit.
    cos_reverse, cos_forward : float or None
        Cosine to :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` and to
        :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`; None when either vector is zero.
    grad_spread : float
        :math:`\sqrt{\mathbb{E}_s\|g - \mathbb{E}_s g\|^2}`.
    target : str
        What ``expected_grad`` is here (:func:`classify`).
    claim : str or None
        What it is claimed to be for this sampler with clamps inactive: the
        entry's ``grad_target`` (on-policy) or ``grad_target_off_policy``, or
        :data:`BASIC_CLAIMS` on-policy; None where nothing is claimed.
    clamped_mass : float
        Probability, under the sampler, of drawing a token in ``clamped``.
    log_grad_norm : float
        :math:`\log\|\mathbb{E}_s[g]\|` (:math:`-\infty` for a zero vector), also where
        the norm is past a double (a logit 745 above the others: ``expected_grad`` is then
        0 in doubles, though the vector is not).
    log_grad_spread : float
        :math:`\log` of ``grad_spread``, also where the spread is past a double.
    """

    name: str
    library: str | None
    option: str | None
    entry: CrosswalkEntry | None
    coef: np.ndarray
    clamped: np.ndarray
    expected_grad: np.ndarray
    cos_reverse: float | None
    cos_forward: float | None
    grad_spread: float
    target: str
    claim: str | None
    clamped_mass: float
    log_grad_norm: float = math.nan
    log_grad_spread: float = math.nan

    def projection(self, direction: ArrayLike, policy_probs: ArrayLike) -> np.ndarray:
        r"""Per-token projection of the per-sample gradient on a unit direction.

        :math:`g(x)\cdot\hat u = c(x)\,(\hat u_x - \pi_\theta\cdot\hat u)`.

        Parameters
        ----------
        direction : array_like
            Any non-zero vector of length :math:`K` (it is normalised).
        policy_probs : array_like
            :math:`\pi_\theta` (e.g. :attr:`GradientTable.policy_probs`).

        Returns
        -------
        numpy.ndarray
            One value per token.
        """
        u = as_float_array(direction, "direction")
        n = float(np.linalg.norm(u))
        if u.shape != self.coef.shape or not n > 0:
            raise ValueError(f"direction must be a non-zero vector of length {self.coef.size}")
        u = u / n
        pi = as_float_array(policy_probs, "policy_probs")
        return self.coef * (u - pi @ u)


@dataclass(frozen=True)
class GradientTable:
    r"""Everything the "Gradients" views need at one setting.

    Attributes
    ----------
    policy_log_probs, ref_log_probs, sampler_log_probs : numpy.ndarray
        :math:`\log\pi_\theta`, :math:`\log\pi_{\mathrm{ref}}`, :math:`\log s`.
    on_policy : bool
        True if the sampler is the policy.
    true_reverse, true_forward : numpy.ndarray
        :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` and
        :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]` (:func:`true_gradients`).
    kl_reverse, kl_forward : float
        The two KL values.
    lam : float
        The :math:`\lambda` used by the ``k_lambda`` row.
    lam_grad_opt : float
        :func:`lambda_grad_opt` for this sampler.
    lam_value_opt : float
        The value's :math:`\lambda^*` for :math:`\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]`
        from on-policy samples (:func:`kl_core.estimation.exact.optimal_lambda`).
    rows : tuple of GradientRow
        :data:`BASIC_OPTIONS` first, then the crosswalk's loss entries.
    log_lam_value_opt : float
        :math:`\log\lambda^*` where it is computed in logs (a probability below
        :math:`e^{-20}`), also past a double; NaN otherwise (use ``lam_value_opt``).
    true_reverse_log, true_forward_log : LogVector or None
        The true gradients as signs and logs of magnitudes: their entries where
        ``true_reverse`` underflows to 0 (a logit 745 above the others).
    """

    policy_log_probs: np.ndarray
    ref_log_probs: np.ndarray
    sampler_log_probs: np.ndarray
    on_policy: bool
    true_reverse: np.ndarray
    true_forward: np.ndarray
    kl_reverse: float
    kl_forward: float
    lam: float
    lam_grad_opt: float
    lam_value_opt: float
    rows: tuple[GradientRow, ...]
    true_reverse_log: LogVector | None = None
    true_forward_log: LogVector | None = None
    log_lam_value_opt: float = math.nan

    @property
    def k(self) -> int:
        """The number of tokens."""
        return int(self.policy_log_probs.size)

    @property
    def lam_value_any(self) -> bool:
        r"""True where :math:`\pi_\theta = \pi_{\mathrm{ref}}` (every log-probability equal): every
        :math:`k_\lambda` value is then 0, so every :math:`\lambda` is the value's :math:`\lambda^*`
        (``lam_value_opt`` is 1 there, :func:`kl_core.estimation.exact.optimal_lambda`'s convention)."""
        return bool(np.array_equal(self.policy_log_probs, self.ref_log_probs))

    @property
    def policy_probs(self) -> np.ndarray:
        r""":math:`\pi_\theta`."""
        return np.exp(self.policy_log_probs)

    @property
    def sampler_probs(self) -> np.ndarray:
        """The sampler's probabilities."""
        return np.exp(self.sampler_log_probs)

    @property
    def k3_sampler_mean(self) -> float:
        r""":math:`\mathbb{E}_s[k_3]` with :math:`\log r = \log\pi_{\mathrm{ref}} - \log\pi_\theta`.

        .. math:: \mathbb{E}_s[k_3] = \sum_x s(x)\,\bigl(r(x) - 1 - \log r(x)\bigr)

        It is :math:`\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` on-policy (Schulman's blog);
        with tokens from an older policy it is in general something else.
        """
        values = estimators.k3(self.ref_log_probs - self.policy_log_probs)
        return float(np.dot(self.sampler_probs, values))

    def k_lambda_sampler_mean(self, lam: float) -> float:
        r""":math:`\mathbb{E}_s[k_\lambda]` with :math:`k_\lambda = -\log r + \lambda\,(r - 1)`.

        .. math:: \mathbb{E}_s[k_\lambda] = \sum_x s(x)\,\bigl(-\log r(x) + \lambda\,(r(x) - 1)\bigr)

        On-policy :math:`\mathbb{E}_{\pi_\theta}[r - 1] = 0`, so it is
        :math:`\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` for every :math:`\lambda`
        (Schulman's blog); with tokens from an older policy it moves with :math:`\lambda`
        by :math:`\mathbb{E}_s[r - 1]` per unit.

        Parameters
        ----------
        lam : float
            :math:`\lambda`, finite.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            If ``lam`` is not finite.
        """
        lam = check_finite(lam, "lam")
        t = self.ref_log_probs - self.policy_log_probs
        s = self.sampler_probs
        return float(np.dot(s, -t) + lam * np.dot(s, np.expm1(t)))

    @property
    def names(self) -> list[str]:
        """The row names, in order."""
        return [r.name for r in self.rows]

    def row(self, name: str) -> GradientRow:
        """The row called ``name`` (``ValueError`` listing the names if there is none).

        Parameters
        ----------
        name : str
            A row name, e.g. ``"k3"`` or ``"verl:k3+"``.

        Returns
        -------
        GradientRow
        """
        for r in self.rows:
            if r.name == name:
                return r
        raise ValueError(f"name must be one of {self.names}, got {name!r}")


def _row(
    option: str | CrosswalkEntry,
    lp: np.ndarray,
    lr: np.ndarray,
    ls: np.ndarray,
    lam: float,
    true: _Truth,
    on_policy: bool,
) -> GradientRow:
    pi, s = np.exp(lp), np.exp(ls)
    c, clamped = _coef(option, lp, lr, ls, lam)
    v = _weighted(option, lp, lr, ls, lam, c)
    m = _expected(s, c, pi, v)
    rev, fwd = true.reverse, true.forward
    tiny = _tiny(lp, lr, ls)
    sg, lv = _log_sc(option, lp, lr, ls, lam, c, v) if tiny else (c, c)
    if tiny and not (np.isnan(lv).any() or np.isposinf(lv).any()):
        # in logs: entries near 1e-171 have squares that underflow, and past 1e-308 the
        # probabilities themselves do; a nonzero gradient was called "zero"
        g = _expected_scaled(lp, sg, lv)
        target = _classify_scaled(g, true.reverse_scaled, true.forward_scaled, _log_rounding_scale(lp, sg, lv))
        zero = target == "zero"
        if min(float(np.min(lp)), float(np.min(ls))) < math.log(_DBL_MIN):
            m = g.to_double()
        cos_r = _cos(g.mant, true.reverse_scaled.mant, zero)
        cos_f = _cos(g.mant, true.forward_scaled.mant, zero)
        log_norm = g.log_norm
        # an importance weight π/s under- or overflows in c: its log|s c| is exact instead
        weighted = isinstance(option, CrosswalkEntry) and (
            option.grad_mode == "k2_is" or option.importance_weighted)
        log_spread = _log_spread(lp, ls, c, sg, lv, g, exact_c=not weighted)
        with np.errstate(over="ignore", under="ignore"):
            spread = float(np.exp(log_spread))
    else:  # probabilities a double holds to 9 digits (or an overflow no closed form sums): as before
        noise = _rounding_scale(s, c, pi, v)
        target = classify(m, rev, fwd, scale=noise if math.isfinite(noise) and noise > 0 else None)
        zero = target == "zero"
        cos_r, cos_f = _cos(m, rev, zero), _cos(m, fwd, zero)
        n = _norm(m)
        log_norm = math.log(n) if n > 0 else -math.inf
        spread = _spread(s, c, pi, m, v, ls)
        log_spread = math.log(spread) if spread > 0 else -math.inf
    if isinstance(option, CrosswalkEntry):
        name, lib, opt, entry = entry_name(option), option.library, option.option, option
        claim = option.grad_target if on_policy else option.grad_target_off_policy
    else:
        name, lib, opt, entry = option, None, None, None
        claim = BASIC_CLAIMS[option] if on_policy else None
    return GradientRow(
        name=name,
        library=lib,
        option=opt,
        entry=entry,
        coef=c,
        clamped=clamped,
        expected_grad=m,
        cos_reverse=cos_r,
        cos_forward=cos_f,
        grad_spread=spread,
        target=target,
        claim=claim,
        clamped_mass=float(s[clamped].sum()),
        log_grad_norm=log_norm,
        log_grad_spread=log_spread,
    )


@docfill(**_PARAMS)
def gradient_row(
    option: str | CrosswalkEntry, policy: Policy, ref: Policy, sampler: Policy | None = None, lam: float = 1.0
) -> GradientRow:
    r"""One option's row: expected gradient, cosines to the true gradients, spread, classification.

    Parameters
    ----------
    option : str or CrosswalkEntry
        As in :func:`gradient_coefficients`; reward entries are accepted too
        (their score-function gradient).
    %(policy_sampler_lam)s

    Returns
    -------
    GradientRow

    %(tang_munos_references)s
    """
    setting = _setting(option, policy, ref, sampler, lam)
    return _row(*setting, _truth(setting.lp, setting.lr), sampler is None)


def gradient_table(
    policy: Policy,
    ref: Policy,
    sampler: Policy | None = None,
    lam: float | None = None,
    entries: Sequence[CrosswalkEntry] | None = None,
) -> GradientTable:
    r"""Every option's exact expected gradient, cosines and spread at one setting.

    Parameters
    ----------
    policy, ref : Categorical or array_like
        :math:`\pi_\theta` and :math:`\pi_{\mathrm{ref}}` over the same :math:`K \ge 2` tokens.
    sampler : Categorical or array_like, optional
        The policy that drew the tokens (an older policy :math:`\pi_{\mathrm{old}}`);
        :math:`\pi_\theta` if omitted.
    lam : float, optional
        :math:`\lambda` of the ``k_lambda`` row; :func:`lambda_grad_opt` if omitted.
    entries : sequence of CrosswalkEntry, optional
        The library rows; the crosswalk's loss entries (:func:`loss_entries`) if omitted.

    Returns
    -------
    GradientTable
        The true gradients, both optimal :math:`\lambda`, and one
        :class:`GradientRow` per basic option and per entry.

    Raises
    ------
    ValueError
        If a distribution is not categorical, the numbers of tokens differ,
        ``lam`` is not finite or an entry has no gradient.

    References
    ----------
    Y. Tang and R. Munos, "On a few pitfalls in KL divergence gradient estimation
    for RL", arXiv:2506.09477 (2025); J. Schulman, "Approximating KL Divergence"
    (2020), http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> t = gradient_table([1.0, 0.0, -1.0], [0.0, 0.0, 0.0])
    >>> t.row("k2").target, t.row("k3").target, t.row("k1").target
    ('reverse_kl', 'forward_kl', 'zero')
    """
    lp, lr, ls = _triple(policy, ref, sampler)
    on_policy = sampler is None or bool(np.array_equal(lp, ls))
    lam_grad = _lambda_grad(lp, lr, ls)
    lam_used = lam_grad if lam is None else check_finite(lam, "lam")
    chosen = loss_entries() if entries is None else tuple(_option(e) for e in entries)
    true = _truth(lp, lr)
    rows = [_row(o, lp, lr, ls, lam_used, true, on_policy) for o in BASIC_OPTIONS]
    rows += [_row(e, lp, lr, ls, lam_used, true, on_policy) for e in chosen]  # type: ignore[arg-type]
    pi, ref_p = np.exp(lp), np.exp(lr)
    log_lam_value = _log_lambda_value(lp, lr) if min(float(np.min(lp)), float(np.min(lr))) < _LOG_TINY else None
    if log_lam_value is None:
        log_lam_value = math.nan
    return GradientTable(
        policy_log_probs=lp,
        ref_log_probs=lr,
        sampler_log_probs=ls,
        on_policy=on_policy,
        true_reverse=true.reverse,
        true_forward=true.forward,
        kl_reverse=_kl(pi, ref_p, lr - lp),
        kl_forward=_kl(ref_p, pi, lp - lr),
        lam=lam_used,
        lam_grad_opt=lam_grad,
        lam_value_opt=_lambda_value(lp, lr),
        rows=tuple(rows),
        true_reverse_log=true.reverse_scaled.log_vector(),
        true_forward_log=true.forward_scaled.log_vector(),
        log_lam_value_opt=log_lam_value,
    )


def _kl(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> float:
    """KL[a‖b] = Σ_a k3(t) + Σ_{a=0} b, with t = log b − log a: every term ≥ 0.

    Σ a·(r − 1) = Σ_{a>0} b − 1 vanishes only if a has b's support in floating
    point; where a underflows to 0 (a logit far below the others) the k3 sum
    misses that mass, which is added back.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        k3 = np.where(a > 0, a * estimators.k3(t), 0.0)
    return float(np.sum(k3) + np.sum(b[a == 0]))


def _lambda_value(lp: np.ndarray, lr: np.ndarray) -> float:
    from kl_core.estimation.exact import optimal_lambda

    if min(float(np.min(lp)), float(np.min(lr))) < _LOG_TINY:
        log_value = _log_lambda_value(lp, lr)
        if log_value is not None:
            with np.errstate(over="ignore", under="ignore"):
                return float(np.exp(log_value))
    return optimal_lambda(Categorical(tuple(lp.tolist())), Categorical(tuple(lr.tolist())))


def _log_lambda_value(lp: np.ndarray, lr: np.ndarray) -> float | None:
    r"""log λ* = log (KL[ρ‖π] + KL[π‖ρ]) − log χ²(ρ‖π) from terms that are all ≥ 0.

    KL[ρ‖π] + KL[π‖ρ] = Σ (ρ − π)(log ρ − log π) and χ²(ρ‖π) = Σ (ρ − π)²/π: at a logit 745
    above the others λ* ≈ 1e-319 or less, which the double sums gave as 0.  None if ρ = π.
    """
    gap = np.abs(lr - lp)
    with np.errstate(divide="ignore"):
        ldiff = np.maximum(lp, lr) + np.log(-np.expm1(-gap))  # log|ρ − π|
        num = _lse(ldiff + np.log(gap))
        den = _lse(2.0 * ldiff - lp)
    if not (math.isfinite(num) and math.isfinite(den)):
        return None
    return num - den


# --------------------------------------------------------------------------- #
# The spread of an N-sample estimate, projected on a direction
# --------------------------------------------------------------------------- #
@docfill(**_PARAMS)
def projection_moments(
    row: GradientRow, table: GradientTable, direction: ArrayLike, n: int
) -> tuple[float, float]:
    r"""Exact mean and standard deviation of an :math:`N`-sample mean gradient projected on a direction.

    .. math:: \mu = \mathbb{E}_s[g\cdot\hat u], \qquad \sigma = \sqrt{\mathrm{Var}_s(g\cdot\hat u)/N}

    Parameters
    ----------
    row : GradientRow
        A row of ``table``.
    table : GradientTable
        Its table (for the policy and the sampler).
    direction : array_like
        The direction, e.g. ``table.true_reverse``.
    n : int
        Samples per estimate.

    Returns
    -------
    (float, float)
        :math:`(\mu, \sigma)`.

    %(tang_munos_references)s
    """
    n = check_positive_int(n, "n")
    proj = row.projection(direction, table.policy_probs)
    s = table.sampler_probs
    live = s > 0
    mean = float(s[live] @ proj[live])
    var = float(s[live] @ (proj[live] - mean) ** 2)
    return mean, math.sqrt(var / n)


@docfill(**_PARAMS)
def sample_projection_means(
    row: GradientRow,
    table: GradientTable,
    direction: ArrayLike,
    n: int,
    repeats: int,
    seed: int = 0,
) -> np.ndarray:
    r"""Monte Carlo draws of the :math:`N`-sample mean gradient projected on a direction.

    Each draw samples :math:`N` tokens from the sampler (as multinomial counts
    :math:`n_x`) and returns :math:`\tfrac1N\sum_x n_x\,g(x)\cdot\hat u`.

    Parameters
    ----------
    row : GradientRow
        A row of ``table``.
    table : GradientTable
        Its table.
    direction : array_like
        The direction, e.g. ``table.true_reverse``.
    n : int
        Samples per estimate.
    repeats : int
        Number of estimates.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray
        ``repeats`` projected estimates; their mean and standard deviation
        approach :func:`projection_moments`.

    %(tang_munos_references)s
    """
    n = check_positive_int(n, "n")
    repeats = check_positive_int(repeats, "repeats")
    proj = row.projection(direction, table.policy_probs)
    s = table.sampler_probs
    s = s / s.sum()
    counts = np.random.default_rng(seed).multinomial(n, s, size=repeats)
    live = s > 0
    return counts[:, live] @ proj[live] / n
