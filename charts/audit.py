"""Charts of the "Audit your log-probs" page: each estimator's mean per token position.

Pure builders: :mod:`kl_core.audit.statistics` results in, ``altair`` charts out,
no Streamlit.  Built in the fast style of ``docs/app_conventions.md``: Altair
objects at the top, plain Vega-Lite dicts inside, rows in the top-level ``datasets``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import pandas as pd

from charts.approx_kl import EXACT, TITLE_LIMIT
from charts.histograms import records
from charts.palette import REFERENCE_COLOR, ZERO_COLOR, finish, label, scales
from i18n import _
from kl_core.audit.statistics import PositionBucket

__all__ = ["bucket_label", "estimates_chart", "position_chart"]


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
        Chart title (default "Mean per token by position", translated).  The y axis says "±2 SE"
        only when some bucket has a finite SE, so a bar is drawn.
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
    barred = any(r["se"] is not None for r in rows)
    y_title = _("mean per token, ±2 SE") if barred else _("mean per token")
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
        Chart title (default "Mean per token, ±2 SE", translated, or "Mean per token" and an axis
        without "±2 SE" when no row has a finite ``se``, so no bar is drawn).
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
    barred = any(r["se"] is not None for r in data)
    x_title = _("mean per token, ±2 SE") if barred else _("mean per token")
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
        "text": (_("Mean per token, ±2 SE") if barred else _("Mean per token")) if title is None else title,
        "limit": TITLE_LIMIT})
    return finish(chart, height=height)
