"""lab.notes.config_doctor: the sentences and tables of the "Config doctor" page."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from i18n import _, using
from kl_core.doctor.diagnosis import GRADIENT_WORDS, WARNING_CODES, diagnose
from kl_core.libraries.clamps import entry_id
from kl_core.libraries.crosswalk import options
from lab.notes import config_doctor as notes
from scripts.translations import english_runs

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "data" / "doctor_examples"
VERL = "python3 -m verl.trainer.main_ppo "


@pytest.fixture(scope="module")
def verl():
    return diagnose(notes.example_text("verl"), filename=notes.EXAMPLES["verl"].file)


def test_examples_are_the_tested_real_configs():
    for key, ex in notes.EXAMPLES.items():
        if key == "own":
            assert notes.example_text(key) == "" and ex.file == ""
            continue
        assert notes.example_text(key) == (FIXTURES / ex.file).read_text(encoding="utf-8")
        assert diagnose(notes.example_text(key)).library == ex.library
    assert [e.label for e in notes.EXAMPLES.values()] == ["verl", "OpenRLHF", "TRL", "Your own"]


def test_headline_counts_the_terms():
    assert notes.headline(diagnose(VERL + "actor_rollout_ref.actor.use_kl_loss=True")) == \
        "verl 0.9.1: one KL term, in the loss"
    assert notes.headline(diagnose(VERL + "algorithm.use_kl_in_reward=True actor_rollout_ref.actor.use_kl_loss=True")) \
        == "verl 0.9.1: 2 KL terms, in the reward and the loss"
    assert notes.headline(diagnose("GRPOConfig(beta=0.0)")) == "TRL 1.16.0: no KL term"


def test_a_run_that_stops_is_not_headlined_as_one_that_trains():
    """A setting the release refuses stops the run: the headline and the verdict say so before any KL term."""
    d = diagnose(VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_los_coef=0.3")
    head = notes.headline(d)
    assert head == "verl 0.9.1: the run stops before training, on settings it does not accept"
    assert "KL term" not in head
    lines = notes.summary_lines(d)
    assert lines[0] == ("**The run stops before training:** verl 0.9.1 does not accept "
                        "`actor_rollout_ref.actor.kl_los_coef`. Without it:")
    assert len(lines) == 2 and lines[1].startswith("**In the loss:**")
    none = diagnose((ROOT / "tests" / "doctor" / "real_scripts" / "verl" / "v0.4.1_ppo_run_deepseek7b_llm.sh").read_bytes(),
                    release="latest")  # read as 0.4.0–0.7.1 it trains; 0.9.1 refuses its critic.model.fsdp_config
    assert "no KL term" not in notes.headline(none)
    assert notes.summary_lines(none)[0].startswith("**The run stops before training:**")
    assert notes.summary_lines(none)[1] == "**No KL term**: nothing ties the policy to its reference model."
    w = none.warnings[0]
    assert w.code == "SETTING_REJECTED" and notes.fix_cost(none, w).startswith("**Trade-off:**")
    assert notes.plain_title(w.code) == "Settings the release refuses stop the run before training"


def test_read_line_and_title(verl):
    line = notes.read_line(verl)
    assert line.startswith("Read as a command: `$LAUNCH -m verl.trainer.main_ppo`. 7 of the 16 settings")
    assert "defaults of verl 0.9.1" in line
    assert notes.use_title(verl, verl.kl_uses[0]) == "In the loss: `actor_rollout_ref.actor.kl_loss_type=low_var_kl` → k3"
    trl = diagnose(notes.example_text("trl"))
    # the row's settings as code, no English words (the zh page showed "(the default) with")
    assert notes.use_title(trl, trl.kl_uses[0]) == (
        "In the loss: `GRPOConfig.beta != 0, GRPOConfig.use_bias_correction_kl=True` → k3")
    assert notes.read_line(trl).startswith("Read as Python: `GRPOConfig(...) on line 4`.")


def test_facts_carry_the_gradient_badges_and_the_aggregation(verl):
    facts = notes.use_facts(verl, verl.kl_uses[0])
    assert facts[0] == "**Coefficient** `actor_rollout_ref.actor.kl_loss_coef` = 0.001 (fixed)"
    assert facts[1] == r"**Its value estimates** $\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$"
    assert notes.badge("forward_kl") in facts[2] and notes.gradient_words("forward_kl") in facts[2]
    assert notes.badge("mixed") in facts[3]
    assert facts[4].startswith("**Aggregated as** token mean over the batch (`actor_rollout_ref.actor.loss_agg_mode=token-mean`)")
    adaptive = diagnose(VERL + "algorithm.use_kl_in_reward=True algorithm.kl_ctrl.type=adaptive "
                        "actor_rollout_ref.actor.ppo_mini_batch_size=1024")
    assert notes.use_facts(adaptive, adaptive.kl_uses[0])[0].endswith("(adaptive, target KL 0.1, horizon 10000)")
    odd = diagnose("GRPOConfig(beta=0.1, loss_type='new_loss')")
    assert notes.use_facts(odd, odd.kl_uses[0])[-1] == "**Aggregated as** `new_loss`, which TRL 1.16.0 does not define."


def test_summary_and_fix_groups(verl):
    (line,) = notes.summary_lines(verl)
    assert line.startswith(r"**In the loss:** `low_var_kl` (k3) · its value estimates $\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$")
    assert line.endswith("in later steps " + notes.badge("mixed"))
    assert notes.fix_groups(verl) == [
        ("actor_rollout_ref.actor.kl_loss_type=low_var_kl+", ["FORWARD_KL_GRAD", "CLAMP_HIDES_DRIFT"]),
        ("actor_rollout_ref.actor.ppo_mini_batch_size=1024", ["OFF_POLICY_UNCORRECTED"]),
    ]
    none = diagnose("GRPOConfig(beta=0.0)")
    assert notes.summary_lines(none) == ["**No KL term**: nothing ties the policy to its reference model."]
    orl = diagnose(notes.example_text("openrlhf"))
    assert notes.summary_lines(orl)[0].startswith("**In the loss:** `k3` · ")  # no "(k3)" after k3


def test_alternatives_frame_marks_the_option_in_use(verl):
    df = notes.alternatives_frame(verl.kl_uses[0])
    assert list(df.columns) == ["option", "estimator", "gradient on-policy", "gradient off-policy", "in use"]
    assert df.loc[df["in use"], "option"].tolist() == ["low_var_kl"]
    assert df.set_index("option").loc["k3+", "gradient on-policy"] == "reverse KL"  # the badge's word
    on = diagnose(notes.example_text("trl"))
    assert "gradient off-policy" not in notes.alternatives_frame(on.kl_uses[0]).columns


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir()))
def test_crosswalk_link_names_a_row_of_the_approx_kl_picker(name):
    d = diagnose((FIXTURES / name).read_bytes(), filename=name)
    for u in d.kl_uses:
        q = notes.crosswalk_query(u)
        labels = {"{o} ({w})".format(o=e.option, w=e.acts_on): entry_id(e) for e in options(q["lib"])}
        assert labels[q["opt"]] == entry_id(u.entry)


def test_warning_texts_fix_language_and_tables(verl):
    w = verl.warnings[0]
    assert notes.warning_title(w) == ("**The gradient is the other KL direction's** :small[`FORWARD_KL_GRAD`]  \n"
                                      + notes.typeset(w.message))
    assert notes.fix_language(verl) == "bash" and notes.fix_language(diagnose("beta: 0.1\n")) == "yaml"
    not_literal = next(w for w in verl.warnings if w.code == "NOT_LITERAL")
    assert notes.no_fix_text(verl, not_literal).startswith("Write the value itself")
    legacy = diagnose("PPOConfig(kl_estimator='k1', num_ppo_epochs=1)")
    assert notes.no_fix_text(legacy, legacy.warnings[0]).startswith("Move to a trainer TRL still ships")
    orl = diagnose((FIXTURES / "openrlhf_ppo_hybrid.sh").read_bytes(), release="latest")
    assert notes.unknown_frame(orl).to_dict("records") == [
        {"key": "--algo.advantage.is_correction_enable", "did you mean": "--algo.advantage.is_correction_level"}]
    rows = notes.settings_frame(verl).set_index("setting")
    assert rows.loc["actor_rollout_ref.actor.kl_loss_type", "from"] == "your text"
    assert rows.loc["actor_rollout_ref.actor.loss_agg_mode"].tolist() == ["token-mean", "verl 0.9.1 default"]
    assert rows.loc["algorithm.use_kl_in_reward", "value"] == "false"
    assert json.loads(notes.card_json(verl)) == json.loads(json.dumps(verl.to_json()))


def test_pull_captions_follow_the_gradient_and_the_clamp(verl):
    assert "dotted forward-KL line, not the dashed reverse-KL one" in notes.pull_caption(verl.kl_uses[0])
    assert r"Past $\log r = 2.61$ the clamp bites" in notes.pull_caption(verl.kl_uses[0])
    plus = diagnose(VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=k3+")
    assert notes.pull_caption(plus.kl_uses[0]) == \
        "The coloured line lies on the dashed reverse-KL line: this term pulls each token back as the reverse KL does."
    reward = diagnose(VERL + "algorithm.use_kl_in_reward=True algorithm.kl_penalty=mse")
    cap = notes.pull_caption(reward.kl_uses[0])
    assert cap.startswith("The coloured line follows neither") and cap.endswith("policy-gradient term.")


def test_every_kl_term_links_to_its_option_on_the_gradients_page():
    from kl_core.gradients.expected import entry_name
    from lab.notes.gradients import resolve_option

    seen = 0
    for path in sorted(FIXTURES.glob("*")):
        d = diagnose(path.read_text(), filename=path.name)
        for u in d.kl_uses:
            q = notes.gradients_query(u)
            if u.entry.grad_mode == "none":
                assert q is None
            else:
                assert q == {"option": entry_name(u.entry)}
                assert resolve_option(q["option"]) == q["option"]  # the Gradients page finds it
                seen += 1
    assert seen >= 5


def test_the_gradient_words_are_the_cores_and_notation_is_typeset():
    assert set(GRADIENT_WORDS) == set(notes.GRADIENT_BADGES)  # one badge per target; the words are the core's (N_)
    assert notes.typeset("KL[π_θ‖π_ref] and ∇KL[π_ref‖π_θ] move π_old; `π_θ` stays") == (
        r"$\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ and $\nabla\mathrm{KL}[\pi_\mathrm{ref}\|\pi_\theta]$ "
        r"move $\pi_\mathrm{old}$; `π_θ` stays")
    assert notes.badge("reverse_kl") == ":green-badge[:material/check: reverse KL]"


# ------------------------------------------------------------ issue 13: the core's sentences, translated
def test_the_cores_sentences_are_shown_in_chinese_with_the_same_numbers():
    import re

    from i18n import using
    from scripts.translations import english_runs

    edge = ("python3 -m verl.trainer.main_ppo algorithm.use_kl_in_reward=True algorithm.kl_penalty=low_var_kl "
            "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=k1 "
            "actor_rollout_ref.actor.kl_loss_coef=-0.1 ~data.val_files distillation.enabled=True $@")
    off = ("python3 -m verl.trainer.main_ppo algorithm.use_kl_in_reward=False "
           "actor_rollout_ref.actor.use_kl_loss=False actor_rollout_ref.actor.kl_loss_coef=0.1")
    markup = re.compile(r"\$[^$]*\$|`[^`]*`|:[a-z]+-badge\[:material/[a-z_]+:|:small\[")
    for text in [notes.example_text(k) for k in ("verl", "openrlhf", "trl")] + [edge, off]:
        d = diagnose(text)
        shown = {}
        for lang in ("en", "zh"):
            with using(lang):
                shown[lang] = [notes.warning_title(w) for w in d.warnings] + [notes.note_text(n) for n in d.notes]
                for u in d.kl_uses:
                    shown[lang] += [notes.caveat(u)] + notes.use_facts(d, u)
        assert shown["en"][: len(d.warnings)] == [  # English: the core's own text, under the plain title
            "**{t}** :small[`{c}`]  \n{m}".format(t=notes.WARNING_TITLES[w.code], c=w.code, m=notes.typeset(w.message))
            for w in d.warnings]
        for en, zh in zip(shown["en"], shown["zh"], strict=True):
            assert english_runs(markup.sub(" ", zh)) == [], zh
            assert sorted(re.findall(r"\d+(?:\.\d+)?", en)) == sorted(re.findall(r"\d+(?:\.\d+)?", zh)), (en, zh)


def test_release_line_and_the_other_release_in_both_languages():
    import re

    from i18n import using
    from scripts.translations import english_runs

    real = Path(__file__).resolve().parents[1] / "doctor" / "real_scripts"
    markup = re.compile(r"\$[^$]*\$|`[^`]*`|\*\*")
    for name in ("openrlhf/v0.7.5_train_grpo_ray_hybrid_engine.sh", "verl/tinyzero_train_tiny_zero.sh",
                 "trl/open-r1_qwen2.5-1.5b_grpo_config_demo.yaml", "verl/v0.3.0.post1_ppo_run_deepseek7b_llm.sh"):
        d = diagnose((real / name).read_bytes(), filename=Path(name).name)
        shown = {}
        for lang in ("en", "zh"):
            with using(lang):
                shown[lang] = [notes.release_line(d), *notes.other_release_lines(d)] + \
                    [notes.note_text(n) for n in d.notes]
        assert shown["en"][0].startswith("**Release:** {lib} {rel}".format(lib=d.library, rel=d.release))
        assert len(shown["en"]) >= 3 and d.also
        for en, zh in zip(shown["en"], shown["zh"], strict=True):
            plain = markup.sub(" ", zh)
            plain = re.sub(r"[\w.\-/@]*[._/@\-][\w.\-/@]*|\b[A-Za-z]+\d[\w]*|\b(OpenRLHF|TRL|verl|TinyZero|"
                           r"open-r1|Jiayi-Pan|huggingface|KL|PR|dp|megatron|torchtitan|veomni|k[123]|"
                           r"reverse_kl|forward_kl|mixed|zero|True|False)\b", " ", plain)
            assert english_runs(plain) == [], zh
            assert sorted(re.findall(r"\d+(?:\.\d+)?", en)) == sorted(re.findall(r"\d+(?:\.\d+)?", zh)), (en, zh)


def test_clamp_words_name_each_side():
    import i18n

    assert notes.clamp_words(None, None) == ""
    assert notes.clamp_words(-10.0, 10.0) == ""                       # both off the chart
    assert notes.clamp_words(-4.4721, 4.4721) == (r" Past $|\log r| = 4.47$ the clamp bites. There the line goes "
                                                  "flat: larger drifts are pulled no harder.")
    one = notes.clamp_words(-10.99998, 2.61087)
    assert one.startswith(r" Past $\log r = 2.61$ the clamp bites") and one.endswith(
        r"On the other side it bites only below $\log r = -11.00$, off the chart.")
    assert notes.clamp_words(None, 2.61087).endswith("On the other side it never bites.")
    assert notes.clamp_words(-1.5, 2.61087).startswith(r" Below $\log r = -1.50$ and past $\log r = 2.61$ the clamp")
    with i18n.using("zh"):
        zh = notes.clamp_words(-10.99998, 2.61087)
    assert r"$\log r = 2.61$" in zh and r"$\log r = -11.00$" in zh and "截断" in zh


def test_the_clamp_is_written_with_log_r_never_t():
    """t is a token position only (issue 20 §5): the doctor's log-ratio is log r = log π_ref − log π_θ."""
    for below, above in ((-4.4721, 4.4721), (-10.99998, 2.61087), (-1.5, 2.61087), (None, 2.61087), (-2.0, None)):
        text = notes.clamp_words(below, above)
        assert text and "t =" not in text and "|t|" not in text and r"\log r" in text
    assert "$t" not in _(notes._PULL["forward_kl"]) and r"$\log r > 0$" in _(notes._PULL["forward_kl"])


# --------------------------------------------------------------------------- issue 20 §4: the doctor speaks web
def _warning_cases() -> dict[str, tuple]:
    """tests/doctor/test_diagnosis.py's one case per warning code (its module is not a package: load it by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_doctor_cases", ROOT / "tests" / "doctor" / "test_diagnosis.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.WARNING_CASES


WARNING_CASES = _warning_cases()


def _every_diagnosis():
    """The one-case-per-code configs, the page's and the data's examples, and the real scripts under tests/doctor."""
    for library, text, _fix in WARNING_CASES.values():
        yield diagnose(text, library)
    for path in sorted(FIXTURES.iterdir()) + sorted((ROOT / "tests" / "doctor" / "real_scripts").rglob("*")):
        if path.is_file():
            try:
                yield diagnose(path.read_bytes(), filename=path.name)
            except ValueError:
                continue  # a script the doctor refuses is tested in tests/doctor


def test_every_warning_code_has_a_plain_title_and_the_code_stays_beside_it():
    assert sorted(notes.WARNING_TITLES) == sorted(WARNING_CODES)
    for code, title in notes.WARNING_TITLES.items():
        assert code not in title and "_" not in title and len(title) <= 60, title
    d = diagnose(*WARNING_CASES["KL_TWICE"][1::-1])
    for w in d.warnings:
        shown = notes.warning_title(w)
        assert shown.startswith("**" + notes.WARNING_TITLES[w.code] + "**")
        assert shown.index(notes.WARNING_TITLES[w.code]) < shown.index(w.code)


@pytest.mark.parametrize("code", sorted(WARNING_CASES))
def test_every_fix_states_its_cost(code):
    library, text, fix = WARNING_CASES[code]
    d = diagnose(text, library)
    w = next(w for w in d.warnings if w.code == code)
    cost = notes.fix_cost(d, w)
    if fix is None:
        assert cost == ""
    else:
        assert cost.startswith(("**Cost:**", "**Trade-off:**")) and cost.endswith(".")


def test_every_fix_of_every_example_and_real_script_has_a_cost_that_fits_it():
    seen = set()
    for d in _every_diagnosis():
        for w in d.warnings:
            cost = notes.fix_cost(d, w)
            assert bool(cost) == bool(w.fix), (w.code, w.fix)
            if not w.fix:
                continue
            seen.add(w.code)
            keys = [k for k, _v in w.changes]
            off_keys = {r.fix[0] for r in d.profile.off_policy}
            # the cost of giving up several optimizer steps per batch only with a fix that does that
            assert ("single optimizer step" in cost) == (any(k in off_keys and "async" not in k for k in keys)
                                                        and w.code not in ("KL_OFF", "KL_SETTING_UNUSED")), (w.fix, cost)
            assert ("multiplied by the importance weight" in cost) == ("bias_correction" in w.fix or "unbiased_gradient" in w.fix
                                                     ) or w.code in ("KL_OFF", "KL_SETTING_UNUSED"), (w.fix, cost)
        for fix, _codes in notes.fix_groups(d):
            assert notes.fix_group_cost(d, fix)
    assert {"FORWARD_KL_GRAD", "OFF_POLICY_UNCORRECTED", "CLAMP_HIDES_DRIFT"} <= seen


def test_the_off_policy_fix_says_what_it_gives_up(verl):
    w = next(w for w in verl.warnings if w.code == "OFF_POLICY_UNCORRECTED")
    assert "ppo_mini_batch_size" in w.fix
    assert "single optimizer step instead of several" in notes.fix_cost(verl, w)
    same = next(w for w in verl.warnings if w.code == "FORWARD_KL_GRAD")
    assert "same estimator (k3)" in notes.fix_cost(verl, same)  # low_var_kl → low_var_kl+: the value stays k3


def test_fix_costs_in_chinese_carry_no_english():
    for library, text, _fix in WARNING_CASES.values():
        d = diagnose(text, library)
        for w in d.warnings:
            with using("zh"):
                zh = notes.fix_cost(d, w) + notes.plain_title(w.code)
            assert english_runs(re.sub(r"\$[^$]*\$|`[^`]*`", " ", zh)) == [], zh


def test_errors_name_the_page_controls_not_command_line_flags():
    from kl_core.doctor.parse import UnreadableInput

    sources = (ROOT / "kl_core" / "doctor" / "diagnosis.py").read_text() + (ROOT / "kl_core" / "doctor" / "parse.py").read_text()
    flat = re.sub(r'"\s*\n\s*"', "", sources)  # the core's templates, joined across source lines
    for core, web in notes.WEB_ERRORS.items():
        assert core in flat, "the core's wording changed: update notes.WEB_ERRORS"
        assert "--" not in web and "pass " not in web
    with pytest.raises(UnreadableInput) as exc:
        diagnose("hello: world\n")
    text = notes.error_text(exc.value)
    assert "--library" not in text and "**Library**" in text
    with using("zh"):
        assert "--library" not in notes.error_text(exc.value)


def test_stacked_puts_side_by_side_parts_on_their_own_lines():
    two = r"r_{i,t} = R_i\,[t = |y_i|] - \beta\,k_{i,t}, \qquad \textstyle\sum_t r_{i,t} = R_i - \beta\sum_t k_{i,t}"
    assert notes.stacked(two) == (r"\begin{gathered}r_{i,t} = R_i\,[t = |y_i|] - \beta\,k_{i,t} \\ "
                                  r"\textstyle\sum_t r_{i,t} = R_i - \beta\sum_t k_{i,t}\end{gathered}")
    where = r"\operatorname{clip}_{[-10,10]}\!\left(e^{\ell} - \ell - 1\right),\quad \ell = \min(x,\ 10)"
    assert notes.stacked(where).count(r"\\") == 1
    assert notes.stacked(r"\frac{a}{b}") == r"\frac{a}{b}"
    assert notes.stacked(r"\text{a \quad b}") == r"\text{a \quad b}"  # inside braces: left alone


# --------------------------------------------------------------------------- audit of the doctor's sentences
ORL = "python3 -m openrlhf.cli.train_ppo_ray "
TWICE = (VERL + "algorithm.use_kl_in_reward=True algorithm.kl_ctrl.kl_coef=0.001 actor_rollout_ref.actor.use_kl_loss=True "
         "actor_rollout_ref.actor.kl_loss_type=low_var_kl+ actor_rollout_ref.actor.ppo_mini_batch_size=1024 "
         "data.train_batch_size=1024")
SEQUENCE_K3 = "beta: 0.04\nimportance_sampling_level: sequence\nuse_bias_correction_kl: false\n"
ASYNC = (ORL + "--algo.kl.init_coef 0.01 --train.async_enable --train.batch_size 1024 --rollout.batch_size 128 "
         "--rollout.n_samples_per_prompt 8")


def test_a_warning_without_a_fix_says_what_the_doctor_tried_not_that_no_setting_removes_it():
    """'No setting of verl 0.9.1 removes this one' was false: use_kl_in_reward=False removes KL_TWICE (and leaves
    kl_ctrl.kl_coef unused); TRL's use_bias_correction_kl: true removes FORWARD_KL_GRAD (and raises the sequence-level
    weight's warning).  The doctor tries a few changes and keeps one that raises no other warning."""
    d = diagnose(TWICE)
    (w,) = d.warnings
    assert w.code == "KL_TWICE" and w.fix is None
    assert diagnose(TWICE.replace("use_kl_in_reward=True", "use_kl_in_reward=False")).codes == ["KL_SETTING_UNUSED"]
    text = notes.no_fix_text(d, w)
    assert "No setting" not in text
    assert text == ("The doctor tried 2 changes and kept none: `algorithm.use_kl_in_reward=False` removes it but "
                    "raises 1 other warning (A KL setting that has no effect); `actor_rollout_ref.actor.use_kl_loss=False` "
                    "removes it but raises 1 other warning (A KL setting that has no effect).")

    trl = diagnose(SEQUENCE_K3, "trl")
    (w,) = trl.warnings
    assert w.code == "FORWARD_KL_GRAD" and w.fix is None
    assert diagnose(SEQUENCE_K3.replace("false", "true"), "trl").codes == ["SEQUENCE_LEVEL_KL_WEIGHT"]
    assert notes.no_fix_text(trl, w) == ("The doctor tried 1 change and did not keep it: `use_bias_correction_kl: "
                                         "true` removes it but raises 1 other warning (The KL's bias correction uses a "
                                         "whole-sequence weight).")
    # a change the doctor rejects although it raises nothing: the KL term it would configure is still off
    unused = diagnose(ORL + "--algo.kl.estimator k1 --algo.kl.unbiased_gradient --algo.kl.init_coef 0")
    w = next(w for w in unused.warnings if w.code == "KL_SETTING_UNUSED")
    assert notes.no_fix_text(unused, w) == ("The doctor tried 1 change and did not keep it: `--algo.kl.use_loss` "
                                            "removes it but leaves no KL term where it was.")

    from kl_core.doctor.diagnosis import REJECTIONS

    assert set(notes._TRIED) | {"raises"} == set(REJECTIONS)  # a clause for every reason the core gives
    old = diagnose("beta: 0.04\n", "trl", release="trl-grpo-0.18")  # the era has no use_bias_correction_kl
    (w,) = old.warnings
    assert notes.no_fix_text(old, w) == ("TRL 0.17.0–0.18.2 does not have `use_bias_correction_kl`, so none of the "
                                         "doctor's changes set it.")
    # beta: 0.0 there: the doctor still tries the rest of 'turn the KL on' (beta alone), and says why it failed
    off = diagnose("beta: 0.0\n", "trl", release="trl-grpo-0.18")
    (w,) = off.warnings
    assert w.code == "KL_OFF" and w.fix is None
    assert w.tried == (("beta: 0.001", "raises", ("FORWARD_KL_GRAD",)),) and w.needs == ("use_bias_correction_kl",)
    assert notes.no_fix_text(off, w) == (
        "The doctor tried 1 change and did not keep it: `beta: 0.001` removes it but raises 1 other warning "
        f"({notes.plain_title('FORWARD_KL_GRAD', off)}). TRL 0.17.0–0.18.2 does not have `use_bias_correction_kl`, "
        "so none of the doctor's changes set it.")


def test_no_warnings_does_not_claim_an_off_policy_gradient_the_run_never_has():
    """trl_rloo_config.yaml: no warnings, every step on-policy; RLOOConfig.beta's off-policy gradient is mixed."""
    from kl_core.doctor.diagnosis import gradient_targets

    d = diagnose((FIXTURES / "trl_rloo_config.yaml").read_bytes(), filename="trl_rloo_config.yaml")
    assert d.warnings == () and not d.off_policy
    assert gradient_targets(d.kl_uses[0].entry) == ("reverse_kl", "mixed")
    text = notes.no_warnings_text(d)
    assert "on- and off-policy" not in text
    assert text == ("Nothing to change: every KL term has the reverse-KL gradient, and the doctor finds no optimizer "
                    "step that trains on an older policy's tokens.")
    off = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k3 --algo.kl.unbiased_gradient "
                   "--algo.kl.init_coef 0.01 --train.max_epochs 2")
    assert off.warnings == () and off.off_policy and off.kl_uses[0].gradient_target_off_policy == "reverse_kl"
    assert notes.no_warnings_text(off).endswith("on-policy and in the optimizer steps that train on an older "
                                                "policy's tokens.")


def _past_clamp(entry):
    """The pull chart of a crosswalk row, and where on it the row's clamps bite."""
    import numpy as np

    from kl_core.doctor.diagnosis import clamp_sides, pull_curve

    pc = pull_curve(entry)
    lo, hi = clamp_sides(entry)
    past = np.zeros_like(pc.t, bool)
    if lo is not None:
        past |= pc.t < lo
    if hi is not None:
        past |= pc.t > hi
    return pc, past


def test_past_an_autograd_clamp_the_pull_is_zero_and_the_caption_says_so(verl):
    """verl's default low_var_kl in the loss: −12.46 at log r = 2.60, then 0 (torch.clamp passes no gradient);
    OpenRLHF's k2 in the loss leaves the reverse-KL line at |log r| = 4.47 for 0."""
    import numpy as np

    u = verl.kl_uses[0]
    pc, past = _past_clamp(u.entry)
    assert past.any() and np.all(pc.option[past] == 0) and pc.option[~past].min() < -12
    cap = notes.pull_caption(u)
    assert "goes flat" not in cap and "pulled no harder" not in cap and "all but dropped" not in cap
    assert cap.startswith("Until the clamp bites, the coloured line follows the dotted forward-KL line")
    assert r"Past $\log r = 2.61$ the clamp bites. There the clamp passes no gradient, so the line drops to zero" in cap

    k2 = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k2 --algo.kl.init_coef 0.01").kl_uses[0]
    pc, past = _past_clamp(k2.entry)
    np.testing.assert_allclose(pc.option[~past], pc.reverse[~past], atol=1e-9)
    assert np.all(pc.option[past] == 0) and np.all(pc.reverse[past] != 0)
    cap = notes.pull_caption(k2)
    assert not cap.startswith("The coloured line lies on the dashed reverse-KL line")
    assert cap == ("Until the clamp bites, the coloured line lies on the dashed reverse-KL line: this term pulls each "
                   r"token back as the reverse KL does. Past $|\log r| = 4.47$ the clamp bites. There the clamp passes no "
                   "gradient, so the line drops to zero: larger drifts are not pulled at all.")


def test_each_clamped_options_caption_matches_its_chart_past_the_clamp():
    """Every crosswalk row whose clamp bites on the chart: 0 past it through autograd, flat (its clamped value) for a
    detached reward; the caption says which."""
    import numpy as np

    from kl_core.doctor.diagnosis import KLUse, clamp_sides
    from kl_core.libraries.crosswalk import CROSSWALK

    seen = set()
    for e in CROSSWALK:
        if e.acts_on not in ("reward", "loss") or e.grad_mode not in ("autograd", "score", "score_current"):
            continue
        if not [v for v in clamp_sides(e) if v is not None and abs(v) < notes.PULL_T_MAX]:
            continue
        pc, past = _past_clamp(e)
        zero = bool(np.all(pc.option[past] == 0))
        flat = bool(np.ptp(pc.option[past & (pc.t > 0)]) == 0 if (past & (pc.t > 0)).any() else True)
        assert zero == (e.grad_mode in notes.CLAMP_ZEROES), e
        assert zero or flat, e
        u = KLUse(e.acts_on, e, None, None, 0.1, "", "fixed", None, None, "mixed", None, None, "", None)
        cap = notes.pull_caption(u)
        assert ("drops to zero" in cap) == zero and ("goes flat" in cap) == (not zero), (e, cap)
        seen.add(zero)
    assert seen == {True, False}


def test_off_policy_from_the_first_step_is_not_called_later_steps():
    """--train.async_enable with one optimizer step per batch: every step is off-policy, there are no 'later steps'."""
    d = diagnose(ASYNC)
    assert d.off_policy_every_step
    (w,) = d.warnings
    assert w.code == "OFF_POLICY_UNCORRECTED"
    title = notes.warning_title(w, d)
    assert "Later steps" not in title and title.startswith("**Off-policy steps bias the KL gradient**")
    assert notes.fix_heading(d.codes, d) == "**Change** · removes: Off-policy steps bias the KL gradient"
    facts = notes.use_facts(d, d.kl_uses[0])
    assert not any("later optimizer steps" in f for f in facts)
    assert facts[3].startswith("**In every optimizer step, on tokens from an older policy** " + notes.badge("mixed"))
    (line,) = notes.summary_lines(d)
    assert "in later steps" not in line and line.endswith("off-policy in every step " + notes.badge("mixed"))
    # mini-batches: the first step on each batch is on-policy, the later ones are not (unchanged)
    verl = diagnose(notes.example_text("verl"))
    assert not verl.off_policy_every_step
    w = next(w for w in verl.warnings if w.code == "OFF_POLICY_UNCORRECTED")
    assert notes.warning_title(w, verl).startswith("**Later steps on a batch bias the KL gradient**")


def test_a_release_of_another_trainer_is_not_called_another_librarys():
    from kl_core.doctor.releases import ReleaseMismatch

    text = (FIXTURES / "trl_rloo_config.yaml").read_text()
    with pytest.raises(ReleaseMismatch) as exc:
        diagnose(text, filename="trl_rloo_config.yaml", release="trl-grpo-0.18")
    assert (exc.value.library, exc.value.trainer) == ("TRL", "rloo")
    said = notes.release_error("trl-grpo-0.18", exc.value)
    assert "not a release of" not in said
    assert said == ("**TRL 0.17.0–0.18.2 covers TRL's `grpo` trainer, and this text is for its `rloo` trainer.** "
                    "Choose Infer, Latest or TRL 0.10.1–0.21.0 (rloo).")
    with pytest.raises(ReleaseMismatch) as exc:
        diagnose(notes.example_text("verl"), release="openrlhf-0.10.1")
    assert notes.release_error("openrlhf-0.10.1", exc.value) == (
        "**OpenRLHF 0.6.0.post1–0.10.1 is not a release of verl, this text's library.** Choose Infer, Latest or one of "
        "verl 0.2–0.3.0.post1, verl 0.1+rllm, verl 0.4.0–0.7.1.")


def test_the_upload_label_states_the_doctors_own_limit(monkeypatch):
    from kl_core.doctor.parse import MAX_BYTES

    assert notes.upload_label() == "A launch script, YAML, JSON or Python file (at most {n} KiB)".format(
        n=MAX_BYTES // 1024)
    monkeypatch.setattr(notes, "MAX_BYTES", 512 * 1024)
    assert notes.upload_label().endswith("(at most 512 KiB)")


def test_an_older_releases_card_names_only_settings_it_has():
    """TRL 0.14–0.18 had no use_bias_correction_kl; OpenRLHF 0.6.0.post1–0.10.1 no --algo.kl.unbiased_gradient."""
    d = diagnose(notes.example_text("trl"), release="trl-grpo-0.18")
    (u,) = d.kl_uses
    assert u.option == "beta"
    assert notes.use_title(d, u) == "In the loss: `GRPOConfig.beta != 0` → k3"
    assert notes.alternatives_frame(u)["option"].tolist() == ["beta"]
    # the era's own caveat says "These releases have no use_bias_correction_kl": an added "holds for later releases
    # only" contradicted it (an audit); today's caveat under this era still gets the sentence
    assert notes.caveat(u, d) == notes.caveat(u) and "These releases have no use_bias_correction_kl" in notes.caveat(u)
    from kl_core.libraries.crosswalk import CROSSWALK

    today = next(e for e in CROSSWALK if (e.library, e.option, e.acts_on) == ("TRL", "beta", "loss"))
    plain = dataclasses.replace(u, entry=dataclasses.replace(u.entry, caveat=today.caveat))
    if "use_bias_correction_kl" in str(today.caveat):
        assert notes.caveat(plain, d).endswith(
            "`use_bias_correction_kl` is not a setting of TRL 0.17.0–0.18.2: what this says of it holds for later "
            "releases only.")
    latest = diagnose("beta: 0.04\nuse_bias_correction_kl: false\n", "trl")
    assert notes.use_title(latest, latest.kl_uses[0]).endswith(
        "`GRPOConfig.beta != 0, GRPOConfig.use_bias_correction_kl=False` → k3")
    assert notes.caveat(latest.kl_uses[0], latest) == notes.caveat(latest.kl_uses[0])
    assert "use_bias_correction_kl" in notes.alternatives_frame(latest.kl_uses[0])["option"].tolist()

    orl = diagnose(notes.example_text("openrlhf"), release="openrlhf-0.10.1")
    options = notes.alternatives_frame(orl.kl_uses[0])["option"].tolist()
    assert options == ["k1", "k2", "k3"]
    now = diagnose(notes.example_text("openrlhf"))
    assert "k3+unbiased_gradient" in notes.alternatives_frame(now.kl_uses[0])["option"].tolist()


def test_the_pull_caption_says_from_which_release_an_eras_clamp_holds():
    """OpenRLHF v0.8.5 compute_approx_kl has no clamp, v0.8.6 clamps the value to [-10, 10]."""
    d = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --kl_estimator k3 --init_kl_coef 0.001",
                 release="openrlhf-0.10.1")
    caps = [notes.pull_caption(u) for u in d.kl_uses if u.clamp_from]
    assert caps and all("from 0.8.6 on; earlier releases have none" in c for c in caps)
    # k3's unclamped pull 1 − e^t is −12.6 where the clamp bites (t = 2.61), past the chart's ±8: no line
    assert "their pull carries on, off the chart" in caps[0]
    assert [notes.unclamped_label(u) for u in d.kl_uses] == [None]
    # k2's unclamped pull −t is −4.47 where its clamp bites (½t² = 10): the dashed line carries on from there
    k2 = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --kl_estimator k2 --init_kl_coef 0.001",
                  release="openrlhf-0.10.1")
    (u,) = k2.kl_uses
    assert notes.unclamped_label(u) == "k2 (loss) before 0.8.6: no clamp"
    assert "their pull is the thin dashed line, which carries on past the clamp's edge" in notes.pull_caption(u)


def test_only_an_era_that_starts_without_its_clamp_gets_the_unclamped_line():
    # verl's low_var_kl clamps in every release: no "before" line; OpenRLHF 0.11.2 is one release
    verl = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                    "actor_rollout_ref.actor.kl_loss_type=low_var_kl")
    assert [u.clamp_from for u in verl.kl_uses] == [""] and notes.unclamped_label(verl.kl_uses[0]) is None
    now = diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss --algo.kl.estimator k3")
    assert all(notes.unclamped_label(u) is None for u in now.kl_uses)
    assert not any("thin dashed line" in notes.pull_caption(u) for u in now.kl_uses)


def test_the_pull_chart_draws_the_row_of_the_release_the_card_is_for():
    """The page drew ``cache.pull_curve(library, option, where)``, today's crosswalk row, on every card.

    An era's row (kl_core/doctor/releases.toml [[eras.entries]]: clamps, code) is ``u.entry``; the chart must be
    drawn from it.  OpenRLHF v0.8.6-v0.10.1 openrlhf/models/utils.py compute_approx_kl clamps the value to
    [-10, 10] and bounds no log-ratio; 0.11.2 also clamps k3's log-ratio (min=-10 on log π_θ − log π_ref).
    """
    import ast
    import dataclasses

    import numpy as np

    from kl_core.doctor.diagnosis import pull_curve
    from kl_core.libraries.crosswalk import lookup

    d = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --kl_estimator k3 --init_kl_coef 0.001",
                 release="openrlhf-0.10.1")
    (u,) = d.kl_uses
    today = lookup(u.entry.library, u.option, acts_on=u.where)
    assert u.entry.logr_clamp is None and today.logr_clamp is not None  # the era's row is not today's
    # a row whose clamp bites on the chart: the curve of the card's row is not the lookup's
    tight = dataclasses.replace(u.entry, value_clamp=(-1.0, 1.0))
    assert not np.allclose(pull_curve(tight).option, pull_curve(today).option, equal_nan=True)
    # the page draws the curve of the card's own row (cache.pull_curve(u.entry)), never a lookup by option
    page = (ROOT / "pages" / "config-doctor.py").read_text()
    calls = [n for n in ast.walk(ast.parse(page)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "pull_chart"]
    assert calls and all(ast.unparse(c.args[0]) == "cache.pull_curve(u.entry)" for c in calls)


def test_the_coefficient_fact_names_the_setting_as_the_release_spells_it():
    """Under OpenRLHF 0.6.0.post1–0.10.1 the page's "Coefficient" fact named today's ``--algo.kl.init_coef``,
    a flag that release does not have; the CLI card already said ``--init_kl_coef`` (``Profile.spelled``)."""
    d = diagnose("python3 -m openrlhf.cli.train_ppo_ray --init_kl_coef 0.02", release="openrlhf-0.10.1")
    (u,) = d.kl_uses
    (fact,) = [f for f in notes.use_facts(d, u) if "Coefficient" in f]
    assert "`--init_kl_coef` = 0.02" in fact and "algo.kl" not in fact
    latest = diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.init_coef 0.02", release="latest")
    assert any("`--algo.kl.init_coef` = 0.02" in f for f in notes.use_facts(latest, latest.kl_uses[0]))


def test_settings_paths_and_plus_options_become_whole_code_spans():
    """verl 0.4.0–0.7.1's "What changed" showed `low_var_kl`+ and verl/workers/utils/`losses.py`: a span cut short."""
    text = ("verl 0.8.0 runs the '+' options (k1+, low_var_kl+ and the rest) in verl/workers/utils/losses.py; "
            "actor_rollout_ref.actor.loss_agg_mode=token-sum, --init_kl_coef 0.01 and `kept as it is`")
    assert notes.code_settings(text) == (
        "verl 0.8.0 runs the '+' options (k1+, `low_var_kl+` and the rest) in `verl/workers/utils/losses.py`; "
        "`actor_rollout_ref.actor.loss_agg_mode=token-sum`, `--init_kl_coef 0.01` and `kept as it is`")


def test_a_failing_start_up_check_leads_the_verdict_in_both_languages():
    # verl refuses a train batch below the mini-batch at startup: the headline and the verdict's first line say
    # the run stops; the KL lines after them describe the run once the check passes
    d = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True data.train_batch_size=16 "
                 "actor_rollout_ref.actor.ppo_mini_batch_size=64")
    assert notes.headline(d) == "verl 0.9.1: the run stops before training, at a start-up check"
    first, *rest = notes.summary_lines(d)
    assert first.startswith("**The run stops before training:** a start-up check of verl 0.9.1")
    assert rest[0].startswith("**In the loss:**")
    assert notes.warning_title(d.warnings[0], d).startswith("**A start-up check stops the run before training**")
    assert notes.fix_groups(d)[0][0] == "data.train_batch_size=64"
    with using("zh"):
        assert notes.headline(d) == "verl 0.9.1：一项启动检查会让运行在训练开始前停止"
        assert notes.summary_lines(d)[0].startswith("**运行会在训练开始前停止：** verl 0.9.1 的一项启动检查")
    fine = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                    "data.train_batch_size=64 actor_rollout_ref.actor.ppo_mini_batch_size=64")
    assert "start-up" not in notes.headline(fine) and "stops" not in notes.summary_lines(fine)[0]


def test_a_flag_left_off_that_chooses_the_aggregation_is_said_as_without_it():
    # OpenRLHF 0.6.0.post1-0.10.1: --use_dynamic_batch chooses how the KL loss is aggregated; off, it is not a change
    d = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --kl_estimator k3 --init_kl_coef 0.001")
    (fact,) = [f for f in notes.use_facts(d, d.kl_uses[0]) if f.startswith("**Aggregated as**")]
    assert fact.startswith("**Aggregated as** token mean over each micro-batch (without `--use_dynamic_batch`):")
    with using("zh"):
        (fact,) = [f for f in notes.use_facts(d, d.kl_uses[0]) if "--use_dynamic_batch" in f]
        assert "（未设 `--use_dynamic_batch`）" in fact and "remove" not in fact
    on = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --kl_estimator k3 --init_kl_coef 0.001 "
                  "--use_dynamic_batch")
    assert any("(`--use_dynamic_batch`)" in f for f in notes.use_facts(on, on.kl_uses[0]))


def test_a_start_up_checks_fix_cost_is_its_own():
    verl = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True data.train_batch_size=16 "
                    "actor_rollout_ref.actor.ppo_mini_batch_size=64")
    orl = diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.advantage.estimator group_norm --algo.kl.use_loss "
                   "--algo.kl.init_coef 0.01")
    a, b = (notes.fix_cost(d, d.warnings[0]) for d in (verl, orl))
    assert "mini-batch" in a and "GRPO-style recipes use 4 to 16" in b
    with using("zh"):
        assert "GRPO 类配方用 4 到 16 条" in notes.fix_cost(orl, orl.warnings[0])


def test_an_unreadable_upload_is_explained_in_the_pages_words():
    """An audit: with a file name (every upload and example) the reason sat inside "“{file}”: {why}", which the page's
    wording table never matched, so the page said "give the doctor that file" and "pass --library"."""
    from pathlib import Path

    from kl_core.doctor.parse import UnreadableInput

    path = Path(__file__).resolve().parents[1] / "doctor" / "real_scripts" / "trl" / "trl_docs_grpo_slurm.sh"
    with pytest.raises(UnreadableInput) as info:
        diagnose(path.read_bytes(), filename=path.name)
    text = notes.error_text(info.value)
    assert text.startswith("“trl_docs_grpo_slurm.sh”: ") and "Paste that file in the box or upload it." in text
    assert "give the doctor" not in text
    with pytest.raises(UnreadableInput) as info:
        diagnose(b"hello: 1\n", filename="x.yaml")
    assert "--library" not in notes.error_text(info.value)


def test_a_code_span_leaves_the_full_stop_outside():
    """An audit: "`actor_rollout_ref.actor.kl_loss_type=k2.`" copied a setting Hydra refuses."""
    text = notes.code_settings("Set actor_rollout_ref.actor.kl_loss_type=k2. Or --algo.advantage.is_correction_enable.")
    assert "`actor_rollout_ref.actor.kl_loss_type=k2`." in text and "`--algo.advantage.is_correction_enable`." in text
