"""A KL coefficient that is not a finite number (nan, inf, -inf) makes the loss or the rewards NaN: not KL_OFF.

TRL computes its KL when ``self.beta != 0.0`` (true for NaN) and verl adds ``kl_loss * kl_loss_coef``, so a NaN
coefficient does not turn the KL off: it makes the loss NaN.  OpenRLHF tests ``init_coef > 0`` (false for NaN
and -inf) and then computes no KL, but still multiplies a zero by the coefficient: 0 × NaN and 0 × −inf are
NaN, except in compute_reward, which counts a coefficient ≤ 0 (−inf, not NaN) as 0.
"""

from __future__ import annotations

import math
import re

import pytest

from kl_core.doctor.card import card_lines, card_markdown
from kl_core.doctor.diagnosis import WARNING_CODES, diagnose, render_changes

VERL = "python3 -m verl.trainer.main_ppo "
VERL_LOSS = VERL + "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef="
ORL = "python3 -m openrlhf.cli.train_ppo_ray "

#: (file name, text, coefficient the library gets, where the term acts, the fix)
COMPUTED = [
    ("vnan.sh", VERL_LOSS + "nan", math.nan, "loss", "actor_rollout_ref.actor.kl_loss_coef=0.001"),
    ("vinf.sh", VERL_LOSS + "inf", math.inf, "loss", "actor_rollout_ref.actor.kl_loss_coef=0.001"),
    ("vninf.sh", VERL_LOSS + "-inf", -math.inf, "loss", "actor_rollout_ref.actor.kl_loss_coef=0.001"),
    ("vbig.sh", VERL_LOSS + "1e400", math.inf, "loss", "actor_rollout_ref.actor.kl_loss_coef=0.001"),
    ("vbigint.sh", VERL_LOSS + "1" + "0" * 400, math.inf, "loss", "actor_rollout_ref.actor.kl_loss_coef=0.001"),
    ("orl_bigint.sh", ORL + "--algo.kl.init_coef " + "9" * 400, math.inf, "reward", "--algo.kl.init_coef 0.01"),
    ("vreward.sh", VERL + "algorithm.use_kl_in_reward=True algorithm.kl_ctrl.kl_coef=nan", math.nan, "reward",
     "algorithm.kl_ctrl.kl_coef=0.001"),
    ("tnan.json", '{"beta": NaN}', math.nan, "loss", '"beta": 0.001'),
    ("tinf.json", '{"beta": Infinity}', math.inf, "loss", '"beta": 0.001'),
    ("tinf.yaml", "beta: .inf\n", math.inf, "loss", "beta: 0.001"),
    ("tninf.yaml", "beta: -.inf\n", -math.inf, "loss", "beta: 0.001"),
    ("rloo_nan.yaml", "beta: .nan\nnum_generations: 4\n", math.nan, "reward", "beta: 0.05"),
    ("orl_inf.sh", ORL + "--algo.kl.init_coef inf", math.inf, "reward", "--algo.kl.init_coef 0.01"),
]


def _same_number(a: float | None, b: float) -> bool:
    return a is not None and (a == b or (math.isnan(a) and math.isnan(b)))


def test_the_code_is_declared():
    assert "NONFINITE_COEF" in WARNING_CODES


@pytest.mark.parametrize(("name", "text", "coef", "where", "fix"), COMPUTED, ids=[c[0] for c in COMPUTED])
def test_a_computed_term_with_a_coefficient_that_is_not_finite(tmp_path, name, text, coef, where, fix):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    d = diagnose(path.read_bytes(), filename=name)
    assert "KL_OFF" not in d.codes and "NEGATIVE_COEF" not in d.codes, d.codes
    assert not any("turns" in w.message and "off" in w.message for w in d.warnings)
    (u,) = d.kl_uses  # the library computes the term: it is on the card, with its coefficient
    assert u.where == where and _same_number(u.coef, coef)
    w = d.warnings[0]
    assert w.code == "NONFINITE_COEF" and w.kl_use == 0 and w.fix == fix
    assert "is not a finite number" in w.message and w.message.endswith(".")
    # an integer past the largest double (it crashed the doctor: int too large to convert to float)
    assert ("as written, past the largest double" in w.message) == ("bigint" in name)
    if "bigint" in name:
        assert re.search(r"\(an integer of 40[01] digits as written", w.message)
    assert ("the loss becomes NaN or infinite" if where == "loss" else "the rewards become NaN or infinite") in w.message
    assert w.message.template.startswith("{said} is not a finite number")  # a Message: translated elsewhere
    assert all(isinstance(v, str) for v in w.message.params.values())
    said = render_changes(d.profile, d.kind, ((u.coef_setting, u.coef),))
    assert w.message.params["said"] == said or w.message.params["said"].startswith(said + " (an integer of")
    # the fix applied: the finding is gone and nothing new appears
    changed = diagnose(_with(text, d, w.changes), filename=name)
    assert "NONFINITE_COEF" not in changed.codes and set(changed.codes) <= set(d.codes)
    assert changed.kl_uses and math.isfinite(changed.kl_uses[0].coef)


def _with(text: str, d, changes) -> str:
    """The input with the changed settings written in place of the old ones."""
    for key, value in changes:
        one = render_changes(d.profile, d.kind, ((key, value),))
        if d.kind == "json":
            text = re.sub(rf'"{re.escape(key)}"\s*:\s*[^,}}]+', one, text)
        elif d.kind == "yaml":
            text = re.sub(rf"(?m)^{re.escape(key)}:.*$", one, text)
        elif d.profile.syntax == "hydra":
            text = re.sub(rf"{re.escape(key)}=\S+", one, text)
        else:
            text = re.sub(rf"{re.escape(key)}[ =]\S+", one, text)
    return text


def test_nan_in_the_verl_script_of_the_report_says_what_happens():
    d = diagnose(VERL_LOSS + "nan")
    w = d.warnings[0]
    assert w.message == (
        "actor_rollout_ref.actor.kl_loss_coef=nan is not a finite number, and verl multiplies the KL term in the "
        "loss by it: the loss becomes NaN or infinite, and so do its gradients, so the run cannot train. Set the "
        "coefficient to a finite number.")
    lines = card_lines(d)
    assert "  coefficient  actor_rollout_ref.actor.kl_loss_coef = nan (fixed)" in lines
    assert not any("No KL term" in ln for ln in lines)
    assert any(ln.startswith("- `NONFINITE_COEF`: actor_rollout_ref.actor.kl_loss_coef=nan is not a finite number")
               for ln in card_markdown(d))


def test_trl_json_nan_is_quoted_as_written():
    d = diagnose('{"beta": NaN}', filename="tnan.json")
    assert d.warnings[0].message.startswith('"beta": NaN is not a finite number, and TRL multiplies the KL term '
                                            "in the loss by it")


@pytest.mark.parametrize(("text", "where", "value"), [
    (ORL + "--algo.kl.init_coef nan", "reward", "NaN"),
    (ORL + "--algo.kl.init_coef nan --algo.kl.use_loss", "loss", "nan"),
    (ORL + "--algo.kl.init_coef=-inf --algo.kl.use_loss", "loss", "-inf"),
])
def test_openrlhf_computes_no_kl_but_still_multiplies_by_the_coefficient(text, where, value):
    d = diagnose(text)
    assert d.kl_uses == () and d.codes == ["NONFINITE_COEF"]
    w = d.warnings[0]
    assert w.kl_use is None and "even where it skips computing the KL for it" in w.message
    assert f"zero times {value} is NaN" in w.message
    assert ("the loss becomes NaN" if where == "loss" else "the rewards become NaN") in w.message
    assert w.fix is not None and w.fix.startswith("--algo.kl.init_coef 0.01")
    fixed = diagnose(_with(text, d, w.changes).replace("--algo.kl.init_coef=", "--algo.kl.init_coef "))
    assert "NONFINITE_COEF" not in fixed.codes and fixed.kl_uses
    head = next(ln for ln in card_lines(d) if ln.startswith("No KL term"))
    assert "not a finite number" in head
    assert any(ln.startswith("**No KL term:**") and "(NONFINITE_COEF)" in ln for ln in card_markdown(d))


def test_openrlhf_reward_counts_minus_inf_as_zero():
    # openrlhf/models/utils.py compute_reward: `if kl_coef <= 0.0: kl_coef = 0.0`, and no reference model: truly off
    d = diagnose(ORL + "--algo.kl.init_coef=-inf")
    assert d.codes == ["KL_OFF"] and "--algo.kl.init_coef -inf turns it off" in d.warnings[0].message


@pytest.mark.parametrize(("text", "said"), [
    (VERL_LOSS + "0", "actor_rollout_ref.actor.kl_loss_coef=0 turns it off"),
    ('{"beta": 0.0}', '"beta": 0.0 turns the KL in the loss off'),
    ("beta: 0\n", "beta: 0 turns the KL in the loss off"),
])
def test_a_zero_coefficient_is_still_kl_off(text, said):
    d = diagnose(text)
    assert d.kl_uses == () and d.codes == ["KL_OFF"] and said in d.warnings[0].message


def test_a_finite_negative_coefficient_is_still_negative_coef():
    d = diagnose(VERL_LOSS + "-0.01")
    assert "NEGATIVE_COEF" in d.codes and "NONFINITE_COEF" not in d.codes


def test_non_finite_values_are_written_as_each_syntax_writes_them():
    d = diagnose("beta: .inf\n")
    assert render_changes(d.profile, "yaml", (("beta", math.inf), ("beta", -math.inf), ("beta", math.nan))) == \
        "beta: .inf\nbeta: -.inf\nbeta: .nan"
    assert render_changes(d.profile, "python", (("beta", math.nan),)) == "beta=float('nan')"
    assert render_changes(d.profile, "json", (("beta", math.inf),)) == '"beta": Infinity'
    assert render_changes(d.profile, "command", (("beta", -math.inf),)) == "--beta -inf"


def test_to_json_writes_non_finite_numbers_as_text():
    for text, want in ((VERL_LOSS + "inf", "inf"), (VERL_LOSS + "nan", "nan"), ("beta: -.inf\n", "-inf")):
        data = diagnose(text).to_json()
        assert data["kl_uses"][0]["coef"] == want
        assert all(u["coef"] == want for o in data["also"] for u in o["kl_uses"])
