r"""The categorical family ``categorical(logit,...)``: :class:`Categorical`, the token case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families._base import PRACTICAL, Distribution, Family, arity, floats, num
from kl_core.validation import N_, InputError, Message, as_float_array, check_finite

__all__ = ["FAMILY", "Categorical"]


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
