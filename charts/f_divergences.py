r"""Charts of the "f-divergences & Fisher" page.

* :func:`f_curves` – the registry's :math:`f(u)` near :math:`u = 1`, one colour each;
* :func:`divergence_along_path` – :math:`D_f(p_\theta, p_0)` (solid) against its
  Fisher quadratic :math:`\tfrac12 f''(1) F \theta^2` (dashed, same colour), or their ratio;
* :func:`k2_against_kl` – :math:`\mathbb{E}_q[k_2]` and :math:`\mathrm{KL}[q\|p]` along the path;
* :func:`k2_relative_bias` – :math:`(\mathbb{E}[k_2] - \mathrm{KL})/\mathrm{KL}`, with marked points.

The builders take core results (``kl_core.estimation.fisher.FisherCurve``/``K2Bias`` or
arrays) and only select, sort and label them; they compute no maths.

Colours
-------
An f-divergence takes the colour of the lab's estimator that targets it, so
one quantity has one colour on every page (``charts.palette``):

* KL[q‖p], :math:`f(u) = -\log u`: **k3's green**.  k3 is the unbiased,
  never-negative estimator of KL[q‖p], and it is this f's tangent gap
  :math:`f(r) - f'(1)(r - 1)`, just as k3_pq is for KL[p‖q].  (k1 = f(r) also
  averages to KL[q‖p]; its vermillion stays the colour of the noisy per-sample
  estimator on the other pages.)  So on this page KL[q‖p] is always green,
  also next to E[k2].
* KL[p‖q], :math:`f(u) = u\log u`: **k3_pq's orange**.
* :math:`\tfrac12\log^2 u`: **k2's blue**, since :math:`\mathbb{E}_q[k_2]` is
  this f-divergence.
* Pearson χ², squared Hellinger and Jensen–Shannon have no estimator in the
  lab: they get colours from outside the estimator palette (wine, olive,
  brown), so that nobody reads χ² as "k1".  Total variation, the one f with a
  kink at 1 and no Fisher quadratic, is dark grey.

Line styles: an exact value is a solid line, the quadratic approximation a
dashed line in the same colour.

Speed: the path charts carry a few thousand numbers.  Rows of Python floats
and strings make Altair's ``to_dict`` run a slow check on every value (~80 ms
for one chart), so the rows here hold only ``np.float64`` (Altair's fast path)
and text columns travel as codes that a ``calculate`` transform turns back
into text in the browser (:func:`_numeric_records`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from charts.histograms import check_rows, records, short_number
from charts.palette import (
    CONFIG,
    EXTRA_COLORS,
    REFERENCE_COLOR,
    ZERO_COLOR,
    color,
    dash,
    finish,
    style,
)
from charts.vega import ticks_through_zero
from i18n import N_, _
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.fisher import FisherCurve, K2Bias

__all__ = [
    "EXACT",
    "F_COLORS",
    "KL_LABEL",
    "K2_LABEL",
    "QUADRATIC",
    "divergence_along_path",
    "f_color",
    "f_curves",
    "f_label",
    "k2_against_kl",
    "k2_relative_bias",
]

#: One colour per f of ``kl_core.estimation.divergences.DIVERGENCES`` (see the module docstring).
F_COLORS: dict[str, str] = {
    "kl_qp": color("k3"),  # green: k3 estimates KL[q‖p]
    "kl_pq": color("k3_pq"),  # orange: k3_pq estimates KL[p‖q]
    "k2": color("k2"),  # blue: E[k2] is this f-divergence
    "pearson": EXTRA_COLORS["wine"],
    "hellinger": EXTRA_COLORS["olive"],
    "js": EXTRA_COLORS["brown"],
    "tv": EXTRA_COLORS["dark grey"],  # no f''(1)
}

#: A dash pattern per f as well as its colour (seven series: colour alone is not enough, and
#: orange, brown and olive are easy to confuse), each different.  The three f's drawn in an
#: estimator's colour take that estimator's dash too (``charts.palette``: one look per estimator).
F_DASHES: dict[str, list[float]] = {
    "kl_qp": dash("k3"),
    "kl_pq": dash("k3_pq"),
    "k2": dash("k2"),
    "pearson": [14, 4],
    "hellinger": [7, 3, 2, 3],
    "js": [3, 5],
    "tv": [1, 0],
}
#: Legend entries of the two line styles (shown translated).
EXACT = N_("exact value")
QUADRATIC = "½ f″(1) F θ²"
#: Legend entries of the k2 charts.
KL_LABEL = "KL[q‖p] = E[k1] = E[k3]"
K2_LABEL = "E[k2]"
_DASH = [7, 4]
#: Title lines are never cut short with "…" (Vega-Lite's default limit cut them on a phone); keep
#: each line short enough for a 260-px panel instead.
TITLE_LIMIT = 1000
#: Text drawn in the chart (legend labels, the u = 1 note): the axes' colour of charts.palette.
_TEXT_COLOR = CONFIG.get("axis", {}).get("labelColor", "#31333F")


def f_color(key: str) -> str:
    """The colour of registry entry ``key`` on this page."""
    if key not in F_COLORS:
        raise ValueError(f"key must be one of {sorted(F_COLORS)}, got {key!r}")
    return F_COLORS[key]


def f_label(key: str) -> str:
    """The display name of registry entry ``key`` (``DIVERGENCES[key].name``, translated)."""
    if key not in DIVERGENCES:
        raise ValueError(f"key must be one of {sorted(DIVERGENCES)}, got {key!r}")
    return _(DIVERGENCES[key].name)


# ------------------------------------------------------------------ helpers


def _numeric_records(
    columns: Mapping[str, np.ndarray], labels: Mapping[str, Sequence[str]] | None = None
) -> tuple[list[dict], list[dict]]:
    """Rows for a chart's ``datasets`` that Altair serialises fast, and the transforms to read them.

    Parameters
    ----------
    columns : mapping of str to numpy.ndarray
        Equal-length numeric columns.  A column named in ``labels`` holds
        integer codes into its list of texts.
    labels : mapping of str to sequence of str, optional
        Column → its texts, in code order.

    Returns
    -------
    rows : list of dict
        One dict per row, every value an ``np.float64``; rows with a non-finite
        number are dropped (a line stops there; JSON has no ``inf``).
    transforms : list of dict
        ``calculate`` transforms that put the text back (as field ``col``,
        from the code field ``col_i``).
    """
    labels = dict(labels or {})
    names = [f"{c}_i" if c in labels else c for c in columns]
    table = np.column_stack([np.asarray(v, dtype=np.float64) for v in columns.values()]) if columns else np.empty((0, 0))
    check_rows(pd.DataFrame(index=range(len(table))))  # the app-wide row limit
    table = table[np.isfinite(table).all(axis=1)]
    transforms = [
        {"calculate": f"{json.dumps(list(cats), ensure_ascii=False)}[datum.{col}_i]", "as": col}
        for col, cats in labels.items()
    ]
    return [dict(zip(names, row, strict=True)) for row in table], transforms


def _merge(results: Iterable, lo: float, hi: float, fields: Sequence[str]) -> dict[str, dict[str, np.ndarray]]:
    """Group core results by ``.name`` (one group if absent); keep θ in [lo, hi], sorted, unique."""
    parts: dict[str, list] = {}
    for r in results:
        parts.setdefault(getattr(r, "name", ""), []).append(r)
    out = {}
    for key, group in parts.items():
        theta = np.concatenate([np.asarray(r.thetas, dtype=np.float64) for r in group])
        cols = {f: np.concatenate([np.asarray(getattr(r, f), dtype=np.float64) for r in group]) for f in fields}
        theta, first = np.unique(theta, return_index=True)  # sorted; repeats dropped
        keep = (theta >= lo) & (theta <= hi)
        out[key] = {"theta": theta[keep], **{f: v[first][keep] for f, v in cols.items()}}
    return out


def _theta_axis(lo: float, hi: float, title: str) -> dict:
    return {
        "field": "theta",
        "type": "quantitative",
        "title": title,
        "scale": {"domain": [lo, hi], "nice": False, "zero": False},
        "axis": {"values": ticks_through_zero(lo, hi)},  # θ = 0 is p = q
    }


def _legend(columns: int = 1) -> dict:
    """Line symbols with dark text, above the plot, in ``columns`` (a phone is 358 px wide)."""
    return {"orient": "top", "labelLimit": 150 if columns > 1 else 300, "symbolType": "stroke",
            "symbolStrokeWidth": 3, "symbolSize": 400, "columns": columns,
            "labelColor": _TEXT_COLOR}


def _f_colors(keys: Sequence[str]) -> dict:
    return {
        "field": "f",
        "type": "nominal",
        "title": None,
        "scale": {"domain": [f_label(k) for k in keys], "range": [f_color(k) for k in keys]},
        "legend": _legend(),
    }


def _f_dashes(keys: Sequence[str]) -> dict:
    """The f's dash patterns, merged into the colour legend (same field, same title)."""
    return {
        "field": "f",
        "type": "nominal",
        "title": None,
        "scale": {"domain": [f_label(k) for k in keys], "range": [F_DASHES[k] for k in keys]},
        "legend": _legend(),
    }


def _rule(name: str, channel: str, **mark) -> alt.Chart:
    return alt.Chart(
        {"name": name},
        mark={"type": "rule", "color": ZERO_COLOR, "strokeWidth": 1, **mark},
        encoding=alt.FacetedEncoding(**{channel: {"field": channel, "type": "quantitative"}}),
    )


def _fmt(x: float) -> str:
    return short_number(x) if math.isfinite(x) else "∞"


# ------------------------------------------------------------------ f near u = 1


def f_curves(
    u: np.ndarray,
    values: Mapping[str, np.ndarray],
    *,
    tangent_removed: bool = False,
    height: int = 520,
) -> alt.LayerChart:
    r"""The f of each registry entry on one chart, near :math:`u = 1`.

    Parameters
    ----------
    u : numpy.ndarray
        Likelihood ratios (x-axis), e.g. a grid on [0.2, 3].
    values : mapping of str to numpy.ndarray
        Registry key → :math:`f(u)` (or :math:`f(u) - f'(1)(u - 1)`) at ``u``,
        as computed by ``kl_core``; the order sets the legend's order.
    tangent_removed : bool, default False
        Whether ``values`` hold the tangent gap; sets the y-axis title.
    height : int, default 520
        Chart height in pixels (the legend of seven, a line each, takes a third of it).

    Returns
    -------
    altair.LayerChart
        Lines in :data:`F_COLORS` and :data:`F_DASHES` (seven series: colour alone is not
        enough), a zero line and a guide at :math:`u = 1`.
    """
    u = np.asarray(u, dtype=np.float64)
    keys = list(values)
    ys = [np.asarray(values[k], dtype=np.float64) for k in keys]
    rows, names = _numeric_records(
        {
            "u": np.tile(u, len(keys)),
            "value": np.concatenate(ys) if ys else np.empty(0),
            "f": np.repeat(np.arange(len(keys)), u.size),
        },
        {"f": [f_label(k) for k in keys]},
    )
    finite = np.concatenate(ys) if ys else np.empty(0)
    finite = finite[np.isfinite(finite)]
    y_domain = [min(0.0, float(finite.min())), float(finite.max())] if finite.size else [0.0, 1.0]
    y_title = "f(u) − f′(1)·(u − 1)" if tangent_removed else "f(u)"
    datasets = {
        "f": rows,
        "y0": records(pd.DataFrame({"y": [0.0]})),
        "u1": records(pd.DataFrame({"x": [1.0], "text": ["u = 1: p = q"]})),  # i18n: ok (maths)
    }
    layers = [
        _rule("y0", "y"),
        _rule("u1", "x", strokeDash=[3, 3]),
        alt.Chart(
            {"name": "u1"},
            mark={"type": "text", "align": "left", "baseline": "top", "dx": 5, "dy": 4,
                  "color": _TEXT_COLOR},
            encoding=alt.FacetedEncoding(
                x={"field": "x", "type": "quantitative"},
                y={"value": 0},
                text={"field": "text", "type": "nominal"},
            ),
        ),
        alt.Chart(
            {"name": "f"},
            mark={"type": "line", "strokeWidth": 2.5, "clip": True},
            transform=names,
            encoding=alt.FacetedEncoding(
                x={
                    "field": "u",
                    "type": "quantitative",
                    "title": _("u = p(x) / q(x), the likelihood ratio"),
                    "scale": {"domain": [float(u.min()), float(u.max())], "nice": False,
                              "zero": False},
                },
                y={
                    "field": "value",
                    "type": "quantitative",
                    "title": y_title,
                    "scale": {"domain": y_domain, "nice": True},
                },
                color=_f_colors(keys),
                strokeDash=_f_dashes(keys),
                tooltip=[
                    {"field": "f", "type": "nominal", "title": _("f-divergence")},
                    {"field": "u", "type": "quantitative", "title": "u", "format": ".3f"},
                    {"field": "value", "type": "quantitative", "title": y_title, "format": ".4g"},
                ],
            ),
        ),
    ]
    return finish(alt.LayerChart(layer=layers, datasets=datasets), height=height)


# ------------------------------------------------------------------ D_f along a path


def _infinite_note(name: str, theta: np.ndarray, exact: np.ndarray) -> str | None:
    """Where the core returned ``inf``, said with the computed θ's only (no guessed boundary)."""
    inf = ~np.isfinite(exact)
    if not inf.any():
        return None
    bad, good = theta[inf], theta[~inf]
    if (bad > 0).all() and good.size:
        return _("{name}: finite at θ = {good:.3g}, infinite from θ = {bad:.3g} on").format(
            name=name, good=good.max(), bad=bad.min())
    if (bad < 0).all() and good.size:
        return _("{name}: finite at θ = {good:.3g}, infinite from θ = {bad:.3g} down").format(
            name=name, good=good.min(), bad=bad.max())
    return _("{name}: infinite at {bad} of the {n} θ computed").format(
        name=name, bad=bad.size, n=theta.size)


def divergence_along_path(
    curves: Sequence[FisherCurve],
    *,
    lo: float,
    hi: float,
    theta_title: str,
    ratio: bool = False,
    headroom: float = 2.0,
    ratio_cap: float = 2.5,
    height: int = 540,
) -> alt.LayerChart:
    r""":math:`D_f(p_\theta, p_0)` (solid) against :math:`\tfrac12 f''(1) F\theta^2` (dashed).

    Parameters
    ----------
    curves : sequence of FisherCurve
        ``kl_core.estimation.fisher.fisher_curve`` results; several results for the same
        f (e.g. a grid and the two range ends) are merged.
    lo, hi : float
        The θ range to draw.
    theta_title : str
        The x-axis title (what θ is on this path).
    ratio : bool, default False
        Draw :math:`D_f \,/\, \tfrac12 f''(1)F\theta^2` (→ 1 as θ → 0) instead.
    headroom : float, default 2.0
        In the value view the y-axis ends at ``headroom`` × the largest
        quadratic in range; curves above it are clipped and named in the subtitle.
    ratio_cap : float, default 2.5
        In the ratio view the y-axis ends at most here (clipped curves are named).
    height : int, default 540
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        The chart; its subtitle names curves that leave the plot or are infinite.
    """
    keys = list(dict.fromkeys(c.name for c in curves))
    merged = _merge(curves, lo, hi, ("exact", "quadratic", "ratio"))
    notes = [n for k in keys if (n := _infinite_note(f_label(k), merged[k]["theta"], merged[k]["exact"]))]
    kinds = [("ratio", 0)] if ratio else [("exact", 0), ("quadratic", 1)]
    theta, value, code, kind = [], [], [], []
    for i, key in enumerate(keys):
        for field, k in kinds:
            m = merged[key]
            theta.append(m["theta"])
            value.append(m[field])
            code.append(np.full(m["theta"].size, i))
            kind.append(np.full(m["theta"].size, k))
    theta, value, code, kind = (
        np.concatenate(parts) if parts else np.empty(0) for parts in (theta, value, code, kind)
    )
    finite = value[np.isfinite(value)]
    if ratio:
        top = min(max(float(finite.max()) if finite.size else 1.0, 1.0), ratio_cap)
        bottom = max(min(float(finite.min()) if finite.size else 1.0, 1.0), 0.0)
        pad = 0.05 * max(top - bottom, 1e-3)
        domain = [max(bottom - pad, 0.0), top + pad]
        y_title = _("f-divergence ÷ ½ f″(1) F θ²")
    else:
        quad = value[(kind == 1) & np.isfinite(value)]
        top_quad = float(quad.max()) if quad.size else 0.0
        top_all = float(finite.max()) if finite.size else 0.0
        top = min(top_all, headroom * top_quad) if top_quad > 0 else top_all
        domain = [0.0, top if top > 0 else 1.0]
        y_title = _("f-divergence at θ")
    for key in keys:
        m = merged[key]
        v = m["ratio" if ratio else "exact"]
        ok = np.isfinite(v)
        if ok.any() and float(v[ok].max()) > domain[1] * (1 + 1e-9):
            i = int(np.argmax(np.where(ok, v, -np.inf)))
            notes.append(
                _("{name} leaves the top: {value} at θ = {theta:.3g}").format(
                    name=f_label(key), value=_fmt(float(v[i])), theta=m["theta"][i])
            )

    rows, names = _numeric_records(
        {"theta": theta, "value": value, "f": code, "curve": kind},
        {"f": [f_label(k) for k in keys], "curve": [_(EXACT), QUADRATIC]},
    )
    datasets = {"curves": rows}
    layers = []
    if ratio:
        datasets["one"] = records(pd.DataFrame({"y": [1.0]}))
        layers.append(_rule("one", "y", color=REFERENCE_COLOR))
    encoding = {
        "x": _theta_axis(lo, hi, theta_title),
        "y": {
            "field": "value",
            "type": "quantitative",
            "title": y_title,
            "scale": {"domain": domain, "nice": False, "zero": False},
        },
        "color": _f_colors(keys),
        "tooltip": [
            {"field": "f", "type": "nominal", "title": _("f-divergence")},
            {"field": "curve", "type": "nominal", "title": _("curve")},
            {"field": "theta", "type": "quantitative", "title": "θ", "format": ".4g"},
            {"field": "value", "type": "quantitative", "title": y_title, "format": ".5g"},
        ],
    }
    if not ratio:
        encoding["strokeDash"] = {
            "field": "curve",
            "type": "nominal",
            "title": None,
            "scale": {"domain": [_(EXACT), QUADRATIC], "range": [[1, 0], _DASH]},
            "legend": {**_legend(2), "orient": "bottom", "symbolStrokeColor": _TEXT_COLOR},
        }
    # Dashed parabolas first, exact lines on top: where they coincide (KL on the
    # mean-shift path) the solid colour stays visible.
    for kind_code in (1, 0):
        layers.append(
            alt.Chart(
                {"name": "curves"},
                mark={"type": "line", "strokeWidth": 2.5, "clip": True},
                transform=[*names, {"filter": f"datum.curve_i == {kind_code}"}],
                encoding=alt.FacetedEncoding(**encoding),
            )
        )
    title: dict = {
        "limit": TITLE_LIMIT,
        "text": [_("Each f-divergence ÷ its parabola:"), _("every line → 1 as θ → 0")]
        if ratio
        else [_("Each f-divergence along the path (solid)"),
              _("and its parabola ½ f″(1) F θ² (dashed)")]
    }
    if notes:
        title["subtitle"] = notes
    return finish(alt.LayerChart(layer=layers, datasets=datasets, title=title), height=height)


# ------------------------------------------------------------------ k2 against KL


def _bias_table(biases: Sequence[K2Bias], lo: float, hi: float) -> dict[str, np.ndarray]:
    merged = _merge(biases, lo, hi, ("kl", "mean_k2", "relative_bias"))
    if merged:
        return next(iter(merged.values()))
    return {f: np.empty(0) for f in ("theta", "kl", "mean_k2", "relative_bias")}


def k2_against_kl(
    biases: Sequence[K2Bias], *, lo: float, hi: float, theta_title: str, height: int = 320
) -> alt.LayerChart:
    r""":math:`\mathbb{E}_q[k_2]` (k2 blue) and KL[q‖p] (green), the gap between them shaded.

    Parameters
    ----------
    biases : sequence of K2Bias
        ``kl_core.estimation.fisher.k2_bias_along_path`` results (merged, e.g. a grid and the range ends).
    lo, hi : float
        The θ range to draw.
    theta_title : str
        The x-axis title.
    height : int, default 320
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        Two lines and the shaded bias.
    """
    t = _bias_table(biases, lo, hi)
    n = t["theta"].size
    gap, _unused = _numeric_records({"theta": t["theta"], "kl": t["kl"], "mean_k2": t["mean_k2"]})
    lines, names = _numeric_records(
        {
            "theta": np.tile(t["theta"], 2),
            "value": np.concatenate([t["mean_k2"], t["kl"]]),
            "f": np.repeat([0, 1], n),
        },
        {"f": [K2_LABEL, KL_LABEL]},
    )
    x = _theta_axis(lo, hi, theta_title)
    layers = [
        alt.Chart(
            {"name": "gap"},
            mark={"type": "area", "color": color("k2"), "opacity": 0.15},
            encoding=alt.FacetedEncoding(
                x=x, y={"field": "kl", "type": "quantitative"}, y2={"field": "mean_k2"}
            ),
        ),
        alt.Chart(
            {"name": "lines"},
            mark={"type": "line", "strokeWidth": 2.5},
            transform=names,
            encoding=alt.FacetedEncoding(
                x=x,
                y={"field": "value", "type": "quantitative", "title": _("exact value")},
                color={
                    "field": "f",
                    "type": "nominal",
                    "title": None,
                    "scale": {"domain": [K2_LABEL, KL_LABEL], "range": [color("k2"), F_COLORS["kl_qp"]]},
                    "legend": _legend(),
                },
                strokeDash={  # k2's and k3's dashes (charts.palette), in the same legend
                    "field": "f",
                    "type": "nominal",
                    "title": None,
                    "scale": {"domain": [K2_LABEL, KL_LABEL], "range": [F_DASHES["k2"], F_DASHES["kl_qp"]]},
                    "legend": _legend(),
                },
                tooltip=[
                    {"field": "f", "type": "nominal", "title": _("quantity")},
                    {"field": "theta", "type": "quantitative", "title": "θ", "format": ".4g"},
                    {"field": "value", "type": "quantitative", "title": _("value"), "format": ".5g"},
                ],
            ),
        ),
    ]
    chart = alt.LayerChart(
        layer=layers,
        datasets={"gap": gap, "lines": lines},
        title={"text": [_("E[k2] and the KL it estimates")], "limit": TITLE_LIMIT,
               "subtitle": [_("shaded: the bias E[k2] − KL")]},
    )
    return finish(chart, height=height)


def k2_relative_bias(
    biases: Sequence[K2Bias],
    *,
    lo: float,
    hi: float,
    theta_title: str,
    marks: Sequence[tuple[float, float, str]] = (),
    height: int = 320,
) -> alt.LayerChart:
    r"""k2's relative bias :math:`(\mathbb{E}[k_2] - \mathrm{KL})/\mathrm{KL}` along the path.

    Parameters
    ----------
    biases : sequence of K2Bias
        ``kl_core.estimation.fisher.k2_bias_along_path`` results (merged).
    lo, hi : float
        The θ range to draw.
    theta_title : str
        The x-axis title.
    marks : sequence of (theta, value, label)
        Points to mark and label (e.g. Schulman's μ = 0.1 and μ = 1); those
        outside [lo, hi] are left out.
    height : int, default 320
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        The curve, a zero line and the labelled marks.
    """
    t = _bias_table(biases, lo, hi)
    rows, _unused = _numeric_records({"theta": t["theta"], "relative_bias": t["relative_bias"], "kl": t["kl"]})
    rb = t["relative_bias"][np.isfinite(t["relative_bias"])]
    y_lo, y_hi = (min(0.0, float(rb.min())), max(0.0, float(rb.max()))) if rb.size else (0.0, 1.0)
    pad = 0.12 * (y_hi - y_lo or 1.0)  # room for a label under the zero line
    x = _theta_axis(lo, hi, theta_title)
    y_title = "(E[k2] − KL) / KL"  # i18n: ok (maths)
    shown = [(th, v, text) for th, v, text in marks if lo <= th <= hi]
    datasets = {
        "bias": rows,
        "y0": records(pd.DataFrame({"y": [0.0]})),
        "marks": records(
            pd.DataFrame(
                {
                    "theta": [th for th, _v, _t in shown],
                    "value": [v for _th, v, _t in shown],
                    "text": [text for _th, _v, text in shown],
                    # right half: label above-left of the point, else below-right, the
                    # sides where a rising curve leaves room
                    "right": [th > lo + 0.6 * (hi - lo) for th, _v, _t in shown],
                }
            )
        ),
    }
    layers = [
        _rule("y0", "y"),
        alt.Chart(
            {"name": "bias"},
            mark={"type": "line", "strokeWidth": 2.5, **style("k2").line()},
            encoding=alt.FacetedEncoding(
                x=x,
                y={
                    "field": "relative_bias",
                    "type": "quantitative",
                    "title": y_title,
                    "scale": {"domain": [y_lo - pad, y_hi + 0.5 * pad], "nice": False, "zero": False},
                },
                tooltip=[
                    {"field": "theta", "type": "quantitative", "title": "θ", "format": ".4g"},
                    {"field": "kl", "type": "quantitative", "title": "KL[q‖p]", "format": ".5g"},
                    {"field": "relative_bias", "type": "quantitative", "title": y_title,
                     "format": ".5g"},
                ],
            ),
        ),
    ]
    if shown:
        y = {"field": "value", "type": "quantitative"}
        layers.append(
            alt.Chart(
                {"name": "marks"},
                mark={"type": "point", "filled": True, "size": 110, "color": REFERENCE_COLOR,
                      "opacity": 1},
                encoding=alt.FacetedEncoding(
                    x=x, y=y, tooltip=[{"field": "text", "type": "nominal", "title": _("marked")}]
                ),
            )
        )
        for right in (False, True):
            layers.append(
                alt.Chart(
                    {"name": "marks"},
                    mark={
                        "type": "text",
                        "align": "right" if right else "left",
                        "baseline": "bottom" if right else "top",
                        "dx": -8 if right else 8,
                        "dy": -6 if right else 6,
                        "fontSize": 14,
                        "color": REFERENCE_COLOR,
                    },
                    transform=[{"filter": f"datum.right == {str(right).lower()}"}],
                    encoding=alt.FacetedEncoding(x=x, y=y, text={"field": "text", "type": "nominal"}),
                )
            )
    chart = alt.LayerChart(
        layer=layers,
        datasets=datasets,
        title={"text": [_("k2's relative bias")], "limit": TITLE_LIMIT,
               "subtitle": [_("0: unbiased; 0.25: 25 % too high")]},
    )
    return finish(chart, height=height)
