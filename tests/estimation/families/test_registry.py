"""The family registry: every module declares a complete family, and no layer branches on a family's class."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from kl_core.estimation import families
from kl_core.estimation.distributions import parse
from kl_core.validation import InputError

ROOT = Path(__file__).resolve().parents[3]
CONTINUOUS = [f for f in families.FAMILIES.values() if not f.discrete]


def test_every_module_is_registered_once_with_unique_names():
    modules = {p.stem for p in (ROOT / "kl_core/estimation/families").glob("*.py") if not p.stem.startswith("_")}
    assert len(families.FAMILIES) == len(modules)
    names = [n for f in families.FAMILIES.values() for n in f.names]
    assert len(names) == len(set(names))
    for f in families.FAMILIES.values():
        assert f.syntax.startswith(f.key + "(") and f.syntax in families.syntax()
        assert families.by_name(f.key) is f


@pytest.mark.parametrize("family", list(families.FAMILIES.values()), ids=lambda f: f.key)
def test_a_family_reads_its_own_spec_and_sliders_write_back(family):
    d = parse("categorical(1,0,-1)") if family.discrete else family.default()
    assert families.family_of(d) is family
    assert parse(d.spec) == d
    for s in family.sliders(d):
        assert family.with_value(d, s.id, s.value) == d
    with pytest.raises(ValueError, match="not a parameter"):
        family.with_value(d, "nonsense", 1.0)


@pytest.mark.parametrize("family", [f for f in CONTINUOUS if f.params], ids=lambda f: f.key)
def test_a_parameter_wise_family_checks_its_arity_and_support(family):
    with pytest.raises(InputError, match=f"{family.key} takes"):
        parse(f"{family.key}({','.join(['1'] * (len(family.params) + 1))})")
    for i, p in enumerate(family.params):
        if p.support == "positive":
            args = ["1"] * len(family.params)
            args[i] = "-1"
            with pytest.raises(ValueError, match=p.name):
                parse(f"{family.key}({','.join(args)})")


@pytest.mark.parametrize("family", CONTINUOUS, ids=lambda f: f.key)
def test_the_quadratures_hooks_agree_with_logpdf(family):
    d = family.from_location_scale(0.7, 1.3)
    x = np.linspace(-6.0, 6.0, 25)
    assert family.location_scale(d) == pytest.approx((0.7, 1.3), rel=1e-2)
    assert d.centres()
    moved = d.shifted(0.4)
    np.testing.assert_allclose(moved.logpdf(x - 0.4), d.logpdf(x), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(d.log_density_delta(x), d.logpdf(x) - d.logpdf(np.zeros(1)), rtol=1e-12, atol=1e-12)
    for side in (1, -1):
        t = d.tail(side)
        far = side * 1e3
        # the tail form and the log-density agree far out (to the family's o(1))
        form = float(t.quadratic) * far**2 + float(t.linear) * abs(far) + float(t.log) * np.log(abs(far)) + t.const
        assert float(d.logpdf([far])[0]) == pytest.approx(form, rel=1e-3, abs=1e-2)


LAYERS = [
    "kl_core/estimation/distributions.py",
    "kl_core/estimation/exact.py",
    "kl_core/estimation/_expectation.py",
    "kl_core/estimation/tails.py",
    "kl_core/cli/main.py",
    "lab/spec_params.py",
    "lab/picker.py",
]


@pytest.mark.parametrize("path", LAYERS)
def test_no_layer_branches_on_a_familys_class(path):
    classes = "|".join(f.cls.__name__ for f in families.FAMILIES.values())
    text = (ROOT / path).read_text(encoding="utf-8")
    assert not re.findall(rf"isinstance\([^)]*\b({classes})\b", text)
