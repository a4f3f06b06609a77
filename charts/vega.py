"""Plain Vega-Lite pieces the chart builders share: channels, layers, labels beside a mark.

The builders write Vega-Lite as plain dicts inside a few Altair objects, with the
rows in the top-level ``datasets`` (see "Fast charts" in ``docs/app_conventions.md``).
These helpers return exactly the dicts a builder would write out by hand, so a
chart's spec is the same either way; they only save repeating the same dozen
lines in every layer.

* :func:`quantitative`, :func:`nominal` -- one encoding channel;
* :func:`layer` -- one layer drawn from a named dataset;
* :func:`zero_rule` -- the grey line at 0;
* :func:`reference_rule`, :func:`reference_text` -- an exact value's black dashed rule and its label;
* :func:`beside` -- a text label's alignment and offset, on the roomier side of a mark;
* :func:`ticks_through_zero` -- an axis's tick values, 0 among them.
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt

from charts.palette import REFERENCE_COLOR, REFERENCE_DASH, ZERO_COLOR

__all__ = ["beside", "layer", "nominal", "quantitative", "reference_rule", "reference_text", "ticks_through_zero",
           "zero_rule"]


def quantitative(field: str, scale: dict | None = None, **more: Any) -> dict:
    """A quantitative channel: ``{"field": field, "type": "quantitative", "scale": scale, **more}``.

    ``scale`` is left out when None; ``more`` adds ``title``, ``axis``, ``format``, ...
    """
    channel: dict = {"field": field, "type": "quantitative"}
    if scale is not None:
        channel["scale"] = scale
    channel.update(more)
    return channel


#: Steps a tick may take, per decade; the ticks are multiples of the step, so 0 is one where the range holds it.
_NICE_STEPS = (1.0, 2.0, 2.5, 5.0)


def ticks_through_zero(lo: float, hi: float, most: int = 7) -> list[float]:
    """At most ``most`` evenly spaced tick values on ``[lo, hi]``, multiples of a 1-2-2.5-5 step, so 0 is one of
    them where the range holds it.

    Vega's own ticks at 0.2 apart, thinned to every other label where they would crowd, left out the
    0 of a λ or θ axis (λ = 0 is k1; θ = 0 is p = q); so do these axes, with few enough labels not to crowd.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo or most < 2:
        raise ValueError(f"lo, hi must be finite with lo <= hi and most >= 2, got {lo!r}, {hi!r}, {most!r}")
    if hi == lo:  # a single-point range: its one value
        return [lo + 0.0]
    base = 10.0 ** math.floor(math.log10((hi - lo) / most))
    for step in [m * base * 10**e for e in (0, 1, 2) for m in _NICE_STEPS]:
        first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
        if last - first + 1 <= most:
            return [round(k * step, 12) + 0.0 for k in range(first, last + 1)]
    raise AssertionError("unreachable: a step of 100 decades fits")


def nominal(field: str, **more: Any) -> dict:
    """A nominal channel: ``{"field": field, "type": "nominal", **more}``."""
    return {"field": field, "type": "nominal", **more}


def layer(dataset: str, mark: dict, *, transform: list | None = None, **encoding: Any) -> alt.Chart:
    """One layer: ``mark`` drawn from the top-level dataset named ``dataset``, with ``encoding``.

    ``transform`` (Vega-Lite transforms) is added only when given.
    """
    extra = {} if transform is None else {"transform": transform}
    return alt.Chart({"name": dataset}, mark=mark, encoding=alt.FacetedEncoding(**encoding), **extra)


def zero_rule(
    dataset: str, stroke_width: float = 1, *, transform: list | None = None, **encoding: Any
) -> alt.Chart:
    """The guide at 0: a grey (:data:`charts.palette.ZERO_COLOR`) rule placed by ``encoding``."""
    return layer(dataset, {"type": "rule", "color": ZERO_COLOR, "strokeWidth": stroke_width},
                 transform=transform, **encoding)


def beside(right: bool, dx: float) -> dict:
    """Text mark properties that keep a label inside the plot, ``dx`` pixels from its anchor.

    ``right`` (the anchor is near the plot's right edge): the label ends at the
    anchor, to its left; else it starts there, to its right.
    """
    return {"align": "right" if right else "left", "dx": -dx if right else dx}


def reference_rule(dataset: str, *, transform: list | None = None, **encoding: Any) -> alt.Chart:
    """An exact value (the true KL, ...): a black rule dashed with :data:`charts.palette.REFERENCE_DASH`."""
    return layer(
        dataset,
        {"type": "rule", "color": REFERENCE_COLOR, "strokeDash": list(REFERENCE_DASH), "strokeWidth": 2},
        transform=transform,
        **encoding,
    )


def reference_text(right: bool, **more: Any) -> dict:
    """The text mark of an exact value's label: at the top of the plot, beside its vertical
    rule (:func:`beside`, 5 px from it), in the reference black; ``more`` adds ``text``, ..."""
    return {"type": "text", **beside(right, 5), "baseline": "top", "dy": 4, "fontSize": 14,
            "color": REFERENCE_COLOR, **more}
