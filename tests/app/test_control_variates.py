"""The "Control variates" page: it runs, every widget reruns it, its numbers are the core's.

Also the page's chart builders (``charts/control_variates.py``): each spec
validates against the Vega-Lite schema (``lab.ui.chart`` sends it unvalidated),
stays under the row limit, has axis titles and uses the palette's colours.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from charts.control_variates import (
    LambdaMark,
    gain_chart,
    k_lambda_histogram,
    k_lambda_profile,
    lambda_star_chart,
    nonfinite_runs,
    variance_parabola,
)
from charts.histograms import MAX_ROWS
from charts.palette import COLORS
from kl_core.estimation import estimators
from kl_core.estimation.bregman import k_lambda_negative_interval
from kl_core.estimation.control_variates import gain_along_path, lambda_parabola
from kl_core.estimation.distributions import parse
from kl_core.estimation.montecarlo import simulate
from lab.format import share
from lab.notes import control_variates as notes

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/control-variates.py"
CATEGORICAL = {"q": "categorical(2,1,0.5,0,-1)", "p": "categorical(1,0.5,0.5,0.5,0)"}


def open_page(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update(query)
    return at.run()


@pytest.fixture(scope="module")
def default_page() -> AppTest:
    """The page at its defaults (shared: these tests only read it)."""
    return open_page()


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metrics(at: AppTest) -> dict[str, str]:
    """The page's metrics, label → shown value."""
    return {m.label: m.value for m in at.metric}


def metric(at: AppTest, start: str) -> str:
    (value,) = [v for k, v in metrics(at).items() if k.startswith(start)]
    return value


def captions(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def fmt(x: float) -> str:
    if math.isinf(x):
        return "∞"
    return f"{x:.4g}"


def specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


# ------------------------------------------------------------------ the page


def test_default_run_shows_the_core_numbers(default_page):
    at = default_page
    clean(at)
    assert at.title[0].value == "Control variates"
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(1,1)"))
    # Schulman's large-KL case: λ* = 1/(e − 1), Var(k3) = e − 2, gain e − 1
    assert par.lam_star == pytest.approx(1 / (math.e - 1), rel=1e-12)
    assert metric(at, "λ*") == "0.582" == fmt(par.lam_star)
    assert metric(at, "Var(kλ), λ = 0.5") == fmt(float(par.variance(0.5))) == "0.4296"
    assert metric(at, "Var(k3), λ = 1") == fmt(par.var_k3) == "0.7183"
    assert metric(at, "Var(kλ*)") == fmt(par.var_optimal) == "0.418"
    assert metric(at, "Var(k3) / Var(kλ*)") == f"×{par.gain:.4g}" == "×1.718"
    assert at.slider(key="lam").value == 0.5
    assert len(at.get("vega_lite_chart")) == 6
    assert not at.warning


def test_histogram_and_profile_captions_carry_the_core_numbers(default_page):
    at = default_page
    sim = simulate("normal(0,1)", "normal(1,1)", 10_000, seed=0, lam=0.5,
                   keys=("k_lambda", "k3"), sample_size=10_000)
    text = captions(at)
    assert f"{sim['k_lambda'].neg_fraction:.1%} of the 10,000 values are negative" in text
    assert sim["k3"].neg_fraction == 0.0
    lo, hi = k_lambda_negative_interval(0.5)
    assert f"kλ < 0 exactly when {fmt(lo)} < log r < {fmt(hi)}" in text
    # the histogram subtitle is the simulation's
    (hist,) = [s for s in specs(at) if s.get("title", {}).get("text") == "kλ at λ = 0.5"]
    assert hist["title"]["subtitle"][0] == f"{share(sim['k_lambda'].neg_fraction)} of values < 0"


def test_the_gain_chart_marks_schulmans_large_case(default_page):
    text = captions(default_page)
    curve = gain_along_path("shift", np.linspace(0.05, 3.0, 60))
    i = int(np.argmin(np.abs(curve.thetas - 1.0)))
    assert curve.gain[i] == pytest.approx(math.e - 1, rel=1e-9)
    assert f"×{curve.gain[i]:.4g} at Schulman's μ = 1" in text


@pytest.mark.parametrize("lam", [-1.0, 0.0, 0.25, 1.0, 2.0, 3.0])
def test_every_lambda_shows_its_exact_variance(lam):
    at = open_page(lam=str(lam))
    clean(at)
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(1,1)"))
    assert at.slider(key="lam").value == lam
    assert metric(at, "Var(kλ), λ =") == fmt(float(par.variance(lam)))
    if lam == 1.0:
        assert "no sample can be negative" in captions(at)


def test_infinite_chi2_warns_and_reports_infinite_variances():
    at = open_page(p="normal(0,1.5)", lam="1")
    clean(at)
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(0,1.5)"))
    assert math.isinf(par.var_r) and par.lam_star == 0.0
    (warning,) = at.warning
    assert r"$\chi^2(p\|q) = \mathrm{Var}_q(r)$ is infinite" in warning.value
    assert "every λ ≠ 0" in warning.value
    assert metric(at, "λ*") == "0"
    assert metric(at, "Var(k3), λ = 1") == "∞"
    assert metric(at, "Var(kλ*)") == fmt(par.var_log_r)
    assert metric(at, "Var(k3) / Var(kλ*)") == "∞"
    parabola = specs(at)[0]
    assert "only the point at λ = 0 is finite" in parabola["title"]["text"]


def test_infinite_var_log_r_makes_every_lambda_infinite():
    at = open_page(q="t(3,0,1)", p="normal(0,1)")
    clean(at)
    (warning,) = at.warning
    assert "Var(log r) is infinite" in warning.value
    assert metric(at, "λ*") == "undefined"
    assert metric(at, "Var(k3), λ = 1") == "∞"
    assert metric(at, "Var(k3) / Var(kλ*)") == "—"
    # No λ* exists, so no button offers it, and the page says why.
    assert not [b for b in at.button if b.key == "set_star"]
    assert any("λ* does not exist here" in c.value and "no λ helps" in c.value for c in at.caption)


def test_p_equal_q_is_explained():
    at = open_page(p="normal(0,1)")
    clean(at)
    assert any("p = q" in i.value for i in at.info)
    assert metric(at, "Var(k3), λ = 1") == "0"
    assert metric(at, "Var(k3) / Var(kλ*)") == "—"  # 0/0: undefined at p = q (the limit depends on the path)


def test_categorical_pair_runs_with_the_core_numbers():
    at = open_page(**CATEGORICAL, lam="2.5")
    clean(at)
    par = lambda_parabola(parse(CATEGORICAL["q"]), parse(CATEGORICAL["p"]))
    assert metric(at, "λ*") == notes.lam_text(par.lam_star)  # the λ everywhere else on the page
    assert metric(at, "Var(kλ), λ = 2.5") == fmt(float(par.variance(2.5)))
    lo, hi = k_lambda_negative_interval(2.5)
    assert lo < 0.0 == hi
    assert f"{fmt(lo)} < log r < {fmt(hi)}" in captions(at)


@pytest.mark.parametrize(
    ("q", "p"),
    [
        ("normal(0,1)", "normal(0,0.01)"),
        ("normal(0,1)", "normal(0,100)"),
        ("categorical(0,0)", "categorical(50,-50)"),
        ("mixture(0.5:-3:0.5,0.5:3:0.5)", "normal(0,1)"),
        ("t(1,0,1)", "normal(0,1)"),
        ("laplace(0,1)", "laplace(5,0.1)"),
    ],
)
def test_extreme_pairs_run_cleanly(q, p):
    at = open_page(q=q, p=p, lam="3")
    clean(at)
    par = lambda_parabola(parse(q), parse(p))
    assert metric(at, "Var(kλ), λ = 3") == fmt(float(par.variance(3.0)))


def test_a_pair_too_far_apart_for_the_exact_variances_says_so():
    at = open_page(p="normal(30,1)")
    assert not at.exception
    # χ² = e^900 − 1 overflows a double: the core reports inf and the page explains it.
    assert any("is too large for a double for this pair" in w.value and "is infinite" not in w.value
               for w in at.warning)


def test_changing_every_widget_reruns_cleanly():
    at = open_page()
    at.slider(key="lam").set_value(2.0).run()
    clean(at)
    assert metric(at, "Var(kλ), λ = 2") == fmt(
        float(lambda_parabola(parse("normal(0,1)"), parse("normal(1,1)")).variance(2.0))
    )
    at.select_slider(key="n").set_value(2_000).run()
    clean(at)
    assert "of the 2,000 values are negative" in captions(at)
    at.slider(key="p.mu").set_value(0.5).run()
    clean(at)
    assert at.text_input(key="p").value == "normal(0.5,1)"
    assert metric(at, "Var(k3), λ = 1") == fmt(lambda_parabola(parse("normal(0,1)"), parse("normal(0.5,1)")).var_k3)
    at.number_input(key="seed").set_value(7).run()
    clean(at)
    for path in ("Gaussian scale change", "Categorical logit direction", "Gaussian mean shift"):
        at.button_group(key="path").set_value(path).run()
        clean(at)
    at.text_input(key="p").set_value("laplace(0,1)").run()
    clean(at)
    at.text_input(key="q").set_value("normal(0,2)").run()
    clean(at)
    par = lambda_parabola(parse("normal(0,2)"), parse("laplace(0,1)"))
    assert metric(at, "λ*") == fmt(par.lam_star)


def test_preset_buttons_set_lambda():
    at = open_page()
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(1,1)"))
    (star,) = [b for b in at.button if b.key == "set_star"]
    star.click().run()
    clean(at)
    assert at.slider(key="lam").value == pytest.approx(par.lam_star, rel=1e-12)
    assert metric(at, "Var(kλ), λ =") == fmt(par.var_optimal)
    (k3,) = [b for b in at.button if b.key == "set_k3"]
    k3.click().run()
    assert at.slider(key="lam").value == 1.0
    assert "no sample can be negative" in captions(at)
    (k1,) = [b for b in at.button if b.key == "set_k1"]
    k1.click().run()
    clean(at)
    assert at.slider(key="lam").value == 0.0
    assert metric(at, "Var(kλ), λ = 0") == fmt(par.var_log_r) == "1"


def test_a_bad_link_value_falls_back_with_a_note():
    at = open_page(lam="abc", p="normal(0,")
    assert not at.exception
    # the bad spec is named at its field; the controls stay, the results wait
    assert any("missing closing bracket" in e.value for e in at.error)
    assert at.slider(key="lam") and at.select_slider(key="n")
    assert not at.metric
    at = open_page(lam="9")
    clean(at)
    assert at.slider(key="lam").value == 0.5
    assert any("lam=9" in w.value for w in at.warning)


# ------------------------------------------------------------------ builders


def _check(spec: dict) -> None:
    assert all(len(rows) <= MAX_ROWS for rows in spec["datasets"].values())
    assert spec["config"]["axis"]["labelFontSize"] >= 13
    json.dumps(spec, allow_nan=False)


def _axis_titles(spec: dict) -> list[str]:
    out = []
    for layer in spec["layer"]:
        for ch in ("x", "y"):
            title = layer.get("encoding", {}).get(ch, {}).get("title")
            if title:
                out.append(title)
    return out


def test_variance_parabola_spec():
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(1,1)"))
    lams = np.linspace(-1, 3, 241)
    marks = [
        LambdaMark("λ = 0: k1", 0.0, par.var_log_r, "k1"),
        LambdaMark("λ = 1: k3", 1.0, par.var_k3, "k3"),
        LambdaMark("λ*", par.lam_star, par.var_optimal, None),
    ]
    spec = variance_parabola(lams, par.variance(lams), marks).to_dict()
    _check(spec)
    assert len(_axis_titles(spec)) == 2
    assert COLORS["k3"] in json.dumps(spec) and COLORS["k_lambda"] in json.dumps(spec)
    top = spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1]
    assert top >= 1.5 * par.var_log_r  # every marked point has headroom


def test_variance_parabola_with_infinite_variances():
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(0,1.5)"))
    lams = np.linspace(-1, 3, 241)
    marks = [LambdaMark("k1", 0.0, par.var_log_r, "k1"),
             LambdaMark("k3", 1.0, par.var_k3, "k3")]
    spec = variance_parabola(lams, par.variance(lams), marks, infinite_note="∞").to_dict()
    _check(spec)
    assert spec["title"]["text"] == "∞"
    assert spec["datasets"][spec["layer"][2]["data"]["name"]][1]["var"] is None
    with pytest.raises(ValueError, match="same length"):
        variance_parabola([0.0, 1.0], [1.0], marks)


def test_histogram_titles_and_legends_fit_a_phone():
    values = np.random.default_rng(0).standard_normal(2000)
    assert k_lambda_histogram(values, 0.5, true_value=0.5).to_dict()["title"]["limit"] >= 250
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(1,1)"))
    lams = np.linspace(-1, 3, 41)
    spec = variance_parabola(lams, par.variance(lams), notes.parabola_marks(par, 0.5)).to_dict()
    assert "min(2," in spec["layer"][1]["encoding"]["color"]["legend"]["columns"]["expr"]  # four names, two to a row at most


def test_k_lambda_histogram_is_titled_with_lambda():
    values = estimators.k_lambda(np.random.default_rng(0).normal(size=50_000), 0.5)
    spec = k_lambda_histogram(values, 0.5, true_value=0.5).to_dict()
    _check(spec)
    assert spec["title"]["text"] == "kλ at λ = 0.5"
    assert spec["title"]["subtitle"][0] == f"{share(float(np.mean(values < 0)))} of values < 0"
    assert COLORS["k_lambda"] in json.dumps(spec)
    spec3 = k_lambda_histogram(estimators.k3(np.zeros(10)), 1.0, key="k3").to_dict()
    assert spec3["title"]["text"] == "k3 = kλ at λ = 1"
    # λ* = 0.9999998 (CV's near-equal pair) is not k3: the title printed it "λ = 1" (format .4g)
    near = k_lambda_histogram(values, 0.9999998, true_value=0.5).to_dict()
    assert near["title"]["text"] == "kλ at λ = 0.9999998"


def test_k_lambda_profile_spec():
    grid = np.linspace(-2.5, 2.5, 501)
    curves = [
        ("kλ", estimators.k_lambda(grid, 0.5), "k_lambda"),
        ("k3", estimators.k3(grid), "k3"),
        ("k1", estimators.k1(grid), "k1"),
    ]
    spec = k_lambda_profile(grid, curves, negative=k_lambda_negative_interval(0.5)).to_dict()
    _check(spec)
    assert "log r" in " ".join(_axis_titles(spec))
    lo, hi = k_lambda_negative_interval(0.5)
    assert spec["datasets"][spec["layer"][1]["data"]["name"]][0]["logr2"] == pytest.approx(hi)
    # λ ≤ 0: the band runs to the right edge of the grid
    spec0 = k_lambda_profile(grid, curves[1:], negative=(0.0, math.inf)).to_dict()
    band = spec0["datasets"][spec0["layer"][1]["data"]["name"]][0]
    assert band["logr2"] == 2.5
    with pytest.raises(ValueError, match="has 3 values"):
        k_lambda_profile(grid, [("x", [1.0, 2.0, 3.0], "k1")])


@pytest.mark.parametrize("path", ["shift", "scale", "logit"])
def test_gain_and_lambda_star_specs(path):
    th = np.linspace(-0.6, 0.6, 30) if path == "scale" else np.linspace(0.05, 3, 30)
    curve = gain_along_path(path, th)
    spec = gain_chart(curve.thetas, curve.gain, theta_title="θ", true_kl=curve.true_kl,
                      lam_star=curve.lam_star, current=(1.0, 1.7)).to_dict()
    _check(spec)
    assert spec["layer"][-3]["encoding"]["y"]["scale"]["type"] == "log"
    infinite = "infinite" in spec["datasets"] or any(
        "infinite" in str(layer.get("data")) for layer in spec["layer"]
    )
    assert infinite == (path == "scale")
    spec2 = lambda_star_chart(curve.thetas, curve.lam_star, theta_title="θ",
                              infinite=curve.var_k3).to_dict()
    _check(spec2)
    assert COLORS["k3"] in json.dumps(spec2)


def test_nonfinite_runs_cover_each_stretch():
    x = np.arange(10.0)
    y = np.array([1, np.inf, np.inf, 1, 1, 1, np.nan, 1, 1, np.inf])
    assert nonfinite_runs(x, y) == [(0.5, 2.5), (5.5, 6.5), (8.5, 9.0)]
    assert nonfinite_runs(x, np.ones(10)) == []


def test_a_chi2_past_a_double_shows_no_infinite_variance():
    """q = N(0, 0.1), p = N(2.7, 0.1): χ² = e^729 − 1 is finite; the metrics said Var(kλ) = ∞,
    Var(k3) = ∞ and Var(k3)/Var(kλ*) = ∞ beside "Every Var(kλ) is finite", and the note put the
    overflow at Gaussians "more than 26.6 apart" (here 2.7 apart, 27 standard deviations)."""
    at = open_page(q="normal(0,0.1)", p="normal(2.7,0.1)", lam="0.5")
    clean(at)
    (warning,) = at.warning
    assert "more than 26.6 standard deviations apart" in warning.value
    assert "26.6 apart" not in warning.value
    assert metric(at, "Var(kλ), λ = 0.5") == "too large for a double"
    assert metric(at, "Var(k3), λ = 1") == "too large for a double"
    assert metric(at, "Var(k3) / Var(kλ*)") == "> " + fmt(1.7976931348623157e308 / 729)
    assert "∞" not in metrics(at).values()


def test_lambda_near_one_is_not_printed_as_one_and_no_negative_draw_is_said():
    """?lam=0.9999 printed "For λ = 1, kλ < 0 exactly when …", "the 0.0% negative draws" and a
    band "kλ < 0 for λ = 1"."""
    at = open_page(lam="0.9999")
    clean(at)
    text = captions(at)
    assert "For λ = 0.9999, kλ < 0 exactly when" in text and "For λ = 1," not in text
    assert "None of the draws above fell there" in text and "0.0%" not in text
    assert metric(at, "Var(kλ), λ = 0.9999") == fmt(
        float(lambda_parabola(parse("normal(0,1)"), parse("normal(1,1)")).variance(0.9999)))
    profile = next(s for s in specs(at) if "kλ < 0 for λ = 0.9999" in json.dumps(s, ensure_ascii=False))
    assert "kλ < 0 for λ = 1\"" not in json.dumps(profile, ensure_ascii=False)


def test_the_n_help_says_the_histograms_use_a_subsample():
    """N goes to 1,000,000; the help said the histograms are made of N samples (at most 20,000)."""
    at = open_page()
    (n,) = [w for w in at.select_slider if w.key == "n"]
    assert "at most 20,000 of them" in n.help and "are made of" not in n.help


def test_a_pair_too_close_to_resolve_shows_no_lambda_star_or_gain():
    """q = N(0, 1), p = N(0, 1.00000001²): λ* 0.999999993 (exact 0.99999998) and ×1.467 (≈ 7/3)."""
    at = open_page(p="normal(0,1.00000001)")
    clean(at)
    assert metric(at, "λ*") == "not resolved"
    assert metric(at, "Var(kλ*)") == "—" and metric(at, "Var(k3) / Var(kλ*)") == "—"
    assert not [b for b in at.button if b.key == "set_star"]
    assert "1.467" not in captions(at) and "0.999999993" not in captions(at)


def test_var_lam_near_p_equal_q_agrees_with_the_direct_variances():
    """q = N(0, 1), p = N(0, 1.0000001²) at λ = 1: Var(kλ) 6.394e-24 beside Var(k3) 1.4e-27, and
    λ* printed "1" (it is 0.9999998)."""
    at = open_page(p="normal(0,1.0000001)", lam="1")
    clean(at)
    assert metric(at, "Var(kλ), λ = 1") == metric(at, "Var(k3), λ = 1") == "1.4e-27"
    assert metric(at, "λ*") == "0.9999998"
    assert [b.label for b in at.button if b.key == "set_star"] == ["λ = λ* = 0.9999998 (least variance)"]


def test_a_chi2_past_a_double_prints_the_variances_that_fit_and_a_positive_lambda_star():
    """q = N(0, 1), p = N(26.7, 1): Var(kλ) at λ = 0.2 is 1.608e308, printed "too large for a double";
    λ* = 1.77e-307 printed "0", with a button "λ = λ* = 0" beside "λ = 0 (k1)"."""
    at = open_page(p="normal(26.7,1)", lam="0.2")
    clean(at)
    assert metric(at, "Var(kλ), λ = 0.2") == "1.608e+308"
    assert metric(at, "λ*") == "1.77e-307"
    assert not [b for b in at.button if b.key == "set_star"]
    text = captions(at)
    assert "only for |λ| below 0.212" in text and "Only λ = 0 (k1) has a variance" not in text
