"""Histograms of per-sample estimator values.

The values are binned with ``np.histogram`` here, in Python, so the browser
receives one row per bin (never the raw samples).  Every builder in
``charts/`` passes its data frames through :func:`check_rows`, which enforces
the app-wide limit of :data:`MAX_ROWS` rows per chart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from charts.numbers import from_log, share
from charts.palette import CONFIG, color, finish, label
from charts.vega import layer, nominal, quantitative, reference_rule, reference_text, zero_rule
from i18n import N_, _, pgettext

__all__ = [
    "bars_layer",
    "legend_text",
    "share_top",
    "short_number",
    "MAX_ROWS",
    "TITLE_LIMIT",
    "Binned",
    "bin_values",
    "check_rows",
    "common_domain",
    "records",
    "per_sample_histogram",
]

#: No chart ships more rows than this to the browser.
MAX_ROWS = 5_000
#: Widest a panel chart's title and subtitle lines may be (px).  Panels are at least 260 px
#: wide (``lab.ui.grid``); without an explicit limit Vega cuts a subtitle line at the width
#: the chart had when first laid out (about 135 px), so "0.13% outside the ch…".
TITLE_LIMIT = 250


def check_rows(df: pd.DataFrame, limit: int = MAX_ROWS) -> pd.DataFrame:
    """Return ``df`` unchanged, or raise ``AssertionError`` if it has more than ``limit`` rows.

    Every chart builder calls this on each data frame it hands to Altair, so a
    builder that forgot to bin or thin its data fails loudly in the tests
    instead of shipping megabytes of JSON to the browser.
    """
    if len(df) > limit:
        raise AssertionError(
            f"a chart may ship at most {limit:,} rows to the browser, got {len(df):,}; "
            "bin or thin the data before building the chart"
        )
    return df


def common_domain(
    arrays: Sequence[ArrayLike],
    *,
    coverage: float = 0.99,
    include: Sequence[float] = (0.0,),
) -> tuple[float, float]:
    """An x-range that holds the central ``coverage`` of every array, plus ``include``.

    Used to put several histograms on one shared axis, so that their spreads
    can be compared by eye.  Non-finite values are ignored.

    Parameters
    ----------
    arrays : sequence of array_like
        The per-sample values of each estimator.
    coverage : float, default 0.99
        Central fraction of each array that must lie inside the range.
    include : sequence of float
        Points that must be inside the range (zero, the true KL, ...).

    Returns
    -------
    (float, float)
        ``(lo, hi)`` with ``lo < hi``, padded by 3 % of the span.
    """
    tail = (1.0 - coverage) / 2.0
    lows = [float(v) for v in include if math.isfinite(v)]
    highs = list(lows)
    for a in arrays:
        v = np.asarray(a, dtype=np.float64)
        v = v[np.isfinite(v)]
        if v.size:
            lo, hi = np.quantile(v, [tail, 1.0 - tail])
            lows.append(float(lo))
            highs.append(float(hi))
    if not lows:
        return (-1.0, 1.0)
    lo, hi = min(lows), max(highs)
    span = hi - lo
    if span <= 0.0:  # every value equal (e.g. p == q): a small window around it
        half = max(abs(lo) * 0.1, 0.05)
        return (lo - half, hi + half)
    return (lo - 0.03 * span, hi + 0.03 * span)


@dataclass(frozen=True)
class Binned:
    """Histogram rows plus what the bins leave out.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per bin: ``left``, ``right``, ``count``, ``share`` (of all samples).
    n : int
        Number of samples, including non-finite ones.
    below, above : int
        Finite samples left / right of the binned range.
    nonfinite : int
        Samples that are ``inf`` (e.g. where r overflows).
    """

    table: pd.DataFrame
    n: int
    below: int
    above: int
    nonfinite: int

    @property
    def outside_share(self) -> float:
        """Share of samples not drawn in any bin."""
        return (self.below + self.above + self.nonfinite) / self.n if self.n else 0.0


def bin_values(
    values: ArrayLike, *, bins: int = 60, domain: tuple[float, float] | None = None
) -> Binned:
    """Bin per-sample values with ``np.histogram``.

    Parameters
    ----------
    values : array_like
        Per-sample values (may contain ``inf``).
    bins : int, default 60
        Number of equal-width bins.
    domain : (float, float), optional
        Range to bin; default :func:`common_domain` of ``values`` alone.

    Returns
    -------
    Binned
        The rows and the counts left outside the range.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    finite = v[np.isfinite(v)]
    lo, hi = domain if domain is not None else common_domain([finite], include=())
    counts, edges = np.histogram(finite, bins=bins, range=(lo, hi))
    n = v.size
    table = pd.DataFrame(
        {
            "left": edges[:-1],
            "right": edges[1:],
            "count": counts,
            "share": counts / n if n else counts * 0.0,
        }
    )
    return Binned(
        table=check_rows(table),
        n=n,
        below=int(np.count_nonzero(finite < lo)),
        above=int(np.count_nonzero(finite > hi)),
        nonfinite=int(n - finite.size),
    )


def records(df: pd.DataFrame) -> list[dict]:
    """``df`` as a list of row dicts for a chart's ``datasets``, after :func:`check_rows`.

    Builders put the data of all layers in the top-level chart's ``datasets``
    and point each layer at it with ``{"name": ...}``: Altair then neither
    sanitises a data frame nor deep-copies the rows when layering, which
    keeps a chart to a few milliseconds per rerun.  Non-finite numbers become
    nulls, since JSON has no ``inf``/``nan``.

    Column by column (pandas' own ``to_dict("records")`` costs ~1-2 ms even for
    a one-row frame).  Floats stay numpy scalars (a ``float`` subclass, so the
    JSON is the same): Altair's ``to_dict`` returns those at once, where every
    Python float goes through a slow protocol ``isinstance`` check (~8x faster
    for a few hundred rows).  Other columns are plain Python values.
    """
    check_rows(df)
    columns = []
    for name in df.columns:
        col = df[name]
        if col.dtype.kind == "f":
            a = col.to_numpy()
            values = list(a.astype(np.float64))
            for i in np.flatnonzero(~np.isfinite(a)):
                values[i] = None
        else:
            values = col.tolist()
            if col.dtype.kind == "O":
                values = [None if isinstance(v, float) and not math.isfinite(v) else v for v in values]
        columns.append(values)
    names = [str(c) for c in df.columns]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def legend_text() -> dict:
    """A legend's label colour: the axis labels' (dark on a projector), not Streamlit's light grey.

    Empty when the shared configuration (:data:`charts.palette.CONFIG`) sets no
    axis label colour, so a theme-aware palette decides for both.
    """
    colour = CONFIG.get("axis", {}).get("labelColor")
    return {"labelColor": colour} if colour else {}


def short_number(x: float) -> str:
    """A number for a chart label: 3 significant digits when very large or small, else 4."""
    if x == 0.0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.3g}"
    return f"{x:.4g}"


def share_top(tallest: float) -> float:
    """The top of a histogram's share axis: room above the ``tallest`` bar (or curve) for
    the true value's label, at most 100 % unless the tallest already is."""
    return max(min(tallest * 1.22, 1.0), tallest, 1e-9)


def value_axis_format(domain: Sequence[float] | None) -> dict:
    """The value axis's ``format`` where Vega's default fails: ticks of values near 1e-161 print as
    "0.0000000000…" (fixed point, cut at the label's width), so a tiny or huge range gets 3 significant
    digits (``−2e-161``); elsewhere the default (``−0.6``, ``20,000``)."""
    if domain is None or len(domain) != 2:
        return {}
    top = max(abs(float(domain[0])), abs(float(domain[1])))
    return {"format": ".3~g"} if 0.0 < top < 1e-4 or 1e6 <= top < math.inf else {}


def bars_layer(
    key: str,
    *,
    x_scale: dict,
    x_title: str,
    y_title: str,
    y_top: float,
    noun: str,
    share_format: str,
    tick_count: int = 5,
    opacity: float | None = None,
) -> alt.Chart:
    """The histogram bars of a binned table (``left``, ``right``, ``count``, ``share``).

    Drawn from the dataset named ``"bins"``, in the estimator's colour, with a
    tooltip giving the bin, its count of ``noun`` and its share.  The titles
    are shown as given (translated by the caller).
    """
    mark: dict = {"type": "rect", "color": color(key)}
    if opacity is not None:
        mark["opacity"] = opacity
    return alt.Chart(
        {"name": "bins"},
        mark=mark,
        encoding=alt.FacetedEncoding(
            x={
                "field": "left",
                "type": "quantitative",
                "scale": x_scale,
                "title": x_title,
                "axis": {"tickCount": tick_count, "labelOverlap": True,  # never "−1.01.5"
                         **value_axis_format(x_scale.get("domain"))},
            },
            x2={"field": "right"},
            y={
                "field": "share",
                "type": "quantitative",
                "title": y_title,
                "axis": {"format": "%", "tickCount": 5},
                # headroom above the tallest bar for the true-value label
                "scale": {"domain": [0.0, y_top], "nice": False},
            },
            y2={"datum": 0},
            tooltip=[
                # TRANSLATORS: tooltip of a histogram bar: the left edge of its bin
                {"field": "left", "type": "quantitative", "title": pgettext("histogram bin", "from"),
                 "format": ".4g"},
                # TRANSLATORS: tooltip of a histogram bar: the right edge of its bin
                {"field": "right", "type": "quantitative", "title": pgettext("histogram bin", "to"),
                 "format": ".4g"},
                {"field": "count", "type": "quantitative", "title": noun},
                # TRANSLATORS: tooltip of a histogram bar: the fraction of all values in its bin
                {"field": "share", "type": "quantitative", "title": pgettext("histogram bin", "share"),
                 "format": share_format},
            ],
        ),
    )


def per_sample_histogram(
    values: ArrayLike,
    key: str,
    *,
    true_value: float | None = None,
    true_label: str = N_("true KL"),
    mean: float | None = None,
    neg_fraction: float | None = None,
    domain: tuple[float, float] | None = None,
    bins: int = 60,
    height: int = 300,
    log_mean: float = math.nan,
) -> alt.LayerChart:
    """Histogram of one estimator's per-sample values, with the true value marked.

    Parameters
    ----------
    values : array_like
        Per-sample values of estimator ``key`` (one per draw of ``x ~ q``).
    key : str
        Estimator key of ``kl_core.estimation.estimators.ESTIMATORS``; sets colour and name.
    true_value : float, optional
        The exact quantity the estimator targets; drawn as a dashed black rule.
    true_label : str, default "true KL"
        Name of that quantity in the label (translated here if it is a message).
    mean, neg_fraction : float, optional
        Sample mean and fraction of samples < 0, if already computed by the
        core; otherwise computed here from ``values``.
    domain : (float, float), optional
        Shared x-range (see :func:`common_domain`); default: this array's own.
    bins : int, default 60
        Number of bins.
    height : int, default 300
        Total chart height in pixels, titles included; the width follows the
        container.
    log_mean : float, optional
        The natural log of a ``mean`` that is finite but past the largest double
        (``mean`` is then ``inf``): the subtitle writes it from its log.

    Returns
    -------
    altair.LayerChart
        A finished (configured) chart; the subtitle carries the share of
        negative samples and the sample mean.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    if domain is None:
        include = (0.0,) if true_value is None else (0.0, true_value)
        domain = common_domain([v], include=include)
    binned = bin_values(v, bins=bins, domain=domain)
    if mean is None:
        mean = float(np.mean(v)) if v.size else math.nan
    if neg_fraction is None:
        neg_fraction = float(np.mean(v < 0)) if v.size else math.nan

    name = label(key)
    subtitle = [
        _("{share} of values < 0").format(share=share(neg_fraction)),  # 0.027%, not 0.0%
        _("sample mean {mean}").format(mean=from_log(log_mean, 3, trim=True)
                                       if math.isinf(mean) and math.isfinite(log_mean) else short_number(mean)),
    ]
    if binned.outside_share > 0:  # a line of its own: a third of a 1280-px page is narrow
        subtitle.append(
            _("{outside} outside the chart").format(outside=share(binned.outside_share))
        )
    lo, hi = domain
    tallest = float(binned.table["share"].max())
    y_top = share_top(tallest)

    # Altair objects at the top, plain Vega-Lite dicts inside, rows in the
    # top-level datasets: a few milliseconds per chart and rerun, where
    # shorthand strings and chained calls cost tens (docs/app_conventions.md).
    x_scale = {"domain": [lo, hi], "nice": False, "zero": False}
    x_value = quantitative("x", x_scale)
    datasets = {"bins": records(binned.table)}
    layers: list[alt.Chart] = []
    if lo < 0.0 < hi:  # shade the side of zero where no KL can lie
        datasets["negative"] = records(pd.DataFrame({"x": [lo], "x2": [0.0]}))
        layers.append(layer("negative", {"type": "rect", "color": "#D55E00", "opacity": 0.07},
                            x=x_value, x2={"field": "x2"}))
    layers.append(
        bars_layer(
            key,
            x_scale=x_scale,
            x_title=_("per-sample value of {estimator}").format(estimator=name),
            y_title=_("share of samples"),
            y_top=y_top,
            noun=_("samples"),
            share_format=".2%",
            tick_count=6,
        )
    )
    if lo < 0.0 < hi:
        datasets["zero"] = records(pd.DataFrame({"x": [0.0]}))
        layers.append(zero_rule("zero", x=x_value))
    if true_value is not None and math.isfinite(true_value) and lo <= true_value <= hi:
        # two lines, the name over "= value": one line ran past a third of the page (a review: "exact mean = 0.037")
        datasets["reference"] = [{"x": float(true_value),
                                  "text": [_(true_label), "= {value}".format(value=short_number(true_value))]}]
        right_side = true_value > lo + 0.6 * (hi - lo)  # keep the label inside the plot
        layers.append(reference_rule("reference", x=x_value))
        layers.append(layer("reference", reference_text(right_side), x=x_value, y={"value": 0},
                            text=nominal("text")))

    chart = alt.LayerChart(
        layer=layers, datasets=datasets,
        title={"text": name, "subtitle": subtitle, "limit": TITLE_LIMIT},
    )
    return finish(chart, height=height)
