"""An option that runs only from some release on: verl's '+' spellings (from 0.8.0).

Source read: verl v0.6.0 and v0.7.0 tags and the 0.7.1 wheel, verl/trainer/ppo/core_algos.py kl_penalty: it calls
kl_penalty_forward with the '+' still on, whose branches end in `raise NotImplementedError`; the 0.8.0 wheel strips
it (`base_kl_penalty = kl_penalty[:-1] if kl_penalty.endswith("+") else kl_penalty`); v0.5.0 has no '+' branch.
"""

from __future__ import annotations

from pathlib import Path

from kl_core.doctor.card import card_lines, card_markdown
from kl_core.doctor.diagnosis import diagnose
from kl_core.libraries.registry import CROSSWALK
from lab.notes import config_doctor as notes

DATA = Path(__file__).resolve().parents[2] / "data" / "doctor_examples"
VERL = "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "


def test_the_plus_options_say_their_first_release():
    verl = {e.option: e for e in CROSSWALK if e.library == "verl" and e.acts_on == "loss"}
    assert {o for o, e in verl.items() if e.since} == {"k1+", "abs+", "k2+", "k3+"}
    assert all(e.since == "0.8.0" and "NotImplementedError" in e.since_why for o, e in verl.items() if e.since)
    assert verl["kl"].since is None and verl["low_var_kl"].since is None


def test_a_fix_that_writes_a_plus_option_says_what_it_needs():
    d = diagnose((DATA / "verl_grpo_qwen3_8b.sh").read_bytes())
    forward = d.warnings[d.codes.index("FORWARD_KL_GRAD")]
    assert forward.fix.endswith("kl_loss_type=low_var_kl+")
    assert forward.requires.startswith("low_var_kl+ runs from verl 0.8.0 on: in 0.6.0–0.7.1 kl_penalty raises")
    batch = d.warnings[d.codes.index("OFF_POLICY_UNCORRECTED")]
    assert batch.fix and batch.requires == ""
    card = " ".join("\n".join(card_lines(d)).split())
    assert "needs: low_var_kl+ runs from verl 0.8.0 on" in card
    assert "Needs: low_var_kl+ runs from verl 0.8.0 on" in "\n".join(card_markdown(d))
    assert "**Needs:** `low_var_kl+` runs from verl 0.8.0 on" in notes.fix_cost(d, forward)
    assert "**Needs:**" not in notes.fix_cost(d, batch)
    assert notes.fix_group_cost(d, forward.fix).count("**Needs:**") == 1
    (as_json,) = [w for w in d.to_json()["warnings"] if w["code"] == "FORWARD_KL_GRAD"]
    assert as_json["requires"] == forward.requires


def test_a_script_that_uses_a_plus_option_is_told_where_it_runs():
    d = diagnose(VERL + "actor_rollout_ref.actor.kl_loss_type=k3+")
    (u,) = d.kl_uses
    assert "The '+' options run from verl 0.8.0 on" in u.entry.caveat and u.gradient_target == "reverse_kl"
