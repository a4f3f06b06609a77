"""charts.lessons: the setting pictures drawn beside a lesson step's question."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import vl_convert as vlc

from charts.lessons import SAMPLED_COLOR, setting_chart, token_pair_chart
from charts.palette import EXTRA_COLORS, LIFTED_IN_DARK
from lab import ui
from tests.app.test_estimator_styles import problems

NAMES = ("π_θ (tokens are drawn from it)", "π_ref (uniform)")
ZH_NAMES = ("策略（序列从它抽取）", "参考链")


def _chart(k: int = 6, names: tuple[str, str] = NAMES):
    sampled = np.linspace(1, 2, k) / np.linspace(1, 2, k).sum()
    return token_pair_chart(sampled, np.full(k, 1 / k), names=names, y_title="probability")


def test_token_pair_chart_has_its_titles_rows_and_a_legend_that_fits_a_phone() -> None:
    spec = _chart().to_dict()  # validates against the Vega-Lite schema
    enc = spec["encoding"]
    assert enc["x"]["title"] == "token" and enc["y"]["title"] == "probability"
    rows = spec["datasets"]["bars"]
    assert len(rows) == 12 and [r["token"] for r in rows[:6]] == ["0", "1", "2", "3", "4", "5"]
    assert {r["series"] for r in rows} == set(NAMES)
    legend = enc["fill"]["legend"]
    assert legend["orient"] == "top" and "width" in legend["columns"]["expr"]  # charts.palette.fitted_legend
    assert spec["height"] == 300


def test_the_two_distributions_differ_by_more_than_colour() -> None:
    enc = _chart().to_dict()["encoding"]
    assert enc["xOffset"]["field"] == "series"  # side by side
    dashes = enc["strokeDash"]["scale"]["range"]
    fills = enc["fill"]["scale"]["range"]
    assert dashes[0] != dashes[1] and fills[0] == SAMPLED_COLOR and fills[1].endswith("24")  # solid vs a tint
    assert all(enc[c]["field"] == "series" and enc[c]["legend"] == enc["fill"]["legend"]
               for c in ("stroke", "strokeDash"))  # one legend shows fill, outline and dash together


def test_both_colours_are_redrawn_in_the_dark_theme() -> None:
    """Both the near-black bars and the wine outlines are lifted in the dark theme (lab.ui's theme CSS)."""
    enc = _chart().to_dict()["encoding"]
    assert enc["stroke"]["scale"]["range"] == [SAMPLED_COLOR, EXTRA_COLORS["wine"]]
    assert {SAMPLED_COLOR, EXTRA_COLORS["wine"]} <= set(LIFTED_IN_DARK)


def test_the_palette_check_finds_nothing() -> None:
    assert problems("lessons", "lesson-5-1-setting", _chart().to_dict(validate=False)) == []


def test_the_fast_spec_equals_altairs() -> None:
    for chart in (_chart(), setting_chart(np.linspace(-3, 3, 5), np.ones(5), np.ones(5), q_name="N(0, 1)",
                                          p_name="N(1, 1)")):
        spec = chart.to_dict(validate=False)
        datasets = spec.pop("datasets", {})
        want = ui._inline(spec, {name: [ui._native_row(r) for r in rows] for name, rows in datasets.items()})
        assert json.loads(json.dumps(ui._spec(chart)), parse_int=float) == json.loads(json.dumps(want), parse_int=float)


@pytest.mark.parametrize("names", [NAMES, ZH_NAMES, ("policy (sequences come from it)", "reference chain")])
def test_at_a_phones_width_every_label_is_whole_and_inside(names: tuple[str, str]) -> None:
    """Fitted to a 320 px phone's 288 px column (as Streamlit fits it), the legend's labels are whole and inside."""
    spec = _chart(8, names).to_dict()
    spec["width"], spec["autosize"] = 288, {"type": "fit", "contains": "padding"}
    svg = vlc.vegalite_to_svg(spec)
    width = float(re.search(r'<svg[^>]*width="([\d.]+)"', svg).group(1))
    assert width <= 290
    texts = "".join(re.findall(r">([^<>]+)</t", svg))
    assert all(re.sub(r"\s", "", n) in re.sub(r"\s", "", texts) for n in names)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="one length"):
        token_pair_chart(np.ones(3), np.ones(4), names=NAMES, y_title="p")
    with pytest.raises(ValueError, match="two labels"):
        token_pair_chart(np.ones(3), np.ones(3), names=NAMES[:1], y_title="p")  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="at most 5,000 rows"):  # charts.histograms.check_rows
        token_pair_chart(np.ones(2501), np.ones(2501), names=NAMES, y_title="p")  # over 5,000 rows
