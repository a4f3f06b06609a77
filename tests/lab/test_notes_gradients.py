"""lab.notes.gradients: the Gradients page's setting, option links, words, tables and command line.

Everything is checked against the core (``kl_core.gradients.expected``,
``kl_core.gradients.flow``, ``kl_core.cli.grad``) at the page's own settings,
never against copied numbers.
"""

from __future__ import annotations

import math
import shlex
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from kl_core.cli.grad import grad_report
from kl_core.gradients.demo import demo_logits, demo_reward
from kl_core.gradients.expected import (
    BASIC_OPTIONS,
    entry_name,
    gradient_entries,
    gradient_table,
)
from kl_core.gradients.flow import analytic_optima, training_runs
from kl_core.libraries.crosswalk import CROSSWALK, lookup
from lab.format import lam_text
from lab.notes import gradients as notes


def uniform_setting(*args):
    """The setting with the uniform π_ref (the README's and the lessons'), on which most tests here were built."""
    return notes.setting(*args, reference="uniform")


def table_at(s: notes.Setting, lam: float = 1.0):
    return gradient_table(s.policy, s.ref, sampler=s.sampler, lam=lam, entries=gradient_entries())


@pytest.fixture(scope="module")
def default() -> notes.Setting:
    s, problems = uniform_setting(6, 1.0, "", True, 0.5, "")
    assert problems == []
    return s


# ------------------------------------------------------------------ the setting
def test_the_uniform_setting_is_the_readme_grad_example(default):
    assert default.policy == (1.0, 0.0, -1.0, 0.5, 0.0, 0.0)
    assert default.ref == (0.0,) * 6
    assert default.sampler is None
    assert default.reward == (1.0, 0.2, 0.5, -0.3, 0.0, 0.8)
    assert default.k == 6


def test_hand_set_values_override_the_sliders_and_an_older_sampler_has_its_own_drift():
    s, problems = uniform_setting(4, 2.0, " 3, 1 ,0,-1 ", False, -0.5, "1;0;0;2")
    assert problems == []
    assert s.policy == (3.0, 1.0, 0.0, -1.0)
    assert s.sampler == tuple(demo_logits(4, -0.5))
    assert s.reward == (1.0, 0.0, 0.0, 2.0)


@pytest.mark.parametrize(
    ("logits", "reward", "says"),
    [
        ("1,2", "", "need one number per token (6), got 2"),
        ("a,b,c,d,e,f", "", "must be numbers separated by commas"),
        ("1,2,3,4,5,inf", "", "must be finite"),
        ("0,0,0,0,0,150", "", "may differ by at most 100"),
        ("", "1,2,3", "need one number per token (6), got 3"),
    ],
)
def test_unusable_hand_set_values_fall_back_with_a_warning(logits, reward, says):
    s, problems = uniform_setting(6, 1.0, logits, True, 0.5, reward)
    assert len(problems) == 1 and problems[0].kind == "warning"
    assert says in problems[0].text
    assert s.policy == tuple(demo_logits(6, 1.0)) and s.reward == tuple(demo_reward(6))


def test_parse_and_resize_values():
    assert notes.parse_values("1, -2.5,3e-1", 3, "x") == ((1.0, -2.5, 0.3), "")
    assert notes.values_text([1.0, -2.5, 0.3, 0.0]) == "1,-2.5,0.3,0"
    default = demo_reward(8)
    assert notes.resize_values("", 8, default) == ""
    assert notes.resize_values("1,2,3", 5, default) == "1,2,3,-0.3,0"  # filled from the default's tokens 3, 4
    assert notes.resize_values("1,2,3,4", 2, default) == "1,2"


def test_token_table_and_its_edits(default):
    df = notes.token_frame(default)
    assert list(df.columns) == ["token", "π_ref", "logit of π_θ", "π_θ", "reward R"]
    np.testing.assert_allclose(df["π_θ"], np.exp(gradient_table(default.policy, default.ref).policy_log_probs),
                               rtol=1e-12)
    assert df["π_θ"].sum() == pytest.approx(1.0, rel=1e-12)
    old = uniform_setting(3, 1.0, "", False, 0.5, "")[0]
    assert "π_old" in notes.token_frame(old).columns
    assert notes.apply_edits(default, {}) == {}
    assert notes.apply_edits(default, {2: {"logit of π_θ": 4.0}}) == {"logits": "1,0,4,0.5,0,0"}
    assert notes.apply_edits(default, {0: {"reward R": -1}, 5: {"reward R": 2.5}}) == {
        "rew": "-1,0.2,0.5,-0.3,0,2.5"}
    assert notes.apply_edits(default, {1: {"logit of π_θ": None}}) == {}  # a cleared cell changes nothing


# ------------------------------------------------------------------ the ?option= link
def test_every_option_name_is_a_row_of_the_table_and_resolves_to_itself(default):
    names = notes.option_names()
    assert names[: len(BASIC_OPTIONS)] == list(BASIC_OPTIONS)
    assert len(names) == len(set(names)) == len(BASIC_OPTIONS) + len(gradient_entries())
    assert table_at(default).names == names
    assert all(notes.resolve_option(n) == n for n in names)
    assert notes.DEFAULT_OPTION in names


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("verl:k3", "verl:low_var_kl"),  # k3 is an alias of verl's low_var_kl
        ("verl:k3 ", "verl:k3+"),  # a '+' typed into a link arrives as a space
        ("VERL:k3 ", "verl:k3+"),
        ("OpenRLHF:k1 unbiased_gradient", "OpenRLHF:k1+unbiased_gradient"),
        ("VERL:low_var_kl", "verl:low_var_kl"),
        ("openrlhf:k3:reward", "OpenRLHF:k3:reward"),
        ("trl:beta", "TRL:beta"),
        ("K3", "k3"),
        ("verl:nope", None),
        ("nolib:k3", None),
        ("verl:actor/ppo_kl", None),  # a logged metric: no gradient
        ("", None),
    ],
)
def test_links_may_use_aliases_and_any_case(raw, name):
    assert notes.resolve_option(raw) == name


def test_a_link_may_name_the_option_as_option_or_opt():
    assert notes.link_option("verl:k3", None) == ("verl:low_var_kl", "")
    assert notes.link_option(None, "verl:k3") == ("verl:low_var_kl", "")
    assert notes.link_option("k2", "k3") == ("k2", "")  # ?option= wins
    assert notes.link_option(None, "nope") == (None, "nope")
    assert notes.link_option(None, None) == notes.link_option("", "") == (None, "")


def test_unknown_option_note_names_the_closest_options():
    text = notes.option_problem("verl:lowvar_kl")
    assert "`verl:low_var_kl`" in text and "did you mean" in text
    assert "did you mean" not in notes.option_problem("zzzzzz")


def test_crosswalk_links_point_at_the_entry():
    for e in CROSSWALK:
        link = notes.gradients_link(e)
        if e.grad_mode == "none":
            assert link is None
            continue
        parts = urlsplit(link)
        assert parts.path == notes.PAGE_URL
        assert parse_qs(parts.query) == {notes.OPTION_KEY: [entry_name(e)]}


def test_panels_put_the_chosen_option_first_once():
    assert notes.panel_names("verl:low_var_kl") == ["verl:low_var_kl", *BASIC_OPTIONS]
    assert notes.panel_names("k3") == ["k3", "k1", "k2", "k3_pq", "k1_score", "k_lambda"]


# ------------------------------------------------------------------ words for the numbers
def test_words_for_what_each_gradient_is(default):
    t = table_at(default)
    words = {n: notes.target_words(t.row(n), t.on_policy) for n in BASIC_OPTIONS}
    assert words == {"k1": "zero", "k2": "reverse KL", "k3": "forward KL", "k3_pq": "mixed/biased",
                     "k1_score": "reverse KL", "k_lambda": "reverse KL"}
    assert notes.target_words(t.row("verl:low_var_kl"), True) == "forward KL"
    assert notes.cos_text(t.row("k1").cos_reverse) == "—"
    assert notes.cos_text(t.row("k2").cos_reverse) == "+1.000"


def test_clamps_and_old_samples_are_named_as_the_bias():
    far, _ = uniform_setting(6, 3.0, "", True, 0.5, "")
    t = table_at(far)
    row = t.row("verl:low_var_kl")
    assert row.target == "mixed" and row.clamped_mass > 0
    assert notes.target_words(row, True) == f"biased by clamps ({row.clamped_mass:.1%} of sampled tokens)"
    old, _ = uniform_setting(6, 1.0, "", False, 0.0, "")
    t = table_at(old)
    assert notes.target_words(t.row("k2"), False) == "biased by off-policy samples"
    assert notes.target_words(t.row("k3_pq"), False) == "mixed/biased"  # mixed on-policy too
    assert notes.target_words(t.row("TRL:use_bias_correction_kl"), False) == "reverse KL"


def test_headline_and_chosen_note_carry_the_table_numbers(default):
    t = table_at(default)
    head = notes.headline(t)
    assert head.kind == "info"
    assert f"{t.kl_reverse:.4g}" in head.text
    assert f"cosine {t.row('k3').cos_forward:+.3f} to it, {t.row('k3').cos_reverse:+.3f}" in head.text
    note = notes.chosen_note(t, "verl:low_var_kl")
    assert note.kind == "warning" and "**forward KL**" in note.text
    assert notes.fix_markdown(lookup("verl", "low_var_kl", acts_on="loss").grad_fix) in note.text
    assert "`kl_loss_type=k3+`" in note.text and "π_θ" not in note.text  # typeset, not raw notation
    assert notes.chosen_note(t, "k2").kind == "success"
    old, _ = uniform_setting(6, 1.0, "", False, 0.0, "")
    t_old = table_at(old)
    assert notes.headline(t_old).kind == "warning"
    assert f"{t_old.row('k2').cos_reverse:+.3f}" in notes.headline(t_old).text
    flat, _ = uniform_setting(6, 0.0, "", True, 0.5, "")
    t_flat = table_at(flat)
    assert notes.headline(t_flat).kind == notes.chosen_note(t_flat, "k3").kind == "info"


def test_panel_subtitles():
    t = table_at(uniform_setting(6, 1.0, "", True, 0.5, "")[0])
    row = t.row("k3")
    assert notes.panel_subtitle(row, True) == [
        "expected gradient: forward KL",
        f"cos to ∇ reverse KL: {row.cos_reverse:+.3f}",
        "cos to ∇ forward KL: +1.000",
    ]
    assert notes.option_title(t.row("verl:low_var_kl")) == "verl low_var_kl (loss)"
    assert notes.option_title(t.row("OpenRLHF:k3:reward")) == "OpenRLHF k3 (reward)"


# ------------------------------------------------------------------ tables
def test_cosine_table_is_the_core_rows(default):
    t = table_at(default)
    names = notes.panel_names("verl:low_var_kl")
    df = notes.cosine_frame(t, names)
    assert list(df["option"]) == names
    for i, name in enumerate(names):
        row = t.row(name)
        gradient = df.iloc[i, 6:].to_numpy(dtype=float)
        if row.target == "zero":
            assert df["‖E g‖"][i] == 0.0 and not gradient.any()
        else:
            assert df["‖E g‖"][i] == pytest.approx(np.linalg.norm(row.expected_grad), rel=1e-12)
            np.testing.assert_allclose(gradient, row.expected_grad, rtol=1e-12)
        assert df["spread per token"][i] == row.grad_spread
    assert list(df.columns[6:]) == [f"E g, logit {x}" for x in range(6)]


def test_library_table_puts_the_chosen_option_first(default):
    t = table_at(default)
    df = notes.library_frame(t, "OpenRLHF:k3")
    assert len(df) == len(gradient_entries())
    assert df.iloc[0][""] == "★" and df.iloc[0]["name in links"] == "OpenRLHF:k3"
    assert (df[""] == "★").sum() == 1
    by_name = df.set_index("name in links")
    assert by_name.loc["verl:low_var_kl", "gradient here"] == "forward KL"
    assert by_name.loc["verl:low_var_kl", "the library's fix"].startswith("kl_loss_type=k3+")
    assert by_name.loc["verl:k3+", "the library's fix"] == "not needed"
    assert by_name.loc["TRL:abs:reward", "the library's fix"] == "—"
    assert by_name.loc["TRL:use_bias_correction_kl", "from π_old"] == "reverse KL"


def test_spread_subtitle_shows_rounding_noise_as_zero():
    assert notes.spread_subtitle(-4.35e-17, 0.0493, -0.00207, 0.0491) == [
        "Monte Carlo: -0.00207 ± 0.0491", "exact: 0 ± 0.0493"]
    assert notes.spread_subtitle(0.224, 0.0272, 0.223, 0.0268)[1] == "exact: 0.224 ± 0.0272"


# ------------------------------------------------------------------ training
@pytest.fixture(scope="module")
def runs(default):
    return (training_runs(default.policy, default.ref, default.reward, 0.5, options=notes.TRAINING_OPTIONS),
            analytic_optima(default.ref, default.reward, 0.5))


@pytest.mark.parametrize(("k", "drift", "beta"), [(6, 1.0, 0.5), (10, 3.0, 0.05), (2, -3.0, 5.0), (6, -1.5, 0.1)])
def test_the_faster_drawn_ascent_ends_where_the_cores_default_does(k, drift, beta):
    s = uniform_setting(k, drift, "", True, 0.5, "")[0]
    lr = notes.training_step(s.reward, beta)
    assert lr == pytest.approx(notes.TRAINING_SPEEDUP / (np.ptp(s.reward) + beta), rel=1e-15)
    slow = training_runs(s.policy, s.ref, s.reward, beta, options=notes.TRAINING_OPTIONS)
    fast = training_runs(s.policy, s.ref, s.reward, beta, options=notes.TRAINING_OPTIONS,
                         steps=notes.TRAINING_STEPS, lr=lr)
    for name in notes.TRAINING_OPTIONS:
        np.testing.assert_allclose(fast[name].limit, slow[name].limit, rtol=1e-8, atol=1e-10)
        assert (fast[name].fixed_point is None) == (slow[name].fixed_point is None)
        assert fast[name].vanished == slow[name].vanished


def test_training_words(runs):
    done, optima = runs
    assert notes.run_end_text(done["k2"], optima) == ["ends at the reverse-KL optimum ●"]
    assert notes.run_end_text(done["k3"], optima) == ["ends at the forward-KL optimum ○"]
    assert notes.run_end_text(done["k1"], optima) == ["no fixed point: tokens 1, 2, 3, 4, 5 → 0,",
                                                      "the mass ends on token 0"]
    caption = notes.training_caption(done, optima)
    assert caption.startswith(f"k2 ends at the optimum of {notes.OBJECTIVE_REVERSE} (●); k3 at the optimum")


def test_training_table(default, runs):
    done, optima = runs
    df = notes.training_frame(default, done, optima)
    assert list(df["R"]) == list(default.reward)
    np.testing.assert_allclose(df["π_ref"], 1 / 6, rtol=1e-12)
    np.testing.assert_allclose(df["optimum, reverse KL"], optima[0], rtol=0)
    for name in notes.TRAINING_OPTIONS:
        np.testing.assert_allclose(df[f"{name} ends at"], done[name].limit, rtol=0)
    assert df["π_θ at the start"].sum() == pytest.approx(1.0, rel=1e-12)


# ------------------------------------------------------------------ the command line
def test_the_command_line_reproduces_the_view():
    on_policy, _ = uniform_setting(5, 1.3, "", True, 0.4, "")
    assert "--sampler" not in notes.cli_command(on_policy, lam=0.25, beta=0.7)
    s, _ = uniform_setting(5, 1.3, "", False, 0.4, "")
    cmd = notes.cli_command(s, lam=0.25, beta=0.7)
    args = shlex.split(cmd)
    assert args[:6] == ["uv", "run", "python", "-m", "kl_core", "grad"]

    def arg(flag: str) -> str | None:
        for i, a in enumerate(args):
            if a == flag:
                return args[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
        return None

    rep = grad_report(arg("--policy"), arg("--ref"), arg("--sampler"), float(arg("--lam")),
                      arg("--reward"), float(arg("--beta")))
    t = gradient_table(s.policy, s.ref, sampler=s.sampler, lam=0.25)
    np.testing.assert_allclose(rep["true_grad"]["reverse_kl"], t.true_reverse, rtol=1e-12)
    for row, out in zip(t.rows, rep["rows"], strict=True):
        assert out["name"] == row.name
        np.testing.assert_allclose(out["expected_grad"], row.expected_grad, rtol=1e-12, atol=1e-15)
    assert set(rep["fixed_points"]) == set(t.names)  # --reward and --beta were understood
    assert arg("--reward") == notes.values_text(s.reward) and math.isclose(float(arg("--beta")), 0.7)


def test_every_crosswalk_fix_has_a_typeset_translatable_form():
    """A new ``grad_fix`` in the crosswalk must be added to GRAD_FIXES (else it shows untyped, in English)."""
    fixes = {e.grad_fix for e in gradient_entries() if e.grad_fix}
    assert fixes == set(notes.GRAD_FIXES)
    for plain, typeset in notes.GRAD_FIXES.items():
        assert "π_" not in typeset and "`" in typeset, plain


# ------------------------------------------------------------------ the answer (issue 20: the point first)
def page_default(drift: float = notes.DEFAULT_DRIFT, on_policy: bool = True, old: float = 0.5) -> notes.Setting:
    """The page's setting at its default constants (the token_setting widgets' defaults)."""
    from kl_core.gradients.demo import DEMO_TOKENS

    s, problems = notes.setting(DEMO_TOKENS, drift, "", on_policy, old, "", notes.DEFAULT_REFERENCE)
    assert problems == []
    return s


def test_the_default_makes_the_point_and_the_preset_shows_the_opposite():
    t = table_at(page_default())
    assert t.row("k3").cos_reverse <= 0.8  # issue 20: k3 as a loss clearly off ∇KL[π_θ‖π_ref]
    assert t.row("k2").cos_reverse == pytest.approx(1.0, abs=1e-12)
    agree = table_at(page_default(notes.AGREE_DRIFT))
    assert agree.row("k3").cos_reverse >= notes.NEARLY
    assert notes.DEFAULT_OPTION == "k3" and notes.DEFAULT_REFERENCE in notes.REFERENCES


@pytest.mark.parametrize(
    ("drift", "on", "old", "verdict"),
    [(notes.DEFAULT_DRIFT, True, 0.5, "**No.**"), (notes.AGREE_DRIFT, True, 0.5, "**Nearly, here.**"),
     (1.0, False, -1.0, None), (0.0, True, 0.5, None)],
    ids=["default", "agree", "off-policy", "flat"],
)
def test_the_answer_is_true_in_each_branch(drift, on, old, verdict):
    t = table_at(page_default(drift, on, old))
    text = notes.answer(t)
    c3, c2 = t.row("k3").cos_reverse, t.row("k2").cos_reverse
    if drift == 0.0:
        assert "both KLs' gradients are zero" in text
        assert not t.true_reverse.any() and not t.row("k3").expected_grad.any()
        return
    assert text.startswith(notes.verdict(c3))
    if verdict is not None:
        assert text.startswith(verdict)
    assert f"(cosine {c3:+.3f})" in text and f"(cosine {c2:+.3f})" in text
    assert f"{math.degrees(math.acos(c3)):.0f}°" in text
    if on:  # on-policy k3's expected gradient is ∇KL[π_ref‖π_θ], k2's is ∇KL[π_θ‖π_ref]
        np.testing.assert_allclose(t.row("k3").expected_grad, t.true_forward, atol=1e-12)
        np.testing.assert_allclose(t.row("k2").expected_grad, t.true_reverse, atol=1e-12)
        assert "itself (cosine +1.000)" in text
    else:
        assert "With tokens from" in text and c2 < 0.9995


def test_the_verdict_follows_the_cosine():
    assert notes.verdict(0.999) == "**Nearly, here.**"
    assert notes.verdict(0.95) == "**Roughly, not exactly.**"
    assert notes.verdict(0.5) == notes.verdict(-1.0) == "**No.**"
    assert notes.angle(1.0 + 1e-15) == 0.0 and notes.angle(-1.0) == pytest.approx(180.0)


def test_the_first_chart_legend_and_captions():
    t = table_at(page_default())
    names = notes.pair_names(t)
    assert names[0] == "k2 as a loss (cos +1.000)"
    assert names[1] == f"k3 as a loss (cos {t.row('k3').cos_reverse:+.3f})"
    assert "end exactly on the ticks" in notes.pair_caption(t)
    assert "end exactly" not in notes.pair_caption(table_at(page_default(1.0, False, -1.0)))
    assert notes.library_caption(t, "k3").startswith("Same value")  # no star: k3 is no library's row
    assert notes.library_caption(t, "verl:low_var_kl").startswith("★ marks verl:low_var_kl.")


def test_the_drift_help_names_each_references_numbers():
    from kl_core.gradients.demo import DEMO_DIRECTION, UNEVEN_DIRECTION, UNEVEN_REF

    uneven = notes.drift_help("uneven", 6)
    assert ", ".join(f"{x:g}" for x in UNEVEN_REF) in uneven
    assert ", ".join(f"{x:g}" for x in UNEVEN_DIRECTION) in uneven
    assert "uniform" in notes.drift_help("uniform", 6)
    assert ", ".join(f"{x:g}" for x in DEMO_DIRECTION) in notes.drift_help("uniform", 6)
    # the page's K numbers, not the 6-token pattern (an audit: K = 2 showed six)
    two = notes.drift_help("uneven", 2)
    assert "= (2, 0)" in two and "v = (-2, 2)" in two and "0, 0" not in two
    ten = notes.drift_help("uniform", 10)
    assert len(ten.split("$v = (")[1].split(")")[0].split(", ")) == 10  # ten numbers
    # "for s > 0, π_θ moves mass from token 0 to token 1": at every vocabulary size
    for k in range(2, 11):
        probs = [np.exp(gradient_table(page_setting.policy, page_setting.ref).policy_log_probs)
                 for page_setting in (notes.setting(k, s, "", True, 0.0, "")[0] for s in (0.0, 0.5, 3.0))]
        assert probs[0][0] > probs[1][0] > probs[2][0] and probs[0][1] < probs[1][1] < probs[2][1]
        ref = notes.setting(k, 0.0, "", True, 0.0, "")[0].ref
        assert notes.token_frame(notes.setting(k, 0.0, "", True, 0.0, "")[0])["π_ref"][1] < 0.15  # "rare"
        assert ref[1] == min(ref)


def test_an_unknown_reference_is_refused():
    with pytest.raises(ValueError, match="reference must be one of"):
        notes.setting(6, 1.0, "", True, 0.5, "", "skewed")


def test_at_pi_ref_with_tokens_from_an_older_policy_not_every_option_is_zero():
    """s = 0 (π_θ = π_ref) with π_old's drift 0.5: both KL gradients vanish, k1's does not
    (E_old[−∇log π_θ] = π_θ − π_old); "every option's expected gradient is zero" was false."""
    s, _ = notes.setting(6, 0.0, "", False, 0.5, "")
    table = table_at(s)
    assert not np.any(table.true_reverse) and not np.any(table.true_forward)
    k1 = table.row("k1").expected_grad
    shift = np.exp(table.policy_log_probs) - np.exp(np.asarray(s.sampler) - np.logaddexp.reduce(s.sampler))
    assert abs(k1 @ shift) == pytest.approx(np.linalg.norm(k1) * np.linalg.norm(shift), rel=1e-9)
    assert np.linalg.norm(k1) > 0.1
    for text in (notes.answer(table), notes.headline(table).text):
        assert "still have a nonzero expected gradient" in text and "k1" in text
        assert "so is every option's" not in text and "every option's expected gradient is zero" not in text
    note = notes.chosen_note(table, "k1")
    assert note.kind == "warning" and "this option's expected gradient is not" in note.text
    # an option whose gradient is zero here is not told that every option's is (an audit: k3 was)
    still = [row.name for row in table.rows if np.linalg.norm(row.expected_grad) <= notes.ZERO_LENGTH]
    assert still
    for name in still:
        text = notes.chosen_note(table, name).text
        assert "every option's" not in text and "other options' are not" in text
    # on-policy at s = 0 every option's is zero, and the page says so
    s, _ = notes.setting(6, 0.0, "", True, 0.5, "")
    table = table_at(s)
    assert all(np.linalg.norm(row.expected_grad) <= notes.ZERO_LENGTH for row in table.rows)
    assert "and so is every option's" in notes.answer(table)
    assert notes.chosen_note(table, "k1").kind == "info"


def test_the_off_policy_headline_names_only_the_options_that_give_the_gradient_here():
    """π_old's drift −1: OpenRLHF's unbiased_gradient clips π_θ/π_old at 10 (the ratio reaches
    185) and is biased; "TRL's and OpenRLHF's options restore it" was false there."""
    for old_drift, openrlhf in ((-1.0, False), (0.5, True)):
        s, _ = notes.setting(6, 1.0, "", False, old_drift, "")
        table = table_at(s)
        text = notes.headline(table).text
        assert "`TRL:use_bias_correction_kl`" in text
        assert ("`OpenRLHF:k3+unbiased_gradient`" in text) == openrlhf
        assert (table.row("OpenRLHF:k3+unbiased_gradient").target == "reverse_kl") == openrlhf


def test_the_verdict_follows_the_cosine_as_printed():
    assert notes.cos_text(0.89996) == "+0.900" and notes.verdict(0.89996) == notes.verdict(0.9)
    assert notes.cos_text(0.98996) == "+0.990" and notes.verdict(0.98996) == notes.verdict(0.99)
    assert notes.verdict(0.8994) == "**No.**"  # prints +0.899


# ------------------------------------------------------------------ the opening caption
def test_the_opening_caption_says_what_k3_averages_to_with_the_tokens_at_hand(default):
    on = notes.opening_caption(table_at(default))
    assert "$q = \\pi_\\theta$, the policy the tokens are sampled from" in on and "without bias." in on
    old_setting, _ = uniform_setting(6, 1.0, "", False, -1.0, "")
    t = table_at(old_setting)
    # E_old[k3] by hand, against the KL it no longer equals
    r = np.exp(np.asarray(t.ref_log_probs) - np.asarray(t.policy_log_probs))
    mean = float(np.dot(t.sampler_probs, r - 1 - np.log(r)))
    assert mean == pytest.approx(t.k3_sampler_mean, rel=1e-12)
    assert abs(mean - t.kl_reverse) > 0.01
    off = notes.opening_caption(t)
    assert "the policy the tokens are sampled from" not in off and "sampled from $\\pi_\\mathrm{old}$" in off
    assert f"comes to {mean:.4g} here, not" in off and f"= {t.kl_reverse:.4g}" in off
    # π_θ = π_ref: every k3 is 0, so its average under π_old is the KL, 0
    at_ref, _ = uniform_setting(6, 0.0, "", False, -1.0, "")
    assert "still comes to" in notes.opening_caption(table_at(at_ref))
    # on-policy, the core's mean is the KL itself
    assert table_at(default).k3_sampler_mean == pytest.approx(table_at(default).kl_reverse, rel=1e-12)


# ------------------------------------------------------------------ audit fixes
@pytest.mark.parametrize("logits", ["40,0,0,0,0,0", "100,0,0,0,0,0", "30,0,0,0,0,0"])
def test_a_nearly_one_hot_policy_still_says_k2_gives_the_kls_gradient(logits):
    """‖∇KL‖ ≈ 1e-15 (KL 0.9327): k2's expected gradient was called zero, so the headline
    printed "(cosine +0.000)" and the answer "k2's —"."""
    s, problems = notes.setting(6, 1.0, logits, True, 0.5, "", "uneven")
    assert problems == []
    t = table_at(s)
    head, text = notes.headline(t).text, notes.answer(t)
    assert t.row("k2").target == "reverse_kl"
    assert "gives $\\nabla\\mathrm{KL}[\\pi_\\theta\\|\\pi_\\mathrm{ref}]$ (cosine +1.000)" in head
    assert "+0.000" not in head and "—" not in text
    assert "itself (cosine +1.000)" in text
    assert notes.pair_names(t)[0] == "k2 as a loss (cos +1.000)"
    assert notes.cosine_frame(t, ["k2"])["expected gradient is"][0] == "reverse KL"


def test_the_headline_never_prints_an_undefined_cosine_as_zero(default):
    """A zero vector's cosine is None: the prose prints — and says why, never +0.000."""
    import dataclasses

    t = table_at(default)
    blank = dataclasses.replace(t.row("k2"), cos_reverse=None, cos_forward=None, target="zero")
    t = dataclasses.replace(t, rows=tuple(blank if r.name == "k2" else r for r in t.rows))
    head = notes.headline(t).text
    assert "+0.000" not in head and "(cosine — to" in head and "k2's is zero" in head
    assert "— marks a cosine with a vector that is zero to rounding" in head
    assert "no direction" in notes.answer(t)
    old, _ = uniform_setting(6, 1.0, "", False, 0.0, "")
    t = table_at(old)
    t = dataclasses.replace(t, rows=tuple(dataclasses.replace(r, cos_reverse=None) if r.name == "k2" else r
                                          for r in t.rows))
    head = notes.headline(t).text
    assert "+0.000" not in head and "is undefined (—)" in head


def test_the_k_lambda_intro_says_unbiased_for_every_lambda_only_on_policy():
    """?smp=old: E_old[r − 1] = 1.271, kλ's mean −1.197 (λ = −1) … 3.887 (λ = 3) against KL 0.528;
    "the same unbiased value for every λ, since E[r − 1] = 0" was false there."""
    on = notes.k_lambda_intro(table_at(page_default()), -1.0, 3.0)
    assert "on-policy, the same unbiased value for every λ" in on
    s = page_default(notes.DEFAULT_DRIFT, False, 0.5)
    t = table_at(s)
    r = np.exp(t.ref_log_probs - t.policy_log_probs)
    gap = float(t.sampler_probs @ (r - 1))
    lo, hi = (float(t.sampler_probs @ (-np.log(r) + lam * (r - 1))) for lam in (-1.0, 3.0))
    assert (f"{gap:.4g}", f"{lo:.4g}", f"{hi:.4g}", f"{t.kl_reverse:.4g}") == ("1.271", "-1.197", "3.887", "0.5276")
    off = notes.k_lambda_intro(t, -1.0, 3.0)
    assert "On-policy it has the same unbiased value for every λ" in off
    # the Unicode minus in prose ("-1.197 at λ = -1" had hyphens); LaTeX keeps its own
    assert f"= {gap:.4g}$ here, so kλ's average moves with λ: −1.197 at λ = −1, {hi:.4g} at λ = 3" in off
    assert "-" not in "".join(off.split("$")[0::2]).replace("on-policy", "").replace("On-policy", "")
    assert f"= {t.kl_reverse:.4g}" in off and "page): the same unbiased value" not in off
    assert t.k_lambda_sampler_mean(0.0) == pytest.approx(float(t.sampler_probs @ -np.log(r)), rel=1e-12)


@pytest.mark.parametrize(("k", "drift", "reference"), [(6, 0.0, "uneven"), (3, 0.05, "uniform"), (6, 1.0, "uneven")])
def test_the_lambda_star_help_compares_with_lambda_grad_as_printed(k, drift, reference):
    """At uniform K = 3, s = 0.05 (both 0.999) "not the best λ for the gradient" was false; at s = 0
    (π_θ = π_ref) every λ is the value's λ*, and the help says so instead of calling it λ_grad."""
    s, _ = notes.setting(k, drift, "", True, 0.5, "", reference)
    t = table_at(s)
    text = notes.lambda_value_help(t)
    same = lam_text(t.lam_grad_opt) == lam_text(t.lam_value_opt)
    assert t.lam_value_any == (drift == 0.0)
    assert ("here every λ" in text) == t.lam_value_any
    assert ("here it is also λ_grad" in text) == (same and not t.lam_value_any)
    assert ("not the best λ for the gradient, λ_grad = " + lam_text(t.lam_grad_opt) in text) == (not same)


def test_off_policy_the_lambda_caption_calls_lambda_star_the_on_policy_value():
    t = table_at(page_default(notes.DEFAULT_DRIFT, False, 0.5))
    text = notes.lambda_caption(t)
    assert f"λ* = {lam_text(t.lam_value_opt)}, the λ that makes the KL's *value* estimate from on-policy tokens" in text
    assert "from on-policy tokens" not in notes.lambda_caption(table_at(page_default()))


def test_off_policy_the_library_table_never_says_not_needed_for_a_biased_row():
    """?smp=old: verl:k3+ has cosine +0.601 and "biased by off-policy samples", yet its fix said "not needed"."""
    t = table_at(page_default(notes.DEFAULT_DRIFT, False, 0.5))
    df = notes.library_frame(t).set_index("name in links")
    assert df.loc["verl:k3+", "gradient here"] == "biased by off-policy samples"
    assert df.loc["verl:k3+", "the library's fix"] == "none in the crosswalk for off-policy samples"
    needed = df[df["the library's fix"] == "not needed"]
    assert len(needed) > 0 and (needed["gradient here"] == "reverse KL").all()
    for name in df.index:
        if t.row(name).target != "reverse_kl":
            assert df.loc[name, "the library's fix"] != "not needed", name
    # on-policy the crosswalk's claim holds and the row says so
    on = notes.library_frame(table_at(page_default())).set_index("name in links")
    assert on.loc["verl:k3+", "the library's fix"] == "not needed"


@pytest.mark.parametrize("k", range(2, 11))
def test_the_reference_help_names_the_tokens_the_uneven_reference_likes(k):
    s, _ = notes.setting(k, 0.0, "", True, 0.0, "", "uneven")
    probs = notes.token_frame(s)["π_ref"].to_numpy()
    liked = [i for i in range(k) if probs[i] == probs.max()]
    text = notes.reference_help(k)
    assert "token{} {} and makes".format("s" if len(liked) > 1 else "", ", ".join(map(str, liked))) in text
    assert all(probs[i] < 0.15 for i in range(k) if i not in liked)  # "the others rare"
    assert probs[1] == probs.min()


def test_the_zero_gradient_notes_name_typed_logits_too():
    s, problems = notes.setting(6, 1.0, "3,1,3,1,1,1", True, 0.5, "", "uneven")  # π_ref's logits + 1
    assert problems == []
    t = table_at(s)
    assert not t.true_reverse.any()
    assert "with logits typed by hand, change them" in notes.headline(t).text
    assert "with logits typed by hand, change them" in notes.answer(t)


@pytest.mark.parametrize("on_policy", [True, False])
def test_at_zero_drift_a_zero_gradient_needs_no_fix_and_nothing_is_called_clamped(on_policy):
    """Drift s = 0 (π_θ = π_ref, ∇KL = 0): 15 reverse-KL rows said "none in the crosswalk for clamped
    tokens" on-policy with nothing clamped, and off-policy verl:k1+, whose zero is the right gradient,
    "none … for off-policy samples"."""
    t = table_at(page_default(0.0, on_policy))
    assert not t.true_reverse.any()
    df = notes.library_frame(t).set_index("name in links")
    for name in df.index:
        row = t.row(name)
        fix = df.loc[name, "the library's fix"]
        assert "clamped tokens" not in fix or row.clamped_mass > 0, name
        if row.entry.grad_target == "reverse_kl" and not row.entry.grad_fix and row.target == "zero":
            assert fix == "not needed", name
    assert df.loc["verl:k1+", "the library's fix"] == "not needed"
    if not on_policy:  # a row the old samples bias still has no fix
        assert df.loc["TRL:kl:reward", "the library's fix"] == "none in the crosswalk for off-policy samples"


@pytest.mark.parametrize("logits", ["1234.567,1233.5,1236,1234,1234,1234", "20000,19990,19980,19970,19960,19950"])
def test_the_command_line_reproduces_the_view_exactly(logits):
    """An audit: logits written with 6 digits (1234.567 as 1234.57) gave KL 0.1642 against the page's 0.1647, and
    logits past ±10000, which the page takes (a spread under 100), were refused by the command line."""
    s, problems = notes.setting(6, 0.0, logits, True, 0.5, "")
    assert problems == []
    lam = 1.4209212345678
    args = shlex.split(notes.cli_command(s, lam, 0.1))
    policy = args[args.index("--policy") + 1]
    written = np.array([float(v) for v in policy[len("categorical("):-1].split(",")])
    typed = np.array(s.policy)
    np.testing.assert_allclose(written - written.max(), typed - typed.max(), rtol=0, atol=1e-9)
    assert np.all(np.abs(written) <= 1e4)
    assert f"--lam={lam!r}" in args
    report = grad_report(policy, args[args.index("--ref") + 1], lam=lam)
    assert report is not None


def test_numbers_are_written_short_only_where_that_loses_nothing():
    assert notes.values_text([1.0, 0.5, -3.0, 1234.567]) == "1,0.5,-3,1234.567"
    assert float(notes.number_text(1 / 3)) == 1 / 3
