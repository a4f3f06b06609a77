"""The Lessons page's setting picture: the densities of q (sampled from) and p, before any answer.

Pure builder: x and the two densities come in (evaluated by ``kl_core``'s
distributions in :func:`lab.lessons.setting`), an Altair chart goes out.  It
shows the step's setting and nothing it asks for.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from charts.histograms import check_rows, records
from charts.palette import EXTRA_COLORS, REFERENCE_COLOR, finish
from i18n import _

__all__ = ["setting_chart"]


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
