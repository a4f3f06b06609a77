"""lab.notes.approx_kl: the four questions' numbers, crosswalk rows and facts, clamp texts."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from kl_core.estimation.paths import PATHS
from kl_core.libraries import clamps
from kl_core.libraries.crosswalk import CROSSWALK, evaluate
from lab.format import share
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
    assert f"**{share(ppo.k1_negative_share)}**" in items[3].note
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
    assert facts[4].startswith("**Unbiased for that KL:** only on-policy") and "clamps aside" in facts[4]
    assert notes.entry_facts(clamps.entry_by_id("verl:low_var_kl:reward"))[4].endswith("(clamps aside)")
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
        assert delta == f"{point.bias:+.3g} ({share(point.bias / point.kl)})" and delta.startswith("-"), lang
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
    assert f"{share(abs(point.bias) / point.kl)} below" in text and f"{point.hit_prob:.3g}" in text


def test_each_branch_of_the_answer():
    assert "both **0**" in _answer("verl:low_var_kl:loss", "peaked", 0.0)[0]
    assert "is the exact KL" in _answer("verl:low_var_kl:loss", "peaked", 10.0)[0]  # below the clamps
    text, point = _answer("OpenRLHF:k2:reward", "logit", 3.0)  # no hit, k2's own bias
    assert point.hit_prob == 0 and f"own bias (+{share(point.bias / point.kl)})" in text
    text, point = _answer("OpenRLHF:k2:reward", "peaked", 10.0)  # a rare hit, k2 above the KL
    assert point.hit_prob > 0 and point.bias > 0 and "above" in text
    assert "has no clamps" in _answer("TRL:k3:reward", "peaked", 30.0)[0]
    e = clamps.entry_by_id("verl:low_var_kl:loss")
    same = clamps.ClampPoint(1.0, 0.5, 0.5, 0.5, 0.01, 0.01, 0.0)  # hit, yet the mean is the KL
    assert "still equals the exact KL" in notes.answer(e.library, e.option, 1.0, same)
    k2_free = clamps.ClampPoint(1.0, 0.5, 0.6, 0.6, 0.0, 0.0, 0.0)
    assert "own bias (+20.0%)" in notes.answer("TRL", "k2", 1.0, k2_free, clamped=False)


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
        if "is the exact KL" in text or "equals the exact KL" in text or "happens to equal" in text:
            assert point.mean == pytest.approx(point.kl, rel=1e-6, abs=1e-12)
        if "still equals" in text:
            assert point.mean == pytest.approx(point.unclamped_mean, rel=1e-6, abs=1e-12)
        assert "**0% " not in text and "(+0%)" not in text and "(-0%)" not in text
        # the metric's arrow appears exactly when the answer does not call the mean the KL
        says_equal = any(w in text for w in ("is the exact KL", "equals the exact KL", "happens to equal", "both **0**"))
        assert (notes.bias_delta(point.bias, point.kl) == (None, None)) == says_equal


def test_a_crosswalk_formula_is_cut_only_at_its_top_level_quad():
    cut = [e for e in CROSSWALK if r",\quad" in e.formula_latex]
    assert cut, "no crosswalk formula defines a clamped ℓ after a comma any more"
    for e in CROSSWALK:
        pieces = notes.formula_pieces(e)
        assert "".join(p.replace(" ", "") for p in pieces) == e.formula_latex.replace(r",\quad", ",").replace(" ", "")
        assert len(pieces) == (2 if e in cut else 1)


# ------------------------------------------------------------------ audit findings


def test_the_clamp_intro_claims_no_direction_the_numbers_refute():
    """Finding 1: a clamp can push the mean above the KL (k2; k1 with a log-r clamp), so the intro does
    not say "falls below"; it says the mean parts from the unclamped one, true wherever a clamp bites."""
    k2 = clamps.clamp_point("OpenRLHF:k2:reward", "peaked", 7.0)
    assert k2.hit_prob > 0 and k2.mean > k2.kl  # the auditor's setting: clamped, yet above the KL
    ppo = clamps.clamp_point("verl:actor/ppo_kl:metric", "peaked", 30.0)
    assert ppo.hit_prob > 0 and ppo.mean > ppo.kl  # a k1 above the KL too: no "(for k1 and k3, below)"
    demo = [clamps.entry_by_id(i) for i in clamps.DEMO_ENTRIES]
    text = notes.clamps_intro(demo)
    assert "falls below" not in text and "below" not in text
    assert "mean without clamps" in text
    for eid in clamps.DEMO_ENTRIES:
        for path, step in (("peaked", 0.5), ("logit", 0.05)):
            for theta in np.arange(0, clamps.CLAMP_PATHS[path].theta_max + 1e-9, step):
                pt = clamps.clamp_point(eid, path, float(theta))
                if pt.hit_prob > 0:
                    assert pt.mean != pt.unclamped_mean, (eid, path, theta)


def test_the_clamp_intro_lists_the_crosswalks_clamps():
    """Finding 11d: OpenRLHF k3 also bounds log r at 10; actor/ppo_kl clamps log r to [-20, 20]."""
    demo = [clamps.entry_by_id(i) for i in clamps.DEMO_ENTRIES]
    text = notes.clamps_intro(demo)
    for e in demo:
        if e.clamped:
            assert f"`{e.option}` ({notes.clamps_text(e)})" in text
    assert notes.clamps_text(clamps.entry_by_id("OpenRLHF:k3:reward")) == "log r ≤ 10; value ∈ [-10, 10]"
    assert "`actor/ppo_kl` (log r ∈ [-20, 20])" in text


def test_the_crosswalk_intro_names_the_rows_whose_log_r_is_not_sampler_based():
    """Finding 2: current-role rows take log r against π_θ; TRL full is not on the sampled tokens."""
    entries = list(CROSSWALK)
    text = notes.crosswalk_intro(entries)
    assert "In every row" not in text
    current = [e for e in entries if e.uses_current]
    full = [e for e in entries if e.estimator == "full"]
    assert len(current) == 4 and len(full) == 1
    for e in current + full:
        assert f"{e.library} `{e.option}`" in text
    assert f"In {len(entries) - len(current) - len(full)} of its {len(entries)} rows" in text
    assert r"\log\pi_\theta$ on those tokens" in text


def _off_policy_means(eid: str) -> tuple[float, float]:
    """The auditor's setting: logit path, π_ref = θ0, π_old = θ0.5, π_θ = θ1; E_old[value] and KL[π_θ‖π_ref]."""
    path = PATHS["logit"]
    ref, old, cur = (path.at(t).log_probs for t in (0.0, 0.5, 1.0))
    value = evaluate(clamps.entry_by_id(eid), old, ref, logp_current=cur)
    return float(np.sum(np.exp(old) * value)), float(np.sum(np.exp(cur) * (cur - ref)))


def test_an_unweighted_current_role_value_is_unbiased_only_on_policy():
    """Finding 3: OpenRLHF's unbiased_gradient weights the gradient, not the value; TRL weights the value."""
    for eid in ("OpenRLHF:k1+unbiased_gradient:loss", "OpenRLHF:k3+unbiased_gradient:loss"):
        mean, kl = _off_policy_means(eid)
        assert mean != pytest.approx(kl, rel=1e-3)  # -0.0081 and 0.1851 against 0.2169
        e = clamps.entry_by_id(eid)
        assert "only on-policy" in notes.entry_facts(e)[4] and "yes" not in notes.entry_facts(e)[4]
        assert notes.unbiased_text(e) == "only on-policy (clamps aside)"
    mean, kl = _off_policy_means("TRL:use_bias_correction_kl:loss")
    assert mean == pytest.approx(kl, rel=1e-12)
    trl = clamps.entry_by_id("TRL:use_bias_correction_kl:loss")
    assert notes.entry_facts(trl)[4] == "**Unbiased for that KL:** yes" and notes.unbiased_text(trl) == "yes"


def test_a_loss_row_computing_the_same_value_gets_the_same_verdict():
    """OpenRLHF `k1` in the loss computes the value `k1+unbiased_gradient` does (log π_θ − log π_ref on
    tokens from π_old after the first step): both are unbiased only on-policy, neither a plain "yes"."""
    for e in CROSSWALK:
        if e.acts_on == "loss" and e.unbiased and not e.importance_weighted:
            assert notes.unbiased_text(e).startswith("only on-policy"), (e.library, e.option)
            line = notes.entry_facts(e)[4]
            assert "only on-policy" in line and ("importance-corrected" in line) == e.uses_current
    plain, current = (clamps.entry_by_id(i) for i in ("OpenRLHF:k1:loss", "OpenRLHF:k1+unbiased_gradient:loss"))
    assert notes.unbiased_text(plain) == notes.unbiased_text(current) == "only on-policy (clamps aside)"


def test_the_estimator_line_of_a_current_role_row_names_its_roles():
    """Finding 4: for the four current-role rows q is π_θ, not the sampler π_old (KL[π_old‖π_ref] = 0.0465)."""
    path = PATHS["logit"]
    ref, old = path.at(0.0).log_probs, path.at(0.5).log_probs
    kl_old = float(np.sum(np.exp(old) * (old - ref)))
    for e in CROSSWALK:
        line = notes.entry_facts(e)[3]
        if e.uses_current:
            mean, kl = _off_policy_means(clamps.entry_id(e))
            assert mean != pytest.approx(kl_old, rel=1e-2)
            assert "(q = sampler, p = other)" not in line and r"q = $\pi_\theta$" in line
        else:
            assert "(q = sampler, p = other)" in line


def test_the_demo_menu_help_counts_the_clamped_options():
    """Finding 5: the menu offers one option of each clamped formula, not every clamped option."""
    demo = [clamps.entry_by_id(i) for i in clamps.DEMO_ENTRIES]
    clamped = [e for e in CROSSWALK if e.clamped]
    kinds = {(e.estimator, e.logr_clamp, e.value_clamp) for e in clamped}
    assert kinds == {(e.estimator, e.logr_clamp, e.value_clamp) for e in demo if e.clamped}
    text = notes.demo_help(list(CROSSWALK), demo)
    shown = sum(e.clamped for e in demo)
    assert shown < len(clamped) and "Every clamped option" not in text
    assert text.startswith(f"{shown} of the crosswalk's {len(clamped)} clamped options, one for each")
    assert "TRL `k3` (no clamps)" in text


def test_the_k1_note_counts_tokens_and_gives_a_probability():
    """Finding 6: 3 of the 5 tokens have k1 < 0; 23% is their probability under π_old."""
    old, new = PATHS["logit"].base, PATHS["logit"].at(notes.CHECKLIST_THETA)
    ppo, rlhf = clamps.token_expectations(old, new), clamps.token_expectations(new, old)
    n = int(np.count_nonzero(old.log_probs - new.log_probs < 0))
    note = notes.checklist(ppo, rlhf)[3].note
    assert "of tokens give" not in note
    assert f"{n} of the {old.k} tokens give a negative value" in note
    assert f"probability **{share(ppo.k1_negative_share)}**" in note


def test_a_small_clamp_bias_never_prints_as_zero_percent():
    """Finding 7: ?cpath=logit&thm=2.7, the mean is 0.495% below the KL."""
    text, point = _answer("verl:low_var_kl:loss", "logit", 2.7)
    rel = point.bias / point.kl
    assert rel == pytest.approx(-0.00495, abs=5e-5)
    assert "**0% below**" not in text and f"**{share(-rel)} below**" in text and share(-rel) == "0.5%"
    delta, _ = notes.bias_delta(point.bias, point.kl)
    assert delta == f"{point.bias:+.3g} (-0.5%)"


def test_a_clamped_mean_that_equals_the_kl_by_chance_says_so():
    """Finding 8: ?ce=OpenRLHF:k2:reward&th=11, the clamps cut the mean from 9.249e-4 to the KL."""
    text, point = _answer("OpenRLHF:k2:reward", "peaked", 11.0)
    assert point.hit_prob > 0 and point.mean == pytest.approx(point.kl, rel=1e-6)
    assert point.unclamped_mean > 5 * point.mean
    assert "still equals" not in text and "happens to equal the exact KL" in text
    assert f"from {notes.number(point.unclamped_mean)} to **{notes.number(point.mean)}**" in text
    # where the clamps barely change the mean, it does still equal the KL
    assert "still equals" in _answer("verl:low_var_kl:loss", "peaked", 11.0)[0]


@pytest.mark.parametrize(("eid", "theta"), [("TRL:k3:reward", 30.0), ("verl:low_var_kl:loss", 0.5)])
def test_no_bias_arrow_where_the_mean_is_the_kl(eid, theta):
    """Finding 9: float noise (+3.55e-15, -1.21e-17) drew a red or green arrow next to "is the exact KL"."""
    text, point = _answer(eid, "peaked", theta)
    assert point.bias != 0 and "is the exact KL" in text
    assert notes.bias_delta(point.bias, point.kl) == (None, None)


def test_the_unbiased_column_says_clamps_aside():
    """Finding 10: at th=30 verl low_var_kl averages 10.0 against a KL of 22.08."""
    point = clamps.clamp_point("verl:low_var_kl:loss", "peaked", 30.0)
    assert point.mean == pytest.approx(10.0, abs=0.01) and point.kl == pytest.approx(22.08, abs=0.01)
    df = notes.crosswalk_frame(list(CROSSWALK))
    for e, cell in zip(CROSSWALK, df["unbiased"], strict=True):
        if e.clamped and e.unbiased:
            assert cell.endswith("(clamps aside)"), clamps.entry_id(e)
        elif not e.clamped:
            assert "clamps aside" not in cell
    assert df["unbiased"][list(CROSSWALK).index(clamps.entry_by_id("verl:low_var_kl:reward"))] == "yes (clamps aside)"
    assert df["unbiased"][list(CROSSWALK).index(clamps.entry_by_id("verl:low_var_kl:loss"))] == (
        "only on-policy (clamps aside)")


def test_the_clamp_chart_caption_points_at_the_dots():
    """Finding 11b: for k2 the solid line sits 50% off the dashes with no clamp hit, but on the dots."""
    point = clamps.clamp_point("OpenRLHF:k2:reward", "logit", 3.0)
    assert point.hit_prob == 0 and point.mean == point.unclamped_mean and point.mean > 1.4 * point.kl
    assert "leaves the dots" in notes.CLAMP_CHART_CAPTION and "leaves them" not in notes.CLAMP_CHART_CAPTION


def test_the_hit_caption_of_an_option_without_clamps():
    """Finding 11c: TRL k3 has no clamps, so "no token reaches this option's clamps" misleads."""
    trl = clamps.entry_by_id("TRL:k3:reward")
    curve = clamps.clamp_curve("TRL:k3:reward", "peaked")
    assert not trl.clamped and not (curve.hit_prob > 0).any()
    assert notes.hit_caption(trl.clamped, False).startswith("This option has no clamps")
    assert notes.hit_caption(True, False).startswith("No sampled token reaches")
    assert notes.hit_caption(True, True).startswith("The share of sampled tokens")


def test_the_path_help_and_the_checklist_intro_format_their_numbers():
    """Finding 12: token counts, the rare token's probability and θ come from the paths."""
    help_text = notes.path_help()
    rare = clamps.PEAKED.base.probs[clamps.PEAKED_TOKEN]
    assert f"Rare token: {clamps.PEAKED.base.k} tokens" in help_text and f"{rare:.2g}" in help_text
    assert f"Mild drift: {PATHS['logit'].base.k} tokens" in help_text
    old, new = PATHS["logit"].base, PATHS["logit"].at(notes.CHECKLIST_THETA)
    intro = notes.checklist_intro(old, new)
    assert f"over the {old.k} tokens" in intro and f"the path at θ = {notes.CHECKLIST_THETA:g}" in intro
    assert "five" not in intro and old.name in intro and new.name in intro


def test_a_reward_the_updated_policy_computes_is_unbiased_only_on_policy():
    """verl 0.9.1's distillation rewards (verl/trainer/distillation/losses.py) take the student's current
    log-probs π_θ on tokens the rollout policy π_old sampled: unbiased for the KL only on-policy."""
    rows = [e for e in CROSSWALK if e.grad_mode == "score_current"]
    assert {e.option for e in rows} >= {"distillation/k1", "distillation/k3"}
    for e in rows:
        assert notes.unbiased_text(e).startswith("only on-policy"), e.option
        assert "yes" not in notes.entry_facts(e)[4]


def _percent(text: str) -> float:
    return float(text.rstrip("%"))


@pytest.mark.parametrize("path", list(clamps.CLAMP_PATHS))
def test_k2s_clamped_gap_is_split_into_its_own_bias_and_the_clamps(path):
    """OpenRLHF k2, Rare token, θ = 4.5: "it averages 2.298e-07, 184.8% above the exact KL 8.07e-08
    (without clamps: 2.327e-07)" put the gap on the clamps, but +188.4% of it is k2's own bias and
    the clamps take 3.6% off."""
    e = clamps.entry_by_id("OpenRLHF:k2:reward")
    thetas = np.arange(0, 30.01, 0.5) if path == "peaked" else np.arange(0, 3.001, 0.05)
    split = 0
    for theta in thetas:
        text, point = _answer("OpenRLHF:k2:reward", path, float(theta))
        if point.hit_prob == 0 or notes._same(point.mean, point.kl):
            continue
        split += 1
        m = re.search(r"\*\*([\d.]+)% (above|below)\*\* the exact KL .*own bias, ([-+][\d.]+%) "
                      r"\(without clamps it averages (\S+)\), and the clamps, ([-+][\d.]+%)\.", text)
        assert m, text
        total = _percent(m[1]) * (1 if m[2] == "above" else -1)
        own, clamp = _percent(m[3]), _percent(m[5])
        assert own == pytest.approx(100 * (point.unclamped_mean - point.kl) / point.kl, abs=0.051)
        assert clamp == pytest.approx(100 * (point.mean - point.unclamped_mean) / point.kl, abs=0.051)
        assert total == pytest.approx(own + clamp, abs=0.11)  # the two parts add up to the gap
        assert m[4] == notes.number(point.unclamped_mean) and e.estimator == "k2"
    assert split > 0 or path != "peaked"
    text, _p = _answer("OpenRLHF:k2:reward", "peaked", 4.5)
    assert "**184.8% above**" in text and "own bias, +188.4%" in text and "the clamps, -3.6%" in text
    # an unbiased estimator's gap is all the clamps': no split
    assert "Two causes" not in _answer("verl:low_var_kl:loss", "peaked", 20.0)[0]


def test_k2s_unchanged_mean_under_a_clamp_is_all_its_own_bias():
    point = clamps.ClampPoint(1.0, 0.5, 0.6, 0.6, 0.01, 0.0, 0.01)  # hit, mean = unclamped ≠ KL
    text = notes.answer("OpenRLHF", "k2", 1.0, point)
    assert "leave its mean unchanged" in text and "**20.0% above**" in text and "own bias" in text


# ------------------------------------------------------------------ audit findings, round 2


def _root(f, lo: float, hi: float) -> float:
    """The root of ``f`` in [lo, hi], by bisection (f changes sign there)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if (f(mid) > 0) == (f(lo) > 0):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def test_the_clamp_intro_gives_each_options_band_of_log_r():
    """Finding 1: "While every sampled token's log-ratio is moderate the clamps do nothing; once the
    sampler draws … tokens that one policy finds likely and the other nearly impossible, they cap those
    tokens' values" is false: at ?cpath=Mild+drift&thm=2.75 low_var_kl's value clamp at 10 bites (P 0.0377,
    mean 2.9% low) on a token the sampler gives 0.0377 and the other policy 0.563, for k3 > 10 once
    log r > 2.61. The intro now gives each option's band, from the clamps themselves."""
    demo = [clamps.entry_by_id(i) for i in clamps.DEMO_ENTRIES]
    text = notes.clamps_intro(demo)
    assert "nearly impossible, they cap" not in text and "log-ratio is moderate" not in text
    k3_hi = _root(lambda x: np.expm1(x) - x - 10.0, 0.0, 5.0)  # k3 = 10 on either side of 0
    k3_lo = _root(lambda x: np.expm1(x) - x - 10.0, -30.0, 0.0)
    assert f"{k3_hi:.3g}" == "2.61" and f"{k3_lo:.3g}" == "-11"
    for band in (f"log r ∈ [{k3_lo:.3g}, {k3_hi:.3g}] for verl `low_var_kl`, OpenRLHF `k3`",
                 f"log r ∈ [-{20 ** 0.5:.3g}, {20 ** 0.5:.3g}] for OpenRLHF `k2`",  # k2 = ½ log² r = 10
                 "log r ∈ [-10, 10] for OpenRLHF `k1`", "log r ∈ [-20, 20] for verl `actor/ppo_kl`"):
        assert band in text, band
    assert (f"a token is clamped once the other policy gives it about {np.exp(float(f'{k3_hi:.3g}')):.3g} "
            f"times the sampler's probability or more (log r > {k3_hi:.3g})") in text
    assert "TRL" not in text  # no clamps, no band
    # the auditor's setting: a clamped token that neither policy finds nearly impossible
    point = clamps.clamp_point("verl:low_var_kl:loss", "logit", 2.75)
    assert point.hit_prob == pytest.approx(0.0377, abs=1e-4) and point.bias / point.kl == pytest.approx(-0.029, abs=1e-3)
    s, o = clamps.roles_at("verl:low_var_kl:loss", "logit", 2.75)
    tokens = clamps.clamp_tokens("verl:low_var_kl:loss", s.log_probs, o.log_probs)
    hit = np.flatnonzero(tokens.hit)
    assert hit.size == 1 and tokens.sampler_probs[hit[0]] > 0.03 and tokens.other_probs[hit[0]] > 0.5
    assert k3_hi < tokens.logr[hit[0]] < 3.0


@pytest.mark.parametrize("eid", [i for i in clamps.DEMO_ENTRIES if clamps.entry_by_id(i).clamped])
def test_a_clamp_changes_a_value_exactly_outside_its_band(eid):
    """The bands the intro states: just inside each bound the library's value is the estimator's,
    just outside a clamp changes it (:func:`kl_core.libraries.crosswalk.evaluate`)."""
    e = clamps.entry_by_id(eid)
    [(lo, hi, group)] = notes.clamp_bands([e])
    assert group == [e]
    for bound, inward in ((lo, 1.0), (hi, -1.0)):
        for logr, changed in ((bound + inward * 1e-6, False), (bound - inward * 1e-6, True)):
            value = evaluate(e, [min(0.0, -logr)], [min(0.0, logr)])[0]
            raw = {"k1": -logr, "k2": 0.5 * logr**2, "k3": np.expm1(logr) - logr}[e.estimator]
            assert (not np.isclose(value, raw, rtol=1e-9)) == changed, (eid, bound, logr)


def test_an_option_without_clamps_is_not_told_to_watch_the_clamps_act():
    """Finding 2: ?ce=TRL+k3+(reward)&th=0 said "…both 0. Move θ to see the clamps act." of TRL's k3,
    which has none."""
    text, point = _answer("TRL:k3:reward", "peaked", 0.0)
    assert point.kl == 0 and "both **0**" in text
    assert "clamps act" not in text and "This option has no clamps" in text
    assert "Move θ to see the clamps act." in _answer("verl:low_var_kl:loss", "peaked", 0.0)[0]


def test_a_clamped_mean_equal_to_the_kl_only_to_the_digits_shown_says_so():
    """Finding 3: ?th=11, "yet its mean 0.0001529 still equals the exact KL": 1.52877362e-4 against
    1.52877384e-4, equal only to the digits shown."""
    text, point = _answer("verl:low_var_kl:loss", "peaked", 11.0)
    assert point.mean != point.kl and notes.number(point.mean) == notes.number(point.kl) == "0.0001529"
    assert "still equals the exact KL to the digits shown" in text
    text, point = _answer("OpenRLHF:k2:reward", "peaked", 11.0)  # the clamps' chance landing on the KL
    assert point.mean != point.kl and "happens to equal the exact KL to the digits shown" in text
    exact = clamps.ClampPoint(1.0, 0.5, 0.5, 0.5, 0.01, 0.01, 0.0)
    assert notes.answer("verl", "low_var_kl", 1.0, exact).endswith("still equals the exact KL.")
    for eid in clamps.DEMO_ENTRIES:  # every setting the sliders allow
        for path, step in (("peaked", 0.5), ("logit", 0.05)):
            for theta in np.arange(0, clamps.CLAMP_PATHS[path].theta_max + 1e-9, step):
                text, point = _answer(eid, path, float(theta))
                if "to the digits shown" in text:
                    assert notes.number(point.mean) == notes.number(point.kl), (eid, path, theta)
                elif "equals the exact KL" in text or "happens to equal" in text:
                    assert point.mean == point.kl, (eid, path, theta)


def test_a_metric_row_shows_a_dash_for_its_gradient():
    """Finding 4: the crosswalk's gradient column showed a literal "None" for metric rows (Streamlit's
    text for an empty cell); the page passes a dash as the table's placeholder (tests/app/test_approx_kl.py)."""
    df = notes.crosswalk_frame(list(CROSSWALK))
    metrics = [i for i, e in enumerate(CROSSWALK) if e.grad_mode == "none"]
    assert metrics and all(pd.isna(df["gradient"][i]) for i in metrics)
    assert notes.NO_GRADIENT == "—"
    shown = [c for c in df.columns if c in notes.SHOWN_COLUMNS]
    assert df[shown].drop(columns="gradient").notna().all().all()  # the placeholder only ever fills the gradient


def test_a_probability_below_one_and_a_tiny_kl_are_written_as_they_are():
    """An audit: at θ = 30 (the slider's end) OpenRLHF's k1 hits its clamps with probability 0.99963, printed "1";
    at θ = 0.25 k2's mean 1.025e-11 was called "the exact KL" 9.442e-12 (an absolute tolerance of 1e-12)."""
    from kl_core.libraries import clamps
    from lab.format import probability_text

    far = clamps.clamp_point("OpenRLHF:k1:reward", "peaked", 30.0)
    assert 0.999 < far.hit_prob < 1.0
    assert "with probability 0.99963." in notes.answer("OpenRLHF", "k1", 30.0, far)
    assert float(probability_text(far.hit_prob)) != 1.0
    tiny = clamps.clamp_point("OpenRLHF:k2:reward", "peaked", 0.25)
    assert 0.05 < tiny.bias / tiny.kl < 0.1
    text = notes.answer("OpenRLHF", "k2", 0.25, tiny)
    assert "is the exact KL" not in text and "(+8.5%)" in text
    assert notes.bias_delta(tiny.bias, tiny.kl)[0] is not None
