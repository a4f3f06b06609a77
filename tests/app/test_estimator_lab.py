"""AppTest checks of the Estimator Lab: it runs, every widget reruns, its numbers are the core's.

Plus the page's chart builders (``charts/estimator_lab.py``): valid Vega-Lite,
few rows, axis titles, the estimator colours.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from charts import palette
from charts.estimator_lab import (
    RUNNING_FROM,
    batch_means_domain,
    batch_means_histogram,
    running_means_chart,
    usable_domain,
    with_numpy_rows,
)
from charts.histograms import MAX_ROWS, TITLE_LIMIT, per_sample_histogram
from charts.palette import COLORS
from kl_core.estimation.distributions import parse
from kl_core.estimation.estimators import ESTIMATORS
from kl_core.estimation.exact import estimator_moments, kl, lambda_star
from kl_core.estimation.montecarlo import simulate, target_of
from kl_core.estimation.presets import PRESETS
from kl_core.estimation.published import match_published
from kl_core.estimation.sampling_distributions import (
    batch_mean_normal,
    exact_relative_figures,
    mc_relative_standard_errors,
    mc_standard_errors,
)
from lab.format import lam_text, number, printf_text_column, share
from lab.notes.estimator_lab import relative_format

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "pages/estimator-lab.py"
DEFAULTS = {"q": "normal(0,1)", "p": "normal(0.1,1)", "n": 1000, "R": 200, "seed": 0}
DEFAULT_KEYS = ("k1", "k2", "k3")
ALL_KEYS = ("k1", "k2", "k3", "k_lambda", "k3_pq")


def run_lab(**query) -> AppTest:
    """Open the Estimator Lab, as a link with ``query`` would."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    at.run()
    return at.switch_page(PAGE).run()


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def fmt(x: float) -> str:
    """The page's metric format: 4 significant digits, ∞, and — where undefined."""
    return "∞" if math.isinf(x) else ("—" if math.isnan(x) else f"{x:.4g}")


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def tables(at: AppTest) -> dict[str, object]:
    """The page's data frames: bias/true, stdev/true (unless p = q) and the absolute one."""
    frames = [df.value for df in at.dataframe]
    out = {"absolute": frames[-1].set_index("estimator")}
    if len(frames) == 3:
        out["bias/true"] = frames[0].set_index("estimator")
        out["stdev/true"] = frames[1].set_index("estimator")
    return out


def _number(cell):
    """A cell as the page's rows held it (a text cell of :func:`same` back to its float; ∞ stays out of range)."""
    if isinstance(cell, str):
        try:
            return float(cell.replace("−", "-").replace("∞", "inf"))
        except ValueError:
            return cell
    return cell


def same(cell, value: float, fmt: str) -> bool:
    """A table cell shows ``value``: the number itself, or, in a column that holds an infinity and so is
    written as text (``lab.format.printf_text_column``), the value in the column's printf format."""
    if isinstance(cell, str):
        return cell == printf_text_column(pd.Series([float(value)]), fmt)[0]
    return cell == value or cell == pytest.approx(value, rel=1e-15)


def check_numbers(at: AppTest, q_spec, p_spec, n, repeats, seed, keys, lam=1.0) -> None:
    """Every number in the metrics and tables equals what kl_core computes for these inputs."""
    q, p = parse(q_spec), parse(p_spec)
    true_kl, true_kl_pq = kl(q, p), kl(p, q)
    shown = metrics(at)
    assert shown["Exact KL[q‖p]"] == fmt(true_kl)
    assert shown["Exact KL[p‖q]"] == fmt(true_kl_pq)
    star = lambda_star(q, p).value
    assert shown["λ*, least-variance λ"] == ("undefined" if star is None else fmt(star))
    assert shown["Draws, N · R"] == f"{n * repeats:,}"
    sim = simulate(q, p, n, repeats=repeats, seed=seed, lam=lam, keys=keys)
    t = tables(at)
    published = match_published(q, p)
    for key in keys:
        name = ESTIMATORS[key].name
        s = sim[key]
        m = estimator_moments(key, q, p, lam=lam if key == "k_lambda" else None)
        tname, target = target_of(key, true_kl, true_kl_pq)
        row = t["absolute"].loc[name]
        assert row["target"] == tname
        assert row["true value"] == target
        assert row["mean (exact)"] == m.mean
        assert row["mean (MC)"] == s.mean
        assert row["stdev (MC)"] == s.std
        assert row["share < 0 (MC)"] == share(s.neg_fraction)  # text: lab.format.printf_text_column
        se_mean, _ = mc_standard_errors(s.samples, s.std, n * repeats)
        if math.isfinite(m.var):
            assert same(row["stdev (exact)"], m.std, "%.5g")
            assert row["mean (MC SE)"] == se_mean
        if "bias/true" not in t:
            continue
        exact_bias, exact_std = exact_relative_figures(m.mean, m.var, target)
        se_bias, se_std = mc_relative_standard_errors(s.samples, s.std, n * repeats, target)
        bias, spread = t["bias/true"].loc[name], t["stdev/true"].loc[name]
        assert bias["exact"] == exact_bias or (math.isnan(bias["exact"]) and math.isnan(exact_bias))
        assert bias["MC"] == s.bias_over_true
        assert spread["MC"] == s.std_over_true
        rel_fmt = relative_format([{c: _number(v) for c, v in r.items()} for r in t["stdev/true"].to_dict("records")])
        if math.isfinite(m.var):
            assert same(spread["exact"], exact_std, rel_fmt)
            assert bias["MC SE"] == se_bias
            assert spread["MC SE"] == se_std
        else:  # no SE where the variance is infinite; ∞ as the sign, not the browser's "Infinity"
            assert spread["exact"] == "∞"
            assert math.isnan(bias["MC SE"])
        if published is not None:
            pub = published.row(key)
            assert bias["Schulman"] == (pub.bias.text if pub else "—")
            assert spread["Schulman"] == (pub.std.text if pub else "—")
        else:
            assert "Schulman" not in bias.index


# ------------------------------------------------------------------ the default view


def test_default_run_shows_the_core_numbers():
    at = run_lab()
    clean(at)
    assert at.title[0].value == "Estimator Lab"
    assert not at.error and not at.warning
    assert at.text_input(key="q").value == DEFAULTS["q"]
    assert at.text_input(key="p").value == DEFAULTS["p"]
    assert at.multiselect(key="keys").value == list(DEFAULT_KEYS)
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1000, 200, 0, DEFAULT_KEYS)
    # Schulman's own pair: his published column is shown, and our exact column rounds to it
    spread = tables(at)["stdev/true"]
    assert list(spread["Schulman"]) == ["20", "1.42", "1.42"]
    assert spread.loc["k1", "exact"] == pytest.approx(20.0, abs=1e-9)
    # the active preset is named
    assert any(PRESETS["schulman-small"].title in i.value for i in at.info)
    # per-sample histograms and estimates per estimator, plus one running-mean chart
    assert len(at.get("vega_lite_chart")) == 2 * len(DEFAULT_KEYS) + 1


def test_every_chart_ships_few_rows_and_has_axis_titles():
    at = run_lab(keys=list(ALL_KEYS))
    clean(at)
    charts = at.get("vega_lite_chart")
    assert len(charts) == 2 * len(ALL_KEYS) + 1
    for el in charts:
        spec = json.loads(el.proto.spec)
        for layer in spec["layer"]:
            for channel in ("x", "y"):
                enc = layer.get("encoding", {}).get(channel, {})
                assert "title" not in enc or enc["title"], spec.get("title")
        titled = [
            layer["encoding"][c]["title"]
            for layer in spec["layer"]
            for c in ("x", "y")
            if "title" in layer.get("encoding", {}).get(c, {})
        ]
        assert len(titled) >= 2, titled  # an x and a y axis title
        for dataset in el.proto.datasets:
            assert dataset.data.data  # Arrow bytes; the row limit is checked on the builders


# ------------------------------------------------------------------ each widget reruns


@pytest.mark.parametrize(("key", "value"), [("n", 500), ("n", 10), ("R", 10), ("R", 1000)])
def test_each_sample_size_slider_reruns_with_the_core_numbers(key, value):
    at = run_lab()
    at.select_slider(key=key).set_value(value).run()
    clean(at)
    args = {**DEFAULTS, key: value}
    check_numbers(at, args["q"], args["p"], args["n"], args["R"], args["seed"], DEFAULT_KEYS)


def test_sample_sizes_move_in_one_two_five_steps_up_to_the_limits():
    at = run_lab()
    n_steps = at.select_slider(key="n").options
    assert n_steps[:4] == ["10", "20", "50", "100"] and n_steps[-1] == "10000000"
    r_steps = at.select_slider(key="R").options
    assert r_steps[0] == "10" and r_steps[-1] == "100000" and "200" in r_steps


@pytest.mark.parametrize("value", [7, 2**31 - 1])
def test_the_seed_reruns_with_the_core_numbers(value):
    at = run_lab()
    at.number_input(key="seed").set_value(value).run()
    clean(at)
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1000, 200, value, DEFAULT_KEYS)


def test_an_old_link_with_off_grid_sizes_reproduces_exactly():
    at = run_lab(n="1234", R="2")
    clean(at)
    assert not at.warning
    assert at.select_slider(key="n").value == 1234
    assert at.select_slider(key="R").value == 2
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1234, 2, 0, DEFAULT_KEYS)
    # moving R keeps the off-grid N
    at.select_slider(key="R").set_value(20).run()
    clean(at)
    assert at.select_slider(key="n").value == 1234
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1234, 20, 0, DEFAULT_KEYS)


def test_moving_a_distribution_slider_moves_p_in_the_spec_and_the_numbers():
    at = run_lab()
    assert at.slider(key="p.mu").value == 0.1
    at.slider(key="p.mu").set_value(1.0).run()
    clean(at)
    assert at.text_input(key="p").value == "normal(1,1)"
    assert any(PRESETS["schulman-large"].title in i.value for i in at.info)  # the preset lights up
    check_numbers(at, "normal(0,1)", "normal(1,1)", 1000, 200, 0, DEFAULT_KEYS)
    at.select_slider(key="q.sigma").set_value(1.5).run()
    clean(at)
    assert at.text_input(key="q").value == "normal(0,1.5)"
    check_numbers(at, "normal(0,1.5)", "normal(1,1)", 1000, 200, 0, DEFAULT_KEYS)


def test_choosing_estimators_and_lambda_reruns():
    at = run_lab()
    at.multiselect(key="keys").set_value(["k3_pq", "k_lambda", "k1"]).run()  # any click order
    clean(at)
    keys = ("k1", "k_lambda", "k3_pq")
    assert at.slider(key="lam").value == 0.5
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1000, 200, 0, keys, lam=0.5)
    at.slider(key="lam").set_value(-0.75).run()
    clean(at)
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1000, 200, 0, keys, lam=-0.75)
    # the λ* button sets the slider to kl_core's optimal λ itself (as Control variates does), and says it
    at.button(key="lam_star").click().run()
    clean(at)
    lam_star = lambda_star(parse(DEFAULTS["q"]), parse(DEFAULTS["p"])).value
    assert at.slider(key="lam").value == pytest.approx(lam_star, rel=1e-12)
    assert at.button(key="lam_star").label == "Set λ = λ* = " + lam_text(lam_star)
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1000, 200, 0, keys, lam=lam_star)


def test_no_estimator_chosen_asks_for_one():
    at = run_lab()
    at.multiselect(key="keys").set_value([]).run()
    clean(at)
    assert any("at least one estimator" in i.value for i in at.info)
    assert not at.get("vega_lite_chart")


def test_shared_axis_toggle_reruns():
    at = run_lab()
    at.toggle(key="sharex").set_value(False).run()
    clean(at)
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1000, 200, 0, DEFAULT_KEYS)
    assert len(at.get("vega_lite_chart")) == 2 * len(DEFAULT_KEYS) + 1


@pytest.mark.parametrize("preset_key", list(PRESETS))
def test_each_preset_button_sets_q_and_p(preset_key):
    preset = PRESETS[preset_key]
    at = run_lab(keys=list(ALL_KEYS))
    at.button(key=f"preset_{preset_key}").click().run()
    clean(at)
    assert not at.error
    assert at.text_input(key="q").value == preset.q_spec
    assert at.text_input(key="p").value == preset.p_spec
    assert any(preset.title in i.value for i in at.info)
    check_numbers(at, preset.q_spec, preset.p_spec, 1000, 200, 0, ALL_KEYS, lam=0.5)


def test_heavy_tails_warns_that_the_variance_is_infinite_and_draws_no_curve():
    preset = PRESETS["heavy-tails"]
    at = run_lab(q=preset.q_spec, p=preset.p_spec, keys=["k1", "k3"])
    clean(at)
    (warning,) = at.warning
    assert "Var(k3)" in warning.value and "infinite" in warning.value
    assert "r^2" in warning.value  # the core's reason, from Moments.note
    assert estimator_moments("k3", preset.q, preset.p).note.split(": ", 1)[1] in warning.value
    spread = tables(at)["stdev/true"]
    assert spread.loc["k3", "exact"] == "∞"
    assert any("No curve: Var(k3) is infinite" in m.value for m in at.markdown)
    check_numbers(at, preset.q_spec, preset.p_spec, 1000, 200, 0, ("k1", "k3"))


def test_a_preset_travels_in_the_link_as_q_and_p():
    preset = PRESETS["next-token"]
    at = run_lab(q=preset.q_spec, p=preset.p_spec)
    clean(at)
    assert any(preset.title in i.value for i in at.info)
    check_numbers(at, preset.q_spec, preset.p_spec, 1000, 200, 0, DEFAULT_KEYS)


# ------------------------------------------------------------------ hard inputs


def test_p_equal_q_explains_that_the_ratios_are_undefined():
    at = run_lab(p="normal(0,1)", keys=list(ALL_KEYS))
    clean(at)
    assert any("p = q" in i.value and "undefined" in i.value for i in at.info)
    assert metrics(at)["Exact KL[q‖p]"] == "0"
    t = tables(at)
    assert "bias/true" not in t  # only the absolute table
    assert (t["absolute"]["mean (MC)"] == 0.0).all()
    check_numbers(at, "normal(0,1)", "normal(0,1)", 1000, 200, 0, ALL_KEYS, lam=0.5)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"p": "banana(1)"}, "unknown family"),
        ({"q": "normal(0,-1)"}, "sigma must be > 0"),
        ({"q": "categorical(0,1)", "p": "normal(0,1)"}, "both be continuous or both be categorical"),
    ],
)
def test_an_invalid_spec_stops_with_a_clear_error(query, message):
    at = run_lab(**query)
    clean(at)
    assert message in at.error[0].value
    assert not at.get("vega_lite_chart")


def test_typing_an_invalid_spec_then_fixing_it():
    at = run_lab()
    at.text_input(key="p").set_value("normal(1,").run()
    clean(at)
    assert at.error
    at.text_input(key="p").set_value("normal(1,1)").run()
    clean(at)
    assert not at.error
    check_numbers(at, "normal(0,1)", "normal(1,1)", 1000, 200, 0, DEFAULT_KEYS)


def test_too_many_draws_are_refused_with_a_message():
    at = run_lab(n="10000000", R="100")
    clean(at)
    assert "Lower N or R" in at.error[0].value


# kl_core's quadrature warns while it overflows on the μ = 30 pair; the page reports it
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize(
    ("q_spec", "p_spec", "expect"),
    [
        ("t(1,0,1)", "normal(0,1)", "KL[q‖p] is infinite"),  # Cauchy sampler
        ("normal(0,1)", "t(2,0,1)", "KL[p‖q] is infinite"),
        ("normal(0,1)", "normal(30,1)", "larger than the largest double"),
        ("categorical(0,0,0)", "categorical(1,1,1)", None),  # p = q up to rounding
        ("normal(0,1)", "normal(0,0.001)", None),
        ("mixture(0.5:-1:1,0.5:1:1)", "laplace(0,1)", None),
    ],
)
def test_extreme_pairs_give_a_message_not_a_traceback(q_spec, p_spec, expect):
    at = run_lab(q=q_spec, p=p_spec, keys=list(ALL_KEYS))
    clean(at)
    assert not at.error
    if expect:
        assert any(expect in w.value for w in at.warning), [w.value for w in at.warning]


def test_a_bad_link_value_falls_back_with_a_visible_note():
    at = run_lab(n="abc")
    clean(at)
    assert at.select_slider(key="n").value == 1000
    assert any("n=abc" in w.value for w in at.warning)
    check_numbers(at, DEFAULTS["q"], DEFAULTS["p"], 1000, 200, 0, DEFAULT_KEYS)


def test_a_deep_link_sets_every_widget():
    query = {"q": "normal(0,1)", "p": "normal(1,1)", "n": "400", "R": "50", "seed": "11",
             "keys": ["k2", "k_lambda"], "lam": "0.25", "sharex": "false"}
    at = run_lab(**query)
    clean(at)
    assert not at.warning
    assert at.select_slider(key="n").value == 400
    assert at.select_slider(key="R").value == 50
    assert at.number_input(key="seed").value == 11
    assert at.slider(key="lam").value == 0.25
    assert at.toggle(key="sharex").value is False
    check_numbers(at, "normal(0,1)", "normal(1,1)", 400, 50, 11, ("k2", "k_lambda"), lam=0.25)


# ------------------------------------------------------------------ chart builders


@pytest.fixture(scope="module")
def run_small():
    q, p = parse("normal(0,1)"), parse("normal(1,1)")
    return q, p, simulate(q, p, 1000, repeats=300, seed=1, keys=ALL_KEYS, lam=0.5)


@pytest.mark.parametrize("key", ALL_KEYS)
def test_batch_means_histogram_is_valid_and_small(run_small, key):
    q, p, sim = run_small
    m = estimator_moments(key, q, p, lam=0.5 if key == "k_lambda" else None)
    approx = batch_mean_normal(m.mean, m.var, 1000)
    chart = batch_means_histogram(
        sim[key].batch_means, key, n=1000, approx=approx, true_value=sim[key].target
    )
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    json.dumps(spec, allow_nan=False)
    assert all(len(rows) <= MAX_ROWS for rows in spec["datasets"].values())
    assert set(spec["datasets"]) == {"bins", "curve"}
    assert COLORS[key] in json.dumps(spec)
    assert spec["title"]["text"] == ESTIMATORS[key].name
    assert spec["layer"][0]["encoding"]["x"]["title"]
    assert spec["layer"][0]["encoding"]["y"]["title"]
    assert spec["config"]["axis"]["labelFontSize"] >= 13
    # the curve is the normal density, scaled to the share of estimates per bin
    lo, hi = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    width = (hi - lo) / len(spec["datasets"]["bins"])
    top = max(spec["datasets"]["curve"], key=lambda r: r["share"])
    assert top["share"] == pytest.approx(float(approx.pdf([top["x"]])[0]) * width)


def test_batch_means_histogram_without_a_curve():
    bm = np.random.default_rng(0).standard_normal(200)
    inf = batch_mean_normal(0.1, math.inf, 100)
    spec = batch_means_histogram(bm, "k3", n=100, approx=inf, true_value=0.1).to_dict()
    assert "curve" not in spec["datasets"]
    assert "Var = ∞" in " ".join(spec["title"]["subtitle"])
    spec = batch_means_histogram(np.zeros(50), "k1", n=10, approx=batch_mean_normal(0, 0, 10)).to_dict()
    assert "curve" not in spec["datasets"]


def test_domains_never_too_narrow_to_bin():
    lo, hi = usable_domain((1e-16, 1e-16 + 2.5e-32))  # equal up to rounding
    assert hi - lo >= 0.1 and lo < 1e-16 < hi
    np.histogram(np.full(10, 1e-16), bins=40, range=usable_domain((0.0, 2.5e-32)))
    assert usable_domain((0.1, 0.2)) == (0.1, 0.2)
    lo, hi = batch_means_domain(np.full(10, 1e-16), include=(2.5e-32,))
    np.histogram(np.full(10, 1e-16), bins=40, range=(lo, hi))  # does not raise


def test_running_means_chart_is_valid_with_every_estimator(run_small):
    _, _, sim = run_small
    runs = [(k, sim[k].running_n, sim[k].running_mean, sim[k].running_se) for k in ALL_KEYS]
    chart = running_means_chart(runs, targets=[("KL[q‖p]", sim.true_kl), ("KL[p‖q]", sim.true_kl_pq)])
    spec = chart.to_dict()
    json.dumps(spec, allow_nan=False)
    rows = spec["datasets"]["run"]
    assert len(rows) <= MAX_ROWS
    assert {r["estimator"] for r in rows} == {ESTIMATORS[k].name for k in ALL_KEYS}
    assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
    assert spec["layer"][0]["encoding"]["x"]["title"] and spec["layer"][0]["encoding"]["y"]["title"]
    colours = _line_layer(spec)["encoding"]["color"]["scale"]["range"]
    assert colours == [COLORS[k] for k in ALL_KEYS]
    # the band is ±2 SE around the running mean; null at n = 1 where the SE is
    first, last = rows[0], [r for r in rows if r["estimator"] == "k1"][-1]
    assert first["n"] == 1 and first["lo"] is None
    assert last["hi"] == pytest.approx(sim["k1"].running_mean[-1] + 2 * sim["k1"].running_se[-1])


def test_running_means_show_k2_over_k3_and_cut_no_band(run_small):
    """Each line has its estimator's dash (charts.palette: k3 solid, k1 dotted, k2 dashed), the
    dashed ones drawn after k3's (k2 hid under it); the n axis starts at RUNNING_FROM, where the
    y-range starts, so every band shown fits (the k1 band was cut)."""
    _, _, sim = run_small
    keys = ("k1", "k2", "k3")
    runs = [(k, sim[k].running_n, sim[k].running_mean, sim[k].running_se) for k in keys]
    spec = running_means_chart(runs, targets=[("KL[q‖p]", sim.true_kl)]).to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks.index("rule") < marks.index("line")  # the truth under the means: near it, k2 and k3 hid (a review)
    dash = _line_layer(spec)["encoding"]["strokeDash"]["scale"]
    dashes = dict(zip(dash["domain"], dash["range"], strict=True))
    assert dashes == {k: palette.dash(k) for k in keys} and dashes["k3"] == [1, 0]
    assert len({tuple(d) for d in dashes.values()}) == 3  # colour is not the only cue
    rows = spec["datasets"]["run"]
    order = list(dict.fromkeys(r["estimator"] for r in rows))
    assert order.index("k2") > order.index("k3") < order.index("k1")  # rows drawn later lie on top
    x_lo, _x_hi = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    y_lo, y_hi = spec["layer"][0]["encoding"]["y"]["scale"]["domain"]
    assert x_lo == RUNNING_FROM
    shown = [r for r in rows if r["n"] >= x_lo and r["lo"] is not None]
    assert shown and all(y_lo <= r["lo"] and r["hi"] <= y_hi for r in shown)
    assert spec["layer"][0]["encoding"]["color"]["legend"]["columns"] == 3


def test_panel_titles_are_never_cut_at_a_narrow_first_layout(run_small):
    _, _, sim = run_small
    per_sample = per_sample_histogram(sim["k1"].samples, "k1", true_value=sim.true_kl).to_dict()
    estimates = batch_means_histogram(sim["k1"].batch_means, "k1", n=1000, approx=None).to_dict()
    for spec in (per_sample, estimates):
        assert spec["title"]["limit"] == TITLE_LIMIT >= 250  # Vega's default cut at ~120 px


def test_numpy_rows_give_the_same_json():
    values = np.random.default_rng(3).standard_normal(5000)
    plain = per_sample_histogram(values, "k1", true_value=0.5)
    before = json.dumps(plain.to_dict(), sort_keys=True)
    after = json.dumps(with_numpy_rows(plain).to_dict(), sort_keys=True)
    assert before == after


def test_presets_stay_usable_while_a_field_holds_an_invalid_spec():
    at = run_lab(p="normal(0,")
    clean(at)
    assert at.error
    at.button(key="preset_schulman-large").click().run()
    clean(at)
    assert not at.error
    assert at.text_input(key="p").value == "normal(1,1)"
    assert metrics(at)["Exact KL[q‖p]"] == "0.5"


def test_an_untrustworthy_error_bar_is_flagged_with_the_exact_sd():
    # N(0,1) vs N(3,1): Var(k3) is finite but its kurtosis is ~4e15, so a ±SE from
    # 1,000 draws understates the spread (kl_core.estimation.reliability).
    at = run_lab(q="normal(0,1)", p="normal(3,1)", R="20")
    clean(at)
    (warn,) = [w.value for w in at.warning if "can't be trusted" in w.value]
    assert "±SE of k3 can't be trusted at N = 1,000" in warn
    sd = estimator_moments("k3", parse("normal(0,1)"), parse("normal(3,1)")).std
    assert f"Exact SD {sd:.4g}" in warn
    trusted = tables(at)["bias/true"]["SE trusted"].to_dict()
    assert trusted["k1"] and not trusted["k3"]


def test_schulmans_table_has_every_error_bar_trusted():
    at = run_lab(p="normal(1,1)", R="20")
    clean(at)
    assert not [w for w in at.warning if "can't be trusted" in w.value]
    assert tables(at)["bias/true"]["SE trusted"].all()


def test_no_lambda_star_where_no_lambda_helps():
    at = run_lab(q="t(3,0,1)", p="normal(0,1)", keys=["k1", "k_lambda"], R="20")
    clean(at)
    assert metrics(at)["λ*, least-variance λ"] == "undefined"
    assert not [b for b in at.button if b.key == "lam_star"]
    assert any(c.value.startswith("There is no λ*") for c in at.caption)


# ------------------------------------------------------------------ the audit's settings


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def answer_text(at: AppTest) -> str:
    (text,) = [m.value for m in at.markdown if m.value.startswith("**Answer**")]
    return text


def test_an_untrusted_error_bar_is_kept_out_of_the_answers_verdicts():
    """N(0, 0.1) vs N(0.7, 0.1) at the defaults: κ(k3) = 1.3e85, so "SE trusted" is unticked. The answer
    said "k3 (23.53 against KL[q‖p] = 24.5, 30.5 standard errors off)" and "k1 0.0%" (54 of 200,000
    values), the warning "its SD with about 5.752e+40" and "needs N ≥ 2.647e+85"."""
    at = run_lab(q="normal(0,0.1)", p="normal(0.7,0.1)")
    clean(at)
    assert not tables(at)["bias/true"]["SE trusted"]["k3"]
    text = answer_text(at)
    assert "k3 (" not in text and "No trustworthy error bar" in text and text.endswith("): k3.")
    assert "negative for k1 0.027%" in text
    (warn,) = [w.value for w in at.warning if "can't be trusted" in w.value]
    assert "5.752e+40" not in warn and "its SD with" not in warn
    assert "0.027% of single values are negative" in markdown(at)
    assert "where **SE trusted** is ticked" in markdown(at)


def test_a_variance_past_a_double_is_not_called_infinite():
    """q = N(−5, 0.1), p = N(5, 0.1): Var(k3) is finite but overflows."""
    at = run_lab(q="normal(-5,0.1)", p="normal(5,0.1)", R="20")
    clean(at)
    text = markdown(at)
    assert "No error bar (a variance too large for a double): k3." in answer_text(at)
    assert "the exact variance is infinite" not in text and "finite but too large for a double" in text


def test_the_per_sample_intro_and_notes_follow_the_setting():
    """kλ at λ = 1 is k3, never negative: the page said "a single value of k1 or kλ can be [negative]"."""
    at = run_lab(keys=["k_lambda"], lam="1", R="20")
    clean(at)
    assert at.slider(key="lam").value == 1.0
    text = markdown(at)
    assert "k1 or kλ can be" not in text and "in this run no single value is either" in text
    # one distribution written two ways: KL 0, rounding noise in log r; no tables, so no "what to notice"
    at = run_lab(p="mixture(0.5:0:1,0.5:0:1)", R="20")
    clean(at)
    text = markdown(at)
    assert "standard errors off" not in answer_text(at) and "Noise around 0, not a bias" in answer_text(at)
    assert "every estimate is exactly the same" not in text and "What to notice" not in text


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_a_standard_deviation_whose_variance_is_past_a_double_is_shown():
    """q = N(0,1), p = N(30,1): Var(k3) = e^{900} − 901 overflows, σ ≈ e^{450} does not. §4 printed
    "inf" for stdev (exact) and stdev/true, and the notes said "(shown as ∞)"."""
    at = run_lab(q="normal(0,1)", p="normal(30,1)", keys=list(ALL_KEYS), R="20")
    clean(at)
    q, p = parse("normal(0,1)"), parse("normal(30,1)")
    lam = at.slider(key="lam").value
    tab = tables(at)
    for key in ("k3", "k_lambda", "k3_pq"):
        m = estimator_moments(key, q, p, lam if key == "k_lambda" else None)
        assert math.isinf(m.var)
        name = ESTIMATORS[key].name
        sd = math.exp(0.5 * m.log_var)
        # past 2^53 Streamlit's number columns show an error cell: the column is text, 4 digits (lab.ui.table)
        assert tab["absolute"].loc[name, "stdev (exact)"] == number(sd)
        assert tab["stdev/true"].loc[name, "exact"] == number(sd / 450.0)
    assert tab["stdev/true"].loc["k3", "exact"] == "6.016e+192"  # e^450 / 450
    assert tab["stdev/true"].loc["k1", "exact"] == number(math.sqrt(900.0) / 450.0)  # the other rows too
    text = "\n".join([markdown(at), *(w.value for w in at.warning)])
    assert "shown as ∞" not in text
    assert "Their square roots, the per-sample standard deviations, fit in a double: §4 shows them." in text
    assert "No error bar (a variance too large for a double): k3, kλ, k3 (KL[p‖q])." in answer_text(at)


def _line_layer(spec: dict) -> dict:
    """The running means' line layer (the reference rules sit under it, between the band and the lines)."""
    return next(layer for layer in spec["layer"] if layer["mark"]["type"] == "line")
