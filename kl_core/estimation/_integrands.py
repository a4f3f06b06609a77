r"""The functions of :math:`t = \log r` that the exact module integrates against ``q``.

Every integrand is :math:`g(t)` with two asymptotic forms,

.. math:: g(t) = \sum_k P_k(t)\, e^{k t} \quad (t \to +\infty), \qquad
          g(t) = \sum_k Q_k(t)\, e^{k t} \quad (t \to -\infty),

with polynomials :math:`P_k, Q_k` (exact for the estimators, up to
:math:`O(e^{-|t|})` for Jensen–Shannon and total variation).  They serve twice:

* far out, :math:`q\,g` is evaluated term by term in log space,
  :math:`\operatorname{sign}\cdot\exp(\log|P_k(t)| + k \log p + (1-k)\log q)`,
  so neither :math:`r^k` nor :math:`|t|^d` overflows while ``q`` underflows;
* the leading term (largest ``k`` as :math:`t\to+\infty`, smallest as
  :math:`t\to-\infty`) and its degree decide whether the integral is finite
  (:mod:`kl_core.estimation.tails`).

Powers of deviations, :math:`(g - m)^n` (variances, fourth moments), multiply
the expansions out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kl_core.estimation import estimators as est
from kl_core.estimation.divergences import get_divergence

_LOG2 = math.log(2.0)

Fn = Callable[[np.ndarray], np.ndarray]


def _trim(c: Sequence[float]) -> tuple[float, ...]:
    out = list(c)
    while out and out[-1] == 0.0:
        out.pop()
    return tuple(out)


@dataclass(frozen=True)
class ExpPoly:
    r""":math:`\sum_k P_k(t) e^{kt}`; ``terms`` maps k to P_k's coefficients, lowest degree first."""

    terms: tuple[tuple[float, tuple[float, ...]], ...]

    @classmethod
    def of(cls, mapping: Mapping[float, Sequence[float]]) -> ExpPoly:
        """Normalise: exact-zero leading coefficients trimmed, empty terms dropped."""
        items = ((float(k), _trim(c)) for k, c in mapping.items())
        return cls(tuple(sorted((k, c) for k, c in items if c)))

    def shift(self, m: float) -> ExpPoly:
        """The expansion of g − m."""
        d = {k: list(c) for k, c in self.terms}
        c0 = d.setdefault(0.0, [0.0])
        c0[0] -= m
        return ExpPoly.of(d)

    def times(self, other: ExpPoly) -> ExpPoly:
        """The expansion of the product."""
        d: dict[float, list[float]] = {}
        for ka, ca in self.terms:
            for kb, cb in other.terms:
                acc = d.setdefault(ka + kb, [])
                acc.extend([0.0] * (len(ca) + len(cb) - 1 - len(acc)))
                for i, a in enumerate(ca):  # polynomials of degree ≤ 8: plain loops
                    for j, b in enumerate(cb):
                        acc[i + j] += a * b
        return ExpPoly.of(d)

    def power(self, n: int) -> ExpPoly:
        """The expansion of the n-th power."""
        out = ExpPoly.of({0.0: [1.0]})
        for _ in range(n):
            out = out.times(self)
        return out

    def top(self) -> tuple[float, int] | None:
        """(k, degree of P_k) of the term with the largest k: the leading one as t → +∞."""
        if not self.terms:
            return None
        k, c = self.terms[-1]
        return k, len(c) - 1

    def bottom(self) -> tuple[float, int] | None:
        """(k, degree of P_k) of the term with the smallest k: the leading one as t → −∞."""
        if not self.terms:
            return None
        k, c = self.terms[0]
        return k, len(c) - 1

    def weighted(
        self, sign_t: np.ndarray, logabs_t: np.ndarray, log_weight: Callable[[float], np.ndarray]
    ) -> np.ndarray:
        r""":math:`\sum_k P_k(t)\, e^{w_k}` for :math:`t = \pm e^{\text{logabs\_t}}`, in log space.

        ``log_weight(k)`` is :math:`w_k`, e.g. :math:`k\log p + (1-k)\log q`.
        """
        if not self.terms:
            return np.zeros_like(logabs_t)
        inv_t = sign_t * np.exp(-logabs_t)
        logs, signs = [], []
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            for k, c in self.terms:
                deg = len(c) - 1
                horner = np.full_like(logabs_t, c[0])  # c_d + c_{d-1}/t + … + c_0/t^d
                for j in range(1, deg + 1):
                    horner = horner * inv_t + c[j]
                logs.append(deg * logabs_t + np.log(np.abs(horner)) + log_weight(k))
                signs.append(np.sign(horner) * sign_t**deg)
            big = np.stack(logs)
            top = np.max(big, axis=0)
            safe_top = np.where(np.isfinite(top), top, 0.0)
            scaled = np.sum(np.stack(signs) * np.exp(big - safe_top), axis=0)
            out = scaled * np.exp(safe_top)
        out = np.where(top == -np.inf, 0.0, out)
        return np.where(top == np.inf, np.inf, out)


@dataclass(frozen=True)
class Deviation:
    """g = (b − m)^n for a base b equal to ``base_down`` for every t < 0 (the estimators)."""

    base_down: ExpPoly
    mean: float
    power: int

    def around(self, t0: float) -> tuple[tuple[float, ...], ExpPoly]:
        """b(t0 + δ) − m = Q(δ) + Σ_{k>0} P_k(t) e^{kt}: Q's coefficients (Taylor at t0) and the rest.

        Where |t0| dwarfs the spread of t (densities far apart), t = t0 + δ
        rounds away δ's digits; Q(δ) keeps them, its constant P_0(t0) − m
        taking the one rounding (a smooth offset, not noise).
        """
        terms = dict(self.base_down.terms)
        c = terms.pop(0.0, (0.0,))
        q = [
            sum(math.comb(j, k) * c[j] * t0 ** (j - k) for j in range(k, len(c)))
            for k in range(len(c))
        ]
        q[0] -= self.mean
        return tuple(q), ExpPoly(tuple(sorted(terms.items())))


@dataclass(frozen=True)
class Integrand:
    """g(t) accurate for moderate t, its two expansions, and whether it has a kink at t = 0."""

    value: Fn
    up: ExpPoly
    down: ExpPoly
    kinked: bool = False
    deviation_of: Deviation | None = None

    def deviation(self, m: float, n: int) -> Integrand:
        """(g − m)^n, with both expansions multiplied out."""
        base = self.value
        return Integrand(
            lambda t: (base(t) - m) ** n,
            self.up.shift(m).power(n),
            self.down.shift(m).power(n),
            self.kinked,
            Deviation(self.down, m, n),
        )


def _same(mapping: Mapping[float, Sequence[float]]) -> tuple[ExpPoly, ExpPoly]:
    e = ExpPoly.of(mapping)
    return e, e


def estimator_integrand(key: str, lam: float) -> Integrand:
    """The per-sample value of estimator ``key`` as an :class:`Integrand`."""
    table: dict[str, tuple[ExpPoly, ExpPoly]] = {
        "k1": _same({0.0: [0.0, -1.0]}),
        "k2": _same({0.0: [0.0, 0.0, 0.5]}),
        "k3": _same({0.0: [-1.0, -1.0], 1.0: [1.0]}),
        "k_lambda": _same({0.0: [-lam, -1.0], 1.0: [lam]}),
        "k3_pq": _same({0.0: [1.0], 1.0: [-1.0, 1.0]}),
        "abs": (ExpPoly.of({0.0: [0.0, 1.0]}), ExpPoly.of({0.0: [0.0, -1.0]})),
    }
    up, down = table[key]
    return Integrand(lambda t: est.evaluate(key, t, lam=lam), up, down, kinked=key == "abs")


def divergence_integrand(name: str) -> Integrand:
    r"""The Bregman form :math:`f(e^t) - f'(1)(e^t - 1)` of registry f ``name`` (f itself for TV)."""
    div = get_divergence(name)
    half_log2 = 0.5 * _LOG2
    table: dict[str, tuple[ExpPoly, ExpPoly]] = {
        "kl_qp": _same({0.0: [-1.0, -1.0], 1.0: [1.0]}),
        "kl_pq": _same({0.0: [1.0], 1.0: [-1.0, 1.0]}),
        "k2": _same({0.0: [0.0, 0.0, 0.5]}),
        "pearson": _same({0.0: [1.0], 1.0: [-2.0], 2.0: [1.0]}),
        "hellinger": _same({0.0: [1.0], 0.5: [-2.0], 1.0: [1.0]}),
        # f(u) = ½[(log2 − 1) − t + u log 2] + O(1/u) as u → ∞, ½ log 2 + ½u(t − 1 + log 2) + O(u²) as u → 0
        "js": (
            ExpPoly.of({0.0: [half_log2 - 0.5, -0.5], 1.0: [half_log2]}),
            ExpPoly.of({0.0: [half_log2], 1.0: [half_log2 - 0.5, 0.5]}),
        ),
        "tv": (ExpPoly.of({0.0: [-0.5], 1.0: [0.5]}), ExpPoly.of({0.0: [0.5], 1.0: [-0.5]})),
    }
    up, down = table[name]
    if div.fprime_at_1 is None:
        return Integrand(lambda t: div.f_log(np.asarray(t, dtype=float)), up, down, kinked=True)
    return Integrand(lambda t: est.bregman(name, t), up, down)
