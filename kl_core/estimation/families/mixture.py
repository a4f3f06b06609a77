r"""The family of normal mixtures ``mixture(w:m:s,...)``: :class:`GaussianMixture`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families._base import (
    LOCATION_SLIDER,
    SCALE_SLIDER,
    WEIGHT_SLIDER,
    Distribution,
    Family,
    Slider,
    Tail,
    clean,
    floats,
    gaussian_tail,
    num,
)
from kl_core.estimation.families.normal import Gaussian, gauss_delta
from kl_core.validation import N_, InputError, as_float_array, check_finite, check_positive

__all__ = ["FAMILY", "GaussianMixture"]


@dataclass(frozen=True)
class GaussianMixture(Distribution):
    r"""A finite mixture of normals, :math:`\sum_k w_k\,\mathcal N(\mu_k, \sigma_k^2)`.

    .. math:: \log q(x) = \log\sum_k w_k\,\mathcal N(x;\mu_k,\sigma_k^2)

    ========  =====================  =====================================  =========================
    support   mean                   variance                               spec
    ========  =====================  =====================================  =========================
    ℝ         :math:`\sum w_k\mu_k`  :math:`\sum w_k(\sigma_k^2+\mu_k^2)-\bar\mu^2`  mixture(w:μ:σ, …)
    ========  =====================  =====================================  =========================

    Parameters
    ----------
    weights : sequence of float
        Component weights, each > 0, summing to 1 (within 1e-9).
    means : sequence of float
        Component means.
    sigmas : sequence of float
        Component standard deviations, each > 0.

    Tail: the widest component's, then the one furthest out on the side; identical
    components add their weights.

    Examples
    --------
    >>> GaussianMixture((0.5, 0.5), (-1, 1), (1, 1)).spec
    'mixture(0.5:-1:1,0.5:1:1)'
    """

    weights: tuple[float, ...]
    means: tuple[float, ...]
    sigmas: tuple[float, ...]

    def __post_init__(self) -> None:
        # .tolist(): Python floats, so that a refusal quotes -1.0, not np.float64(-1.0)
        w = tuple(check_positive(v, "weights") for v in np.atleast_1d(self.weights).tolist())
        m = tuple(check_finite(v, "means") for v in np.atleast_1d(self.means).tolist())
        s = tuple(check_positive(v, "sigmas") for v in np.atleast_1d(self.sigmas).tolist())
        if not w:
            raise InputError("weights must have at least one component")
        if not len(w) == len(m) == len(s):
            raise InputError(
                "weights, means and sigmas must have the same length, got {nw}, {nm}, {ns}",
                nw=len(w), nm=len(m), ns=len(s),
            )
        if abs(sum(w) - 1.0) > 1e-9:
            raise InputError("weights must sum to 1, got {total:.12g}", total=sum(w))
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "means", m)
        object.__setattr__(self, "sigmas", s)

    @property
    def name(self) -> str:
        parts = [f"{w:g}·{Gaussian(m, s).name}" for w, m, s in zip(self.weights, self.means, self.sigmas, strict=False)]
        return " + ".join(parts)

    @property
    def spec(self) -> str:
        comps = [
            f"{num(w)}:{num(m)}:{num(s)}" for w, m, s in zip(self.weights, self.means, self.sigmas, strict=False)
        ]
        return f"mixture({','.join(comps)})"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        from scipy import special

        xa = as_float_array(x, "x")
        comps = [
            math.log(w) + Gaussian(m, s).logpdf(xa)
            for w, m, s in zip(self.weights, self.means, self.sigmas, strict=False)
        ]
        return special.logsumexp(np.stack(comps), axis=0)

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # One component label per draw keeps the draws in i.i.d. order (the
        # running mean on the lab pages depends on it).
        k = rng.choice(len(self.weights), size=n, p=np.asarray(self.weights))
        return np.asarray(self.means)[k] + np.asarray(self.sigmas)[k] * rng.standard_normal(n)

    def _interval(self, coverage: float) -> tuple[float, float]:
        spans = [Gaussian(m, s).interval(coverage) for m, s in zip(self.means, self.sigmas, strict=False)]
        return (min(a for a, _ in spans), max(b for _, b in spans))

    def _tail(self, side: int) -> Tail:
        # The widest component wins, then the one furthest out on this side;
        # identical components add their weights.
        comps = list(zip(self.weights, self.means, self.sigmas, strict=True))
        top = max((s, side * m) for _, m, s in comps)
        weight = sum(w for w, m, s in comps if (s, side * m) == top)
        sigma, mu = top[0], side * top[1]
        return gaussian_tail(mu, sigma, side, math.log(weight))

    def centres(self) -> list[tuple[float, float]]:
        return list(zip(self.means, self.sigmas, strict=True))

    def shifted(self, delta: float) -> GaussianMixture:
        return GaussianMixture(self.weights, tuple(m - delta for m in self.means), self.sigmas)

    def log_density_delta(self, x: np.ndarray) -> np.ndarray:
        comps = zip(self.weights, self.means, self.sigmas, strict=True)
        at0 = np.array([math.log(w) - 0.5 * (m / s) ** 2 - math.log(s) for w, m, s in comps])
        at0 -= np.logaddexp.reduce(at0)
        parts = [a + gauss_delta(x, m, s) for a, m, s in zip(at0, self.means, self.sigmas, strict=True)]
        return np.logaddexp.reduce(np.stack(parts), axis=0)

    def practical_parts(self) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        return [("sigmas", s) for s in self.sigmas], [("means", m) for m in self.means]


def _read(body: str, spec: str) -> GaussianMixture:
    comps = [c.strip() for c in body.split(",")] if body.strip() else []
    if not comps:
        raise InputError("spec {spec!r}: mixture needs at least one w:m:s component", spec=spec)
    triples = []
    for c in comps:
        parts = c.split(":")
        if len(parts) != 3:
            raise InputError(
                "spec {spec!r}: mixture component {c!r} is not weight:mean:sigma", spec=spec, c=c
            )
        triples.append(floats(",".join(parts), spec))
    w, mu, s = zip(*triples, strict=False)
    return GaussianMixture(tuple(w), tuple(mu), tuple(s))


def _sliders(d: GaussianMixture) -> list[Slider]:
    k = len(d.weights)
    out = []
    if k == 2:
        out.append(Slider("w1", N_("Weight of component 1 (component 2 has the rest)"), d.weights[0], False,
                          WEIGHT_SLIDER))
    elif k > 2:
        for i, w in enumerate(d.weights, start=1):
            label = N_("Weight of component {i} (the others share the rest)")
            out.append(Slider(f"w{i}", label, w, False, WEIGHT_SLIDER, (("i", i),)))
    for i, (m, s) in enumerate(zip(d.means, d.sigmas, strict=True), start=1):
        out.append(Slider(f"mu{i}", N_("μ of component {i}"), m, False, LOCATION_SLIDER, (("i", i),)))
        out.append(Slider(f"sigma{i}", N_("σ of component {i} (log scale)"), s, True, SCALE_SLIDER, (("i", i),)))
    return out


def reweighted(weights: tuple[float, ...], i: int, w: float) -> tuple[float, ...]:
    """Weights with component ``i`` at ``w`` and the others scaled to share ``1 − w``."""
    rest = sum(v for j, v in enumerate(weights) if j != i)
    out = [w if j == i else round(v * (1.0 - w) / rest, 4) for j, v in enumerate(weights)]
    last = len(out) - 1 if i != len(out) - 1 else len(out) - 2
    out[last] = round(1.0 - sum(v for j, v in enumerate(out) if j != last), 10)
    return tuple(out)


def _with_value(d: GaussianMixture, knob_id: str, v: float) -> GaussianMixture | None:
    k = len(d.weights)
    for prefix in ("w", "mu", "sigma"):
        tail = knob_id.removeprefix(prefix)
        if knob_id.startswith(prefix) and tail.isdigit() and 1 <= int(tail) <= k:
            i = int(tail) - 1
            if prefix == "w":
                if not 0.0 < v < 1.0:
                    raise ValueError(f"value must be in (0, 1) for a weight, got {v!r}")
                return GaussianMixture(reweighted(d.weights, i, v), d.means, d.sigmas)
            means, sigmas = list(d.means), list(d.sigmas)
            (means if prefix == "mu" else sigmas)[i] = v
            return GaussianMixture(d.weights, tuple(means), tuple(sigmas))
    return None


def _location_scale(d: GaussianMixture) -> tuple[float, float]:
    # the weighted means of the components' means and sigmas, to 3 digits
    w = d.weights
    return (
        float(f"{sum(a * b for a, b in zip(w, d.means, strict=True)):.3g}"),
        float(f"{sum(a * b for a, b in zip(w, d.sigmas, strict=True)):.3g}"),
    )


def _from_location_scale(loc: float, scale: float) -> GaussianMixture:
    return GaussianMixture((0.5, 0.5), (clean(loc - 1.0), clean(loc + 1.0)), (scale, scale))


FAMILY = Family(
    key="mixture",
    cls=GaussianMixture,
    label=N_("Mixture of normals"),
    help=N_("`mixture(w:μ:σ,w:μ:σ,…)`, weights summing to 1"),
    order=50,
    aliases=("mix", "gmm"),
    syntax="mixture(w:m:s,...)",
    read=_read,
    sliders_of=_sliders,
    set_value=_with_value,
    location_scale_of=_location_scale,
    from_location_scale_of=_from_location_scale,
)
