"""The doctor on scripts written for older releases, and the other kinds of issue 19, one test each.

The scripts are the real ones of ``tests/doctor/real_scripts`` (their sources and
expected cards beside them); a few short inputs check single behaviours.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from kl_core.cli import main as cli
from kl_core.doctor.card import card_lines
from kl_core.doctor.diagnosis import UnreadableInput, diagnose, other_release_words
from kl_core.doctor.parse import MAX_BYTES
from kl_core.doctor.profiles import profile
from kl_core.doctor.releases import eras, infer

REAL = Path(__file__).resolve().parent / "real_scripts"


def real(name: str, **kw):
    return diagnose((REAL / name).read_bytes(), filename=Path(name).name, **kw)


def kl(d):
    return [(u.where, u.estimator, u.coef, u.gradient_target) for u in d.kl_uses]


def run(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


# ------------------------------------------------------------------ kind 1: OpenRLHF flags before 0.10.2
def test_openrlhf_flags_of_an_older_release_are_read_as_that_release():
    d = real("openrlhf/v0.7.5_train_grpo_ray_hybrid_engine.sh")
    assert d.release == "0.6.0.post1–0.10.1" and "--init_kl_coef" in d.release_why
    assert kl(d) == [("loss", "k3", 1e-3, "forward_kl")]
    text = "\n".join(card_lines(d))
    assert "--kl_estimator k3" in text and "--init_kl_coef = 0.001" in text  # written as the script writes it
    (now,) = d.also
    assert now.release == "OpenRLHF 0.11.2" and "--init_kl_coef" in now.fails[:3]
    assert "stops before training" in text
    assert not any(w.fix and "--algo.kl.unbiased_gradient" in w.fix for w in d.warnings)  # not in that era


def test_under_the_current_release_old_flags_point_to_their_new_names():
    d = real("openrlhf/v0.7.5_train_grpo_ray_hybrid_engine.sh", release="latest")
    sugg = {u.key: u.suggestion for u in d.unrecognised}
    assert sugg["--n_samples_per_prompt"] == "--rollout.n_samples_per_prompt"  # not --eval.n_samples_per_prompt
    assert sugg["--init_kl_coef"] == "--algo.kl.init_coef" and sugg["--use_kl_loss"] == "--algo.kl.use_loss"


def test_openrlhf_0_5_switch_is_rewritten_to_the_estimator_it_chose():
    d = diagnose("python3 -m openrlhf.cli.train_ppo_ray --pretrain m --init_kl_coef 0.02 --use_kl_estimator_k3\n")
    assert d.release == "0.5.9–0.6.0" and kl(d) == [("reward", "k3", 0.02, "mixed")]


def test_openrlhf_0_6_0_grpo_example_gets_only_fixes_its_release_takes():
    """OpenRLHF v0.6.0 examples/scripts/train_grpo_ray_hybrid_engine.sh (--use_kl_loss --use_kl_estimator_k3): the
    card said `fix: --kl_estimator k2`, a flag 0.6.0's argparse refuses (it comes in 0.6.1), and warned of a clamp
    from 0.8.6; 0.5.9–0.6.0 choose k1 or k3 only, and clamp nothing (v0.6.0 openrlhf/models/utils.py)."""
    d = real("openrlhf/v0.6.0_train_grpo_ray_hybrid_engine.sh")
    assert d.release == "0.5.9–0.6.0" and "--use_kl_estimator_k3" in d.release_why
    assert kl(d) == [("loss", "k3", 0.001, "zero")]  # --packing_samples: test_packed_kl_loss_of_openrlhf_0_6_…
    card = " ".join("\n".join(card_lines(d)).split())
    assert "option --use_kl_estimator_k3 -> k3" in card and "fix: --kl_estimator" not in card
    assert "CLAMP_HIDES_DRIFT" not in d.codes and d.kl_uses[0].entry.value_clamp is None
    text = (REAL / "openrlhf/v0.6.0_train_grpo_ray_hybrid_engine.sh").read_text()
    unpacked = diagnose(text.replace("--packing_samples", ""), release="openrlhf-0.6.0")
    assert kl(unpacked) == [("loss", "k3", 0.001, "forward_kl")]
    forward = unpacked.warnings[unpacked.codes.index("FORWARD_KL_GRAD")]
    assert forward.fix is None and "Tried `remove --use_kl_estimator_k3`" in " ".join(
        "\n".join(card_lines(unpacked)).split())
    k1 = diagnose("python3 -m openrlhf.cli.train_ppo_ray --init_kl_coef 0.01 --use_kl_estimator_k3",
                  release="openrlhf-0.6.0")
    assert "option --use_kl_estimator_k3 -> k3" in " ".join("\n".join(card_lines(k1)).split())
    plain = diagnose("python3 -m openrlhf.cli.train_ppo_ray --init_kl_coef 0.01", release="openrlhf-0.6.0")
    assert "option --use_kl_estimator_k3 not set (release default) -> k1" in " ".join(
        "\n".join(card_lines(plain)).split())


def test_packed_kl_loss_of_openrlhf_0_6_has_no_gradient():
    """OpenRLHF v0.6.0 to v0.6.4 gather each packed sequence's KL mean with torch.tensor([...]), which drops the
    graph (v0.6.0 trainer/ppo_trainer.py line 421; v0.6.3 trainer/ray/ppo_actor.py line 433): with
    --packing_samples the KL loss adds no gradient.  0.6.0 is the only release of its era with --use_kl_loss (a
    warning); 0.6.0.post1–0.10.1 hold 0.6.0.post1–0.6.4 and the fixed 0.7.0 on (a note); 0.10.2 on say nothing."""
    packed = "python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --init_kl_coef 0.01 --packing_samples"
    d = diagnose(packed + " --use_kl_estimator_k3")
    assert d.release == "0.5.9–0.6.0" and kl(d) == [("loss", "k3", 0.01, "zero")]
    assert d.codes == ["ZERO_GRAD_LOSS"] and "torch.tensor([each_kl.mean()" in d.warnings[0].message
    later = diagnose(packed + " --kl_estimator k3")
    assert later.release == "0.6.0.post1–0.10.1" and kl(later) == [("loss", "k3", 0.01, "forward_kl")]
    assert "ZERO_GRAD_LOSS" not in later.codes and any("0.6.0 to 0.6.4" in n for n in later.notes)
    coef0 = diagnose(packed.replace("0.01", "0") + " --kl_estimator k3")
    assert not any("0.6.0 to 0.6.4" in n for n in coef0.notes)
    today = diagnose("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.use_loss --algo.kl.init_coef 0.01 "
                     "--ds.packing_samples --algo.kl.estimator k3")
    assert today.release == "0.11.2" and kl(today) == [("loss", "k3", 0.01, "forward_kl")]
    assert not any("0.6.0 to 0.6.4" in str(n) for n in today.notes) and "ZERO_GRAD_LOSS" not in today.codes


def test_a_setting_several_eras_had_is_said_to_choose_none_of_them():
    """open-r1 9915e06 recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/config_demo.yaml (its setup.py pins trl 0.16.0):
    max_prompt_length is in every GRPOConfig from 0.14.0 to 0.27.2, so it cannot tell 0.16 from 0.26.  The card
    used to give it as the reason for TRL 0.26.0–1.9.2 alone."""
    d = diagnose("max_prompt_length: 512\nnum_generations: 16\nreward_funcs:\n- accuracy\n", filename="config.yaml")
    assert d.release == "0.26.0–1.9.2"
    why = str(d.release_why)
    assert "0.14.0–0.16.1, 0.17.0–0.18.2, 0.19.0–0.25.1 and 0.26.0–1.9.2 all had" in why, why
    assert {o.release for o in d.also} >= {"TRL 0.14.0–0.16.1", "TRL 0.17.0–0.18.2"}, [o.release for o in d.also]
    only = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_estimator_k3 --init_kl_coef 0.01")
    assert "all had" not in str(only.release_why)  # a setting of one era alone


# ------------------------------------------------------------------ kind 2: release eras
def test_verl_before_0_4_put_the_kl_in_the_reward_when_use_kl_loss_was_off():
    d = real("verl/tinyzero_train_tiny_zero.sh")
    assert "TinyZero" in d.release_why and d.release == "0.2–0.3.0.post1"
    assert kl(d) == [("reward", "k1", 1e-3, "reverse_kl")]
    assert d.also[0].release == "verl 0.9.1" and d.also[0].kl_uses == ()
    assert "KL_OFF" not in d.codes


def test_tinyzeros_copy_of_verl_subtracts_the_kl_loss():
    """An audit: TinyZero 95df88f verl/workers/actor/dp_actor.py line 267 is policy_loss - kl_loss * kl_loss_coef
    (verl adds it from v0.2.0.post2); the card described an ordinary penalty.  Its fix, use_kl_loss=False, puts the
    KL back in the reward in this copy, which the fix check has to derive again."""
    script = ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.actor.use_kl_loss=True "
              "actor_rollout_ref.actor.kl_loss_coef=0.001 actor_rollout_ref.actor.kl_loss_type=low_var_kl "
              "algorithm.kl_ctrl.kl_coef=0.001 trainer.project_name={name}\n")
    d = diagnose(script.format(name="TinyZero"), filename="train.sh")
    assert "TinyZero" in d.release_why and "NEGATIVE_COEF" in d.codes
    w = d.warnings[d.codes.index("NEGATIVE_COEF")]
    assert "policy_loss - kl_loss * kl_loss_coef" in w.message and w.fix == "actor_rollout_ref.actor.use_kl_loss=False"
    logic = diagnose(script.format(name="KK"), filename="train.sh")  # Logic-RL's copy adds it
    assert "Logic-RL" in logic.release_why and "NEGATIVE_COEF" not in logic.codes
    today = diagnose(script.format(name="TinyZero").replace("trainer.project_name=TinyZero", ""), release="latest")
    assert "NEGATIVE_COEF" not in today.codes


def test_a_script_that_does_not_say_its_release_gets_both_cards_when_they_differ():
    # critic.model.fsdp_config.* is a setting of 0.2–0.7.1: the newest era it allows is read, the others shown
    d = real("verl/v0.3.0.post1_ppo_run_deepseek7b_llm.sh")
    assert d.release == "0.4.0–0.7.1" and kl(d) == [] and "critic.model.fsdp_config" in d.release_why
    assert [(o.release, kl(o.diagnosis)) for o in d.also] == [
        ("verl 0.9.1", []), ("verl 0.2–0.3.0.post1", [("reward", "k1", 1e-3, "reverse_kl")])]
    assert d.also[0].fails and d.changed.index("verl 0.4.0 (PR #644)") < d.changed.index("verl 0.8.0 runs")
    same = real("verl/v0.3.0.post1_grpo_run_qwen2-7b.sh")
    assert [kl(o.diagnosis) for o in same.also] == [kl(same)] * 2 and "nothing in the text" in same.release_why
    # the same KL, but the fixes this card writes do not exist before verl 0.4.0, nor run before 0.8.0: the
    # other cards say so
    old, mid = same.also
    assert (old.release, mid.release) == ("verl 0.2–0.3.0.post1", "verl 0.4.0–0.7.1")
    # (no fix writes algorithm.use_kl_in_reward, which 0.2–0.3.0.post1 lack: turning the reward KL on beside the
    # loss KL would add a second term, so its unused setting gets no fix)
    assert old.lacks == ()
    assert old.refuses == (("actor_rollout_ref.actor.kl_loss_type", "low_var_kl+"),)
    assert mid.lacks == () and mid.refuses == (("actor_rollout_ref.actor.kl_loss_type", "low_var_kl+"),)
    assert "does not accept low_var_kl+ in actor_rollout_ref.actor.kl_loss_type" in " ".join(" ".join(card_lines(same)).split())
    # and what to write there instead: each era's own fix for the same warnings (its card's, not a second guess)
    for o, fix in ((old, "actor_rollout_ref.actor.kl_loss_type=mse"), (mid, "actor_rollout_ref.actor.kl_loss_type=k2")):
        assert o.fixes_there == ((fix, ("FORWARD_KL_GRAD", "CLAMP_HIDES_DRIFT")),)
        assert [w.fix for w in o.diagnosis.warnings if w.code == "FORWARD_KL_GRAD"] == [fix]
        assert f"There the doctor's fix for FORWARD_KL_GRAD, CLAMP_HIDES_DRIFT is {fix}." in other_release_words(o)
    assert same.to_json()["also"][1]["fixes_there"] == [
        {"fix": "actor_rollout_ref.actor.kl_loss_type=k2", "codes": ["FORWARD_KL_GRAD", "CLAMP_HIDES_DRIFT"]}]
    plain = real("verl/v0.3.0.post1_grpo_run_qwen2-7b.sh", release="verl-0.3")
    assert plain.also and plain.also[0].lacks == () and plain.also[0].refuses == ()


def test_trl_grpo_beta_default_of_the_release_open_r1_pins():
    d = real("trl/open-r1_qwen2.5-1.5b_grpo_config_demo.yaml")
    assert d.release == "0.17.0–0.18.2" and "open-r1" in d.release_why
    assert kl(d) == [("loss", "k3", 0.04, "forward_kl")]
    assert "release default" in "\n".join(card_lines(d))
    assert d.also[0].kl_uses == () and "0.19.0" in d.changed
    now = real("trl/open-r1_qwen2.5-1.5b_grpo_config_demo.yaml", release="latest")
    assert kl(now) == [] and now.also == ()


def test_release_option_and_its_errors():
    assert {e.id for e in eras()} == {"openrlhf-0.6.0", "openrlhf-0.10.1", "openrlhf-0.11.1", "verl-0.3", "verl-0.7",
                                      "verl-rllm", "trl-grpo-0.16", "trl-grpo-0.18",
                                          "trl-grpo-0.25", "trl-grpo-1.9", "trl-rloo-0.21"}
    d = diagnose("python3 -m verl.trainer.main_ppo algorithm.kl_ctrl.kl_coef=0.01\n", release="verl-0.3")
    assert kl(d) == [("reward", "k1", 0.01, "reverse_kl")]
    with pytest.raises(ValueError, match="release must be one of"):
        infer(profile("verl"), [], "0.1")


def test_a_later_releases_setting_is_unknown_to_an_era_and_its_value_is_derived():
    """Before verl 0.4.0 there was no algorithm.use_kl_in_reward: the KL went in the reward whenever use_kl_loss was
    False.  A script that writes use_kl_in_reward=False under that era has the reward KL, and the key is unknown."""
    text = ("python3 -m verl.trainer.main_ppo algorithm.use_kl_in_reward=False "
            "actor_rollout_ref.actor.use_kl_loss=False\n")
    d = diagnose(text, release="verl-0.3")
    assert kl(d) == [("reward", "k1", 1e-3, "reverse_kl")]
    assert "KL_OFF" not in d.codes
    assert [u.key for u in d.unrecognised] == ["algorithm.use_kl_in_reward"]
    assert d.settings["algorithm.use_kl_in_reward"] is True and "algorithm.use_kl_in_reward" not in d.given
    assert any("algorithm.use_kl_in_reward did not exist" in str(n) for n in d.notes)
    # the switch the era followed is named where the card says the reward KL is off
    off = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                   "algorithm.kl_ctrl.kl_coef=0.01\n", release="verl-0.3")
    (unused,) = [w for w in off.warnings if w.code == "KL_SETTING_UNUSED"]
    assert str(unused.message) == ("algorithm.kl_ctrl.kl_coef=0.01 has no effect: the KL in the reward is off "
                                   "(algorithm.use_kl_in_reward=False, read from "
                                   "actor_rollout_ref.actor.use_kl_loss=True).")
    assert unused.fix is None and unused.needs == ("algorithm.use_kl_in_reward",)
    # the current release reads the key as written
    assert kl(diagnose(text, release="latest")) == []


def test_an_era_lists_and_tries_only_the_options_it_had():
    """OpenRLHF 0.6.0.post1–0.10.1 had no --algo.kl.unbiased_gradient; TRL 0.14–0.18 no use_bias_correction_kl."""
    d = diagnose("python3 -m openrlhf.cli.train_ppo_ray --use_kl_loss --kl_estimator k3 --init_kl_coef 0.01 "
                 "--algo.kl.unbiased_gradient\n", release="openrlhf-0.10.1")
    assert "--algo.kl.unbiased_gradient" in [u.key for u in d.unrecognised]
    assert [a[0] for a in d.kl_uses[0].alternatives] == ["k1", "k2", "k3"]
    for w in d.warnings:
        assert not any("unbiased_gradient" in t for t, _why, _raised in w.tried)  # no "--kl_estimator k3+unbiased_gradient"
    trl = diagnose("beta: 0.04\nuse_bias_correction_kl: true\n", "trl", release="trl-grpo-0.18")
    assert [u.key for u in trl.unrecognised] == ["use_bias_correction_kl"]
    assert [(u.option, [a[0] for a in u.alternatives]) for u in trl.kl_uses] == [("beta", ["beta"])]
    (w,) = trl.warnings
    assert w.code == "FORWARD_KL_GRAD" and w.fix is None and w.needs == ("use_bias_correction_kl",)


# ------------------------------------------------------------------ kind 3: launch lines
def test_an_entry_point_without_a_profile_is_named_not_replaced():
    with pytest.raises(UnreadableInput, match="recipe.dapo.main_dapo, a trainer the doctor does not cover"):
        real("verl/v0.4.1_run_dapo_qwen2.5_32b.sh")


def test_a_trainer_inside_srun_bash_c_is_found():
    d = real("openrlhf/v0.9.10_train_ppo_ray_slurm.sh")
    assert d.command.endswith("python3 -m openrlhf.cli.train_ppo_ray") and kl(d) == [("reward", "k1", 0.01, "reverse_kl")]


def test_a_user_script_is_read_from_its_command_line_or_refused_saying_why():
    with pytest.raises(UnreadableInput, match=r"train_grpo.py, a script of its own.*--server_ip"):
        real("trl/trl_docs_grpo_slurm.sh")
    d = diagnose("srun -N1 accelerate launch --num_processes 8 train_grpo.py --beta 0.02 --loss_type dr_grpo &\n"
                 "srun -N1 trl vllm-serve --model Qwen/Qwen2.5-7B &\n")
    assert d.library == "TRL" and d.profile.trainer == "grpo" and kl(d)[0][2] == 0.02
    assert any("script of its own" in str(n) for n in d.notes)
    # verl v0.2.0.post2 examples/split_placement/run_deepseek7b_llm.sh: 31 verl overrides after main_ppo_split.py,
    # which the refusal called "no setting the doctor knows (none)"
    split = ("python3 main_ppo_split.py algorithm.kl_ctrl.kl_coef=0.001 data.train_batch_size=1024 "
             "actor_rollout_ref.actor.ppo_mini_batch_size=256 trainer.n_gpus_per_node=8\n")
    with pytest.raises(UnreadableInput, match=r"main_ppo_split.py, a script of its own: its command line gives 4 "
                                              r"Hydra overrides of verl's keys \(algorithm.kl_ctrl.kl_coef,"):
        diagnose(split, filename="run.sh")


# ------------------------------------------------------------------ kind 4: Python
def test_python_is_read_as_python_and_trl_parser_is_named():
    d = real("trl/trl_examples_grpo_vlm.py")
    assert d.kind == "command" and "grpo_vlm.py" in d.command
    assert any("TrlParser" in str(n) and "docstring" in str(n) for n in d.notes)
    assert not any("a word that is not a flag" in str(n) for n in d.notes)
    with pytest.raises(UnreadableInput, match="TrlParser.*not from this file"):
        real("trl/open-r1_grpo.py")


def test_module_constants_are_resolved():
    d = diagnose("from trl import GRPOConfig\nBETA = 0.02\nargs = GRPOConfig(beta=BETA, output_dir='o')\n")
    assert kl(d)[0][2] == 0.02 and any("BETA = 0.02 on line 2" in str(n) for n in d.notes)


# ------------------------------------------------------------------ kind 5: keys, words, errors
def test_hydra_groups_and_penalties_towards_pi_old():
    d = diagnose("python3 -m verl.trainer.main_ppo model_engine=megatron "
                 "actor_rollout_ref.actor.policy_loss.loss_mode=kl_cov\n")
    assert "model_engine" not in [u.key for u in d.unrecognised]
    assert any("config group model_engine" in str(n) for n in d.notes)
    assert any("KL-Cov" in str(n) and "π_old" in str(n) for n in d.notes)
    d = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.policy_loss.loss_mode=dppo_kl\n")
    assert any("DPPO" in str(n) for n in d.notes)


def test_oc_env_takes_its_default_and_says_so():
    d = diagnose("python3 -m verl.trainer.main_ppo 'actor_rollout_ref.actor.use_kl_loss=${oc.env:USE_KL,true}'\n")
    assert kl(d)[0][:2] == ("loss", "k3")
    assert any("environment variable USE_KL" in str(n) for n in d.notes)


def test_errors_name_the_size_and_decode_utf16(tmp_path, capsys):
    big = tmp_path / "big.sh"
    big.write_bytes(b"#" * (3 * MAX_BYTES))
    code, out, err = run(["doctor", str(big)], capsys)
    assert code == 2 and "768 KiB" in err
    code, out, err = run(["doctor", str(big), "--json"], capsys)
    assert code == 2 and json.loads(out) == {"error": json.loads(out)["error"], "code": "unreadable"}
    assert "768 KiB" in json.loads(out)["error"] and err == ""
    line = "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True\n"
    for data in (codecs.BOM_UTF16_LE + line.encode("utf-16-le"), line.encode("utf-16-be"),
                 codecs.BOM_UTF8 + line.encode()):
        assert kl(diagnose(data))[0][:2] == ("loss", "k3")


# ------------------------------------------------------------------ where people work
def test_markdown_card_and_fail_on(capsys, tmp_path):
    path = REAL / "verl" / "logic-rl_main_grpo.sh"
    code, out, _ = run(["doctor", str(path), "--format", "md"], capsys)
    assert code == 0 and out.startswith("### KL card") and "| 1 | loss |" in out and "`FORWARD_KL_GRAD`" in out
    code, out, _ = run(["doctor", str(path), "--fail-on", "FORWARD_KL_GRAD"], capsys)
    assert code == 1 and "fails on FORWARD_KL_GRAD" in out
    code, _, _ = run(["doctor", str(path), "--fail-on", "KL_TWICE"], capsys)
    assert code == 0
    assert run(["doctor", str(path), "--fail-on", "NOPE"], capsys)[0] == 2


def test_several_files_as_a_pre_commit_hook_passes_them(capsys):
    good = REAL / "verl" / "tinyzero_train_tiny_zero.sh"
    uncovered = REAL / "verl" / "v0.4.1_run_dapo_qwen2.5_32b.sh"
    code, out, _ = run(["doctor", str(good), str(uncovered), "--fail-on", "KL_OFF"], capsys)
    assert code == 0 and f"==> {good} <==" in out and "not read: this runs recipe.dapo.main_dapo" in out
    code, out, _ = run(["doctor", str(good), str(uncovered), "--json"], capsys)
    docs = json.loads(out)
    assert docs[0]["file"] == str(good) and docs[0]["release"].startswith("0.2") and docs[1]["code"] == "unreadable"


def test_the_hook_skips_a_single_unreadable_file(capsys, tmp_path):
    """pre-commit passes only the changed files: a commit that changes one file the doctor cannot read exited 2
    and was blocked, though the hook says such files are reported and skipped (an audit finding)."""
    stray = tmp_path / "run_x.sh"
    stray.write_text("echo hello\n")
    assert cli.main(["doctor", str(stray), "--skip-unreadable"]) == 0
    assert f"{stray}: not read: the doctor cannot tell which library" in capsys.readouterr().out
    assert cli.main(["doctor", str(stray), "--skip-unreadable", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["code"] == "unreadable"
    assert cli.main(["doctor", str(stray)]) == 2  # without the flag one file is still an error


def test_pre_commit_hook_definition():
    import re

    import yaml

    root = Path(__file__).resolve().parents[2]
    (hook,) = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "kl-doctor" and hook["pass_filenames"]
    assert hook["entry"] == "python -m kl_core doctor --skip-unreadable"  # one unreadable changed file: no block
    files = re.compile(hook["files"])
    assert files.search("examples/grpo_trainer/run_qwen2-7b.sh") and files.search("recipes/x/grpo/config_demo.yaml")
    assert not files.search("README.md")
    readme = (root / "README.md").read_text()
    assert "kl-doctor" in readme and "--fail-on" in readme and "--format md" in readme


def test_a_job_yaml_run_block_is_the_launch_script():
    job = ("resources:\n  accelerators: H100:8\nsetup: |\n  pip install verl\nrun: |\n  set -x\n"
           "  python3 -m verl.trainer.main_ppo \\\n    actor_rollout_ref.actor.use_kl_loss=True \\\n"
           "    actor_rollout_ref.actor.kl_loss_coef=0.002\n")
    d = diagnose(job)
    assert d.library == "verl" and kl(d) == [("loss", "k3", 0.002, "forward_kl")]
    assert any("run: block" in str(n) for n in d.notes)


def test_hydra_overrides_are_typed_by_hydras_grammar_and_sweeps_named():
    d = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                 "actor_rollout_ref.actor.kl_loss_coef=1e-3,1e-2 'trainer.logger=[console,wandb]'\n")
    assert kl(d) == [("loss", "k3", 1e-3, "forward_kl")]  # the sweep's key takes the release default
    assert any("sweep" in str(n) for n in d.notes)


def test_what_changed_names_each_release_once_from_the_oldest_era_shown():
    """A TRL YAML that names no release showed 0.19.0's and 0.26.0's changes three times: each era's text
    repeated the later ones, and the card joined them all."""
    d = diagnose("beta: 0.04\n", filename="c.yaml", library="trl")
    said = str(d.changed)
    for release in ("TRL 0.17.0", "TRL 0.19.0", "TRL 0.26.0", "TRL 1.10.0"):
        assert said.count(release) == 1, said
    assert said.index("TRL 0.17.0") < said.index("TRL 0.19.0") < said.index("TRL 0.26.0") < said.index("TRL 1.10.0")
    newest = diagnose("beta: 0.04\nuse_bias_correction_kl: false\n", filename="c.yaml", library="trl",
                      release="trl-grpo-1.9")
    assert str(newest.changed) == "TRL 1.10.0 turned GRPOConfig.use_bias_correction_kl on by default"


def test_a_plus_key_is_no_sign_of_a_release_that_had_the_key():
    """rllm's DeepCoder script writes +trainer.val_generations_to_log_to_wandb=300; verl 0.2–0.3.0.post1's
    config sets that key (ppo_trainer.yaml), so Hydra would refuse the +, and the doctor read the script as
    that era on the key's strength (audit finding).  Without the + it is still that era's sign."""
    from kl_core.doctor.diagnosis import diagnose

    cmd = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo {op}trainer.val_generations_to_log_to_wandb=3\n"
    assert diagnose(cmd.format(op="+")).profile.release == "0.9.1"
    assert diagnose(cmd.format(op="")).profile.release != "0.9.1"


def test_a_fork_era_is_read_only_where_its_own_settings_point_to_it():
    """rllm's copy of verl (fork = true) shares most settings with verl 0.1–0.4: a script with none of rllm's own
    settings is never read as rllm, nor shown rllm as another release it could be; one with them is read as
    rllm, whose reward KL is off in code (an audit: DeepCoder's card showed a k1 KL in the reward)."""
    from kl_core.doctor.diagnosis import diagnose

    plain = diagnose("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo\n")
    assert "rllm" not in plain.release and not any("rllm" in a.release for a in plain.also)
    assert "rllm" not in str(plain.changed)
    tiny = diagnose("python3 -m verl.trainer.main_ppo trainer.project_name=TinyZero\n")
    assert tiny.release == "0.2–0.3.0.post1" and "rllm" not in str(tiny.changed)
    rllm = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.n_val=8 "
                    "actor_rollout_ref.actor.use_kl_loss=False algorithm.kl_ctrl.kl_coef=0.001\n")
    assert "rllm" in rllm.release and rllm.kl_uses == ()  # the era verl-0.3 would put k1 in the reward
    # the fork has no algorithm.use_kl_in_reward: its "off" is no release default (audit finding)
    (unused,) = [str(w.message) for w in rllm.warnings if w.code == "KL_SETTING_UNUSED"]
    assert "verl 0.1+rllm has no algorithm.use_kl_in_reward: it never adds this KL" in unused
    assert "(release default)" not in unused


def test_a_release_that_would_refuse_the_script_is_not_said_to_give_the_same_kl():
    """verl 0.4.0–0.7.1 has no actor_rollout_ref.actor.checkpoint.strict, and Hydra refuses it there: the card
    said that release "gives the same KL terms" (audit finding, on TRL's GSPO example); it now shows the stop."""
    from kl_core.doctor.diagnosis import diagnose

    d = diagnose("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo algorithm.use_kl_in_reward=True "
                 "data.train_batch_size=64 actor_rollout_ref.actor.ppo_mini_batch_size=64 "
                 "actor_rollout_ref.actor.checkpoint.strict=True\n")
    assert "gives the same KL terms" not in str(d.release_why)
    (other,) = [a for a in d.also if "0.4.0–0.7.1" in a.release]
    assert other.fails == ("actor_rollout_ref.actor.checkpoint.strict",)


def test_an_unread_forks_markers_are_no_setting_of_a_release_or_copy_the_doctor_reads():
    """A marker of [[unread_forks]] must never refuse a config that a verl release, or a copy the doctor reads
    (rllm's, SimpleRL-Zoo's), accepts."""
    from kl_core.doctor.profiles import profiles
    from kl_core.doctor.releases import _unread_forks, eras_for

    forks = _unread_forks()
    assert {f.name for f in forks} >= {"EasyR1", "Skywork-OR1", "PRIME", "ToRL"}
    for fork in forks:
        for prof in (p for p in profiles() if p.library == fork.library):
            keys = set(prof.keys) | {k for e in eras_for(prof) for k in e.keys}
            assert fork.marked(keys) == [], (fork.name, fork.marked(keys)[:5])


def test_a_config_of_an_unread_fork_is_refused_by_name():
    """EasyR1's YAML read as verl 0.9.1 said "No KL term" with fixes that stop the run; its KL is k3 in the loss
    (an audit, hiyouga/EasyR1 b44b311b)."""
    import pytest

    from kl_core.doctor.diagnosis import UnreadableInput, diagnose

    yaml = "algorithm:\n  use_kl_loss: true\n  kl_penalty: low_var_kl\n  kl_coef: 1.0e-2\nworker:\n  actor:\n    global_batch_size: 128\n"
    with pytest.raises(UnreadableInput, match=r"config of EasyR1 \(hiyouga/EasyR1\): it sets algorithm\.use_kl_loss"):
        diagnose(yaml, library="verl")
    with pytest.raises(UnreadableInput, match="PRIME"):
        diagnose("python3 -m verl.trainer.main_ppo reward_model.prime_model.path=x algorithm.kl_ctrl.kl_coef=0\n")
    plain = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True\n")
    assert plain.kl_uses  # a marker's neighbours are not markers


def test_an_eras_note_on_the_code_shown_comes_only_with_a_kl_term():
    # verl 0.4.0–0.7.1's note begins "The code shown is verl 0.7.1's": a card with no KL term shows no code,
    # and said it anyway (an audit of verl v0.5.0's examples/ppo_trainer/run_gemma.sh)
    text = (REAL / "verl/v0.4.1_ppo_run_deepseek7b_llm.sh").read_text()
    plain = diagnose(text)
    assert plain.release == "0.4.0–0.7.1" and plain.kl_uses == ()
    assert not any("The code shown" in n for n in plain.notes)
    with_kl = diagnose(text.replace("trainer.total_epochs=15", "trainer.total_epochs=15 "
                                    "actor_rollout_ref.actor.use_kl_loss=True"))
    assert with_kl.release == "0.4.0–0.7.1" and [u.where for u in with_kl.kl_uses] == ["loss"]
    assert any(n.startswith("The code shown is verl 0.7.1's.") for n in with_kl.notes)


@pytest.mark.parametrize("project", ["GRPO_logic_KK", "KK", "KK_logic"])
def test_logic_rls_own_project_names_point_to_its_copy_of_verl(project):
    """An audit: Logic-RL 9d2c457 scripts/train_ppo_3B_4gpu.sh (trainer.project_name=KK) was read as verl 0.9.1, with
    no KL term; its vendored verl puts a k1 KL in the reward whenever use_kl_loss is False."""
    d = diagnose("python3 -m verl.trainer.main_ppo algorithm.kl_ctrl.kl_coef=0.001 "
                 f"trainer.project_name={project}\n")
    assert d.release == "0.2–0.3.0.post1" and "Logic-RL" in d.release_why
    assert [(u.where, u.estimator) for u in d.kl_uses] == [("reward", "k1")]


@pytest.mark.parametrize(("library", "given", "era"), [
    ("verl", "0.4.1", "0.4.0–0.7.1"), ("verl", "v0.7.1", "0.4.0–0.7.1"), ("verl", "0.3.0.post1", "0.2–0.3.0.post1"),
    ("verl", "0.2.0.post2", "0.2–0.3.0.post1"), ("openrlhf", "0.6.0", "0.5.9–0.6.0"),
    ("openrlhf", "0.6.0.post1", "0.6.0.post1–0.10.1"), ("openrlhf", "0.9.3", "0.6.0.post1–0.10.1"),
    ("trl", "0.15.2", "0.14.0–0.16.1"), ("trl", "1.2.0", "0.26.0–1.9.2"),
])
def test_a_release_number_chooses_the_era_that_holds_it(library, given, era):
    """An audit: --release 0.4.1 was refused with a list of era ids, though the card labels the era 0.4.0–0.7.1."""
    inf = infer(profile(library), [], given)
    assert inf.era is not None and given in str(inf.why) and f"in the era {era}" in str(inf.why)
    # an era whose every release was read (releases.toml's TRL and OpenRLHF eras) is labelled with that release
    assert inf.era.label == (given.lstrip("v") if inf.era.releases else era)


def test_a_setting_only_some_releases_of_an_era_have_narrows_it():
    """An audit: TRL 0.17.0 was read with 0.18.0's steps_per_generation (added in v0.18.0, cf5183db7), so
    GRPOConfig(steps_per_generation=8) under --release 0.17.0 was called off-policy instead of a TypeError;
    max_prompt_length (gone in v0.28.0) was a setting of all of 0.26.0–1.9.2."""
    spg = "from trl import GRPOConfig\nargs = GRPOConfig(output_dir='x', beta=0.04, steps_per_generation=8)\n"
    old = diagnose(spg, release="0.17.0")
    assert old.release == "0.17.0" and old.codes[0] == "SETTING_REJECTED"
    assert "TRL 0.17.0 does not accept steps_per_generation" in old.warnings[0].message
    assert "SETTING_REJECTED" not in diagnose(spg, release="0.18.0").codes
    mpl = "from trl import GRPOConfig\nargs = GRPOConfig(output_dir='x', beta=0.04, max_prompt_length=512)\n"
    assert diagnose(mpl, release="1.5.0").codes[0] == "SETTING_REJECTED"
    assert "SETTING_REJECTED" not in diagnose(mpl, release="0.27.2").codes
    d = diagnose(mpl)
    assert d.release == "0.26.0–1.9.2" and "only TRL 0.26.0–0.27.2 have max_prompt_length" in str(d.release_why)
    grpo18 = eras_for_label("0.17.0–0.18.2")
    assert grpo18.releases == ("0.17.0", "0.18.0", "0.18.1", "0.18.2")
    assert grpo18.partial["steps_per_generation"] == ("0.18.0", "0.18.1", "0.18.2")
    assert grpo18.only_in(["steps_per_generation", "beta"]) == ("0.18.0", "0.18.1", "0.18.2")


def eras_for_label(label):
    return next(e for e in eras() if e.label == label)


@pytest.mark.parametrize(("library", "given"), [("verl", "0.1"), ("verl", "x.y"), ("verl", "1.0.0")])
def test_a_release_number_no_era_holds_is_refused_with_the_ranges(library, given):
    with pytest.raises(ValueError, match=r"or a release number in .*–"):
        infer(profile(library), [], given)


@pytest.mark.parametrize(("library", "given"), [("verl", "0.8.0"), ("verl", "0.9.0"), ("trl", "1.12.0"),
                                                ("trl", "1.14.0")])
def test_a_release_between_the_eras_and_today_is_said_to_have_no_reading(library, given):
    """An audit: --release 0.8.0 was refused as if no such release existed, though the card's 'What changed' names
    0.8.0's changes."""
    with pytest.raises(ValueError, match=r"lies between the releases the doctor reads .* and the current .*"
                                         r"use --release latest"):
        infer(profile(library), [], given)


def test_openrlhf_options_that_need_the_asynchronous_trainer_stop_the_run_without_it():
    """An audit: the fix `remove --train.async_enable` was offered where --train.partial_rollout_enable (or
    over-sampling) is set, which OpenRLHF 0.10.2–0.11.2 then refuse at start-up (0.11.2 cli/train_ppo_ray.py
    lines 717-718, 740-744)."""
    run = "python3 -m openrlhf.cli.train_ppo_ray --algo.kl.init_coef 0.01 "
    d = diagnose(run + "--train.partial_rollout_enable\n")
    assert d.codes[0] == "STARTUP_CHECK_FAILS" and "requires --train.async_enable" in d.warnings[0].message
    over = diagnose(run + "--rollout.batch_size 128 --rollout.vllm_generate_batch_size 256\n")
    assert over.codes[0] == "STARTUP_CHECK_FAILS"
    both = diagnose(run + "--train.async_enable --train.partial_rollout_enable\n")
    assert "STARTUP_CHECK_FAILS" not in both.codes
    off = both.warnings[both.codes.index("OFF_POLICY_UNCORRECTED")]
    assert off.fix is None and any("remove --train.async_enable" in t[0] for t in off.tried)
