"""The tangent-gap picture: a curve, its tangent at u = 1, and each sample's gap.

Pure builder: :class:`kl_core.bregman.TangentPicture` objects come in (the
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
from charts.palette import REFERENCE_COLOR, ZERO_COLOR, color, finish
from kl_core.bregman import TangentPicture

__all__ = ["CURVE_COLOR", "OTHER_GAP_COLOR", "TANGENT_COLOR", "gap_color", "tangent_gap_chart"]

CURVE_COLOR = REFERENCE_COLOR
TANGENT_COLOR = "#6E6E6E"
#: Gap colour of an f whose tangent-gap estimator is none of the named ones.
OTHER_GAP_COLOR = "#4D4D4D"


def gap_color(picture: TangentPicture) -> str:
    """The gap's colour: the estimator's own (k3 green, k3_pq orange, k2 blue), else dark grey."""
    return color(picture.estimator) if picture.estimator else OTHER_GAP_COLOR


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "∞" if x > 0 else "undefined"
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
    y_title: str = "value",
    subtitle: list[str] | None = None,
    title: str | None = None,
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
        One ratio chosen by the reader: a thick gap segment, labelled with its value.
    curve_label, tangent_label, gap_label : str
        Legend entries (``tangent_label`` None when there is no tangent).
    x_title, y_title : str
        Axis titles.
    subtitle : list of str, optional
        Lines under the title; the count of draws off the chart is appended.
    title : str, optional
        The chart title.
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
    if samples is not None and has_tangent:
        series.append(gap_label)
        colors.append(gap_col)
        dashes.append([1, 0])
    values = [np.asarray(grid.curve)] + ([np.asarray(grid.tangent)] if has_tangent else [])
    finite = np.concatenate([v[np.isfinite(v)] for v in values])
    y_lo, y_hi = float(finite.min()), float(finite.max())
    pad = 0.04 * (y_hi - y_lo if y_hi > y_lo else 1.0)  # room for the "your r" label below
    x_scale = {"domain": [0.0 if lo < 0.5 else lo, hi], "nice": False, "zero": False}
    y_scale = {"domain": [y_lo - 3 * pad, y_hi + pad], "nice": False, "zero": False}
    x_enc = {"field": "u", "type": "quantitative", "scale": x_scale}
    legend_scale = {"domain": series, "range": colors}

    datasets: dict[str, list[dict]] = {"lines": records(pd.concat(lines, ignore_index=True))}
    layers: list[alt.Chart] = []
    datasets["axes"] = records(pd.DataFrame({"u": [1.0], "value": [0.0]}))
    layers.append(
        alt.Chart(
            {"name": "axes"},
            mark={"type": "rule", "color": ZERO_COLOR, "strokeWidth": 1},
            encoding=alt.FacetedEncoding(
                y={"field": "value", "type": "quantitative", "scale": y_scale}
            ),
        )
    )
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
                y={"field": "value", "type": "quantitative", "scale": y_scale, "title": y_title},
                color={
                    "field": "series",
                    "type": "nominal",
                    "scale": legend_scale,
                    "legend": {"orient": "top", "title": None, "labelFontSize": 14,
                               "symbolStrokeWidth": 3, "labelLimit": 420},
                    "sort": None,
                },
                strokeDash={
                    "field": "series",
                    "type": "nominal",
                    "scale": {"domain": series, "range": dashes},
                    "legend": None,
                },
                tooltip=[
                    {"field": "series", "type": "nominal", "title": "line"},
                    {"field": "u", "type": "quantitative", "title": "u", "format": ".3f"},
                    {"field": "value", "type": "quantitative", "title": "value", "format": ".4g"},
                ],
            ),
        )
    )
    lines_sub = list(subtitle or [])
    if samples is not None:
        rows, drawn, off = _thin(samples, lo, hi)
        datasets["draws"] = records(rows)
        tooltip = [
            {"field": "u", "type": "quantitative", "title": "r", "format": ".4f"},
            {"field": "logu", "type": "quantitative", "title": "log r", "format": ".4f"},
            {"field": "curve", "type": "quantitative", "title": "curve", "format": ".4f"},
        ]
        if has_tangent:
            tooltip += [
                {"field": "tangent", "type": "quantitative", "title": "tangent", "format": ".4f"},
                {"field": "gap", "type": "quantitative", "title": "gap", "format": ".4f"},
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
            tooltip.append({"field": "count", "type": "quantitative", "title": "draws here"})
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
                f"{off:,} of {samples.u.size:,} draws have r outside [{lo:g}, {hi:g}] "
                "and are not drawn"
            )
    if hand is not None and hand.u.size:
        u0 = float(hand.u[0])
        row = {"u": u0, "curve": float(hand.curve[0]), "label_y": float(hand.curve[0])}
        if hand.tangent is not None and hand.gap is not None:
            row["tangent"] = float(hand.tangent[0])
            # under the lower end of the segment: below both lines nothing else is drawn
            row["label_y"] = min(row["curve"], row["tangent"])
            lines_sub.append(f"thick segment: your r = {u0:g}, gap {_fmt(float(hand.gap[0]))}")
        row["text"] = "your r"
        datasets["hand"] = records(pd.DataFrame([row]))
        if "tangent" in row:
            layers.append(
                alt.Chart(
                    {"name": "hand"},
                    mark={"type": "rule", "strokeWidth": 6, "color": gap_col},
                    encoding=alt.FacetedEncoding(
                        x=x_enc,
                        y={"field": "curve", "type": "quantitative", "scale": y_scale},
                        y2={"field": "tangent"},
                    ),
                )
            )
        layers.append(
            alt.Chart(
                {"name": "hand"},
                mark={"type": "point", "filled": True, "size": 160, "color": CURVE_COLOR,
                      "stroke": "white", "strokeWidth": 2},
                encoding=alt.FacetedEncoding(
                    x=x_enc, y={"field": "curve", "type": "quantitative", "scale": y_scale}
                ),
            )
        )
        span = hi - lo
        align = "left" if u0 < lo + 0.08 * span else ("right" if u0 > hi - 0.08 * span else "center")
        layers.append(
            alt.Chart(
                {"name": "hand"},
                mark={
                    "type": "text",
                    "align": align,
                    "baseline": "top",
                    "dy": 12,
                    "fontSize": 16,
                    "fontWeight": "bold",
                    "color": REFERENCE_COLOR,
                },
                encoding=alt.FacetedEncoding(
                    x=x_enc,
                    y={"field": "label_y", "type": "quantitative", "scale": y_scale},
                    text={"field": "text", "type": "nominal"},
                ),
            )
        )
    chart = alt.LayerChart(layer=layers, datasets=datasets)
    if title or lines_sub:
        chart.title = {"text": title or "", **({"subtitle": lines_sub} if lines_sub else {})}
    return finish(chart, height=height)
