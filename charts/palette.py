"""One colour per estimator, the same on every chart of every page.

Colours are from the Okabe–Ito palette, which stays distinguishable under the
common forms of colour blindness (M. Okabe & K. Ito, "Color Universal Design",
2008).  Display labels come from ``kl_core.estimators.ESTIMATORS[key].name`` so
a chart legend and the formula above it always use the same name.

:func:`finish` applies the projector-friendly fonts every chart shares; call it
once on the top-level chart a builder returns (Vega-Lite refuses ``configure``
on charts that are later layered or concatenated).

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
    "EXTRA_COLORS",
    "FONT",
    "HIGHLIGHT_COLOR",
    "RB_COLOR",
    "REFERENCE_COLOR",
    "ZERO_COLOR",
    "color",
    "color_scale",
    "finish",
    "label",
]

#: Okabe–Ito colour per estimator key.
COLORS: dict[str, str] = {
    "k1": "#D55E00",  # vermillion: the naive, noisy one
    "k2": "#0072B2",  # blue
    "k3": "#009E73",  # bluish green
    "k_lambda": "#CC79A7",  # reddish purple
    "k3_pq": "#E69F00",  # orange
    "abs": "#56B4E9",  # sky blue
}
#: The Rao–Blackwellized ``rb`` (exact next-token KL per prefix; sequence and audit pages):
#: Paul Tol's indigo, colour-blind safe and distinct from every Okabe–Ito colour above.
RB_COLOR = "#332288"
#: The exact value (true KL etc.) is drawn in black, dashed.
REFERENCE_COLOR = "#000000"
#: Zero lines and other guides.
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

AXIS_LABEL_SIZE = 14
AXIS_TITLE_SIZE = 15
TITLE_SIZE = 17
SUBTITLE_SIZE = 14

def color(key: str) -> str:
    """The colour of estimator ``key`` (a key of ``ESTIMATORS``)."""
    if key not in COLORS:
        raise ValueError(f"key must be one of {sorted(COLORS)}, got {key!r}")
    return COLORS[key]


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

#: The shared Vega-Lite configuration: fonts a projector at 1280×800 can carry.
CONFIG: dict = {
    "font": FONT,
    "axis": {
        "labelFontSize": AXIS_LABEL_SIZE,
        "titleFontSize": AXIS_TITLE_SIZE,
        "titleFontWeight": "normal",
        "labelColor": "#31333F",
        "titleColor": "#31333F",
    },
    "title": {
        "fontSize": TITLE_SIZE,
        "subtitleFontSize": SUBTITLE_SIZE,
        "anchor": "start",
        "subtitleColor": "#31333F",
    },
    "legend": {"labelFontSize": AXIS_LABEL_SIZE, "titleFontSize": AXIS_TITLE_SIZE},
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
