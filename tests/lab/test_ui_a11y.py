"""``lab.ui``'s chart accessibility (issue 21): descriptions, hidden SVG internals, the numbers table."""

from __future__ import annotations

import numpy as np

import i18n
from charts.histograms import per_sample_histogram
from lab import ui


def _hist():
    values = np.random.default_rng(0).normal(size=2000)
    return per_sample_histogram(values, "k1", true_value=0.5, mean=float(values.mean()), neg_fraction=0.4)


def test_plain_words_for_a_screen_reader():
    assert ui.plain(r"**Bold** $\lambda = 1$ and `code`") == "Bold λ = 1 and code"
    assert ui.plain(":material/visibility: $\\mathbb{E}_q[k3]$") == "E_q[k3]"


def test_description_from_title_and_caption_else_axes():
    spec = ui._spec(_hist())
    with i18n.using("en"):
        assert ui.chart_description(spec, "40% are **negative**.") == "Chart “k1”: 40% are negative."
        no_title = {k: v for k, v in spec.items() if k != "title"}
        assert ui.chart_description(no_title) == ("Chart: share of samples against per-sample value of k1.")
    with i18n.using("zh"):
        assert ui.chart_description(spec, "x").startswith("图表")


def test_accessible_spec_adds_description_and_leaves_the_memo_alone():
    spec = ui._spec(_hist())
    out = ui.accessible_spec(spec, "Chart: x")
    assert out["description"] == "Chart: x" and out["config"]["aria"] is False
    assert "description" not in spec and "aria" not in spec.get("config", {})


def test_numbers_table_has_the_axis_titles_and_every_bin():
    ch = _hist()
    with i18n.using("en"):
        df, labels = ui.numbers_tables(ui._spec(ch), ch.datasets)
    assert list(df.columns) == ["per-sample value of k1, from", "per-sample value of k1, to", "share of samples"]
    assert len(df) == len(ch.datasets["bins"])
    shares = np.array([float(s) for s in df["share of samples"]])
    assert abs(shares.sum() - 1) < 1e-2  # the bins' shares, written with 4 significant digits
    assert any("0.5" in label for label in labels)  # the true value's label on the chart


def test_the_page_script_has_no_angle_bracket():
    """st.html's sanitiser reads a '<' inside the script as a tag and drops the whole script."""
    from lab import a11y

    assert "<" not in a11y._SCRIPT
