"""Charts of the "Gradients" page: expected gradients per logit, their spread, k_λ's λ, training.

Pure builders: :mod:`kl_core.gradients.expected` and :mod:`kl_core.gradients.flow`
results in, ``altair`` charts out, no Streamlit.  Built in the fast style of
``docs/app_conventions.md`` (Altair objects at the top, plain Vega-Lite dicts
inside, rows in the top-level ``datasets``).  Each option's panel is its own
small chart, so that the page can lay the panels out in rows that wrap on a
narrow screen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from charts.histograms import bin_values, records
from charts.palette import (
    COLORS,
    CONFIG,
    RB_COLOR,
    REFERENCE_COLOR,
    REFERENCE_DASH,
    REFERENCE_TICKS,
    SERIES_COLORS,
    TITLE_SIZE,
    ZERO_COLOR,
    dash,
    finish,
    fitted_legend,
    shape,
    style,
    wrapped,
)
from charts.vega import ticks_through_zero
from i18n import _, pgettext
from kl_core.gradients.expected import GradientRow

__all__ = [
    "MAX_TRAINING_POINTS",
    "TITLE_LIMIT",
    "TOKEN_COLORS",
    "TOKEN_DASHES",
    "gradient_panel",
    "lambda_spread_chart",
    "option_color",
    "pair_chart",
    "spread_panel",
    "symmetric_domain",
    "training_panel",
]

#: Up to this many recorded steps per token are drawn (the rest are thinned out).
MAX_TRAINING_POINTS = 120
#: The training picture's token colours: the shared palette's colour-blind-safe set, in turn.
TOKEN_COLORS = (*COLORS.values(), RB_COLOR)
#: A dash pattern per token, so that lines of the same colour (and colour-blind readers) can
#: still tell tokens apart: with colours in turn, each of the first ten tokens has its own pair.
TOKEN_DASHES = ([1, 0], [7, 3], [2, 2], [1, 0], [7, 3], [2, 2], [1, 0], [7, 3], [2, 2], [1, 0])
_FORWARD = REFERENCE_COLOR
#: Legend text: the colour of the shared axis labels (dark, readable on a projector).
TEXT_COLOR = CONFIG["axis"]["labelColor"]
#: Widest a panel's title may be (px): the page lays the panels out 260 px wide.
TITLE_LIMIT = 250


def _layered(layers: list[alt.Chart], **kwargs) -> alt.LayerChart:
    """``alt.LayerChart(layer=layers, **kwargs)`` without its two deep copies of every layer.

    The layers carry no ``params``, so there is nothing for Altair's
    constructor to lift or rename; it would only copy them (~1 ms per layer).
    """
    chart = alt.LayerChart(**kwargs)
    chart.layer = layers
    return chart


def option_color(row: GradientRow) -> str:
    """The colour of an option: its estimator's (k1_score is k1's), black for the exact full KL."""
    key = row.entry.estimator if row.entry is not None else row.name
    key = "k1" if key == "k1_score" else key
    return COLORS.get(key, REFERENCE_COLOR)


def symmetric_domain(arrays: Sequence[np.ndarray], pad: float = 0.08) -> tuple[float, float]:
    """A y-range around 0 that holds every finite value of ``arrays``, shared by the panels."""
    finite = [np.abs(a[np.isfinite(a)]) for a in (np.asarray(x, dtype=float) for x in arrays)]
    top = max((float(f.max()) for f in finite if f.size), default=0.0)
    top = top * (1.0 + pad) if top > 0 else 1.0
    return (-top, top)


def gradient_panel(
    row: GradientRow,
    reverse: np.ndarray,
    forward: np.ndarray,
    *,
    title: str,
    subtitle: Sequence[str],
    y_domain: tuple[float, float],
    height: int = 340,
) -> alt.LayerChart:
    """One option's expected gradient per logit (bars) beside the two true gradients (marks).

    Parameters
    ----------
    row : GradientRow
        The option (:func:`kl_core.gradients.expected.gradient_table`).
    reverse, forward : numpy.ndarray
        :math:`\\nabla\\mathrm{KL}[\\pi_\\theta\\|\\pi_{\\mathrm{ref}}]` (black bars' outline)
        and :math:`\\nabla\\mathrm{KL}[\\pi_{\\mathrm{ref}}\\|\\pi_\\theta]` (hollow circles).
    title : str
        The option, in words.
    subtitle : sequence of str
        Lines under the title (what the gradient is, the cosines).
    y_domain : (float, float)
        Shared by every panel, so that the bars compare across panels.
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        Bars in the option's colour; a black tick at each token's reverse-KL
        gradient and a hollow circle at its forward-KL gradient.
    """
    k = row.expected_grad.size
    g_name, r_name, f_name = _("option"), _("∇ reverse KL"), _("∇ forward KL")
    rows = pd.DataFrame({
        "token": np.arange(k),
        "g": np.where(np.isfinite(row.expected_grad), row.expected_grad, np.nan),
        "rev": reverse,
        "fwd": forward,
    })
    x = {"field": "token", "type": "ordinal", "title": _("token"),
         "axis": {"labelAngle": 0}, "scale": {"paddingInner": 0.25}}
    y_scale = {"domain": list(y_domain), "nice": False}
    tooltip = [
        {"field": "token", "type": "ordinal", "title": _("token")},
        {"field": "g", "type": "quantitative", "title": g_name, "format": ".4g"},
        {"field": "rev", "type": "quantitative", "title": r_name, "format": ".4g"},
        {"field": "fwd", "type": "quantitative", "title": f_name, "format": ".4g"},
    ]
    layers = [
        alt.Chart(
            {"name": "zero"}, mark={"type": "rule", "color": ZERO_COLOR},
            encoding=alt.FacetedEncoding(y={"datum": 0, "type": "quantitative", "scale": y_scale}),
        ),
        alt.Chart(
            {"name": "grad"}, mark={"type": "bar", "color": option_color(row), "clip": True},
            encoding=alt.FacetedEncoding(
                x=x,
                y={"field": "g", "type": "quantitative", "title": _("expected gradient"),
                   "scale": y_scale, "axis": {"format": "~g", "tickCount": 5}},
                tooltip=tooltip,
            ),
        ),
        alt.Chart(
            {"name": "grad"}, name=REFERENCE_TICKS,
            mark={"type": "tick", "color": REFERENCE_COLOR, "thickness": 3, "bandSize": 18,
                  "clip": True},
            encoding=alt.FacetedEncoding(x=x, y={"field": "rev", "type": "quantitative"},
                                         tooltip=tooltip),
        ),
        alt.Chart(
            {"name": "grad"},
            mark={"type": "point", "shape": "circle", "filled": False, "color": _FORWARD,
                  "strokeWidth": 2, "size": 70, "clip": True},
            encoding=alt.FacetedEncoding(x=x, y={"field": "fwd", "type": "quantitative"},
                                         tooltip=tooltip),
        ),
    ]
    chart = _layered(
        layers,
        datasets={"grad": records(rows), "zero": [{}]},
        title={"text": _fitted_title(title), "subtitle": list(subtitle), "color": option_color(row),
               "limit": TITLE_LIMIT},
    )
    return finish(chart, height=height)


#: The difference bars of :func:`pair_chart`: a grey that is no estimator's colour.
DIFFERENCE_COLOR = SERIES_COLORS[3]


def pair_chart(
    k2: np.ndarray,
    k3: np.ndarray,
    true_reverse: np.ndarray,
    *,
    names: Sequence[str],
    height: int = 330,
) -> alt.LayerChart:
    """k2 and k3 used as losses, token by token in one panel, with their difference and the true gradient.

    Parameters
    ----------
    k2, k3 : numpy.ndarray
        The expected gradients of k2 and k3 as losses, one per logit
        (:attr:`kl_core.gradients.expected.GradientRow.expected_grad`).
    true_reverse : numpy.ndarray
        :math:`\\nabla\\mathrm{KL}[\\pi_\\theta\\|\\pi_{\\mathrm{ref}}]`: a black tick over each
        token's k2 bar (on-policy the bar ends exactly there).
    names : sequence of str
        The three bars' legend labels: k2, k3, and their difference k3 − k2.
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        Three bars per token (k2's colour, k3's colour, grey), each bar
        tipped with its estimator's point shape so that colour is not the only
        cue; the legend names them.
    """
    if len(names) != 3:
        raise ValueError(f"names must hold three labels (k2, k3, difference), got {len(names)}")
    k = np.asarray(k2).size
    diff = np.asarray(k3, dtype=float) - np.asarray(k2, dtype=float)
    series = list(names)
    rows = pd.DataFrame({
        "token": np.tile(np.arange(k), 3),
        "series": np.repeat(series, k),
        "g": np.concatenate([np.asarray(k2, dtype=float), np.asarray(k3, dtype=float), diff]),
    })
    ticks = pd.DataFrame({"token": np.arange(k), "series": [series[0]] * k,
                          "rev": np.asarray(true_reverse, dtype=float)})
    colours = [COLORS["k2"], COLORS["k3"], DIFFERENCE_COLOR]
    shapes = [shape("k2"), shape("k3"), "diamond"]
    x = {"field": "token", "type": "ordinal", "title": _("token"), "axis": {"labelAngle": 0},
         "scale": {"paddingInner": 0.3}}
    offset = {"field": "series", "type": "nominal", "scale": {"domain": series}}
    top = float(np.nanmax(np.abs(np.concatenate([rows["g"].to_numpy(), ticks["rev"].to_numpy()]))))
    top = top * 1.1 if np.isfinite(top) and top > 0 else 1.0
    y_scale = {"domain": [-top, top], "nice": False}
    legend = {"title": None, "orient": "top", "labelColor": TEXT_COLOR, "symbolSize": 140,
              "labelFontSize": 14, **fitted_legend(series, most=3)}
    colour = {"field": "series", "type": "nominal", "scale": {"domain": series, "range": colours},
              "legend": legend}
    tooltip = [{"field": "token", "type": "ordinal", "title": _("token")},
               {"field": "series", "type": "nominal", "title": " "},
               {"field": "g", "type": "quantitative", "title": _("expected gradient"), "format": ".4g"}]
    layers = [
        alt.Chart(
            {"name": "zero"}, mark={"type": "rule", "color": ZERO_COLOR},
            encoding=alt.FacetedEncoding(y={"datum": 0, "type": "quantitative", "scale": y_scale}),
        ),
        alt.Chart(
            {"name": "bars"}, mark={"type": "bar", "clip": True},
            encoding=alt.FacetedEncoding(
                x=x, xOffset=offset,
                y={"field": "g", "type": "quantitative", "title": _("expected gradient"),
                   "scale": y_scale, "axis": {"format": "~g", "tickCount": 5}},
                color=colour, tooltip=tooltip),
        ),
        alt.Chart(
            {"name": "bars"}, mark={"type": "point", "filled": True, "size": 80, "opacity": 1,
                                    "stroke": "white", "strokeWidth": 0.5, "clip": True},
            encoding=alt.FacetedEncoding(
                x=x, xOffset=offset, y={"field": "g", "type": "quantitative", "scale": y_scale},
                color=colour,
                shape={"field": "series", "type": "nominal", "scale": {"domain": series, "range": shapes},
                       "legend": legend},
                tooltip=tooltip),
        ),
        alt.Chart(
            {"name": "ticks"}, name=REFERENCE_TICKS,
            mark={"type": "tick", "color": REFERENCE_COLOR, "thickness": 3, "clip": True},
            encoding=alt.FacetedEncoding(
                x=x, xOffset=offset, y={"field": "rev", "type": "quantitative", "scale": y_scale},
                tooltip=[{"field": "token", "type": "ordinal", "title": _("token")},
                         {"field": "rev", "type": "quantitative", "title": _("∇ reverse KL"), "format": ".4g"}]),
        ),
    ]
    chart = _layered(layers, datasets={"bars": records(rows), "ticks": records(ticks), "zero": [{}]})
    return finish(chart, height=height)


def spread_panel(
    samples: np.ndarray,
    *,
    mean: float,
    sd: float,
    target: float,
    domain: tuple[float, float],
    title: str,
    subtitle: Sequence[str],
    colour: str,
    bins: int = 40,
    height: int = 280,
) -> alt.LayerChart:
    """The distribution of one N-sample gradient estimate, projected on a direction.

    Parameters
    ----------
    samples : numpy.ndarray
        Projected estimates (:func:`kl_core.gradients.expected.sample_projection_means`),
        binned here.
    mean, sd : float
        Their exact mean and standard deviation (:func:`kl_core.gradients.expected.projection_moments`):
        a dashed line and a grey band.
    target : float
        The projection of the true gradient (a solid black line).
    domain : (float, float)
        The x-range, shared by the panels.
    title : str
        The option.
    subtitle : sequence of str
        Lines under the title: Monte Carlo beside exact.
    colour : str
        The option's colour.
    bins : int
        Number of bins.
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
    """
    binned = bin_values(samples, bins=bins, domain=domain)
    x_title = _("projected estimate")
    x_scale = {"domain": list(domain), "nice": False}
    marks = pd.DataFrame({"lo": [mean - sd], "hi": [mean + sd], "mean": [mean], "target": [target]})
    layers = [
        alt.Chart(
            {"name": "marks"}, mark={"type": "rect", "color": ZERO_COLOR, "opacity": 0.25},
            encoding=alt.FacetedEncoding(
                x={"field": "lo", "type": "quantitative", "scale": x_scale, "title": x_title},
                x2={"field": "hi"}),
        ),
        alt.Chart(
            {"name": "bins"}, mark={"type": "rect", "color": colour, "opacity": 0.85},
            encoding=alt.FacetedEncoding(
                x={"field": "left", "type": "quantitative", "scale": x_scale, "title": x_title,
                   "axis": {"format": "~g", "tickCount": 4}},
                x2={"field": "right"},
                y={"field": "share", "type": "quantitative", "title": _("share of estimates"),
                   "scale": {"zero": True}, "axis": {"format": "~%", "tickCount": 3}},
                y2={"datum": 0},
                tooltip=[{"field": "left", "type": "quantitative", "title": pgettext("histogram bin", "from"),
                          "format": ".4g"},
                         {"field": "right", "type": "quantitative", "title": pgettext("histogram bin", "to"),
                          "format": ".4g"},
                         {"field": "share", "type": "quantitative", "title": pgettext("histogram bin", "share"),
                          "format": ".2%"}],
            ),
        ),
        alt.Chart(
            {"name": "marks"}, mark={"type": "rule", "color": REFERENCE_COLOR, "strokeWidth": 2,
                                     "strokeDash": [5, 3]},
            encoding=alt.FacetedEncoding(x={"field": "mean", "type": "quantitative", "scale": x_scale}),
        ),
        alt.Chart(
            {"name": "marks"}, mark={"type": "rule", "color": REFERENCE_COLOR, "strokeWidth": 2},
            encoding=alt.FacetedEncoding(x={"field": "target", "type": "quantitative", "scale": x_scale}),
        ),
    ]
    chart = _layered(
        layers,
        datasets={"bins": records(binned.table), "marks": records(marks)},
        title={"text": _fitted_title(title), "subtitle": list(subtitle), "color": colour, "limit": TITLE_LIMIT},
    )
    return finish(chart, height=height)


def lambda_spread_chart(
    lams: np.ndarray,
    spreads: np.ndarray,
    *,
    lam: float,
    lam_grad: float,
    lam_value: float,
    height: int = 260,
) -> alt.LayerChart:
    """The spread of k_λ's gradient against λ, with the gradient-optimal, the value-optimal and your λ.

    Parameters
    ----------
    lams, spreads : numpy.ndarray
        The curve (:func:`kl_core.gradients.expected.k_lambda_spread`).
    lam : float
        The λ in use (a rule in kλ's colour and dash, ``charts.palette``).
    lam_grad : float
        Least gradient spread (a solid rule).
    lam_value : float
        The value's λ* (a dashed rule).
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
    """
    curve = pd.DataFrame({"lam": lams, "spread": spreads})
    k_lambda = style("k_lambda")
    lo, hi = float(lams[0]), float(lams[-1])
    # (λ, legend name, colour, dash); the legend names only the rules the chart can show
    rules = [(lam_grad, _("least gradient spread"), REFERENCE_COLOR, [1, 0]),
             (lam_value, _("value's λ*"), REFERENCE_COLOR, list(REFERENCE_DASH)),
             (lam, _("your λ"), k_lambda.color, dash("k_lambda"))]
    rules = [r for r in rules if math.isfinite(r[0]) and lo <= r[0] <= hi]
    names = [r[1] for r in rules]
    marks = pd.DataFrame({"lam": [r[0] for r in rules], "which": names})
    x = {"field": "lam", "type": "quantitative", "title": "λ", "scale": {"domain": [lo, hi], "nice": False},
         "axis": {"values": ticks_through_zero(lo, hi)}}
    which = {
        "field": "which", "type": "nominal",
        "scale": {"domain": names, "range": [r[2] for r in rules]},
        "legend": {"title": None, "orient": "top", "labelColor": TEXT_COLOR, **fitted_legend(names, most=2)},
    }
    layers = [
        alt.Chart(
            {"name": "curve"}, mark={"type": "line", **k_lambda.line(), "strokeWidth": 3},
            encoding=alt.FacetedEncoding(
                x=x, y={"field": "spread", "type": "quantitative", "title": _("gradient spread per token"),
                        "scale": {"zero": True}, "axis": {"format": "~g"}},
                tooltip=[{"field": "lam", "type": "quantitative", "title": "λ", "format": ".3f"},
                         {"field": "spread", "type": "quantitative", "title": _("spread"), "format": ".4g"}]),
        ),
        alt.Chart(
            {"name": "marks"}, mark={"type": "rule", "strokeWidth": 2},
            encoding=alt.FacetedEncoding(
                x={"field": "lam", "type": "quantitative"}, color=which,
                strokeDash={"field": "which", "type": "nominal",
                            "scale": {"domain": names, "range": [r[3] for r in rules]},
                            "legend": which["legend"]},
                tooltip=[{"field": "which", "type": "nominal", "title": " "},
                         {"field": "lam", "type": "quantitative", "title": "λ", "format": ".3f"}]),
        ),
    ]
    chart = _layered(layers, datasets={"curve": records(curve), "marks": records(marks)})
    return finish(chart, height=height)


def _fitted_title(title: str) -> str | list[str]:
    """The title, on two or more lines where one would be cut at :data:`TITLE_LIMIT`."""
    lines = wrapped(title, TITLE_LIMIT - 10, TITLE_SIZE)
    return lines if len(lines) > 1 else title


def _thin(steps: np.ndarray, limit: int) -> np.ndarray:
    """Indices of at most ``limit`` recorded steps, the first and the last kept."""
    if steps.size <= limit:
        return np.arange(steps.size)
    return np.unique(np.linspace(0, steps.size - 1, limit).round().astype(int))


def training_panel(
    steps: np.ndarray,
    probs: np.ndarray,
    optima: tuple[np.ndarray, np.ndarray],
    *,
    title: str,
    subtitle: Sequence[str],
    colour: str,
    height: int = 360,
) -> alt.LayerChart:
    """Token probabilities along exact expected-gradient ascent, against the two analytic optima.

    Parameters
    ----------
    steps : numpy.ndarray
        Recorded ascent steps (:attr:`kl_core.gradients.flow.TrainingRun.steps`).
    probs : numpy.ndarray
        One row of token probabilities per recorded step; thinned to
        :data:`MAX_TRAINING_POINTS` steps.
    optima : (numpy.ndarray, numpy.ndarray)
        The reverse-KL and forward-KL optima (:func:`kl_core.gradients.flow.analytic_optima`),
        drawn right of the last step in two columns: filled dots (reverse), hollow dots (forward).
    title : str
        The option.
    subtitle : sequence of str
        Lines under the title: how its run ends.
    colour : str
        The option's colour (the title).
    height : int
        Height in pixels.

    Returns
    -------
    altair.LayerChart
        One line per token (:data:`TOKEN_COLORS`); a line that ends level with
        its token's dot in one column ends at that optimum.
    """
    k = probs.shape[1]
    steps = np.asarray(steps, dtype=float)
    idx = _thin(steps, MAX_TRAINING_POINTS)
    last = float(steps[-1])
    lines = pd.DataFrame({"step": np.repeat(steps[idx], k), "token": np.tile(np.arange(k), idx.size),
                          "p": probs[idx].ravel()})
    rev_x, fwd_x, right = last * 1.12, last * 1.26, last * 1.34
    names = [_("optimum, reverse KL"), _("optimum, forward KL")]
    dots = pd.DataFrame({
        "step": [rev_x] * k + [fwd_x] * k,
        "token": np.tile(np.arange(k), 2),
        "p": np.concatenate(optima),
        "which": [names[0]] * k + [names[1]] * k,
        "filled": [1] * k + [0] * k,
    })
    heads = pd.DataFrame({"step": [rev_x, fwd_x], "text": ["●", "○"]})
    palette = [TOKEN_COLORS[i % len(TOKEN_COLORS)] for i in range(k)]
    dashes = [TOKEN_DASHES[i % len(TOKEN_DASHES)] for i in range(k)]
    token_color = {"field": "token", "type": "nominal", "title": None,
                   "scale": {"domain": list(range(k)), "range": palette},
                   "legend": {"orient": "top", "direction": "horizontal", "symbolType": "stroke", "labelColor": TEXT_COLOR,
                              "columns": min(k, 5), "labelFontSize": 13, "symbolSize": 120}}
    x = {"field": "step", "type": "quantitative", "title": _("ascent step"),
         "scale": {"domain": [0, right], "nice": False},
         "axis": {"values": np.linspace(0, last, 3).round().tolist(), "format": "d"}}
    y = {"field": "p", "type": "quantitative", "title": _("probability"),
         "scale": {"domain": [0, 1.08], "nice": False},
         "axis": {"values": [0, 0.2, 0.4, 0.6, 0.8, 1], "format": "~g"}}
    tooltip = [{"field": "token", "type": "nominal", "title": _("token")},
               {"field": "p", "type": "quantitative", "title": _("probability"), "format": ".4f"}]
    layers = [
        alt.Chart(
            {"name": "lines"}, mark={"type": "line", "strokeWidth": 2.5},
            encoding=alt.FacetedEncoding(
                x=x, y=y, color=token_color,
                strokeDash={**token_color, "scale": {"domain": list(range(k)), "range": dashes}},
                tooltip=[*tooltip, {"field": "step", "type": "quantitative", "title": _("step")}]),
        ),
        alt.Chart(
            {"name": "dots"},
            mark={"type": "point", "shape": "circle", "size": 60, "strokeWidth": 2, "filled": True},
            encoding=alt.FacetedEncoding(
                x=x, y=y,
                fill={**token_color, "legend": None},
                stroke={**token_color, "legend": None},
                fillOpacity={"field": "filled", "type": "quantitative",
                             "scale": {"domain": [0, 1], "range": [0, 1]}, "legend": None},
                tooltip=[{"field": "which", "type": "nominal", "title": " "}, *tooltip]),
        ),
        alt.Chart(
            {"name": "heads"}, mark={"type": "text", "baseline": "top", "fontSize": 14},
            encoding=alt.FacetedEncoding(x=x, y={"datum": 1.08, "type": "quantitative"},
                                         text={"field": "text", "type": "nominal"}),
        ),
    ]
    chart = _layered(
        layers,
        datasets={"lines": records(lines), "dots": records(dots), "heads": records(heads)},
        title={"text": _fitted_title(title), "subtitle": list(subtitle), "color": colour, "limit": TITLE_LIMIT},
    )
    return finish(chart, height=height)
