"""The config doctor: real configs and their cards, every warning, fixes that work, hostile input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kl_core.doctor.card import card_lines, card_markdown
from kl_core.doctor.diagnosis import (
    CLAMP_WARN_RATIO,
    GRADIENT_WORDS,
    PROBE,
    WARNING_CODES,
    UnreadableInput,
    clamp_bite,
    diagnose,
    gradient_targets,
    render_changes,
)
from kl_core.doctor.parse import MAX_BYTES
from kl_core.doctor.profiles import profiles

DATA = Path(__file__).resolve().parents[2] / "data" / "doctor_examples"
VERL = "python3 -m verl.trainer.main_ppo "
ORL = "python3 -m openrlhf.cli.train_ppo_ray "

# A second setting, unrelated to PROBE, at which the classes must come out the same.
OTHER = {"policy": (-0.3, 0.8, 0.2, -0.9, 0.5), "ref": (0.4, -0.1, 0.6, 0.0, -0.7),
         "old": (-0.1, 0.6, 0.45, -0.6, 0.3)}


def use_tuple(u):
    agg = u.aggregation.name if u.aggregation else None
    return (u.where, u.option, u.estimator, u.coef, u.controller, u.target_kl, u.gradient_target,
            u.gradient_target_off_policy, agg)


# --------------------------------------------------------------------------- real configs
CARDS = {
    "verl_grpo_qwen3_8b.sh": dict(
        library="verl", release="0.9.1", trainer="main_ppo", kind="command",
        uses=[("loss", "low_var_kl", "k3", 0.001, "fixed", None, "forward_kl", "mixed", "token mean over the batch")],
        codes=["FORWARD_KL_GRAD", "OFF_POLICY_UNCORRECTED", "CLAMP_HIDES_DRIFT", "NOT_LITERAL", "NOT_LITERAL"],
        fixes={"FORWARD_KL_GRAD": "actor_rollout_ref.actor.kl_loss_type=low_var_kl+",
               "OFF_POLICY_UNCORRECTED": "actor_rollout_ref.actor.ppo_mini_batch_size=1024",
               "CLAMP_HIDES_DRIFT": "actor_rollout_ref.actor.kl_loss_type=low_var_kl+"},
        unrecognised=[]),
    "verl_rloo_qwen3_8b.sh": dict(
        library="verl", release="0.9.1", trainer="main_ppo", kind="command",
        uses=[("reward", "kl", "k1", 0.001, "fixed", None, "reverse_kl", "mixed", "per-token reward, summed over the response")],
        codes=["OFF_POLICY_UNCORRECTED"],
        fixes={"OFF_POLICY_UNCORRECTED": "actor_rollout_ref.actor.ppo_mini_batch_size=1024"},
        unrecognised=[]),
    "verl_quickstart.sh": dict(
        library="verl", release="0.9.1", trainer="main_ppo", kind="command", uses=[],
        codes=["KL_SETTING_UNUSED", "KL_OFF"],
        fixes={"KL_SETTING_UNUSED": "algorithm.use_kl_in_reward=True", "KL_OFF": "algorithm.use_kl_in_reward=True"},
        unrecognised=[]),
    "openrlhf_ppo_hybrid.sh": dict(  # --algo.advantage.is_correction_enable: a flag of 0.10.2-0.11.0 only
        library="OpenRLHF", release="0.10.2–0.11.1", trainer="train_ppo_ray", kind="command",
        uses=[("reward", "k1", "k1", 0.01, "fixed", None, "reverse_kl", "mixed", "per-token reward, summed over the response")],
        codes=["OFF_POLICY_UNCORRECTED"], fixes={"OFF_POLICY_UNCORRECTED": "--train.batch_size 1024"},
        unrecognised=[]),
    "openrlhf_dapo_hybrid.sh": dict(
        library="OpenRLHF", release="0.11.2", trainer="train_ppo_ray", kind="command",
        uses=[("loss", "k3", "k3", 0.001, "fixed", None, "forward_kl", "mixed", "token mean over the optimizer step")],
        codes=["FORWARD_KL_GRAD", "OFF_POLICY_UNCORRECTED", "CLAMP_HIDES_DRIFT"],
        fixes={c: "--algo.kl.unbiased_gradient" for c in ("FORWARD_KL_GRAD", "OFF_POLICY_UNCORRECTED", "CLAMP_HIDES_DRIFT")},
        unrecognised=[]),
    "openrlhf_reinforce_baseline.sh": dict(  # --algo.kl.unbiased_gradient from 0.11.1 (the fix says so)
        library="OpenRLHF", release="0.10.2–0.11.1", trainer="train_ppo_ray", kind="command",
        uses=[("loss", "k2", "k2", 1e-5, "fixed", None, "reverse_kl", None,
               "token mean over the optimizer step (0.10.4 on)")],
        codes=["CLAMP_HIDES_DRIFT"], fixes={"CLAMP_HIDES_DRIFT": "--algo.kl.unbiased_gradient"}, unrecognised=[]),
    "trl_grpo_config.yaml": dict(
        library="TRL", release="1.16.0", trainer="grpo", kind="yaml", uses=[],
        codes=["KL_OFF"], fixes={"KL_OFF": "beta: 0.001"}, unrecognised=[]),
    "trl_rloo_config.yaml": dict(
        library="TRL", release="1.16.0", trainer="rloo", kind="yaml",
        uses=[("reward", "RLOOConfig.beta", "k1", 0.05, "fixed", None, "reverse_kl", None, "summed over the completion into its reward")],
        codes=[], fixes={}, unrecognised=[]),
    "trl_deepseekmath.py": dict(
        library="TRL", release="1.16.0", trainer="grpo", kind="python",
        uses=[("loss", "use_bias_correction_kl", "k3", 0.001, "fixed", None, "reverse_kl", None, "sequence mean of token means")],
        codes=[], fixes={}, unrecognised=[]),
    "trl_grpo_cli.sh": dict(
        library="TRL", release="1.16.0", trainer="grpo", kind="command", uses=[],
        codes=["KL_OFF"], fixes={"KL_OFF": "--beta 0.001"}, unrecognised=[]),
}


def test_every_fixture_has_a_card_and_names_its_source():
    assert sorted(p.name for p in DATA.iterdir()) == sorted(CARDS)
    for p in DATA.iterdir():
        first = p.read_text(encoding="utf-8").split("\n")[0]
        assert re.match(r"# Source: [\w-]+/[\w-]+@[0-9a-f]{12} ", first), p.name


@pytest.mark.parametrize("name", sorted(CARDS))
def test_real_config_card(name):
    want = CARDS[name]
    d = diagnose((DATA / name).read_bytes(), filename=name)
    assert (d.library, d.release, d.profile.trainer, d.kind) == (
        want["library"], want["release"], want["trainer"], want["kind"])
    assert [use_tuple(u) for u in d.kl_uses] == want["uses"]
    assert d.codes == want["codes"]
    assert {w.code: w.fix for w in d.warnings if w.code in want["fixes"]} == want["fixes"]
    assert [u.key for u in d.unrecognised] == want["unrecognised"]


def test_fixture_details():
    d = diagnose((DATA / "verl_grpo_qwen3_8b.sh").read_bytes())
    u = d.kl_uses[0]
    assert u.crosswalk_name == "verl:low_var_kl" and u.written == "low_var_kl"
    assert u.entry.direction == "KL[π_θ‖π_ref]" and u.aggregation_value == "token-mean"
    assert ("k3+", "k3", "reverse_kl", "mixed") in u.alternatives and ("kl", "k1", "zero", "mixed") in u.alternatives
    assert "kl_loss_coef" not in " ".join(u.defaults_used) and "actor_rollout_ref.actor.loss_agg_mode" in u.defaults_used
    assert any("EXTRA has elements added inside" in n for n in d.notes)
    orl = diagnose((DATA / "openrlhf_ppo_hybrid.sh").read_bytes(), release="latest")
    assert orl.unrecognised[0].suggestion == "--algo.advantage.is_correction_level"
    assert orl.settings["--train.batch_size"] == 128 and "--train.batch_size" in orl.given
    assert "--algo.kl.estimator" not in orl.given and orl.settings["--algo.kl.estimator"] == "k1"


# --------------------------------------------------------------------------- one case per warning
WARNING_CASES = {
    "SETTING_REJECTED": (None, VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_los_coef=0.3",
                         "actor_rollout_ref.actor.kl_loss_coef=0.3"),
    "KL_OFF": ("trl", "GRPOConfig(beta=0.0)", "beta=0.001"),
    "KL_SETTING_UNUSED": (None, VERL + "algorithm.kl_penalty=low_var_kl", "algorithm.use_kl_in_reward=True"),
    "ZERO_GRAD_LOSS": (None, VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=kl",
                       "actor_rollout_ref.actor.kl_loss_type=kl+"),
    "FORWARD_KL_GRAD": (None, VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=k3+ "
                        "actor_rollout_ref.actor.kl_loss_type=k3", "actor_rollout_ref.actor.kl_loss_type=k3+"),
    "MIXED_GRAD": (None, ORL + "--algo.kl.estimator k3 --train.batch_size 1024", "--algo.kl.estimator k1"),
    "KL_TWICE": (None, VERL + "algorithm.use_kl_in_reward=True actor_rollout_ref.actor.use_kl_loss=True "
                 "actor_rollout_ref.actor.kl_loss_type=k3+ actor_rollout_ref.actor.ppo_mini_batch_size=1024",
                 "algorithm.use_kl_in_reward=False"),
    "CLAMP_HIDES_DRIFT": (None, VERL + "algorithm.use_kl_in_reward=True algorithm.kl_penalty=low_var_kl "
                          "actor_rollout_ref.actor.ppo_mini_batch_size=1024", "algorithm.kl_penalty=kl"),
    "OFF_POLICY_UNCORRECTED": ("trl", "trl grpo --beta 0.1 --use_bias_correction_kl false --num_iterations 4",
                               "--use_bias_correction_kl True"),
    "NEGATIVE_COEF": (None, VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=k2+ "
                      "actor_rollout_ref.actor.kl_loss_coef=-0.01", "actor_rollout_ref.actor.kl_loss_coef=0.01"),
    "NONFINITE_COEF": (None, VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=nan",
                       "actor_rollout_ref.actor.kl_loss_coef=0.001"),
    "UNKNOWN_OPTION": (None, VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=low_var_k+",
                       "actor_rollout_ref.actor.kl_loss_type=low_var_kl+"),
    "NOT_LITERAL": (None, VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=$KL_TYPE",
                    None),
    "SEQUENCE_LEVEL_KL_WEIGHT": (None, "GRPOConfig(beta=0.04, importance_sampling_level='sequence')",
                                 "importance_sampling_level='token'"),
    "ZERO_GRAD_REWARD": (None, "PPOConfig(kl_penalty='full', adap_kl_ctrl=False, ppo_epochs=1)", "kl_penalty='kl'"),
    "LEGACY_TRAINER": (None, "from trl import PPOConfig\nconfig = PPOConfig(kl_estimator='k1', num_ppo_epochs=1)", None),
    "STARTUP_CHECK_FAILS": (None, VERL + "data.train_batch_size=16 actor_rollout_ref.actor.ppo_mini_batch_size=64",
                            "data.train_batch_size=64"),
}


def test_every_warning_code_has_a_case():
    assert sorted(WARNING_CASES) == sorted(WARNING_CODES)


@pytest.mark.parametrize("code", sorted(WARNING_CASES))
def test_each_warning(code):
    library, text, fix = WARNING_CASES[code]
    d = diagnose(text, library)
    hits = [w for w in d.warnings if w.code == code]
    assert hits, d.codes
    assert hits[0].fix == fix
    assert hits[0].message.endswith(".")


def test_kl_twice_forward_kl_loss_is_switched_off_first():
    d = diagnose(VERL + "algorithm.use_kl_in_reward=True actor_rollout_ref.actor.use_kl_loss=True "
                 "actor_rollout_ref.actor.ppo_mini_batch_size=1024")
    twice = next(w for w in d.warnings if w.code == "KL_TWICE")
    assert twice.fix == "actor_rollout_ref.actor.use_kl_loss=False"  # the low_var_kl loss has the forward-KL gradient


def test_a_zero_coefficient_on_a_live_placement_is_kl_off():
    d = diagnose(VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0")
    assert d.kl_uses == () and d.codes == ["KL_OFF"] and "kl_loss_coef=0 turns it off" in d.warnings[0].message
    assert d.warnings[0].fix == "actor_rollout_ref.actor.kl_loss_type=low_var_kl+ actor_rollout_ref.actor.kl_loss_coef=0.001"
    orl = diagnose(ORL + "--algo.kl.init_coef 0")
    assert orl.kl_uses == () and orl.warnings[0].fix == "--algo.kl.init_coef 0.01"


@pytest.mark.parametrize(("path", "said"), [
    (DATA / "trl_grpo_cli.sh", "--beta 0 (release default) turns the KL in the loss off"),
    (DATA / "trl_grpo_config.yaml", "beta: 0.0 (release default) turns the KL in the loss off"),
    (Path(__file__).parent / "real_scripts" / "trl" / "trl_examples_grpo_vlm.py",
     "--beta 0 (release default) turns the KL in the loss off"),
])
def test_kl_off_tags_a_coefficient_the_script_never_set_as_the_release_default(path, said):
    d = diagnose(path.read_bytes(), filename=path.name)
    (w,) = [w for w in d.warnings if w.code == "KL_OFF"]
    assert "beta" not in d.given and said in w.message, w.message
    written = diagnose("trl grpo --beta 0", "trl").warnings[0].message  # written: no tag
    assert "--beta 0 turns the KL in the loss off" in written and "release default" not in written


def test_kl_off_says_an_unset_switch_is_not_set_not_remove_it():
    """OpenRLHF's --algo.kl.use_loss is a store_true flag: False was written as the change "remove
    --algo.kl.use_loss", which the script, never setting it, has nothing to remove."""
    d = diagnose(ORL + "--algo.kl.init_coef -0.01")
    (w,) = d.warnings
    assert w.code == "KL_OFF" and "remove" not in w.message
    assert "the KL in the reward is on, but --algo.kl.init_coef -0.01 turns it off" in w.message
    assert "the KL in the loss is off (--algo.kl.use_loss not set)" in w.message
    verl = diagnose(VERL + "data.train_batch_size=256")  # a Hydra switch the script did not write
    assert "(algorithm.use_kl_in_reward=False (release default))" in verl.warnings[0].message


# --------------------------------------------------------------------------- fixes work when applied
def _apply(text: str, d, fix: str) -> str:
    """The input with the fix written in, as a user would: replace the setting, or add it after the trainer.

    A SETTING_REJECTED fix replaces settings the release refuses: they go first (each line ``remove …``, and the
    refused setting a suggested key replaces), then the suggested keys are written.
    """
    prof = d.profile
    w = next(w for w in d.warnings if w.fix == fix)
    if w.code == "SETTING_REJECTED":
        for line in fix.split("\n"):
            if line.startswith("remove "):
                text = text.replace(line.removeprefix("remove "), "")
        for key in d.rejected:
            bare = key.lstrip("+~")
            flag = bare if prof.syntax != "dataclass" or d.kind != "command" else f"--{bare}"
            pat = (rf"(?<!\S)[+~]*{re.escape(bare)}(=\S+)?(?=\s|$)" if prof.syntax == "hydra" and not flag.startswith("-")
                   else rf"(?<!\S){re.escape(flag)}(\s+[^-\s]\S*)?(?=\s|$)")
            text = re.sub(pat, "", text)
    for key, value in w.changes:
        one = render_changes(prof, d.kind, ((key, value),))
        if d.kind == "yaml":
            text = re.sub(rf"(?m)^{re.escape(key)}:.*\n?", "", text) + "\n" + one + "\n"
        elif prof.syntax == "hydra":
            pat = rf"{re.escape(key)}=\S+"
            text = re.sub(pat, one, text) if re.search(pat, text) else _after_name(text, prof, one)
        else:
            flag = key if prof.syntax == "argparse" else f"--{key}"
            pat = rf"{re.escape(flag)}(\s+[^-\s]\S*)?(?=\s|$)"
            if one.startswith("remove "):
                text = re.sub(pat, "", text)
            elif re.search(pat, text):
                text = re.sub(pat, one, text)
            else:
                text = _after_name(text, prof, one)
    return text


def _after_name(text: str, prof, words: str) -> str:
    """Insert words right after the trainer's name in the command (not in a comment)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        name = next((n for n in prof.names if n in line), None)
        if name and not line.lstrip().startswith("#"):
            lines[i] = line.replace(name, f"{name} {words}", 1)
            return "\n".join(lines)
    raise AssertionError("no trainer command")


FIXABLE = [(name, code) for name, card in CARDS.items() if card["kind"] != "python" for code in card["fixes"]]


@pytest.mark.parametrize(("name", "code"), FIXABLE)
def test_written_fix_removes_its_warning(name, code):
    text = (DATA / name).read_text(encoding="utf-8")
    d = diagnose(text, filename=name)
    fixed = diagnose(_apply(text, d, d.warnings[d.codes.index(code)].fix), filename=name)
    assert code not in fixed.codes, fixed.codes
    assert set(fixed.codes) <= set(d.codes) | {"OFF_POLICY_UNCORRECTED"}


@pytest.mark.parametrize("code", [c for c, (_, _, fix) in WARNING_CASES.items() if fix and WARNING_CASES[c][0] is None
                                  and WARNING_CASES[c][1].startswith(("python3", "trl"))])
def test_written_fix_removes_its_warning_in_the_cases(code):
    library, text, fix = WARNING_CASES[code]
    d = diagnose(text, library)
    assert code not in diagnose(_apply(text, d, fix), library).codes


# --------------------------------------------------------------------------- agreement with the gradients core
def _select(prof, pl, entry, off: bool) -> tuple[str, str | None]:
    """A minimal input of the profile's syntax that selects ``entry``."""
    settings = {}
    for key, cond in entry.config:
        k = key.removeprefix(prof.prefix)
        if k == pl.coef:
            settings[k] = "0.05" if cond != "!= 0" else "0.05"
        else:
            settings[k] = cond
    from kl_core.doctor.diagnosis import _value_of

    defaults = {k: s.default for k, s in prof.keys.items()}
    for rule in prof.off_policy:  # every step on-policy...
        settings.setdefault(rule.fix[0], str(_value_of(prof, rule.fix[0], rule.fix[1], defaults)))
    if off:  # ... or several passes over each batch
        settings[prof.off_policy[0].when[0]] = "3"
    settings = {k: v for k, v in settings.items() if not (prof.syntax == "argparse" and v in ("not set", "False"))}
    if prof.syntax == "hydra":
        return VERL + " ".join(f"{k}={v}" for k, v in settings.items()), None
    if prof.syntax == "argparse":
        parts = [k if v == "set" else "" if v == "not set" else f"{k} {v}" for k, v in settings.items()]
        return ORL + " ".join(p for p in parts if p), None
    call = {"grpo": "GRPOConfig", "rloo": "RLOOConfig"}.get(prof.trainer, "PPOConfig")
    def py(v: str) -> str:
        return v if v in ("True", "False") or re.fullmatch(r"[-+0-9.e]+", v) else repr(v)

    return f"{call}(" + ", ".join(f"{k}={py(v)}" for k, v in settings.items()) + ")", "trl"


PLACED = [(p, pl, e) for p in profiles() for pl in p.placements for e in pl.entries]


@pytest.mark.parametrize(("prof", "pl", "entry"), PLACED, ids=[f"{p.library}:{e.option}:{pl.acts_on}" for p, pl, e in PLACED])
def test_card_agrees_with_the_gradients_core(prof, pl, entry):
    from kl_core.gradients.expected import gradient_row

    for off in (False, True):
        text, library = _select(prof, pl, entry, off)
        d = diagnose(text, library)
        assert d.profile is prof and [u.entry for u in d.kl_uses] == [entry], (text, d.codes)
        u = d.kl_uses[0]
        on_t = gradient_row(entry, OTHER["policy"], OTHER["ref"]).target
        off_t = gradient_row(entry, OTHER["policy"], OTHER["ref"], sampler=OTHER["old"]).target
        assert u.gradient_target == on_t == entry.grad_target
        assert u.gradient_target_off_policy == (off_t if off else None)
        if off:
            assert off_t == entry.grad_target_off_policy
        assert GRADIENT_WORDS[u.gradient_target]


def test_the_probe_has_no_active_clamp():
    from kl_core.gradients.expected import gradient_row

    for _, _, e in PLACED:
        assert gradient_row(e, PROBE["policy"], PROBE["ref"], sampler=PROBE["old"]).clamped_mass == 0.0
        assert gradient_targets(e) == (e.grad_target, e.grad_target_off_policy)


def test_clamp_bites_from_the_estimators():
    from kl_core.estimation.estimators import evaluate
    from kl_core.libraries.crosswalk import lookup

    k3 = lookup("verl", "low_var_kl", acts_on="loss")
    t = clamp_bite(k3)
    assert float(evaluate("k3", t)) == pytest.approx(10.0, rel=1e-12)  # e^t − 1 − t = 10
    assert clamp_bite(lookup("OpenRLHF", "k2", acts_on="loss")) == pytest.approx(20 ** 0.5, rel=1e-12)
    assert clamp_bite(lookup("OpenRLHF", "k1", acts_on="reward")) == pytest.approx(10.0)
    assert clamp_bite(lookup("verl", "kl", acts_on="loss")) is None
    assert 2.0 ** 0.5 < 2.6 < t < 2.62 and CLAMP_WARN_RATIO == 100.0


# --------------------------------------------------------------------------- more behaviour
def test_adaptive_controllers():
    d = diagnose(VERL + "algorithm.use_kl_in_reward=True algorithm.kl_ctrl.type=adaptive algorithm.kl_ctrl.target_kl=0.05")
    u = d.kl_uses[0]
    assert (u.controller, u.target_kl, u.horizon, u.coef) == ("adaptive", 0.05, 10000.0, 0.001)
    o = diagnose(ORL + "--algo.kl.target 0.1 --algo.kl.horizon 5000 --train.batch_size 1024").kl_uses[0]
    assert (o.controller, o.target_kl, o.horizon) == ("adaptive", 0.1, 5000.0)
    f = diagnose(ORL + "--algo.kl.horizon 5000 --train.batch_size 1024")
    assert f.kl_uses[0].controller == "fixed" and f.kl_uses[0].target_kl is None
    assert "KL_SETTING_UNUSED" not in f.codes


@pytest.mark.parametrize(
    ("text", "library", "name"),
    [(VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum", None,
      "sequence mean of token sums"),
     ("GRPOConfig(beta=0.1, loss_type='dr_grpo')", None, "token sum over a fixed length"),
     ("GRPOConfig(beta=0.1, loss_type='new_loss')", None, None)],
)
def test_aggregation_follows_the_setting(text, library, name):
    u = diagnose(text, library).kl_uses[0]
    assert (u.aggregation.name if u.aggregation else None) == name


def test_keys_valid_unknown_added_and_suggested():
    d = diagnose(VERL + "data.train_batch_size=512 actor_rollout_ref.actor.kl_los_type=k3 "
                 "+ray_kwargs.ray_init.num_gpus=8 hydra.run.dir=out +actor_rollout_ref.nope.x=1 ~trainer.logger")
    assert [(u.key, u.suggestion) for u in d.unrecognised] == [
        ("actor_rollout_ref.actor.kl_los_type", "actor_rollout_ref.actor.kl_loss_type"),
        ("actor_rollout_ref.nope.x", None)]
    assert any("~trainer.logger deletes" in n for n in d.notes)


def test_legacy_ppo_configs_are_told_apart_by_their_keys():
    old = diagnose("PPOConfig(kl_penalty='kl', init_kl_coef=0.1, target=3, ppo_epochs=1, batch_size=128)")
    new = diagnose("PPOConfig(kl_estimator='k3', kl_coef=0.02)")
    assert (old.profile.release, new.profile.release) == ("0.11.4", "1.12.0")
    u = old.kl_uses[0]
    assert (u.controller, u.target_kl, u.horizon, u.coef) == ("adaptive", 3.0, 10000.0, 0.1)
    assert old.codes == ["LEGACY_TRAINER"] and "TRL 1.16.0 ships no PPOTrainer" in old.warnings[0].message
    assert new.codes == ["LEGACY_TRAINER", "MIXED_GRAD", "OFF_POLICY_UNCORRECTED"]


def test_uncovered_kl_terms_are_noted():
    d = diagnose(VERL + "distillation.enabled=True")
    assert any(n.startswith("distillation.enabled=True adds a distillation loss") for n in d.notes)


def test_library_override_and_detection():
    text = "beta: 0.1\nloss_type: grpo\n"
    assert diagnose(text).library == "TRL"
    assert diagnose(text, "TRL", filename="my_rloo.yaml").profile.trainer == "rloo"
    forced = diagnose(VERL + "actor_rollout_ref.actor.use_kl_loss=True", "openrlhf")
    assert forced.library == "OpenRLHF" and forced.unrecognised
    with pytest.raises(ValueError, match="library must be one of"):
        diagnose(text, "cleanrl")
    with pytest.raises(UnreadableInput, match="cannot tell which library"):
        diagnose("echo hello\nls -la\n")


def test_json_has_the_promised_fields():
    d = diagnose((DATA / "openrlhf_dapo_hybrid.sh").read_bytes())
    j = json.loads(json.dumps(d.to_json()))
    assert j["library"] == "OpenRLHF" and j["release"] == "0.11.2"
    u = j["kl_uses"][0]
    assert {"where", "option", "estimator", "coef", "controller", "target_kl", "gradient_target"} <= set(u)
    assert (u["where"], u["estimator"], u["gradient_target"]) == ("loss", "k3", "forward_kl")
    assert all(set(w) >= {"code", "message", "fix"} for w in j["warnings"])
    assert j["unrecognised"] == [] and j["defaults_assumed"]["--algo.kl.unbiased_gradient"] is False


@pytest.mark.parametrize(
    ("data", "match"),
    [(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), "binary file"),
     ("a" * (MAX_BYTES + 1), "at most 256 KiB"),
     ("beta: !!python/object/apply:os.system ['echo pwned']\n", "not allowed"),
     ("GRPOConfig(beta=", "does not parse")],
)
def test_hostile_input_is_one_clear_error(data, match):
    with pytest.raises(UnreadableInput, match=match):
        diagnose(data)


def test_python_payload_is_not_run(tmp_path, capsys):
    target = tmp_path / "pwned"
    d = diagnose(f"open({str(target)!r}, 'w').write('x'); print('EXECUTED')\n"
                 f"GRPOConfig(beta=0.1, loss_type=__import__('os').system('touch {target}'))")
    assert not target.exists() and "EXECUTED" not in capsys.readouterr().out
    assert d.kl_uses[0].coef == 0.1 and "NOT_LITERAL" in d.codes


# --------------------------------------------------------------------------- no crash on anything
_PIECES = ["python3 -m verl.trainer.main_ppo ", "actor_rollout_ref.actor.kl_loss_type=", "${X:-", "}", "$(", ")",
           "ARR=(", '"${ARR[@]}"', "if x; then\n", "fi\n", "case x in\n", "esac\n", "\\\n", "'", '"', "--algo.kl.use_loss ",
           "-m openrlhf.cli.train_ppo_ray ", "GRPOConfig(beta=", "PPOConfig(", "beta: ", "- a\n", "{", "[", "<<EOF\n",
           "EOF\n", "&&", "||", "|", ";", "#", "\n", " ", "k3", "0.1", "-1e-3", "=", "+", "~", "!!python/object ", "\x00",
           "é", "\t", "trl grpo ", "--beta ", "algorithm.use_kl_in_reward=True "]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=40), st.sampled_from([None, "verl", "openrlhf", "trl"]))
def test_any_input_gives_a_card_or_one_clear_error(pieces, library):
    try:
        d = diagnose("".join(pieces), library)
    except UnreadableInput as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    json.dumps(d.to_json())
    assert all(w.code in WARNING_CODES for w in d.warnings)


# --------------------------------------------------------------------------- the pull curve
def test_pull_curve_in_closed_form():
    import numpy as np

    from kl_core.doctor.diagnosis import pull_curve
    from kl_core.libraries.crosswalk import lookup

    c = pull_curve(lookup("verl", "low_var_kl", acts_on="loss"), t_max=4.0, n=161)
    assert c.t[80] == 0.0 and c.t[0] == -4.0
    np.testing.assert_allclose(c.reverse, -c.t, atol=1e-12)              # k1_score: c = k1 = −t
    np.testing.assert_allclose(c.forward, -np.expm1(c.t), rtol=1e-12, atol=1e-12)  # k3 loss: c = 1 − e^t
    bite = clamp_bite(lookup("verl", "low_var_kl", acts_on="loss"))
    inside = c.t < bite
    np.testing.assert_allclose(c.option[inside], c.forward[inside], rtol=1e-12, atol=1e-12)
    assert np.all(c.option[~inside] == 0.0)                              # torch.clamp: no gradient past the bite
    plus = pull_curve(lookup("verl", "k3+", acts_on="loss"), t_max=4.0, n=161)
    np.testing.assert_allclose(plus.option, -plus.t, atol=1e-12)          # straight-through: k2's gradient
    k3r = pull_curve(lookup("OpenRLHF", "k3", acts_on="reward"), t_max=2.0, n=41)
    np.testing.assert_allclose(k3r.option, np.expm1(k3r.t) - k3r.t, rtol=1e-9, atol=1e-12)  # the detached value


@pytest.mark.parametrize(("kwargs", "match"), [({"t_max": 0.0}, "t_max must be"), ({"t_max": float("nan")}, "t_max"),
                                               ({"n": 10}, "n must be an odd"), ({"n": 5000}, "n must be")])
def test_pull_curve_refuses_bad_grids(kwargs, match):
    from kl_core.doctor.diagnosis import pull_curve
    from kl_core.libraries.crosswalk import lookup

    with pytest.raises(ValueError, match=match):
        pull_curve(lookup("verl", "kl", acts_on="loss"), **kwargs)


def test_a_verl_yaml_and_a_trl_json_config():
    yaml_text = (
        "# my_ppo.yaml, used with --config-name\n"
        "defaults:\n  - ppo_trainer\n  - _self_\n"
        "algorithm:\n  use_kl_in_reward: true\n  kl_penalty: low_var_kl\n  kl_ctrl:\n    type: adaptive\n    target_kl: 0.05\n"
        "actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 1024\n    kl_los_coef: 0.1\n"
    )
    d = diagnose(yaml_text)
    assert (d.library, d.kind) == ("verl", "yaml")
    assert [use_tuple(u) for u in d.kl_uses] == [
        ("reward", "low_var_kl", "k3", 0.001, "adaptive", 0.05, "mixed", None, "per-token reward, summed from each token to the end")]
    assert [(u.key, u.suggestion) for u in d.unrecognised] == [
        ("actor_rollout_ref.actor.kl_los_coef", "actor_rollout_ref.actor.kl_loss_coef")]
    mixed = next(w for w in d.warnings if w.code == "MIXED_GRAD")
    assert mixed.fix == "algorithm.kl_penalty=kl"  # a Hydra override works beside any YAML
    j = diagnose('{"beta": 0.04, "use_bias_correction_kl": false, "loss_type": "bnpo"}')
    assert (j.library, j.kind, j.kl_uses[0].option) == ("TRL", "json", "beta")
    assert next(w.fix for w in j.warnings if w.code == "FORWARD_KL_GRAD") == '"use_bias_correction_kl": true'


@pytest.mark.parametrize(
    ("text", "library", "trainer"),
    [
        ("python -m openrlhf.cli.train_dpo --beta 0.1\n", None, "openrlhf.cli.train_dpo"),
        ("python -m openrlhf.cli.train_dpo --beta 0.1\n", "openrlhf", "openrlhf.cli.train_dpo"),
        ("CUDA_VISIBLE_DEVICES=0 trl dpo --beta 0.1\n", None, "trl dpo"),
        ("python3 /src/verl/trainer/main_generation.py data.n_samples=4\n", "verl", "verl.trainer.main_generation"),
    ],
)
def test_a_trainer_the_doctor_does_not_cover_is_refused_not_guessed(text, library, trainer):
    # Scored against the covered trainers, train_dpo's --beta once gave a TRL GRPO card.
    with pytest.raises(UnreadableInput, match=re.escape(f"this runs {trainer}, a trainer the doctor does not cover")):
        diagnose(text, library)


def test_a_trl_config_the_doctor_does_not_cover_is_refused():
    text = "from trl import OnlineDPOConfig\nargs = OnlineDPOConfig(beta=0.1)\n"
    with pytest.raises(UnreadableInput, match="OnlineDPOConfig, a TRL config the doctor does not cover"):
        diagnose(text, "trl")


def test_a_trl_config_built_by_a_parser_the_doctor_does_not_cover_is_refused_by_name():
    # trl v1.9.0 examples/scripts/online_dpo.py: TrlParser((ScriptArguments, OnlineDPOConfig, ModelConfig)), with
    # two launch commands in its docstring; it was refused as "its docstring shows no launch command"
    text = ('"""\npython examples/scripts/online_dpo.py --beta 0.1\n"""\n'
            "from trl import ModelConfig, ScriptArguments, TrlParser\n"
            "from trl.experimental.online_dpo import OnlineDPOConfig\n"
            "parser = TrlParser((ScriptArguments, OnlineDPOConfig, ModelConfig))\n")
    with pytest.raises(UnreadableInput, match="builds OnlineDPOConfig, a TRL config the doctor does not cover"):
        diagnose(text, "trl")


def test_a_usage_string_after_the_imports_is_read_like_a_docstring():
    # trl v1.9.0 examples/scripts/ppo/ppo.py keeps its launch commands in a string after the imports
    body = ("from transformers import HfArgumentParser\n"
            "from trl import ModelConfig, ScriptArguments\n"
            "from trl.experimental.ppo import PPOConfig\n\n"
            '"""\npython -i examples/scripts/ppo/ppo.py --kl_coef 0.2 --num_ppo_epochs 1\n"""\n\n'
            "parser = HfArgumentParser((ScriptArguments, PPOConfig, ModelConfig))\n")
    d = diagnose(body, "trl")
    assert d.profile.trainer == "ppo" and d.kind == "command" and d.kl_uses[0].coef == 0.2
    assert any("launch command of the module's usage string after its imports" in n for n in d.notes)
    # with no such string, the refusal stands
    with pytest.raises(UnreadableInput, match="docstring shows no launch command"):
        diagnose(body.replace("--kl_coef 0.2", "").replace("python -i examples/scripts/ppo/ppo.py", "see the docs"),
                 "trl")


def test_installing_trl_is_not_running_it():
    script = "pip install trl peft\npython3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True\n"
    assert diagnose(script).library == "verl"


REWARD_KL_YAML = """\
actor_rollout_ref:
  actor:
    kl_loss_coef: 0.05
algorithm:
  use_kl_in_reward: true
  kl_ctrl:
    kl_coef: {ref}
"""


def test_an_omegaconf_reference_takes_the_value_it_points_to():
    d = diagnose(REWARD_KL_YAML.format(ref="${actor_rollout_ref.actor.kl_loss_coef}"), "verl")
    assert d.settings["algorithm.kl_ctrl.kl_coef"] == 0.05 and d.kl_uses[0].coef == 0.05
    assert "NOT_LITERAL" not in d.codes


def test_a_reference_to_a_key_not_given_takes_the_release_default():
    text = REWARD_KL_YAML.format(ref="${actor_rollout_ref.actor.policy_loss.ppo_kl_coef}")
    default = profiles()[0].keys["actor_rollout_ref.actor.policy_loss.ppo_kl_coef"].default
    assert diagnose(text, "verl").kl_uses[0].coef == default


def test_a_reference_in_a_hydra_override_is_followed_through_a_chain():
    d = diagnose(VERL + "algorithm.use_kl_in_reward=True actor_rollout_ref.actor.kl_loss_coef=0.2 "
                 "actor_rollout_ref.actor.policy_loss.ppo_kl_coef='${actor_rollout_ref.actor.kl_loss_coef}' "
                 "algorithm.kl_ctrl.kl_coef='${actor_rollout_ref.actor.policy_loss.ppo_kl_coef}'")
    assert d.kl_uses[0].coef == 0.2 and "NOT_LITERAL" not in d.codes


@pytest.mark.parametrize("ref", ["${oc.env:KL_COEF}", "${.kl_coef}", "${algorithm.kl_ctrl.kl_coef}", "${nowhere.x}"])
def test_a_reference_the_doctor_cannot_follow_stays_unreadable(ref):
    d = diagnose(REWARD_KL_YAML.format(ref=f"'{ref}'"), "verl")
    assert "NOT_LITERAL" in d.codes


# --------------------------------------------------------------------------- audit: which steps are off-policy
def test_asynchronous_generation_is_off_policy_from_the_first_step():
    """--train.async_enable with one optimizer step per batch: the batch comes from weights one update old, so no
    step is on-policy; the message said 'after the first optimizer step on each batch'."""
    d = diagnose(ORL + "--algo.kl.init_coef 0.01 --train.async_enable --train.batch_size 1024 "
                 "--rollout.batch_size 128 --rollout.n_samples_per_prompt 8")
    assert d.off_policy_every_step and len(d.off_policy) == 1
    (w,) = d.warnings
    assert w.code == "OFF_POLICY_UNCORRECTED" and w.fix == "remove --train.async_enable"
    assert "after the first optimizer step" not in str(w.message)
    assert str(w.message).startswith("Training is off-policy from the first optimizer step on each batch (with "
                                     "--train.async_enable")
    assert "In every step the tokens come from π_old" in str(w.message)
    mini = diagnose(ORL + "--algo.kl.init_coef 0.01 --train.batch_size 128 --rollout.batch_size 128 "
                    "--rollout.n_samples_per_prompt 8")
    assert not mini.off_policy_every_step
    assert str(mini.warnings[0].message).startswith("Training is off-policy after the first optimizer step")


def test_only_a_switch_rule_makes_every_step_off_policy():
    every = {(p.library, r.when[0]) for p in profiles() for r in p.off_policy if r.every_step}
    assert every == {("OpenRLHF", "--train.async_enable")}  # two rules: by --train.async_queue_size


def test_a_warning_without_a_fix_keeps_the_changes_it_tried():
    twice = ("algorithm.use_kl_in_reward=True algorithm.kl_ctrl.kl_coef=0.001 actor_rollout_ref.actor.use_kl_loss=True "
             "actor_rollout_ref.actor.kl_loss_type=low_var_kl+ actor_rollout_ref.actor.ppo_mini_batch_size=1024 "
             "data.train_batch_size=1024")
    (w,) = diagnose(VERL + twice).warnings
    assert (w.code, w.fix, w.changes) == ("KL_TWICE", None, ())
    assert w.tried == (("algorithm.use_kl_in_reward=False", "raises", ("KL_SETTING_UNUSED",)),
                       ("actor_rollout_ref.actor.use_kl_loss=False", "raises", ("KL_SETTING_UNUSED",)))
    for change, _why, _raised in w.tried:  # each removes KL_TWICE, but only by raising another warning
        key = change.split("=")[0]
        after = diagnose(VERL + " ".join(p for p in twice.split() if not p.startswith(key + "=")) + " " + change)
        assert "KL_TWICE" not in after.codes and after.codes == ["KL_SETTING_UNUSED"]
    fixed = diagnose(VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=low_var_kl")
    assert all(w.tried == () and w.needs == () for w in fixed.warnings if w.fix)


def test_an_older_release_names_a_kl_term_without_the_settings_it_lacks():
    """TRL 0.14–0.18 had no use_bias_correction_kl: its warnings named 'beta=0.04, use_bias_correction_kl=False'."""
    d = diagnose("beta: 0.04\nnum_iterations: 2\n", "trl", filename="grpo.yaml", release="trl-grpo-0.18")
    assert d.warnings and all("use_bias_correction_kl" not in str(w.message) for w in d.warnings)
    assert any("(beta: 0.04)" in str(w.message) for w in d.warnings)


def test_trl_ppo_card_says_the_reward_kl_is_the_rollout_policys():
    """TRL 1.12.0 trl/experimental/ppo/ppo_trainer.py (lines 672-775) and TRL 0.11.4 trl/trainer/ppo_trainer.py
    (step(), lines 747-777): the reward's KL uses the log-probs taken at rollout, before the PPO epochs."""
    from kl_core.doctor.card import card_lines

    for text in ("kl_coef: 0.05\nkl_estimator: k3\nnum_ppo_epochs: 4\n", "kl_coef: 0.05\nkl_estimator: k1\n"):
        d = diagnose(text, "trl", filename="ppo.yaml")
        assert (d.profile.trainer, d.kl_uses[0].where) == ("ppo", "reward")
        card = "\n".join(card_lines(d))
        assert "value        estimates KL[π_old‖π_ref]" in card and "estimates KL[π_θ‖π_ref]" not in card


@pytest.mark.parametrize(("estimator", "how"), [
    ("grpo", "per-token reward, summed over the response"),
    ("rloo", "per-token reward, summed over the response"),
    ("reinforce_plus_plus_baseline", "per-token reward, summed over the response"),
    ("gae", "per-token reward, summed from each token to the end"),
    ("remax", "per-token reward, summed from each token to the end"),
    ("reinforce_plus_plus", "per-token reward, summed from each token to the end"),
    ("optimal_token_baseline", "per-token reward, summed from each token to the end"),
    ("gdpo", "not used by the advantages"),
])
def test_the_reward_kl_is_aggregated_as_the_advantage_estimator_reads_the_rewards(estimator, how):
    """verl 0.9.1 core_algos.py: the outcome estimators sum token_level_rewards over the response, GAE,
    REINFORCE++, ReMax and the optimal-token baselines take rewards to go, GDPO reads per-dimension scores
    (an audit found ReMax and REINFORCE++ runs told that every estimator but GAE sums the response)."""
    d = diagnose(f"python3 -m verl.trainer.main_ppo algorithm.adv_estimator={estimator} "
                 "algorithm.use_kl_in_reward=True\n")
    (u,) = [u for u in d.kl_uses if u.where == "reward"]
    assert u.aggregation.name == how
    assert u.aggregation_setting == "algorithm.adv_estimator"


@pytest.mark.parametrize("correct", [False, True])
def test_openrlhf_async_staleness_is_not_corrected_by_the_importance_weight(correct):
    """OpenRLHF 0.11.2's asynchronous trainer recomputes π_old with the actor after taking the rollout
    (ppo_trainer.py train_step → experience_maker.py), one update newer than the generator: the weight
    π_θ/π_old of --algo.kl.unbiased_gradient does not reach the sampler (an audit found the card calling
    the fixed run reverse-KL in every step, and offering the flag as the fix)."""
    cmd = ("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss --algo.kl.estimator k2 "
           "--algo.kl.init_coef 0.01 --train.async_enable" + (" --algo.kl.unbiased_gradient" if correct else "") + "\n")
    d = diagnose(cmd)
    (u,) = d.kl_uses
    assert (u.gradient_target, u.gradient_target_off_policy) == ("reverse_kl", "mixed")
    (w,) = [w for w in d.warnings if w.code == "OFF_POLICY_UNCORRECTED"]
    assert "remove --train.async_enable" in w.fix and "unbiased_gradient" not in w.fix
    assert ("does not reach the generator" in str(w.message)) == correct
    sync = diagnose(cmd.replace(" --train.async_enable", ""))
    assert sync.kl_uses[0].gradient_target_off_policy in (None, "reverse_kl" if correct else "mixed")


def test_a_sequence_level_weight_makes_the_kl_gradient_mixed_even_on_policy():
    """TRL 1.16.0 with importance_sampling_level='sequence': coef_1 = exp(mean_s log(π_θ/π_old)) is not
    detached, so ∇(coef_1·k3_t) adds k3_t·mean_s ∇log π_θ(s) even at weight 1; the card said reverse_kl beside
    the SEQUENCE_LEVEL_KL_WEIGHT warning (audit finding).  One warning says why: no MIXED_GRAD beside it."""
    d = diagnose("GRPOConfig(beta=0.04, importance_sampling_level='sequence')\n")
    assert d.kl_uses[0].gradient_target == "mixed"
    assert "SEQUENCE_LEVEL_KL_WEIGHT" in d.codes and "MIXED_GRAD" not in d.codes
    token = diagnose("GRPOConfig(beta=0.04, importance_sampling_level='token')\n")
    assert token.kl_uses[0].gradient_target == "reverse_kl"


@pytest.mark.parametrize("release", ["", "# trl==1.5.0\n"])
def test_a_sequence_level_weight_shows_the_sequence_branch_of_the_code(release):
    """Under importance_sampling_level='sequence' TRL computes one weight per sequence (1.16.0
    grpo_trainer.py line 3087); the card had shown the token branch (audit finding)."""
    seq = diagnose(release + "GRPOConfig(beta=0.04, use_bias_correction_kl=True, "
                   "importance_sampling_level='sequence')\n")
    token = diagnose(release + "GRPOConfig(beta=0.04, use_bias_correction_kl=True)\n")
    (s,), (t,) = seq.kl_uses, token.kl_uses
    assert s.entry is t.entry  # the same crosswalk row, other code
    assert "mask.sum(-1)" in s.library_formula and "mask.sum(-1)" not in t.library_formula
    assert r"\sum_{s \in o}" in s.formula_latex and r"\sum_{s \in o}" not in t.formula_latex
    assert t.library_formula == t.entry.library_formula
    assert "mask.sum(-1)" in "\n".join(card_lines(seq))
    assert seq.to_json()["kl_uses"][0]["formula"] == s.formula_latex


def test_a_train_batch_below_the_mini_batch_stops_verl_before_training_and_leads_the_card():
    # code-r1's main_grpo.sh (an audit): data.train_batch_size 16 against the mini-batch; verl 0.3.0.post1-0.9.1
    # refuse that at startup unless use_dynamic_bsz (ActorConfig.validate; an assert before 0.6.0)
    head = "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True data.train_batch_size=16 "
    d = diagnose(head + "actor_rollout_ref.actor.ppo_mini_batch_size=64")
    assert d.codes[0] == "STARTUP_CHECK_FAILS"  # it leads: nothing after it runs
    assert d.warnings[0].fix == "data.train_batch_size=64"
    card = card_lines(d)
    assert card[4].startswith("The run stops before training (STARTUP_CHECK_FAILS): verl refuses a data.train_batch_size")
    assert card.index(card[4]) < next(i for i, ln in enumerate(card) if ln.startswith("KL term 1"))
    assert "\n".join(card_markdown(d)).count("**The run stops before training (STARTUP_CHECK_FAILS):**") == 1
    assert d.codes[0] == "STARTUP_CHECK_FAILS" and d.to_json()["warnings"][0]["code"] == "STARTUP_CHECK_FAILS"
    assert "STARTUP_CHECK_FAILS" in diagnose(head).codes  # the release default, 256, read from its files
    for tail in ("actor_rollout_ref.actor.ppo_mini_batch_size=16",  # equal: fine
                 "actor_rollout_ref.actor.ppo_mini_batch_size=64 actor_rollout_ref.actor.use_dynamic_bsz=True",
                 "actor_rollout_ref.actor.ppo_mini_batch_size=$((2 * $N))"):  # not read: the default decides nothing
        assert "STARTUP_CHECK_FAILS" not in diagnose(head + tail).codes, tail
    # 0.2-0.3.0.post1 holds a release with the check and one without: a note there, no warning
    old = diagnose(head + "actor_rollout_ref.actor.ppo_mini_batch_size=64", release="0.2–0.3.0.post1")
    assert "STARTUP_CHECK_FAILS" not in old.codes
    assert any("0.2.0.post2 has no such check" in n for n in old.notes)
    # rllm's copy of verl has no such check: nothing is said
    rllm = diagnose(head + "actor_rollout_ref.actor.ppo_mini_batch_size=64", release="0.1+rllm")
    assert "STARTUP_CHECK_FAILS" not in rllm.codes and not any("0.2.0.post2" in n for n in rllm.notes)


def test_an_unused_kl_setting_beside_another_kl_term_gets_no_fix_that_adds_a_second():
    # verl v0.7.0 examples/reinforce_plus_plus_trainer (an audit): the KL is in the reward, and the loss KL's
    # settings go unused; the fix turned the loss KL on, which KL_TWICE then flags
    d = diagnose("python3 -m verl.trainer.main_ppo algorithm.use_kl_in_reward=True "
                 "actor_rollout_ref.actor.kl_loss_coef=0.001 actor_rollout_ref.actor.kl_loss_type=mse")
    assert [u.where for u in d.kl_uses] == ["reward"]
    (w,) = [w for w in d.warnings if w.code == "KL_SETTING_UNUSED"]
    assert w.fix is None and w.tried == (("actor_rollout_ref.actor.use_kl_loss=True", "raises", ("KL_TWICE",)),)
    # with no other KL term, turning the unused one on is still the fix
    alone = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.kl_loss_coef=0.001")
    assert [w.fix for w in alone.warnings if w.code == "KL_SETTING_UNUSED"] == ["actor_rollout_ref.actor.use_kl_loss=True"]


@pytest.mark.parametrize(("command", "release"), [
    ("python3 -m openrlhf.cli.train_ppo_ray --algo.advantage.estimator group_norm --algo.kl.use_loss "
     "--algo.kl.init_coef 0.01", "0.11.2"),
    ("python3 -m openrlhf.cli.train_ppo_ray --algo.advantage.estimator dr_grpo --algo.kl.init_coef 0.01", "0.11.2"),
    ("python3 -m openrlhf.cli.train_ppo_ray --advantage_estimator rloo --init_kl_coef 0.01", "0.6.0.post1–0.10.1"),
])
def test_a_group_baseline_with_one_response_per_prompt_stops_openrlhf(command, release):
    """An audit: OpenRLHF v0.6.2 examples/scripts/train_grpo_llama_ray.sh runs group_norm with
    --n_samples_per_prompt 1, which train_ppo_ray.py asserts against at startup (0.11.2 wheel lines 656-659)."""
    d = diagnose(command)
    assert d.release == release and d.codes[0] == "STARTUP_CHECK_FAILS"
    assert d.warnings[0].fix.endswith("n_samples_per_prompt 2")
    assert "STARTUP_CHECK_FAILS" not in diagnose(command + " --n_samples_per_prompt 4".replace(
        "--n_samples", "--rollout.n_samples" if release == "0.11.2" else "--n_samples")).codes
    assert "STARTUP_CHECK_FAILS" not in diagnose(command.replace("group_norm", "reinforce").replace(
        "dr_grpo", "gae").replace("rloo", "reinforce")).codes


def test_openrlhf_0_5_9_asserts_for_rloo_only_so_its_era_notes_the_others():
    head = "python3 -m openrlhf.cli.train_ppo_ray --use_kl_estimator_k3 --init_kl_coef 0.01 --advantage_estimator "
    old = diagnose(head + "group_norm", release="0.5.9–0.6.0")
    assert "STARTUP_CHECK_FAILS" not in old.codes and any("0.5.9 checks rloo only" in n for n in old.notes)
    assert diagnose(head + "rloo", release="0.5.9–0.6.0").codes[0] == "STARTUP_CHECK_FAILS"


def test_an_off_policy_setting_the_script_did_not_write_is_tagged_as_the_release_default():
    """An audit: TRL v0.13.0 examples/scripts/ppo/ppo_tldr.py sets no --num_ppo_epochs, yet the card quoted
    "--num_ppo_epochs 4" as if the script wrote it."""
    d = diagnose("from trl import PPOConfig\nconfig = PPOConfig(kl_coef=0.05)\n")
    (line,) = d.off_policy
    assert line.endswith("num_ppo_epochs=4 (release default)")
    given = diagnose("from trl import PPOConfig\nconfig = PPOConfig(kl_coef=0.05, num_ppo_epochs=2)\n")
    assert given.off_policy[0].endswith("num_ppo_epochs=2")


def test_trls_ppo_example_scripts_script_and_model_arguments_are_settings():
    """An audit: TRL v0.13.0 examples/scripts/ppo/ppo_tldr.py parses ScriptArguments and ModelConfig beside
    PPOConfig; --dataset_name and --model_name_or_path were listed as "Not settings of TRL 1.12.0"."""
    d = diagnose("from trl import PPOConfig\nconfig = PPOConfig(kl_coef=0.05, num_ppo_epochs=1)\n"
                 "# python ppo.py --dataset_name x --model_name_or_path y\n")
    assert d.profile.trainer == "ppo"
    assert {"dataset_name", "model_name_or_path", "dataset_test_split"} <= set(d.profile.keys)


@pytest.mark.parametrize("kind", ["yaml", "command"])
def test_trl_refuses_generation_batch_size_with_steps_per_generation(kind):
    """An audit: open-r1 7f777c0 recipes/R1-Zero-Qwen-Math-7B-Math/grpo/config_v00.00.yaml sets both, which
    GRPOConfig.__post_init__ refuses (TRL 1.16.0 grpo_config.py line 1115; from v0.18.0)."""
    text = ("beta: 0.04\ngeneration_batch_size: 64\nsteps_per_generation: 4\n" if kind == "yaml" else
            "trl grpo --beta 0.04 --generation_batch_size 64 --steps_per_generation 4\n")
    d = diagnose(text, "trl")
    assert d.codes[0] == "STARTUP_CHECK_FAILS"
    assert d.warnings[0].fix == ("generation_batch_size: null" if kind == "yaml" else "remove --generation_batch_size")
    # 0.17.0 had neither setting: in its era, a note
    old = diagnose(text, "trl", release="0.17.0–0.18.2")
    assert "STARTUP_CHECK_FAILS" not in old.codes and any("from 0.18.0 on" in n for n in old.notes)


def test_a_generation_batch_larger_than_an_optimizer_step_is_off_policy():
    """An audit: open-r1 8d993d5 recipes/OpenR1-Zero-7B-Math/grpo/config_v07.00.yaml sets generation_batch_size 8192
    with per_device_train_batch_size 4: steps_per_generation = 8192 / (4 × processes) (TRL 1.16.0 grpo_config.py
    line 1108), far above gradient_accumulation_steps, and the card said nothing of off-policy steps."""
    d = diagnose("beta: 0.02\ngeneration_batch_size: 8192\nper_device_train_batch_size: 4\n", "trl")
    (line,) = d.off_policy
    assert line.endswith("generation_batch_size: 8192 > per_device_train_batch_size * gradient_accumulation_steps = 4")
    assert "OFF_POLICY_UNCORRECTED" not in d.codes  # 1.16.0's default bias correction keeps the KL gradient exact
    plain = diagnose("beta: 0.02\ngeneration_batch_size: 8192\nper_device_train_batch_size: 4\n"
                     "use_bias_correction_kl: false\n", "trl")
    (w,) = [w for w in plain.warnings if w.code == "OFF_POLICY_UNCORRECTED"]
    assert "generation_batch_size: 8192" in str(w.message) and w.fix == "use_bias_correction_kl: true"
    # the batch-size fix removes it too, and is checked the same way
    assert diagnose("beta: 0.02\nper_device_train_batch_size: 4\nuse_bias_correction_kl: false\n", "trl").off_policy == ()
    small = diagnose("beta: 0.02\ngeneration_batch_size: 8\nper_device_train_batch_size: 8\n", "trl")
    assert small.off_policy == ()


def test_openrlhfs_adaptive_controller_carries_the_maintainers_caveat():
    """An audit: OpenRLHF 0.11.2 trainer/ppo_trainer.py lines 252-253 update the controller under "TODO: KL
    controller must be FixedKLController; AdaptiveKLController is incompatible here"; the card said nothing."""
    said = "AdaptiveKLController is incompatible here"
    d = diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss --algo.kl.init_coef 0.001 "
                 "--algo.kl.target 0.1\n")
    assert any(said in n for n in d.notes)
    assert not any(said in n for n in diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss "
                                               "--algo.kl.init_coef 0.001\n").notes)
