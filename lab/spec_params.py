"""A distribution's spec string as a set of sliders, and back (no streamlit).

The distribution picker (:func:`lab.widgets.distribution_picker`) keeps the
spec string (``normal(0,1)``) as the one URL-bound value and derives its
sliders from it on every run:

* :func:`family_of` and :func:`knobs` read a :class:`~kl_core.estimation.distributions.Distribution`
  into a family and one :class:`Knob` per parameter, each with its value and
  its slider (linear for locations, log-scale steps for scales and Student t's
  df, see :mod:`lab.grids`);
* :func:`with_knob`, :func:`switch_family`, :func:`with_logit` and
  :func:`with_logits` turn a slider move back into a new distribution, whose
  ``spec`` goes into the URL.

A parameter off a slider's range (an old link with σ = 1e-5) is never
changed: the slider's range is widened to include it, or the value becomes one
more step of a log-scale slider.

Categorical distributions pick a preset vocabulary, the base of one of the
core's drift paths (:data:`kl_core.libraries.clamps.CLAMP_PATHS`: "Rare token" and
"Mild drift"), then move one token's logit or edit the logits row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kl_core.estimation.distributions import (
    Categorical,
    Distribution,
    Gaussian,
    GaussianMixture,
    Laplace,
    StudentT,
)
from kl_core.libraries.clamps import CLAMP_PATHS
from lab.grids import log_grid, with_value
from lab.i18n import N_, _

__all__ = [
    "FAMILIES",
    "LOGIT_RANGE",
    "VOCABULARIES",
    "Knob",
    "family_of",
    "knobs",
    "logit_knob",
    "moving_token",
    "switch_family",
    "vocabulary",
    "vocabulary_of",
    "with_knob",
    "with_logit",
    "with_logits",
]

#: The picker's families, in menu order, with their menu labels (English; shown as ``_(label)``).
FAMILIES: dict[str, str] = {
    "normal": N_("Normal"),
    "laplace": N_("Laplace"),
    "t": N_("Student t"),
    "mixture": N_("Mixture of normals"),
    "categorical": N_("Categorical (tokens)"),
}

#: Preset vocabularies: the base distribution of each drift path in
#: :data:`kl_core.libraries.clamps.CLAMP_PATHS`, with the label the clamp demo uses too
#: (English; shown as ``_(label)``).
VOCABULARIES: dict[str, str] = {"peaked": N_("Rare token"), "logit": N_("Mild drift")}
#: How far along its path a vocabulary's target starts (the clamp demo's defaults).
_DRIFT = {"peaked": 20.0, "logit": 1.0}

LOCATION_RANGE = (-5.0, 5.0, 0.05)  # lo, hi, step of μ, loc and a component's μ
SCALE_RANGE = (0.1, 10.0)  # σ, scale, a component's σ (log-scale steps)
DF_RANGE = (0.5, 100.0)  # Student t's df (log-scale steps)
WEIGHT_RANGE = (0.05, 0.95, 0.05)  # a mixture weight
LOGIT_RANGE = (-25.0, 10.0, 0.1)  # one token's logit: the rare token's −19.5 fits


@dataclass(frozen=True)
class Knob:
    """One slider of the picker.

    Attributes
    ----------
    id : str
        What :func:`with_knob` changes: ``mu``, ``sigma``, ``loc``, ``scale``,
        ``df``, ``w1`` … (mixture weights), ``mu1``/``sigma1`` … (components).
    label : str
        The slider's label, a whole phrase, in the language of the run that made it.
    value : float
        The parameter's value in the distribution, exactly.
    steps : tuple of float
        For a log-scale slider, its steps (``value`` among them); empty for a linear one.
    lo, hi, step : float
        For a linear slider, its range (widened to include ``value``) and step.
    """

    id: str
    label: str
    value: float
    steps: tuple[float, ...] = ()
    lo: float = 0.0
    hi: float = 0.0
    step: float = 0.0

    @property
    def log(self) -> bool:
        """True for a log-scale slider over :attr:`steps`."""
        return bool(self.steps)


def _linear(id: str, label: str, value: float, rng: tuple[float, float, float]) -> Knob:
    lo, hi, step = rng
    return Knob(id, label, value, lo=min(lo, value), hi=max(hi, value), step=step)


def _log(id: str, label: str, value: float, rng: tuple[float, float]) -> Knob:
    return Knob(id, label, value, steps=tuple(with_value(log_grid(*rng), value)))


def family_of(d: Distribution) -> str:
    """The key of ``d``'s family in :data:`FAMILIES`."""
    for family, cls in _CLASSES.items():
        if isinstance(d, cls):
            return family
    raise ValueError(f"d must be one of the lab's families, got {type(d).__name__}")


def knobs(d: Distribution) -> list[Knob]:
    """The sliders of a continuous ``d``, each at ``d``'s value (a categorical's are its logits)."""
    if isinstance(d, Gaussian):
        return [
            _linear("mu", _("μ, the mean"), d.mu, LOCATION_RANGE),
            _log("sigma", _("σ, the standard deviation (log scale)"), d.sigma, SCALE_RANGE),
        ]
    if isinstance(d, Laplace):
        return [
            _linear("loc", _("Location"), d.loc, LOCATION_RANGE),
            _log("scale", _("Scale b (log scale)"), d.scale, SCALE_RANGE),
        ]
    if isinstance(d, StudentT):
        return [
            _log("df", _("ν, degrees of freedom (log scale): small ν, heavy tails"), d.df, DF_RANGE),
            _linear("loc", _("Location"), d.loc, LOCATION_RANGE),
            _log("scale", _("Scale (log scale)"), d.scale, SCALE_RANGE),
        ]
    if isinstance(d, GaussianMixture):
        k = len(d.weights)
        out = []
        if k == 2:
            label = _("Weight of component 1 (component 2 has the rest)")
            out.append(_linear("w1", label, d.weights[0], WEIGHT_RANGE))
        elif k > 2:
            for i, w in enumerate(d.weights, start=1):
                label = _("Weight of component {i} (the others share the rest)").format(i=i)
                out.append(_linear(f"w{i}", label, w, WEIGHT_RANGE))
        for i, (m, s) in enumerate(zip(d.means, d.sigmas, strict=True), start=1):
            out.append(_linear(f"mu{i}", _("μ of component {i}").format(i=i), m, LOCATION_RANGE))
            label = _("σ of component {i} (log scale)").format(i=i)
            out.append(_log(f"sigma{i}", label, s, SCALE_RANGE))
        return out
    if isinstance(d, Categorical):
        return []
    raise ValueError(f"d must be one of the lab's families, got {type(d).__name__}")


def _clean(x: float) -> float:
    """A slider's float without its binary noise (0.35000000000000003 → 0.35)."""
    return float(f"{float(x):.10g}")


def _reweighted(weights: Sequence[float], i: int, w: float) -> tuple[float, ...]:
    """Weights with component ``i`` at ``w`` and the others scaled to share ``1 − w``."""
    rest = sum(v for j, v in enumerate(weights) if j != i)
    out = [w if j == i else round(v * (1.0 - w) / rest, 4) for j, v in enumerate(weights)]
    last = len(out) - 1 if i != len(out) - 1 else len(out) - 2
    out[last] = round(1.0 - sum(v for j, v in enumerate(out) if j != last), 10)
    return tuple(out)


def with_knob(d: Distribution, knob_id: str, value: float) -> Distribution:
    """``d`` with the parameter ``knob_id`` (see :func:`knobs`, :func:`logit_knob`) set to ``value``.

    Raises
    ------
    ValueError
        If ``knob_id`` is not a parameter of ``d``, or ``value`` is not allowed there.
    """
    v = _clean(value)
    if isinstance(d, Gaussian) and knob_id in ("mu", "sigma"):
        return Gaussian(**{"mu": d.mu, "sigma": d.sigma, knob_id: v})
    if isinstance(d, Laplace) and knob_id in ("loc", "scale"):
        return Laplace(**{"loc": d.loc, "scale": d.scale, knob_id: v})
    if isinstance(d, StudentT) and knob_id in ("df", "loc", "scale"):
        return StudentT(**{"df": d.df, "loc": d.loc, "scale": d.scale, knob_id: v})
    if isinstance(d, Categorical) and knob_id.removeprefix("logit").isdigit():
        return with_logit(d, int(knob_id.removeprefix("logit")), v)
    if isinstance(d, GaussianMixture):
        k = len(d.weights)
        for prefix in ("w", "mu", "sigma"):
            tail = knob_id.removeprefix(prefix)
            if knob_id.startswith(prefix) and tail.isdigit() and 1 <= int(tail) <= k:
                i = int(tail) - 1
                if prefix == "w":
                    if not 0.0 < v < 1.0:
                        raise ValueError(f"value must be in (0, 1) for a weight, got {value!r}")
                    return GaussianMixture(_reweighted(d.weights, i, v), d.means, d.sigmas)
                means, sigmas = list(d.means), list(d.sigmas)
                (means if prefix == "mu" else sigmas)[i] = v
                return GaussianMixture(d.weights, tuple(means), tuple(sigmas))
    raise ValueError(f"knob_id {knob_id!r} is not a parameter of {d.spec}")


def _round3(x: float) -> float:
    return float(f"{x:.3g}")


def _location_scale(d: Distribution) -> tuple[float, float]:
    if isinstance(d, Gaussian):
        return d.mu, d.sigma
    if isinstance(d, (Laplace, StudentT)):
        return d.loc, d.scale
    if isinstance(d, GaussianMixture):
        w = d.weights
        return (
            _round3(sum(a * b for a, b in zip(w, d.means, strict=True))),
            _round3(sum(a * b for a, b in zip(w, d.sigmas, strict=True))),
        )
    return 0.0, 1.0


def vocabulary(key: str, *, drifted: bool = False) -> Categorical:
    """The preset vocabulary ``key``: its path's base, or (``drifted``) a step along the path."""
    if key not in VOCABULARIES:
        raise ValueError(f"key must be one of {sorted(VOCABULARIES)}, got {key!r}")
    path = CLAMP_PATHS[key]
    d = path.at(_DRIFT[key]) if drifted else path.base
    return Categorical(tuple(_clean(v) for v in d.logits))


def vocabulary_of(d: Categorical) -> str | None:
    """The preset vocabulary with as many tokens as ``d``, or ``None``."""
    return next((k for k in VOCABULARIES if CLAMP_PATHS[k].base.k == d.k), None)


def moving_token(d: Categorical) -> int:
    """The token the picker's logit slider starts on: the one ``d``'s vocabulary path moves most.

    For the rare-token vocabulary that is token 7, the rare token; for mild
    drift, the least likely token; for other vocabularies, the last token.
    """
    key = vocabulary_of(d)
    if key is None:
        return d.k - 1
    path = CLAMP_PATHS[key]
    step = [abs(a - b) for a, b in zip(path.at(1.0).logits, path.base.logits, strict=True)]
    return max(range(len(step)), key=lambda i: (step[i], i))


def logit_knob(d: Categorical, token: int) -> Knob:
    """The slider of token ``token``'s logit in ``d``."""
    if not 0 <= token < d.k:
        raise ValueError(f"token must be in 0 … {d.k - 1}, got {token!r}")
    label = _("Logit of token {token}").format(token=token)
    return _linear(f"logit{token}", label, d.logits[token], LOGIT_RANGE)


def with_logit(d: Categorical, token: int, value: float) -> Categorical:
    """``d`` with token ``token``'s logit set to ``value`` (the other logits unchanged)."""
    logit_knob(d, token)  # checks token
    return Categorical(tuple(_clean(value) if i == token else v for i, v in enumerate(d.logits)))


def with_logits(d: Categorical, edits: Mapping[int, float]) -> Categorical:
    """``d`` with the logits ``{token: value}`` of an edited logits row (blank cells ignored)."""
    logits = list(d.logits)
    for token, value in edits.items():
        if not 0 <= int(token) < d.k:
            raise ValueError(f"edits must name tokens 0 … {d.k - 1}, got {token!r}")
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        logits[int(token)] = _clean(value)
    return Categorical(tuple(logits))


def switch_family(d: Distribution, family: str, *, drifted: bool = False) -> Distribution:
    """A distribution of ``family`` that keeps what it can of ``d``.

    Location and scale carry over between the continuous families (a mixture's
    are its weighted means); a categorical starts from the preset vocabulary
    with ``d``'s number of tokens, else "Mild drift".  ``drifted`` (the target
    p) starts a categorical a step along its path, and a continuous family
    coming from a categorical at μ = 0.5 rather than 0, so q and p differ.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}, got {family!r}")
    if family == family_of(d):
        return d
    if family == "categorical":
        key = vocabulary_of(d) if isinstance(d, Categorical) else None
        return vocabulary(key or "logit", drifted=drifted)
    loc, scale = _location_scale(d)
    if isinstance(d, Categorical):
        loc = 0.5 if drifted else 0.0
    if family == "normal":
        return Gaussian(loc, scale)
    if family == "laplace":
        return Laplace(loc, scale)
    if family == "t":
        return StudentT(3.0, loc, scale)
    return GaussianMixture((0.5, 0.5), (_clean(loc - 1.0), _clean(loc + 1.0)), (scale, scale))


_CLASSES = {
    "normal": Gaussian,
    "laplace": Laplace,
    "t": StudentT,
    "mixture": GaussianMixture,
    "categorical": Categorical,
}
