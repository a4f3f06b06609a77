"""Charts of the "approx_kl in practice" page: clamps along a drift path.

Pure builders: :mod:`kl_core.libraries.clamps` results in,
``altair`` charts out, no Streamlit.  Built in the fast style of
``docs/app_conventions.md``: Altair objects at the top, plain Vega-Lite dicts
inside, rows in the top-level ``datasets``.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from charts.histograms import records
from charts.palette import CONFIG, REFERENCE_COLOR, ZERO_COLOR, color, finish
from i18n import N_, _
from kl_core.libraries.clamps import ClampCurve, ClampPoint, entry_by_id

__all__ = [
    "CLAMPED",
    "LIBRARY",
    "EXACT",
    "UNCLAMPED",
    "clamp_chart",
    "clamp_hit_chart",
]

#: The three lines of :func:`clamp_chart`, as their rows name them (shown translated).
EXACT = N_("exact KL")
UNCLAMPED = N_("no clamps")
CLAMPED = N_("library (clamped)")
#: The library's line where the option has no clamps (TRL's k3, shown for reference).
LIBRARY = N_("library")
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


def _theta_x(curve: ClampCurve, x_title: str | None) -> dict:
    """The drift θ axis of both clamp charts: the curve's θ range, six ticks."""
    return {
        "field": "theta",
        "type": "quantitative",
        "title": _("drift θ") if x_title is None else x_title,
        "scale": {"domain": [float(curve.theta[0]), float(curve.theta[-1])], "nice": False},
        "axis": {"tickCount": 6},
    }


def _tooltip(series_title: str, field: str, title: str, fmt: str) -> list[dict]:
    """A clamp chart's tooltip: the line, θ, and the line's value ``field``."""
    return [
        {"field": "series", "type": "nominal", "title": series_title},
        {"field": "theta", "type": "quantitative", "title": "θ", "format": ".3g"},
        {"field": field, "type": "quantitative", "title": title, "format": fmt},
    ]


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
        The library's clamped value (legend "library (clamped)", or "library" for an entry
        without clamps, such as TRL's k3) solid, the estimator without clamps as a
        thick dotted line and the exact KL thin, black and dashed on top (for
        k1 and k3 the two coincide: the dots show round the dashes), on a
        symmetric-log y axis (linear below 1, logarithmic above; its title
        says so) so that small and large drifts both show.
    """
    est = color(estimator_key)
    clamped = entry_by_id(curve.entry_id).clamped
    names = {EXACT: _(EXACT), UNCLAMPED: _(UNCLAMPED), CLAMPED: _(CLAMPED if clamped else LIBRARY)}
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
    x_value = _theta_x(curve, x_title)
    top = float(max(curve.kl.max(), curve.unclamped_mean.max(), curve.mean.max(), 1.0))
    y_value = {
        "field": "value",
        "type": "quantitative",
        "title": [_("mean per token (nats),"), _("symmetric log scale: linear below 1")],
        "scale": {"type": "symlog", "constant": 1},
        "axis": {"values": [t for t in _SYMLOG_TICKS if t <= 1.05 * top], "format": ".6~g"},
    }
    tooltip = _tooltip(_("line"), "value", _("mean per token"), ".5g")
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
    curve, point, x_title, height
        As for :func:`clamp_chart`; ``point``'s θ is marked with a rule and a dot.
    show_logr : bool
        Also draw the log-ratio clamp alone (dashed), for entries that have one.

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
    x_value = _theta_x(curve, x_title)
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
    tooltip = _tooltip(_("clamp"), "p", _("probability"), ".3g")
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
