"""The "Bregman gap" page: it runs, every widget reruns it, its numbers are the core's.

Also the page's chart builder (``charts/bregman.py``): valid Vega-Lite, at most
5,000 rows, axis titles, the estimator's colour for the gaps (k3 green, k3_pq
orange), and the thinning of repeated or off-chart draws.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from charts.bregman import OTHER_GAP_COLOR, gap_color, tangent_gap_chart
from charts.histograms import MAX_ROWS
from charts.palette import COLORS, HIGHLIGHT_COLOR
from kl_core.estimation import estimators
from kl_core.estimation.bregman import draw_log_ratios, tangent_picture
from kl_core.estimation.distributions import parse
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.exact import f_divergence, kl
from lab.notes import bregman_gap as bregman_notes

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/bregman-gap.py"
CATEGORICAL = {"q": "categorical(2,1,0.5,0,-1)", "p": "categorical(1,0.5,0.5,0.5,0)"}


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


def title(spec: dict) -> str:
    """A chart's title as one line (the page wraps it into lines)."""
    text = spec["title"]["text"]
    return " ".join(text) if isinstance(text, list) else text


def metric_values(at: AppTest, label: str) -> list[str]:
    return [m.value for m in at.metric if m.label == label]


def fmt(x: float) -> str:
    if math.isinf(x):
        return "∞"
    return f"{x:.4g}"


def specs(at: AppTest) -> list[dict]:
    """Each chart's spec as sent, with its datasets read back from the Arrow bytes on the proto."""
    out = []
    for c in at.get("vega_lite_chart"):
        spec = json.loads(c.proto.spec)
        spec["datasets"] = {
            d.name: pa.ipc.open_stream(d.data.data).read_pandas().to_dict("records")
            for d in c.proto.datasets
        }
        _inline_datasets(spec, spec["datasets"])  # lab.ui writes rows inline, named
        out.append(spec)
    return out


def _inline_datasets(node, found: dict) -> None:
    if isinstance(node, dict):
        if "name" in node and isinstance(node.get("values"), list):
            found.setdefault(node["name"], node["values"])
        for v in list(node.values()):
            _inline_datasets(v, found)
    elif isinstance(node, list):
        for v in node:
            _inline_datasets(v, found)


def captions(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


# ------------------------------------------------------------------ the page


def test_default_run_shows_the_hand_moved_gap_equal_to_k3(default_page):
    at = default_page
    clean(at)
    assert at.title[0].value == "Bregman gap"
    assert at.slider(key="r").value == 2.5
    k3 = float(estimators.k3([math.log(2.5)])[0])
    assert k3 == pytest.approx(1.5 - math.log(2.5), rel=1e-14)
    assert metric_values(at, "gap = tangent − curve") == [fmt(k3)] == ["0.5837"]
    assert metric_values(at, "k3 at this log r") == [fmt(k3)]
    assert metric_values(at, "tangent r − 1") == ["1.5"]
    assert metric_values(at, "curve log r") == [fmt(math.log(2.5))]
    # KL[p‖q] below, at the same r: u log u − (u − 1)
    k3pq = float(estimators.k3_pq([math.log(2.5)])[0])
    assert metric_values(at, "gap = f(r) − tangent") == [fmt(k3pq)] == ["0.7907"]
    assert metric_values(at, "k3 (KL[p‖q]) at this log r") == [fmt(k3pq)]
    assert len(at.get("vega_lite_chart")) == 2


def test_the_mean_gap_of_the_draws_is_the_core_mean_of_k3(default_page):
    at = default_page
    logr = draw_log_ratios(parse("normal(0,1)"), parse("normal(1,1)"), 200, 0)
    mean_k3 = float(np.mean(estimators.k3(logr)))
    mean_k3pq = float(np.mean(estimators.k3_pq(logr)))
    first, second = specs(at)
    assert title(first) == f"200 draws: mean gap {fmt(mean_k3)}, exact KL[q‖p] = 0.5"
    assert title(second) == (
        f"The same 200 draws: mean gap {fmt(mean_k3pq)}, exact KL[p‖q] = 0.5"
    )
    assert f"The draws' average gap, {fmt(mean_k3)}, estimates KL[q‖p] = 0.5" in captions(at)
    # one point and one gap per draw (all 200 ratios are distinct, all but a few on the chart)
    drawn = first["datasets"]["draws"]
    assert 180 <= len(drawn) <= 200
    for row in drawn[:20]:
        assert row["gap"] == pytest.approx(row["tangent"] - row["curve"], abs=1e-12)
        assert row["gap"] >= 0.0


@pytest.mark.parametrize("r", [0.05, 0.5, 1.0, 1.35, 5.0])
def test_every_hand_moved_r_shows_k3(r):
    at = open_page(r=str(r))
    clean(at)
    k3 = float(estimators.k3([math.log(r)])[0])
    assert metric_values(at, "k3 at this log r") == [fmt(k3)]
    assert metric_values(at, "gap = tangent − curve") == [fmt(k3)]


@pytest.mark.parametrize("key", sorted(DIVERGENCES))
def test_every_f_of_the_registry(key):
    if key == "kl_qp":  # the picture at the top; not in the selector
        return
    name = DIVERGENCES[key].name
    at = open_page(f=name, r="2")
    clean(at)
    logr = draw_log_ratios(parse("normal(0,1)"), parse("normal(1,1)"), 200, 0)
    second = specs(at)[1]
    if key == "tv":
        assert [i.value for i in at.info if "kink at u = 1" in i.value] == [bregman_notes.kink_note("tv")]
        assert "from -0.5 to 0.5" in bregman_notes.kink_note("tv")
        assert not metric_values(at, "gap = f(r) − tangent")
        assert "tangent" not in json.dumps(second["datasets"].get("draws", []))
        return
    gap = float(estimators.bregman(key, [math.log(2.0)])[0])
    assert metric_values(at, "gap = f(r) − tangent") == [fmt(gap)]
    exact = f_divergence(key, parse("normal(1,1)"), parse("normal(0,1)"))
    mean_gap = float(np.mean(estimators.bregman(key, logr)))
    assert title(second) == (
        f"The same 200 draws: mean gap {fmt(mean_gap)}, exact {name} = {fmt(exact)}"
    )


def test_heavy_tails_report_an_infinite_divergence():
    at = open_page(p="normal(0,1.5)", f="Pearson χ²", draws="1000", r="5")
    clean(at)
    assert math.isinf(f_divergence("pearson", parse("normal(0,1.5)"), parse("normal(0,1)")))
    second = specs(at)[1]
    assert title(second).endswith("exact Pearson χ² = ∞")
    assert "The exact value is infinite" in captions(at)
    assert any("not drawn" in s for s in second["title"]["subtitle"])
    assert metric_values(at, "gap = f(r) − tangent") == ["16"]  # (5 − 1)²


def test_categorical_draws_pile_up_on_k_ratios():
    at = open_page(**CATEGORICAL)
    clean(at)
    first = specs(at)[0]
    drawn = first["datasets"]["draws"]
    assert len(drawn) <= 5
    assert sum(row["count"] for row in drawn) <= 200
    assert "at most 5 different ratios can occur" in captions(at)
    true_kl = kl(parse(CATEGORICAL["q"]), parse(CATEGORICAL["p"]))
    assert f"exact KL[q‖p] = {fmt(true_kl)}" in title(first)


def test_p_equal_q_gives_zero_gaps():
    at = open_page(p="normal(0,1)", r="1")
    clean(at)
    assert "every gap, and so every sample of k3, is zero" in captions(at)
    assert metric_values(at, "gap = tangent − curve") == ["0"]


@pytest.mark.parametrize(
    ("q", "p", "f"),
    [
        ("normal(0,1)", "normal(30,1)", "Pearson χ²"),
        ("normal(0,1)", "normal(0,0.01)", "KL[p‖q]"),
        ("categorical(0,0)", "categorical(50,-50)", "squared Hellinger"),
        ("t(1,0,1)", "normal(0,1)", "Jensen–Shannon"),
        ("normal(0,1)", "t(1,0,1)", "½ log² (the f of k2)"),
    ],
)
def test_extreme_pairs_run_cleanly(q, p, f):
    at = open_page(q=q, p=p, f=f, r="0.05")
    clean(at)
    assert len(at.get("vega_lite_chart")) == 2


def test_changing_every_widget_reruns_cleanly():
    at = open_page()
    at.slider(key="r").set_value(0.3).run()
    clean(at)
    assert metric_values(at, "k3 at this log r") == [fmt(float(estimators.k3([math.log(0.3)])[0]))]
    at.select_slider(key="draws").set_value(1_000).run()
    clean(at)
    assert title(specs(at)[0]).startswith("1,000 draws")
    at.number_input(key="seed").set_value(3).run()
    clean(at)
    for name in ("total variation", "Jensen–Shannon", "KL[p‖q]"):
        at.button_group(key="f").set_value(name).run()
        clean(at)
    at.text_input(key="p").set_value("t(3,0,1)").run()
    clean(at)
    at.text_input(key="q").set_value("laplace(0,1)").run()
    clean(at)


def test_a_bad_link_value_falls_back_with_a_note():
    at = open_page(r="0")
    clean(at)
    assert at.slider(key="r").value == 2.5
    assert any("r=0" in w.value for w in at.warning)
    at = open_page(f="nope")
    clean(at)
    assert at.button_group(key="f").value == "kl_pq"


# ------------------------------------------------------------------ the builder


def _grid(name: str):
    return tangent_picture(name, u=np.linspace(0.05, 5.0, 496))


@pytest.mark.parametrize("key", sorted(DIVERGENCES))
def test_tangent_gap_chart_spec(key):
    logr = np.random.default_rng(0).normal(size=4_000) - 0.5
    spec = tangent_gap_chart(
        _grid(key),
        samples=tangent_picture(key, logu=logr),
        hand=tangent_picture(key, u=[2.5]),
        curve_label="curve",
        tangent_label="tangent" if key != "tv" else None,
        gap_label="gap",
        title="t",
    ).to_dict()  # validates against the Vega-Lite schema
    assert all(len(rows) <= MAX_ROWS for rows in spec["datasets"].values())
    titles = [
        layer["encoding"][ch]["title"]
        for layer in spec["layer"]
        for ch in ("x", "y")
        if "title" in layer.get("encoding", {}).get(ch, {})
    ]
    assert len(titles) == 2
    text = json.dumps(spec, allow_nan=False)
    expected = {"kl_qp": COLORS["k3"], "kl_pq": COLORS["k3_pq"], "k2": COLORS["k2"]}
    assert gap_color(_grid(key)) == expected.get(key, OTHER_GAP_COLOR)
    if key != "tv":
        assert expected.get(key, OTHER_GAP_COLOR) in text
    # the reader's r: a purple segment and diamonds over the draws, labelled with r and its gap
    assert spec["datasets"]["hand_label"][0]["u"] == 2.5
    hand = [layer for layer in spec["layer"] if layer["data"]["name"] == "hand_label"][-1]["mark"]
    assert hand["color"] == HIGHLIGHT_COLOR and hand["text"][0] == "your r = 2.5"
    if key != "tv":
        assert hand["text"][1] == f"gap = {fmt(float(estimators.bregman(key, [math.log(2.5)])[0]))}"
    assert spec["layer"][-1]["data"]["name"] == "hand_label"  # drawn last, over the draws
    off = int(np.count_nonzero((np.exp(logr) < 0.05) | (np.exp(logr) > 5.0)))
    if off:
        assert any(f"{off:,} of 4,000 draws" in s for s in spec["title"]["subtitle"])
    assert len(spec["datasets"]["draws"]) == 4_000 - off


def test_repeated_ratios_are_drawn_once_with_their_count():
    logr = np.log(np.array([0.5, 0.5, 0.5, 2.0, 2.0, 9.0]))
    spec = tangent_gap_chart(
        _grid("kl_qp"),
        samples=tangent_picture("kl_qp", logu=logr),
        curve_label="c",
        tangent_label="t",
        gap_label="g",
    ).to_dict()
    rows = spec["datasets"]["draws"]
    assert sorted((round(r["u"], 12), r["count"]) for r in rows) == [(0.5, 3), (2.0, 2)]
    assert any("1 of 6 draws" in s for s in spec["title"]["subtitle"])
    assert "size" in json.dumps([layer["encoding"] for layer in spec["layer"]])


def test_the_legend_names_the_gaps_only_when_a_draw_is_on_the_chart():
    # p = N(12,1): every draw's r is far past the chart's 5, and the legend still listed "gap"
    def legend(logr):
        spec = tangent_gap_chart(_grid("kl_qp"), samples=tangent_picture("kl_qp", logu=np.asarray(logr)),
                                 curve_label="c", tangent_label="t", gap_label="g").to_dict()
        (lines,) = [layer for layer in spec["layer"] if layer["data"]["name"] == "lines"]
        return lines["encoding"]["color"]["scale"]["domain"]

    assert legend([8.0, 9.0, 10.0]) == ["c", "t"]
    assert legend([8.0, 0.3]) == ["c", "t", "g"]


def test_a_chi2_past_a_double_is_finite_on_the_page():
    """?q=normal(0,0.1)&p=normal(2.7,0.1)&f=pearson: χ² = e^729 − 1 is finite but above 1.8e308.
    The page said "Var(k3) = ∞", "The exact value is infinite for this pair" and "exact Pearson
    χ² = ∞", and described green segments near r = 1 when every draw lay off the chart."""
    at = open_page(q="normal(0,0.1)", p="normal(2.7,0.1)", f="pearson")
    clean(at)
    text = captions(at)
    assert "Var(k3) is finite but too large for a double" in text and "Var(k3) = ∞" not in text
    assert "infinite for this pair" not in text and "which is finite but too large for a double" in text
    assert "None of the 200 draws has its r inside the chart's range" in text
    assert "The segments vanish where r is near 1" not in text
    titles = [title(s) for s in specs(at)]
    assert any("exact Pearson χ²: too large for a double" in t for t in titles)
    assert not any("χ² = ∞" in t for t in titles)


# ------------------------------------------------------------------ audit findings (round 2)


def _f_caption(at: AppTest) -> str:
    return next(c for c in captions(at).split("\n") if "gaps average" in c)


def test_a_far_off_average_of_few_draws_carries_the_caveat():
    """Finding 5: ?p=normal(5,1)&draws=10, f = KL[p‖q]: "the 10 gaps average 0.9977, an estimate of the
    exact KL[p‖q] = 12.5" with no warning; the exact standard error (3.126e+06) says how little 10 draws pin down."""
    at = open_page(p="normal(5,1)", draws="10")
    clean(at)
    text = _f_caption(at)
    assert "the 10 gaps average 0.9977, an estimate of the exact KL[p‖q] = 12.5." in text
    assert "a finite set of draws can miss rare, large gaps; its standard error here is 3.126e+06." in text
    pearson = open_page(f="pearson")  # the defaults: 0.7974 against 1.718
    assert "can miss rare, large gaps" in _f_caption(pearson)


def test_the_same_distribution_written_two_ways_is_p_equal_q_on_the_page():
    """Finding 6 and 7: the pair was called p ≠ q (KL 8.19e-33, "cancels more than 99% of the variance"),
    and at p = q the answer read "(from 0 to 0)"."""
    at = open_page(q="categorical(0.1,0.2,0.3)", p="categorical(1.1,1.2,1.3)")
    clean(at)
    md = captions(at)
    assert "With p = q both variances are zero." in md and "of the variance" not in md
    assert "every gap is exactly 0" in md and "from 0 to 0" not in md
    assert "e-33" not in md and "e-32" not in md and "e-64" not in md
    kl_spec, f_spec = specs(at)
    assert title(kl_spec).endswith("exact KL[q‖p] = 0") and title(f_spec).endswith("exact KL[p‖q] = 0")
    assert "every gap is exactly 0" in captions(open_page(p="normal(0,1)"))


def test_the_pickers_name_the_roles_only():
    """Finding 9: "q — the sampler (old policy)" contradicted the RL pages' KL penalty, q = π_θ."""
    md = captions(open_page())
    assert "**q — the sampler**" in md and "**p — the target**" in md and "old policy" not in md
