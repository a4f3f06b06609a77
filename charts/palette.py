"""One colour per estimator, the same on every chart of every page.

Colours are from the Okabe–Ito palette, which stays distinguishable under the
common forms of colour blindness (M. Okabe & K. Ito, "Color Universal Design",
2008).  Display labels come from ``kl_core.estimation.estimators.ESTIMATORS[key].name`` so
a chart legend and the formula above it always use the same name.

:func:`finish` applies the projector-friendly fonts every chart shares; call it
once on the top-level chart a builder returns (Vega-Lite refuses ``configure``
on charts that are later layered or concatenated).

Text colour: every axis, legend and title text is :data:`TEXT_COLOR`, the
colour of Streamlit's body text, never a light grey (a projector washes light
grey out).  In the dark theme ``lab.ui.page_style`` redraws that colour, and
:data:`REFERENCE_COLOR`, in the page's own text colour (CSS ``currentColor``
on the SVG), and lifts the dark colours of :data:`LIFTED_IN_DARK` towards it,
so no chart text or black line disappears on Streamlit's near-black
background; exports (PNG/SVG) keep the light colours.

One look per estimator (issue 17): every estimator has one
:class:`EstimatorStyle` in :data:`STYLES` -- colour, line dash and point
shape -- keyed by the keys of ``kl_core.estimation.estimators.ESTIMATORS`` (plus ``rb``,
and the sequence estimators of ``kl_core.sequences.estimators`` in
:data:`SEQUENCE_STYLES`).  Every chart takes all three from here:
:func:`color`, :func:`dash`, :func:`shape`, :func:`style`, or the scales of
:func:`scales` (colour, ``strokeDash`` and ``shape`` of one field at once),
:func:`dash_scale` and :func:`shape_scale`.  Colour is never the only cue
between two estimators: their dashes and shapes differ too (issue 21).
``tests/app/test_estimator_styles.py`` walks every chart of every page and
checks it.  :data:`SERIES_COLORS` continues the palette for series that are
not estimators; the estimator colours stay reserved for the estimators.

Fonts: :data:`FONT` is Streamlit's own text font first (Latin letters and
digits look the same in both languages), then fonts with Chinese glyphs, so a
Chinese title renders in the browser (the CI machine and the README install
Debian's ``fonts-noto-cjk``) and in the PNG exports made by vl-convert.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt

from kl_core.estimation.estimators import ESTIMATORS
from kl_core.sequences.estimators import SEQUENCE_KEYS

__all__ = [
    "AXIS_LABEL_SIZE",
    "AXIS_TITLE_SIZE",
    "COLORS",
    "CONFIG",
    "DASHES",
    "EXTRA_COLORS",
    "EstimatorStyle",
    "FONT",
    "HIGHLIGHT_COLOR",
    "LIFTED_IN_DARK",
    "RB_COLOR",
    "REFERENCE_COLOR",
    "REFERENCE_DASH",
    "REFERENCE_TICKS",
    "SEQUENCE_STYLES",
    "SERIES_COLORS",
    "SHAPES",
    "SOLID",
    "STYLES",
    "TEXT_COLOR",
    "TEXT_LIKE",
    "ZERO_COLOR",
    "color",
    "color_scale",
    "dash",
    "dash_scale",
    "finish",
    "fitted_legend",
    "label",
    "scales",
    "shape",
    "shape_scale",
    "style",
    "text_px",
    "wrapped",
]

#: A solid line (``strokeDash``).
SOLID: tuple[float, float] = (1, 0)


@dataclass(frozen=True)
class EstimatorStyle:
    """How one estimator is drawn on every chart.

    Attributes
    ----------
    color : str
        Hex colour of its lines, points, bars and histogram.
    dash : tuple of float
        Its lines' ``strokeDash`` (dash and gap lengths in px; :data:`SOLID` for none).
    shape : str
        Its points' Vega-Lite ``shape``.
    """

    color: str
    dash: tuple[float, ...]
    shape: str

    def line(self) -> dict:
        """Mark properties of a line or rule drawn in this style: ``{"color", "strokeDash"}``."""
        return {"color": self.color, "strokeDash": list(self.dash)}


#: Colour, dash and shape per estimator key: declared once, with the estimator, in
#: ``kl_core.estimation.estimators.ESTIMATORS`` (``color``, ``dash``, ``shape``; the reasons
#: for each choice are there), so a new estimator brings its look along.
_LOOKS: dict[str, EstimatorStyle] = {k: EstimatorStyle(e.color, e.dash, e.shape) for k, e in ESTIMATORS.items()}

#: The Rao–Blackwellized ``rb`` (exact next-token KL per prefix; sequence and audit pages):
#: a blue violet, apart from every colour above and readable on white and on the dark theme
#: (Tol's indigo #332288 disappeared on the dark background).  Long dash, dot, dot: it shares
#: the sequence charts with Σk3's solid line.
_RB = EstimatorStyle("#705CD6", (12, 3, 2, 3, 2, 3), "triangle-right")

#: One :class:`EstimatorStyle` per estimator: the keys of ``ESTIMATORS``, in their order, and ``rb``.
STYLES: dict[str, EstimatorStyle] = {**{k: _LOOKS[k] for k in ESTIMATORS}, "rb": _RB}

#: The sequence estimators of ``kl_core.sequences.estimators.SEQUENCE_KEYS``: a sum of per-token terms
#: looks like its term (Σk1 like k1), ``seq_k3`` (k3 of the whole sequence's ratio) takes
#: k3_pq's look (the second k3 colour), ``rb`` its own, and the per-token mean of k3 k3's
#: colour with an even dash (it shares no chart with Σk3's solid line, but may one day).
SEQUENCE_STYLES: dict[str, EstimatorStyle] = {
    "sum_k1": STYLES["k1"],
    "sum_k3": STYLES["k3"],
    "seq_k3": STYLES["k3_pq"],
    "sum_k2": STYLES["k2"],
    "rb": STYLES["rb"],
    "mean_k3": EstimatorStyle(STYLES["k3"].color, (4, 4), "triangle-left"),
}
if set(SEQUENCE_STYLES) != set(SEQUENCE_KEYS):
    raise ValueError(f"sequence styles must cover SEQUENCE_KEYS: {sorted(set(SEQUENCE_KEYS) ^ set(SEQUENCE_STYLES))}")

#: Colour per estimator key (``STYLES[key].color``).
COLORS: dict[str, str] = {k: _LOOKS[k].color for k in ESTIMATORS}
#: ``rb``'s colour (``STYLES["rb"].color``).
RB_COLOR = _RB.color
#: The exact value (true KL etc.) is drawn in black, dashed with :data:`REFERENCE_DASH`.
REFERENCE_COLOR = "#000000"
REFERENCE_DASH: list[float] = [6, 4]
#: The name of a layer of reference ticks (thin black rects): in the dark theme they take the
#: text colour like a black line, not the mid grey of a black bar (``lab.ui``'s theme CSS).
REFERENCE_TICKS = "reference_ticks"
#: Zero lines and other guides: a mid grey, visible on white and on the dark theme's background.
ZERO_COLOR = "#8C8C8C"
#: The one item a reader moves by hand (the Bregman gap's "your r"): Paul Tol's purple,
#: colour-blind safe and apart from the gap colours (k3 green, k3_pq orange) it sits among.
HIGHLIGHT_COLOR = "#AA3377"
#: Colours of lines that are no estimator (f-divergences without one, tangents, other gaps);
#: the estimator colours above stay reserved for the estimators.
EXTRA_COLORS: dict[str, str] = {
    "wine": "#882255",  # Paul Tol's muted wine
    "olive": "#999933",  # Paul Tol's muted olive
    "brown": "#8C510A",
    "dark grey": "#4D4D4D",
    "grey": "#6E6E6E",
}

#: Chart text (axis labels and titles, legends, subtitles): Streamlit's body text colour,
#: redrawn in the dark theme's text colour by ``lab.ui.page_style``.
TEXT_COLOR = "#31333F"

#: Colour-blind-safe colours for series that are not estimators (f-divergences,
#: tokens), in order, none a colour of :data:`COLORS`: from Paul Tol's "muted"
#: scheme (P. Tol, "Colour Schemes", SRON/EPS/TN/09-002, 2021) plus a grey, each
#: with at least 3:1 contrast on white and on the dark theme.  Past four series,
#: add :func:`dash` patterns or :func:`shape`\ s.
SERIES_COLORS: tuple[str, ...] = (
    "#AA4499",  # purple
    "#999933",  # olive
    "#CC6677",  # rose
    "#767676",  # grey
    "#338877",  # teal (Tol's #44AA99, darkened)
)

#: Dark colours that charts use and that disappear on Streamlit's dark background
#: (contrast < 3 with #0E1117): in the dark theme ``lab.ui.page_style`` mixes them
#: half-and-half with the page's text colour.  :data:`REFERENCE_COLOR` and
#: :data:`TEXT_COLOR` become the text colour itself (:data:`TEXT_LIKE`).
LIFTED_IN_DARK: tuple[str, ...] = (
    "#332288", "#882255", "#8A4B00", "#6B2D57", "#5A5A5A", "#4D4D4D", "#8C510A", HIGHLIGHT_COLOR,
)
#: Colours drawn in the page's text colour in the dark theme (black lines, text).
TEXT_LIKE: tuple[str, ...] = (REFERENCE_COLOR, "#000", "black", TEXT_COLOR)

#: Line dash per series (``strokeDash``), keyed like :data:`STYLES` (from it).
DASHES: dict[str, list[float]] = {k: list(v.dash) for k, v in STYLES.items()}

#: Point shape per series (Vega-Lite ``shape`` values), keyed like :data:`STYLES` (from it).
SHAPES: dict[str, str] = {k: v.shape for k, v in STYLES.items()}

AXIS_LABEL_SIZE = 14
AXIS_TITLE_SIZE = 15
TITLE_SIZE = 17
SUBTITLE_SIZE = 14

def style(key: str) -> EstimatorStyle:
    """The look of estimator ``key``: a key of :data:`STYLES` or :data:`SEQUENCE_STYLES`."""
    if key in STYLES:
        return STYLES[key]
    if key in SEQUENCE_STYLES:
        return SEQUENCE_STYLES[key]
    raise ValueError(f"key must be one of {sorted({*STYLES, *SEQUENCE_STYLES})}, got {key!r}")


def color(key: str) -> str:
    """The colour of estimator ``key`` (a key of :data:`STYLES` or :data:`SEQUENCE_STYLES`)."""
    return style(key).color


def dash(key: str) -> list[float]:
    """The line dash of estimator ``key``, for ``strokeDash`` (see :func:`color`).

    A new list each call, so a builder may change it.
    """
    return list(style(key).dash)


def shape(key: str) -> str:
    """The point shape of estimator ``key``, e.g. ``"triangle-up"`` (see :func:`color`)."""
    return style(key).shape


def _style_of(key: str | EstimatorStyle) -> EstimatorStyle:
    return key if isinstance(key, EstimatorStyle) else style(key)


def scales(
    domain: Sequence[str], keys: Sequence[str | EstimatorStyle]
) -> dict[str, dict]:
    """Vega-Lite scales drawing ``domain[i]`` (a legend label) in the look of ``keys[i]``.

    Returns ``{"color": ..., "strokeDash": ..., "shape": ...}``, each a
    ``{"domain", "range"}`` dict, for the channels of one field, e.g.
    ``"strokeDash": {"field": "series", "type": "nominal", "scale": scales(names, keys)["strokeDash"]}``;
    Vega-Lite merges the channels of one field into one legend.  A key may also be an
    :class:`EstimatorStyle`, for a series that is no estimator (the exact value).
    """
    if len(domain) != len(keys):
        raise ValueError(f"domain and keys must have the same length, got {len(domain)} and {len(keys)}")
    looks = [_style_of(k) for k in keys]
    return {
        "color": {"domain": list(domain), "range": [s.color for s in looks]},
        "strokeDash": {"domain": list(domain), "range": [list(s.dash) for s in looks]},
        "shape": {"domain": list(domain), "range": [s.shape for s in looks]},
    }


def dash_scale(domain: Sequence[str], keys: Sequence[str | EstimatorStyle]) -> dict:
    """A Vega-Lite ``strokeDash`` scale: ``domain[i]`` (a legend label) drawn with ``dash(keys[i])``.

    Use next to the colour scale of the same field, e.g.
    ``"strokeDash": {"field": "series", "type": "nominal", "scale": dash_scale(labels, keys)}``;
    the legend then shows colour and dash together.
    """
    return scales(domain, keys)["strokeDash"]


def shape_scale(domain: Sequence[str], keys: Sequence[str | EstimatorStyle]) -> dict:
    """A Vega-Lite ``shape`` scale: ``domain[i]`` drawn with ``shape(keys[i])`` (see :func:`dash_scale`)."""
    return scales(domain, keys)["shape"]


def label(key: str) -> str:
    """The display name of estimator ``key``, e.g. ``"k3 (KL[p‖q])"``."""
    if key not in ESTIMATORS:
        raise ValueError(f"key must be one of {sorted(ESTIMATORS)}, got {key!r}")
    return ESTIMATORS[key].name


def color_scale(keys: list[str] | tuple[str, ...] | None = None) -> alt.Scale:
    """An ``alt.Scale`` mapping estimator display labels to their colours.

    Use it with a column holding ``label(key)``:
    ``alt.Color("estimator:N", scale=color_scale(keys))``.
    """
    keys = list(keys) if keys is not None else list(COLORS)
    return alt.Scale(domain=[label(k) for k in keys], range=[color(k) for k in keys])


#: The charts' font family: Streamlit's font, then fonts that have Chinese glyphs
#: (Noto Sans CJK is Debian's fonts-noto-cjk; the others ship with macOS and Windows).
FONT = ", ".join([  # i18n: ok (font names)
    '"Source Sans"', '"Source Sans Pro"', '"Noto Sans CJK SC"', '"Noto Sans SC"',  # i18n: ok
    '"Source Han Sans SC"', '"WenQuanYi Micro Hei"', '"PingFang SC"', '"Microsoft YaHei"',  # i18n: ok
    "sans-serif",
])

#: The shared Vega-Lite configuration: fonts a projector at 1280×800 can carry, and
#: text in :data:`TEXT_COLOR` (legends too: Streamlit's own legend grey is too light).
CONFIG: dict = {
    "font": FONT,
    "axis": {
        "labelFontSize": AXIS_LABEL_SIZE,
        "titleFontSize": AXIS_TITLE_SIZE,
        "titleFontWeight": "normal",
        "labelColor": TEXT_COLOR,
        "titleColor": TEXT_COLOR,
    },
    "title": {
        "fontSize": TITLE_SIZE,
        "subtitleFontSize": SUBTITLE_SIZE,
        "anchor": "start",
        "color": TEXT_COLOR,
        "subtitleColor": TEXT_COLOR,
    },
    "legend": {
        "labelFontSize": AXIS_LABEL_SIZE,
        "titleFontSize": AXIS_TITLE_SIZE,
        "labelColor": TEXT_COLOR,
        "titleColor": TEXT_COLOR,
    },
    "text": {"fontSize": AXIS_LABEL_SIZE},
    "view": {"strokeWidth": 0},
}


def text_px(text: str, font_size: float) -> float:
    """A generous estimate of ``text``'s width in pixels: a CJK character is
    ``font_size`` wide, any other about 0.6 of it (Streamlit's sans-serif, bold)."""
    return sum(font_size if ord(ch) >= 0x2E80 else 0.6 * font_size for ch in text)


def fitted_legend(labels: Sequence[str], *, most: int, font_size: float = AXIS_LABEL_SIZE,
                  symbol_px: float = 40.0) -> dict:
    """Legend ``columns``, ``labelLimit`` and ``labelExpr`` that follow the plot's width.

    Vega never wraps a legend, and a chart's width is known only in the
    browser: the number of columns is a Vega expression of ``width``, at most
    ``most``, fewer when the longest label would run past a phone's screen;
    a label too long even for one column is drawn on two or more lines there.
    """
    column_px = max((text_px(t, font_size) for t in labels), default=0.0) + symbol_px
    out: dict = {"columns": {"expr": f"max(1, min({most}, floor((width + 40) / {column_px:.0f})))"},
                 "labelLimit": {"expr": "max(80, width + 10)"}}
    long = {t: wrapped(t, _NARROW_LABEL_PX, font_size) for t in labels}
    long = {t: lines for t, lines in long.items() if len(lines) > 1}
    if long:
        needs = json.dumps({t: round(text_px(t, font_size) + symbol_px) for t in long}, ensure_ascii=False)
        lines = json.dumps(long, ensure_ascii=False)
        out["labelExpr"] = f"width + 40 < ({needs})[datum.label] ? ({lines})[datum.label] : datum.label"  # i18n: ok (Vega)
    return out


#: The widest a legend label is drawn on a phone (a 320 px screen's plot, px).
_NARROW_LABEL_PX = 200.0


def wrapped(text: str, max_px: float, font_size: float) -> list[str]:
    """``text`` broken into lines at most ``max_px`` wide (by :func:`text_px`): at
    spaces, or between any two CJK characters; a title as Vega draws lines."""
    lines: list[str] = []
    line = ""
    for piece in re.findall(r"[\u2E80-\uFFEF]|[^\s\u2E80-\uFFEF]+\s*|\s+", text):
        if line and text_px((line + piece).rstrip(), font_size) > max_px:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    if line.strip():
        lines.append(line.rstrip())
    return lines or [text]


def finish(chart: alt.TopLevelMixin, *, height: int = 280) -> alt.TopLevelMixin:
    """Give a freshly built top-level chart the shared height and fonts (:data:`CONFIG`).

    Sets the attributes on ``chart`` itself and returns it, instead of chaining
    ``.properties().configure_axis()...``: every chained call deep-copies the
    whole chart, which costs tens of milliseconds per chart on each rerun
    (see "Fast charts" in ``docs/app_conventions.md``).
    Width is left to the container (``lab.ui.chart`` draws at ``width="stretch"``).
    """
    if isinstance(chart, (alt.Chart, alt.LayerChart)):  # concatenations take no height
        chart.height = height
    chart.config = copy.deepcopy(CONFIG)
    return chart
