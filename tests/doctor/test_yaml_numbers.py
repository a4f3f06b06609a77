"""A YAML config's numbers as the libraries read them (an audit found ``beta: 1e-3`` read as "?").

PyYAML follows YAML 1.1, where ``1e-3`` (no dot) is a string; verl reads its YAML with OmegaConf, whose loader
adds YAML 1.2's float forms (omegaconf/_utils.py ``get_yaml_loader``), and TRL hands a ``--config`` YAML's
values to each field's argparse ``type=float``.  Either way ``1e-3`` is 0.001, "inf" is inf, and "abc" stops
the run at startup.
"""

from __future__ import annotations

import math

import pytest

from kl_core.doctor.diagnosis import diagnose
from kl_core.doctor.parse import config_loader

VERL = "actor_rollout_ref:\n  actor:\n    use_kl_loss: true\n    kl_loss_coef: {v}\n"


@pytest.mark.parametrize(("text", "value"), [("1e-3", 0.001), ("1E-3", 0.001), ("+2e2", 200.0), ("1e400", math.inf),
                                             ("0.04", 0.04), (".inf", math.inf)])
def test_the_loader_reads_yaml_1_2_floats(text, value):
    import yaml

    assert yaml.load(f"x: {text}", Loader=config_loader())["x"] == value
    assert yaml.load("x: 1_000", Loader=config_loader())["x"] == 1000  # ints stay ints
    assert yaml.load("x: 1e-3", Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["x"] == "1e-3"  # PyYAML's


@pytest.mark.parametrize("library", ["trl", "verl"])
def test_an_exponent_coefficient_is_read_as_the_number(library):
    text = "beta: 1e-3\n" if library == "trl" else VERL.format(v="1e-3")
    d = diagnose(text, filename="c.yaml", library=library)
    (u,) = d.kl_uses
    assert u.coef == pytest.approx(0.001, rel=1e-12)


def test_text_a_float_accepts_is_that_float_and_other_text_stops_the_run():
    d = diagnose("beta: inf\n", filename="c.yaml", library="trl")
    assert "NONFINITE_COEF" in d.codes
    bad = diagnose("beta: abc\n", filename="c.yaml", library="trl")
    # the headline leads with the stop, as for any setting the release refuses
    assert bad.rejected == ("beta",) and bad.warnings[0].code == "SETTING_REJECTED"
    assert "does not accept beta: abc: the setting is a number" in str(bad.warnings[0].message)
    assert "beta: abc turns" not in " ".join(str(w.message) for w in bad.warnings)  # the default does, as said
    verl = diagnose(VERL.format(v="abc"), filename="c.yaml", library="verl")
    assert verl.rejected == ("actor_rollout_ref.actor.kl_loss_coef",)
    assert "kl_loss_coef: abc:" in str(verl.warnings[0].message)
    from kl_core.doctor.card import card_lines

    assert "The run stops before training: TRL 1.16.0 does not accept beta" in " ".join(card_lines(bad))
    quoted = diagnose("beta: '0.05'\n", filename="c.yaml", library="trl")
    assert quoted.kl_uses[0].coef == pytest.approx(0.05, rel=1e-12)
