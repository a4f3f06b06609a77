"""Chart of the "Config doctor" page: how hard a KL term pulls on a token, by its drift.

A pure builder: a :class:`kl_core.doctor.diagnosis.PullCurve` in, an ``altair`` chart out,
no Streamlit.  Built in the fast style of ``docs/app_conventions.md``.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from charts.histograms import records
from charts.palette import CONFIG, REFERENCE_COLOR, ZERO_COLOR, color, finish
from i18n import N_, _
from kl_core.doctor.diagnosis import PullCurve

__all__ = ["FORWARD", "REVERSE", "Y_LIMIT", "pull_chart"]

REVERSE = N_("∇KL[π_θ‖π_ref] (reverse KL)")
FORWARD = N_("∇KL[π_ref‖π_θ] (forward KL)")
#: The pull axis shows ±8 (lines leave the plot there): the forward KL's 1 − r reaches −400 at log r = 6.
Y_LIMIT = 8.0


def pull_chart(curve: PullCurve, *, estimator_key: str, option_label: str, unclamped_label: str | None = None,
               height: int = 300) -> alt.LayerChart:
    """The term's per-token pull c(x) beside the two KL gradients' pulls, by the token's log r.

    Parameters
    ----------
    curve : PullCurve
        From :func:`kl_core.doctor.diagnosis.pull_curve`.
    estimator_key : str
        The term's estimator (``"k1"``, ``"k2"``, ``"k3"``, ``"abs"``): its line colour.
    option_label : str
        The term's name in the legend, e.g. ``"low_var_kl (loss)"``.
    unclamped_label : str, optional
        Legend text of the term's pull without its clamps (:attr:`PullCurve.unclamped`), for an era
        whose first releases have no clamp; no such line when omitted.
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        The reverse-KL pull black dashed, the forward-KL pull grey dotted, the
        term's pull solid in its estimator's colour (without its clamps, long-dashed and
        thinner in the same colour); x the log-ratio
        log r = log π_ref(x) − log π_θ(x) (``lab.notation``), y the pull c(x), shown to ±:data:`Y_LIMIT`.
    """
    est = color(estimator_key) if estimator_key != "full" else REFERENCE_COLOR
    domain = [_(REVERSE), _(FORWARD), option_label]
    lines = [curve.reverse, curve.forward, curve.option]
    colors, dashes, widths = [REFERENCE_COLOR, ZERO_COLOR, est], [[7, 4], [3, 3], [1, 0]], [3, 3, 3]
    if unclamped_label is not None and curve.unclamped is not None:
        domain.append(unclamped_label)
        lines.append(curve.unclamped)
        colors.append(est)
        dashes.append([10, 5])
        widths.append(1.5)
    # Long rows (4 × n ≤ 5,000): the legend's labels hold brackets and dots, which a fold's field names can't.
    rows = pd.DataFrame({
        "logr": np.concatenate([curve.t] * len(lines)),
        "series": np.repeat(domain, len(curve.t)),
        "pull": np.concatenate(lines),  # the fixed y scale clips
    })
    x_value = {
        "field": "logr", "type": "quantitative",
        "title": _("log r = log(π_ref/π_θ) of the sampled token"),
        "scale": {"domain": [float(curve.t[0]), float(curve.t[-1])], "nice": False},
    }
    y_value = {
        "field": "pull", "type": "quantitative",
        "title": _("pull c(x): > 0 lowers π_θ(x)"),
        "scale": {"domain": [-Y_LIMIT, Y_LIMIT], "nice": False},
    }
    series = {
        "field": "series", "type": "nominal",
        "scale": {"domain": domain, "range": colors},
        "legend": {"title": None, "orient": "top", "columns": 1, "labelLimit": 320,
                   "labelColor": CONFIG["axis"]["labelColor"]},
    }
    encoding = dict(
        x=x_value,
        y=y_value,
        color=series,
        # the same legend as the colour's: Vega-Lite merges the two, so each symbol shows its dash
        strokeDash={"field": "series", "type": "nominal",
                    "scale": {"domain": domain, "range": dashes}, "legend": series["legend"]},
        strokeWidth={"field": "series", "type": "nominal",
                     "scale": {"domain": domain, "range": widths}, "legend": None},
        tooltip=[
            {"field": "series", "type": "nominal", "title": _("line")},
            {"field": "logr", "type": "quantitative", "title": "log r", "format": ".3g"},  # i18n: ok (notation)
            {"field": "pull", "type": "quantitative", "title": _("pull"), "format": ".4g"},
        ],
    )
    # the term's lines first, the two KLs' thin dashed and dotted lines over them: where the term follows one
    # (the caption says which), the reference still shows through
    references = domain[:2]
    layers = [alt.Chart({"name": "pull"}, mark={"type": "line", "clip": True},
                        transform=[{"filter": {"not": {"field": "series", "oneOf": references}}}],
                        encoding=alt.FacetedEncoding(**encoding)),
              alt.Chart({"name": "pull"}, mark={"type": "line", "clip": True},
                        transform=[{"filter": {"field": "series", "oneOf": references}}],
                        encoding=alt.FacetedEncoding(**encoding))]
    zero = alt.Chart(
        {"name": "zero"},
        mark={"type": "rule", "color": ZERO_COLOR, "strokeWidth": 1},
        encoding=alt.FacetedEncoding(y={"field": "y", "type": "quantitative"}),
    )
    datasets = {"pull": records(rows), "zero": records(pd.DataFrame({"y": [0.0]}))}
    return finish(alt.LayerChart(layer=[zero, *layers], datasets=datasets), height=height)
