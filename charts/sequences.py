"""Charts of the "Tokens & sequences" page: KL along a sequence, spreads against T, gradients.

Pure builders: arrays computed by ``kl_core`` (through the page's notes) come
in, an Altair chart goes out (plain Vega-Lite dicts inside, rows in the
top-level ``datasets``; see "Fast charts" in ``docs/app_conventions.md``).

* :func:`per_position_chart` – the exact KL each position adds, with the Monte
  Carlo mean of per-token terms at each position (±2 SE);
* :func:`relative_std_chart` – standard deviation per sequence over the KL
  against T, log–log: exact lines, Monte Carlo points with ±2 SE bars; a line
  that leaves the top is cut there with an "off the chart" marker, a zero
  spread sits on the bottom edge with a "0" marker;
* :func:`penalty_chart` – the KL penalty a coefficient β puts on a sequence,
  summed over tokens or averaged per token, against T;
* :func:`gradient_bars` – one block of a gradient, grouped bars per option;
* :func:`cosine_bars` – each option's cosine to the true gradient.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from charts.histograms import records
from charts.palette import (
    CONFIG,
    REFERENCE_COLOR,
    ZERO_COLOR,
    EstimatorStyle,
    color,
    finish,
    fitted_legend,
    scales,
)
from charts.palette import (
    shape as shape_of,
)
from i18n import _
from kl_core.sequences.estimators import SEQUENCE_KEYS

#: Text drawn on a chart (labels next to marks): the colour of the shared axis labels.
TEXT_COLOR = CONFIG["axis"]["labelColor"]

__all__ = [
    "SEQUENCE_COLORS",
    "McPoint",
    "cosine_bars",
    "gradient_bars",
    "penalty_chart",
    "per_position_chart",
    "relative_std_chart",
]

#: One colour per sequence estimator (``charts.palette.SEQUENCE_STYLES``: the per-token
#: estimator it is built from); their dashes and shapes come from there too.
SEQUENCE_COLORS: dict[str, str] = {k: color(k) for k in SEQUENCE_KEYS}
#: The exact line of :func:`per_position_chart` in the legend: black, a line symbol.
_EXACT_STYLE = EstimatorStyle(REFERENCE_COLOR, (1, 0), "stroke")


def _legend(labels: Sequence[str], columns: int, orient: str = "top") -> dict:
    # At most ``columns`` to a row, fewer on a narrow screen: Vega never wraps a legend,
    # so a long row would run off a phone's screen.
    return {"orient": orient, "title": None, "labelFontSize": 14, "symbolStrokeWidth": 3,
            "labelColor": TEXT_COLOR, **fitted_legend(labels, most=columns)}


def _decade_floor(x: float) -> float:
    return 10.0 ** math.floor(math.log10(x))


def _decade_ceil(x: float) -> float:
    return 10.0 ** math.ceil(math.log10(x))


def per_position_chart(
    per_position_kl: ArrayLike,
    mc_mean: Mapping[str, ArrayLike] | None = None,
    mc_se: Mapping[str, ArrayLike] | None = None,
    labels: Mapping[str, str] | None = None,
    *,
    height: int = 300,
) -> alt.LayerChart:
    """The exact KL contributed by each position, with Monte Carlo per-position means.

    Parameters
    ----------
    per_position_kl : array_like
        :math:`c_t` for t = 1 … T (``SequenceCurves.per_position_kl[:T]``).
    mc_mean, mc_se : mapping of str to array_like, optional
        Per estimator key, ``k1``, ``k3``, ``rb`` (``SequenceSample.position_mean``/``position_se``):
        the mean of that per-token term at each position and its SE.
    labels : mapping of str to str, optional
        Legend text per key of ``mc_mean``.
    height : int, default 300
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        The exact line in black, Monte Carlo points with ±2 SE bars in their colours.
    """
    exact = np.asarray(per_position_kl, dtype=np.float64).ravel()
    t = np.arange(1, exact.size + 1)
    exact_label = _("exact")
    domain, looks_of = [exact_label], [_EXACT_STYLE]
    frames = []
    for key, mean in (mc_mean or {}).items():
        m = np.asarray(mean, dtype=np.float64).ravel()
        se = np.asarray((mc_se or {})[key], dtype=np.float64).ravel()
        if m.shape != exact.shape or se.shape != exact.shape:
            raise ValueError(f"mc_mean[{key!r}] and mc_se[{key!r}] must have {exact.size} values")
        name = (labels or {}).get(key, key)
        ok = np.isfinite(se)
        frames.append(pd.DataFrame({
            "t": t, "value": m, "low": np.where(ok, m - 2 * se, m), "high": np.where(ok, m + 2 * se, m),
            "series": name,
        }))
        domain.append(name)
        looks_of.append(key)
    looks = scales(domain, looks_of)  # one look per estimator (charts.palette)
    scale = looks["color"]
    x = {"field": "t", "type": "quantitative", "title": _("position t in the sequence"),
         "scale": {"domain": [0.5, exact.size + 0.5], "nice": False, "zero": False},
         "axis": {"tickMinStep": 1, "format": "d"}}
    y_title = _("KL added at position t (nats)")
    datasets = {"exact": records(pd.DataFrame({"t": t, "value": exact, "series": exact_label}))}
    layers = []
    if frames:
        datasets["mc"] = records(pd.concat(frames, ignore_index=True))
        size = 40 if exact.size <= 64 else 12
        layers += [
            alt.Chart({"name": "mc"}, mark={"type": "rule", "strokeWidth": 1.5, "opacity": 0.6},
                      encoding=alt.FacetedEncoding(
                          x=x, y={"field": "low", "type": "quantitative", "title": y_title},
                          y2={"field": "high"},
                          color={"field": "series", "type": "nominal", "scale": scale})),
            alt.Chart({"name": "mc"}, mark={"type": "point", "filled": True, "size": size, "opacity": 0.8},
                      encoding=alt.FacetedEncoding(
                          x=x, y={"field": "value", "type": "quantitative", "title": y_title},
                          color={"field": "series", "type": "nominal", "scale": scale,
                                 "legend": _legend(scale["domain"], columns=3), "sort": None},
                          shape={"field": "series", "type": "nominal", "scale": looks["shape"],
                                 "legend": _legend(scale["domain"], columns=3), "sort": None},
                          tooltip=[
                              {"field": "series", "type": "nominal", "title": _("term")},
                              {"field": "t", "type": "quantitative", "title": "t"},
                              {"field": "value", "type": "quantitative", "title": _("mean"), "format": ".4g"},
                          ])),
        ]
    layers.insert(  # under the Monte Carlo points: rb's sit on it, and were hidden (a review)
        0,
        alt.Chart({"name": "exact"}, mark={"type": "line", "strokeWidth": 2.5, "point": exact.size <= 32,
                                           "interpolate": "step-after" if exact.size <= 32 else "linear"},
                  encoding=alt.FacetedEncoding(
                      x=x, y={"field": "value", "type": "quantitative", "title": y_title},
                      color={"field": "series", "type": "nominal", "scale": scale,
                             "legend": _legend(scale["domain"], columns=3), "sort": None},
                      tooltip=[
                          {"field": "t", "type": "quantitative", "title": "t"},
                          {"field": "value", "type": "quantitative", "title": exact_label, "format": ".5g"},
                      ]))
    )
    return finish(alt.LayerChart(layer=layers, datasets=datasets), height=height)


@dataclass(frozen=True)
class McPoint:
    """One Monte Carlo point of :func:`relative_std_chart`.

    Attributes
    ----------
    key : str
        A sequence estimator key (``sum_k1`` …).
    length : int
        T.
    value, low, high : float
        The sample std over the KL, and the ends of its ±2 SE bar (``nan`` when undefined).
    """

    key: str
    length: int
    value: float
    low: float
    high: float


def relative_std_chart(
    lengths: ArrayLike,
    exact: Mapping[str, ArrayLike],
    labels: Mapping[str, str],
    points: Sequence[McPoint] = (),
    *,
    current: int | None = None,
    clip: float | None = None,
    height: int = 360,
) -> alt.LayerChart:
    """Standard deviation per sequence over the KL, against T, on log–log axes.

    Parameters
    ----------
    lengths : array_like of int
        T for each exact value (1 … T_max).
    exact : mapping of str to array_like
        Per estimator key, ``SequenceCurves.relative_std(key)`` over ``lengths``.
    labels : mapping of str to str
        Legend text per key.
    points : sequence of McPoint
        Monte Carlo points, with their ±2 SE bars.
    current : int, optional
        The reader's T, marked with a vertical rule.
    clip : float, optional
        The top of the y axis.  By default 10× the largest value of the
        estimators that stay below 1000× the smallest line's top.  A line above it
        is cut where it leaves, with a "↑ off the chart" marker.
    height : int, default 360
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        A finished chart.  Values of exactly 0 (an exact estimator) sit on the
        bottom edge, marked "0".
    """
    t = np.asarray(lengths, dtype=np.float64).ravel()
    arrays = {k: np.asarray(v, dtype=np.float64).ravel() for k, v in exact.items()}
    for k, v in arrays.items():
        if v.shape != t.shape:
            raise ValueError(f"exact[{k!r}] has {v.size} values for {t.size} lengths")
    pos = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in arrays.values()] + [np.zeros(0)])
    pos = np.concatenate([pos, [p.value for p in points if math.isfinite(p.value) and p.value > 0]])
    if pos.size == 0:  # nothing to draw on a log axis (e.g. identical chains, KL = 0)
        lo, top = 0.01, 10.0
    else:
        tops = sorted(float(np.nanmax(np.where(np.isfinite(v) & (v > 0), v, np.nan)))
                      for v in arrays.values() if np.any(np.isfinite(v) & (v > 0)))
        keep = [x for x in tops if x <= 1000 * tops[0]] or tops[:1]
        top = clip if clip is not None else _decade_ceil(10 * keep[-1])
        # at most six decades below the top: smaller spreads (rounding, e^-30 tokens) sit on the floor
        lo = max(_decade_floor(min(float(pos.min()), top / 100)), top / 1e6)
    floor = lo
    rows, off_rows, zero_rows = [], [], []
    for k, v in arrays.items():
        name = labels[k]
        above = np.isposinf(v) | (v > top)  # NaN (0/0 where the KL is 0) is not above: it is not drawn
        shown = np.where(above, np.nan, np.maximum(v, floor))
        rows.append(pd.DataFrame({"T": t, "value": shown, "series": name}))
        if above.any():
            first = int(np.argmax(above))
            off_rows.append({"T": t[first], "value": top, "series": name, "key": k})
            if first > 0 and not above[first - 1]:  # the line runs up to the edge
                rows.append(pd.DataFrame({"T": [t[first]], "value": [top], "series": [name]}))
        zeros = np.flatnonzero(v == 0)
        if zeros.size:
            zero_rows.append({"T": t[zeros[0]], "value": floor, "series": name, "key": k})
    lines = pd.concat(rows, ignore_index=True).sort_values(["series", "T"], kind="stable")
    keys = list(arrays)
    looks = scales([labels[k] for k in keys], keys)  # one look per estimator (charts.palette)
    scale = looks["color"]
    x_scale = {"type": "log", "domain": [float(t.min()), float(max(t.max(), 2))], "nice": False}
    y_scale = {"type": "log", "domain": [floor, top], "nice": False}
    x = {"field": "T", "type": "quantitative", "scale": x_scale,
         "title": _("T, tokens per sequence (log scale)"), "axis": {"format": "d", "values": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]}}
    y_title = _("std per sequence / KL (log scale)")
    color_enc = {"field": "series", "type": "nominal", "scale": scale, "legend": _legend(scale["domain"], columns=3), "sort": None}
    datasets = {"lines": records(lines)}
    layers = [
        alt.Chart({"name": "lines"}, mark={"type": "line", "strokeWidth": 2.5, "clip": True},
                  encoding=alt.FacetedEncoding(
                      x=x, y={"field": "value", "type": "quantitative", "scale": y_scale, "title": y_title},
                      color=color_enc,
                      strokeDash={**color_enc, "scale": looks["strokeDash"]},
                      tooltip=[
                          {"field": "series", "type": "nominal", "title": _("estimator")},
                          {"field": "T", "type": "quantitative", "title": "T"},
                          {"field": "value", "type": "quantitative", "title": _("exact std / KL"), "format": ".4g"},
                      ])),
    ]
    if points:
        pts = []
        for p in points:
            name = labels[p.key]
            inside = math.isfinite(p.value) and 0 < p.value <= top
            pts.append({"T": p.length, "series": name, "shape": shape_of(p.key),
                        "value": max(p.value, floor) if inside or p.value == 0 else None,
                        "low": max(p.low, floor) if inside and math.isfinite(p.low) else None,
                        "high": min(p.high, top) if inside and math.isfinite(p.high) else None,
                        "shown": p.value})
        datasets["points"] = records(pd.DataFrame(pts))
        y = {"field": "value", "type": "quantitative", "scale": y_scale, "title": y_title}
        layers += [
            alt.Chart({"name": "points"}, mark={"type": "rule", "strokeWidth": 2, "clip": True},
                      encoding=alt.FacetedEncoding(
                          x=x, y={"field": "low", "type": "quantitative", "scale": y_scale, "title": y_title},
                          y2={"field": "high"}, color={**color_enc, "legend": None})),
            alt.Chart({"name": "points"},
                      mark={"type": "point", "filled": False, "size": 90,
                            "strokeWidth": 2, "clip": True},
                      encoding=alt.FacetedEncoding(
                          x=x, y=y, color={**color_enc, "legend": None},
                          # each point's shape from its row, no scale: a shape scale would put
                          # its shapes in the lines' legend (Vega-Lite merges them), hiding the dashes
                          shape={"field": "shape", "type": "nominal", "scale": None, "legend": None},
                          tooltip=[
                              {"field": "series", "type": "nominal", "title": _("estimator")},
                              {"field": "T", "type": "quantitative", "title": "T"},
                              {"field": "shown", "type": "quantitative", "title": _("Monte Carlo std / KL"),
                               "format": ".4g"},
                          ])),
        ]
    middle = math.sqrt(float(t.min()) * float(max(t.max(), 2)))  # the log axis' middle
    # Texts sit inside the plot: under the top edge, over the bottom one; one text per T.
    texts = {
        "off": lambda keys, at: _("↑ {keys} off the chart from T = {t}").format(keys=keys, t=at),
        "zero": lambda keys, at: _("{keys} = 0 (no noise)").format(keys=keys),
    }
    for name, marks, shape, baseline, dy in (("off", off_rows, "triangle-up", "top", 10),
                                             ("zero", zero_rows, "triangle-down", "bottom", -10)):
        if not marks:
            continue
        pos_y = {"field": "value", "type": "quantitative", "scale": y_scale, "title": y_title}
        for m in marks:
            m["text"] = texts[name](m["key"], int(m["T"]))
        datasets[name] = records(pd.DataFrame(marks))
        by_t: dict[float, dict] = {}
        for m in marks:
            if m["T"] in by_t:
                by_t[m["T"]]["keys"].append(m["key"])
            else:
                by_t[m["T"]] = {"T": m["T"], "value": m["value"], "keys": [m["key"]]}
        marks = [{"T": g["T"], "value": g["value"], "text": texts[name](", ".join(g["keys"]), int(g["T"]))}
                 for g in by_t.values()]
        layers.append(
            alt.Chart({"name": name}, mark={"type": "point", "shape": shape, "filled": True, "size": 160,
                                            "opacity": 1, "clip": False},
                      encoding=alt.FacetedEncoding(x=x, y=pos_y, color={**color_enc, "legend": None},
                                                   tooltip=[{"field": "text", "type": "nominal", "title": _("note")}])))
        for side, rows_ in (("left", [m for m in marks if m["T"] <= middle]),
                            ("right", [m for m in marks if m["T"] > middle])):
            if rows_:  # text runs towards the middle, so it stays inside the plot
                datasets[f"{name}_{side}"] = records(pd.DataFrame(rows_))
                layers.append(
                    alt.Chart({"name": f"{name}_{side}"},
                              mark={"type": "text", "align": side, "baseline": baseline, "color": TEXT_COLOR,
                                    "dx": 8 if side == "left" else -8, "dy": dy, "fontSize": 13, "clip": False},
                              encoding=alt.FacetedEncoding(x=x, y=pos_y, text={"field": "text"})))
    if current is not None:
        datasets["current"] = records(pd.DataFrame({"T": [current], "text": [_("your T = {t}").format(t=current)]}))
        layers.append(
            alt.Chart({"name": "current"}, mark={"type": "rule", "color": ZERO_COLOR, "strokeDash": [4, 4],
                                                 "strokeWidth": 1.5},
                      encoding=alt.FacetedEncoding(x=x, tooltip=[{"field": "text", "type": "nominal", "title": "T"}]))
        )
    return finish(alt.LayerChart(layer=layers, datasets=datasets), height=height)


def penalty_chart(
    lengths: ArrayLike,
    curves: Mapping[str, ArrayLike],
    colors: Mapping[str, str],
    *,
    current: int | None = None,
    height: int = 300,
) -> alt.LayerChart:
    """The KL penalty on one sequence against T, log–log, one line per way of reducing it.

    Parameters
    ----------
    lengths : array_like of int
        T.
    curves : mapping of str to array_like
        Legend text → the penalty :math:`\\beta\\,c(T)\\,\\mathrm{KL}_T` at each T
        (``kl_core.libraries.loss_aggregation.kl_coefficient`` times the exact KL);
        values ≤ 0 are left out of the log axis.
    colors : mapping of str to str
        Legend text → colour.
    current : int, optional
        The reader's T, marked with a rule.
    height : int, default 300
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
    """
    t = np.asarray(lengths, dtype=np.float64).ravel()
    frames = []
    for name, v in curves.items():
        arr = np.asarray(v, dtype=np.float64).ravel()
        if arr.shape != t.shape:
            raise ValueError(f"curve {name!r} has {arr.size} values for {t.size} lengths")
        frames.append(pd.DataFrame({"T": t, "value": np.where(arr > 0, arr, np.nan), "series": name}))
    df = pd.concat(frames, ignore_index=True)
    scale = {"domain": list(curves), "range": [colors[n] for n in curves]}
    x = {"field": "T", "type": "quantitative", "title": _("T, tokens per sequence (log scale)"),
         "scale": {"type": "log", "domain": [float(t.min()), float(max(t.max(), 2))], "nice": False},
         "axis": {"format": "d", "values": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]}}
    y = {"field": "value", "type": "quantitative", "title": _("KL penalty per sequence (log scale)"),
         "scale": {"type": "log"}}
    datasets = {"lines": records(df)}
    layers = [
        alt.Chart({"name": "lines"}, mark={"type": "line", "strokeWidth": 3},
                  encoding=alt.FacetedEncoding(
                      x=x, y=y,
                      color={"field": "series", "type": "nominal", "scale": scale,
                             "legend": _legend(list(scale["domain"]), columns=1), "sort": None},
                      strokeDash={"field": "series", "type": "nominal", "legend": None, "sort": None,
                                  "scale": {"domain": list(curves), "range": [[1, 0], [7, 4], [2, 3], [10, 3, 2, 3]][: len(curves)]}},
                      tooltip=[
                          {"field": "series", "type": "nominal", "title": _("reduction")},
                          {"field": "T", "type": "quantitative", "title": "T"},
                          {"field": "value", "type": "quantitative", "title": _("penalty"), "format": ".4g"},
                      ])),
    ]
    if current is not None:
        datasets["current"] = records(pd.DataFrame({"T": [current]}))
        layers.append(alt.Chart({"name": "current"}, mark={"type": "rule", "color": ZERO_COLOR,
                                                           "strokeDash": [4, 4], "strokeWidth": 1.5},
                                encoding=alt.FacetedEncoding(x=x)))
    return finish(alt.LayerChart(layer=layers, datasets=datasets), height=height)


def gradient_bars(
    categories: Sequence[str],
    series: Mapping[str, ArrayLike],
    colors: Mapping[str, str],
    *,
    x_title: str,
    height: int = 300,
) -> alt.Chart:
    """Grouped bars: one group per parameter, one bar per gradient.

    Parameters
    ----------
    categories : sequence of str
        One label per parameter (e.g. the first-token logits ``a0`` … ``a7``).
    series : mapping of str to array_like
        Legend text → the gradient's components on those parameters.
    colors : mapping of str to str
        Legend text → colour.
    x_title : str
        Title of the parameter axis.
    height : int, default 300
        Chart height in pixels.

    Returns
    -------
    altair.Chart
    """
    frames = []
    for name, v in series.items():
        arr = np.asarray(v, dtype=np.float64).ravel()
        if arr.size != len(categories):
            raise ValueError(f"series {name!r} has {arr.size} values for {len(categories)} parameters")
        frames.append(pd.DataFrame({"param": list(categories), "value": arr, "series": name}))
    df = pd.concat(frames, ignore_index=True)
    names = list(series)
    chart = alt.Chart(
        {"name": "bars"},
        mark={"type": "bar"},
        encoding=alt.FacetedEncoding(
            x={"field": "param", "type": "nominal", "sort": None, "title": x_title,
               "axis": {"labelAngle": 0}},
            xOffset={"field": "series", "type": "nominal", "sort": names},
            y={"field": "value", "type": "quantitative", "title": _("gradient component")},
            color={"field": "series", "type": "nominal", "legend": _legend(names, columns=1), "sort": names,
                   "scale": {"domain": names, "range": [colors[n] for n in names]}},
            tooltip=[
                {"field": "series", "type": "nominal", "title": _("gradient")},
                {"field": "param", "type": "nominal", "title": _("parameter")},
                {"field": "value", "type": "quantitative", "title": _("value"), "format": ".4g"},
            ],
        ),
        datasets={"bars": records(df)},
    )
    return finish(chart, height=height)


def cosine_bars(
    labels: Sequence[str],
    cosines: Sequence[float | None],
    colors: Sequence[str],
    *,
    x_title: str,
    none_text: str,
    height: int | None = None,
) -> alt.LayerChart:
    """One horizontal bar per option: its cosine to a reference gradient, written at the bar's end.

    Parameters
    ----------
    labels : sequence of str
        Option names, top to bottom.
    cosines : sequence of float or None
        Each cosine in [−1, 1]; None where the option's gradient is zero (no bar, ``none_text``).
    colors : sequence of str
        One colour per option.
    x_title : str
        Title of the cosine axis.
    none_text : str
        Text in place of a bar where the cosine is None.
    height : int, optional
        Chart height; by default 64 px per option (its name above its bar).

    Returns
    -------
    altair.LayerChart
    """
    if not (len(labels) == len(cosines) == len(colors)):
        raise ValueError("labels, cosines and colors must have the same length")
    df = pd.DataFrame({
        "option": list(labels),
        "cos": [math.nan if c is None else float(c) for c in cosines],
        "text": [none_text if c is None else f"{c:.4f}".replace("-", "−") for c in cosines],  # Unicode minus
        "at": [0.0 if c is None else float(c) for c in cosines],
    })
    low = min(0.0, float(np.nanmin(df["cos"])) if df["cos"].notna().any() else 0.0)
    x_scale = {"domain": [-1.0 if low < 0 else 0.0, 1.0], "nice": False}
    # Each option's name sits above its bar, not beside it: on a phone the bars keep the full width.
    y = {"field": "option", "type": "nominal", "sort": list(labels), "title": None, "axis": None}
    scale = {"domain": list(labels), "range": list(colors)}
    inside = df["cos"].abs() >= 0.35  # room for the number inside the bar
    negative = df["cos"] < 0  # a bar to the left of 0: its number mirrored (no bar: on the right of 0)
    datasets = {"cos": records(df)}
    for name, rows in (("inside", inside & ~negative), ("inside_negative", inside & negative),
                       ("outside", ~inside & ~negative), ("outside_negative", ~inside & negative)):
        datasets[name] = records(df[rows])
    layers = [
        alt.Chart({"name": "cos"}, mark={"type": "text", "align": "left", "baseline": "bottom", "dy": -6,
                                         "fontSize": 14, "color": TEXT_COLOR},
                  encoding=alt.FacetedEncoding(
                      y=y, x={"datum": x_scale["domain"][0], "type": "quantitative", "scale": x_scale},
                      text={"field": "option"})),
        alt.Chart({"name": "cos"}, mark={"type": "bar", "height": {"band": 0.4}, "yOffset": 12},
                  encoding=alt.FacetedEncoding(
                      y=y, x={"field": "cos", "type": "quantitative", "scale": x_scale, "title": x_title},
                      color={"field": "option", "type": "nominal", "scale": scale, "legend": None},
                      tooltip=[{"field": "option", "type": "nominal", "title": _("option")},
                               {"field": "text", "type": "nominal", "title": _("cosine")}])),
    ]
    # Inside a bar the number ends 6 px short of the bar's far end; outside, it starts 6 px beyond it.
    for name, mark in (
        ("inside", {"align": "right", "dx": -6, "color": "white", "fontWeight": "bold"}),
        ("inside_negative", {"align": "left", "dx": 6, "color": "white", "fontWeight": "bold"}),
        ("outside", {"align": "left", "dx": 6, "color": TEXT_COLOR}),
        ("outside_negative", {"align": "right", "dx": -6, "color": TEXT_COLOR}),
    ):
        if datasets[name]:
            layers.append(alt.Chart({"name": name}, mark={"type": "text", "fontSize": 14, "yOffset": 12, **mark},
                                    encoding=alt.FacetedEncoding(
                                        y=y, x={"field": "at", "type": "quantitative", "scale": x_scale},
                                        text={"field": "text"})))
        else:
            del datasets[name]
    chart = alt.LayerChart(layer=layers, datasets=datasets)
    return finish(chart, height=height or 64 * len(labels))
