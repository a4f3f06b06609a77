"""Charts in Chinese: translated titles, the same numbers, a font with Chinese glyphs, per-language caching."""

from __future__ import annotations

import json
import re

import numpy as np
from streamlit.testing.v1 import AppTest

import i18n
from charts.histograms import per_sample_histogram
from charts.palette import CONFIG
from scripts.translations import english_runs

CJK = re.compile(r"[\u4e00-\u9fff]")


def _texts(node, out=None) -> list[str]:
    """Every title, subtitle, tooltip title and label text in a Vega-Lite spec."""
    out = [] if out is None else out
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("title", "subtitle", "text") and isinstance(v, str):
                out.append(v)
            elif k in ("title", "subtitle") and isinstance(v, list):
                out += [x for x in v if isinstance(x, str)]
            else:
                _texts(v, out)
    elif isinstance(node, list):
        for v in node:
            _texts(v, out)
    return out


def _histogram(lang: str) -> dict:
    values = np.random.default_rng(0).standard_normal(5000)
    with i18n.using(lang):
        return per_sample_histogram(values, "k1", true_value=0.125).to_dict()


def test_a_histogram_in_chinese_says_everything_in_chinese_with_the_same_numbers():
    en, zh = _histogram("en"), _histogram("zh")
    words = [t for t in _texts(zh) if re.search("[A-Za-z]{3,}", t) and not CJK.search(t)]
    assert words == []  # only names and numbers stay Latin (k1, the dataset fields)
    assert [english_runs(t, at_least=2) for t in _texts(zh)] == [[] for _ in _texts(zh)]
    assert zh["title"]["subtitle"][0] == en["title"]["subtitle"][0].replace(" of values < 0", " 的值 < 0")
    assert zh["datasets"]["bins"] == en["datasets"]["bins"]  # the same bars
    assert zh["layer"][1]["encoding"]["x"]["title"] == "k1 的单样本值"


def test_charts_use_a_font_with_chinese_glyphs():
    families = [f.strip().strip('"') for f in CONFIG["font"].split(",")]
    assert families[0] == "Source Sans"  # Streamlit's own font first
    assert "Noto Sans CJK SC" in families and families[-1] == "sans-serif"
    assert json.loads(json.dumps(_histogram("zh")["config"]))["font"] == CONFIG["font"]


def _cached_chart_script():
    import numpy as np
    import streamlit as st

    from lab import cache
    from lab.language import language_switch

    language_switch()
    chart = cache.estimator_chart("per-sample", np.linspace(-1, 1, 200), "k3", true_value=0.1)
    st.write(chart.to_dict()["layer"][1]["encoding"]["x"]["title"])


def test_a_cached_chart_is_kept_per_language():
    at = AppTest.from_function(_cached_chart_script, default_timeout=30)
    at.query_params["lang"] = "en"
    at.run()
    assert at.markdown[-1].value == "per-sample value of k3"
    at.button_group(key="lang").set_value("zh").run()
    assert at.markdown[-1].value == "k3 的单样本值"
    at.button_group(key="lang").set_value("en").run()
    assert at.markdown[-1].value == "per-sample value of k3"
