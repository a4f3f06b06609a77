"""verl 0.4.0–0.7.1, read from the tags v0.4.0 to v0.7.0 and the 0.7.1 and 0.8.0 wheels.

- No '+' options: before 0.6.0 ``kl_penalty`` has no '+' branch; 0.6.0–0.7.1 pass the name on unstripped to
  ``kl_penalty_forward``, which raises NotImplementedError (0.8.0 strips it, wheel line 2139).
- The actor's KL loss (``dp_actor.update_policy``) is ``agg_loss`` of one micro-batch, scaled by
  1/gradient_accumulation: token-mean is a mean of micro-batch token means; ``seq-mean-token-sum-norm`` is the
  micro-batch's *sum* over L in 0.4.0–0.7.0; ``token-sum`` is refused (it comes in 0.9.0).
- ``critic.model.fsdp_config.*`` and ``trainer.use_legacy_worker_impl`` are settings of the era that 0.8.0 dropped.
"""

from __future__ import annotations

import json

import pytest

from kl_core.doctor.card import card_lines
from kl_core.doctor.diagnosis import diagnose, other_release_words
from kl_core.doctor.profiles import KEYS_DIR
from kl_core.doctor.releases import _mode_changes, eras

VERL = "python3 -m verl.trainer.main_ppo "
OLD = "critic.model.fsdp_config.param_offload=False "  # a setting of 0.2–0.7.1 that 0.8.0 dropped
LOSS = "actor_rollout_ref.actor.use_kl_loss=True "


def _card(d) -> str:
    return " ".join(" ".join(card_lines(d)).split())


def test_the_eras_keys_are_read_from_its_own_releases():
    doc = json.loads((KEYS_DIR / "eras" / "verl-0.7.json").read_text(encoding="utf-8"))
    keys = doc["trainers"]["main_ppo"]["keys"]
    later = set(doc["next_release"]["keys"])
    assert {s.get("tag") or s.get("release") for s in doc["sources"]} >= {"0.7.1", "v0.4.0", "v0.5.0", "v0.7.0"}
    assert keys["actor_rollout_ref.actor.kl_loss_type"]["default"] == "low_var_kl"
    assert keys["algorithm.use_kl_in_reward"]["default"] is False
    assert "trainer.use_legacy_worker_impl" in keys and "trainer.use_legacy_worker_impl" not in later
    assert "critic.model.fsdp_config.param_offload" in keys and "critic.model.fsdp_config.param_offload" not in later
    assert not any(k.startswith("distillation.") for k in keys)  # 0.8.0's


def test_a_script_of_the_era_trains_under_it_and_is_told_0_9_1_would_refuse_it():
    d = diagnose(VERL + LOSS + OLD, filename="run.sh")
    assert d.release == "0.4.0–0.7.1" and "critic.model.fsdp_config.param_offload" in str(d.release_why)
    assert "SETTING_REJECTED" not in d.codes and not d.rejected
    (u,) = d.kl_uses
    assert (u.where, u.estimator, u.gradient_target) == ("loss", "k3", "forward_kl")
    assert (u.entry.logr_clamp, u.entry.value_clamp) == ((-20.0, 20.0), (-10.0, 10.0))  # 0.4.1 on; 0.4.0: the note
    now = next(o for o in d.also if o.release == "verl 0.9.1")
    assert now.fails == ("critic.model.fsdp_config.param_offload",)
    card = _card(d)
    assert "Under verl 0.9.1 the run stops before training" in card
    assert "verl 0.4.0's low_var_kl does not bound the log-ratio" in card


def test_no_fix_writes_a_plus_option_and_a_plus_option_stops_the_run():
    d = diagnose(VERL + LOSS + OLD, filename="run.sh")
    written = {str(v) for w in d.warnings for _, v in w.changes}
    assert "low_var_kl+" not in written and "k3+" not in written
    assert any(w.code == "FORWARD_KL_GRAD" and ("actor_rollout_ref.actor.kl_loss_type", "k2") in w.changes
               for w in d.warnings)
    plus = diagnose(VERL + LOSS + OLD + "actor_rollout_ref.actor.kl_loss_type=k3+", filename="run.sh")
    (w,) = [w for w in plus.warnings if w.code == "UNKNOWN_OPTION"]
    assert "not a value verl 0.4.0–0.7.1 accepts" in str(w.message) and "NotImplementedError" in str(w.message)
    assert not plus.kl_uses
    # the same option is today's straight-through k3
    assert diagnose(VERL + LOSS + "actor_rollout_ref.actor.kl_loss_type=k3+").kl_uses[0].gradient_target == "reverse_kl"


def test_the_reward_rows_do_not_say_the_plus_spellings_run():
    d = diagnose(VERL + OLD + "algorithm.use_kl_in_reward=True algorithm.kl_penalty=low_var_kl", filename="run.sh")
    (u,) = d.kl_uses
    caveat = str(u.entry.caveat)
    assert "The '+' spellings stop the run" in caveat and "same detached value" not in caveat


@pytest.mark.parametrize(("mode", "name", "words"), [
    ("token-mean", "token mean over each micro-batch", "mean per-token KL of each micro-batch"),
    ("seq-mean-token-sum-norm", "each micro-batch's sum of token sums over a fixed length (0.4.0–0.7.0), their mean (0.7.1)", "b times verl 0.7.1's β/(B·L)"),
    ("seq-mean-token-mean", "sequence mean of token means", "every response equally"),  # today's words hold
])
def test_the_kl_loss_aggregation_is_the_eras(mode, name, words):
    d = diagnose(VERL + LOSS + OLD + f"actor_rollout_ref.actor.loss_agg_mode={mode}", filename="run.sh")
    agg = d.kl_uses[0].aggregation
    assert agg is not None and agg.name == name and words in str(agg.coefficient)


def test_token_sum_is_not_a_mode_of_the_era():
    d = diagnose(VERL + LOSS + OLD + "actor_rollout_ref.actor.loss_agg_mode=token-sum", filename="run.sh")
    # its start-up check refuses it ("Invalid loss_agg_mode"): the card describes the run without it
    assert d.codes[0] == "SETTING_REJECTED" and "Invalid loss_agg_mode" in d.warnings[0].message
    assert d.kl_uses[0].aggregation.name == "token mean over each micro-batch"
    now = diagnose(VERL + LOSS + "actor_rollout_ref.actor.loss_agg_mode=token-sum")
    assert now.kl_uses[0].aggregation.name == "token sum over the batch"


def test_an_absent_mode_carries_no_words():
    assert _mode_changes({"id": "verl_loss", "value": "token-sum", "absent": True}, "x") == {"absent": True}
    with pytest.raises(ValueError, match="an absent mode has no name"):
        _mode_changes({"id": "verl_loss", "value": "token-sum", "absent": True, "name": "x"}, "x")
    (era,) = [e for e in eras() if e.id == "verl-0.7"]
    assert ("verl_loss", "token-sum", {"absent": True}) in era.aggregations


def test_the_card_wraps_no_setting_at_a_hyphen():
    d = diagnose(VERL + LOSS + OLD + "actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum-norm",
                 filename="run.sh")
    lines = card_lines(d)
    assert not [line for line in lines if line.rstrip().endswith("-") and not line.rstrip().endswith(" -")]


def test_another_release_that_aggregates_otherwise_is_shown_and_says_how():
    """The same k3 loss, but 0.4.0–0.7.1 averages micro-batch token means: the card read as 0.9.1 said
    nothing of it, and read as the era it named 0.9.1's KL without its batch-wide token mean."""
    d = diagnose(VERL + LOSS + "actor_rollout_ref.actor.kl_loss_type=k3")
    era = next(o for o in d.also if o.release == "verl 0.4.0–0.7.1")
    assert era.aggregated and "aggregated as token mean over each micro-batch" in str(other_release_words(era))
    old = diagnose(VERL + LOSS + OLD, filename="run.sh")
    now = next(o for o in old.also if o.release == "verl 0.9.1")
    assert now.aggregated and "aggregated as token mean over the batch" in str(other_release_words(now))
    same = diagnose(VERL + LOSS + "actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-mean")
    assert not next(o for o in same.also if o.release == "verl 0.4.0–0.7.1").aggregated  # today's words hold


def test_seq_mean_token_sum_norm_of_the_era_is_told_apart_from_todays():
    """0.4.0–0.7.0 weigh it b times more: the era's mode has its own name, so the card read as 0.9.1 shows
    the era and says how it aggregates (it kept today's name, and the card said nothing)."""
    d = diagnose(VERL + LOSS + "actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum-norm")
    era = next(o for o in d.also if o.release == "verl 0.4.0–0.7.1")
    assert era.aggregated and "their mean (0.7.1)" in str(other_release_words(era))


def test_the_markdown_card_says_how_each_term_is_aggregated():
    """The text card had an aggregation line per term; the Markdown card for a pull request had none."""
    from kl_core.doctor.card import card_markdown

    md = "\n".join(card_markdown(diagnose(VERL + LOSS + OLD, filename="run.sh")))
    assert "| aggregated as |" in md
    assert "token mean over each micro-batch (`actor_rollout_ref.actor.loss_agg_mode=token-mean`)" in md
    bad = "\n".join(card_markdown(diagnose(VERL + LOSS + OLD + "actor_rollout_ref.actor.loss_agg_mode=token-sum",
                                           filename="run.sh")))
    assert "`SETTING_REJECTED`" in bad and "loss_agg_mode=token-sum" in bad


def test_the_json_of_another_release_says_what_its_line_says():
    d = diagnose(VERL + LOSS + OLD, filename="run.sh")
    (now,) = [o for o in d.to_json()["also"] if o["release"] == "verl 0.9.1"]
    assert now["fails"] == ["critic.model.fsdp_config.param_offload"]
    assert now["kl_uses"][0]["aggregation"] == "token mean over the batch"
    assert "aggregated as token mean over the batch" in str(now["words"])
