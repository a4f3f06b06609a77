"""The tangent-gap picture: a curve, its tangent at u = 1, and each sample's gap.

Pure builder: :class:`kl_core.estimation.bregman.TangentPicture` objects come in (the
curve on a grid, the seeded draws, one hand-moved ratio), an Altair chart goes
out.  The only work done here is thinning: draws outside the x-range are left
out (and counted), and repeated ratios (categorical q, p) are drawn once with
their count.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from charts.histograms import records
from charts.palette import (
    CONFIG,
    EXTRA_COLORS,
    HIGHLIGHT_COLOR,
    REFERENCE_COLOR,
    ZERO_COLOR,
    color,
    finish,
)
from charts.vega import beside, quantitative, zero_rule
from i18n import _
from kl_core.estimation.bregman import TangentPicture

__all__ = ["CURVE_COLOR", "OTHER_GAP_COLOR", "TANGENT_COLOR", "gap_color", "tangent_gap_chart"]

CURVE_COLOR = REFERENCE_COLOR
TANGENT_COLOR = EXTRA_COLORS["grey"]
#: Gap colour of an f whose tangent-gap estimator is none of the named ones.
OTHER_GAP_COLOR = EXTRA_COLORS["dark grey"]
#: Legend text in the axes' colour (charts.palette.CONFIG), where the palette sets one.
_LEGEND_TEXT = {k: v for k, v in {"labelColor": CONFIG.get("axis", {}).get("labelColor")}.items() if v}


def gap_color(picture: TangentPicture) -> str:
    """The gap's colour: the estimator's own (k3 green, k3_pq orange, k2 blue), else dark grey."""
    return color(picture.estimator) if picture.estimator else OTHER_GAP_COLOR


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "∞" if x > 0 else _("undefined")
    return f"{x:.4g}"


def _thin(samples: TangentPicture, lo: float, hi: float) -> tuple[pd.DataFrame, int, int]:
    """Rows of the draws with lo ≤ u ≤ hi, one per distinct ratio; (rows, drawn, off-chart)."""
    u = samples.u
    inside = np.isfinite(u) & (u >= lo) & (u <= hi)
    logu = samples.logu[inside]
    uniq, first, counts = np.unique(logu, return_index=True, return_counts=True)
    idx = np.flatnonzero(inside)[first]
    df = pd.DataFrame(
        {
            "u": samples.u[idx],
            "logu": uniq,
            "curve": samples.curve[idx],
            "count": counts,
        }
    )
    if samples.tangent is not None and samples.gap is not None:
        df["tangent"] = samples.tangent[idx]
        df["gap"] = samples.gap[idx]
    return df, int(inside.sum()), int(u.size - inside.sum())


def tangent_gap_chart(
    grid: TangentPicture,
    *,
    samples: TangentPicture | None = None,
    hand: TangentPicture | None = None,
    curve_label: str,
    tangent_label: str | None,
    gap_label: str,
    x_title: str = "u = r = p(x)/q(x)",
    y_title: str | None = None,
    subtitle: list[str] | None = None,
    title: str | list[str] | None = None,
    height: int = 420,
) -> alt.LayerChart:
    """The curve and its tangent at u = 1, with a vertical gap segment per draw.

    Parameters
    ----------
    grid : TangentPicture
        The curve and tangent on a grid of u; its range is the chart's x-range.
    samples : TangentPicture, optional
        The same picture at the seeded draws of r: a point on the curve and a
        thin gap segment for each.  Draws outside the grid's u-range are
        counted in the subtitle, not drawn.
    hand : TangentPicture, optional
        One ratio chosen by the reader: a thick segment in :data:`HIGHLIGHT_COLOR`
        with a diamond at each end, drawn over the draws and labelled with r and its gap.
    curve_label, tangent_label, gap_label : str
        Legend entries (``tangent_label`` None when there is no tangent).
    x_title, y_title : str
        Axis titles (``y_title`` None: "value", translated).
    subtitle : list of str, optional
        Lines under the title; the count of draws off the chart is appended.
    title : str or list of str, optional
        The chart title (a list: one line each, so a narrow chart never cuts it).
    height : int, default 420
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        A finished chart; every data set has at most a few thousand rows.
    """
    lo, hi = float(np.min(grid.u)), float(np.max(grid.u))
    gap_col = gap_color(grid)
    has_tangent = grid.tangent is not None
    lines = [pd.DataFrame({"u": grid.u, "value": grid.curve, "series": curve_label})]
    series = [curve_label]
    colors = [CURVE_COLOR]
    dashes: list[list[int]] = [[1, 0]]
    if has_tangent and tangent_label:
        lines.append(pd.DataFrame({"u": grid.u, "value": grid.tangent, "series": tangent_label}))
        series.append(tangent_label)
        colors.append(TANGENT_COLOR)
        dashes.append([8, 5])
    thinned = _thin(samples, lo, hi) if samples is not None else None
    if thinned is not None and has_tangent and thinned[1] > 0:  # no legend entry for gaps not drawn
        series.append(gap_label)
        colors.append(gap_col)
        dashes.append([1, 0])
    values = [np.asarray(grid.curve)] + ([np.asarray(grid.tangent)] if has_tangent else [])
    finite = np.concatenate([v[np.isfinite(v)] for v in values])
    y_lo, y_hi = float(finite.min()), float(finite.max())
    span = y_hi - y_lo if y_hi > y_lo else 1.0
    pad = 0.04 * span
    top, bottom = y_hi + pad, y_lo - 3 * pad
    place = _label_place(grid, hand, lo, hi) if hand is not None and hand.u.size else None
    if place is not None and place[0] == "above":  # room for the label's two lines over the reader's r
        top = max(top, place[2] + _LABEL_ROOM * span)
    elif place is not None and place[0] == "below":
        bottom = min(bottom, place[2] - _LABEL_ROOM * span)
    x_scale = {"domain": [0.0 if lo < 0.5 else lo, hi], "nice": False, "zero": False}
    y_scale = {"domain": [bottom, top], "nice": False, "zero": False}
    x_enc = {"field": "u", "type": "quantitative", "scale": x_scale}
    legend_scale = {"domain": series, "range": colors}

    datasets: dict[str, list[dict]] = {"lines": records(pd.concat(lines, ignore_index=True))}
    layers: list[alt.Chart] = []
    datasets["axes"] = records(pd.DataFrame({"u": [1.0], "value": [0.0]}))
    layers.append(zero_rule("axes", y=quantitative("value", y_scale)))
    layers.append(
        alt.Chart(
            {"name": "axes"},
            mark={"type": "rule", "color": ZERO_COLOR, "strokeWidth": 1, "strokeDash": [2, 3]},
            encoding=alt.FacetedEncoding(x=x_enc),
        )
    )
    layers.append(
        alt.Chart(
            {"name": "lines"},
            mark={"type": "line", "strokeWidth": 3, "clip": True},
            encoding=alt.FacetedEncoding(
                x={**x_enc, "title": x_title, "axis": {"tickCount": 10}},
                y={"field": "value", "type": "quantitative", "scale": y_scale,
                   "title": _("value") if y_title is None else y_title},
                color={
                    "field": "series",
                    "type": "nominal",
                    "scale": legend_scale,
                    "legend": {"orient": "top", "title": None, "labelFontSize": 14,
                               "symbolStrokeWidth": 3, "labelLimit": 420, "columns": 1,
                               **_LEGEND_TEXT},
                    "sort": None,
                },
                strokeDash={
                    "field": "series",
                    "type": "nominal",
                    "scale": {"domain": series, "range": dashes},
                    "legend": None,
                },
                tooltip=[
                    {"field": "series", "type": "nominal", "title": _("line")},
                    {"field": "u", "type": "quantitative", "title": "u", "format": ".3f"},
                    {"field": "value", "type": "quantitative", "title": _("value"), "format": ".4g"},
                ],
            ),
        )
    )
    lines_sub = list(subtitle or [])
    if thinned is not None:
        rows, drawn, off = thinned
        datasets["draws"] = records(rows)
        tooltip = [
            {"field": "u", "type": "quantitative", "title": "r", "format": ".4f"},
            {"field": "logu", "type": "quantitative", "title": "log r", "format": ".4f"},  # i18n: ok
            {"field": "curve", "type": "quantitative", "title": _("curve"), "format": ".4f"},
        ]
        if has_tangent:
            tooltip += [
                {"field": "tangent", "type": "quantitative", "title": _("tangent"), "format": ".4f"},
                {"field": "gap", "type": "quantitative", "title": _("gap"), "format": ".4f"},
            ]
            layers.append(
                alt.Chart(
                    {"name": "draws"},
                    mark={"type": "rule", "strokeWidth": 1.5, "opacity": 0.55,
                          "color": gap_col},
                    encoding=alt.FacetedEncoding(
                        x=x_enc,
                        y={"field": "curve", "type": "quantitative", "scale": y_scale},
                        y2={"field": "tangent"},
                        tooltip=tooltip,
                    ),
                )
            )
        point_enc = {
            "x": x_enc,
            "y": {"field": "curve", "type": "quantitative", "scale": y_scale},
            "tooltip": tooltip,
        }
        if len(rows) < drawn:  # repeated ratios (categorical): one point per ratio, sized by count
            tooltip.append({"field": "count", "type": "quantitative", "title": _("draws here")})
            point_enc["size"] = {
                "field": "count",
                "type": "quantitative",
                "scale": {"range": [40, 500], "zero": False},
                "legend": None,
            }
        layers.append(
            alt.Chart(
                {"name": "draws"},
                mark={"type": "point", "filled": True, "size": 36, "opacity": 0.8,
                      "color": gap_col if has_tangent else OTHER_GAP_COLOR},
                encoding=alt.FacetedEncoding(**point_enc),
            )
        )
        if off:
            lines_sub.append(
                _("{off:,} of {n:,} draws have r outside [{lo:g}, {hi:g}]: not drawn").format(
                    off=off, n=samples.u.size, lo=lo, hi=hi
                )
            )
    if hand is not None and hand.u.size:
        layers += _hand_layers(hand, datasets, x_enc, y_scale, lo, hi, place)
    chart = alt.LayerChart(layer=layers, datasets=datasets)
    if title or lines_sub:
        chart.title = {"text": title or "", "limit": 1000, **({"subtitle": lines_sub} if lines_sub else {})}
    return finish(chart, height=height)


#: The share of the lines' y-range kept free over (or under) the reader's r for its two-line label.
_LABEL_ROOM = 0.4
#: The share of the x-range a label may cover (on a phone's 300 px plot, "gap = 0.5837" in 15 px bold).
_LABEL_WIDTH = 0.45


def _label_place(grid: TangentPicture, hand: TangentPicture, lo: float, hi: float) -> tuple[str, str, float] | None:
    """Where the "your r" label has no line through it: ``(side, "left"/"right", y)``, the label standing
    over (``side="above"``) the higher end of the reader's segment or under the lower one, at ``y``, and
    spanning :data:`_LABEL_WIDTH` of the x-range to that side; None where no such place is free (the
    label then sits beside the segment's middle).

    Over the higher end is free where neither line rises above that end across the label's width (the
    draws' gaps lie between the lines); under the lower end, where neither falls below it."""
    u0 = float(hand.u[0])
    ends = [float(hand.curve[0])] + ([float(hand.tangent[0])] if hand.tangent is not None else [])
    if not all(math.isfinite(e) for e in ends):
        return None
    width = _LABEL_WIDTH * (hi - lo)
    u = np.asarray(grid.u, dtype=float)
    lines = [np.asarray(grid.curve, dtype=float)] + ([np.asarray(grid.tangent, dtype=float)]
                                                     if grid.tangent is not None else [])
    for side, way in (("above", "left"), ("above", "right"), ("below", "right"), ("below", "left")):
        a, b = (u0 - width, u0) if way == "left" else (u0, u0 + width)
        if a < lo or b > hi:
            continue
        inside = (u >= a) & (u <= b)
        values = np.concatenate([line[inside] for line in lines])
        values = values[np.isfinite(values)]
        if side == "above" and np.all(values <= max(ends) + 1e-12):
            return side, way, max(ends)
        if side == "below" and np.all(values >= min(ends) - 1e-12):
            return side, way, min(ends)
    return None


def _hand_layers(
    hand: TangentPicture, datasets: dict[str, list[dict]], x_enc: dict, y_scale: dict,
    lo: float, hi: float, place: tuple[str, str, float] | None = None,
) -> list[alt.Chart]:
    """The reader's r, drawn last so no draw hides it: a thick segment in
    :data:`HIGHLIGHT_COLOR` from the curve to the tangent, a diamond at each end, and a
    label "your r = …, gap = …" where no line runs through it (:func:`_label_place`), else
    beside the segment's middle, on a halo over the draws."""
    u0 = float(hand.u[0])
    curve = float(hand.curve[0])
    y_enc = {"field": "y", "type": "quantitative", "scale": y_scale}
    if hand.tangent is not None and hand.gap is not None:
        tangent = float(hand.tangent[0])
        ends = [curve, tangent]
        text = [_("your r = {r:g}").format(r=u0),
                _("gap = {gap}").format(gap=_fmt(float(hand.gap[0])))]
    else:
        tangent = curve
        ends = [curve]
        text = [_("your r = {r:g}").format(r=u0)]
    datasets["hand"] = records(pd.DataFrame({"u": u0, "y": ends}))
    style = {"fontSize": 15, "fontWeight": "bold", "lineHeight": 18, "text": text}
    if place is not None:
        side, way, y = place
        datasets["hand_label"] = records(pd.DataFrame([{"u": u0, "y": y}]))
        label = {"type": "text", "align": "right" if way == "left" else "left", "dx": -6 if way == "left" else 6,
                 # Vega sets a multi-line text's first line on the baseline and the others under it
                 "baseline": "bottom" if side == "above" else "top",
                 "dy": -10 - style["lineHeight"] * (len(text) - 1) if side == "above" else 10, **style}
    else:
        datasets["hand_label"] = records(pd.DataFrame([{"u": u0, "y": (curve + tangent) / 2}]))
        right = u0 > lo + 0.7 * (hi - lo)  # near the right edge the label goes to the left
        label = {"type": "text", **beside(right, 14), "baseline": "middle", **style}
    layers = []
    if len(ends) == 2:
        layers.append(alt.Chart(
            {"name": "hand"},
            mark={"type": "line", "strokeWidth": 5, "color": HIGHLIGHT_COLOR, "clip": True},
            encoding=alt.FacetedEncoding(x=x_enc, y=y_enc),
        ))
    layers.append(alt.Chart(
        {"name": "hand"},
        mark={"type": "point", "shape": "diamond", "filled": True, "size": 170,
              "color": HIGHLIGHT_COLOR, "stroke": "white", "strokeWidth": 1.5, "opacity": 1},
        encoding=alt.FacetedEncoding(x=x_enc, y=y_enc),
    ))
    layers.append(alt.Chart(  # the halo: the same text, thick and white, underneath
        {"name": "hand_label"},
        mark={**label, "color": "white", "stroke": "white", "strokeWidth": 5,
              "strokeJoin": "round"},
        encoding=alt.FacetedEncoding(x=x_enc, y=y_enc),
    ))
    layers.append(alt.Chart(
        {"name": "hand_label"},
        mark={**label, "color": HIGHLIGHT_COLOR},
        encoding=alt.FacetedEncoding(x=x_enc, y=y_enc),
    ))
    return layers
