"""Era-aware facts of the config doctor: the option values an era accepts, its clamps, unknown options.

Sources read: verl v0.3.0.post1 verl/trainer/ppo/core_algos.py kl_penalty (kl, abs, mse, low_var_kl; no
log-ratio clamp; the '+' suffix from v0.6.0, commit b8dc5377c; clamp(kl, -20, 20) from v0.4.1); OpenRLHF
v0.8.5/v0.8.6 openrlhf/models/utils.py compute_approx_kl (the ±10 value clamp from v0.8.6, no log-ratio bound
before v0.11); OpenRLHF 0.11.2 openrlhf/cli/train_ppo_ray.py (--algo.kl.estimator choices k1, k2, k3);
verl 0.9.1 core_algos.kl_penalty_forward (NotImplementedError for an unknown value).
"""

from __future__ import annotations

from pathlib import Path

from kl_core.cli.doctor import card_lines
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
    card = _card(d)
    assert "k3+" not in card and "low_var_kl+" not in card
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
