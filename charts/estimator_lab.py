"""Charts of the Estimator Lab: repeated estimates and the running mean of one estimate.

* :func:`batch_means_histogram` – the R estimates (each the mean of N values)
  as a histogram, with the normal approximation
  :math:`\\mathcal N(\\mu, \\sigma^2/N)` from the exact moments laid over it;
* :func:`running_means_chart` – for each estimator, the mean of the first n
  values of one estimate against n (log axis), with a ±2 standard-error band,
  on one pair of axes, and the true values.

Per-sample histograms are :func:`charts.histograms.per_sample_histogram`.
Same fast style as there: Altair objects at the top, plain Vega-Lite dicts
inside, rows in the top-level ``datasets`` (``docs/app_conventions.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from charts.histograms import (
    TITLE_LIMIT,
    bars_layer,
    bin_values,
    common_domain,
    legend_text,
    records,
    share_top,
)
from charts.palette import REFERENCE_COLOR, SOLID, finish, label, scales, style
from charts.vega import layer, nominal, quantitative, reference_rule, reference_text, zero_rule
from i18n import _, pgettext
from kl_core.estimation.sampling_distributions import NormalApproximation, observed_spread

__all__ = [
    "batch_means_domain",
    "batch_means_histogram",
    "running_domain",
    "running_means_chart",
    "usable_domain",
    "with_numpy_rows",
]

#: Points of the normal-approximation curve.
CURVE_POINTS = 100
#: The running-mean band is ± this many standard errors.
BAND_SE = 2.0
#: Running-mean charts start at this n (when N is at least ten times larger): before it the
#: band is still huge, and the y-range ignores it.
RUNNING_FROM = 10


def with_numpy_rows(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Give an existing chart's ``datasets`` the fast rows of :func:`charts.histograms.records`, in place.

    For charts from builders that emit Python floats (e.g.
    :func:`charts.histograms.per_sample_histogram`): the JSON is unchanged,
    ``to_dict`` is several times faster.  Returns ``chart``.
    """
    datasets = chart._get("datasets")
    if isinstance(datasets, dict):
        for name, rows in datasets.items():
            if isinstance(rows, list):
                datasets[name] = [
                    {k: np.float64(v) if type(v) is float else v for k, v in row.items()}
                    for row in rows
                ]
    return chart


def fmt(x: float) -> str:
    """A number for a chart label: 4 significant digits (as on the page), ``∞`` spelled out."""
    if not math.isfinite(x):
        return "∞" if x == math.inf else ("−∞" if x == -math.inf else _("undefined"))
    return f"{x:.4g}"


# Guides (zero line, true value, its label) are drawn from the chart's main
# dataset reduced to one row by an aggregate transform, with the position as a
# datum: no extra dataset, so Streamlit has fewer tables to convert per chart.
_ONE_ROW = [{"aggregate": [{"op": "count", "as": "rows"}]}]


def _at(value: float, scale: dict) -> dict:
    """A position channel at ``value`` on ``scale`` (a datum: no row needed)."""
    return {"datum": value, "type": "quantitative", "scale": scale}


def _reference_rule(dataset: str, channel: str, value: float, scale: dict) -> alt.Chart:
    """The exact value: a black dashed rule at ``channel`` = ``value``."""
    return reference_rule(dataset, transform=_ONE_ROW, **{channel: _at(value, scale)})


def _zero_rule(dataset: str, scale: dict) -> alt.Chart:
    return zero_rule(dataset, transform=_ONE_ROW, x=_at(0.0, scale))


def _x_label(dataset: str, value: float, scale: dict, text: str, right_side: bool) -> alt.Chart:
    """``text`` at the top of the plot, beside the vertical rule at ``value``."""
    return layer(dataset, reference_text(right_side, text=text), transform=_ONE_ROW,
                 x=_at(value, scale), y={"value": 0})


def usable_domain(domain: tuple[float, float]) -> tuple[float, float]:
    """``domain``, or a small window around it if it is too narrow to bin.

    Values equal up to rounding (e.g. ``p`` = ``q`` written with shifted
    logits, where every log-ratio is ~1e-16) give a span that ``np.histogram``
    cannot cut into bins; they get the window that
    :func:`charts.histograms.common_domain` gives equal values.
    """
    lo, hi = domain
    span = hi - lo
    if math.isfinite(span) and span > 1e-6 * max(abs(lo), abs(hi)) and span > 1e-200:
        return domain
    centre = 0.5 * (lo + hi) if math.isfinite(lo + hi) else 0.0
    half = max(abs(centre) * 0.1, 0.05)
    return (centre - half, centre + half)


def batch_means_domain(
    batch_means: ArrayLike,
    approx: NormalApproximation | None = None,
    include: Sequence[float] = (),
) -> tuple[float, float]:
    """An x-range for one estimator's histogram of estimates.

    Holds the central 99.5 % of the estimates, the normal approximation's
    mean ± 4 SE (when it has a density) and the points in ``include`` (the
    true value), padded by 3 %.
    """
    points = [float(v) for v in include if math.isfinite(v)]
    if approx is not None and approx.has_density:
        points += [approx.mean - 4.0 * approx.se, approx.mean + 4.0 * approx.se]
    return usable_domain(common_domain([batch_means], coverage=0.995, include=points))


def batch_means_histogram(
    batch_means: ArrayLike,
    key: str,
    *,
    n: int,
    approx: NormalApproximation | None,
    true_value: float | None = None,
    true_label: str = "KL[q‖p]",
    domain: tuple[float, float] | None = None,
    bins: int = 40,
    height: int = 300,
) -> alt.LayerChart:
    """Histogram of R estimates (batch means of ``n`` values), with the normal approximation.

    Parameters
    ----------
    batch_means : array_like
        The R estimates of estimator ``key``, e.g. ``EstimatorSummary.batch_means``.
    key : str
        Estimator key; sets the bar colour and the name.
    n : int
        Values per estimate (for the labels).
    approx : NormalApproximation or None
        :func:`kl_core.estimation.sampling_distributions.batch_mean_normal` of the exact moments; drawn as
        a black curve, scaled to the expected share of estimates per bin, when
        it has a density.  None (or no density): no curve.
    true_value : float, optional
        The estimator's target, drawn as a dashed black rule.
    true_label : str, default "KL[q‖p]"
        The target's name, for the x-axis title (the rule is labelled "true").
    domain : (float, float), optional
        x-range; default :func:`batch_means_domain`.
    bins : int, default 40
        Number of bins.
    height : int, default 300
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        A finished chart; the subtitle gives the mean and standard deviation
        of the R estimates beside the curve's mean and standard error.
    """
    v = np.asarray(batch_means, dtype=np.float64).ravel()
    drawable = approx is not None and approx.has_density
    if domain is None:
        include = () if true_value is None else (true_value,)
        domain = batch_means_domain(v, approx if drawable else None, include)
    lo, hi = domain = usable_domain(domain)
    binned = bin_values(v, bins=bins, domain=domain)
    width = (hi - lo) / bins
    centre, spread = observed_spread(v)

    name = label(key)
    # Short lines: a panel is 260 px wide (TITLE_LIMIT); the caption says the rest.
    if drawable:
        subtitle = [
            _("mean {mean} · curve {curve}").format(mean=fmt(centre), curve=fmt(approx.mean)),
            _("sd {sd} · curve {curve}").format(sd=fmt(spread), curve=fmt(approx.se)),
        ]
    elif approx is not None and math.isinf(approx.var):
        subtitle = [_("mean {mean}").format(mean=fmt(centre)),
                    _("sd {sd} · no curve: Var = ∞").format(sd=fmt(spread))]
    else:
        subtitle = [_("mean {mean}").format(mean=fmt(centre)), _("sd {sd}").format(sd=fmt(spread))]
    if binned.outside_share > 0:
        subtitle.append(_("{outside:.1%} outside the chart").format(outside=binned.outside_share))
    x_scale = {"domain": [lo, hi], "nice": False, "zero": False}
    tallest = float(binned.table["share"].max())
    datasets: dict[str, list[dict]] = {"bins": records(binned.table)}
    if drawable:
        xs = np.linspace(lo, hi, CURVE_POINTS)
        curve = pd.DataFrame({"x": xs, "share": approx.pdf(xs) * width})
        datasets["curve"] = records(curve)
        tallest = max(tallest, float(curve["share"].max()))
    y_top = share_top(tallest)

    layers: list[alt.Chart] = [
        bars_layer(
            key,
            x_scale=x_scale,
            x_title=_("estimate of {target}").format(target=true_label),
            y_title=_("share of the estimates"),
            y_top=y_top,
            # TRANSLATORS: tooltip of a histogram bar: how many estimates fell in its bin
            noun=pgettext("histogram count", "estimates"),
            share_format=".1%",
            opacity=0.85,
        )
    ]
    if drawable:
        layers.append(layer("curve", {"type": "line", "color": REFERENCE_COLOR, "strokeWidth": 2},
                            x=quantitative("x", x_scale), y=quantitative("share")))
    if lo < 0.0 < hi:
        layers.append(_zero_rule("bins", x_scale))
    if true_value is not None and math.isfinite(true_value) and lo <= true_value <= hi:
        # a short label, on the roomier side of the rule: it must fit a third of the page
        right_side = true_value > lo + 0.5 * (hi - lo)
        layers.append(_reference_rule("bins", "x", true_value, x_scale))
        layers.append(_x_label("bins", true_value, x_scale,
                               _("true = {value}").format(value=fmt(true_value)), right_side))
    chart = alt.LayerChart(layer=layers, datasets=datasets,
                           title={"text": name, "subtitle": subtitle, "limit": TITLE_LIMIT})
    return finish(chart, height=height)


def running_domain(
    runs: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike]],
    include: Sequence[float] = (),
    *,
    start: int = RUNNING_FROM,
) -> tuple[float, float]:
    """One y-range for several running-mean charts.

    Parameters
    ----------
    runs : sequence of (running_n, running_mean, running_se)
        One triple per estimator (``EstimatorSummary`` fields).
    include : sequence of float
        Values that must be inside (the true values).
    start : int, default 10
        Checkpoints before this n are ignored (their band is still huge);
        they are clipped in the chart.

    Returns
    -------
    (float, float)
        ``(lo, hi)`` holding every band from ``start`` on, padded by 5 %.
    """
    lows = [float(v) for v in include if math.isfinite(v)]
    highs = list(lows)
    for ns, means, ses in runs:
        ns, means, ses = (np.asarray(a, dtype=np.float64) for a in (ns, means, ses))
        keep = (ns >= min(start, ns.max(initial=1.0))) & np.isfinite(means)
        band = np.where(np.isfinite(ses), BAND_SE * ses, 0.0)
        if keep.any():
            lows.append(float(np.min(means[keep] - band[keep])))
            highs.append(float(np.max(means[keep] + band[keep])))
    if not lows:
        return (-1.0, 1.0)
    lo, hi = min(lows), max(highs)
    span = hi - lo
    if span <= 0.0:
        half = max(abs(lo) * 0.1, 0.05)
        return (lo - half, hi + half)
    return (lo - 0.05 * span, hi + 0.05 * span)


def running_means_chart(
    runs: Sequence[tuple[str, ArrayLike, ArrayLike, ArrayLike]],
    *,
    targets: Sequence[tuple[str, float]] = (),
    y_domain: tuple[float, float] | None = None,
    height: int = 380,
) -> alt.LayerChart:
    """Running means of several estimators against n (log axis), each with a ±2 SE band.

    Parameters
    ----------
    runs : sequence of (key, running_n, running_mean, running_se)
        Per estimator: its key and the checkpoints n, the mean of the first n
        values and its standard error :math:`s_n/\\sqrt n` (``EstimatorSummary``
        fields, at most a few hundred points each).  Bands are drawn in this
        order, so put the widest first; lines in it too, the dashed ones
        (``charts.palette.dash``) last, on top of the solid ones they may coincide with.
    targets : sequence of (name, value)
        True values to mark as dashed black lines, e.g. ``[("KL[q‖p]", 0.5)]``.
    y_domain : (float, float), optional
        y-range; default :func:`running_domain` of the runs and targets.
        Values outside are clipped.
    height : int, default 380
        Chart height in pixels.

    Returns
    -------
    altair.LayerChart
        A finished chart, coloured and dashed by estimator with a legend on top.
        The n axis starts at :data:`RUNNING_FROM` (when the largest n is at
        least ten times that), where the y-range starts too: no band is cut.
    """
    frames = []
    dashed_last = sorted(runs, key=lambda run: style(run[0]).dash != SOLID)
    for key, ns, means, ses in dashed_last:
        ns, means, ses = (np.asarray(a, dtype=np.float64) for a in (ns, means, ses))
        keep = np.isfinite(means)
        frames.append(
            pd.DataFrame(
                {
                    "estimator": label(key),
                    "n": ns[keep],
                    "mean": means[keep],
                    # null where the SE is (n = 1): Vega-Lite skips those band points
                    "lo": (means - BAND_SE * ses)[keep],
                    "hi": (means + BAND_SE * ses)[keep],
                }
            )
        )
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {"estimator": [], "n": [], "mean": [], "lo": [], "hi": []}
    )
    x_max = float(df["n"].max()) if len(df) else 10.0
    x_min = float(RUNNING_FROM) if x_max >= 10 * RUNNING_FROM else 1.0
    if y_domain is None:
        y_domain = running_domain(
            [(ns, means, ses) for _key, ns, means, ses in runs], [v for _name, v in targets],
            start=int(x_min),
        )
    lo, hi = y_domain
    keys = [key for key, *_rest in runs]
    names = [label(k) for k in keys]
    looks = scales(names, keys)  # one look per estimator (charts.palette)
    legend = {
        "orient": "top",
        "title": None,
        "columns": 3,  # five names do not fit a phone's width on one line
        "symbolType": "stroke",
        "symbolStrokeWidth": 3,
        "symbolOpacity": 1,
        "symbolSize": 400,
        **legend_text(),
    }
    colour = nominal("estimator", scale=looks["color"], legend=legend)
    # the same legend as the colour's: Vega-Lite merges them, each symbol in its dash
    dash = nominal("estimator", scale=looks["strokeDash"], legend=legend)
    x_value = quantitative(
        "n", {"type": "log", "domain": [x_min, max(x_max, 10.0)], "nice": False},
        title=_("n, values averaged so far (log scale)"), axis={"format": "~s", "labelOverlap": True},
    )
    y_scale = {"domain": [lo, hi], "nice": False, "zero": False}
    layers = [
        layer(
            "run",
            {"type": "area", "opacity": 0.15, "clip": True},
            x=x_value,
            y=quantitative("lo", y_scale, title=_("mean of the first n values")),
            y2={"field": "hi"},
            color=colour,
        ),
        layer(
            "run",
            {"type": "line", "strokeWidth": 2.5, "clip": True},
            x=x_value,
            y=quantitative("mean", y_scale),
            color=colour,
            strokeDash=dash,
            tooltip=[
                nominal("estimator", title=_("estimator")),
                quantitative("n", title="n", format=","),
                quantitative("mean", title=_("running mean"), format=".4g"),
                quantitative("lo", title="− 2 SE", format=".4g"),
                quantitative("hi", title="+ 2 SE", format=".4g"),
            ],
        ),
    ]
    merged: dict[float, list[str]] = {}  # equal true values share one rule and label
    for name, value in targets:
        if math.isfinite(value) and lo <= value <= hi:
            merged.setdefault(value, []).append(name)
    for value, targets_here in merged.items():
        # under the running means, which near the truth would vanish beneath its dashes (a review: k2 and k3
        # at the defaults)
        layers.insert(1, _reference_rule("run", "y", value, y_scale))
        layers.append(  # inside the plot, above the rule at its right end: no margin taken
            layer(
                "run",
                {"type": "text", "align": "right", "baseline": "bottom", "dx": -4, "dy": -4,
                 "fontSize": 14, "color": REFERENCE_COLOR,
                 "text": f"{' = '.join(targets_here)} = {fmt(value)}"},
                transform=_ONE_ROW,
                y=_at(value, y_scale),
                x={"value": {"expr": "width"}},
            )
        )
    chart = alt.LayerChart(layer=layers, datasets={"run": records(df)})
    return finish(chart, height=height)
