"""lab.spec_params: every spec reads into sliders and back, and slider moves give the right spec."""

from __future__ import annotations

import math

import pytest

from kl_core.estimation.distributions import Categorical, Gaussian, GaussianMixture, parse
from kl_core.libraries.clamps import CLAMP_PATHS
from lab import spec_params as sp

SPECS = [
    "normal(0,1)",
    "normal(-0.3,2.5)",
    "laplace(0.5,0.8)",
    "t(3,0,1)",
    "t(0.7,-1,4)",
    "mixture(0.5:-1:1,0.5:1:1)",
    "mixture(0.2:0:1,0.3:1:0.5,0.5:2:2)",
    "categorical(2,1,0.5,0,-1)",
]


@pytest.mark.parametrize("spec", SPECS)
def test_each_knob_holds_the_distributions_value_and_writes_it_back(spec):
    d = parse(spec)
    assert sp.family_of(d) in sp.FAMILIES
    for knob in sp.knobs(d):
        if knob.log:
            assert knob.value in knob.steps and list(knob.steps) == sorted(knob.steps)
        else:
            assert knob.lo <= knob.value <= knob.hi and knob.step > 0
        assert sp.with_knob(d, knob.id, knob.value) == d  # setting a knob to itself changes nothing


@pytest.mark.parametrize(
    ("spec", "knob", "value", "expect"),
    [
        ("normal(0,1)", "mu", 0.30000000000000004, "normal(0.3,1)"),  # binary noise cleaned
        ("normal(0,1)", "sigma", 1.5, "normal(0,1.5)"),
        ("laplace(0,1)", "loc", -2.0, "laplace(-2,1)"),
        ("t(3,0,1)", "df", 0.5, "t(0.5,0,1)"),
        ("t(3,0,1)", "scale", 2.0, "t(3,0,2)"),
        ("mixture(0.5:-1:1,0.5:1:1)", "w1", 0.35000000000000003, "mixture(0.35:-1:1,0.65:1:1)"),
        ("mixture(0.5:-1:1,0.5:1:1)", "mu2", 3.0, "mixture(0.5:-1:1,0.5:3:1)"),
        ("mixture(0.5:-1:1,0.5:1:1)", "sigma1", 0.5, "mixture(0.5:-1:0.5,0.5:1:1)"),
        ("categorical(2,1,0.5,0,-1)", "logit4", 2.0, "categorical(2,1,0.5,0,2)"),
    ],
)
def test_a_slider_move_gives_the_spec(spec, knob, value, expect):
    assert sp.with_knob(parse(spec), knob, value).spec == expect


def test_a_weight_of_three_components_rescales_the_others_and_sums_to_one():
    d = parse("mixture(0.2:0:1,0.3:1:1,0.5:2:1)")
    new = sp.with_knob(d, "w2", 0.6)
    assert new.weights[1] == 0.6
    assert sum(new.weights) == pytest.approx(1.0, abs=1e-12)
    # the others keep their proportions 0.2 : 0.5
    assert new.weights[0] / new.weights[2] == pytest.approx(0.2 / 0.5, rel=1e-3)
    assert parse(new.spec) == new  # the spec reads back (weights sum to 1 within 1e-9)


@pytest.mark.parametrize(("spec", "knob"), [("normal(0,1)", "df"), ("mixture(0.5:0:1,0.5:1:1)", "w3"),
                                            ("categorical(0,1)", "logit2"), ("laplace(0,1)", "mu")])
def test_a_knob_the_family_does_not_have_is_refused(spec, knob):
    with pytest.raises(ValueError, match="knob_id|token"):
        sp.with_knob(parse(spec), knob, 1.0)


def test_a_weight_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="value"):
        sp.with_knob(parse("mixture(0.5:0:1,0.5:1:1)"), "w1", 1.0)


@pytest.mark.parametrize(
    ("spec", "knob", "value"),
    [("normal(0,1e-5)", "sigma", 1e-5), ("normal(12,1)", "mu", 12.0), ("t(0.2,0,1)", "df", 0.2),
     ("laplace(0,300)", "scale", 300.0)],
)
def test_off_range_values_widen_the_slider_and_stay_exact(spec, knob, value):
    (k,) = [k for k in sp.knobs(parse(spec)) if k.id == knob]
    assert k.value == value
    if k.log:
        assert value in k.steps and value in (k.steps[0], k.steps[-1])
    else:
        assert k.lo <= value <= k.hi


def test_scales_and_df_are_log_scale_and_locations_linear():
    kinds = {k.id: k.log for k in sp.knobs(parse("t(3,0,1)"))}
    assert kinds == {"df": True, "loc": False, "scale": True}
    kinds = {k.id: k.log for k in sp.knobs(parse("normal(0,1)"))}
    assert kinds == {"mu": False, "sigma": True}


@pytest.mark.parametrize("family", list(sp.FAMILIES))
def test_switching_family_keeps_location_and_scale(family):
    new = sp.switch_family(Gaussian(0.5, 2.0), family)
    assert sp.family_of(new) == family
    if family in ("normal", "laplace", "t"):
        assert new.spec.endswith("0.5,2)")
    if family == "mixture":
        assert isinstance(new, GaussianMixture)
        assert sum(w * m for w, m in zip(new.weights, new.means, strict=True)) == pytest.approx(0.5)
    if family == "categorical":
        assert new == sp.vocabulary("logit")


def test_switching_to_the_same_family_changes_nothing():
    d = parse("t(5,1,2)")
    assert sp.switch_family(d, "t") is d


def test_from_a_categorical_the_target_starts_away_from_the_sampler():
    cat = sp.vocabulary("logit")
    assert sp.switch_family(cat, "normal").spec == "normal(0,1)"
    assert sp.switch_family(cat, "normal", drifted=True).spec == "normal(0.5,1)"


def test_an_unknown_family_is_refused():
    with pytest.raises(ValueError, match="family"):
        sp.switch_family(Gaussian(0, 1), "cauchy")


@pytest.mark.parametrize("key", list(sp.VOCABULARIES))
def test_vocabularies_are_the_cores_drift_paths(key):
    path = CLAMP_PATHS[key]
    base, drifted = sp.vocabulary(key), sp.vocabulary(key, drifted=True)
    assert base.probs == pytest.approx(path.base.probs, rel=1e-12)
    assert sp.vocabulary_of(base) == sp.vocabulary_of(drifted) == key
    # the target starts a step along the path (the clamp demo's default drift)
    theta = {"peaked": 20.0, "logit": 1.0}[key]
    assert drifted.probs == pytest.approx(path.at(theta).probs, rel=1e-9)


def test_the_logit_slider_starts_on_the_token_the_path_moves():
    assert sp.moving_token(sp.vocabulary("peaked")) == 7  # the rare token
    assert sp.moving_token(sp.vocabulary("logit")) == 4  # the least likely token
    assert sp.moving_token(Categorical((0.0, 1.0, 2.0))) == 2
    assert sp.vocabulary_of(Categorical((0.0, 1.0, 2.0))) is None


def test_one_tokens_logit_and_an_edited_row():
    d = sp.vocabulary("peaked")
    assert sp.with_logit(d, 7, 0.5) == sp.vocabulary("peaked", drifted=True)
    knob = sp.logit_knob(d, 7)
    assert knob.value == -19.5 and knob.lo <= -19.5 and not knob.log
    edited = sp.with_logits(d, {0: 3.0, 2: math.nan, 5: None})  # blank cells are ignored
    assert edited.logits == (3.0, *d.logits[1:])
    with pytest.raises(ValueError, match="token"):
        sp.with_logit(d, 8, 0.0)
    with pytest.raises(ValueError, match="edits"):
        sp.with_logits(d, {9: 1.0})
