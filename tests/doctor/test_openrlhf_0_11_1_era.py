"""OpenRLHF 0.10.2–0.11.1: today's flag names, before --actor.loss_agg_mode and the bound on k3's log-ratio.

Sources read: OpenRLHF tags v0.10.2, v0.10.3, v0.10.4 and v0.11.0 (openrlhf/cli/train_ppo_ray.py: the same 164
flags at every tag, --algo.advantage.is_correction_enable/_type, no --algo.kl.unbiased_gradient or
--actor.loss_agg_mode; openrlhf/models/utils.py compute_approx_kl: k3 with no bound before the exponential, the
value clamped to [-10, 10]; openrlhf/trainer/ray/ppo_actor.py: kl_loss = masked_mean in v0.10.2, aggregate_loss from
v0.10.3, the optimizer step's token count from v0.10.4); the openrlhf 0.11.1 wheel (adds --algo.kl.unbiased_gradient,
keeps is_correction_enable/_type, no loss_agg_mode, still no k3 bound) and 0.11.2 wheel (--actor.loss_agg_mode at
cli/train_ppo_ray.py line 441, is_correction_mode/level/gating, k3_log_ratio = log_ratio.clamp(min=-10)).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kl_core.doctor.card import card_lines
from kl_core.doctor.diagnosis import diagnose
from kl_core.doctor.profiles import KEYS_DIR, profile
from kl_core.doctor.releases import _lacking, eras, infer

ORL = "python3 -m openrlhf.cli.train_ppo_ray "
REAL = Path(__file__).resolve().parent / "real_scripts" / "openrlhf"
ERA = "0.10.2–0.11.1"


def _card(d) -> str:
    return " ".join("\n".join(card_lines(d)).split())  # the card's lines unwrapped


def _era(era_id: str):
    return next(e for e in eras() if e.id == era_id)


def test_the_keys_file_is_the_four_tags_and_the_0_11_1_wheels_flags():
    doc = json.loads((KEYS_DIR / "eras" / "openrlhf-0.11.1.json").read_text(encoding="utf-8"))
    assert [s.get("tag", s.get("release")) for s in doc["sources"]] == ["0.11.1", "v0.11.0", "v0.10.4", "v0.10.3",
                                                                       "v0.10.2"]
    keys = doc["trainers"]["train_ppo_ray"]["keys"]
    assert "--algo.advantage.is_correction_enable" in keys and "--algo.kl.unbiased_gradient" in keys
    assert "--actor.loss_agg_mode" not in keys and keys["--algo.kl.estimator"]["choices"] == ["k1", "k2", "k3"]
    assert doc["next_release"]["release"] == "0.11.2" and "--actor.loss_agg_mode" in doc["next_release"]["keys"]


def test_a_flag_only_the_era_had_points_to_it():
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k2 --algo.advantage.is_correction_enable")
    assert d.release == ERA and d.rejected == ()
    assert "--algo.advantage.is_correction_enable" in d.release_why and ERA in d.release_why
    (other,) = d.also
    assert other.release == "OpenRLHF 0.11.2" and other.fails == ("--algo.advantage.is_correction_enable",)


def test_loss_agg_mode_points_to_today_past_every_era():
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k3 --actor.loss_agg_mode seq-mean-token-mean")
    assert d.release == "0.11.2" and d.also == ()
    assert d.release_why == ("it uses --actor.loss_agg_mode, which OpenRLHF 0.5.9–0.6.0, 0.6.0.post1–0.10.1, "
                             "0.10.2–0.11.1 did not have")


def test_todays_names_alone_leave_the_era_open_and_rule_out_the_flat_one():
    settings = [("--algo.kl.use_loss", True), ("--algo.kl.estimator", "k3")]
    inf = infer(profile("OpenRLHF"), settings)
    assert not inf.decided and [e.id for e in inf.candidates] == ["openrlhf-0.11.1"]
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k3")
    assert d.release == "0.11.2" and "nothing in the text" in d.release_why


def test_flat_flags_still_point_to_the_flat_era():
    d = diagnose(ORL + "--use_kl_loss --kl_estimator k3 --init_kl_coef 0.001")
    assert d.release == "0.6.0.post1–0.10.1"


def test_k3_has_no_log_ratio_bound_and_its_fix_says_it_needs_0_11_1():
    d = diagnose((REAL / "v0.11.0_train_dapo_ray_hybrid_engine.sh").read_bytes())
    (u,) = d.kl_uses
    assert d.release == ERA and u.entry.logr_clamp is None and u.entry.value_clamp == (-10.0, 10.0)
    assert "k3_log_ratio" not in u.entry.library_formula and r"\min" not in u.entry.formula_latex
    assert "No release of the era bounds the log-ratio" in u.entry.caveat
    fixes = [w for w in d.warnings if w.fix == "--algo.kl.unbiased_gradient"]
    assert fixes and all(w.requires.startswith("--algo.kl.unbiased_gradient runs from OpenRLHF 0.11.1 on: "
                                               "0.10.2–0.11.0 do not have") for w in fixes)
    now = diagnose((REAL / "v0.11.0_train_dapo_ray_hybrid_engine.sh").read_bytes(), release="latest")
    assert now.kl_uses[0].entry.logr_clamp == (float("-inf"), 10.0)


def test_the_unbiased_rows_show_0_11_1s_code():
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k3 --algo.kl.unbiased_gradient",
                 release="openrlhf-0.11.1")
    (u,) = d.kl_uses
    assert u.option == "k3+unbiased_gradient" and u.gradient_target == "reverse_kl"
    assert "k3_log_ratio" not in u.entry.library_formula and "grad_surrogate" in u.entry.library_formula
    assert u.entry.logr_clamp is None


def test_the_kl_loss_aggregation_is_the_eras():
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k2", release="openrlhf-0.11.1")
    text = _card(d)
    assert "token mean over the optimizer step (0.10.4 on)" in text
    assert "In 0.10.2, and in 0.10.3 without --train.dynamic_batch_enable" in text
    assert "whatever --actor.loss_agg_mode says" not in text
    assert "OpenRLHF 0.11.2 added --actor.loss_agg_mode" in text


def test_why_today_names_each_eras_own_missing_settings_when_they_differ():
    flat, new = _era("openrlhf-0.10.1"), _era("openrlhf-0.11.1")
    prof = profile("OpenRLHF")
    both = _lacking(prof, [(flat, ["--a", "--b"]), (new, ["--b"])])
    assert both == "it uses --b, which OpenRLHF 0.6.0.post1–0.10.1, 0.10.2–0.11.1 did not have"
    apart = _lacking(prof, [(flat, ["--a"]), (new, ["--b"])])
    assert apart == ("it uses --a, which OpenRLHF 0.6.0.post1–0.10.1 did not have; "
                     "it uses --b, which OpenRLHF 0.10.2–0.11.1 did not have")
    assert apart.params["rest"].template == "it uses {keys}, which {lib} {label} did not have"
    assert dataclasses.is_dataclass(flat)


def test_a_decided_era_keeps_the_other_eras_the_settings_allow():
    """Flat flags common to 0.5.9–0.6.0 and 0.6.0.post1–0.10.1 point to the newer era, and the older one stays a
    candidate (the card shows it where its KL differs or it lacks what a fix writes); --kl_estimator rules it out."""
    prof = profile("OpenRLHF")
    inf = infer(prof, [("--init_kl_coef", "0.01"), ("--use_kl_loss", True)])
    assert inf.era.id == "openrlhf-0.10.1" and [e.id for e in inf.candidates] == ["openrlhf-0.6.0"]
    inf = infer(prof, [("--init_kl_coef", "0.01"), ("--kl_estimator", "k2")])
    assert inf.era.id == "openrlhf-0.10.1" and inf.candidates == ()
    d = diagnose(ORL + "--use_kl_loss --init_kl_coef 0.01 --kl_estimator k3")
    assert "OpenRLHF 0.5.9–0.6.0" not in [o.release for o in d.also]
