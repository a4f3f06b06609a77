"""Charts of the "approx_kl in practice" page: clamps along a drift path, per-position KL.

Pure builders: :mod:`kl_core.clamps` and :mod:`kl_core.audit` results in,
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
from charts.palette import REFERENCE_COLOR, ZERO_COLOR, color, finish, label
from kl_core.audit import PositionBucket
from kl_core.clamps import ClampCurve, ClampPoint

__all__ = [
    "CLAMPED",
    "EXACT",
    "UNCLAMPED",
    "bucket_label",
    "clamp_chart",
    "clamp_hit_chart",
    "position_chart",
]

EXACT = "exact KL"
UNCLAMPED = "no clamps"
CLAMPED = "library (clamped)"
_GUIDE = "#5A5A5A"


def _theta_rule(theta: float, x_value: dict) -> tuple[dict, alt.Chart]:
    rows = records(pd.DataFrame({"theta": [theta]}))
    layer = alt.Chart(
        {"name": "selected"},
        mark={"type": "rule", "color": _GUIDE, "strokeWidth": 1.5, "strokeDash": [2, 2]},
        encoding=alt.FacetedEncoding(x=x_value),
    )
    return {"selected": rows}, layer


def clamp_chart(
    curve: ClampCurve,
    point: ClampPoint,
    *,
    estimator_key: str,
    title: str,
    x_title: str = "drift θ",
    height: int = 340,
) -> alt.LayerChart:
    """The exact KL, the unclamped and the clamped mean of one entry along a drift path.

    Parameters
    ----------
    curve : ClampCurve
        From :func:`kl_core.clamps.clamp_curve`.
    point : ClampPoint
        The same entry at the selected θ (from :func:`kl_core.clamps.clamp_point`),
        marked with a vertical rule and three dots.
    estimator_key : str
        The entry's estimator (``"k1"``, ``"k2"``, ``"k3"``): the colour of its lines.
    title : str
        Chart title, e.g. the entry's name.
    x_title : str
        Title of the θ axis.
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        Exact KL black dashed, the estimator without clamps dotted, the
        library's clamped value solid, on a symmetric-log y axis (linear below
        1, logarithmic above) so that small and large drifts both show.
    """
    est = color(estimator_key)
    # Wide rows, folded to long in the browser: a third of the rows Altair walks on to_dict.
    rows = pd.DataFrame(
        {
            "theta": curve.theta,
            EXACT: curve.kl,
            UNCLAMPED: curve.unclamped_mean,
            CLAMPED: curve.mean,
        }
    )
    marks = pd.DataFrame(
        {
            "theta": [point.theta] * 3,
            "series": [EXACT, UNCLAMPED, CLAMPED],
            "value": [point.kl, point.unclamped_mean, point.mean],
        }
    )
    domain = [EXACT, UNCLAMPED, CLAMPED]
    colour = {
        "field": "series",
        "type": "nominal",
        "scale": {"domain": domain, "range": [REFERENCE_COLOR, est, est]},
        "legend": {"title": None, "orient": "top", "labelLimit": 320},
    }
    x_value = {
        "field": "theta",
        "type": "quantitative",
        "title": x_title,
        "scale": {"domain": [float(curve.theta[0]), float(curve.theta[-1])], "nice": False},
    }
    y_value = {
        "field": "value",
        "type": "quantitative",
        "title": "mean per token (nats)",
        "scale": {"type": "symlog", "constant": 1},
        "axis": {"values": [0, 0.5, 1, 2, 5, 10, 20, 50, 100, 200], "format": "~g"},
    }
    tooltip = [
        {"field": "series", "type": "nominal", "title": "line"},
        {"field": "theta", "type": "quantitative", "title": "θ", "format": ".3g"},
        {"field": "value", "type": "quantitative", "title": "mean per token", "format": ".5g"},
    ]
    sel_data, sel_layer = _theta_rule(point.theta, x_value)
    datasets = {"curve": records(rows), "marks": records(marks), **sel_data}
    layers = [
        sel_layer,
        alt.Chart(
            {"name": "curve"},
            mark={"type": "line", "strokeWidth": 3, "clip": True},
            transform=[{"fold": domain, "as": ["series", "value"]}],
            encoding=alt.FacetedEncoding(
                x=x_value,
                y=y_value,
                color=colour,
                strokeDash={
                    "field": "series",
                    "type": "nominal",
                    "scale": {"domain": domain, "range": [[7, 4], [1, 4], [1, 0]]},
                    "legend": None,
                },
                opacity={
                    "field": "series",
                    "type": "nominal",
                    "scale": {"domain": domain, "range": [1.0, 0.55, 1.0]},
                    "legend": None,
                },
                tooltip=tooltip,
            ),
        ),
        alt.Chart(
            {"name": "marks"},
            mark={"type": "point", "filled": True, "size": 80},
            encoding=alt.FacetedEncoding(x=x_value, y=y_value, color=colour, tooltip=tooltip),
        ),
    ]
    chart = alt.LayerChart(layer=layers, datasets=datasets, title={"text": title})
    return finish(chart, height=height)


def clamp_hit_chart(
    curve: ClampCurve,
    point: ClampPoint,
    *,
    x_title: str = "drift θ",
    show_logr: bool = False,
    height: int = 340,
) -> alt.LayerChart:
    """The probability that a sampled token hits a clamp, along the drift path.

    Parameters
    ----------
    curve : ClampCurve
        From :func:`kl_core.clamps.clamp_curve`.
    point : ClampPoint
        The selected θ, marked with a rule and a dot.
    x_title : str
        Title of the θ axis.
    show_logr : bool
        Also draw the log-ratio clamp alone (dashed), for entries that have one.
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
    """
    series = ["any clamp"] + (["log-ratio clamp"] if show_logr else [])
    wide = {"theta": curve.theta, "any clamp": curve.hit_prob}
    if show_logr:
        wide["log-ratio clamp"] = curve.logr_hit_prob
    rows = pd.DataFrame(wide)
    marks = pd.DataFrame({"theta": [point.theta], "series": ["any clamp"], "p": [point.hit_prob]})
    x_value = {
        "field": "theta",
        "type": "quantitative",
        "title": x_title,
        "scale": {"domain": [float(curve.theta[0]), float(curve.theta[-1])], "nice": False},
    }
    y_value = {
        "field": "p",
        "type": "quantitative",
        "title": "P(sampled token is clamped)",
        # 0-100 % once clamps bite often; a 0-5 % window keeps rare hits visible
        "scale": {"domain": [0, min(1.0, max(0.05, 1.2 * float(curve.hit_prob.max())))]},
        "axis": {"format": "%", "tickCount": 5},
    }
    domain = ["any clamp", "log-ratio clamp"]
    colour = {
        "field": "series",
        "type": "nominal",
        "scale": {"domain": domain, "range": [_GUIDE, "#56B4E9"]},
        "legend": {"title": None, "orient": "top"} if show_logr else None,
    }
    tooltip = [
        {"field": "series", "type": "nominal", "title": "clamp"},
        {"field": "theta", "type": "quantitative", "title": "θ", "format": ".3g"},
        {"field": "p", "type": "quantitative", "title": "probability", "format": ".3g"},
    ]
    sel_data, sel_layer = _theta_rule(point.theta, x_value)
    datasets = {"hits": records(rows), "marks": records(marks), **sel_data}
    layers = [
        sel_layer,
        alt.Chart(
            {"name": "hits"},
            mark={"type": "line", "strokeWidth": 3},
            transform=[{"fold": series, "as": ["series", "p"]}],
            encoding=alt.FacetedEncoding(
                x=x_value,
                y=y_value,
                color=colour,
                strokeDash={
                    "field": "series",
                    "type": "nominal",
                    "scale": {"domain": domain, "range": [[1, 0], [6, 3]]},
                    "legend": None,
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
        layer=layers, datasets=datasets, title={"text": "How often a clamp is hit"}
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
    title: str = "Mean per token by position",
    height: int = 320,
) -> alt.LayerChart:
    """Each estimator's mean per position bucket, with ±2 standard-error bars.

    Parameters
    ----------
    buckets : sequence of PositionBucket
        ``AuditReport.positions`` from :func:`kl_core.audit.audit`.
    keys : sequence of str
        Estimator keys to draw, each in its colour.
    title : str
        Chart title.
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
    x_value = {
        "field": "bucket",
        "type": "ordinal",
        "title": "token position (log2 buckets)",
        "sort": order,
        "axis": {"labelAngle": 0},
    }
    colour = {
        "field": "estimator",
        "type": "nominal",
        "scale": {"domain": names, "range": [color(k) for k in keys]},
        "legend": {"title": None, "orient": "top"},
    }
    offset = {"field": "estimator", "type": "nominal", "sort": names}
    tooltip = [
        {"field": "estimator", "type": "nominal"},
        {"field": "bucket", "type": "ordinal", "title": "positions"},
        {"field": "tokens", "type": "quantitative", "title": "tokens"},
        {"field": "mean", "type": "quantitative", "format": ".4g"},
        {"field": "se", "type": "quantitative", "title": "SE", "format": ".2g"},
    ]
    y_title = "mean per token, ±2 SE"
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
                tooltip=tooltip,
            ),
        ),
    ]
    datasets = {"buckets": records(df), "zero": [{}]}
    chart = alt.LayerChart(layer=layers, datasets=datasets, title={"text": title})
    return finish(chart, height=height)
