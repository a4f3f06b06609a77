"""The doctor's tables in crosswalk.toml and the release key lists they name."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kl_core.doctor.parse import scalar
from kl_core.doctor.profiles import KEYS_DIR, evaluate_expression, holds, profile, profiles
from kl_core.libraries.crosswalk import CROSSWALK, CROSSWALK_FILE, releases

PROFILES = profiles()


def test_one_profile_per_current_trainer():
    assert [p.label for p in PROFILES] == [
        "verl 0.9.1 (main_ppo)", "OpenRLHF 0.11.2 (train_ppo_ray)", "TRL 1.16.0 (grpo)", "TRL 1.16.0 (rloo)",
        "TRL 1.12.0 (ppo)", "TRL 0.11.4 (ppo_step)"]
    assert [bool(p.legacy) for p in PROFILES] == [False] * 4 + [True] * 2
    assert profile("trl", "rloo").prefix == "RLOOConfig." and profile("VERL").syntax == "hydra"
    with pytest.raises(ValueError, match="library must be one of"):
        profile("cleanrl")


def test_every_current_reward_or_loss_entry_is_placed_once():
    placed = [e for p in PROFILES for pl in p.placements for e in pl.entries]
    assert len(placed) == len(set(map(id, placed)))
    current = {(r.library, r.version) for r in releases() if r.current}
    want = [e for e in CROSSWALK if (e.library, e.release) in current and not e.legacy and e.acts_on != "metric"]
    missing = sorted(e.option for e in want if all(e is not x for x in placed))
    # verl's distillation losses are selected by distillation.* settings the doctor does not read yet.
    assert missing == ["distillation/k1", "distillation/k2", "distillation/k3", "distillation/k3"]
    assert profile("verl").uncovered[0][0] == (("distillation.enabled", "True"),)
    legacy = [e for e in CROSSWALK if e.library == "TRL" and e.legacy and e.acts_on == "reward"]
    assert sorted(e.option for e in legacy if any(e is x for x in placed)) == ["abs", "full", "k1", "k3", "kl", "mse"]


def test_each_option_value_selects_exactly_one_entry():
    """Every name of every entry, written in the placement's option setting, selects that entry and no other."""
    from kl_core.doctor.diagnosis import _entry_for

    for p in PROFILES:
        base = {k: s.default for k, s in p.keys.items()}
        for pl in p.placements:
            for e in pl.entries:
                values = dict(base)
                for key, cond in e.config:
                    k = key.removeprefix(p.prefix)
                    if k == pl.coef:
                        continue
                    values[k] = {"set": True, "not set": False, "True": True, "False": False}.get(cond, cond)
                named = pl.option and any(k.removeprefix(p.prefix) == pl.option and c == e.option for k, c in e.config)
                for name in (e.names if named else (None,)):
                    if name is not None:
                        values[pl.option] = name
                    hits = [x for x in pl.entries if _entry_for(p, replace(pl, entries=(x,)), values) is x]
                    assert hits == [e], (p.label, pl.acts_on, name)


def test_release_defaults_in_the_crosswalk_agree_with_the_key_lists():
    skipped = []
    for r in (r for r in releases() if any(p.release == r.version and p.library == r.library for p in PROFILES)):
        for d in r.defaults:
            found = [p for p in PROFILES if p.library == r.library and p.release == r.version
                     and d.key.removeprefix(p.prefix) in p.keys and (not p.prefix or d.key.startswith(p.prefix))]
            if not found:
                skipped.append(d.key)
                continue
            want = scalar(d.value.split(" (")[0])
            got = found[0].keys[d.key.removeprefix(found[0].prefix)].default
            assert str(got).lower() == str(want).lower() or got == want, (r.library, d.key, got, want)
    assert skipped == ["KL_IS_WEIGHT_CLIP"]  # a constant in openrlhf/models/utils.py, not a flag


def test_key_lists_come_from_the_releases_the_crosswalk_read():
    read = {(r.library, r.version): r for r in releases()}
    for path in sorted(KEYS_DIR.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["generated_by"] == "scripts/make_doctor_keys.py"
        r = read[(doc["library"], doc["release"])]
        assert path.name == f"{doc['library'].lower()}-{doc['release']}.json"
        if r.sha256:  # TRL 0.11.4 was read at its tag; its wheel is the same release
            assert doc["wheels"][0]["sha256"] == r.sha256, path.name


def test_known_settings_and_their_defaults():
    verl, orl = profile("verl"), profile("openrlhf")
    grpo, rloo = profile("trl", "grpo"), profile("trl", "rloo")
    assert verl.default("actor_rollout_ref.actor.kl_loss_type") == "low_var_kl"
    assert verl.default("algorithm.kl_ctrl.horizon") == 10000 and verl.default("data.train_batch_size") == 1024
    assert orl.keys["--algo.kl.use_loss"].action == "store_true" and orl.default("--algo.kl.horizon") == 10000
    assert orl.keys["--actor.adam.lr"].default == 1e-6 and orl.keys["--critic.adam.lr"].default == 9e-6  # per-prefix loop
    assert orl.keys["--actor.muon.no_nesterov"].action == "store_false"
    assert orl.keys["--data.max_samples"].default_text == "int(1e8)"
    assert grpo.default("beta") == 0.0 and grpo.default("loss_type") == "dapo"
    assert grpo.default("learning_rate") == 1e-6 and "per_device_train_batch_size" in grpo.keys  # TrainingArguments
    assert rloo.default("beta") == 0.05 and "use_bias_correction_kl" not in rloo.keys
    with pytest.raises(ValueError, match="key 'nope' is not a setting of verl"):
        verl.default("nope")


def test_every_aggregation_covers_its_default_and_every_relevant_setting_exists():
    for p in PROFILES:
        for pl in p.placements:
            agg = pl.aggregation
            default = p.default(agg.setting) if agg.setting else None
            assert agg.mode(default) is not None, (p.label, agg.id)
            assert agg.mode("no-such-mode") is None or not agg.setting
        assert set(p.relevant) <= set(p.keys)


def test_verl_aggregation_modes_are_the_release_agg_loss_modes():
    modes = {m.value for m in profile("verl").placements[1].aggregation.modes}
    assert modes == {"token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-sum-norm", "seq-mean-token-mean"}
    trl = {m.value for m in profile("trl", "grpo").placements[0].aggregation.modes}
    assert trl == {"grpo", "sapo", "bnpo", "dr_grpo", "dapo", "cispo", "vespo", "luspo"}


def test_off_policy_fixes_undo_their_conditions():
    from kl_core.doctor.diagnosis import _value_of

    for p in PROFILES:
        for rule in p.off_policy:
            values = {k: s.default for k, s in p.keys.items()}
            values[rule.fix[0]] = _value_of(p, rule.fix[0], rule.fix[1], values)
            assert not holds(rule.when[1], values[rule.when[0]], values), (p.label, rule.when)


@pytest.mark.parametrize(
    ("cond", "value", "expected"),
    [("True", True, True), ("True", "true", True), ("True", False, False), ("False", "False", True),
     ("set", True, True), ("set", None, False), ("set", 0.0, False), ("set", "0", False), ("set", 0.1, True),
     ("not set", False, True), ("not set", 1, False), ("> 0", 0.01, True), ("> 0", 0, False), ("> 0", None, False),
     ("> 0", "abc", False), ("!= 0", -1, True), ("!= 0", 0.0, False), ("a number", "3", True), ("a number", "x", False),
     ("kl", "kl", True), ("kl", "k1", False), ("< 1.5", 1, True), ("< 1.5", float("nan"), False)],
)
def test_holds(cond, value, expected):
    assert holds(cond, value) is expected


def test_holds_with_names_and_settings():
    assert holds("low_var_kl", "k3", names=("low_var_kl", "k3")) is True
    assert holds("low_var_kl", "k2", names=("low_var_kl", "k3")) is False
    s = {"--rollout.batch_size": 128, "--rollout.n_samples_per_prompt": 8, "data.train_batch_size": 1024}
    assert holds("< --rollout.batch_size * --rollout.n_samples_per_prompt", 128, s) is True
    assert holds("< --rollout.batch_size * --rollout.n_samples_per_prompt", 1024, s) is False
    assert holds("< data.train_batch_size", 256, s) is True
    assert holds("< missing.key", 1, s) is False
    assert evaluate_expression("--rollout.batch_size * 2", s) == 256.0
    assert evaluate_expression("nope * 2", s) is None


def _broken(tmp_path: Path, old: str, new: str) -> str:
    text = CROSSWALK_FILE.read_text(encoding="utf-8")
    assert old in text
    p = tmp_path / "cw.toml"
    p.write_text(text.replace(old, new, 1), encoding="utf-8")
    return str(p)


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [('entries = ["kl", "abs", "mse", "low_var_kl"]', 'entries = ["kl", "nope"]', "entries names 'nope'"),
     ('coef = "actor_rollout_ref.actor.kl_loss_coef"', 'coef = "actor_rollout_ref.actor.kl_los_coef"',
      r"settings \['actor_rollout_ref.actor.kl_los_coef'\] are not keys"),
     ('aggregation = "verl_reward"', 'aggregation = "nope"', "aggregation 'nope' is not an id"),
     ('syntax = "hydra"', 'syntax = "toml"', "syntax must be one of"),
     ('keys_file = "verl-0.9.1.json"', 'keys_file = "nope.json"', "keys_file 'nope.json'"),
     ('option = "use_bias_correction_kl"\nlibrary_formula', 'option = "nope"\nlibrary_formula',
      r"cautions.computes.option 'nope' is no crosswalk option"),
     ('option = "use_bias_correction_kl"\nlibrary_formula', 'optoin = "use_bias_correction_kl"\nlibrary_formula',
      r"cautions.computes must have exactly the fields")],
)
def test_malformed_tables_name_the_problem(tmp_path, old, new, match):
    with pytest.raises(ValueError, match=match):
        profiles(_broken(tmp_path, old, new))


def test_a_cautions_era_labels_are_eras_of_its_own_trainer():
    from kl_core.doctor.releases import eras

    said = [(p, c) for p in PROFILES for c in p.cautions if c.note_in or c.absent_in]
    assert said  # verl's train-batch check
    for p, c in said:
        labels = {e.label for e in eras() if e.library == p.library and e.trainer == p.trainer}
        assert set(c.note_in) | set(c.absent_in) <= labels | {p.release}, (p.label, c.code)
        assert p.release not in c.note_in  # the profile is one release: it has the trap or not
        assert not set(c.note_in) & set(c.absent_in)
        assert any(c.said_in(label) for label in labels | {p.release}), (p.label, c.code)  # said somewhere


def test_one_of_matches_any_value_listed():
    assert holds("one of rloo, group_norm", "group_norm") and holds("one of rloo, group_norm", " rloo ")
    assert not holds("one of rloo, group_norm", "gae") and not holds("one of rloo, group_norm", None)
