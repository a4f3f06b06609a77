"""The Lessons page's setting pictures, drawn before any answer.

Pure builders: numbers computed by ``kl_core`` come in (by
:func:`lab.lessons.setting_figure`), an Altair chart goes out.
:func:`setting_chart` draws the densities of q (sampled from) and p;
:func:`token_pair_chart` two distributions over the same tokens (lessons 5
and 6, :mod:`kl_core.lessons.settings`).  Each shows the step's setting and
nothing it asks for.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from charts.histograms import check_rows, records
from charts.palette import EXTRA_COLORS, REFERENCE_COLOR, finish, fitted_legend
from i18n import _

__all__ = ["SAMPLED_COLOR", "setting_chart", "token_pair_chart"]

#: The sampled distribution's bars: near-black, and one mid tone in the dark theme for bar and legend
#: alike (a black bar and its legend square are redrawn differently there; this grey is lifted).
SAMPLED_COLOR = EXTRA_COLORS["dark grey"]
#: The alpha of the compared distribution's fill (#RRGGBBAA): a tint, so its bars read as outlines.
_TINT = "24"


def setting_chart(x: np.ndarray, q_pdf: np.ndarray, p_pdf: np.ndarray, *, q_name: str, p_name: str,
                  height: int = 260) -> alt.Chart:
    """Two density curves on one axis, no title (the legend names them): q (solid, the sampler) and
    p (dashed, the target)."""
    q_label = _("q = {name} (samples)").format(name=q_name)
    p_label = _("p = {name}").format(name=p_name)
    df = check_rows(pd.DataFrame({
        "x": np.concatenate([x, x]),
        "density": np.concatenate([q_pdf, p_pdf]),
        "curve": [q_label] * len(x) + [p_label] * len(x),
    }))
    domain = [q_label, p_label]
    chart = alt.Chart(  # one top-level chart: a one-layer LayerChart would lift (and tag) the data
        {"name": "curves"},
        mark={"type": "line", "strokeWidth": 2.5},
        encoding=alt.FacetedEncoding(
            x={"field": "x", "type": "quantitative", "title": "x", "scale": {"nice": False}},
            y={"field": "density", "type": "quantitative", "title": _("density"), "axis": {"tickCount": 3}},
            color={"field": "curve", "type": "nominal", "title": None, "sort": domain,
                   "scale": {"domain": domain, "range": [REFERENCE_COLOR, EXTRA_COLORS["wine"]]},
                   "legend": {"orient": "top", "direction": "vertical", "labelLimit": 400}},  # stacked: a phone
            strokeDash={"field": "curve", "type": "nominal", "sort": domain,
                        "scale": {"domain": domain, "range": [[1, 0], [7, 4]]}, "legend": None},
        ),
    )
    chart.datasets = {"curves": records(df)}
    return finish(chart, height=height)


def token_pair_chart(sampled: np.ndarray, reference: np.ndarray, *, names: tuple[str, str], y_title: str,
                     height: int = 300) -> alt.Chart:
    """Two distributions over the same tokens as bars side by side, no title (the legend names them).

    Parameters
    ----------
    sampled, reference : numpy.ndarray
        One value per token (``kl_core.lessons.settings.TokenPair``): the distribution the
        tokens are drawn from (filled bars in :data:`SAMPLED_COLOR`, left) and the one it
        is compared with (wine outlines, dashed and nearly empty, right), in the roles of
        :func:`setting_chart`'s q (solid, dark) and p (dashed, wine): fill, outline, dash and
        position tell them apart, not colour alone.
    names : (str, str)
        The two legend labels, translated.
    y_title : str
        The value axis' title, translated.
    height : int
        Height in pixels, titles included.

    Returns
    -------
    altair.Chart
        One bar per token and distribution; tokens are numbered 0 … k − 1, as on the
        Gradients page.
    """
    sampled, reference = np.asarray(sampled, dtype=float), np.asarray(reference, dtype=float)
    if sampled.shape != reference.shape or sampled.ndim != 1:
        raise ValueError(f"sampled and reference must be two vectors of one length, got {sampled.shape} "
                         f"and {reference.shape}")
    if len(names) != 2:
        raise ValueError(f"names must hold two labels, got {len(names)}")
    k = sampled.size
    tokens = [str(i) for i in range(k)]
    series = list(names)
    df = check_rows(pd.DataFrame({
        "token": tokens * 2,
        "series": np.repeat(series, k),
        "value": np.concatenate([sampled, reference]),
    }))
    colours = [SAMPLED_COLOR, EXTRA_COLORS["wine"]]

    def by_series(values: list) -> dict:
        return {"field": "series", "type": "nominal", "sort": series, "scale": {"domain": series, "range": values},
                "legend": legend}

    legend = {"title": None, "orient": "top", "symbolType": "square", "symbolSize": 220, "symbolStrokeWidth": 2,
              **fitted_legend(series, most=2)}
    chart = alt.Chart(
        {"name": "bars"},
        mark={"type": "bar", "strokeWidth": 2},
        encoding=alt.FacetedEncoding(
            x={"field": "token", "type": "ordinal", "title": _("token"), "sort": tokens,
               "axis": {"labelAngle": 0}, "scale": {"paddingInner": 0.25}},
            xOffset={"field": "series", "type": "nominal", "sort": series, "scale": {"domain": series}},
            y={"field": "value", "type": "quantitative", "title": y_title, "axis": {"tickCount": 4, "format": "~g"}},
            fill=by_series([SAMPLED_COLOR, EXTRA_COLORS["wine"] + _TINT]),  # the legend shows the tint too
            stroke=by_series(colours),
            strokeDash=by_series([[1, 0], [5, 3]]),
            tooltip=[{"field": "token", "type": "ordinal", "title": _("token")},
                     {"field": "series", "type": "nominal", "title": " "},
                     {"field": "value", "type": "quantitative", "title": y_title, "format": ".3f"}],
        ),
    )
    chart.datasets = {"bars": records(df)}
    return finish(chart, height=height)
