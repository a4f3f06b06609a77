"""OpenRLHF 0.10.2–0.11.0: today's flag names, before --algo.kl.unbiased_gradient.

Sources read: OpenRLHF tags v0.10.2, v0.10.3, v0.10.4 and v0.11.0 (openrlhf/cli/train_ppo_ray.py: the same 164
flags at every tag, --algo.advantage.is_correction_enable/_type, no --algo.kl.unbiased_gradient or
--actor.loss_agg_mode; openrlhf/models/utils.py compute_approx_kl: k3 with no bound before the exponential, the
value clamped to [-10, 10]; openrlhf/trainer/ray/ppo_actor.py: kl_loss = masked_mean in v0.10.2, aggregate_loss from
v0.10.3, the optimizer step's token count from v0.10.4); the openrlhf 0.11.1 wheel (adds unbiased_gradient and
loss_agg_mode, still no k3 bound) and 0.11.2 wheel (k3_log_ratio = log_ratio.clamp(min=-10)).
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
ERA = "0.10.2–0.11.0"


def _card(d) -> str:
    return " ".join("\n".join(card_lines(d)).split())  # the card's lines unwrapped


def _era(era_id: str):
    return next(e for e in eras() if e.id == era_id)


def test_the_keys_file_is_the_four_tags_flags():
    doc = json.loads((KEYS_DIR / "eras" / "openrlhf-0.11.0.json").read_text(encoding="utf-8"))
    assert [s["tag"] for s in doc["sources"]] == ["v0.11.0", "v0.10.4", "v0.10.3", "v0.10.2"]
    keys = doc["trainers"]["train_ppo_ray"]["keys"]
    assert "--algo.advantage.is_correction_enable" in keys and "--algo.kl.use_loss" in keys
    assert "--algo.kl.unbiased_gradient" not in keys and "--actor.loss_agg_mode" not in keys
    assert keys["--algo.kl.estimator"]["choices"] == ["k1", "k2", "k3"]
    assert "--algo.kl.unbiased_gradient" in doc["next_release"]["keys"]


def test_a_flag_only_the_era_had_points_to_it():
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k2 --algo.advantage.is_correction_enable")
    assert d.release == ERA and d.rejected == ()
    assert "--algo.advantage.is_correction_enable" in d.release_why and ERA in d.release_why
    (other,) = d.also
    assert other.release == "OpenRLHF 0.11.2" and other.fails == ("--algo.advantage.is_correction_enable",)


def test_unbiased_gradient_points_to_today_past_both_eras():
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k3 --algo.kl.unbiased_gradient")
    assert d.release == "0.11.2" and d.also == ()
    assert d.release_why == ("it uses --algo.kl.unbiased_gradient, which OpenRLHF 0.5.9–0.6.0, 0.6.1–0.10.1, "
                             "0.10.2–0.11.0 did not have")


def test_todays_names_alone_leave_the_era_open_and_rule_out_the_flat_one():
    settings = [("--algo.kl.use_loss", True), ("--algo.kl.estimator", "k3")]
    inf = infer(profile("OpenRLHF"), settings)
    assert not inf.decided and [e.id for e in inf.candidates] == ["openrlhf-0.11.0"]
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k3")
    assert d.release == "0.11.2" and "nothing in the text" in d.release_why
    (other,) = d.also  # the same KL terms, but the fix --algo.kl.unbiased_gradient is not a flag of the era
    assert other.release == f"OpenRLHF {ERA}" and other.lacks == ("--algo.kl.unbiased_gradient",)
    assert [(u.where, u.estimator) for u in other.kl_uses] == [(u.where, u.estimator) for u in d.kl_uses]
    assert (f"OpenRLHF {ERA} does not have --algo.kl.unbiased_gradient, which this card's fixes write."
            in _card(d))
    reward = diagnose(ORL + "--algo.kl.estimator k1 --train.batch_size 1024 --rollout.batch_size 1024")
    assert reward.also == () and f"OpenRLHF {ERA} gives the same KL terms" in reward.release_why


def test_flat_flags_still_point_to_the_flat_era():
    d = diagnose(ORL + "--use_kl_loss --kl_estimator k3 --init_kl_coef 0.001")
    assert d.release == "0.6.1–0.10.1"


def test_k3_has_no_log_ratio_bound_and_no_unbiased_gradient_fix():
    d = diagnose((REAL / "v0.11.0_train_dapo_ray_hybrid_engine.sh").read_bytes())
    (u,) = d.kl_uses
    assert u.entry.logr_clamp is None and u.entry.value_clamp == (-10.0, 10.0)
    assert "k3_log_ratio" not in u.entry.library_formula and r"\min" not in u.entry.formula_latex
    assert "No release of the era bounds the log-ratio" in u.entry.caveat
    assert not any("unbiased_gradient" in (w.fix or "") for w in d.warnings)
    assert {a[0] for a in u.alternatives} <= {"k1", "k2", "k3"}  # no '+unbiased_gradient' options
    now = diagnose((REAL / "v0.11.0_train_dapo_ray_hybrid_engine.sh").read_bytes(), release="latest")
    assert now.kl_uses[0].entry.logr_clamp == (float("-inf"), 10.0)


def test_the_era_refuses_unbiased_gradient():
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k3 --algo.kl.unbiased_gradient",
                 release="openrlhf-0.11.0")
    assert d.rejected == ("--algo.kl.unbiased_gradient",) and d.codes[0] == "SETTING_REJECTED"
    assert d.kl_uses[0].estimator == "k3" and d.kl_uses[0].gradient_target == "forward_kl"


def test_the_kl_loss_aggregation_is_the_eras():
    d = diagnose(ORL + "--algo.kl.use_loss --algo.kl.estimator k2", release="openrlhf-0.11.0")
    text = _card(d)
    assert "token mean over the optimizer step (0.10.4 on)" in text
    assert "In 0.10.2, and in 0.10.3 without --train.dynamic_batch_enable" in text
    assert "whatever --actor.loss_agg_mode says" not in text


def test_why_today_names_each_eras_own_missing_settings_when_they_differ():
    flat, new = _era("openrlhf-0.10.1"), _era("openrlhf-0.11.0")
    prof = profile("OpenRLHF")
    both = _lacking(prof, [(flat, ["--a", "--b"]), (new, ["--b"])])
    assert both == "it uses --b, which OpenRLHF 0.6.1–0.10.1, 0.10.2–0.11.0 did not have"
    apart = _lacking(prof, [(flat, ["--a"]), (new, ["--b"])])
    assert apart == ("it uses --a, which OpenRLHF 0.6.1–0.10.1 did not have; "
                     "it uses --b, which OpenRLHF 0.10.2–0.11.0 did not have")
    assert apart.params["rest"].template == "it uses {keys}, which {lib} {label} did not have"
    assert dataclasses.is_dataclass(flat)
