"""A distribution's spec string as a set of sliders, and back (no streamlit).

The distribution picker (:func:`lab.widgets.distribution_picker`) keeps the
spec string (``normal(0,1)``) as the one URL-bound value and derives its
sliders from it on every run:

* :func:`family_of` and :func:`knobs` read a :class:`~kl_core.estimation.distributions.Distribution`
  into a family and one :class:`Knob` per parameter, each with its value and
  its slider (linear for locations, log-scale steps for scales and Student t's
  df, see :mod:`lab.grids`), as the family's module declares them in the
  registry (:mod:`kl_core.estimation.families`);
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
from collections.abc import Mapping
from dataclasses import dataclass

from i18n import N_, _
from kl_core.estimation.distributions import Categorical, Distribution
from kl_core.estimation.families import FAMILIES as _REGISTRY
from kl_core.estimation.families import LOCATION_SLIDER, SCALE_SLIDER, WEIGHT_SLIDER
from kl_core.estimation.families import family_of as _family
from kl_core.estimation.families.student_t import DF_SLIDER
from kl_core.libraries.clamps import CLAMP_PATHS
from lab.grids import log_grid, with_value

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

#: The picker's families, in menu order, with their menu labels (English; shown as ``_(label)``):
#: the registry's (:data:`kl_core.estimation.families.FAMILIES`).
FAMILIES: dict[str, str] = {key: family.label for key, family in _REGISTRY.items()}

#: Preset vocabularies: the base distribution of each drift path in
#: :data:`kl_core.libraries.clamps.CLAMP_PATHS`, with the label the clamp demo uses too
#: (English; shown as ``_(label)``).
VOCABULARIES: dict[str, str] = {"peaked": N_("Rare token"), "logit": N_("Mild drift")}
#: How far along its path a vocabulary's target starts (the clamp demo's defaults).
_DRIFT = {"peaked": 20.0, "logit": 1.0}

# The families declare their sliders' ranges (kl_core.estimation.families); these are theirs.
LOCATION_RANGE = LOCATION_SLIDER  # lo, hi, step of μ, loc and a component's μ
SCALE_RANGE = SCALE_SLIDER  # σ, scale, a component's σ (log-scale steps)
DF_RANGE = DF_SLIDER  # Student t's df (log-scale steps)
WEIGHT_RANGE = WEIGHT_SLIDER  # a mixture weight
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
    return _family(d).key


def knobs(d: Distribution) -> list[Knob]:
    """The sliders of a continuous ``d``, each at ``d``'s value (a categorical's are its logits).

    The family declares them (:meth:`kl_core.estimation.families.Family.sliders`):
    id, label, value, linear or log scale and range.
    """
    out = []
    for s in _family(d).sliders(d):
        label = _(s.label).format(**dict(s.label_args)) if s.label_args else _(s.label)
        out.append((_log if s.log else _linear)(s.id, label, s.value, s.range))
    return out


def _clean(x: float) -> float:
    """A slider's float without its binary noise (0.35000000000000003 → 0.35)."""
    return float(f"{float(x):.10g}")


def with_knob(d: Distribution, knob_id: str, value: float) -> Distribution:
    """``d`` with the parameter ``knob_id`` (see :func:`knobs`, :func:`logit_knob`) set to ``value``.

    Raises
    ------
    ValueError
        If ``knob_id`` is not a parameter of ``d``, or ``value`` is not allowed there.
    """
    return _family(d).with_value(d, knob_id, _clean(value))


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
    new = _REGISTRY[family]
    if new.discrete:
        key = vocabulary_of(d) if d.discrete else None
        return vocabulary(key or "logit", drifted=drifted)
    loc, scale = _family(d).location_scale(d)
    if d.discrete:
        loc = 0.5 if drifted else 0.0
    return new.from_location_scale(loc, scale)
