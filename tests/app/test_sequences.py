"""The "Tokens & sequences" page: it runs, every widget reruns it, its numbers are the core's.

Also the page's chart builders (``charts/sequences.py``): each spec validates
against the Vega-Lite schema (``lab.ui.chart`` sends it unvalidated), stays
under the row limit, has axis titles and uses the estimators' colours.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from charts.histograms import MAX_ROWS
from charts.palette import RB_COLOR, color
from charts.sequences import (
    McPoint,
    cosine_bars,
    gradient_bars,
    penalty_chart,
    per_position_chart,
    relative_std_chart,
)
from kl_core.sequences.estimators import RB_COUNTEREXAMPLE, exact_curves
from kl_core.sequences.gradients import sequence_gradient_table
from kl_core.sequences.markov import drift_pair
from kl_core.sequences.montecarlo import simulate_sequences
from lab.format import number
from lab.notes import sequences as notes

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/sequences.py"


def open_page(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update(query)
    return at.run()


@pytest.fixture(scope="module")
def default_page() -> AppTest:
    return open_page()


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at: AppTest, start: str, help_has: str = "") -> str:
    """The value of the metric whose label starts with ``start`` (and whose help has ``help_has``)."""
    (value,) = [m.value for m in at.metric if m.label.startswith(start) and help_has in m.proto.help]
    return value


def captions(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def table(at: AppTest, first_column: str):
    (df,) = [d.value for d in at.dataframe if d.value.columns[0] == first_column]
    return df


# ------------------------------------------------------------------ the page


def test_default_run_shows_the_core_numbers(default_page):
    at = default_page
    clean(at)
    assert at.title[0].value == "Tokens & sequences"
    policy, ref = notes.STICKY  # the default chains (issue 20)
    curves = exact_curves(policy, ref, notes.MAX_LENGTH)
    t = notes.DEFAULT_LENGTH
    kl = float(curves.true_kl[t - 1])
    assert metric(at, notes.KL_SEQUENCE, f"T = {t}") == number(kl)
    assert metric(at, "per token, KL / T") == number(kl / t)
    assert metric(at, notes.KL_OTHER) == number(float(curves.true_kl_reverse[t - 1]))
    sample = simulate_sequences(policy, ref, t, 1000, seed=0)
    assert metric(at, "rb, sampled", "1,000 sampled sequences") == number(sample.summary("rb").mean)
    assert metric(at, "Σk3, mean over sequences") == number(sample.summary("sum_k3").mean)
    report = table(at, "estimator")
    assert list(report["MC mean"]) == [sample.summary(k).mean for k in report["estimator"]]
    assert np.allclose(report["exact std"], [float(curves.std[k][t - 1]) for k in report["estimator"]])
    grads = sequence_gradient_table(policy, ref, t)
    assert f"{grads.later_share:.1%} of the true gradient's length" in captions(at)
    assert len(at.get("vega_lite_chart")) == 5
    assert [i.value for i in at.info if "less variance than Σk1" in i.value]
    (warning,) = [w.value for w in at.warning]  # seq_k3's spread: the CLI's note too
    se = float(curves.relative_std("seq_k3")[t - 1]) / math.sqrt(1000)
    assert f"1 Monte Carlo mean has a standard error above 0.1 times the KL (seq_k3: {number(se)} times the KL)" in warning
    # the command line carries the exact specs, T, N and seed
    (code,) = [c.value for c in at.code if "kl_core sequence" in c.value]
    assert notes.command_line(policy, ref, t, 1000, 0) == code


def _rows(node) -> list[dict]:
    """Every inline data row in a Vega-Lite spec (``lab.ui.chart`` writes rows inline)."""
    if isinstance(node, dict):
        values = node.get("values")
        found = list(values) if isinstance(values, list) and values and isinstance(values[0], dict) else []
        return found + [r for k, v in node.items() if k != "values" for r in _rows(v)]
    if isinstance(node, list):
        return [r for v in node for r in _rows(v)]
    return []


def _cosine_chart(at: AppTest) -> dict[str, float | None]:
    """Option → cosine, as drawn in the page's cosine bars (its first chart)."""
    first = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    rows = [r for r in _rows(first) if "option" in r and "cos" in r]
    assert rows, "the first chart is not the cosine bars"
    return {r["option"]: (None if r["cos"] is None or r["cos"] != r["cos"] else r["cos"]) for r in rows}


def test_the_page_opens_with_its_answer_and_a_per_token_loss_far_off(default_page):
    """Issue 20: at the defaults, view 4 shows a per-token loss with cosine below 0.5."""
    at = default_page
    drawn = _cosine_chart(at)
    table = sequence_gradient_table(*notes.chains(notes.DEFAULT_SOURCE, ("", ""), notes.CUSTOM_DEFAULT),
                                    notes.DEFAULT_LENGTH)
    per_token = [r.name for r in table.rows if not r.later_terms]
    far = {name: drawn[name] for name in per_token if drawn[name] is not None and drawn[name] < 0.5}
    assert far, drawn
    for name, c in far.items():
        assert c == pytest.approx(table.row[next(r.key for r in table.rows if r.name == name)].cos_reverse)
    assert drawn["k1 as a reward, reward-to-go"] == pytest.approx(1.0)
    # the answer sentence is the notes' sentence at these numbers, before the chains' description
    texts = [m.value for m in at.markdown]
    answer = notes.answer(table, exact_curves(*notes.STICKY, notes.DEFAULT_LENGTH).per_position_kl)
    assert answer in texts and "Its gradient is not a per-token loss's" in answer
    assert texts.index(answer) < next(i for i, x in enumerate(texts) if x.startswith("**Sticky token**"))
    # rb is defined before its metric, and the formula's labels are the notes' (translated) ones
    assert any(x.startswith("**rb** (Rao–Blackwellized)") for x in texts)
    assert [x for x in at.get("latex") if "later prefixes" in x.proto.body]


def test_the_drift_family_is_the_preset_where_they_agree():
    at = open_page(src="drift")
    clean(at)
    drawn = _cosine_chart(at)
    assert drawn["Σ k2 as a loss"] > 0.99
    assert any("nearly the right way" in m.value for m in at.markdown)


@pytest.mark.parametrize(
    ("widget", "key", "value"),
    [
        ("slider", "K", 5),
        ("slider", "drift", 1.25),
        ("toggle", "first", True),
        ("select_slider", "T", 12),
        ("select_slider", "n", 2000),
        ("number_input", "seed", 7),
        ("select_slider", "beta", 0.2),
        ("segmented_control", "src", "counter"),
        ("segmented_control", "src", "drift"),
        ("segmented_control", "src", "custom"),
    ],
)
def test_each_widget_reruns_cleanly(widget, key, value):
    at = open_page(src="drift") if key in ("K", "drift", "first") else open_page()
    getattr(at, widget)(key=key).set_value(value).run()
    clean(at)
    assert at.title[0].value == "Tokens & sequences"


def test_a_link_reproduces_a_non_default_view():
    at = open_page(src="drift", K="5", drift="1.2", T="32", n="2000", seed="3", beta="0.1")
    clean(at)
    policy, ref = drift_pair(5, 1.2)
    curves = exact_curves(policy, ref, notes.MAX_LENGTH)
    sample = simulate_sequences(policy, ref, 32, 2000, seed=3)
    assert metric(at, notes.KL_SEQUENCE, "T = 32") == number(float(curves.true_kl[31]))
    assert metric(at, "rb, sampled", "2,000 sampled sequences") == number(sample.summary("rb").mean)
    rows = table(at, "reduction (verl loss_agg_mode)").set_index("reduction (verl loss_agg_mode)")
    assert rows.loc["seq-mean-token-mean", "coefficient on the sequence KL"] == pytest.approx(0.1 / 32)


def test_an_older_link_with_k_and_drift_still_opens_the_drift_family():
    """Before issue 20 the drift family was the default: a link (or a lesson) with K, drift, no src."""
    at = open_page(K="5", drift="1.2", T="32")
    clean(at)
    assert at.segmented_control(key="src").value == "drift"
    assert at.query_params["src"] == "Drift family"  # written, so the link now says it
    curves = exact_curves(*drift_pair(5, 1.2), notes.MAX_LENGTH)
    assert metric(at, notes.KL_SEQUENCE, "T = 32") == number(float(curves.true_kl[31]))
    # back at the drift family's defaults, the URL still says which chains
    at.slider(key="drift").set_value(0.5).run()
    at.slider(key="K").set_value(notes.DEFAULT_K).run()
    assert at.segmented_control(key="src").value == "drift" and at.query_params["src"] == "Drift family"


def test_first_token_drift_and_an_off_grid_t():
    at = open_page(src="drift", first="true", T="100")
    clean(at)
    assert at.select_slider(key="T").value == 100
    assert "Only the first token differs" in captions(at)
    assert "vanish" in captions(at)


def test_the_counterexample_says_rb_is_noisier():
    at = open_page(src="rb counterexample", T="2")
    clean(at)
    (warning,) = [w.value for w in at.warning if "noisier than Σk1" in w.value]
    assert "for T from 2 to 256" in warning
    curves = exact_curves(*RB_COUNTEREXAMPLE, 2)
    assert metric(at, notes.KL_SEQUENCE, "T = 2") == number(float(curves.true_kl[1]))
    (text,) = [m.value for m in at.markdown if "**The counterexample**" in m.value]  # the stds at this T
    assert text == notes.counterexample_text(exact_curves(*RB_COUNTEREXAMPLE, notes.MAX_LENGTH), 2)
    assert text.endswith("rb's is 0.5: rb is the noisier.")


def test_own_chains_and_a_bad_spec():
    policy, ref = (c.spec for c in drift_pair(4, 0.8))
    at = open_page(src="Your own chains", pol=policy, ref=ref, T="8")
    clean(at)
    curves = exact_curves(policy, ref, 8)
    assert metric(at, notes.KL_SEQUENCE, "T = 8") == number(float(curves.true_kl[7]))
    bad = open_page(src="Your own chains", pol="markov(0,0; 1)")
    assert not bad.exception
    (err,) = [e.value for e in bad.error]
    assert "These chains can't be used" in err and "K + 1 = 3 rows" in err


def test_the_sample_budget_caps_n_times_t():
    at = open_page(T="256", n="100000")
    clean(at)
    assert any("uses N = 10,000 sequences at T = 256" in i.value for i in at.info)
    assert metric(at, "rb, sampled", "10,000 sampled sequences")


def test_one_token_chains_skip_the_gradients():
    at = open_page(src="Your own chains", pol="markov(0; 0)", ref="markov(1; 0)", T="4")
    clean(at)
    assert any("K ≥ 2" in i.value for i in at.info)


# ------------------------------------------------------------------ the charts


def spec_of(chart) -> dict:
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    json.dumps(spec, allow_nan=False)
    return spec


def rows_of(spec: dict) -> int:
    return sum(len(v) for v in spec.get("datasets", {}).values())


@pytest.fixture(scope="module")
def drift_curves():
    return exact_curves(*drift_pair(8, 0.5), notes.MAX_LENGTH)


def test_per_position_chart(drift_curves):
    sample = simulate_sequences(*drift_pair(8, 0.5), 64, 200, seed=0)
    spec = spec_of(per_position_chart(drift_curves.per_position_kl[:64], sample.position_mean,
                                      sample.position_se, {"k1": "k1", "k3": "k3", "rb": "rb"}))
    assert rows_of(spec) == 64 * 4
    text = json.dumps(spec)
    assert color("k1") in text and RB_COLOR in text
    assert all(layer["encoding"]["x"]["title"] for layer in spec["layer"])
    with pytest.raises(ValueError, match="must have 64 values"):
        per_position_chart(drift_curves.per_position_kl[:64], {"k1": np.zeros(3)}, {"k1": np.zeros(3)})


def test_relative_std_chart_cuts_seq_k3_and_marks_zero(drift_curves):
    keys = notes.CURVE_KEYS
    exact = {k: drift_curves.relative_std(k) for k in keys}
    points = [McPoint("sum_k1", 64, 0.8, 0.7, 0.9), McPoint("seq_k3", 128, 1e9, 1e8, 1e10)]
    spec = spec_of(relative_std_chart(drift_curves.lengths, exact, {k: k for k in keys}, points, current=64))
    assert rows_of(spec) <= MAX_ROWS
    data = spec["datasets"]
    # seq_k3 leaves the chart with a marker, and is not silently dropped
    top = max(r["value"] for r in data["lines"] if r["value"] is not None)
    leaves = int(np.argmax(exact["seq_k3"] > top))
    (off,) = [r for d, rows in data.items() if d.startswith("off_") for r in rows]
    assert off["text"] == f"↑ seq_k3 off the chart from T = {leaves + 1}"
    # rb's zero spread at T = 1 sits on the floor, marked
    (zero,) = [r for d, rows in data.items() if d.startswith("zero_") for r in rows]
    assert zero["T"] == 1 and zero["text"] == "rb = 0 (no noise)"
    # an MC point above the top is not drawn inside the plot
    (high,) = [r for r in data["points"] if r["series"] == "seq_k3"]
    assert high["value"] is None and high["shown"] == 1e9
    assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
    assert spec["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"


def test_relative_std_chart_groups_markers_and_keeps_six_decades():
    counter = exact_curves(*RB_COUNTEREXAMPLE, 16)
    keys = notes.CURVE_KEYS
    exact = {k: counter.relative_std(k) for k in keys}
    spec = spec_of(relative_std_chart(counter.lengths, exact, {k: k for k in keys},
                                      [McPoint("sum_k1", 2, 1e-14, 0.0, 2e-14)]))
    data = spec["datasets"]
    (off,) = [r for d, rows in data.items() if d.startswith("off_") for r in rows]
    assert off["text"] == "↑ sum_k3, seq_k3 off the chart from T = 1"  # one text for both
    floor, top = spec["layer"][0]["encoding"]["y"]["scale"]["domain"]
    assert top / floor <= 1e6 * (1 + 1e-12)
    assert min(r["value"] for r in data["lines"] if r["value"] is not None) >= floor
    (pt,) = data["points"]
    assert pt["value"] == floor and pt["shown"] == 1e-14  # a rounding-level spread sits on the floor


def test_relative_std_chart_of_identical_chains_still_draws():
    same = exact_curves(*drift_pair(3, 0.0), 16)
    exact = {k: same.relative_std(k) for k in notes.CURVE_KEYS}
    assert any(np.isnan(v).all() for v in exact.values())  # std/KL = 0/0 at every T
    spec = spec_of(relative_std_chart(same.lengths, exact, {k: k for k in notes.CURVE_KEYS}))
    # 0/0 is no value, not one above the top: no "↑ … off the chart" marker (it said so for five estimators)
    assert not [r for d, rows in spec["datasets"].items() if d.startswith("off_") for r in rows]


def test_penalty_gradient_and_cosine_charts(drift_curves):
    curves, colors = notes.penalty_curves(0.05, drift_curves)
    spec = spec_of(penalty_chart(drift_curves.lengths, curves, colors, current=64))
    assert rows_of(spec) == 3 * notes.MAX_LENGTH + 1
    tab = sequence_gradient_table(*drift_pair(8, 0.5), 64)
    cats, series, bar_colors, _ = notes.first_token_series(tab)
    spec = spec_of(gradient_bars(cats, series, bar_colors, x_title="first-token logit"))
    assert rows_of(spec) == 8 * 4 and spec["encoding"]["x"]["title"] == "first-token logit"
    labels, cosines, cos_colors = notes.cosine_data(tab)
    spec = spec_of(cosine_bars(labels, cosines, cos_colors, x_title="cosine", none_text="0"))
    texts = {r["option"]: r["text"] for r in spec["datasets"]["cos"]}
    assert texts[labels[0]] == "0" and texts[labels[-1]] == "1.0000"
    assert math.isclose(spec["height"], 64 * len(labels))
    with pytest.raises(ValueError, match="same length"):
        cosine_bars(labels, cosines[:2], cos_colors, x_title="c", none_text="0")


def test_the_first_token_toggle_help_holds_at_zero_drift():
    """δ = 0: the KL is 0 at every T, so "Off: … the KL grows with T" needs δ > 0."""
    at = open_page(src="drift", drift="0")
    clean(at)
    assert "for δ > 0 the KL grows with T" in at.toggle(key="first").help
    assert metric(at, notes.KL_SEQUENCE, "T = 16") == number(0.0)


def test_an_overflowing_seq_k3_variance_shows_its_finite_spread():
    at = open_page(src="drift", K="64", drift="3", T="256")
    clean(at)
    text = captions(at) + " ".join(w.value for w in at.warning)
    assert "∞" not in text and "The exact columns are right." in text


# ------------------------------------------------------------------ audit of the page (findings 1–7)


def test_negative_cosines_are_labelled_on_their_own_side_with_a_minus_sign():
    """rb counterexample, T = 3: the −1.0000 bars' numbers sat left of the axis (unseen) and Σk3's
    "-0.2236" was drawn over its own bar, with a hyphen for the minus."""
    tab = sequence_gradient_table(*RB_COUNTEREXAMPLE, 3)
    labels, cosines, cos_colors = notes.cosine_data(tab)
    assert [None if c is None else round(c, 4) for c in cosines] == [None, -1.0, -0.2236, -1.0, 1.0]
    spec = spec_of(cosine_bars(labels, cosines, cos_colors, x_title="cosine", none_text="0"))
    data = spec["datasets"]
    texts = {r["option"]: r["text"] for r in data["cos"]}
    assert texts[labels[1]] == "−1.0000" and texts[labels[2]] == "−0.2236"
    assert not any("-" in t for t in texts.values())
    marks = {layer["data"]["name"]: layer["mark"] for layer in spec["layer"] if layer["mark"]["type"] == "text"
             and layer["data"]["name"] != "cos"}
    # a long negative bar: its number inside, from the bar's left end (x = −1) inward
    assert [r["option"] for r in data["inside_negative"]] == [labels[1], labels[3]]
    assert marks["inside_negative"]["align"] == "left" and marks["inside_negative"]["dx"] > 0
    # a short negative bar: its number beyond its left end, not over the bar
    assert [r["option"] for r in data["outside_negative"]] == [labels[2]]
    assert marks["outside_negative"]["align"] == "right" and marks["outside_negative"]["dx"] < 0
    # positive bars and "no direction" as before
    assert [r["option"] for r in data["inside"]] == [labels[4]] and marks["inside"]["align"] == "right"
    assert [r["option"] for r in data["outside"]] == [labels[0]] and marks["outside"]["align"] == "left"


def test_the_counterexample_marks_section_3s_sigma_k3_as_unreliable(default_page):
    """T = 16, N = 1,000: "Σk3, mean over sequences 2.794 ± 0.08134 (SE); KL = 8" with no word that the
    SE is untrustworthy, while section 2 warned about sum_k3."""
    at = open_page(src="rb counterexample")
    clean(at)
    warnings = [w.value for w in at.warning]
    assert any("2 Monte Carlo means have standard errors" in w and "(sum_k3: " in w for w in warnings)  # section 2
    sample = simulate_sequences(*RB_COUNTEREXAMPLE, 16, 1000, seed=0)
    (sec3,) = [w for w in warnings if "Σk3's sample figures are unreliable here" in w]
    assert f"these draws give ± {number(sample.summary('sum_k3').se)}." in sec3
    assert metric(at, "Σk3, mean over sequences") == number(sample.summary("sum_k3").mean)
    # the default chains: section 2 flags seq_k3 only, and section 3 says nothing
    default_warnings = [w.value for w in default_page.warning]
    assert default_warnings and not [w for w in default_warnings if "Σk3's sample figures" in w]


def test_identical_chains_show_no_rb_note_and_dashes_for_the_ratios():
    at = open_page(src="Drift family", drift="0")
    clean(at)
    assert not [i.value for i in at.info if "rb has no noise" in i.value or "not always better" in i.value]
    grads = table(at, "option")
    for col in ("‖g‖ / ‖∇KL‖", "‖g − ∇KL‖ / ‖∇KL‖"):
        assert list(grads[col]) == ["—"] * len(grads)


def test_one_token_chains_do_not_point_to_a_cosine_chart():
    at = open_page(src="Your own chains", pol="markov(0; 0)", ref="markov(0; 0)")
    clean(at)
    assert any("K ≥ 2" in i.value for i in at.info)
    assert "chart at the top" not in captions(at)
    assert len(at.get("vega_lite_chart")) == 3  # no cosine chart, no first-token bars


def test_the_drift_familys_answer_does_not_blame_later_prefixes_for_sigma_k3():
    at = open_page(src="Drift family", K="8", drift="2")
    clean(at)
    text = captions(at)
    assert "not a per-token loss's" not in text
    assert "Here Σ k2 as a loss points nearly the right way" in text and "other KL direction" in text
