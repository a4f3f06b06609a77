r"""The training picture: where exact expected-gradient ascent with each KL option ends.

Maximise :math:`J(\theta) = \mathbb{E}_{\pi_\theta}[R] - \beta\cdot(\text{KL loss})` over
the logits of a categorical policy, on-policy, with the KL term's gradient
replaced by the option's exact expected gradient
(:mod:`kl_core.gradients.expected`, :math:`\mathbb{E}[g] = \pi_\theta\odot(c - \mathbb{E}_{\pi_\theta}c)`
on-policy).  The ascent direction in the logits is

.. math::

    F(\theta) = \pi_\theta\odot\big(h - \mathbb{E}_{\pi_\theta}h\big), \qquad h(x) = R(x) - \beta\,c(x),

and :math:`c(x)` depends on :math:`\theta` only through :math:`\log\pi_\theta(x)`.
So an interior fixed point is a policy at which :math:`h` takes the same value
on every token.  For the options whose expected gradient is
:math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` (``k2``, ``k1_score``,
``k_lambda``, verl's ``+`` options, …) it is :math:`\pi\propto\pi_{\mathrm{ref}}e^{R/\beta}`;
for those whose gradient is :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`
(``k3`` as a loss) it is :math:`\pi_i = \beta\pi_{\mathrm{ref},i}/(c - R_i)`
(:func:`analytic_optima`).  ``k1`` as a loss has expected gradient 0, so the
ascent maximises the reward alone and drifts to the best-reward token: no
interior fixed point.  A clamp can do the same to a single token: where verl's
``low_var_kl`` clamps :math:`k_3` at 10 its gradient is 0, so a token pushed
below :math:`\pi_{\mathrm{ref}}/13.6 \approx 0.0735\,\pi_{\mathrm{ref}}` (:math:`e^t - 1 - t = 10` at
:math:`t = \log\pi_{\mathrm{ref}}/\pi_\theta \approx 2.61`, :func:`kl_core.doctor.diagnosis.clamp_sides`)
feels no pull back.

How the end is found (:func:`training_run`):

1. ``steps`` recorded steps :math:`\theta \leftarrow \theta + \eta F(\theta)`, each
   coordinate damped by :math:`1/(1 + \eta\beta\pi_x\max(\partial c/\partial\ell_x, 0))`
   so that stiff coordinates do not overshoot (the fixed points are unchanged);
2. from their end, per-token Newton steps towards a common level of :math:`h`
   for the tokens that something pulls back (:math:`\partial c/\partial\ell > 0`),
   trust-region steps in the ascent's direction for the others, and a fast fall
   towards 0 for a token below :math:`e^{-30}` that is pushed down with nothing
   pulling it back (its mass no longer moves anything);
3. only if that does not settle (a heavy token held by the others' mass, a
   kink): the damped steps of 1. continued with a step size doubled or cut by
   step doubling (one step against two half steps, agreeing to :math:`10^{-4}`
   in every probability), so the run follows the same path faster, then
   Newton's method on the coupled system :math:`h(x) = \mathbb{E}_\pi h` with
   backtracking; the better of 2. and 3. is kept.

The run reports an interior fixed point when :math:`\max_x|h(x) - \mathbb{E}_\pi h|`
reaches :math:`10^{-10}(1 + \max|R| + \beta)` (the 1 is :math:`1024(\max|R| + \beta)` where
that is smaller); no fixed point, and which tokens
went to 0, when the remaining tokens settle while the others fall below
:math:`e^{-700}`; and no fixed point, with the reason, otherwise (e.g. a token
that keeps crossing a kink of :math:`|\log r|` or a clamp's edge).

The scale of the reward does not matter beyond that tolerance: the fixed points depend on
:math:`R/\beta` alone, and with :math:`\eta` in units of :math:`1/R` so does the path
(:math:`\eta F` and the damping :math:`\eta\beta\,\partial c/\partial\ell` are unchanged when
:math:`R`, :math:`\beta` and :math:`1/\eta` are multiplied by the same number).  The run is
computed with :math:`R` and :math:`\beta` multiplied by a power of 2 that brings
:math:`\max(\max|R|, \beta)` to [1, 2) (exact in doubles, so the bits are those of the
caller's scale): R = (1e200, −1e200, 0) with β = 1e198 ends where R = (100, −100, 0) with
β = 1 does, and R = ±1e308 does not overflow.

Source: the estimators are J. Schulman's, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; the gradient pitfalls are Y. Tang and
R. Munos, "On a few pitfalls in KL divergence gradient estimation for RL",
arXiv:2506.09477 (2025).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core._docfill import docfill
from kl_core.gradients._docstrings import SECTIONS
from kl_core.gradients.expected import (
    BASIC_OPTIONS,
    Policy,
    _coef,
    _log_probs,
    _log_softmax,
    _option,
    entry_name,
    loss_entries,
)
from kl_core.libraries.crosswalk import CrosswalkEntry
from kl_core.validation import (
    InputError,
    Message,
    as_float_array,
    check_finite,
    check_positive,
    check_positive_int,
)

__all__ = [
    "MAX_REWARD_RANGE_OVER_BETA",
    "TrainingRun",
    "analytic_optima",
    "training_run",
    "training_runs",
]

MAX_REWARD_RANGE_OVER_BETA = 500.0
r"""Largest :math:`(\max R - \min R)/\beta` accepted: beyond it the optima put probabilities
below :math:`e^{-500}` on some tokens, which a double cannot tell from 0."""

# A token whose log-probability falls below this is at probability 0 for a double.
_LOG_FLOOR = -700.0
# Below this log-probability a token that is pushed down with nothing restoring it is let fall.
_LOG_NEGLIGIBLE = -30.0
_FALL = 50.0
# Step doubling: one step and two half steps must agree to this in every probability.
_STEP_TOL = 1e-4
# Continue with the adaptive steps until max |h − E h| is below this (relative), then Newton.
_HANDOVER = 1e-5
# Largest change of a token's log-probability in one per-token or Newton step.
_TRUST = 2.0
# Per-token steps without a better residual before the slower, surer continuation takes over.
_PATIENCE = 60


@dataclass(frozen=True)
class TrainingRun:
    r"""Exact expected-gradient ascent on :math:`\mathbb{E}_\pi[R] - \beta\cdot\text{loss}` for one option.

    Attributes
    ----------
    name : str
        The option's row name (as in :class:`kl_core.gradients.expected.GradientRow`).
    steps : numpy.ndarray
        The ascent steps at which ``probs`` was recorded (0 is the start).
    probs : numpy.ndarray
        Token probabilities along the ascent, one row per recorded step.
    lr : float
        The step size :math:`\eta` of the recorded ascent (in the logits).
    fixed_point : numpy.ndarray or None
        Where the ascent ends, if it ends at an interior fixed point; None otherwise.
    residual : float
        :math:`\max_x |h(x) - \mathbb{E}_\pi h|` at the end over the tokens that
        did not go to 0 (0 at a fixed point).
    vanished : tuple of int
        Tokens the ascent drives to probability 0.
    note : str
        How it ended, in a sentence.
    limit : numpy.ndarray
        Where the run ends: the fixed point; or, without one, the point the
        ascent approaches with the ``vanished`` tokens at 0 (e.g. the best-reward
        token for ``k1`` as a loss), or its last iterate if it did not settle.
    """

    name: str
    steps: np.ndarray
    probs: np.ndarray
    lr: float
    fixed_point: np.ndarray | None
    residual: float
    vanished: tuple[int, ...]
    note: str
    limit: np.ndarray

    @property
    def end(self) -> np.ndarray:
        """The last recorded probabilities."""
        return self.probs[-1]


@docfill(**SECTIONS)
def analytic_optima(ref: Policy, reward: ArrayLike, beta: float) -> tuple[np.ndarray, np.ndarray]:
    r"""The maximisers of :math:`\mathbb{E}_\pi[R] - \beta\,\mathrm{KL}` for both KL directions.

    .. math::

        \pi^{\mathrm{rev}} \propto \pi_{\mathrm{ref}}\,e^{R/\beta}
        \quad\text{for } \mathrm{KL}[\pi\|\pi_{\mathrm{ref}}];
        \qquad
        \pi^{\mathrm{fwd}}_i = \frac{\beta\,\pi_{\mathrm{ref},i}}{c - R_i},\ c > \max R,\ \sum_i \pi^{\mathrm{fwd}}_i = 1
        \quad\text{for } \mathrm{KL}[\pi_{\mathrm{ref}}\|\pi].

    :math:`c` is found by bisecting :math:`d = c - \max R` in
    :math:`[\beta\pi_{\mathrm{ref},j}/2,\ \beta]`, :math:`j = \arg\max R`, on
    which the normalising sum falls strictly from above 1 to at most 1.

    Parameters
    ----------
    ref : Categorical or array_like
        :math:`\pi_{\mathrm{ref}}`, or its logits.
    reward : array_like
        :math:`R`, one finite value per token.
    beta : float
        :math:`\beta > 0`.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``(reverse_kl, forward_kl)`` optimal probabilities.

    %(tang_munos_references)s

    Examples
    --------
    >>> rev, fwd = analytic_optima([0.0, 0.0], [0.0, 0.0], 1.0)
    >>> rev.tolist(), fwd.tolist()
    ([0.5, 0.5], [0.5, 0.5])
    """
    lr = _log_probs(ref, "ref")
    r = _reward(reward, lr.size)
    beta = check_positive(beta, "beta")
    return _optima(lr, r, beta)


def _reward(reward: ArrayLike, k: int) -> np.ndarray:
    r = np.atleast_1d(as_float_array(reward, "reward"))
    if r.shape != (k,):
        raise ValueError(f"reward must have one value per token ({k}), got {r.size}")
    if not np.isfinite(r).all():
        raise ValueError("reward must be finite")
    return r


def _optima(lr: np.ndarray, r: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    # The optima depend on R/β only: work at a unit scale (a power of 2, exact), so that
    # max R − R does not overflow at R = ±1e308.
    r, beta, _ = _unit_scale(r, beta)
    rev = np.exp(_log_softmax(lr + r / beta))
    ref_p = np.exp(lr)
    gap = r.max() - r  # >= 0

    def excess(d: float) -> float:
        return math.fsum((beta * ref_p / (d + gap)).tolist()) - 1.0

    # excess falls strictly from > 0 at lo to <= 0 at hi: bisect to the last bit.
    lo, hi = beta * ref_p[int(np.argmax(r))] / 2.0, beta
    while True:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        lo, hi = (mid, hi) if excess(mid) > 0.0 else (lo, mid)
    fwd = beta * ref_p / (hi + gap)
    return rev, fwd / fwd.sum()


def _unit_scale(r: np.ndarray, beta: float) -> tuple[np.ndarray, float, int]:
    r"""``(R·2^n, β·2^n, n)``: the reward and β at a unit scale, :math:`\max(\max|R|, \beta)\cdot 2^n` in [1, 2).

    The ascent and the optima depend on :math:`R` and :math:`\beta` through :math:`R/\beta`
    and the step size times :math:`R` (:math:`\eta F`, :math:`\eta` in units of 1/R), so they
    are computed at this scale, where nothing overflows (:math:`\max R - \min R` at
    R = ±1e308, :math:`\beta\,\partial c/\partial\ell` at β = 1e198).  A power of 2 is exact
    in doubles: the arithmetic gives the bits it gives at the caller's scale, times :math:`2^n`.
    A constant reward moves nothing (only :math:`R - \mathbb{E}_\pi R` enters the ascent); one
    beside which β·c is lost to rounding (β below :math:`2^{-60}\max|R|`) is taken as 0.
    """
    top = float(np.abs(r).max())
    if r.max() == r.min() and not beta * 2.0**60 >= top:
        r, top = np.zeros_like(r), 0.0
    n = 1 - math.frexp(max(top, beta))[1]
    with np.errstate(under="ignore"):  # a reward below 2^-1074 of β is 0 beside it
        return np.ldexp(r, n), math.ldexp(beta, n), n


def _unscaled(x: float, n: int) -> float:
    """x·2^-n: a figure at the unit scale of :func:`_unit_scale` in the caller's units (inf past a double)."""
    try:
        return math.ldexp(x, -n)
    except OverflowError:
        return math.copysign(math.inf, x)


# --------------------------------------------------------------------------- #
# The ascent
# --------------------------------------------------------------------------- #
class _Ascent:
    """h = R − βc, its slope in ℓ and the ascent step for one option, on-policy."""

    def __init__(self, opt: str | CrosswalkEntry, lr: np.ndarray, r: np.ndarray, beta: float, lam: float, n: int):
        """``r`` and ``beta`` at the unit scale 2^n of :func:`_unit_scale`, and so ``tol``, ``handover``, ``cap``."""
        self.opt, self.lr, self.r, self.beta, self.lam = opt, lr, r, beta, lam
        # The tolerances are 1e-10·(1 + max|R| + β) and 1e-5·(1 + tol/1e-10) in the caller's units,
        # whose 1 is 2^n here; where max|R| + β < 1/1024 the 1 is 1024·(max|R| + β) instead (a fixed
        # 1e-10 would pass any policy at a reward of 1e-12), so that such a run is the same at any scale.
        size = float(np.abs(r).max()) + beta
        one = min(_unscaled(1.0, -n), 1024.0 * size)
        self.tol = 1e-10 * (one + float(np.abs(r).max()) + beta)
        self.handover = _HANDOVER * (one + self.tol / 1e-10)
        # The largest step size (in 1/R): 1e200 in the caller's units, within 1e150 to 1e250 here.
        self.cap = min(max(_unscaled(1e200, n), 1e150), 1e250)

    def h_slope(self, ell: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """h(ℓ) and ∂c/∂ℓ by a backward difference (ℓ − d stays a log-probability)."""
        c = _coef(self.opt, ell, self.lr, ell, self.lam)[0]
        d = 1e-6 * (1.0 + np.abs(ell))
        c_down = _coef(self.opt, ell - d, self.lr, ell - d, self.lam)[0]
        with np.errstate(invalid="ignore", over="ignore"):
            slope = (c - c_down) / d
        return self.r - self.beta * c, _finite(slope, 1e300)

    def state(self, ell: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(h, slope, dev = h − E_π h, residual over the tokens not at 0)."""
        h, slope = self.h_slope(ell)
        dev = h - _mean(ell, h)
        sinking = (ell < _LOG_FLOOR) & (dev < 0)
        live = ~sinking
        res = float(np.max(np.abs(dev[live]))) if live.any() else 0.0
        return h, slope, dev, res

    def step(self, theta: np.ndarray, size: float) -> np.ndarray:
        """One damped ascent step of the given size from logits ``theta``."""
        ell = _log_softmax(theta)
        h, slope = self.h_slope(ell)
        pi = np.exp(ell)
        with np.errstate(over="ignore", invalid="ignore"):
            move = size * pi * (h - _mean(ell, h)) / (1.0 + size * self.beta * pi * np.maximum(slope, 0.0))
        # No logit moves by more than _FALL in one step: large steps are only safe for tiny π.
        return theta + _finite(move, _FALL)


def _finite(x: np.ndarray, bound: float) -> np.ndarray:
    """NaN to 0 and everything else into [−bound, bound] (cheaper than numpy.nan_to_num in a loop)."""
    return np.clip(np.where(np.isnan(x), 0.0, x), -bound, bound)


def _mean(ell: np.ndarray, h: np.ndarray) -> float:
    pi = np.exp(ell)
    live = (pi > 0) & np.isfinite(h)
    return float(pi[live] @ h[live] / pi[live].sum()) if live.any() else 0.0


def _falling(ell: np.ndarray, dev: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """Negligible tokens pushed down with nothing pulling them back (∂c/∂ℓ ≤ 0)."""
    return (ell < _LOG_NEGLIGIBLE) & (ell >= _LOG_FLOOR) & (dev < 0) & (slope <= 0)


def _drop(theta: np.ndarray, falling: np.ndarray) -> np.ndarray:
    ell = _log_softmax(theta)
    return np.maximum(np.where(falling, ell - _FALL, ell), 2 * _LOG_FLOOR)


def _continue(a: _Ascent, theta: np.ndarray, eta: float, max_steps: int) -> np.ndarray:
    """Adaptive semi-implicit steps (step doubling) until the residual is small."""
    size = eta
    best, since = math.inf, 0
    for _ in range(max_steps):
        ell = _log_softmax(theta)
        _, slope, dev, res = a.state(ell)
        if res <= a.handover:
            break
        best, since = (res, 0) if res < best else (best, since + 1)
        if since > 4 * _PATIENCE:  # chattering across a kink or a clamp's edge
            break
        falling = _falling(ell, dev, slope)
        if falling.any():
            theta = _drop(theta, falling)
        full = a.step(theta, size)
        half = a.step(a.step(theta, size / 2), size / 2)
        err = float(np.max(np.abs(np.exp(_log_softmax(full)) - np.exp(_log_softmax(half)))))
        if err <= _STEP_TOL:
            theta, size = _log_softmax(half), min(size * 2.0, a.cap)
        else:
            size /= 4.0
            if size < 1e-12 * eta:
                break
    return _log_softmax(theta)


def _per_token(a: _Ascent, ell: np.ndarray, eta: float, max_iter: int) -> np.ndarray:
    """Per-token Newton steps towards a common level, for the tokens that have a restoring slope.

    A token with ∂c/∂ℓ > 0 takes Δℓ = (h − κ')/(β ∂c/∂ℓ), the common level κ'
    chosen so that the steps keep Σ π = 1 to first order; a token without one
    moves by the trust region's size the way the ascent pushes it, and falls
    by up to 50 once negligible.  Stops at the rounding level, or when the
    residual has not improved for a while (the caller then tries harder).
    """
    h, slope, dev, res = a.state(ell)
    best, best_ell, since = res, ell, 0
    for _ in range(max_iter):
        if res <= a.tol or not math.isfinite(res):
            return ell
        pi = np.exp(ell)
        stiff = a.beta * slope
        restoring = (stiff > 1e-12 / eta) & np.isfinite(stiff) & np.isfinite(h)
        step = np.where(dev > 0, _TRUST, -_TRUST)
        # A negligible token with nothing restoring it may move fast: down by up to 50, or
        # up by up to 50 but no higher than e^-30, where it starts to matter again.
        negligible = (ell < _LOG_NEGLIGIBLE) & ~restoring
        fast = np.where(dev < 0, -_FALL, np.clip(_LOG_NEGLIGIBLE - ell, _TRUST, _FALL))
        step = np.where(negligible, fast, step)
        if restoring.any():
            kappa = _mean(ell, h)
            w = pi[restoring] / stiff[restoring]
            free = float(pi[~restoring] @ step[~restoring]) if (~restoring).any() else 0.0
            delta = (float(w @ (h[restoring] - kappa)) + free) / float(w.sum())
            step[restoring] = np.clip((h[restoring] - kappa - delta) / stiff[restoring], -_TRUST, _TRUST)
        moving = bool((negligible & (ell >= _LOG_FLOOR) | negligible & (dev > 0)).any())
        ell = _log_softmax(np.maximum(_log_softmax(ell + _finite(step, _FALL)), 2 * _LOG_FLOOR))
        h, slope, dev, res = a.state(ell)
        if res < best or moving:  # a negligible token on its way is progress, though the residual waits for it
            best, best_ell, since = res, ell, 0
        else:
            since += 1
            if since > _PATIENCE:
                break
    return best_ell


def _newton_step(ell: np.ndarray, h: np.ndarray, a: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Least-squares Newton step in the logits of the active tokens for dev = h − E_π h = 0.

    With π renormalised over the active tokens and a = ∂h/∂ℓ per token,
    ∂dev_i/∂θ_m = a_i δ_im − a_i π_m − π_m (dev_m + a_m − E_π a)
    (singular along the all-ones direction: adding a constant to the logits
    changes nothing).
    """
    pi = np.exp(ell[active])
    pi = pi / pi.sum()
    ha, aa = h[active], a[active]
    dev = ha - pi @ ha
    jac = np.diag(aa) - np.outer(aa, pi) - np.outer(np.ones_like(aa), pi * (dev + aa - pi @ aa))
    step = np.zeros(ell.shape)
    step[active] = np.linalg.lstsq(jac, -dev, rcond=None)[0]
    return step


def _newton(a: _Ascent, ell: np.ndarray, max_iter: int) -> np.ndarray:
    """Newton on h = E_π h over the tokens not at 0, with backtracking on the 2-norm of dev."""
    h, slope, dev, res = a.state(ell)
    for _ in range(max_iter):
        if res <= a.tol or not math.isfinite(res):
            break
        active = ~((ell < _LOG_FLOOR) & (dev < 0)) & (ell > _LOG_FLOOR)
        dh = -a.beta * slope
        if active.sum() < 2 or not (np.isfinite(dh[active]).all() and np.isfinite(h[active]).all()):
            break
        step = _newton_step(ell, h, dh, active)
        size = float(np.max(np.abs(step)))
        if not size > 0:
            break
        step *= min(1.0, _TRUST / size)
        norm = float(np.linalg.norm(dev[active]))
        for _ in range(40):
            trial = _log_softmax(ell + step)
            t = a.state(trial)
            if float(np.linalg.norm(t[2][active])) < norm:
                break
            step *= 0.5
        else:
            break
        ell, (h, slope, dev, res) = trial, t
    return ell


@docfill(**SECTIONS)
def training_run(
    option: str | CrosswalkEntry,
    policy: Policy,
    ref: Policy,
    reward: ArrayLike,
    beta: float,
    *,
    steps: int = 400,
    lr: float | None = None,
    lam: float = 1.0,
    max_steps: int = 600,
) -> TrainingRun:
    r"""Follow exact expected-gradient ascent for one option and say where it ends.

    See the module docstring for the ascent and how its end is found.

    Parameters
    ----------
    option : str or CrosswalkEntry
        One of :data:`kl_core.gradients.expected.BASIC_OPTIONS`, a ``"LIBRARY:OPTION"``
        loss entry, or any crosswalk entry with a gradient (a reward entry
        enters through its score function).
    policy : Categorical or array_like
        The starting policy, or its logits.
    ref : Categorical or array_like
        :math:`\pi_{\mathrm{ref}}`, or its logits.
    reward : array_like
        :math:`R`, one value per token.
    beta : float
        :math:`\beta > 0`, with :math:`(\max R - \min R)/\beta \le` :data:`MAX_REWARD_RANGE_OVER_BETA`.
    steps : int, default 400
        Recorded ascent steps.
    lr : float, optional
        Step size :math:`\eta` of the recorded steps, in units of :math:`1/R` (the step is
        :math:`\eta F`); :math:`1/(\max R - \min R + \beta)` if omitted.
    lam : float, default 1.0
        :math:`\lambda` of ``k_lambda``.
    max_steps : int, default 600
        Cap on the per-token steps after the recorded ones (twice as many
        for the continuation that follows when those do not settle).

    Returns
    -------
    TrainingRun

    Raises
    ------
    ValueError
        If an argument is out of range (the message names it).

    %(tang_munos_references)s

    Examples
    --------
    >>> run = training_run("k2", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 1.0)
    >>> rev, _ = analytic_optima([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 1.0)
    >>> bool(np.allclose(run.fixed_point, rev, rtol=1e-9))
    True
    """
    opt = _option(option)
    lp0 = _log_probs(policy, "policy")
    lr_ = _log_probs(ref, "ref")
    if lr_.size != lp0.size:
        raise ValueError(f"ref must have the policy's {lp0.size} tokens, got {lr_.size}")
    r = _reward(reward, lp0.size)
    beta = check_positive(beta, "beta")
    lam = check_finite(lam, "lam")
    steps = check_positive_int(steps, "steps")
    max_steps = check_positive_int(max_steps, "max_steps")
    # At the unit scale (a power of 2, exact): the run is the same for (R, β) and (cR, cβ).
    r_unit, beta_unit, n = _unit_scale(r, beta)
    spread = float(r_unit.max() - r_unit.min())
    if spread > 0.0 and (beta_unit == 0.0 or spread / beta_unit > MAX_REWARD_RANGE_OVER_BETA):
        raise InputError(
            "beta must be at least (max R - min R)/{ratio} = {least} for this reward, got {beta}: "
            "a smaller β puts probabilities below {floor} on some tokens",
            ratio=format(MAX_REWARD_RANGE_OVER_BETA, "g"),
            least=format(_unscaled(spread / MAX_REWARD_RANGE_OVER_BETA, n), ".4g"), beta=format(beta, "g"),
            floor="e^-500",
        )
    # η multiplies F = π(h − E h), h in the reward's units: η·2^-n at the unit scale.
    if lr is None:
        eta_unit = 1.0 / (spread + beta_unit)
        eta = _unscaled(eta_unit, -n)
    else:
        eta = check_positive(lr, "lr")
        eta_unit = min(_unscaled(eta, n), sys.float_info.max)
    name = entry_name(opt) if isinstance(opt, CrosswalkEntry) else opt
    a = _Ascent(opt, lr_, r_unit, beta_unit, lam, n)

    theta = lp0.copy()
    probs = np.empty((steps + 1, lp0.size))
    probs[0] = np.exp(lp0)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for i in range(1, steps + 1):
            theta = a.step(theta, eta_unit)
            probs[i] = np.exp(_log_softmax(theta))
        ell = _per_token(a, _log_softmax(theta), eta_unit, max_steps)
        _, slope, dev, residual = a.state(ell)
        if not residual <= a.tol:
            other = _newton(a, _continue(a, theta, eta_unit, 2 * max_steps), 200)
            o_slope, o_dev, o_res = a.state(other)[1:]
            if o_res < residual:
                ell, slope, dev, residual = other, o_slope, o_dev, o_res
    return _verdict(
        name, np.arange(steps + 1), probs, eta, ell, slope, dev, residual, a.tol, n, _gradient_jump(opt)
    )


#: Why a run may not settle, by where the option's gradient jumps (:func:`_gradient_jump`).
_UNSETTLED: dict[str | None, Callable[..., Message]] = {
    "clamp": lambda **kw: Message(
        "no fixed point found: token(s) {stuck} have not settled (max |h − E h| = {residual}) "
        "within the step budget; this option's loss has a clamp, and a token can keep crossing "
        "the clamp's edge, where its gradient jumps, instead of stopping", **kw),
    "kink": lambda **kw: Message(
        "no fixed point found: token(s) {stuck} have not settled (max |h − E h| = {residual}) "
        "within the step budget; this option's loss has a kink at log r = 0 (|log r|), and a "
        "token can keep crossing it, where its gradient jumps, instead of stopping", **kw),
    None: lambda **kw: Message(
        "no fixed point found: token(s) {stuck} have not settled (max |h − E h| = {residual}) "
        "within the step budget; this option's gradient has no jump, so a longer run may "
        "settle them", **kw),
}


def _gradient_jump(opt: str | CrosswalkEntry) -> str | None:
    """Where the option's gradient jumps: ``"clamp"``, ``"kink"`` (|log r|), or None (nowhere)."""
    if not isinstance(opt, CrosswalkEntry) or opt.grad_mode in ("k2", "k2_is"):
        return None  # BASIC_OPTIONS are smooth; a k2 gradient (w = 1 on-policy, under any clip) too
    if opt.clamped:
        return "clamp"
    return "kink" if opt.estimator == "abs" else None


def _verdict(
    name: str,
    record: np.ndarray,
    probs: np.ndarray,
    eta: float,
    ell: np.ndarray,
    slope: np.ndarray,
    dev: np.ndarray,
    residual: float,
    tol: float,
    n: int,
    jump: str | None,
) -> TrainingRun:
    """How the run ended; ``dev``, ``residual`` and ``tol`` at the unit scale 2^n of :func:`_unit_scale`.

    ``jump`` is where the option's gradient jumps (:func:`_gradient_jump`), for the note on a run that did not settle.
    """
    gone = (ell < _LOG_FLOOR) & (dev < 0)
    vanished = tuple(int(i) for i in np.flatnonzero(gone))
    kept = np.flatnonzero(~gone).tolist()
    limit = np.where(gone, 0.0, np.exp(ell))
    limit = limit / limit.sum()
    settled, residual = residual <= tol, _unscaled(residual, n)  # in the reward's units from here
    if settled and not vanished:
        note = Message("interior fixed point: h = R − βc is the same on every token")
        return TrainingRun(name, record, probs, eta, limit, residual, (), note, limit)
    if settled:
        note = Message(
            "no interior fixed point: the ascent drives token(s) {vanished} to probability 0 "
            "(nothing in this option's KL gradient holds them up), and the mass ends on token(s) {kept}",
            vanished=list(vanished), kept=kept,
        )
        return TrainingRun(name, record, probs, eta, None, residual, vanished, note, limit)
    stuck = np.flatnonzero(~gone & (np.abs(dev) > tol)).tolist()
    note = _UNSETTLED[jump](stuck=stuck, residual=format(residual, ".3g"))
    return TrainingRun(name, record, probs, eta, None, residual, vanished, note, limit)


@docfill(**SECTIONS)
def training_runs(
    policy: Policy,
    ref: Policy,
    reward: ArrayLike,
    beta: float,
    options: Sequence[str | CrosswalkEntry] | None = None,
    *,
    steps: int = 400,
    lr: float | None = None,
    lam: float = 1.0,
) -> dict[str, TrainingRun]:
    r"""Run :func:`training_run` for several options (by default every row of the gradient table).

    Parameters
    ----------
    policy, ref : Categorical or array_like
        The starting policy and :math:`\pi_{\mathrm{ref}}`.
    reward : array_like
        :math:`R`.
    beta : float
        :math:`\beta > 0`.
    options : sequence, optional
        Options as in :func:`training_run`; :data:`kl_core.gradients.expected.BASIC_OPTIONS`
        and :func:`kl_core.gradients.expected.loss_entries` if omitted.
    steps : int, default 400
        Recorded ascent steps per option.
    lr : float, optional
        Step size; see :func:`training_run`.
    lam : float, default 1.0
        :math:`\lambda` of ``k_lambda``.

    Returns
    -------
    dict of str to TrainingRun
        Keyed by row name, in order.

    %(tang_munos_references)s
    """
    chosen = list(BASIC_OPTIONS) + list(loss_entries()) if options is None else list(options)
    runs = [training_run(o, policy, ref, reward, beta, steps=steps, lr=lr, lam=lam) for o in chosen]
    return {run.name: run for run in runs}
