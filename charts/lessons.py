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
                  height: int = 220) -> alt.LayerChart:
    """Two density curves on one axis: q (solid, the sampler) and p (dashed, the target)."""
    q_label = _("q = {name} (samples)").format(name=q_name)
    p_label = _("p = {name}").format(name=p_name)
    df = check_rows(pd.DataFrame({
        "x": np.concatenate([x, x]),
        "density": np.concatenate([q_pdf, p_pdf]),
        "curve": [q_label] * len(x) + [p_label] * len(x),
    }))
    line = alt.Chart(alt.Data(values=records(df))).mark_line(strokeWidth=2.5).encode(
        x=alt.X("x:Q", title="x", scale=alt.Scale(nice=False)),
        y=alt.Y("density:Q", title=_("density")),
        color=alt.Color("curve:N", title=None, sort=[q_label, p_label],
                        scale=alt.Scale(domain=[q_label, p_label],
                                        range=[REFERENCE_COLOR, EXTRA_COLORS["wine"]]),
                        legend=alt.Legend(orient="top")),
        strokeDash=alt.StrokeDash("curve:N", sort=[q_label, p_label],
                                  scale=alt.Scale(domain=[q_label, p_label], range=[[1, 0], [7, 4]]),
                                  legend=None),
    )
    chart = alt.layer(line, title=_("The setting: q and p"))
    return finish(chart, height=height)
