"""Charts of the control-variate family kλ = −log r + λ(r − 1).

Pure builders: arrays computed by ``kl_core`` come in, an Altair chart goes
out (plain Vega-Lite dicts inside, rows in the top-level ``datasets``; see
"Fast charts" in ``docs/app_conventions.md``).  Nothing here computes an
estimator or a variance.

* :func:`variance_parabola` – the exact Var(kλ) against λ, with λ = 0 (k1),
  λ = 1 (k3), λ* and the reader's λ marked;
* :func:`k_lambda_histogram` – the per-sample histogram of kλ, titled with λ;
* :func:`k_lambda_profile` – kλ as a function of log r, for the reader's λ
  against λ = 1 (and λ = 0), with the interval where kλ < 0 shaded;
* :func:`gain_chart`, :func:`lambda_star_chart` – how Var(k3)/Var(kλ*) and λ*
  change along a path away from q.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from charts.histograms import TITLE_LIMIT, legend_text, per_sample_histogram, records
from charts.numbers import lam_text
from charts.palette import (
    REFERENCE_COLOR,
    REFERENCE_DASH,
    EstimatorStyle,
    color,
    finish,
    fitted_legend,
    scales,
    style,
)
from charts.vega import beside, layer, nominal, quantitative, ticks_through_zero, zero_rule
from i18n import N_, _

__all__ = [
    "LambdaMark",
    "gain_chart",
    "k_lambda_histogram",
    "k_lambda_profile",
    "lambda_star_chart",
    "nonfinite_runs",
    "variance_parabola",
]

#: Shade for "a KL can't be here" (values < 0), as on the histograms.
NEGATIVE_SHADE = "#D55E00"
#: Tick values of the log-scale gain axis.
_LOG_TICKS = (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 100_000, 1_000_000)
#: Shade for "infinite variance here".
INFINITE_SHADE = "#8C8C8C"
#: A five-pointed star (an SVG path on the unit square, as Vega's shapes): λ*'s point.
STAR = ("M0,-1L0.2245,-0.309L0.9511,-0.309L0.3633,0.118L0.5878,0.809L0,0.382L-0.5878,0.809"
        "L-0.3633,0.118L-0.9511,-0.309L-0.2245,-0.309Z")
#: The look of λ*, which is no estimator: black, dashed like an exact value, a star.
LAM_STAR_STYLE = EstimatorStyle(REFERENCE_COLOR, tuple(REFERENCE_DASH), STAR)


@dataclass(frozen=True)
class LambdaMark:
    """One marked λ on the variance parabola.

    Attributes
    ----------
    label : str
        Legend text, e.g. ``"λ = 1 (k3)"``.
    lam : float
        The λ.
    var : float
        Exact Var(kλ) there (``inf`` allowed: the point is then not drawn).
    key : str or None
        The estimator it is (``"k1"``, ``"k3"``, ``"k_lambda"``): its colour, dash and
        shape come from :mod:`charts.palette`.  None: λ*, in the exact value's black dashes.
    """

    label: str
    lam: float
    var: float
    key: str | None


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "∞" if x > 0 else ("−∞" if x < 0 else _("undefined"))
    return f"{x:.4g}"


def _legend(labels: Sequence[str], orient: str = "top") -> dict:
    # At most two to a row, one on a screen too narrow for two: Vega never wraps a legend.
    return {"orient": orient, "title": None, "labelFontSize": 14, "symbolStrokeWidth": 3,
            **fitted_legend(labels, most=2), **legend_text()}


def variance_parabola(
    lams: ArrayLike,
    variances: ArrayLike,
    marks: Sequence[LambdaMark],
    *,
    infinite_note: str | Sequence[str] | None = None,
    height: int = 330,
) -> alt.LayerChart:
    """The exact variance of kλ against λ, with some λ marked.

    Parameters
    ----------
    lams, variances : array_like
        A grid of λ and the exact Var(kλ) there (from
        ``LambdaParabola.variance``); ``inf`` is left out of the line.
    marks : sequence of LambdaMark
        The λ to mark with a vertical rule and a point, in legend order.
    infinite_note : str or sequence of str, optional
        The chart's title when the variance is infinite (e.g. for every
        λ ≠ 0 when χ²(p‖q) = ∞), where the curve cannot be drawn; a
        sequence is drawn one line each.
    height : int, default 330
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        A finished chart.
    """
    lam_arr = np.asarray(lams, dtype=np.float64).ravel()
    var_arr = np.asarray(variances, dtype=np.float64).ravel()
    if lam_arr.shape != var_arr.shape:
        raise ValueError("lams and variances must have the same length")
    curve = pd.DataFrame({"lam": lam_arr, "var": var_arr})
    marks_df = pd.DataFrame(
        {
            "label": [m.label for m in marks],
            "lam": [m.lam for m in marks],
            "var": [m.var for m in marks],
            "var_text": [_fmt(m.var) for m in marks],
        }
    )
    finite = var_arr[np.isfinite(var_arr)]
    mark_finite = [m.var for m in marks if math.isfinite(m.var)]
    # Up to 2.5 times the largest marked variance: the minimum stays readable and
    # the parabola leaves through the top (clipped) instead of squashing it.
    top = max([*finite.tolist(), 0.0])
    if mark_finite and max(mark_finite) > 0:
        top = min(top, 2.5 * max(mark_finite))
        top = max(top, 1.5 * max(mark_finite))  # headroom above every marked point
    top = top * 1.08 if top > 0 else 1.0
    lo = float(min(lam_arr.min(), *(m.lam for m in marks)))
    hi = float(max(lam_arr.max(), *(m.lam for m in marks)))
    x_scale = {"domain": [lo, hi], "nice": False, "zero": False}
    y_scale = {"domain": [0.0, top], "nice": False, "zero": True}
    # One look per estimator (charts.palette): each mark's rule in its dash, its point in its shape.
    looks = scales([m.label for m in marks], [LAM_STAR_STYLE if m.key is None else m.key for m in marks])
    color_scale = looks["color"]
    # One legend of filled shapes: an outline would take the rules' dashes and fray them.
    legend = {**_legend(color_scale["domain"]), "symbolStrokeWidth": 0, "symbolSize": 160}
    tooltip = [
        # TRANSLATORS: tooltip title of a marked point on the variance parabola
        nominal("label", title=_("where")),
        quantitative("lam", title="λ", format=".4g"),
        nominal("var_text", title=_("Var(kλ), exact")),
    ]
    datasets = {"curve": records(curve), "marks": records(marks_df)}
    layers = [
        layer(
            "curve",
            {"type": "line", **style("k_lambda").line(), "strokeWidth": 3, "clip": True},
            x=quantitative("lam", x_scale, title=_("λ, the coefficient of the control variate r − 1"),
                           axis={"values": ticks_through_zero(*x_scale["domain"])}),
            # .6~g: 2e-16 near p = q (the default cut it to "0.0000000000…"), 500 not 5e+2 (Vega sets a missing precision from the tick step)
            y=quantitative("var", y_scale, title=_("Var(kλ) per sample, exact"), axis={"format": ".6~g"}),
            tooltip=[
                quantitative("lam", title="λ", format=".3f"),
                quantitative("var", title="Var(kλ)", format=".4g"),  # i18n: ok (notation)
            ],
        ),
        layer(
            "marks",
            {"type": "rule", "strokeWidth": 2},
            x=quantitative("lam", x_scale),
            color=nominal("label", scale=color_scale, legend=legend, sort=None),
            strokeDash=nominal("label", scale=looks["strokeDash"], legend=None, sort=None),
            tooltip=tooltip,
        ),
        layer(
            "marks",
            {"type": "point", "filled": True, "size": 140, "opacity": 1, "clip": True},
            x=quantitative("lam", x_scale),
            y=quantitative("var", y_scale),
            color=nominal("label", scale=color_scale, sort=None),
            shape=nominal("label", scale=looks["shape"], sort=None, legend=legend),
            tooltip=tooltip,
        ),
    ]
    chart = alt.LayerChart(layer=layers, datasets=datasets)
    if infinite_note:
        chart.title = {"text": _title(infinite_note), "color": "#8A4B00"}
    return finish(chart, height=height)


def k_lambda_histogram(values: ArrayLike, lam: float, *, key: str = "k_lambda", **options: Any) -> alt.LayerChart:
    """:func:`charts.histograms.per_sample_histogram` of kλ, titled with its λ.

    ``key`` sets the colour (``"k_lambda"``, or ``"k3"`` for λ = 1); ``options`` are
    ``per_sample_histogram``'s keywords (``true_value``, ``mean``, ``neg_fraction``,
    ``domain``, ``height``, ...).
    """
    chart = per_sample_histogram(values, key, **options)
    name = _("k3 = kλ at λ = 1") if key == "k3" else _("kλ at λ = {lam}").format(lam=lam_text(lam))
    title = chart.title
    subtitle = title["subtitle"] if isinstance(title, dict) else None
    chart.title = {"text": name, "limit": TITLE_LIMIT}
    if subtitle:
        chart.title["subtitle"] = subtitle
    return chart


def k_lambda_profile(
    logr: ArrayLike,
    curves: Sequence[tuple[str, ArrayLike, str]],
    *,
    negative: tuple[float, float] | None = None,
    negative_label: str = N_("kλ < 0 here"),
    y_domain: tuple[float, float] = (-1.5, 3.0),
    height: int = 330,
) -> alt.LayerChart:
    """Estimators as functions of log r, with the region below 0 shaded.

    Parameters
    ----------
    logr : array_like
        The grid of log r (x-axis).
    curves : sequence of (label, values, key)
        One line per estimator, values on the ``logr`` grid (from
        ``kl_core.estimation.estimators``), in the colour and dash of estimator ``key``
        (:mod:`charts.palette`).
    negative : (float, float), optional
        An interval of log r where the first curve is < 0 (from
        ``kl_core.estimation.bregman.k_lambda_negative_interval``); drawn as a band.
        Infinite ends are clipped to the grid.
    negative_label : str
        Label of that band (translated here if it is a message).
    y_domain : (float, float), default (-1.5, 3)
        The y-range shown; lines leaving it are clipped.
    height : int, default 330
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        A finished chart.
    """
    x = np.asarray(logr, dtype=np.float64).ravel()
    rows = []
    for label_, values, _key in curves:
        v = np.asarray(values, dtype=np.float64).ravel()
        if v.shape != x.shape:
            raise ValueError(f"curve {label_!r} has {v.size} values for {x.size} points")
        rows.append(pd.DataFrame({"logr": x, "value": v, "curve": label_}))
    lines = pd.concat(rows, ignore_index=True)
    lo_x, hi_x = float(x.min()), float(x.max())
    y_lo, y_hi = y_domain
    x_scale = {"domain": [lo_x, hi_x], "nice": False, "zero": False}
    y_scale = {"domain": [y_lo, y_hi], "nice": False, "zero": False}
    x_enc = quantitative("logr", x_scale, title=_("log r = log p(x) − log q(x) of one sample"),
                         axis={"tickCount": 10, "labelOverlap": True})
    datasets = {
        "lines": records(lines),
        "below": records(pd.DataFrame({"logr": [lo_x], "logr2": [hi_x], "y": [y_lo], "y2": [0.0]})),
    }
    band = {"x": quantitative("logr", x_scale), "x2": {"field": "logr2"},
            "y": quantitative("y", y_scale), "y2": {"field": "y2"}}
    layers = [layer("below", {"type": "rect", "color": NEGATIVE_SHADE, "opacity": 0.06}, **band)]
    if negative is not None:
        a, b = max(negative[0], lo_x), min(negative[1], hi_x)
        if a < b:
            datasets["negative"] = records(
                pd.DataFrame(
                    {"logr": [a], "logr2": [b], "y": [y_lo], "y2": [0.0],
                     "text": [_(negative_label)]}
                )
            )
            layers.append(layer("negative", {"type": "rect", "color": color("k_lambda"), "opacity": 0.22},
                                **band))
            right = b > lo_x + 0.6 * (hi_x - lo_x)
            layers.append(
                layer(
                    "negative",
                    {"type": "text", **beside(right, 4), "baseline": "bottom", "dy": -4, "fontSize": 14,
                     "color": "#6B2D57"},
                    x=quantitative("logr2" if right else "logr", x_scale),
                    y=quantitative("y", y_scale),
                    text=nominal("text"),
                )
            )
    datasets["zero"] = records(pd.DataFrame({"value": [0.0]}))
    layers.append(zero_rule("zero", 1.5, y=quantitative("value", y_scale)))
    labels = [c[0] for c in curves]
    looks = scales(labels, [c[2] for c in curves])
    legend = _legend(looks["color"]["domain"])
    layers.append(
        layer(
            "lines",
            {"type": "line", "strokeWidth": 3, "clip": True},
            x=x_enc,
            y=quantitative("value", y_scale, title=_("per-sample value")),
            color=nominal("curve", scale=looks["color"], legend=legend, sort=None),
            # the colour's legend: merged, each symbol in its dash
            strokeDash=nominal("curve", scale=looks["strokeDash"], legend=legend, sort=None),
            tooltip=[
                nominal("curve", title=_("estimator")),
                quantitative("logr", title="log r", format=".3f"),  # i18n: ok (notation)
                quantitative("value", title=_("value"), format=".4g"),
            ],
        )
    )
    chart = alt.LayerChart(layer=layers, datasets=datasets)
    return finish(chart, height=height)


def _title(text: str | Sequence[str]) -> str | list[str]:
    """An axis title: a string, or a list of lines (Vega-Lite draws one under the other)."""
    return text if isinstance(text, str) else list(text)


def nonfinite_runs(x: ArrayLike, y: ArrayLike) -> list[tuple[float, float]]:
    """The x-intervals over which ``y`` is not finite (each run of grid points, widened
    half a grid step on each side so single points show)."""
    xa = np.asarray(x, dtype=np.float64).ravel()
    bad = ~np.isfinite(np.asarray(y, dtype=np.float64).ravel())
    runs: list[tuple[float, float]] = []
    if not bad.any():
        return runs
    half = 0.5 * float(np.min(np.diff(xa))) if xa.size > 1 else 0.5
    i = 0
    while i < xa.size:
        if bad[i]:
            j = i
            while j + 1 < xa.size and bad[j + 1]:
                j += 1
            runs.append((max(float(xa[i]) - half, float(xa[0])), min(float(xa[j]) + half, float(xa[-1]))))
            i = j + 1
        else:
            i += 1
    return runs


def _path_base(
    thetas: ArrayLike, infinite: ArrayLike | None, infinite_text: str
) -> tuple[np.ndarray, dict, dict[str, list], list[alt.Chart]]:
    """What :func:`gain_chart` and :func:`lambda_star_chart` start from.

    Returns θ as an array, the x scale over it, and the datasets and layers of
    grey bands, each labelled ``infinite_text`` (translated here) up its middle,
    over the stretches where ``infinite`` is not finite (none if it is None).
    """
    th = np.asarray(thetas, dtype=np.float64).ravel()
    x_scale = {"domain": [float(th.min()), float(th.max())], "nice": False, "zero": False}
    runs = nonfinite_runs(th, infinite) if infinite is not None else []
    if not runs:
        return th, x_scale, {}, []
    text = _(infinite_text)
    rows = pd.DataFrame(
        {
            "a": [r[0] for r in runs],
            "b": [r[1] for r in runs],
            "mid": [0.5 * (r[0] + r[1]) for r in runs],
            "text": [text] * len(runs),
        }
    )
    layers = [
        layer("infinite", {"type": "rect", "color": INFINITE_SHADE, "opacity": 0.18},
              x=quantitative("a", x_scale), x2={"field": "b"}),
        layer(
            "infinite",
            {"type": "text", "angle": 270, "align": "right", "baseline": "middle", "dx": -10,
             "fontSize": 14, "color": "#31333F"},
            x=quantitative("mid", x_scale),
            y={"value": 0},
            text=nominal("text"),
        ),
    ]
    return th, x_scale, {"infinite": records(rows)}, layers


def _theta_axis(x_scale: dict, theta_title: str | Sequence[str]) -> dict:
    """The x channel of a chart along a path: θ, titled as given (a list: one line each)."""
    return quantitative("theta", x_scale, title=_title(theta_title), axis={"labelOverlap": True})


def gain_chart(
    thetas: ArrayLike,
    gain: ArrayLike,
    *,
    theta_title: str | Sequence[str],
    true_kl: ArrayLike | None = None,
    lam_star: ArrayLike | None = None,
    current: tuple[float, float] | None = None,
    infinite_text: str = N_("Var(k3) = ∞ here"),
    height: int = 330,
) -> alt.LayerChart:
    """Var(k3)/Var(kλ*) along a path, on a log scale, with infinite stretches shaded.

    Parameters
    ----------
    thetas, gain : array_like
        Positions θ along the path and the gain there (``GainCurve.gain``);
        ``inf``/``nan`` where Var(k3) is infinite.
    theta_title : str or sequence of str
        The x-axis title: what θ is (a list: one line each), shown as given.
    true_kl, lam_star : array_like, optional
        KL[q‖p_θ] and λ*, shown in the tooltip.
    current : (float, float), optional
        A (θ, gain) point to mark, e.g. Schulman's μ = 1.
    infinite_text : str
        Label of the shaded stretches where the gain is not finite (translated here).
    height : int, default 330
        Chart height in pixels.
    """
    g = np.asarray(gain, dtype=np.float64).ravel()
    th, x_scale, datasets, layers = _path_base(thetas, g, infinite_text)
    df = pd.DataFrame({"theta": th, "gain": np.where(np.isfinite(g), g, np.nan)})
    tooltip = [
        quantitative("theta", title="θ", format=".3f"),
        quantitative("gain", title="Var(k3)/Var(kλ*)", format=".4g"),  # i18n: ok
    ]
    if true_kl is not None:
        df["kl"] = np.asarray(true_kl, dtype=np.float64).ravel()
        tooltip.append(quantitative("kl", title="KL[q‖p]", format=".4g"))  # i18n: ok
    if lam_star is not None:
        df["lam_star"] = np.asarray(lam_star, dtype=np.float64).ravel()
        tooltip.append(quantitative("lam_star", title="λ*", format=".4g"))
    finite = df["gain"].dropna()
    top = max(float(finite.max()) if len(finite) else 2.0, 2.0)
    y_scale = {"type": "log", "domain": [1.0, top * 1.15], "nice": False}
    ticks = [v for v in _LOG_TICKS if v <= top * 1.15]
    datasets.update({"gain": records(df), "one": records(pd.DataFrame({"gain": [1.0]}))})
    layers.append(
        layer(
            "gain",
            {"type": "line", **style("k_lambda").line(), "strokeWidth": 3,
             "point": {"filled": True, "size": 60, "opacity": 0}},
            x=_theta_axis(x_scale, theta_title),
            y=quantitative("gain", y_scale, title=_("Var(k3) / Var(kλ*)  (log scale)"),
                           axis={"values": ticks, "format": "~g"}),
            tooltip=tooltip,
        )
    )
    if current is not None and math.isfinite(current[1]):
        datasets["current"] = records(
            pd.DataFrame(
                {"theta": [current[0]], "gain": [current[1]], "text": [f"×{current[1]:.3g}"]}
            )
        )
        at_current = {"x": quantitative("theta", x_scale), "y": quantitative("gain", y_scale)}
        layers.append(layer("current", {"type": "point", "color": REFERENCE_COLOR, "filled": True,
                                        "size": 110}, **at_current))
        layers.append(layer("current", {"type": "text", "align": "left", "dx": 8, "dy": -10,
                                        "fontSize": 14, "color": REFERENCE_COLOR},
                            **at_current, text=nominal("text")))
    chart = alt.LayerChart(layer=layers, datasets=datasets)
    return finish(chart, height=height)


def lambda_star_chart(
    thetas: ArrayLike,
    lam_star: ArrayLike,
    *,
    theta_title: str | Sequence[str],
    infinite: ArrayLike | None = None,
    infinite_text: str = N_("χ² = ∞: λ* = 0"),
    height: int = 330,
) -> alt.LayerChart:
    """λ* along a path, with λ = 1 (k3) as a reference line.

    Parameters
    ----------
    thetas, lam_star : array_like
        Positions θ and λ* there (``GainCurve.lam_star``).
    infinite : array_like, optional
        Values that are non-finite where the band should be shaded (e.g. the
        variance of k3 along the path).
    theta_title, infinite_text, height
        As for :func:`gain_chart`.
    """
    th, x_scale, datasets, layers = _path_base(thetas, infinite, infinite_text)
    ls = np.asarray(lam_star, dtype=np.float64).ravel()
    df = pd.DataFrame({"theta": th, "lam_star": ls})
    top = max(1.1, float(np.nanmax(np.where(np.isfinite(ls), ls, np.nan))) * 1.08)
    bottom = min(0.0, float(np.nanmin(np.where(np.isfinite(ls), ls, np.nan))))
    y_scale = {"domain": [bottom, top], "nice": False, "zero": True}
    datasets["lam"] = records(df)
    datasets["ref"] = records(pd.DataFrame({"y": [1.0], "text": ["λ = 1 (k3)"]}))  # i18n: ok
    ref_y = quantitative("y", y_scale)
    layers += [
        layer("ref", {"type": "rule", **style("k3").line(), "strokeWidth": 2}, y=ref_y),
        layer(
            "ref",
            {"type": "text", "align": "right", "baseline": "bottom", "dy": -4, "fontSize": 14,
             "color": color("k3")},
            x={"value": {"expr": "width - 4"}},
            y=ref_y,
            text=nominal("text"),
        ),
        layer(
            "lam",
            {"type": "line", "color": REFERENCE_COLOR, "strokeWidth": 3},
            x=_theta_axis(x_scale, theta_title),
            y=quantitative("lam_star", y_scale, title=_("λ*, the variance-optimal λ")),
            tooltip=[
                quantitative("theta", title="θ", format=".3f"),
                quantitative("lam_star", title="λ*", format=".4g"),
            ],
        ),
    ]
    chart = alt.LayerChart(layer=layers, datasets=datasets)
    return finish(chart, height=height)
