"""The shared palette: colour-blind-safe colours readable on both themes, dashes and shapes."""

from __future__ import annotations

import re

import pytest

from charts import palette
from kl_core.estimation.estimators import ESTIMATORS

WHITE = "#FFFFFF"
#: Streamlit's dark theme background.
DARK = "#0E1117"
#: The dark background Streamlit 1.67 draws in Chromium (measured by tests/browser/test_readability.py).
DARK_MEASURED = "#171614"


def _luminance(hex_colour: str) -> float:
    """WCAG 2 relative luminance."""
    h = hex_colour.lstrip("#")
    channels = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    lo, hi = sorted([_luminance(a), _luminance(b)])
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_helper_matches_known_values():
    assert contrast("#000000", WHITE) == pytest.approx(21.0)
    assert contrast("#767676", WHITE) == pytest.approx(4.54, abs=0.01)


SERIES = {**palette.COLORS, "rb": palette.RB_COLOR, "zero": palette.ZERO_COLOR,
          **{f"series{i}": c for i, c in enumerate(palette.SERIES_COLORS)}}


@pytest.mark.parametrize("name", sorted(SERIES))
@pytest.mark.parametrize("background", [WHITE, DARK])
def test_every_series_colour_stands_out_on_both_themes(name, background):
    # WCAG 2.1 non-text contrast: at least 3:1 for lines and marks.
    assert contrast(SERIES[name], background) >= 3.0, (name, SERIES[name], background)


def test_colours_are_distinct_and_cover_every_estimator():
    colours = [*palette.COLORS.values(), palette.RB_COLOR, *palette.SERIES_COLORS]
    assert len(set(c.upper() for c in colours)) == len(colours)
    assert set(palette.COLORS) <= set(ESTIMATORS)


def test_text_is_dark_on_white_and_never_light_grey():
    config = palette.CONFIG
    for section, keys in {"axis": ("labelColor", "titleColor"),
                          "legend": ("labelColor", "titleColor"),
                          "title": ("color", "subtitleColor")}.items():
        for key in keys:
            assert config[section][key] == palette.TEXT_COLOR, (section, key)
    assert contrast(palette.TEXT_COLOR, WHITE) >= 7.0


def test_colours_that_vanish_on_dark_are_lifted_there():
    # Every colour the charts use that is too dark for the dark theme is listed for the CSS lift.
    for c in palette.LIFTED_IN_DARK:
        assert min(contrast(c, DARK), contrast(c, DARK_MEASURED)) < 3.0, c
    assert palette.REFERENCE_COLOR in palette.TEXT_LIKE
    assert palette.TEXT_COLOR in palette.TEXT_LIKE


def test_dashes_and_shapes_cover_every_coloured_series_and_differ():
    keys = [*palette.COLORS, "rb"]
    assert set(palette.DASHES) == set(keys) == set(palette.SHAPES)
    estimator_dashes = [tuple(palette.dash(k)) for k in palette.COLORS]
    assert len(set(estimator_dashes)) == len(estimator_dashes)
    assert len(set(palette.SHAPES.values())) == len(palette.SHAPES)
    # a new list each time: a builder changing it cannot change the palette
    palette.dash("k1").append(99)
    assert palette.dash("k1") == palette.DASHES["k1"]


def test_dash_and_shape_scales():
    assert palette.dash_scale(["a", "b"], ["k1", "k3"]) == {
        "domain": ["a", "b"], "range": [palette.dash("k1"), palette.dash("k3")]}
    assert palette.shape_scale(("a",), ("k2",)) == {"domain": ["a"], "range": ["square"]}
    with pytest.raises(ValueError, match="domain and keys"):
        palette.dash_scale(["a"], ["k1", "k2"])


@pytest.mark.parametrize("func", [palette.dash, palette.shape, palette.color])
def test_unknown_key_names_the_parameter(func):
    with pytest.raises(ValueError, match=re.escape("key must be one of")):
        func("k9")


def test_page_css_redraws_text_and_black_in_the_dark_theme_only():
    from lab.ui import PAGE_CSS

    for c in palette.TEXT_LIKE:
        assert f"[fill='{c}' i]{{fill:light-dark({c},currentColor);}}" in PAGE_CSS
    for c in ("#000000", "black"):
        assert f"[stroke='{c}' i]{{stroke:light-dark({c},currentColor);}}" in PAGE_CSS
    # Streamlit's dark theme draws grid lines in the text grey: they must stay grey there
    assert f"[stroke='{palette.TEXT_COLOR}' i]" not in PAGE_CSS
    for c in palette.LIFTED_IN_DARK:
        assert f"[fill='{c}' i]{{fill:light-dark({c},color-mix(" in PAGE_CSS


def test_black_bars_turn_grey_not_white_in_the_dark_theme():
    from lab.ui import PAGE_CSS

    rule = (".mark-rect:not(.reference_ticks_marks)>[fill='#000000' i]"
            "{fill:light-dark(#000000,color-mix(in srgb,currentColor 45%,#000));}")
    assert rule in PAGE_CSS
