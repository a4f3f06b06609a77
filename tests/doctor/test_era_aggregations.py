"""What an era's KL coefficient weighed, read from each release's own code.

- verl before 0.4.0 has no ``actor.loss_agg_mode``: v0.2.0.post2 verl/workers/actor/dp_actor.py lines 258-266 and
  v0.3.0.post1 lines 299-315 take ``masked_mean(kld, response_mask)`` per micro-batch and divide the loss by the
  gradient accumulation steps: a mean of micro-batch token means.
- TRL 0.14.0 and 0.15.2 (grpo_trainer.py lines 512, 713) average each completion's token mean; 0.16.0 (line 932)
  takes the batch's token mean; ``loss_type`` (default ``"bnpo"``) comes in 0.17.0.
"""

from __future__ import annotations

from pathlib import Path

from kl_core.doctor.card import card_lines
from kl_core.doctor.diagnosis import diagnose

SCRIPTS = Path(__file__).parent / "real_scripts"


def test_verl_before_0_4_weighs_micro_batch_token_means_and_names_no_loss_agg_mode():
    path = SCRIPTS / "verl" / "logic-rl_main_grpo.sh"
    d = diagnose(path.read_bytes(), filename=path.name)
    assert d.release.startswith("0.2–0.3")
    (u,) = d.kl_uses
    assert u.aggregation.name == "token mean over each micro-batch" and u.aggregation.value == ""
    words = str(u.aggregation.coefficient)
    assert "mean per-token KL of each micro-batch of actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu" in words
    assert "These releases have no actor_rollout_ref.actor.loss_agg_mode." in words
    text = "\n".join(card_lines(d))
    assert "loss_agg_mode=token-mean" not in text and "over every token of the mini-batch" not in text
    # today's verl still reads the setting
    now = diagnose(b"python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True", filename="now.sh")
    assert now.kl_uses[0].aggregation.value == "token-mean"


def test_trl_before_0_16_averages_each_completions_token_mean():
    path = SCRIPTS / "trl" / "trl_v0.14.0_docs_grpo_quickstart.py"
    d = diagnose(path.read_bytes(), filename=path.name, release="trl-grpo-0.16")
    words = " ".join(str(u.aggregation.coefficient) for u in d.kl_uses)
    assert "In 0.14.0–0.15.2 β weighs each completion's mean per-token KL, averaged over the batch" in words
    assert "These releases have no loss_type" in words
    assert all(u.aggregation.value == "" for u in d.kl_uses)  # one fixed rule: no loss_type to read
    later = diagnose(path.read_bytes(), filename=path.name, release="trl-grpo-0.18")  # 0.17.0 on: loss_type
    assert all(u.aggregation.value == "bnpo" for u in later.kl_uses)


def test_openrlhf_flat_era_names_the_dynamic_batch_and_every_release_the_advantage_whitening():
    """An audit (OpenRLHF v0.9.3, v0.8.5, wheel 0.11.2): "No flag of these releases changes this" was false with
    --use_dynamic_batch (v0.8.6 on: micro-batches by token count, each token mean weighted by its share of the
    step's samples), and the reward KL's words left out that gae/reinforce/reinforce_baseline advantages are
    whitened over the batch, which sets what β weighs against."""
    loss = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --init_kl_coef 0.01 "
                    "--advantage_estimator group_norm --use_dynamic_batch\n")
    assert "0.10.1" in loss.release
    words = str(loss.kl_uses[0].aggregation.coefficient)
    assert "No flag of these releases" not in words and "micro-batches balanced by token count" in words
    for cmd, flag in (("python3 -m openrlhf.cli.train_ppo_ray --init_kl_coef 0.01 --advantage_estimator reinforce "
                       "--no_advantage_std_norm\n", "--no_advantage_std_norm"),
                      ("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.init_coef 0.01 "
                       "--algo.advantage.estimator reinforce\n", "--algo.advantage.no_std_norm")):
        (u,) = diagnose(cmd).kl_uses
        assert u.where == "reward" and "divided by their standard deviation" in str(u.aggregation.coefficient)
        assert flag in str(u.aggregation.coefficient)
