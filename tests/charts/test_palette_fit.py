"""Text that fits a phone: width estimates, wrapped titles, legends that follow the plot's width."""

from __future__ import annotations

import json
import re

import pytest
import vl_convert as vlc

from charts.palette import fitted_legend, text_px, wrapped

LONG_ZH = "Σ k2 损失 = 精确 KL 损失（局部部分）"


def test_text_px_counts_a_cjk_character_as_a_full_em():
    assert text_px("损失", 10) == pytest.approx(20)
    assert text_px("ab", 10) == pytest.approx(12.0)


@pytest.mark.parametrize("text", ["k1_score: k1 as a detached reward, its score-function gradient",
                                  "k1_score：k1 作为 detach 后的奖励，它的得分函数梯度", "short"])
def test_wrapped_lines_fit_and_keep_every_character(text):
    lines = wrapped(text, 200, 14)
    assert all(text_px(line, 14) <= 200 for line in lines if " " in line or len(line) > 1)
    assert re.sub(r"\s", "", "".join(lines)) == re.sub(r"\s", "", text)


def test_a_single_word_longer_than_the_line_stays_whole():
    assert wrapped("x" * 60, 100, 14) == ["x" * 60]


def _legend_texts(width: int, labels: list[str], most: int) -> list[str]:
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json", "width": width, "height": 60,
        "data": {"values": [{"a": i, "s": s} for i, s in enumerate(labels)]}, "mark": "point",
        "encoding": {"x": {"field": "a", "type": "quantitative", "axis": None},
                     "color": {"field": "s", "type": "nominal",
                               "legend": {"orient": "top", "title": None, **fitted_legend(labels, most=most)}}},
    }
    svg = vlc.vegalite_to_svg(json.loads(json.dumps(spec)))
    return re.findall(r"<tspan[^>]*>([^<]*)</tspan>", svg) + re.findall(r"<text[^>]*>([^<]+)</text>", svg)


def test_a_long_label_is_wrapped_on_a_narrow_plot_and_whole_on_a_wide_one():
    labels = [LONG_ZH, "k1"]
    narrow = _legend_texts(200, labels, 1)
    assert LONG_ZH not in narrow and "".join(wrapped(LONG_ZH, 200, 14)) in "".join(narrow)
    assert LONG_ZH in _legend_texts(600, labels, 1)


def test_the_columns_shrink_with_the_width():
    legend = fitted_legend(["a fairly long legend label", "b"], most=3)
    expr = legend["columns"]["expr"]
    assert expr.startswith("max(1, min(3,")
    assert "labelExpr" not in fitted_legend(["k1", "k2"], most=2)
