r"""What the libraries' clamps do to a KL estimate, and what a sign error does, by exact sums.

RL libraries clamp the per-token KL value, the log-ratio, or both (see
:data:`kl_core.libraries.crosswalk.CROSSWALK`):

* verl ``low_var_kl`` (``k3``): :math:`\log r \in [-20, 20]`, then the value to
  :math:`[-10, 10]`;
* OpenRLHF ``compute_approx_kl`` (``k1``/``k2``/``k3``): the value to :math:`[-10, 10]`,
  and for ``k3`` also :math:`\log r \le 10`;
* verl's ``actor/ppo_kl`` metric (``k1``): :math:`\log r \in [-20, 20]`.

A clamp leaves the estimate alone while every sampled token's log-ratio is
moderate, and biases it once the policies have drifted far enough apart that
some tokens fall outside.  For a categorical next-token distribution (the
language-model case) every expectation is an exact finite sum over the
vocabulary, so this module computes, with no sampling at all,

.. math::

    \mathbb{E}_{x\sim s}\big[\tilde k(x)\big] = \sum_{x} s(x)\,\tilde k(x),
    \qquad
    \tilde k(x) = \operatorname{clip}_{V}\!\Big(k\big(\operatorname{clip}_{L}(\log r(x))\big)\Big),
    \qquad \log r = \log o(x) - \log s(x),

where :math:`s` is the sampler, :math:`o` the other policy, :math:`k` the
entry's estimator, :math:`L` and :math:`V` its log-ratio and value clamps
(:func:`kl_core.libraries.crosswalk.evaluate` is the single implementation of
:math:`\tilde k`).  Beside it: the unclamped mean :math:`\mathbb{E}_s[k(\log r)]`,
the exact KL in the entry's claimed direction, :math:`\mathrm{KL}[s\|o] =
\sum_x s(x)(\log s(x) - \log o(x))`, and the probability that a sampled token
hits a clamp, :math:`P_s(\log r \notin L \text{ or } k(\operatorname{clip}_L\log r) \notin V)`.

Drift paths
-----------
One policy drifts along a path :math:`p_\theta = \mathrm{softmax}(\ell_0 + \theta v)`
away from a fixed anchor :math:`p_0` (:class:`kl_core.estimation.paths.DistributionPath`).  Which of
the entry's two roles drifts follows the entry (:func:`drifting_role`): when
the *other* policy is the reference model (the RLHF/GRPO penalty, both reward
and loss), the sampling policy drifts away from the fixed reference; otherwise
(PPO's drift metric, sampler :math:`\pi_{\mathrm{old}}`) the policy being
updated, the *other* role, drifts away from the fixed sampler.

========  ==========================================================  ================
key       path                                                        θ range
========  ==========================================================  ================
peaked    8 tokens; the anchor gives token 7 log-prob −22.09; θ adds     0 … 30
          to that token's logit only (:data:`PEAKED`)
logit     :data:`kl_core.estimation.paths.PATHS` ``"logit"``: 5 tokens, mass moved  0 … 3
          from likely to unlikely tokens
========  ==========================================================  ================

The ``peaked`` path is the case the clamps were written for: fine-tuning makes
a token that the reference model considers all but impossible
(:math:`\pi_{\mathrm{ref}} \approx 2.6\times10^{-10}`) the policy's favourite.
Its log-ratio then leaves :math:`[-10, 10]` at :math:`\theta \approx 10` and
:math:`[-20, 20]` at :math:`\theta \approx 22`, so every clamp above bites.
It is defined here rather than in :data:`kl_core.estimation.paths.PATHS` because its
log-ratios of −22 would swamp the f-divergence views that use those paths.

Sign errors
-----------
:func:`token_expectations` gives, for one sampler/other pair, the exact means
of the per-token formulas behind the four questions of the "approx_kl in
practice" page: the right k1 (sampler − other) and its sign error
(other − sampler, whose mean is :math:`-\mathrm{KL}[s\|o]`), k3 with the right
ratio :math:`r = o/s` and with the flipped ratio :math:`s/o` (whose mean is
:math:`\chi^2(s\|o) - \mathrm{KL}[s\|o]`, not a KL), k2, ``k3_pq`` and the share
of tokens on which k1 is negative.

Source: the estimators are J. Schulman's, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; the clamps are the libraries' (below).

References
----------
J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
Y. Tang and R. Munos, "On a few pitfalls in KL divergence gradient estimation
for RL", arXiv:2506.09477 (2025).
Clamps as read in verl ``verl/trainer/ppo/core_algos.py::kl_penalty_forward``
and OpenRLHF ``openrlhf/models/utils.py::compute_approx_kl``; see
:data:`kl_core.libraries.crosswalk.CROSSWALK` (``verified_in``) for the versions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation import estimators
from kl_core.estimation.distributions import Categorical
from kl_core.estimation.paths import PATHS, DistributionPath
from kl_core.libraries.evaluation import evaluate
from kl_core.libraries.registry import CROSSWALK
from kl_core.libraries.schema import CrosswalkEntry
from kl_core.validation import as_float_array, check_finite, check_positive_int

__all__ = [
    "CLAMP_PATHS",
    "DEMO_ENTRIES",
    "PEAKED",
    "PEAKED_TOKEN",
    "ClampCurve",
    "ClampPoint",
    "TokenBreakdown",
    "TokenExpectations",
    "clamp_curve",
    "clamp_point",
    "clamp_tokens",
    "drifting_role",
    "entry_by_id",
    "entry_id",
    "roles_at",
    "token_expectations",
]

# The anchor of the peaked path: a Zipf-like head of seven tokens and one token
# the anchor (the reference model) gives log-prob -22.09; θ raises that
# token's logit only.
_PEAKED_LOGITS0 = (2.0, 1.0, 0.5, 0.0, -1.0, -2.0, -3.0, -19.5)
_PEAKED_DIRECTION = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
PEAKED_TOKEN: int = _PEAKED_DIRECTION.index(1.0)
"""The peaked path's rare token (counting from 0): the one token whose logit θ raises."""


def _fisher(logits: tuple[float, ...], direction: tuple[float, ...]) -> float:
    """Fisher information of θ at 0 along softmax(ℓ0 + θv): Var_{p0}(v)."""
    p0 = Categorical(logits).probs
    v = np.asarray(direction)
    return float(p0 @ v**2 - (p0 @ v) ** 2)


PEAKED = DistributionPath(
    key="peaked",
    name="Rare token becomes likely",
    theta_latex=rf"\theta = \ell_{PEAKED_TOKEN} - \ell_{{0,{PEAKED_TOKEN}}}",  # math only: no words to translate
    family_latex=rf"p_\theta = \mathrm{{softmax}}(\ell_0 + \theta e_{PEAKED_TOKEN}),\ \ell_0 = ("
    + ", ".join(f"{v:g}" for v in _PEAKED_LOGITS0)
    + ")",
    fisher=_fisher(_PEAKED_LOGITS0, _PEAKED_DIRECTION),
    theta_max=30.0,
    make=lambda th: Categorical(
        tuple(a + th * b for a, b in zip(_PEAKED_LOGITS0, _PEAKED_DIRECTION, strict=True))
    ),
)
"""The drift path on which every library clamp bites (see the module docstring)."""

CLAMP_PATHS: dict[str, DistributionPath] = {"peaked": PEAKED, "logit": PATHS["logit"]}
"""Paths :func:`clamp_curve` accepts: ``"peaked"`` (this module) and ``"logit"`` (:mod:`kl_core.estimation.paths`)."""

DEMO_ENTRIES: tuple[str, ...] = (
    "verl:low_var_kl:loss",
    "OpenRLHF:k1:reward",
    "OpenRLHF:k2:reward",
    "OpenRLHF:k3:reward",
    "verl:actor/ppo_kl:metric",
    "TRL:k3:reward",
)
"""Entry ids (:func:`entry_id`) of the clamp demo: every clamped kind, and TRL's unclamped k3."""


# --------------------------------------------------------------------------- #
# Entries
# --------------------------------------------------------------------------- #


def entry_id(entry: CrosswalkEntry) -> str:
    r"""The id ``"library:option:acts_on"`` of a crosswalk entry, unique in :data:`CROSSWALK`.

    The id names one per-token formula :math:`\tilde k(x)` of the module
    docstring (estimator and clamps) together with where its value acts.

    Parameters
    ----------
    entry : CrosswalkEntry
        A row of :data:`kl_core.libraries.crosswalk.CROSSWALK`.

    Returns
    -------
    str
        E.g. ``"verl:low_var_kl:loss"``.

    Examples
    --------
    >>> entry_id(entry_by_id("OpenRLHF:k3:reward"))
    'OpenRLHF:k3:reward'
    """
    if not isinstance(entry, CrosswalkEntry):
        raise ValueError(f"entry must be a CrosswalkEntry, got {type(entry).__name__}")
    return f"{entry.library}:{entry.option}:{entry.acts_on}"


_BY_ID: dict[str, CrosswalkEntry] = {entry_id(e): e for e in CROSSWALK}


def entry_by_id(eid: str) -> CrosswalkEntry:
    r"""The crosswalk entry with id ``eid`` (see :func:`entry_id`): its per-token :math:`\tilde k(x)`.

    Parameters
    ----------
    eid : str
        ``"library:option:acts_on"``, exactly as :func:`entry_id` writes it.

    Returns
    -------
    CrosswalkEntry

    Raises
    ------
    ValueError
        If no entry has that id; the message shows the form and an example.
    """
    if eid not in _BY_ID:
        raise ValueError(
            f"eid must be 'library:option:acts_on' of a crosswalk entry, e.g. "
            f"'verl:low_var_kl:loss', got {eid!r}"
        )
    return _BY_ID[eid]


def _entry(entry: CrosswalkEntry | str) -> CrosswalkEntry:
    e = entry_by_id(entry) if isinstance(entry, str) else entry
    if not isinstance(e, CrosswalkEntry):
        raise ValueError(f"entry must be a CrosswalkEntry or an entry id, got {entry!r}")
    if e.estimator == "full":
        raise ValueError(
            f"entry {entry_id(e)!r} is the exact full-vocabulary KL: it has no clamps and no "
            "per-token estimator to clamp"
        )
    if e.importance_weighted:
        raise ValueError(
            f"entry {entry_id(e)!r} is importance-weighted: it needs a third policy, which a "
            "two-policy drift path does not have"
        )
    return e


def drifting_role(entry: CrosswalkEntry | str) -> str:
    """Which of the entry's two policies moves along a drift path.

    Parameters
    ----------
    entry : CrosswalkEntry or str
        An entry or its id.

    Returns
    -------
    str
        ``"sampler"`` when the other policy is the reference model (the policy
        that samples drifts away from a fixed reference: RLHF/GRPO penalties),
        else ``"other"`` (PPO drift metrics: the updated policy drifts away
        from the fixed sampler :math:`\\pi_{\\mathrm{old}}`).

    Examples
    --------
    >>> drifting_role("verl:low_var_kl:loss"), drifting_role("verl:actor/ppo_kl:metric")
    ('sampler', 'other')
    """
    e = _entry(entry)
    return "sampler" if e.other.lower().startswith("reference") else "other"


def _path(path: str) -> DistributionPath:
    if path not in CLAMP_PATHS:
        raise ValueError(f"path must be one of {sorted(CLAMP_PATHS)}, got {path!r}")
    return CLAMP_PATHS[path]


def roles_at(
    entry: CrosswalkEntry | str, path: str, theta: float
) -> tuple[Categorical, Categorical]:
    r"""The sampler and the other policy of ``entry`` at drift ``theta`` along ``path``.

    Parameters
    ----------
    entry : CrosswalkEntry or str
        An entry or its id.
    path : {"peaked", "logit"}
        A key of :data:`CLAMP_PATHS`.
    theta : float
        Drift, :math:`0 \le \theta \le` the path's ``theta_max``.

    Returns
    -------
    (Categorical, Categorical)
        ``(sampler, other)``: :math:`(p_\theta, p_0)` if :func:`drifting_role`
        is ``"sampler"``, else :math:`(p_0, p_\theta)`.

    Raises
    ------
    ValueError
        If ``path`` is unknown or ``theta`` is not in ``[0, theta_max]``.
    """
    pth = _path(path)
    th = check_finite(theta, "theta")
    if not 0.0 <= th <= pth.theta_max:
        raise ValueError(
            f"theta must be in [0, {pth.theta_max:g}] for path {path!r}, got {theta!r}"
        )
    anchor, moved = pth.base, pth.at(th)
    if drifting_role(entry) == "sampler":
        return moved, anchor  # type: ignore[return-value]
    return anchor, moved  # type: ignore[return-value]


# --------------------------------------------------------------------------- #
# Exact per-token breakdown
# --------------------------------------------------------------------------- #


def _outside(x: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    if bounds is None:
        return np.zeros(x.shape, dtype=bool)
    return (x < bounds[0]) | (x > bounds[1])


def _dot(p: np.ndarray, v: np.ndarray) -> float:
    """Σ p·v, exactly rounded, with 0·inf treated as 0 (a token the sampler never draws)."""
    live = p > 0
    return math.fsum((p[live] * v[live]).tolist())


@dataclass(frozen=True)
class TokenBreakdown:
    r"""Every token of the vocabulary with what the library computes on it.

    Attributes
    ----------
    sampler_probs, other_probs : numpy.ndarray
        :math:`s(x)` and :math:`o(x)` for each token :math:`x`.
    logr : numpy.ndarray
        :math:`\log r = \log o(x) - \log s(x)`, before any clamp.
    raw : numpy.ndarray
        The estimator on the unclamped log-ratio, :math:`k(\log r)`.
    value : numpy.ndarray
        What the library computes, clamps included (:func:`kl_core.libraries.crosswalk.evaluate`).
    logr_hit, value_hit : numpy.ndarray of bool
        Whether the token's log-ratio is outside the log-ratio clamp, and
        whether the value (after the log-ratio clamp) is outside the value clamp.
    kl : float
        The exact KL in the entry's claimed direction, :math:`\mathrm{KL}[s\|o]`.
    """

    sampler_probs: np.ndarray
    other_probs: np.ndarray
    logr: np.ndarray
    raw: np.ndarray
    value: np.ndarray
    logr_hit: np.ndarray
    value_hit: np.ndarray
    kl: float

    @property
    def hit(self) -> np.ndarray:
        """Tokens on which any clamp is active."""
        return self.logr_hit | self.value_hit

    @property
    def mean(self) -> float:
        r""":math:`\mathbb{E}_s[\tilde k]`, the exact mean of the library's (clamped) value."""
        return _dot(self.sampler_probs, self.value)

    @property
    def unclamped_mean(self) -> float:
        r""":math:`\mathbb{E}_s[k(\log r)]`, the same estimator without clamps."""
        return _dot(self.sampler_probs, self.raw)

    @property
    def hit_prob(self) -> float:
        """Probability that a token drawn from the sampler hits a clamp."""
        return _dot(self.sampler_probs, self.hit.astype(np.float64))

    @property
    def logr_hit_prob(self) -> float:
        """Probability that a sampled token's log-ratio is clamped."""
        return _dot(self.sampler_probs, self.logr_hit.astype(np.float64))

    @property
    def value_hit_prob(self) -> float:
        """Probability that a sampled token's value is clamped."""
        return _dot(self.sampler_probs, self.value_hit.astype(np.float64))


def clamp_tokens(
    entry: CrosswalkEntry | str, logp_sampler: ArrayLike, logp_other: ArrayLike
) -> TokenBreakdown:
    r"""The library's per-token value on every token of a categorical pair, clamps marked.

    Parameters
    ----------
    entry : CrosswalkEntry or str
        An entry of :data:`kl_core.libraries.crosswalk.CROSSWALK`, or its id; not the
        ``"full"`` KL and not importance-weighted.
    logp_sampler, logp_other : array_like, 1-D
        Normalised log-probabilities of every token under the sampler and the
        other policy (each must satisfy :math:`\sum_x e^{\log p(x)} = 1` to
        within 1e-9).

    Returns
    -------
    TokenBreakdown
        Per-token values and the exact means (``mean``, ``unclamped_mean``,
        ``kl``, ``hit_prob``).

    Raises
    ------
    ValueError
        If the entry cannot be evaluated on two policies, or the log-probs are
        not 1-D, finite, of equal length and normalised (the message names the
        parameter).

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> import numpy as np
    >>> b = clamp_tokens("OpenRLHF:k1:reward", np.log([0.5, 0.5]), np.log([0.5, 0.5]))
    >>> b.mean, b.kl, b.hit_prob
    (0.0, 0.0, 0.0)
    """
    e = _entry(entry)
    ls = _normalised(logp_sampler, "logp_sampler")
    lo = _normalised(logp_other, "logp_other")
    if ls.shape != lo.shape:
        raise ValueError(
            f"logp_other must have the shape of logp_sampler {ls.shape}, got {lo.shape}"
        )
    s, o = np.exp(ls), np.exp(lo)
    with np.errstate(over="ignore"):
        logr = lo - ls
        raw = estimators.evaluate(e.estimator, logr)
        clipped = logr if e.logr_clamp is None else np.clip(logr, *e.logr_clamp)
        before_value_clamp = estimators.evaluate(e.estimator, clipped)
        value = evaluate(e, ls, lo)
    kl = _dot(s, ls - lo)
    return TokenBreakdown(
        sampler_probs=s,
        other_probs=o,
        logr=logr,
        raw=raw,
        value=value,
        logr_hit=_outside(logr, e.logr_clamp),
        value_hit=_outside(before_value_clamp, e.value_clamp),
        kl=kl,
    )


def _normalised(x: ArrayLike, name: str) -> np.ndarray:
    arr = as_float_array(x, name)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D array of log-probabilities, got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (every token needs log-prob > -inf)")
    total = math.fsum(np.exp(arr).tolist())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(
            f"{name} must be normalised log-probabilities (sum of exp = 1), got sum {total:.12g}"
        )
    return arr


# --------------------------------------------------------------------------- #
# Along a drift path
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class ClampPoint:
    r"""Exact figures of one entry at one drift :math:`\theta`.

    Attributes
    ----------
    theta : float
        Drift along the path.
    kl : float
        Exact KL in the entry's claimed direction, :math:`\mathrm{KL}[s\|o]`.
    mean : float
        Exact mean of the library's clamped per-token value.
    unclamped_mean : float
        Exact mean of the same estimator without clamps.
    hit_prob, logr_hit_prob, value_hit_prob : float
        Probability that a sampled token hits any clamp, the log-ratio clamp,
        the value clamp.
    """

    theta: float
    kl: float
    mean: float
    unclamped_mean: float
    hit_prob: float
    logr_hit_prob: float
    value_hit_prob: float

    @property
    def bias(self) -> float:
        """``mean - kl``: the total bias of the library's value for its claimed KL."""
        return self.mean - self.kl

    @property
    def clamp_effect(self) -> float:
        """``mean - unclamped_mean``: the part of the bias due to the clamps alone."""
        return self.mean - self.unclamped_mean

    @property
    def relative_bias(self) -> float:
        """``bias / kl``; nan when the KL is 0."""
        return self.bias / self.kl if self.kl > 0 else math.nan


def clamp_point(entry: CrosswalkEntry | str, path: str, theta: float) -> ClampPoint:
    r"""Exact clamped mean, unclamped mean, KL and clamp-hit probability at one :math:`\theta`.

    Parameters
    ----------
    entry : CrosswalkEntry or str
        An entry or its id (e.g. ``"verl:low_var_kl:loss"``).
    path : {"peaked", "logit"}
        A key of :data:`CLAMP_PATHS`.
    theta : float
        Drift, in ``[0, theta_max]`` of the path.

    Returns
    -------
    ClampPoint

    Raises
    ------
    ValueError
        If the entry, the path or ``theta`` is not usable (the message names it).

    Examples
    --------
    >>> pt = clamp_point("OpenRLHF:k1:reward", "peaked", 30.0)
    >>> round(pt.kl, 3), round(pt.mean, 3)   # KL ≈ 22 but every token's k1 is capped at 10
    (22.077, 9.993)
    """
    sampler, other = roles_at(entry, path, theta)
    b = clamp_tokens(entry, sampler.log_probs, other.log_probs)
    return ClampPoint(
        theta=float(theta),
        kl=b.kl,
        mean=b.mean,
        unclamped_mean=b.unclamped_mean,
        hit_prob=b.hit_prob,
        logr_hit_prob=b.logr_hit_prob,
        value_hit_prob=b.value_hit_prob,
    )


@dataclass(frozen=True)
class ClampCurve:
    r"""The figures of :class:`ClampPoint` on a grid of :math:`\theta`.

    Attributes
    ----------
    entry_id : str
        The entry, ``"library:option:acts_on"``.
    path : str
        The path key.
    drifting : str
        ``"sampler"`` or ``"other"`` (:func:`drifting_role`).
    theta, kl, mean, unclamped_mean, hit_prob, logr_hit_prob, value_hit_prob : numpy.ndarray
        One value per grid point, as in :class:`ClampPoint`.
    """

    entry_id: str
    path: str
    drifting: str
    theta: np.ndarray
    kl: np.ndarray
    mean: np.ndarray
    unclamped_mean: np.ndarray
    hit_prob: np.ndarray
    logr_hit_prob: np.ndarray
    value_hit_prob: np.ndarray

    @property
    def bias(self) -> np.ndarray:
        """``mean - kl`` at each grid point."""
        return self.mean - self.kl

    def first_hit(self, prob: float = 1e-3) -> float:
        """The smallest grid :math:`\\theta` at which the clamp-hit probability reaches ``prob``; nan if never."""
        idx = np.flatnonzero(self.hit_prob >= prob)
        return float(self.theta[idx[0]]) if idx.size else math.nan


def clamp_curve(entry: CrosswalkEntry | str, path: str = "peaked", *, n: int = 121) -> ClampCurve:
    r"""Exact clamped and unclamped means, KL and clamp-hit probability along a path.

    Evaluates :func:`clamp_point` at ``n`` equally spaced :math:`\theta` from 0
    to the path's ``theta_max``.

    Parameters
    ----------
    entry : CrosswalkEntry or str
        An entry or its id.
    path : {"peaked", "logit"}, default "peaked"
        A key of :data:`CLAMP_PATHS`.
    n : int, default 121
        Grid points, at least 2.

    Returns
    -------
    ClampCurve

    Raises
    ------
    ValueError
        If the entry or the path is unknown, or ``n < 2``.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.

    Examples
    --------
    >>> c = clamp_curve("verl:low_var_kl:loss", "peaked", n=31)
    >>> float(c.theta[-1]), round(float(c.mean[-1]), 3), round(float(c.kl[-1]), 3)
    (30.0, 10.0, 22.077)
    """
    e = _entry(entry)
    pth = _path(path)
    n = check_positive_int(n, "n")
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    thetas = np.linspace(0.0, pth.theta_max, n)
    pts = [clamp_point(e, path, float(t)) for t in thetas]

    def col(name: str) -> np.ndarray:
        return np.array([getattr(p, name) for p in pts])

    return ClampCurve(
        entry_id=entry_id(e),
        path=path,
        drifting=drifting_role(e),
        theta=thetas,
        kl=col("kl"),
        mean=col("mean"),
        unclamped_mean=col("unclamped_mean"),
        hit_prob=col("hit_prob"),
        logr_hit_prob=col("logr_hit_prob"),
        value_hit_prob=col("value_hit_prob"),
    )


# --------------------------------------------------------------------------- #
# Sign errors
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class TokenExpectations:
    r"""Exact means, over tokens drawn from the sampler, of the right and the wrong formulas.

    With :math:`s` the sampler, :math:`o` the other policy and
    :math:`\log r = \log o - \log s`:

    Attributes
    ----------
    kl_sampler_other : float
        :math:`\mathrm{KL}[s\|o] = \sum_x s(x)\,(\log s(x) - \log o(x))`.
    kl_other_sampler : float
        :math:`\mathrm{KL}[o\|s]`, the other direction.
    sampler_minus_other : float
        :math:`\mathbb{E}_s[\log s - \log o]`: k1, right; equals ``kl_sampler_other``.
    other_minus_sampler : float
        :math:`\mathbb{E}_s[\log o - \log s] = -\mathrm{KL}[s\|o]`: the sign error.
    k2 : float
        :math:`\mathbb{E}_s[\tfrac12(\log r)^2]`, biased for the KL.
    k3 : float
        :math:`\mathbb{E}_s[(r-1)-\log r]` with :math:`r = o/s`: equals ``kl_sampler_other``.
    k3_flipped : float
        The same formula with the ratio upside down, :math:`r' = s/o`:
        :math:`\mathbb{E}_s[(r'-1)-\log r'] = \chi^2(s\|o) - \mathrm{KL}[s\|o]`, not a KL.
    k3_pq : float
        :math:`\mathbb{E}_s[r\log r-(r-1)] = \mathrm{KL}[o\|s]`.
    k1_negative_share : float
        :math:`P_s(\log s - \log o < 0)`: the probability that a sampled token's k1 is negative.
    k1_negative_tokens : int
        How many tokens of the vocabulary have a negative k1 (whatever their probability).
    tokens : int
        The size of the vocabulary.
    """

    kl_sampler_other: float
    kl_other_sampler: float
    sampler_minus_other: float
    other_minus_sampler: float
    k2: float
    k3: float
    k3_flipped: float
    k3_pq: float
    k1_negative_share: float
    k1_negative_tokens: int
    tokens: int


def token_expectations(sampler: Categorical, other: Categorical) -> TokenExpectations:
    r"""Exact means of the right and the common wrong per-token KL formulas.

    Every figure is a finite sum :math:`\sum_x s(x)\,g(x)` over the vocabulary;
    see :class:`TokenExpectations` for each :math:`g`.

    Parameters
    ----------
    sampler : Categorical
        The policy that generated the tokens (:math:`s`).
    other : Categorical
        The policy it is compared with (:math:`o`), over the same tokens.

    Returns
    -------
    TokenExpectations

    Raises
    ------
    ValueError
        If either argument is not a :class:`~kl_core.estimation.distributions.Categorical`
        or their vocabularies differ in size.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html
    (section on the direction of the ratio); seed notes, "KL 方向与采样分布".

    Examples
    --------
    >>> from kl_core.estimation.paths import PATHS
    >>> old, new = PATHS["logit"].base, PATHS["logit"].at(1.0)
    >>> t = token_expectations(old, new)
    >>> round(t.sampler_minus_other, 6) == round(-t.other_minus_sampler, 6) == round(t.kl_sampler_other, 6)
    True
    """
    for name, d in (("sampler", sampler), ("other", other)):
        if not isinstance(d, Categorical):
            raise ValueError(f"{name} must be a Categorical, got {type(d).__name__}")
    if sampler.k != other.k:
        raise ValueError(f"other must have the sampler's {sampler.k} tokens, got {other.k}")
    ls, lo = sampler.log_probs, other.log_probs
    s, o = np.exp(ls), np.exp(lo)
    logr = lo - ls
    return TokenExpectations(
        kl_sampler_other=_dot(s, ls - lo),
        kl_other_sampler=_dot(o, lo - ls),
        sampler_minus_other=_dot(s, estimators.k1(logr)),
        other_minus_sampler=_dot(s, logr),
        k2=_dot(s, estimators.k2(logr)),
        k3=_dot(s, estimators.k3(logr)),
        k3_flipped=_dot(s, estimators.k3(-logr)),
        k3_pq=_dot(s, estimators.k3_pq(logr)),
        k1_negative_share=_dot(s, (estimators.k1(logr) < 0).astype(np.float64)),
        k1_negative_tokens=int(np.count_nonzero(estimators.k1(logr) < 0)),
        tokens=int(logr.size),
    )
