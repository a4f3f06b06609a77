"""Setting values as each library reads them: bool spellings and coefficients that are not numbers
(an audit of hand-written edge cases, round 4)."""

from __future__ import annotations

import pytest

from kl_core.doctor.diagnosis import diagnose

VERL = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "


def _kl(d):
    return [(u.where, u.estimator, u.coef) for u in d.kl_uses]


@pytest.mark.parametrize("spelling", ["1", "yes", "True", "true"])
def test_verl_reads_its_switches_for_truth(spelling):
    """verl 0.9.1 tests use_kl_loss for truth (workers/utils/losses.py line 132 `if config.use_kl_loss:`), so Hydra's
    int 1 or text `yes` is on; the card said "the KL in the loss is off (use_kl_loss=1)"."""
    d = diagnose(VERL + f"actor_rollout_ref.actor.use_kl_loss={spelling} actor_rollout_ref.actor.kl_loss_coef=0.001",
                 filename="run.sh")
    assert [u.where for u in d.kl_uses] == ["loss"] and "KL_OFF" not in d.codes


@pytest.mark.parametrize("spelling", ["0", "false", "null"])
def test_verl_switch_off_spellings(spelling):
    d = diagnose(VERL + f"actor_rollout_ref.actor.use_kl_loss={spelling}", filename="run.sh")
    assert "loss" not in [u.where for u in d.kl_uses]


@pytest.mark.parametrize(("spelling", "on"), [("no", False), ("0", False), ("f", False), ("yes", True), ("1", True),
                                              ("t", True)])
def test_trl_reads_bool_flags_with_string_to_bool(spelling, on):
    """transformers hf_argparser.py string_to_bool: `--use_bias_correction_kl no` is False; the card said the run
    stops with an UNKNOWN_OPTION that named no option."""
    d = diagnose(f"trl grpo --model_name_or_path m --beta 0.02 --use_bias_correction_kl {spelling}\n")
    assert "UNKNOWN_OPTION" not in d.codes and d.kl_uses[0].coef == 0.02
    assert (d.kl_uses[0].gradient_target == "reverse_kl") is on


@pytest.mark.parametrize(("text", "reason"), [
    (VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=null", "TypeError"),
    (VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=abc", "TypeError"),
    (VERL + "algorithm.use_kl_in_reward=True algorithm.kl_ctrl.kl_coef=null", "TypeError"),
    ("trl grpo --model_name_or_path m --beta None\n", "invalid float value"),
    ("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.init_coef None\n", "invalid float value"),
    ("from trl import GRPOConfig\nargs = GRPOConfig(output_dir='x', beta=None)\n", "TypeError"),
])
def test_a_coefficient_that_is_not_a_number_stops_the_run(text, reason):
    """The card said "kl_loss_coef=null turns it off"; `kl_loss * None` raises TypeError at the first update (verl
    0.9.1 workers/utils/losses.py line 140), and argparse's type=float exits on "None"."""
    d = diagnose(text, filename="run.sh" if not text.startswith("from") else "train.py")
    assert d.codes[0] == "SETTING_REJECTED" and reason in d.warnings[0].message, d.warnings[0].message
    off = [str(w.message) for w in d.warnings if w.code == "KL_OFF"]
    assert all("(release default)" in m for m in off), off  # off only where the release's default is 0


def test_an_aggregation_mode_the_release_lacks_stops_the_run():
    """An audit: loss_agg_mode=token-sum under verl 0.7.1 was "not a mode the release defines" on a normal card; its
    ActorConfig.__post_init__ raises "Invalid loss_agg_mode" at start-up (v0.7.0 workers/config/actor.py line 196)."""
    text = VERL + ("actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.001 "
                   "actor_rollout_ref.actor.loss_agg_mode={mode}")
    old = diagnose(text.format(mode="token-sum"), filename="run.sh", release="0.7.1")
    assert old.codes[0] == "SETTING_REJECTED" and "Invalid loss_agg_mode" in old.warnings[0].message
    assert "SETTING_REJECTED" not in diagnose(text.format(mode="token-sum"), filename="run.sh").codes
    typo = diagnose(text.format(mode="token_mean"), filename="run.sh")
    assert typo.codes[0] == "SETTING_REJECTED" and "loss_agg_mode=token_mean" in typo.warnings[0].message


def test_a_python_name_bound_more_than_once_is_not_read_as_a_constant():
    """An audit: `BETA = 0.04; BETA *= 0.25` was read as 0.04; a module `beta = 0.04` shadowed by a function's
    parameter `beta` (called with 0.0) was read as 0.04; `args.beta = 0.0` after the call was not read."""
    head = "from trl import GRPOConfig\n"
    aug = diagnose(head + "BETA = 0.04\nBETA *= 0.25\nargs = GRPOConfig(output_dir='x', beta=BETA)\n",
                   filename="train.py")
    assert "NOT_LITERAL" in aug.codes and aug.settings.get("beta") != 0.04
    shadow = diagnose(head + "beta = 0.04\ndef build(beta):\n    return GRPOConfig(output_dir='x', beta=beta)\n"
                      "args = build(0.0)\n", filename="train.py")
    assert "NOT_LITERAL" in shadow.codes
    later = diagnose(head + "args = GRPOConfig(output_dir='x', beta=0.04)\nargs.beta = 0.0\n", filename="train.py")
    assert later.kl_uses == () and any("set on line 3, after the GRPOConfig(...) call" in str(n) for n in later.notes)
    plain = diagnose(head + "BETA = 0.02\nargs = GRPOConfig(output_dir='x', beta=BETA)\n", filename="train.py")
    assert [u.coef for u in plain.kl_uses] == [0.02] and "NOT_LITERAL" not in plain.codes
