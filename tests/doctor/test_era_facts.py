"""Era-aware facts of the config doctor: the option values an era accepts, its clamps, unknown options.

Sources read: verl v0.3.0.post1 verl/trainer/ppo/core_algos.py kl_penalty (kl, abs, mse, low_var_kl; no
log-ratio clamp; the '+' suffix from v0.6.0, commit b8dc5377c; clamp(kl, -20, 20) from v0.4.1); OpenRLHF
v0.8.5/v0.8.6 openrlhf/models/utils.py compute_approx_kl (the ±10 value clamp from v0.8.6, no log-ratio bound
before v0.11); OpenRLHF 0.11.2 openrlhf/cli/train_ppo_ray.py (--algo.kl.estimator choices k1, k2, k3);
verl 0.9.1 core_algos.kl_penalty_forward (NotImplementedError for an unknown value).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from kl_core.doctor.card import card_lines
from kl_core.doctor.diagnosis import diagnose, option_values
from kl_core.doctor.profiles import profile

REAL = Path(__file__).resolve().parent / "real_scripts"
VERL_GRPO = ("python3 -m verl.trainer.main_ppo data.train_batch_size=64 actor_rollout_ref.actor.ppo_mini_batch_size=32 "
             "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_type=low_var_kl "
             "actor_rollout_ref.actor.kl_loss_coef=0.001")


def _card(d) -> str:
    return "\n".join(card_lines(d))


def test_verl_0_3_offers_only_the_options_it_accepts():
    d = diagnose(VERL_GRPO, release="verl-0.3")
    (u,) = d.kl_uses
    assert [a[0] for a in u.alternatives] == ["kl", "abs", "mse", "low_var_kl"]
    fixes = [w.fix or "" for w in d.warnings] + [c for w in d.warnings for c, _, _ in w.tried]
    assert fixes and not any("+" in f for f in fixes), fixes
    assert "actor_rollout_ref.actor.kl_loss_type=mse" in fixes
    card = _card(dataclasses.replace(d, changed=""))  # but for the history of later releases
    assert "k3+" not in card and "low_var_kl+" not in card
    assert "verl 0.8.0 runs the '+' options" in str(d.changed)
    assert "torch.clamp(kl, min=-20, max=20)" not in u.entry.library_formula and "[-20,20]" not in u.entry.formula_latex
    (clamp,) = [w for w in d.warnings if w.code == "CLAMP_HIDES_DRIFT"]
    assert "[-20, 20]" not in clamp.message and "the per-token value to [-10, 10]" in clamp.message
    # the current release keeps its own facts
    now = diagnose(VERL_GRPO, release="latest")
    assert "[-20, 20]" in next(w.message for w in now.warnings if w.code == "CLAMP_HIDES_DRIFT")
    assert any(a[0] == "k3+" for a in now.kl_uses[0].alternatives)


def test_verl_0_3_rejects_a_later_spelling():
    d = diagnose(VERL_GRPO.replace("kl_loss_type=low_var_kl", "kl_loss_type=k3"), release="verl-0.3")
    assert not d.kl_uses and "KL_OFF" not in d.codes
    (w,) = [w for w in d.warnings if w.code == "UNKNOWN_OPTION"]
    assert "abs, kl, low_var_kl, mse" in w.message and "NotImplementedError" in w.message


def test_openrlhf_era_clamp_is_the_eras():
    path = REAL / "openrlhf" / "v0.7.5_train_grpo_ray_hybrid_engine.sh"
    d = diagnose(path.read_bytes(), filename=path.name)
    (w,) = [w for w in d.warnings if w.code == "CLAMP_HIDES_DRIFT"]
    assert w.message.startswith("From OpenRLHF 0.8.6 on: ") and "Releases before 0.8.6 clamp nothing." in w.message
    assert "-inf" not in w.message and "log-ratio to" not in w.message
    assert "OpenRLHF 0.11.2 also bounds" not in str(d.kl_uses[0].entry.caveat)
    assert d.kl_uses[0].clamp_from == "0.8.6"
    now = diagnose(path.read_text().replace("--kl_estimator", "--algo.kl.estimator"), release="latest")
    assert all("From OpenRLHF" not in w.message for w in now.warnings)


def test_an_unknown_option_stops_the_run_instead_of_no_kl():
    o = diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss --algo.kl.estimator k4 "
                 "--algo.kl.init_coef 0.01")
    assert not o.kl_uses and "KL_OFF" not in o.codes
    (w,) = [w for w in o.warnings if w.code == "UNKNOWN_OPTION"]
    assert "accepts only k1, k2, k3, so the run stops at startup" in w.message
    assert "unbiased_gradient" not in w.message
    assert "No KL term: the release rejects" in _card(o) and "No KL term." not in _card(o)
    v = diagnose(VERL_GRPO.replace("=low_var_kl", "=low_var_kll"))
    assert not v.kl_uses and "KL_OFF" not in v.codes
    (w,) = [w for w in v.warnings if w.code == "UNKNOWN_OPTION"]
    assert "raises NotImplementedError" in w.message and "the run stops" in w.message
    assert w.fix == "actor_rollout_ref.actor.kl_loss_type=low_var_kl"
    prof = profile("OpenRLHF", "train_ppo_ray")
    assert option_values(prof, next(p for p in prof.placements if p.option)) == ("k1", "k2", "k3")


def test_todays_flags_are_not_settings_of_an_older_openrlhf():
    text = ("python3 -m openrlhf.cli.train_ppo_ray --rollout.batch_size 128 --algo.kl.use_loss "
            "--algo.kl.estimator k3 --init_kl_coef 0.01")
    d = diagnose(text, release="openrlhf-0.10.1")
    got = {u.key: u.suggestion for u in d.unrecognised}
    assert got["--algo.kl.use_loss"] == "--use_kl_loss" and got["--rollout.batch_size"] == "--rollout_batch_size"
    assert got["--algo.kl.estimator"] == "--kl_estimator"
    assert d.kl_uses[0].where == "reward"  # --algo.kl.use_loss is not read: the era's default, the reward KL


def test_zero_gradient_message_is_a_sentence():
    d = diagnose(VERL_GRPO.replace("=low_var_kl", "=kl"))
    (w,) = [w for w in d.warnings if w.code == "ZERO_GRAD_LOSS"]
    assert "KL. 0 (" not in w.message and w.message.endswith("looks like a KL. E[∇k1] = E[∇log π_θ] = 0.")


def test_openrlhf_reward_return_and_trl_beta_words():
    from kl_core.doctor.profiles import profiles

    words = [str(m.coefficient) for p in profiles() for pl in p.placements for m in pl.aggregation.modes]
    orl = next(w for w in words if "tokens still to come" in w)
    assert "except for GAE" not in orl and "--algo.advantage.gamma" in orl and "sets γ = 1" in orl
    d = diagnose("beta: -0.04\n", "trl")
    assert "≠ 0" in d.kl_uses[0].entry.setting and "> 0" not in d.kl_uses[0].entry.setting


# --------------------------------------------------------------------------- audit of the era cards
# OpenRLHF sources read (pip download --no-deps openrlhf==X.Y.Z, the wheels' openrlhf/ tree):
#   0.10.1 cli/train_ppo_ray.py lines 272-273 (--async_train, --async_queue_size), 365 (--rollout_batch_size),
#     386-387 (--lambd, --gamma), 389 (--train_batch_size), 402 (--n_samples_per_prompt);
#     trainer/ppo_utils/experience_maker.py lines 281-303 (GAE: gamma, lambd; reinforce: gamma; rloo,
#     reinforce_baseline, group_norm, dr_grpo: gamma = 1.0)
#   0.6.3 trainer/ppo_utils/experience_maker.py line 551 (first release forcing gamma = 1.0); 0.6.2 lines 262-276
#     and 0.5.9 lines 221-236 (every estimator's return discounted by gamma)
#   0.9.1 trainer/ppo_trainer_async.py (rollout_slots of --async_queue_size, as in 0.11.2); 0.9.0 and 0.8.6
#     (Queue(maxsize=OPENRLHF_ASYNC_QUEUE_SIZE), no flag)
#   0.11.2 trainer/ppo_trainer_async.py lines 287-297, 110, 128-151, 230; trainer/ppo_trainer.py lines 241-247
ORL_HYBRID = Path(__file__).resolve().parents[2] / "data" / "doctor_examples" / "openrlhf_ppo_hybrid.sh"


def _era_and_current_names():
    from kl_core.doctor.releases import eras

    for era in eras():
        today = {new for _old, new in era.renames}
        yield era, today - set(era.keys)  # today's names the era did not have


def test_openrlhf_era_off_policy_names_the_eras_flags():
    """Finding 1: the off-policy line of an OpenRLHF 0.6.0.post1–0.10.1 card spelled today's flags."""
    d = diagnose(ORL_HYBRID.read_bytes(), filename=ORL_HYBRID.name, release="openrlhf-0.10.1")
    (line,) = d.off_policy
    assert line == ("each rollout of --rollout_batch_size × --n_samples_per_prompt samples is split into optimizer "
                    "steps of --train_batch_size samples: --train_batch_size 128 (release default) < --rollout_batch_size * "
                    "--n_samples_per_prompt = 1024")
    (w,) = [w for w in d.warnings if w.code == "OFF_POLICY_UNCORRECTED"]
    # the card's own words, not the settings it quotes as written: the era refuses today's flags (SETTING_REJECTED)
    described = _card(d).split("Not settings of")[0].split("\n\nKL term 1", 1)[1].split("SETTING_REJECTED:")[0]
    for text in (line, w.message, described):
        assert "--rollout.batch_size" not in text and "--train.batch_size" not in text, text
    # the current release keeps today's names
    now = diagnose(ORL_HYBRID.read_bytes(), filename=ORL_HYBRID.name, release="latest")
    assert now.off_policy[0].startswith("each rollout of --rollout.batch_size × --rollout.n_samples_per_prompt")


def test_no_era_off_policy_or_aggregation_sentence_names_a_later_setting():
    """Every era's off-policy rules and aggregation words, as its card shows them, use the era's names only."""
    from kl_core.doctor.profiles import profile
    from kl_core.doctor.releases import era_profile

    for era, later in _era_and_current_names():
        if not later:
            continue
        p = era_profile(profile(era.library, era.trainer), era)
        texts = [str(r.why) for r in p.off_policy]
        texts += [str(m.coefficient) for pl in p.placements for m in pl.aggregation.modes]
        for text in texts:
            assert not [k for k in later if re.search(rf"(?<![\w.-]){re.escape(k)}(?![\w.-])", text)], (era.id, text)
    every = ("python3 -m openrlhf.cli.train_ppo_ray --init_kl_coef 0.01 --max_epochs 2 --async_train "
             "--async_queue_size 3")
    d = diagnose(every, release="openrlhf-0.10.1")
    assert len(d.off_policy) == 3
    assert not any(re.search(r"--(train|rollout|algo)\.", line) for line in d.off_policy), d.off_policy


def test_async_off_policy_follows_the_queue_size():
    """Finding 2: OpenRLHF 0.11.2's rollouts are 1 to --train.async_queue_size updates stale, exactly 1 for 1."""
    base = "python3 -m openrlhf.cli.train_ppo_ray --algo.kl.init_coef 0.01 --train.async_enable"
    one = [x for x in diagnose(base).off_policy if "async" in x]
    four = [x for x in diagnose(base + " --train.async_queue_size 4").off_policy if "async" in x]
    assert len(one) == 1 and "exactly one update" in one[0] and one[0].endswith(
        ": --train.async_enable, --train.async_queue_size 1 (release default)")
    assert len(four) == 1 and "up to --train.async_queue_size rollouts ahead" in four[0]
    assert "1 to --train.async_queue_size updates" in four[0] and "exactly" not in four[0]
    assert four[0].endswith(": --train.async_enable, --train.async_queue_size 4")
    assert not any("one update old" in x for x in one + four)  # the old sentence, wrong for a queue of 4
    for d in (diagnose(base), diagnose(base + " --train.async_queue_size 4")):
        assert d.off_policy_every_step and "OFF_POLICY_UNCORRECTED" in d.codes
        w = next(w for w in d.warnings if w.code == "OFF_POLICY_UNCORRECTED")
        assert w.fix.endswith("remove --train.async_enable")  # with the batch-size fix
    era = "python3 -m openrlhf.cli.train_ppo_ray --init_kl_coef 0.01 --async_train"
    (old1,) = [x for x in diagnose(era, release="openrlhf-0.10.1").off_policy if "async" in x]
    (old3,) = [x for x in diagnose(era + " --async_queue_size 3", release="openrlhf-0.10.1").off_policy
               if "async" in x]
    assert "OPENRLHF_ASYNC_QUEUE_SIZE" in old1 and old1.endswith(": --async_train, --async_queue_size 1 (release default)")
    assert "up to --async_queue_size rollouts ahead" in old3 and old3.endswith(", --async_queue_size 3")


def test_openrlhf_era_gamma_words_are_the_eras():
    """Finding 4: γ under 0.6.0.post1–0.10.1 is --gamma/--lambd, and γ = 1 is forced only from 0.6.3."""
    d = diagnose(ORL_HYBRID.read_bytes(), filename=ORL_HYBRID.name, release="openrlhf-0.10.1")
    (u,) = d.kl_uses
    words = str(u.aggregation.coefficient)
    assert ("GAE discounts them by --gamma (default 1) and --lambd (default 1, but 0.95 in 0.6.0–0.6.3), "
            "reinforce by --gamma;") in words  # OpenRLHF v0.6.0-v0.6.3 cli/train_ppo_ray.py: lambd default 0.95
    assert "from 0.6.3 every other advantage estimator sets γ = 1, before it they discount by --gamma too" in words
    assert "--algo.advantage" not in words
    now = diagnose(ORL_HYBRID.read_bytes(), filename=ORL_HYBRID.name, release="latest")
    assert "--algo.advantage.gamma and --algo.advantage.lambd" in str(now.kl_uses[0].aggregation.coefficient)


def test_openrlhf_era_kl_loss_aggregation_is_the_eras():
    """OpenRLHF v0.7.2-v0.10.1 trainer/ray/ppo_actor.py: kl_loss = masked_mean(kl, action_mask), one micro-batch's
    token mean (v0.10.1 line 304); v0.6.2-v0.7.1: each sequence's token mean, averaged (v0.7.1 lines 243-245).
    No --actor.loss_agg_mode in the era; 0.11.2's aggregate_loss divides by the optimizer step's tokens."""
    d = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --kl_estimator k3 --init_kl_coef 0.001",
                 release="openrlhf-0.10.1")
    (u,) = d.kl_uses
    assert str(u.aggregation.name) == "token mean over each micro-batch"
    words = str(u.aggregation.coefficient)
    assert "--micro_train_batch_size" in words and "Up to 0.7.1 each sequence's token mean" in words
    assert "loss_agg_mode" not in words and "optimizer step" not in str(u.aggregation.name)
    now = diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss --algo.kl.estimator k3 "
                   "--algo.kl.init_coef 0.001")
    assert str(now.kl_uses[0].aggregation.name) == "token mean over the optimizer step"


def test_openrlhf_era_dynamic_batch_chooses_the_loss_aggregation():
    """OpenRLHF v0.8.6-v0.10.1 --use_dynamic_batch: micro-batches balanced by token count (replay_buffer.py
    setup_dynamic_batch, v0.10.1 lines 89-139), each one's loss times len(partition) / sample_num (ppo_actor.py
    lines 321-322); the flag is not in v0.8.5's cli/train_ppo_ray.py."""
    head = "python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --kl_estimator k3 --init_kl_coef 0.001"
    on = diagnose(head + " --use_dynamic_batch", release="openrlhf-0.10.1").kl_uses[0]
    off = diagnose(head, release="openrlhf-0.10.1").kl_uses[0]
    assert (on.aggregation_setting, on.aggregation_value) == ("--use_dynamic_batch", True)
    assert str(on.aggregation.name).startswith("token mean over each token-balanced micro-batch")
    assert r"\frac{n_m}{N}" in on.aggregation.formula and "n_m/N" in str(on.aggregation.coefficient)
    assert str(off.aggregation.name) == "token mean over each micro-batch" and off.aggregation_value is False
    card = "\n".join(card_lines(diagnose(head, release="openrlhf-0.10.1")))
    assert "token mean over each micro-batch (without --use_dynamic_batch)" in card
    assert "remove --use_dynamic_batch" not in card
    # today's rule stays fixed: 0.11.2 has no such choice for the KL
    assert diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss --algo.kl.estimator k3 "
                    "--algo.kl.init_coef 0.001").kl_uses[0].aggregation_setting == ""


def test_openrlhf_flat_era_shows_its_own_k3_code():
    """The 0.6.0.post1–0.10.1 card showed 0.11.2's `k3_log_ratio = log_ratio.clamp(min=-10)`, which no release of the
    era has (v0.10.1 openrlhf/models/utils.py compute_approx_kl)."""
    for flag in ("--use_kl_loss", ""):
        d = diagnose(f"python3 -m openrlhf.cli.train_ppo_ray {flag} --kl_estimator k3 --init_kl_coef 0.001")
        assert d.release == "0.6.0.post1–0.10.1"
        (u,) = d.kl_uses
        assert "k3_log_ratio" not in u.entry.library_formula and r"\min" not in u.entry.formula_latex
        assert u.entry.library_formula.strip().endswith("return log_ratio.clamp(min=-10, max=10)")


def test_both_older_openrlhf_eras_show_their_own_code_for_every_estimator():
    """The eras showed 0.11.2's `value = …` code for k1 and k2 (audit finding); v0.10.1 and v0.11.0 return
    `log_ratio.clamp(min=-10, max=10)`."""
    for e in ("k1", "k2", "k3"):
        flags = f"--use_kl_loss --kl_estimator {e} --init_kl_coef 0.001"
        d = diagnose("python3 -m openrlhf.cli.train_ppo_ray " + flags, release="openrlhf-0.10.1")
        code = d.kl_uses[0].entry.library_formula
        assert "value" not in code and code.strip().endswith("return log_ratio.clamp(min=-10, max=10)"), code
        # 0.10.2–0.11.1 show 0.11.1's code (0.11.2's without k3_log_ratio)
        d = diagnose(f"python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss --algo.kl.estimator {e}",
                     release="openrlhf-0.11.1")
        code = d.kl_uses[0].entry.library_formula
        assert "k3_log_ratio" not in code and code.strip().endswith("value = value.clamp(min=-10, max=10)"), code


def test_trls_ppo_style_rloo_era_has_its_coefficient_its_epochs_and_its_code():
    """An audit: TRL v0.11.4's rloo_tldr.py benchmark command (--kl_coef 0.03 --num_ppo_epochs 2
    --num_mini_batches 2) was read as TRL 1.16.0: "beta = 0.05 (release default)", and no off-policy warning.
    v0.21.0 trl/trainer/rloo_trainer.py lines 404-431 (the KL in the reward, under no_grad) and 446-494 (the
    num_ppo_epochs × num_mini_batches optimizer steps); rloo_config.py: kl_coef 0.05, num_ppo_epochs 4."""
    head = "from trl import RLOOConfig\nconfig = RLOOConfig(sft_model_path='x', reward_model_path='y'{extra})\n"
    d = diagnose(head.format(extra=", kl_coef=0.03, num_ppo_epochs=2, num_mini_batches=2"))
    assert d.release == "0.10.1–0.21.0" and d.profile.trainer == "rloo"
    (u,) = d.kl_uses
    assert (u.where, u.estimator, u.coef) == ("reward", "k1", 0.03)
    assert "non_score_reward = -args.kl_coef * sequence_kl" in u.library_formula
    (w,) = [w for w in d.warnings if w.code == "OFF_POLICY_UNCORRECTED"]
    assert w.fix == "num_ppo_epochs=1, num_mini_batches=1" and "kl_coef=0.03" in str(w.message)
    # the era's defaults: four passes per batch, so off-policy unless the script says otherwise
    plain = diagnose(head.format(extra=""))
    assert plain.kl_uses[0].coef == 0.05
    assert plain.off_policy == ("each batch is trained on for num_ppo_epochs passes: num_ppo_epochs=4 (release default)",)
    one = diagnose(head.format(extra=", num_ppo_epochs=1"))
    assert "OFF_POLICY_UNCORRECTED" not in one.codes
    # without a setting only the era had, the script is read as today's (kl_coef is a deprecated alias to 0.24.x)
    assert diagnose("from trl import RLOOConfig\nconfig = RLOOConfig(beta=0.03)\n").release == "1.16.0"


@pytest.mark.parametrize("release", ["0.3.0.post1", "0.1+rllm"])
def test_verl_before_0_4_stops_on_an_adaptive_controller_its_config_cannot_feed(release):
    """An audit: under verl 0.3.0.post1 algorithm.kl_ctrl.type=adaptive was described as "adaptive, target KL 0.1,
    horizon 10000", but that release's ppo_trainer.yaml has no horizon or target_kl, and RayPPOTrainer reads both
    (v0.3.0.post1 ray_trainer.py lines 273-277): Hydra's strict config stops the run.  +key=value supplies them."""
    head = "python3 -m verl.trainer.main_ppo algorithm.kl_ctrl.type=adaptive algorithm.kl_ctrl.kl_coef=0.05"
    d = diagnose(head + "\n", release=release)
    assert d.codes[0] == "STARTUP_CHECK_FAILS" and d.warnings[0].fix == "algorithm.kl_ctrl.type=fixed"
    half = diagnose(head + " +algorithm.kl_ctrl.horizon=5000\n", release=release)
    assert half.codes[0] == "STARTUP_CHECK_FAILS" and half.settings["algorithm.kl_ctrl.horizon"] == 5000
    full = diagnose(head + " +algorithm.kl_ctrl.horizon=5000 +algorithm.kl_ctrl.target_kl=0.2\n", release=release)
    assert "STARTUP_CHECK_FAILS" not in full.codes and full.unrecognised == ()
    if full.kl_uses:  # rllm's copy puts no KL in the reward: the controller is built, its coefficient unused
        assert (full.kl_uses[0].target_kl, full.kl_uses[0].horizon) == (0.2, 5000)
    # a + on a setting the era's code does not read stays unknown (the KL still follows use_kl_loss there)
    other = diagnose(head + " +algorithm.use_kl_in_reward=False\n", release=release)
    assert [k.key for k in other.unrecognised] == ["algorithm.use_kl_in_reward"]
    assert "STARTUP_CHECK_FAILS" not in diagnose(head + "\n", release="0.4.1").codes  # 0.4.0 adds them


def test_verl_0_7_era_token_mean_words_name_the_megatron_actors_equal_weights():
    """An audit: verl v0.7.0 examples/grpo_trainer/run_qwen2-7b_seq_balance_math_megatron.sh (use_dynamic_bsz)
    was told its micro-batches are weighted by their responses; megatron_actor.py lines 535-548 return (loss,
    stats), which Megatron-core divides by num_microbatches: every micro-batch weighs the same."""
    d = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                 "actor_rollout_ref.actor.strategy=megatron\n", release="0.7.0")
    words = str(d.kl_uses[0].aggregation.coefficient)
    assert "actor_rollout_ref.actor.strategy=megatron, weighs them all equally" in words
