"""The UI building blocks: chart builders, URL-bound widgets, pickers and exports."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from charts.histograms import MAX_ROWS, check_rows, common_domain, per_sample_histogram, records
from charts.palette import COLORS, color, label
from kl_core.estimation.estimators import ESTIMATORS
from lab.format import from_log, share

# ------------------------------------------------------------------ charts


def test_every_estimator_has_one_distinct_colour_and_its_core_name():
    assert set(COLORS) == set(ESTIMATORS)
    assert len(set(COLORS.values())) == len(COLORS)
    for key, info in ESTIMATORS.items():
        assert label(key) == info.name
        assert color(key).startswith("#")
    with pytest.raises(ValueError, match="key must be one of"):
        color("k9")


def test_check_rows_enforces_the_limit():
    check_rows(pd.DataFrame({"a": range(MAX_ROWS)}))
    with pytest.raises(AssertionError, match="at most 5,000 rows"):
        check_rows(pd.DataFrame({"a": range(MAX_ROWS + 1)}))


def test_records_turn_non_finite_numbers_into_nulls():
    rows = records(pd.DataFrame({"x": [1.0, np.inf, np.nan]}))
    assert rows == [{"x": 1.0}, {"x": None}, {"x": None}]
    json.dumps(rows, allow_nan=False)  # valid JSON for the browser


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_histogram_is_a_valid_small_spec_with_the_negative_share(key):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(1_000_000)  # a million samples in, one row per bin out
    values[:3] = np.inf
    chart = per_sample_histogram(values, key, true_value=0.5)
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    assert all(len(rows) <= MAX_ROWS for rows in spec["datasets"].values())
    assert sum(len(rows) for rows in spec["datasets"].values()) < 100
    neg = float(np.mean(values < 0))
    assert spec["title"]["text"] == ESTIMATORS[key].name
    assert spec["title"]["subtitle"][0] == f"{share(neg)} of values < 0"
    assert COLORS[key] in json.dumps(spec)
    assert spec["config"]["axis"]["labelFontSize"] >= 13
    assert spec["config"]["axis"]["titleFontSize"] >= 14
    assert spec["layer"][1]["encoding"]["x"]["title"]  # axis titles everywhere
    assert spec["layer"][1]["encoding"]["y"]["title"]
    json.dumps(spec, allow_nan=False)


def test_histogram_writes_a_mean_past_a_double_from_its_log():
    """The audit's k3 with one token at log r = 800: the mean is finite, ≈ 5.4e+343, not "inf"."""
    values = np.r_[np.full(99, 0.1), np.inf]
    spec = per_sample_histogram(values, "k3", mean=math.inf, log_mean=791.4).to_dict()
    assert spec["title"]["subtitle"][1] == "sample mean " + from_log(791.4, 3, trim=True)
    assert "inf" not in spec["title"]["subtitle"][1]


def test_histogram_of_constant_values_still_draws():
    spec = per_sample_histogram(np.zeros(100), "k3", true_value=0.0).to_dict()
    lo, hi = spec["layer"][-1]["encoding"]["x"]["scale"]["domain"]
    assert lo < 0.0 < hi


def test_common_domain_covers_every_array_and_the_included_points():
    lo, hi = common_domain([np.arange(100.0), -np.arange(10.0)], include=(0.0, 500.0))
    assert lo < -8.0 and hi > 500.0


def test_exports_produce_svg_and_png():
    from lab.export import to_png, to_svg

    chart = per_sample_histogram(np.linspace(-1, 1, 500), "k1", true_value=0.1)
    assert to_svg(chart).lstrip().startswith("<svg")
    assert to_png(chart, scale=1.0)[:8] == b"\x89PNG\r\n\x1a\n"


def test_show_source_drops_the_docstring_but_keeps_the_code():
    from kl_core.estimation.estimators import k3
    from lab.ui import _without_docstring

    code = _without_docstring(k3)
    assert code.startswith("def k3(")
    assert "np.expm1(t) - t" in code
    assert "Parameters" not in code


# ------------------------------------------------------------------ URL-bound widgets


def _widgets_script():
    import streamlit as st

    from lab import state

    state.slider("μ", "mu", min_value=0.0, max_value=3.0, value=0.5, step=0.05)
    state.slider("N", "n", min_value=10, max_value=1000, value=100, step=10)
    state.number("seed", "seed", min_value=0, max_value=10_000, value=0, step=1)
    state.select("estimator", "est", ["k1", "k2", "k3"], value="k3")
    state.radio("direction", "dir", ["qp", "pq"], value="qp")
    state.segmented("view", "view", ["hist", "mean"], value="hist")
    state.multiselect("show", "show", ["k1", "k2", "k3"], value=["k1", "k3"])
    state.toggle("log scale", "log", value=False)
    state.checkbox("band", "band", value=True)
    state.text("label", "label", value="hello")
    st.write("done")


def run_widgets(**query: str) -> AppTest:
    at = AppTest.from_function(_widgets_script, default_timeout=30)
    at.query_params.update(query)
    return at.run()


def test_url_values_seed_every_kind_of_widget():
    at = run_widgets(
        mu="1.5", n="200", seed="7", est="k1", dir="pq", view="mean", show=["k2"],
        log="true", band="false", label="hi",
    )
    assert not at.exception
    assert not at.warning, [w.value for w in at.warning]
    assert at.slider(key="mu").value == 1.5
    assert at.slider(key="n").value == 200
    assert at.number_input(key="seed").value == 7
    assert at.selectbox(key="est").value == "k1"
    assert at.radio(key="dir").value == "pq"
    assert at.multiselect(key="show").value == ["k2"]
    assert at.toggle(key="log").value is True
    assert at.checkbox(key="band").value is False
    assert at.text_input(key="label").value == "hi"


@pytest.mark.parametrize(
    ("param", "bad"),
    [
        ("mu", "abc"),
        ("mu", "99"),
        ("n", "5"),
        ("n", "2.5"),
        ("seed", "-3"),
        ("seed", "x"),
        ("est", "k9"),
        ("dir", "sideways"),
        ("view", "pie"),
        ("show", "nope"),
        ("log", "maybe"),
        ("band", "2"),
    ],
)
def test_unusable_url_values_fall_back_with_a_note(param, bad):
    at = run_widgets(**{param: bad})
    assert not at.exception
    notes = [w.value for w in at.warning]
    assert len(notes) == 1 and f"{param}={bad}" in notes[0], notes
    assert at.markdown[-1].value == "done"  # the page still ran to the end


def test_a_note_disappears_once_the_user_changes_the_widget():
    at = run_widgets(mu="abc")
    assert len(at.warning) == 1
    at.slider(key="mu").set_value(1.0).run()
    assert not at.warning


def test_keys_must_be_short_and_url_safe():
    def script():
        from lab import state

        state.toggle("x", "not a key")

    at = AppTest.from_function(script, default_timeout=30).run()
    assert "URL key must be" in at.exception[0].message


# ------------------------------------------------------------------ distribution picker


def _picker_script():
    import streamlit as st

    from lab.picker import distribution_pair, wait_for_specs

    q, p = distribution_pair("normal(0,1)", "normal(1,1)")
    st.number_input("N", key="n_after")  # a control drawn after the pickers
    wait_for_specs("q", "p")
    st.write(f"picked {q.spec} {p.spec}")


def test_picker_parses_specs_from_the_url():
    at = AppTest.from_function(_picker_script, default_timeout=30)
    at.query_params.update({"q": "laplace(0,1)", "p": "t(3,0,1)"})
    at.run()
    assert not at.exception and not at.error
    assert at.markdown[-1].value == "picked laplace(0,1) t(3,0,1)"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"q": "normal(0,-1)"}, "sigma must be > 0"),
        ({"p": "banana(1)"}, "unknown family"),
        ({"q": "categorical(0,1)", "p": "normal(0,1)"}, "both be continuous or both be categorical"),
        ({"q": "categorical(0,1)", "p": "categorical(0,1,2)"}, "same number of logits"),
    ],
)
def test_picker_stops_the_page_with_a_clear_error(query, message):
    at = AppTest.from_function(_picker_script, default_timeout=30)
    at.query_params.update(query)
    at.run()
    assert not at.exception
    assert message in at.error[0].value
    assert not any(m.value.startswith("picked") for m in at.markdown)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("normal(0,1", "missing closing bracket"),
        ("normal(0,1,2)", "normal takes 2 numbers, got 3"),
        ("normal(0,-1)", "sigma must be > 0, got -1"),
        ("normla(0,1)", "did you mean normal?"),
        ("normal(0,1e-9)", "out of range"),
    ],
)
def test_a_bad_spec_names_the_mistake_and_keeps_the_other_controls(spec, message):
    at = AppTest.from_function(_picker_script, default_timeout=30)
    at.query_params.update({"q": spec})
    at.run()
    assert not at.exception
    (error,) = at.error
    assert message in error.value
    assert at.number_input(key="n_after")  # drawn: only the results wait
    assert any("fix the spec of q" in i.value for i in at.info)
    assert not any(m.value.startswith("picked") for m in at.markdown)
    # the sliders start from the default; moving one repairs the spec
    assert at.selectbox(key="q.family").value == "normal"
    at.text_input(key="q").set_value("normal(0.5,1)").run()
    assert not at.error and at.markdown[-1].value == "picked normal(0.5,1) normal(1,1)"


def test_a_histogram_of_tiny_values_labels_its_axis_in_scientific_notation():
    """Gaussians 1e-161 apart: k1's values are ~1e-161, and the default labels read "0.0000000000…"."""
    rng = np.random.default_rng(0)
    spec = per_sample_histogram(rng.standard_normal(1000) * 1e-161, "k1", true_value=5e-323).to_dict()
    (axis,) = [layer["encoding"]["x"]["axis"] for layer in spec["layer"]
               if layer.get("encoding", {}).get("x", {}).get("field") == "left"]
    assert axis["format"] == ".3~g"
    ordinary = per_sample_histogram(rng.standard_normal(1000), "k1", true_value=0.5).to_dict()
    assert all("format" not in layer["encoding"]["x"].get("axis", {})
               for layer in ordinary["layer"] if "x" in layer.get("encoding", {}))
