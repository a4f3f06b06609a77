"""AppTest checks of the "approx_kl in practice" page.

It runs and reruns cleanly; its numbers are the core's (checklist, crosswalk,
clamps); links reproduce the view, and an old link that carried audit settings
points to the audit's own page (``tests/app/test_audit.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kl_core.estimation.paths import PATHS
from kl_core.libraries import clamps
from kl_core.libraries.crosswalk import CROSSWALK, libraries
from lab.format import probability_text, share
from lab.notes import approx_kl as notes

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "pages/approx-kl.py"


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def open_page(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update(query)
    return at.run()


def metrics(at: AppTest) -> dict[str, object]:
    return {m.label: m for m in at.metric}


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def frame(at: AppTest, first_column: str, first_value: str) -> pd.DataFrame:
    """The data frame whose first column is ``first_column`` and starts with ``first_value``."""
    for df in at.dataframe:
        v = df.value
        if v.columns[0] == first_column and str(v.iloc[0, 0]) == first_value:
            return v
    raise AssertionError(f"no table starting {first_column}={first_value}")


# ------------------------------------------------------------------ defaults


def test_default_run_shows_the_cores_numbers_everywhere():
    at = open_page()
    assert not at.exception
    assert not at.error
    assert at.title[0].value == "approx_kl in practice"

    # 1. checklist: exact sums over the five-token example
    old, new = PATHS["logit"].base, PATHS["logit"].at(1.0)
    ppo, rlhf = clamps.token_expectations(old, new), clamps.token_expectations(new, old)
    md = text_of(at)
    for x in (
        rlhf.other_minus_sampler,
        rlhf.sampler_minus_other,
        ppo.other_minus_sampler,
        ppo.sampler_minus_other,
        ppo.k3_flipped,
        ppo.k3,
        ppo.k2,
    ):
        assert f"**{x:+.4f}**" in md
    assert rlhf.other_minus_sampler < 0 < rlhf.sampler_minus_other  # the sign error, shown
    assert f"**{share(ppo.k1_negative_share)}**" in md

    # 2. crosswalk table: one row per entry; translate defaults to verl low_var_kl in the loss
    table = frame(at, "library", "TRL")
    assert len(table) == len(CROSSWALK)
    assert list(table["option"]) == [", ".join(e.names) for e in CROSSWALK]
    assert at.selectbox(key="lib").value == "verl"
    assert at.selectbox(key="opt").value == "verl:low_var_kl:loss"
    entry = clamps.entry_by_id("verl:low_var_kl:loss")
    assert entry.library_formula in [c.value for c in at.code]
    assert any("arXiv:2506.09477" in w.value for w in at.warning)  # the loss caveat

    # 3. clamps at the default θ = 20 on the rare-token path
    pt = clamps.clamp_point("verl:low_var_kl:loss", "peaked", 20.0)
    m = metrics(at)
    assert m["Exact KL"].value == f"{pt.kl:.4g}"
    assert m["Library's mean"].value == f"{pt.mean:.4g}"
    assert m["No clamps"].value == f"{pt.unclamped_mean:.4g}"
    assert m["P(clamped)"].value == probability_text(pt.hit_prob)
    assert pt.mean < 0.6 * pt.kl  # the clamps really bite at this drift
    tokens = frame(at, "token", "0")
    s, o = clamps.roles_at("verl:low_var_kl:loss", "peaked", 20.0)
    b = clamps.clamp_tokens("verl:low_var_kl:loss", s.log_probs, o.log_probs)
    np.testing.assert_array_equal(tokens["library value"].to_numpy(), b.value)
    np.testing.assert_array_equal(tokens["P under sampler"].to_numpy(), b.sampler_probs)
    assert list(tokens["clamped"]) == ["yes" if h else "" for h in b.hit]

    # two clamp charts; the audit has its own page, linked from here
    assert len(at.get("vega_lite_chart")) == 2
    assert not at.file_uploader
    assert any(link.proto.page == "pages/audit.py" or "audit" in link.proto.page for link in at.get("page_link"))


def test_an_old_link_with_audit_settings_points_to_the_audit_page():
    at = open_page(sc="logp_policy", dir="KL[other‖sampler]", lib="TRL")
    assert not at.exception and not at.error
    assert at.selectbox(key="lib").value == "TRL"  # the rest of the link still applies
    assert any("now has its own page" in i.value for i in at.info)
    (link,) = at.get("page_link")
    assert "audit" in link.proto.page


# ------------------------------------------------------------------ widgets


@pytest.mark.parametrize("library", libraries())
def test_translate_every_option_of_every_library(library):
    at = open_page()
    at.selectbox(key="lib").set_value(library).run()
    assert not at.exception
    for e in [e for e in CROSSWALK if e.library == library]:
        at.selectbox(key="opt").set_value(clamps.entry_id(e)).run()
        assert not at.exception
        assert e.library_formula in [c.value for c in at.code]
        md = text_of(at)
        assert notes.typeset(f"**Estimates:** {e.direction}") in md
        assert f"`{e.source}`" in md
        boxes = [w.value for w in at.warning] if e.acts_on == "loss" else [i.value for i in at.info]
        assert any(e.caveat[:40] in b for b in boxes)


@pytest.mark.parametrize("path", ["peaked", "logit"])
def test_every_demo_entry_on_both_paths(path):
    at = open_page()
    at.segmented_control(key="cpath").set_value(path).run()
    slider_key = "th" if path == "peaked" else "thm"
    top = clamps.CLAMP_PATHS[path].theta_max
    at.slider(key=slider_key).set_value(top).run()
    for eid in clamps.DEMO_ENTRIES:
        at.selectbox(key="ce").set_value(eid).run()
        assert not at.exception
        pt = clamps.clamp_point(eid, path, top)
        m = metrics(at)
        assert m["Library's mean"].value == f"{pt.mean:.4g}"
        assert m["P(clamped)"].value == probability_text(pt.hit_prob)


def test_a_link_reproduces_the_view_and_a_bad_value_is_named():
    at = open_page(
        cpath="Mild drift",
        thm="2.5",
        ce="OpenRLHF k2 (reward)",
        lib="CleanRL",
        opt="approx_kl (metric)",
    )
    assert not at.exception
    assert at.slider(key="thm").value == 2.5
    assert at.selectbox(key="ce").value == "OpenRLHF:k2:reward"
    assert at.selectbox(key="opt").value == "CleanRL:approx_kl:metric"
    pt = clamps.clamp_point("OpenRLHF:k2:reward", "logit", 2.5)
    assert metrics(at)["Library's mean"].value == f"{pt.mean:.4g}"

    bad = open_page(th="99")
    assert not bad.exception
    notes = [w.value for w in bad.warning]
    assert any("`th=99`" in n and "showing **20**" in n for n in notes)


# ------------------------------------------------------------------ chart builders


def _axis_titles(spec: dict) -> list[str]:
    titles = []
    for layer in spec["layer"]:
        for ch in ("x", "y"):
            t = layer.get("encoding", {}).get(ch, {}).get("title")
            if t:
                titles.append(t)
    return titles


@pytest.mark.parametrize("eid", clamps.DEMO_ENTRIES)
def test_clamp_charts_are_valid_small_specs(eid):
    from charts.approx_kl import clamp_chart, clamp_hit_chart
    from charts.histograms import MAX_ROWS

    e = clamps.entry_by_id(eid)
    curve = clamps.clamp_curve(eid, "peaked")
    pt = clamps.clamp_point(eid, "peaked", 20.0)
    for chart in (
        clamp_chart(curve, pt, estimator_key=e.estimator, title=eid),
        clamp_hit_chart(curve, pt, show_logr=e.logr_clamp is not None),
    ):
        spec = chart.to_dict()  # validates against the Vega-Lite schema
        json.dumps(spec, allow_nan=False)
        assert all(len(rows) <= MAX_ROWS for rows in spec["datasets"].values())
        assert any("θ" in t for t in _axis_titles(spec))
        assert len(_axis_titles(spec)) >= 2
        assert spec["config"]["axis"]["labelFontSize"] >= 13
    # the clamp chart: exact KL drawn last (thin dashes over the thick no-clamps dots), a y title
    # that names the non-linear scale, line symbols in the legend
    spec = clamp_chart(curve, pt, estimator_key=e.estimator, title=eid).to_dict()
    lines = [layer for layer in spec["layer"] if layer["mark"]["type"] == "line"]
    assert [layer["transform"][1]["filter"]["equal"] for layer in lines] == [
        "library (clamped)" if e.clamped else "library", "no clamps", "exact KL"]  # TRL's k3 has none
    assert [layer["mark"]["strokeWidth"] for layer in lines] == [3, 6, 2]
    assert any("symmetric log" in t for t in lines[0]["encoding"]["y"]["title"])
    assert lines[0]["encoding"]["color"]["legend"]["symbolType"] == "stroke"
    # a precision in the tick format: without one, d3 infers it from the symlog scale's linear tick
    # step and writes the tick 100 as "1e+2" (OpenRLHF k2, whose mean passes 100 at large drift)
    assert re.fullmatch(r"\.\d+~g", lines[0]["encoding"]["y"]["axis"]["format"])
    # the hit chart: 0 % and the top tick inside the y domain, not on its edges
    hit = clamp_hit_chart(curve, pt).to_dict()
    y = next(layer for layer in hit["layer"] if layer["mark"]["type"] == "line")["encoding"]["y"]
    lo, hi = y["scale"]["domain"]
    assert lo < 0 < max(y["axis"]["values"]) < hi


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_negative_clamp_bias_shows_a_down_arrow_in_every_language(lang):
    """st.metric points its arrow down (red) only for a delta starting with "-": the signed number leads."""
    from i18n import using

    at = open_page(th="25", ce="OpenRLHF k1 (reward)")
    at.button_group(key="lang").set_value(lang).run()
    assert not at.exception
    pt = clamps.clamp_point("OpenRLHF:k1:reward", "peaked", 25.0)
    assert pt.bias < 0
    with using(lang):
        label = notes._("Library's mean")
    m = metrics(at)[label]
    assert m.value == f"{pt.mean:.4g}"
    assert m.delta.startswith("-") and m.delta == f"{pt.bias:+.3g} ({share(pt.bias / pt.kl)})"
    assert m.proto.direction == m.proto.MetricDirection.DOWN and m.proto.color == m.proto.MetricColor.RED
    assert m.proto.delta_description == (notes.bias_delta(pt.bias, pt.kl)[1] if lang == "en" else "相对于 KL")


def test_the_page_opens_with_its_answer_at_the_defaults():
    """Issue 20: the question, one sentence of answer from the exact numbers, then the clamp chart."""
    at = open_page()
    point = clamps.clamp_point("verl:low_var_kl:loss", "peaked", 20.0)
    texts = [m.value for m in at.markdown]
    answer = next(t for t in texts if "hits the clamps" in t)
    assert f"{share(abs(point.bias) / point.kl)} below" in answer
    assert texts.index(answer) < next(i for i, t in enumerate(texts) if "verl clamps `low_var_kl`" in t)
    # the RL names mapped onto q and p, once, by the sentence every RL page shares
    assert sum("$q = \\pi_\\theta$" in c.value for c in at.caption) == 1


# ------------------------------------------------------------------ audit findings, round 2


def test_the_clamp_intro_gives_the_band_the_mild_drift_crosses():
    """Finding 1: at ?cpath=Mild+drift&thm=2.75 low_var_kl's value clamp bites on a token with
    probabilities 0.0377 and 0.563, which the old intro ruled out ("nearly impossible")."""
    at = open_page(cpath="Mild drift", thm="2.75")
    assert not at.exception
    point = clamps.clamp_point("verl:low_var_kl:loss", "logit", 2.75)
    assert metrics(at)["P(clamped)"].value == probability_text(point.hit_prob) == "0.0377"
    md = text_of(at)
    assert "log r ∈ [-11, 2.61] for verl `low_var_kl`, OpenRLHF `k3`" in md
    assert "nearly impossible, they cap" not in md


def test_trl_k3_at_theta_0_is_not_told_to_watch_its_clamps():
    """Finding 2: ?ce=TRL+k3+(reward)&th=0 said "Move θ to see the clamps act." of an option without clamps."""
    at = open_page(ce="TRL k3 (reward)", th="0")
    assert not at.exception
    md = text_of(at)
    assert "both **0**" in md and "This option has no clamps" in md and "clamps act" not in md


def test_the_crosswalk_shows_a_dash_where_a_metric_has_no_gradient():
    """Finding 4: the gradient column's empty cells (logged metrics) showed Streamlit's "None"."""
    at = open_page()
    [table] = [df for df in at.dataframe if df.value.columns[0] == "library" and "gradient" in df.value.columns]
    assert table.value["gradient"].isna().sum() == sum(e.grad_mode == "none" for e in CROSSWALK) > 0
    assert table.proto.placeholder == notes.NO_GRADIENT == "—"


def test_an_option_without_clamps_is_drawn_as_the_library_not_the_library_clamped():
    """TRL's k3 has no clamps: its line was "library (clamped)" and its metric's help said "clamped"."""
    from charts.approx_kl import clamp_chart
    from lab.notes import approx_kl as notes

    e = next(x for x in CROSSWALK if x.library == "TRL" and x.estimator == "k3" and not x.clamped)
    eid = clamps.entry_id(e)
    curve = clamps.clamp_curve(eid, "peaked")
    pt = clamps.clamp_point(eid, "peaked", 20.0)
    spec = clamp_chart(curve, pt, estimator_key=e.estimator, title=eid).to_dict()
    lines = [layer for layer in spec["layer"] if layer["mark"]["type"] == "line"]
    assert [layer["transform"][1]["filter"]["equal"] for layer in lines] == ["library", "no clamps", "exact KL"]
    assert "clamped" not in notes.library_mean_help(False) and "clamped" in notes.library_mean_help(True)
