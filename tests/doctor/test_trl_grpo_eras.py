"""TRL's GRPO between 0.19.0 and 1.9.2: a KL term with beta ≠ 0 is plain k3 unless use_bias_correction_kl=True.

Sources read: TRL tags v0.19.0 to v1.9.0, trl/trainer/grpo_config.py (no use_bias_correction_kl up to v0.25.1; from
v0.26.0 `use_bias_correction_kl: bool = field(default=False, ...)`; loss_type default "bnpo" to v0.21.0, "dapo"
from v0.22.0); the TRL 1.9.1 and 1.9.2 wheels (default False) and the 1.10.0, 1.11.0, 1.12.0, 1.13.0, 1.14.0 and
1.15.0 wheels (default True), downloaded with ``pip download --no-deps trl==X``.
"""

from __future__ import annotations

import json

from kl_core.doctor.card import card_lines
from kl_core.doctor.diagnosis import diagnose
from kl_core.doctor.profiles import KEYS_DIR


def _kl(d):
    return [(u.where, u.estimator, u.coef, u.gradient_target) for u in d.kl_uses]


def _card(d) -> str:
    return " ".join("\n".join(card_lines(d)).split())


def test_the_keys_files_are_the_tags_fields():
    old = json.loads((KEYS_DIR / "eras" / "trl-grpo-0.25.json").read_text(encoding="utf-8"))
    new = json.loads((KEYS_DIR / "eras" / "trl-grpo-1.9.json").read_text(encoding="utf-8"))
    assert "use_bias_correction_kl" not in old["trainers"]["grpo"]["keys"]
    assert "use_bias_correction_kl" in old["next_release"]["keys"] and old["next_release"]["tag"] == "v0.26.0"
    bias = new["trainers"]["grpo"]["keys"]["use_bias_correction_kl"]
    assert bias["default"] is False and new["next_release"]["release"] == "1.10.0"
    assert [s["tag"] for s in new["sources"]][-1] == "v0.26.0" and [s["tag"] for s in old["sources"]][-1] == "v0.19.0"


def test_a_config_that_does_not_say_its_release_shows_the_plain_k3_of_the_releases_before_1_10():
    d = diagnose("beta: 0.04\n", library="trl")
    assert d.release == "1.16.0" and _kl(d) == [("loss", "k3", 0.04, "reverse_kl")]
    others = {o.release: _kl(o.diagnosis) for o in d.also}
    for label in ("TRL 0.19.0–0.25.1", "TRL 0.26.0–1.9.2"):
        assert others[label] == [("loss", "k3", 0.04, "forward_kl")]
    assert "TRL 1.10.0 turned GRPOConfig.use_bias_correction_kl on by default" in _card(d)


def test_under_0_26_to_1_9_the_k3_pushes_the_other_way_and_the_fix_is_the_setting():
    d = diagnose("beta: 0.04\n", library="trl", release="trl-grpo-1.9")
    assert d.release == "0.26.0–1.9.2" and _kl(d) == [("loss", "k3", 0.04, "forward_kl")]
    assert "FORWARD_KL_GRAD" in d.codes
    w = d.warnings[d.codes.index("FORWARD_KL_GRAD")]
    assert w.changes == (("use_bias_correction_kl", True),)
    assert "off by default before 1.10.0" in d.kl_uses[0].entry.caveat
    on = diagnose("beta: 0.04\nuse_bias_correction_kl: true\n", library="trl", release="trl-grpo-1.9")
    assert _kl(on) == [("loss", "k3", 0.04, "reverse_kl")] and "set by the script" in on.kl_uses[0].entry.setting


def test_before_0_26_there_is_no_setting_to_fix_it_with():
    d = diagnose("beta: 0.04\n", library="trl", release="trl-grpo-0.25")
    assert d.release == "0.19.0–0.25.1" and _kl(d) == [("loss", "k3", 0.04, "forward_kl")]
    assert not any(k == "use_bias_correction_kl" for w in d.warnings for k, _ in w.changes)
    assert "there is no use_bias_correction_kl yet" in d.kl_uses[0].entry.caveat
    # writing the setting rules the era out: the config was written for 0.26.0 or later
    later = diagnose("beta: 0.04\nuse_bias_correction_kl: false\n", library="trl")
    assert {o.release for o in later.also} <= {"TRL 0.26.0–1.9.2"}


def test_an_inherited_training_argument_rules_no_era_out_and_loss_type_rules_out_0_16():
    """A dataclass era's keys are GRPOConfig's own fields: gradient_accumulation_steps (a TrainingArguments field
    some old tags redefine) ruled out every era that did not redefine it; loss_type (from 0.17.0) is a real sign."""
    from kl_core.doctor.profiles import profile
    from kl_core.doctor.releases import infer

    prof = profile("TRL", "grpo")
    inf = infer(prof, [("beta", "0.04"), ("gradient_accumulation_steps", "4")])
    assert not inf.decided
    assert [e.id for e in inf.candidates] == ["trl-grpo-0.16", "trl-grpo-0.18", "trl-grpo-0.25", "trl-grpo-1.9"]
    inf = infer(prof, [("beta", "0.04"), ("loss_type", "grpo")])
    assert "trl-grpo-0.16" not in [e.id for e in inf.candidates]


_GSPO = ("importance_sampling_level", "sequence")  # added in TRL 0.20.0 (grpo_config.py): no 0.17–0.18 field


def _other(d, label):
    return next(o for o in d.also if o.release == label)


def test_a_later_config_field_stops_an_older_release_that_lacks_it():
    """GRPOConfig(importance_sampling_level=...) under TRL 0.17.0–0.18.2: GRPOConfig had no such field, so the
    dataclass raises TypeError; the card had offered that era as one with the same KL (audit finding)."""
    d = diagnose("from trl import GRPOConfig\nargs = GRPOConfig(beta=0.04, importance_sampling_level='sequence')\n")
    assert d.release == "1.16.0" and d.rejected == ()
    old = _other(d, "TRL 0.17.0–0.18.2")
    assert old.fails == ("importance_sampling_level",) and "SETTING_REJECTED" in old.diagnosis.codes
    assert "Under TRL 0.17.0–0.18.2 the run stops before training" in _card(d)
    assert _other(d, "TRL 0.26.0–1.9.2").fails == ()  # it has the field


def test_an_older_release_script_stops_on_a_flag_its_config_lacks_but_not_where_it_ignores_it():
    """trl/scripts/grpo.py parse_args_and_config(): v0.14.0 to v0.21.0 raise on a left-over flag, v0.22.0 to
    v0.29.1 pass return_remaining_strings=True and ignore it; only the eras that raise in every release say so."""
    cmd = "accelerate launch trl/scripts/grpo.py --beta 0.04 --{} {}".format(*_GSPO)
    d = diagnose(cmd)
    assert _other(d, "TRL 0.17.0–0.18.2").fails == ("importance_sampling_level",)
    # TRL's own `trl grpo` command: an older release's CLI is not read, so nothing is claimed
    cli = diagnose("trl grpo --beta 0.04 --{} {}".format(*_GSPO))
    assert any(o.release == "TRL 0.17.0–0.18.2" for o in cli.also) and all(o.fails == () for o in cli.also)


def test_an_inherited_training_argument_stops_no_older_release():
    """A TrainingArguments field (transformers) is no field of the era's GRPOConfig, yet every release takes it:
    only TRL's own config settings can be missing from an era."""
    for text in ("GRPOConfig(beta=0.04, logging_dir='x', importance_sampling_level='token')\n",
                 "accelerate launch trl/scripts/grpo.py --beta 0.04 --logging_dir x --importance_sampling_level token"):
        d = diagnose(text)
        assert d.also and all("logging_dir" not in o.fails for o in d.also)


def test_a_flag_the_old_script_took_from_another_dataclass_does_not_stop_it():
    """trust_remote_code was a ModelConfig field up to TRL 0.18 (trl/trainer/model_config.py, every tag v0.14.0 to
    v0.18.2), which trl/scripts/grpo.py parses beside GRPOConfig; 1.16.0 moved it into GRPOConfig.  The card
    had said the run stops under 0.14–0.18 (audit finding).  In a GRPOConfig(...) call it does stop."""
    cmd = diagnose("accelerate launch trl/scripts/grpo.py --model_name_or_path Qwen/Qwen2-0.5B --beta 0.04 "
                   "--trust_remote_code true")
    for label in ("TRL 0.14.0–0.16.1", "TRL 0.17.0–0.18.2"):
        assert _other(cmd, label).fails == ()
    call = diagnose("from trl import GRPOConfig\nGRPOConfig(beta=0.04, trust_remote_code=True)\n")
    assert _other(call, "TRL 0.17.0–0.18.2").fails == ("trust_remote_code",)
