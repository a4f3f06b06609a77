r"""The categorical family ``categorical(logit,...)``: :class:`Categorical`, the token case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families._base import PRACTICAL, Distribution, Family, arity, floats, num
from kl_core.validation import N_, InputError, Message, as_float_array, check_finite

__all__ = ["FAMILY", "Categorical", "log_ratio_from_logits", "log_ratio_table", "log_softmax"]


@dataclass(frozen=True)
class Categorical(Distribution):
    r"""A categorical distribution over tokens 0 … K−1, given by logits.

    .. math:: \log q(k) = \ell_k - \log\sum_j e^{\ell_j}

    This is the language-model case: a policy's next-token distribution.

    Parameters
    ----------
    logits : sequence of float
        Unnormalised log-probabilities, finite, at least one.

    Examples
    --------
    >>> Categorical((0.0, 0.0)).probs.tolist()
    [0.5, 0.5]
    """

    logits: tuple[float, ...]
    discrete: ClassVar[bool] = True

    def __post_init__(self) -> None:
        arr = np.atleast_1d(np.asarray(self.logits, dtype=object))
        if arr.size == 0:
            raise InputError("logits must not be empty")
        object.__setattr__(self, "logits", tuple(check_finite(v, "logits") for v in arr))

    @property
    def k(self) -> int:
        """The number of categories K."""
        return len(self.logits)

    @property
    def log_probs(self) -> np.ndarray:
        """Normalised log-probabilities of categories 0 … K−1."""
        # Shift by the maximum first: logits that differ by a constant then give
        # bit-identical log-probabilities, so KL between them is exactly 0.
        from scipy import special

        lg = np.asarray(self.logits)
        lg = lg - lg.max()
        return lg - special.logsumexp(lg)

    @property
    def probs(self) -> np.ndarray:
        """Probabilities of categories 0 … K−1."""
        return np.exp(self.log_probs)

    @property
    def name(self) -> str:
        return "Cat(" + ", ".join(f"{p:.3g}" for p in self.probs) + ")"

    @property
    def spec(self) -> str:
        return f"categorical({','.join(num(v) for v in self.logits)})"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        xa = as_float_array(x, "x")
        idx = np.rint(xa)
        inside = (idx == xa) & (xa >= 0) & (xa < self.k)
        out = np.full(xa.shape, -np.inf)
        out[inside] = self.log_probs[idx[inside].astype(np.int64)]
        return out

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        cdf = np.cumsum(self.probs)
        idx = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
        return np.minimum(idx, self.k - 1).astype(np.float64)

    def _interval(self, coverage: float) -> tuple[float, float]:
        return (0.0, float(self.k - 1))

    def practical_issue(self) -> str:
        worst = max(abs(v) for v in self.logits)
        if worst > PRACTICAL["logit"]:
            return Message("logits = {worst:g} is beyond ±{most:g}", worst=worst, most=PRACTICAL["logit"])
        return ""


def log_softmax(logits: ArrayLike) -> np.ndarray:
    r"""Row-wise normalised log-probabilities, :math:`z_k - \max z - \log\sum_j e^{z_j - \max z}` (the last
    axis is the tokens; numpy only).

    Parameters
    ----------
    logits : array_like
        Logits, finite.

    Returns
    -------
    numpy.ndarray
        Same shape.

    Examples
    --------
    >>> [f"{x:.4f}" for x in log_softmax([0.0, 0.0])]
    ['-0.6931', '-0.6931']
    """
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def log_ratio_from_logits(logits_q: ArrayLike, logits_p: ArrayLike) -> np.ndarray:
    r"""Row-wise :math:`\log p_k - \log q_k` of two softmaxes, from their logits (the last axis is the tokens).

    .. math:: \log p_k - \log q_k = (d_k - d_m) - \log\Big(1 + \sum_j q_j\,\big(e^{d_j - d_m} - 1\big)\Big),
              \qquad d = z_p - z_q,

    with :math:`m` the most likely token under :math:`q`.  Every term is of the size of the differences of
    :math:`d`, so logits :math:`10^{-12}` apart keep their log-ratios to full precision; the difference of two
    log-softmaxes near :math:`-0.69` would leave :math:`10^{-16}` of rounding, :math:`10^{-4}` of such a
    log-ratio.  Where :math:`|d_j - d_m| \ge 1` the term is :math:`e^{\log q_j + d_j - d_m} - q_j` (no overflow,
    no lost underflow); where the result is not finite, the plain difference.  Logits that differ by a constant
    give exactly 0.

    Parameters
    ----------
    logits_q, logits_p : array_like
        Logits of the sampler :math:`q` and the target :math:`p`, same shape.

    Returns
    -------
    numpy.ndarray
        :math:`\log p - \log q`, same shape.

    Source: J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html (its
    log-ratio :math:`\log r`).

    Examples
    --------
    >>> t = log_ratio_from_logits([0.0, 0.0], [1e-12, 0.0])  # ±5e-13, less log((1 + e^1e-12)/2)'s 1.25e-25
    >>> [f"{x:.13g}" for x in t]
    ['4.999999999999e-13', '-5.000000000001e-13']
    """
    zq, zp = np.asarray(logits_q, dtype=np.float64), np.asarray(logits_p, dtype=np.float64)
    if zq.shape != zp.shape:
        raise ValueError(f"logits_q and logits_p must have the same shape, got {zq.shape} and {zp.shape}")
    lq = log_softmax(zq)
    d = zp - zq
    m = np.argmax(zq, axis=-1)[..., None]
    e = d - np.take_along_axis(d, m, axis=-1)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        near = np.abs(e) < 1.0
        terms = np.where(near, np.exp(lq) * np.expm1(np.where(near, e, 0.0)), np.exp(lq + e) - np.exp(lq))
        out = e - np.log1p(terms.sum(axis=-1, keepdims=True))
    return np.where(np.isfinite(out), out, log_softmax(zp) - lq)


def log_ratio_table(q: Categorical, p: Categorical) -> np.ndarray:
    r""":math:`\log p_k - \log q_k` for every category k (:func:`log_ratio_from_logits`).

    Parameters
    ----------
    q, p : Categorical
        Sampler and target, the same K.

    Returns
    -------
    numpy.ndarray
        Shape (K,).
    """
    if q.k != p.k:
        raise ValueError(f"q and p must have the same number of categories, got {q.k} and {p.k}")
    return log_ratio_from_logits(q.logits, p.logits)


def _log_ratio(p: Categorical, q: Categorical, x: ArrayLike) -> np.ndarray:
    """log p − log q at category indices ``x`` (samples of q), from :func:`log_ratio_table`."""
    xa = as_float_array(x, "x")
    idx = np.rint(xa)
    inside = (idx == xa) & (xa >= 0) & (xa < q.k)
    out = p.logpdf(xa) - q.logpdf(xa)  # outside the categories: as the densities say
    out[inside] = log_ratio_table(q, p)[idx[inside].astype(np.int64)]
    return out


#: log p − log q of two categoricals, from their logits (kl_core.estimation.families' LOG_RATIOS).
LOG_RATIOS = {(Categorical, Categorical): _log_ratio}


def _read(body: str, spec: str) -> Categorical:
    args = floats(body, spec)
    if not args:
        raise InputError("logits must not be empty")
    arity("categorical", args, 1, 10_000, spec)
    return Categorical(tuple(args))


def _with_value(d: Categorical, knob_id: str, v: float) -> Categorical | None:
    token = knob_id.removeprefix("logit")
    if not (knob_id.startswith("logit") and token.isdigit()):
        return None
    if not 0 <= int(token) < d.k:
        raise ValueError(f"token must be in 0 … {d.k - 1}, got {int(token)!r}")
    return Categorical(tuple(v if i == int(token) else x for i, x in enumerate(d.logits)))


FAMILY = Family(
    key="categorical",
    cls=Categorical,
    label=N_("Categorical (tokens)"),
    help=N_("`categorical(logit,logit,…)`, e.g. a next-token distribution"),
    order=90,
    aliases=("cat",),
    syntax="categorical(logit,...)",
    read=_read,
    sliders_of=lambda d: [],
    set_value=_with_value,
    location_scale_of=lambda d: (0.0, 1.0),
)
