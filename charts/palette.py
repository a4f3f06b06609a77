"""One colour per estimator, the same on every chart of every page.

Colours are from the Okabe–Ito palette, which stays distinguishable under the
common forms of colour blindness (M. Okabe & K. Ito, "Color Universal Design",
2008).  Display labels come from ``kl_core.estimators.ESTIMATORS[key].name`` so
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

More than four series: colour alone is not enough (a projector, colour
blindness).  :func:`dash` and :func:`shape` give each estimator a line dash
and a point shape, keyed like :data:`COLORS`; :func:`dash_scale` and
:func:`shape_scale` build the matching ``strokeDash``/``shape`` scales, and
:data:`SERIES_COLORS` continues the palette for series that are not
estimators.

Fonts: :data:`FONT` is Streamlit's own text font first (Latin letters and
digits look the same in both languages), then fonts with Chinese glyphs, so a
Chinese title renders in the browser (the CI machine and the README install
Debian's ``fonts-noto-cjk``) and in the PNG exports made by vl-convert.
"""

from __future__ import annotations

import copy

import altair as alt

from kl_core.estimators import ESTIMATORS

__all__ = [
    "AXIS_LABEL_SIZE",
    "AXIS_TITLE_SIZE",
    "COLORS",
    "CONFIG",
    "DASHES",
    "EXTRA_COLORS",
    "FONT",
    "HIGHLIGHT_COLOR",
    "LIFTED_IN_DARK",
    "RB_COLOR",
    "REFERENCE_COLOR",
    "SERIES_COLORS",
    "SHAPES",
    "TEXT_COLOR",
    "TEXT_LIKE",
    "ZERO_COLOR",
    "color",
    "color_scale",
    "dash",
    "dash_scale",
    "finish",
    "label",
    "shape",
    "shape_scale",
]

#: Okabe–Ito colour per estimator key.  Orange and sky blue are Okabe–Ito's
#: darkened by 15 % and 20 % (lightness): the originals have a contrast of only
#: 2.3 against white; every colour here has at least 3:1 (the WCAG minimum for
#: graphics) on white AND on Streamlit's dark background #0E1117
#: (``tests/app/test_palette.py`` checks it).
COLORS: dict[str, str] = {
    "k1": "#D55E00",  # vermillion: the naive, noisy one
    "k2": "#0072B2",  # blue
    "k3": "#009E73",  # bluish green
    "k_lambda": "#CC79A7",  # reddish purple
    "k3_pq": "#C38700",  # orange (Okabe–Ito #E69F00, darkened)
    "abs": "#1E9BE2",  # sky blue (Okabe–Ito #56B4E9, darkened)
}
#: The Rao–Blackwellized ``rb`` (exact next-token KL per prefix; sequence and audit pages):
#: a blue violet, apart from every colour above and readable on white and on the dark theme
#: (Tol's indigo #332288 disappeared on the dark background).
RB_COLOR = "#705CD6"
#: The exact value (true KL etc.) is drawn in black, dashed.
REFERENCE_COLOR = "#000000"
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

#: Line dash per series (``strokeDash``: dash and gap lengths in px), keyed like
#: :data:`COLORS`: with more than four lines, the dash tells them apart where colour
#: can't.  ``rb`` and k3 are solid (the estimators to use); the exact value stays
#: :data:`REFERENCE_COLOR` with its own ``[6, 4]``.
DASHES: dict[str, list[float]] = {
    "k1": [2, 3],
    "k2": [9, 4],
    "k3": [1, 0],
    "k_lambda": [9, 3, 2, 3],
    "k3_pq": [5, 2],
    "abs": [2, 2, 2, 2, 9, 2],
    "rb": [1, 0],
}

#: Point shape per series (Vega-Lite ``shape`` values), keyed like :data:`COLORS`.
SHAPES: dict[str, str] = {
    "k1": "circle",
    "k2": "square",
    "k3": "triangle-up",
    "k_lambda": "diamond",
    "k3_pq": "triangle-down",
    "abs": "cross",
    "rb": "triangle-right",
}

AXIS_LABEL_SIZE = 14
AXIS_TITLE_SIZE = 15
TITLE_SIZE = 17
SUBTITLE_SIZE = 14

def color(key: str) -> str:
    """The colour of estimator ``key`` (a key of ``ESTIMATORS``)."""
    if key not in COLORS:
        raise ValueError(f"key must be one of {sorted(COLORS)}, got {key!r}")
    return COLORS[key]


def dash(key: str) -> list[float]:
    """The line dash of series ``key`` (a key of :data:`DASHES`), for ``strokeDash``.

    A new list each call, so a builder may change it.
    """
    if key not in DASHES:
        raise ValueError(f"key must be one of {sorted(DASHES)}, got {key!r}")
    return list(DASHES[key])


def shape(key: str) -> str:
    """The point shape of series ``key`` (a key of :data:`SHAPES`), e.g. ``"triangle-up"``."""
    if key not in SHAPES:
        raise ValueError(f"key must be one of {sorted(SHAPES)}, got {key!r}")
    return SHAPES[key]


def dash_scale(domain: list[str] | tuple[str, ...], keys: list[str] | tuple[str, ...]) -> dict:
    """A Vega-Lite ``strokeDash`` scale: ``domain[i]`` (a legend label) drawn with ``dash(keys[i])``.

    Use next to the colour scale of the same field, e.g.
    ``"strokeDash": {"field": "series", "type": "nominal", "scale": dash_scale(labels, keys)}``;
    the legend then shows colour and dash together.
    """
    if len(domain) != len(keys):
        raise ValueError(f"domain and keys must have the same length, got {len(domain)} and {len(keys)}")
    return {"domain": list(domain), "range": [dash(k) for k in keys]}


def shape_scale(domain: list[str] | tuple[str, ...], keys: list[str] | tuple[str, ...]) -> dict:
    """A Vega-Lite ``shape`` scale: ``domain[i]`` drawn with ``shape(keys[i])`` (see :func:`dash_scale`)."""
    if len(domain) != len(keys):
        raise ValueError(f"domain and keys must have the same length, got {len(domain)} and {len(keys)}")
    return {"domain": list(domain), "range": [shape(k) for k in keys]}


def label(key: str) -> str:
    """The display name of estimator ``key``, e.g. ``"k3 (KL[p,q])"``."""
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
