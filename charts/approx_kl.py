"""Charts of the "approx_kl in practice" page: clamps along a drift path, per-position KL.

Pure builders: :mod:`kl_core.libraries.clamps` and :mod:`kl_core.audit.statistics` results in,
``altair`` charts out, no Streamlit.  Built in the fast style of
``docs/app_conventions.md``: Altair objects at the top, plain Vega-Lite dicts
inside, rows in the top-level ``datasets``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import pandas as pd

from charts.histograms import records
from charts.palette import CONFIG, REFERENCE_COLOR, ZERO_COLOR, color, finish, label, scales
from kl_core.audit.statistics import PositionBucket
from kl_core.libraries.clamps import ClampCurve, ClampPoint
from lab.i18n import N_, _

__all__ = [
    "CLAMPED",
    "EXACT",
    "UNCLAMPED",
    "bucket_label",
    "clamp_chart",
    "clamp_hit_chart",
    "estimates_chart",
    "position_chart",
]

#: The three lines of :func:`clamp_chart`, as their rows name them (shown translated).
EXACT = N_("exact KL")
UNCLAMPED = N_("no clamps")
CLAMPED = N_("library (clamped)")
_GUIDE = ZERO_COLOR
#: Title lines are never cut short with "…"; each line is short enough for a 260-px panel.
TITLE_LIMIT = 1000
#: Legend text in the axes' colour (charts.palette.CONFIG), where the palette sets one.
_LEGEND_TEXT = {k: v for k, v in {"labelColor": CONFIG.get("axis", {}).get("labelColor")}.items() if v}
#: y ticks of the symmetric-log axis: ½ below 1, then 1–2–5 (its title says the scale).
_SYMLOG_TICKS = [0, 0.5, 1, 2, 5, 10, 20, 50, 100, 200]


def _theta_rule(theta: float, x_value: dict) -> tuple[dict, alt.Chart]:
    rows = records(pd.DataFrame({"theta": [theta]}))
    layer = alt.Chart(
        {"name": "selected"},
        mark={"type": "rule", "color": _GUIDE, "strokeWidth": 1.5, "strokeDash": [2, 2]},
        encoding=alt.FacetedEncoding(x=x_value),
    )
    return {"selected": rows}, layer


def _legend(stroke_width: float | None = 3) -> dict:
    """A legend of line symbols (dash pattern as drawn), dark text, one entry a line above the
    plot (a panel may be only 260 px wide).  ``stroke_width`` None: the lines' own widths."""
    legend = {"title": None, "orient": "top", "labelLimit": 320, "symbolType": "stroke",
              "symbolSize": 500, "columns": 1, **_LEGEND_TEXT}
    if stroke_width is not None:
        legend["symbolStrokeWidth"] = stroke_width
    return legend


def clamp_chart(
    curve: ClampCurve,
    point: ClampPoint,
    *,
    estimator_key: str,
    title: str | list[str],
    x_title: str | None = None,
    height: int = 420,
) -> alt.LayerChart:
    """The exact KL, the unclamped and the clamped mean of one entry along a drift path.

    Parameters
    ----------
    curve : ClampCurve
        From :func:`kl_core.libraries.clamps.clamp_curve`.
    point : ClampPoint
        The same entry at the selected θ (from :func:`kl_core.libraries.clamps.clamp_point`),
        marked with a vertical rule and three dots.
    estimator_key : str
        The entry's estimator (``"k1"``, ``"k2"``, ``"k3"``): the colour of its lines.
    title : str or list of str
        Chart title, e.g. the entry's name (a list: one line each).
    x_title : str, optional
        Title of the θ axis (default "drift θ", translated).
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        The library's clamped value solid, the estimator without clamps as a
        thick dotted line and the exact KL thin, black and dashed on top (for
        k1 and k3 the two coincide: the dots show round the dashes), on a
        symmetric-log y axis (linear below 1, logarithmic above; its title
        says so) so that small and large drifts both show.
    """
    est = color(estimator_key)
    names = {EXACT: _(EXACT), UNCLAMPED: _(UNCLAMPED), CLAMPED: _(CLAMPED)}
    # Wide rows, folded to long in the browser: a third of the rows Altair walks on to_dict.
    rows = pd.DataFrame(
        {
            "theta": curve.theta,
            names[EXACT]: curve.kl,
            names[UNCLAMPED]: curve.unclamped_mean,
            names[CLAMPED]: curve.mean,
        }
    )
    marks = pd.DataFrame(
        {
            "theta": [point.theta] * 3,
            "series": [names[CLAMPED], names[UNCLAMPED], names[EXACT]],
            "value": [point.mean, point.unclamped_mean, point.kl],
        }
    )
    domain = [names[CLAMPED], names[UNCLAMPED], names[EXACT]]  # drawing order: exact on top
    colour = {
        "field": "series",
        "type": "nominal",
        "scale": {"domain": domain, "range": [est, est, REFERENCE_COLOR]},
        "legend": _legend(),
        "sort": None,
    }
    dash = {
        "field": "series",
        "type": "nominal",
        "scale": {"domain": domain, "range": [[1, 0], [2, 6], [7, 4]]},
        "legend": _legend(),
        "sort": None,
    }
    x_value = {
        "field": "theta",
        "type": "quantitative",
        "title": _("drift θ") if x_title is None else x_title,
        "scale": {"domain": [float(curve.theta[0]), float(curve.theta[-1])], "nice": False},
        "axis": {"tickCount": 6},
    }
    top = float(max(curve.kl.max(), curve.unclamped_mean.max(), curve.mean.max(), 1.0))
    y_value = {
        "field": "value",
        "type": "quantitative",
        "title": [_("mean per token (nats),"), _("symmetric log scale: linear below 1")],
        "scale": {"type": "symlog", "constant": 1},
        "axis": {"values": [t for t in _SYMLOG_TICKS if t <= 1.05 * top], "format": "~g"},
    }
    tooltip = [
        {"field": "series", "type": "nominal", "title": _("line")},
        {"field": "theta", "type": "quantitative", "title": "θ", "format": ".3g"},
        {"field": "value", "type": "quantitative", "title": _("mean per token"), "format": ".5g"},
    ]
    sel_data, sel_layer = _theta_rule(point.theta, x_value)
    datasets = {"curve": records(rows), "marks": records(marks), **sel_data}
    widths = {names[CLAMPED]: 3, names[UNCLAMPED]: 6, names[EXACT]: 2}
    layers = [sel_layer]
    for series in domain:  # one layer per line, in drawing order
        layers.append(
            alt.Chart(
                {"name": "curve"},
                mark={"type": "line", "strokeWidth": widths[series], "strokeCap": "round",
                      "clip": True},
                transform=[{"fold": domain, "as": ["series", "value"]},
                           {"filter": {"field": "series", "equal": series}}],
                encoding=alt.FacetedEncoding(
                    x=x_value, y=y_value, color=colour, strokeDash=dash, tooltip=tooltip,
                ),
            )
        )
    layers.append(
        alt.Chart(
            {"name": "marks"},
            mark={"type": "point", "filled": True, "size": 80, "opacity": 1},
            encoding=alt.FacetedEncoding(
                x=x_value, y=y_value,
                color={**colour, "legend": None}, tooltip=tooltip,
            ),
        )
    )
    chart = alt.LayerChart(layer=layers, datasets=datasets, title={"text": title, "limit": TITLE_LIMIT})
    return finish(chart, height=height)


def clamp_hit_chart(
    curve: ClampCurve,
    point: ClampPoint,
    *,
    x_title: str | None = None,
    show_logr: bool = False,
    height: int = 420,
) -> alt.LayerChart:
    """The probability that a sampled token hits a clamp, along the drift path.

    Parameters
    ----------
    curve : ClampCurve
        From :func:`kl_core.libraries.clamps.clamp_curve`.
    point : ClampPoint
        The selected θ, marked with a rule and a dot.
    x_title : str, optional
        Title of the θ axis (default "drift θ", translated).
    show_logr : bool
        Also draw the log-ratio clamp alone (dashed), for entries that have one.
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        The y axis runs a little below 0 and above its top tick, so that lines
        at 0 % and at the top are drawn inside the plot, level with their ticks.
    """
    any_name, logr_name = _("any clamp"), _("log-ratio clamp")
    series = [any_name] + ([logr_name] if show_logr else [])
    wide = {"theta": curve.theta, any_name: curve.hit_prob}
    if show_logr:
        wide[logr_name] = curve.logr_hit_prob
    rows = pd.DataFrame(wide)
    marks = pd.DataFrame({"theta": [point.theta], "series": [any_name], "p": [point.hit_prob]})
    x_value = {
        "field": "theta",
        "type": "quantitative",
        "title": _("drift θ") if x_title is None else x_title,
        "scale": {"domain": [float(curve.theta[0]), float(curve.theta[-1])], "nice": False},
        "axis": {"tickCount": 6},
    }
    # 0-100 % once clamps bite often; a 0-5 % window keeps rare hits visible
    top = min(1.0, max(0.05, 1.2 * float(curve.hit_prob.max())))
    step = next(s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25) if top / s <= 5)
    ticks = [round(i * step, 4) for i in range(int(top / step + 1e-9) + 1)]
    pad = 0.04 * top
    y_value = {
        "field": "p",
        "type": "quantitative",
        "title": _("P(sampled token is clamped)"),
        "scale": {"domain": [-pad, top + pad], "nice": False, "zero": False},
        "axis": {"format": ".0%", "values": ticks},
    }
    domain = [any_name, logr_name]
    colour = {
        "field": "series",
        "type": "nominal",
        "scale": {"domain": domain, "range": [_GUIDE, color("abs")]},
        "legend": _legend() if show_logr else None,
    }
    tooltip = [
        {"field": "series", "type": "nominal", "title": _("clamp")},
        {"field": "theta", "type": "quantitative", "title": "θ", "format": ".3g"},
        {"field": "p", "type": "quantitative", "title": _("probability"), "format": ".3g"},
    ]
    sel_data, sel_layer = _theta_rule(point.theta, x_value)
    datasets = {"hits": records(rows), "marks": records(marks), **sel_data}
    layers = [
        sel_layer,
        alt.Chart(
            {"name": "hits"},
            mark={"type": "line", "strokeWidth": 3, "clip": True},
            transform=[{"fold": series, "as": ["series", "p"]}],
            encoding=alt.FacetedEncoding(
                x=x_value,
                y=y_value,
                color=colour,
                strokeDash={
                    "field": "series",
                    "type": "nominal",
                    "scale": {"domain": domain, "range": [[1, 0], [6, 3]]},
                    "legend": _legend() if show_logr else None,
                },
                tooltip=tooltip,
            ),
        ),
        alt.Chart(
            {"name": "marks"},
            mark={"type": "point", "filled": True, "size": 80, "color": _GUIDE},
            encoding=alt.FacetedEncoding(x=x_value, y=y_value, tooltip=tooltip),
        ),
    ]
    chart = alt.LayerChart(
        layer=layers, datasets=datasets, title={"text": _("How often a clamp is hit"), "limit": TITLE_LIMIT}
    )
    return finish(chart, height=height)


def bucket_label(bucket: PositionBucket) -> str:
    """``"0"``, ``"4–7"`` or ``"262144+"``: the positions a bucket holds."""
    if bucket.hi is None:
        return f"{bucket.lo}+"
    if bucket.hi == bucket.lo + 1:
        return str(bucket.lo)
    return f"{bucket.lo}–{bucket.hi - 1}"


def position_chart(
    buckets: Sequence[PositionBucket],
    keys: Sequence[str] = ("k1", "k2", "k3"),
    *,
    title: str | None = None,
    height: int = 320,
) -> alt.LayerChart:
    """Each estimator's mean per position bucket, with ±2 standard-error bars.

    Parameters
    ----------
    buckets : sequence of PositionBucket
        ``AuditReport.positions`` from :func:`kl_core.audit.statistics.audit`.
    keys : sequence of str
        Estimator keys to draw, each in its colour.
    title : str, optional
        Chart title (default "Mean per token by position", translated).
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        Buckets on the x axis (log2 widths, in position order), one dot per
        estimator with a ±2 SE bar; bars are omitted where the SE is undefined.
    """
    rows = []
    for b in buckets:
        for k in keys:
            m, se = b.mean[k], b.se[k]
            ok = math.isfinite(se)
            rows.append(
                {
                    "bucket": bucket_label(b),
                    "lo": b.lo,
                    "estimator": label(k),
                    "mean": m,
                    "low": m - 2 * se if ok else None,
                    "high": m + 2 * se if ok else None,
                    "se": se if ok else None,
                    "tokens": b.count,
                }
            )
    df = pd.DataFrame(rows)
    order = [bucket_label(b) for b in sorted(buckets, key=lambda b: b.lo)]
    names = [label(k) for k in keys]
    looks = scales(names, keys)  # one look per estimator (charts.palette): colour and shape
    x_value = {
        "field": "bucket",
        "type": "ordinal",
        "title": _("token position (log2 buckets)"),
        "sort": order,
        "axis": {"labelAngle": 0},
    }
    colour = {
        "field": "estimator",
        "type": "nominal",
        "scale": looks["color"],
        "legend": {"title": None, "orient": "top"},
    }
    shape = {"field": "estimator", "type": "nominal", "scale": looks["shape"],
             "legend": {"title": None, "orient": "top"}}
    offset = {"field": "estimator", "type": "nominal", "sort": names}
    tooltip = [
        {"field": "estimator", "type": "nominal", "title": _("estimator")},
        {"field": "bucket", "type": "ordinal", "title": _("positions")},
        {"field": "tokens", "type": "quantitative", "title": _("tokens")},
        {"field": "mean", "type": "quantitative", "title": _("mean"), "format": ".4g"},
        {"field": "se", "type": "quantitative", "title": _("SE"), "format": ".2g"},
    ]
    y_title = _("mean per token, ±2 SE")
    layers = [
        alt.Chart(
            {"name": "zero"},
            mark={"type": "rule", "color": ZERO_COLOR, "strokeWidth": 1},
            encoding=alt.FacetedEncoding(y={"datum": 0}),
        ),
        alt.Chart(
            {"name": "buckets"},
            mark={"type": "rule", "strokeWidth": 2},
            encoding=alt.FacetedEncoding(
                x=x_value,
                xOffset=offset,
                y={"field": "low", "type": "quantitative", "title": y_title},
                y2={"field": "high"},
                color=colour,
            ),
        ),
        alt.Chart(
            {"name": "buckets"},
            mark={"type": "point", "filled": True, "size": 70},
            encoding=alt.FacetedEncoding(
                x=x_value,
                xOffset=offset,
                y={"field": "mean", "type": "quantitative", "title": y_title},
                color=colour,
                shape=shape,
                tooltip=tooltip,
            ),
        ),
    ]
    datasets = {"buckets": records(df), "zero": [{}]}
    chart = alt.LayerChart(layer=layers, datasets=datasets, title={
        "text": _("Mean per token by position") if title is None else title})
    return finish(chart, height=height)


def estimates_chart(
    rows: Sequence[tuple[str, float, float]],
    *,
    exact: float | None = None,
    exact_label: str | None = None,
    title: str | None = None,
    height: int = 220,
) -> alt.LayerChart:
    """Each estimator's mean over a file's tokens with a ±2 SE bar, against the exact KL.

    Parameters
    ----------
    rows : sequence of (str, float, float)
        ``(key, mean, se)`` per estimator, top to bottom; ``key`` is an estimator key
        (``k1``, ``k3``, ``rb``); a non-finite ``se`` draws the dot without a bar.
    exact : float, optional
        The exact KL, drawn as a vertical rule when given.
    exact_label : str, optional
        The rule's tooltip text (default "exact KL", translated).
    title : str, optional
        Chart title (default "Mean per token, ±2 SE", translated).
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        One row per estimator (dot at the mean, horizontal bar from mean − 2 SE to
        mean + 2 SE) and the exact value as a dashed vertical rule.
    """
    names = [k if k == "rb" else label(k) for k, _m, _se in rows]
    keys = [k for k, _m, _se in rows]
    data = []
    for name, (_k, m, se) in zip(names, rows, strict=True):
        ok = math.isfinite(se)
        data.append({"estimator": name, "mean": m, "se": se if ok else None,
                     "low": m - 2 * se if ok else None, "high": m + 2 * se if ok else None})
    looks = scales(names, keys)
    x_title = _("mean per token, ±2 SE")
    y_value = {"field": "estimator", "type": "nominal", "sort": names, "title": None,
               "axis": {"labelLimit": 140}}
    colour = {"field": "estimator", "type": "nominal", "scale": looks["color"], "legend": None}
    tooltip = [
        {"field": "estimator", "type": "nominal", "title": _("estimator")},
        {"field": "mean", "type": "quantitative", "title": _("mean"), "format": ".5f"},
        {"field": "se", "type": "quantitative", "title": _("SE"), "format": ".2g"},
    ]
    layers = [
        alt.Chart(
            {"name": "estimates"},
            mark={"type": "rule", "strokeWidth": 3},
            encoding=alt.FacetedEncoding(
                y=y_value, x={"field": "low", "type": "quantitative", "title": x_title,
                              "scale": {"zero": False}},
                x2={"field": "high"}, color=colour,
            ),
        ),
        alt.Chart(
            {"name": "estimates"},
            mark={"type": "point", "filled": True, "size": 90},
            encoding=alt.FacetedEncoding(
                y=y_value, x={"field": "mean", "type": "quantitative", "title": x_title},
                color=colour, shape={"field": "estimator", "type": "nominal", "scale": looks["shape"],
                                     "legend": None},
                tooltip=tooltip,
            ),
        ),
    ]
    datasets = {"estimates": records(pd.DataFrame(data))}
    if exact is not None:
        name = _(EXACT) if exact_label is None else exact_label
        datasets["exact"] = [{"value": exact, "series": name}]
        layers.append(alt.Chart(
            {"name": "exact"},
            mark={"type": "rule", "color": REFERENCE_COLOR, "strokeWidth": 1.5, "strokeDash": [5, 3]},
            encoding=alt.FacetedEncoding(
                x={"field": "value", "type": "quantitative", "title": x_title},
                tooltip=[{"field": "series", "type": "nominal", "title": _("series")},
                         {"field": "value", "type": "quantitative", "title": _("value"), "format": ".5f"}],
            ),
        ))
        layers.append(alt.Chart(  # the rule's name, just above the plot
            {"name": "exact"},
            mark={"type": "text", "align": "left", "baseline": "bottom", "dx": 4, "dy": -2,
                  "color": REFERENCE_COLOR, "fontSize": 12},
            encoding=alt.FacetedEncoding(
                x={"field": "value", "type": "quantitative", "title": x_title},
                y={"value": 0}, text={"field": "series"},
            ),
        ))
    chart = alt.LayerChart(layer=layers, datasets=datasets, title={
        "text": _("Mean per token, ±2 SE") if title is None else title, "limit": TITLE_LIMIT})
    return finish(chart, height=height)
