"""Settings a release refuses at startup: the run stops before training, and the card says so first.

Sources read (unpacked wheels): Hydra 1.3.2 hydra/_internal/config_loader_impl.py (the config is made strict,
line 270, before the overrides are applied; ``key=value`` on a missing key raises "Could not override",
``~key`` "Could not delete", ``+key=value`` "Could not append to config. An item is already at …" when
``OmegaConf.select(cfg, key, throw_on_missing=False)`` is not None and the value is not a dict or list, lines
345-393) and hydra/_internal/utils.py get_args_parser (Hydra's own flags; hydra/main.py runs its
``parse_args()``); OpenRLHF 0.11.2 openrlhf/cli/train_ppo_ray.py (``parser.parse_args()``); TRL 1.16.0
trl/cli/commands/training.py (``trl grpo`` hands the flags its configs do not have to ``accelerate launch``),
trl/scripts/grpo.py (``parse_args_and_config(fail_with_unknown_args=False)``), trl/scripts/utils.py
(TrlParser.parse_args_and_config) and transformers' hf_argparser.py (``parse_args_into_dataclasses`` raises
ValueError on arguments left over).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kl_core.doctor.card import card_lines, card_markdown
from kl_core.doctor.diagnosis import _append_refused, _set_in_config, diagnose
from kl_core.doctor.parse import RawSetting, Word, hydra_flag, parse_overrides
from kl_core.doctor.profiles import profiles

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "doctor" / "real_scripts"
DATA = ROOT / "data" / "doctor_examples"
VERL = "python3 -m verl.trainer.main_ppo "
ORL = "python3 -m openrlhf.cli.train_ppo_ray "
VERL_LOSS = VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=k3+ "


def _card(d) -> str:
    return "\n".join(card_lines(d))


def _stop(d):
    assert d.warnings and d.warnings[0].code == "SETTING_REJECTED", d.codes
    return d.warnings[0]


# --------------------------------------------------------------------------- finding 1: unknown keys stop the run
def test_a_verl_key_the_release_lacks_stops_the_run_and_the_card_says_so_first():
    path = REAL / "verl" / "v0.4.1_ppo_run_deepseek7b_llm.sh"
    assert diagnose(path.read_bytes(), filename=path.name).release == "0.4.0–0.7.1"  # its own release takes them
    d = diagnose(path.read_bytes(), filename=path.name, release="latest")
    assert d.release == "0.9.1" and not d.kl_uses
    keys = ("critic.model.fsdp_config.param_offload", "critic.model.fsdp_config.optimizer_offload")
    assert d.rejected == keys
    w = _stop(d)
    assert w.message.startswith("The run stops before training.") and all(k in w.message for k in keys)
    assert "Could not override" in w.message and "without the settings it does not accept" in w.message
    assert w.fix == "\n".join(f"remove {k}=False" for k in keys)
    card = _card(d)
    assert card.index("The run stops before training") < card.index("Without them: no KL term.")
    assert "\nNo KL term." not in card
    md = "\n".join(card_markdown(d))
    assert md.index("**The run stops before training:**") < md.index("**Without them:** no KL term")


def test_a_misspelt_verl_key_suggests_the_right_one_as_the_fix_and_is_not_read():
    d = diagnose(VERL_LOSS + "actor_rollout_ref.actor.kl_los_coef=0.3")
    w = _stop(d)
    assert d.rejected == ("actor_rollout_ref.actor.kl_los_coef",)
    assert "did you mean actor_rollout_ref.actor.kl_loss_coef?" in w.message
    assert w.fix == "actor_rollout_ref.actor.kl_loss_coef=0.3"
    assert w.changes == (("actor_rollout_ref.actor.kl_loss_coef", 0.3),)
    (u,) = d.kl_uses
    assert u.coef == 0.001  # the card describes the run without the misspelt setting
    assert _card(d).index("The run stops before training") < _card(d).index("KL term 1")
    fixed = diagnose(VERL_LOSS + "actor_rollout_ref.actor.kl_loss_coef=0.3")
    assert "SETTING_REJECTED" not in fixed.codes and fixed.kl_uses[0].coef == 0.3


def test_an_openrlhf_flag_the_release_lacks_stops_the_run():
    # the script was written for 0.11.0, whose flag 0.11.2 refuses: the card says so under 0.11.2
    d = diagnose((DATA / "openrlhf_ppo_hybrid.sh").read_bytes(), filename="openrlhf_ppo_hybrid.sh", release="latest")
    w = _stop(d)
    assert d.rejected == ("--algo.advantage.is_correction_enable",)
    assert "unrecognized arguments" in w.message
    assert "(did you mean --algo.advantage.is_correction_level?)" in w.message
    # the suggestion takes one of off, token, seq: a bare flag gives it no value, so the fix removes the flag
    assert w.fix == "remove --algo.advantage.is_correction_enable"
    assert d.kl_uses and "The run stops before training" in _card(d).split("KL term 1")[0]


def test_an_openrlhf_misspelt_flag_with_a_value_is_renamed():
    d = diagnose(ORL + "--algo.kl.init_coeff 0.05")
    assert _stop(d).fix == "--algo.kl.init_coef 0.05" and d.kl_uses[0].coef == 0.01
    # argparse takes a unique prefix: not refused
    assert diagnose(ORL + "--algo.kl.init_coe 0.05").rejected == ()


def test_a_grpo_config_keyword_the_dataclass_lacks_stops_the_run():
    d = diagnose('from trl import GRPOConfig\nc = GRPOConfig(output_dir="x", kl_coef=0.1, beta=0.04)\n')
    w = _stop(d)
    assert d.rejected == ("kl_coef",) and "TypeError" in w.message and "GRPOConfig(...)" in w.message
    assert w.fix == "remove kl_coef=0.1"
    assert d.kl_uses and d.kl_uses[0].coef == 0.04


def test_the_trl_command_refuses_what_accelerate_launch_does_not_take():
    d = diagnose("trl grpo --model_name_or_path m --beta 0.04 --kl_coef 0.1 --num_processes 4 -q")
    w = _stop(d)
    assert d.rejected == ("kl_coef",)  # --num_processes is accelerate launch's; -q too
    assert "accelerate launch" in w.message and w.fix == "remove --kl_coef 0.1"
    script = diagnose("accelerate launch trl/scripts/grpo.py --beta 0.04 --kl_coef 0.1 --num_processes 4")
    assert script.rejected == ("kl_coef", "num_processes")  # HfArgumentParser raises on both
    assert "HfArgumentParser" in _stop(script).message


def test_what_is_not_certain_is_not_called_a_stop():
    # a TRL YAML: what happens depends on what reads it; the note says so
    d = diagnose("beta: 0.04\nkl_coef: 0.1\n", "trl")
    assert d.rejected == () and "SETTING_REJECTED" not in d.codes and [u.key for u in d.unrecognised] == ["kl_coef"]
    assert any("depends on what reads the YAML" in n and "accelerate launch" in n for n in d.notes)
    # a script of the user's own (it may declare fields of its own)
    assert diagnose("python train_grpo.py --beta 0.04 --kl_coef 0.1").rejected == ()
    # a verl YAML, and Hydra's + and ++ on keys the config does not have (they add them)
    assert diagnose("actor_rollout_ref:\n  actor:\n    kl_los_coef: 0.3\n", "verl").rejected == ()
    assert diagnose(VERL_LOSS + "+new.section.key=1 ++other.key=2").rejected == ()
    # a config of the user's own: its keys are not the release's, but Hydra's flags still are Hydra's
    custom = diagnose(VERL + "--config-path=/my/configs --config-name=mine a.b=1 --init_kl_coef 0.2")
    assert custom.rejected == ("--init_kl_coef",)
    assert diagnose(VERL + "--config-name=ppo_megatron_trainer a.b=1").rejected == ("a.b",)


def test_the_other_release_line_and_that_releases_card_agree():
    path = REAL / "openrlhf" / "v0.7.5_train_grpo_ray_hybrid_engine.sh"
    d = diagnose(path.read_bytes(), filename=path.name)
    (o,) = d.also
    now = diagnose(path.read_bytes(), filename=path.name, release="latest")
    assert o.fails == now.rejected and o.fails[:3] == ("--init_kl_coef", "--use_kl_loss", "--kl_estimator")
    assert _stop(now).fix.split("\n")[:3] == ["--algo.kl.init_coef 0.001", "--algo.kl.use_loss",
                                              "--algo.kl.estimator k3"]
    # Hydra's + on a new key is fine in both
    text = VERL_LOSS + "+new.key=1"
    assert all(not o.fails for o in diagnose(text, release="verl-0.3").also)


def test_the_json_names_the_refused_settings():
    d = diagnose(VERL_LOSS + "actor_rollout_ref.actor.kl_los_coef=0.3")
    j = d.to_json()
    assert j["rejected"] == ["actor_rollout_ref.actor.kl_los_coef"] and j["warnings"][0]["code"] == "SETTING_REJECTED"


# --------------------------------------------------------------------------- finding 2: + on a key the config sets
def test_hydra_plus_on_a_key_the_config_sets_stops_the_run():
    d = diagnose(VERL_LOSS + "+actor_rollout_ref.actor.kl_loss_coef=0.3")
    w = _stop(d)
    assert d.rejected == ("+actor_rollout_ref.actor.kl_loss_coef",)
    assert "Could not append to config" in w.message and w.fix == "actor_rollout_ref.actor.kl_loss_coef=0.3"
    assert d.kl_uses[0].coef == 0.001  # without the refused setting
    assert [u.key for u in d.unrecognised] == []  # it is a setting of the release: refused for its +
    # ++ adds or overrides, and a plain override overrides: both fine
    for op in ("++", ""):
        ok = diagnose(VERL_LOSS + f"{op}actor_rollout_ref.actor.kl_loss_coef=0.3")
        assert ok.rejected == () and ok.kl_uses[0].coef == 0.3


def test_hydra_plus_is_refused_only_where_the_key_has_a_value():
    """config_loader_impl.py: ``OmegaConf.select(cfg, key, throw_on_missing=False) is None`` (a null, ``???``, a
    reference to a null) or a dict/list value lets the append through."""
    verl = next(p for p in profiles() if p.library == "verl")
    key = "actor_rollout_ref.actor.kl_loss_coef"
    spec = verl.keys[key]

    def with_default(default, **more):
        keys = {**verl.keys, key: dataclasses.replace(spec, default=default), **more}
        return dataclasses.replace(verl, keys=keys)

    assert _set_in_config(verl, key)
    assert not _set_in_config(with_default(None), key)
    assert not _set_in_config(with_default("???"), key)
    ref = "algorithm.kl_ctrl.target_kl"
    assert _set_in_config(with_default("${" + ref + "}"), key)
    assert not _set_in_config(with_default("${" + ref + "}", **{ref: dataclasses.replace(verl.keys[ref], default=None)}),
                              key)
    assert not _set_in_config(with_default("${oc.select:x,1}"), key)  # a resolver: not certain
    assert not _append_refused(verl, RawSetting(key, [1, 2], "[1,2]", op="+"))  # a list merges
    # a key outside the card's settings may be in one engine's config only: not claimed
    assert diagnose(VERL_LOSS + "+trainer.total_epochs=2").rejected == ()


# --------------------------------------------------------------------------- finding 3: flags Hydra does not have
def test_a_flag_that_is_not_hydras_stops_the_run():
    d = diagnose(VERL_LOSS + "--init_kl_coef 0.2 -m")
    w = _stop(d)
    assert d.rejected == ("--init_kl_coef",) and "unrecognized arguments" in w.message
    assert w.fix == "remove --init_kl_coef 0.2"
    assert not any("--init_kl_coef" in n for n in d.notes)
    assert "-m: a Hydra flag, not a setting" in d.notes


def test_hydras_own_flags_are_read_from_its_parser():
    from hydra._internal.utils import get_args_parser

    own = [s for a in get_args_parser()._actions for s in a.option_strings]
    assert {"--config-name", "-cn", "--config-path", "-cp", "--multirun", "-m", "--cfg", "-c", "--resolve",
            "--package", "-p", "--info", "-i", "--run", "-r", "--help", "-h", "--hydra-help", "--version",
            "--shell-completion", "-sc", "--config-dir", "-cd", "--experimental-rerun"} <= set(own)
    assert all(hydra_flag(s) is not None for s in own)
    assert hydra_flag("--multi") is not None  # argparse's abbreviation
    assert hydra_flag("--config") is None  # ambiguous: argparse refuses it
    assert hydra_flag("--init_kl_coef") is None and hydra_flag("-x") is None
    got, notes = parse_overrides(tuple(Word(t) for t in ("--cfg", "job", "-m", "a.b=1", "--init_kl_coef=0.2")))
    assert [(s.key, s.value) for s in got] == [("a.b", 1), ("--init_kl_coef", 0.2)]
    assert notes == ("--cfg job: a Hydra flag, not a setting", "-m: a Hydra flag, not a setting")


@pytest.mark.parametrize("flag", ["-m", "--multirun", "-cn ppo_trainer", "--cfg job", "--resolve", "-h"])
def test_hydras_own_flags_do_not_stop_the_run(flag):
    assert diagnose(VERL_LOSS + flag).rejected == ()


@pytest.mark.parametrize(("path", "stock"), [("config", True), ("./config/", True), ("my_configs", False)])
def test_config_path_config_is_verls_own_folder(path, stock):
    """verl's examples pass --config-path=config, which Hydra reads from main_ppo.py's folder: verl's own
    configs, so a key they lack is refused (an audit: a 0.9.1 megatron script's grad_offload was only listed
    under "Not settings")."""
    from kl_core.doctor.diagnosis import diagnose

    d = diagnose(f"python3 -m verl.trainer.main_ppo --config-path={path} --config-name='ppo_megatron_trainer.yaml' "
                 "actor_rollout_ref.actor.megatron.grad_offload=True\n")
    assert (d.rejected == ("actor_rollout_ref.actor.megatron.grad_offload",)) == stock


def test_a_guessed_key_whose_value_is_of_another_kind_is_no_fix():
    """An audit: under verl 0.3.0.post1 (no loss_agg_mode) actor.loss_agg_mode=seq-mean-token-sum was "fixed" as
    actor_rollout_ref.actor.kl_loss_coef=seq-mean-token-sum, a KL coefficient set to a string."""
    from kl_core.doctor.diagnosis import diagnose

    d = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                 "actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum\n", release="0.3.0.post1")
    (w,) = [w for w in d.warnings if w.code == "SETTING_REJECTED"]
    assert w.fix == "remove actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum"
    assert "kl_loss_coef" not in str(w.message)
    assert [u.suggestion for u in d.unrecognised] == [None]
    # a number still finds its numeric neighbour
    typo = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                    "actor_rollout_ref.actor.kl_los_coef=0.3\n")
    assert typo.warnings[0].fix == "actor_rollout_ref.actor.kl_loss_coef=0.3"
