"""lab.notes.approx_kl: the four questions' numbers, crosswalk rows and facts, clamp texts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kl_core.estimation.paths import PATHS
from kl_core.libraries import clamps
from kl_core.libraries.crosswalk import CROSSWALK
from lab.notes import approx_kl as notes


def test_the_checklist_shows_the_right_and_the_wrong_number():
    old, new = PATHS["logit"].base, PATHS["logit"].at(1.0)
    ppo, rlhf = clamps.token_expectations(old, new), clamps.token_expectations(new, old)
    items = notes.checklist(ppo, rlhf)
    assert [i.question[0] for i in items] == ["1", "2", "3", "4"]
    assert f"**{rlhf.other_minus_sampler:+.4f}**" in items[0].wrong
    assert f"**{rlhf.sampler_minus_other:+.4f}**" in items[0].right
    assert f"{ppo.k3_pq:.4f}" in items[1].note
    assert f"**{ppo.k3_flipped:+.4f}**" in items[2].wrong
    assert f"**{ppo.k1_negative_share:.0%}**" in items[3].note
    assert items[2].markdown().count("  \n") == 2 and items[3].markdown().count("  \n") == 3


def test_the_crosswalk_table_has_a_row_per_entry():
    df = notes.crosswalk_frame(list(CROSSWALK))
    assert len(df) == len(CROSSWALK)
    assert list(df.columns[:8]) == ["library", "option", "acts on", "estimator", "estimates", "unbiased", "clamps",
                                    "gradient"]
    # every entry with a gradient links to the Gradients page with it highlighted; metrics do not
    for e, link in zip(CROSSWALK, df["gradient"], strict=True):
        assert pd.isna(link) == (e.grad_mode == "none")
    assert df["gradient"][list(CROSSWALK).index(verl := clamps.entry_by_id("verl:low_var_kl:loss"))] == (
        "gradients?option=verl:low_var_kl")
    assert notes.clamps_text(verl) == "log r ∈ [-20, 20]; value ∈ [-10, 10]"
    assert notes.clamps_text(clamps.entry_by_id("TRL:k3:reward")) == "none"


def test_entry_facts_and_caveats():
    verl = clamps.entry_by_id("verl:low_var_kl:loss")
    facts = notes.entry_facts(verl)
    assert facts[0] == notes.typeset(f"**Estimates:** {verl.direction}")
    assert "(clamps aside)" in facts[4]
    assert facts[-1] == f"**Source:** `{verl.source}`"
    kind, text, _ = notes.caveat_note(verl)
    assert kind == "warning" and text.startswith("**In a loss:**")
    for e in CROSSWALK:
        assert notes.variables_text(e).startswith("In this code: `")
        assert notes.caveat_note(e)[0] == ("warning" if e.acts_on == "loss" else "info")


def test_clamp_roles_and_token_rows():
    demo = clamps.entry_by_id("verl:low_var_kl:loss")
    path = clamps.CLAMP_PATHS["peaked"]
    text = notes.clamp_roles(demo, clamps.drifting_role(demo), path.family_latex, path.theta_latex,
                             path.base.name)
    assert "drifts along the path" in text and notes.clamps_text(demo) in text
    s, o = clamps.roles_at("verl:low_var_kl:loss", "peaked", 20.0)
    tokens = clamps.clamp_tokens("verl:low_var_kl:loss", s.log_probs, o.log_probs)
    df = notes.clamp_token_rows(tokens, demo.estimator)
    np.testing.assert_array_equal(df["library value"].to_numpy(), tokens.value)
    assert list(df["clamped"]) == ["yes" if h else "" for h in tokens.hit]


def test_typeset_writes_policy_notation_as_maths_outside_code():
    assert notes.typeset("KL[π_θ‖π_ref] from π_old") == (
        r"$\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]$ from $\pi_{\mathrm{old}}$"
    )
    assert notes.typeset("`π_θ` and $\\pi_x$ stay") == "`π_θ` and $\\pi_x$ stay"
    assert "π_" not in notes.typeset(notes.caveat_note(clamps.entry_by_id("verl:low_var_kl:loss"))[1])


def test_the_bias_delta_leads_with_its_sign_in_every_language():
    """st.metric draws a red down-arrow only for a delta starting with "-": a negative bias must, in Chinese too."""
    from i18n import LANGUAGES, using

    point = clamps.clamp_point("OpenRLHF:k1:reward", "peaked", 25.0)  # the clamp at 10 holds the mean below the KL
    assert point.bias < 0 < point.kl
    for lang in LANGUAGES:
        with using(lang):
            delta, words = notes.bias_delta(point.bias, point.kl)
            up, _ = notes.bias_delta(-point.bias, point.kl)
            none = notes.bias_delta(0.0, point.kl)
        assert delta == f"{point.bias:+.3g} ({point.bias / point.kl:+.0%})" and delta.startswith("-"), lang
        assert up.startswith("+"), lang
        assert words and words != delta and none == (None, None)
    with using("zh"):
        assert notes.bias_delta(point.bias, point.kl)[1] != "vs the KL"  # translated
    assert notes.bias_delta(-0.5, 0.0)[0] == "-0.5"  # no relative bias without a KL


def _answer(eid: str, path: str, theta: float) -> tuple[str, clamps.ClampPoint]:
    e = clamps.entry_by_id(eid)
    point = clamps.clamp_point(eid, path, theta)
    return notes.answer(e.library, e.option, theta, point,
                        clamped=e.logr_clamp is not None or e.value_clamp is not None), point


def test_the_answer_at_the_defaults_quotes_the_clamped_mean_and_the_kl():
    text, point = _answer("verl:low_var_kl:loss", "peaked", 20.0)
    assert point.hit_prob > 0 and point.bias < 0  # the default makes the point: the clamps bite
    assert f"**{notes.number(point.mean)}**" in text and f"**{notes.number(point.kl)}**" in text
    assert f"{abs(point.bias) / point.kl:.0%} below" in text and f"{point.hit_prob:.3g}" in text


def test_each_branch_of_the_answer():
    assert "both **0**" in _answer("verl:low_var_kl:loss", "peaked", 0.0)[0]
    assert "is the exact KL" in _answer("verl:low_var_kl:loss", "peaked", 10.0)[0]  # below the clamps
    text, point = _answer("OpenRLHF:k2:reward", "logit", 3.0)  # no hit, k2's own bias
    assert point.hit_prob == 0 and "own bias (+50%)" in text
    text, point = _answer("OpenRLHF:k2:reward", "peaked", 10.0)  # a rare hit, k2 above the KL
    assert point.hit_prob > 0 and point.bias > 0 and "above" in text
    assert "has no clamps" in _answer("TRL:k3:reward", "peaked", 30.0)[0]
    e = clamps.entry_by_id("verl:low_var_kl:loss")
    same = clamps.ClampPoint(1.0, 0.5, 0.5, 0.5, 0.01, 0.01, 0.0)  # hit, yet the mean is the KL
    assert "still equals the exact KL" in notes.answer(e.library, e.option, 1.0, same)
    k2_free = clamps.ClampPoint(1.0, 0.5, 0.6, 0.6, 0.0, 0.0, 0.0)
    assert "own bias (+20%)" in notes.answer("TRL", "k2", 1.0, k2_free, clamped=False)


@pytest.mark.parametrize("eid", list(clamps.DEMO_ENTRIES))
@pytest.mark.parametrize("path", list(clamps.CLAMP_PATHS))
def test_the_answer_is_true_along_every_path(eid, path):
    """Every θ the sliders allow (0–30 by 0.5 on Rare token, 0–3 by 0.05 on Mild drift)."""
    e = clamps.entry_by_id(eid)
    thetas = np.arange(0, 30.01, 0.5) if path == "peaked" else np.arange(0, 3.001, 0.05)
    for theta in thetas:
        text, point = _answer(eid, path, float(theta))
        if "below" in text:
            assert point.mean < point.kl and point.hit_prob > 0
        if "above" in text:
            assert point.mean > point.kl and point.hit_prob > 0
        if "no sampled token reaches" in text:
            assert point.hit_prob == 0
        if "has no clamps" in text:
            assert e.logr_clamp is None and e.value_clamp is None
        if "is the exact KL" in text or "equals the exact KL" in text:
            assert point.mean == pytest.approx(point.kl, rel=1e-6, abs=1e-12)


def test_a_crosswalk_formula_is_cut_only_at_its_top_level_quad():
    cut = [e for e in CROSSWALK if r",\quad" in e.formula_latex]
    assert cut, "no crosswalk formula defines a clamped ℓ after a comma any more"
    for e in CROSSWALK:
        pieces = notes.formula_pieces(e)
        assert "".join(p.replace(" ", "") for p in pieces) == e.formula_latex.replace(r",\quad", ",").replace(" ", "")
        assert len(pieces) == (2 if e in cut else 1)
