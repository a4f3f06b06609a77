"""Tests for kl_core.libraries.clamps: clamped means, KLs and clamp-hit probabilities by exact sums.

Every expected value below is written out by hand from the definitions (the
log-probs of two or three tokens, ``math.log``/``math.exp``), independently of
:func:`kl_core.libraries.crosswalk.evaluate` and :mod:`kl_core.estimation.estimators`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kl_core.estimation.distributions import Categorical
from kl_core.estimation.paths import PATHS
from kl_core.libraries import clamps
from kl_core.libraries.clamps import (
    CLAMP_PATHS,
    DEMO_ENTRIES,
    PEAKED,
    clamp_curve,
    clamp_point,
    clamp_tokens,
    drifting_role,
    entry_by_id,
    entry_id,
    roles_at,
    token_expectations,
)
from kl_core.libraries.crosswalk import CROSSWALK

LOG_HALF = math.log(0.5)


def _k3(t: float) -> float:
    return math.exp(t) - 1.0 - t


# ------------------------------------------------------------ hand-computed sums


def test_openrlhf_k1_value_clamp_by_hand():
    # s = (1/2, 1/2); o gives token 1 log-prob -12, so k1 = log s - log o = 11.31 > 10 there.
    lo1 = -12.0
    lo0 = math.log1p(-math.exp(lo1))
    b = clamp_tokens("OpenRLHF:k1:reward", [LOG_HALF, LOG_HALF], [lo0, lo1])
    k1_0, k1_1 = LOG_HALF - lo0, LOG_HALF - lo1
    assert k1_1 == pytest.approx(11.306852819440055, abs=1e-12)
    assert b.kl == pytest.approx(0.5 * k1_0 + 0.5 * k1_1, abs=1e-13)
    assert b.unclamped_mean == pytest.approx(b.kl, abs=1e-13)  # k1 is unbiased
    assert b.mean == pytest.approx(0.5 * k1_0 + 0.5 * 10.0, abs=1e-13)
    assert b.mean - b.kl == pytest.approx(-0.5 * (k1_1 - 10.0), abs=1e-13)
    assert b.hit.tolist() == [False, True]
    assert b.hit_prob == 0.5 and b.value_hit_prob == 0.5 and b.logr_hit_prob == 0.0
    np.testing.assert_allclose(b.value, [k1_0, 10.0], atol=1e-13)


def test_verl_low_var_kl_both_clamps_by_hand():
    # Token 1: log o = -30, so log r = -30 + log 2 = -29.3 -> clamped to -20, then
    # k3(-20) = e^-20 + 19 -> clamped to 10.  Token 0: log r = log(1 - e^-30) + log 2.
    lo1 = -30.0
    lo0 = math.log1p(-math.exp(lo1))
    b = clamp_tokens("verl:low_var_kl:loss", [LOG_HALF, LOG_HALF], [lo0, lo1])
    t0, t1 = lo0 - LOG_HALF, lo1 - LOG_HALF
    assert b.logr.tolist() == pytest.approx([t0, t1], abs=1e-13)
    assert b.logr_hit.tolist() == [False, True]
    assert b.value_hit.tolist() == [False, True]
    assert b.mean == pytest.approx(0.5 * _k3(t0) + 0.5 * 10.0, abs=1e-12)
    assert b.unclamped_mean == pytest.approx(0.5 * _k3(t0) + 0.5 * _k3(t1), abs=1e-12)
    assert b.kl == pytest.approx(0.5 * -t0 + 0.5 * -t1, abs=1e-12)
    assert b.unclamped_mean == pytest.approx(b.kl, abs=1e-12)  # k3 is unbiased
    assert b.hit_prob == 0.5 and b.logr_hit_prob == 0.5 and b.value_hit_prob == 0.5


def test_k3_value_clamp_bites_on_the_ratio_tail_by_hand():
    # A token the sampler rarely draws but the other policy likes: r = 0.5 / e^-5,
    # k3 = r - 1 - log r = 68.90 > 10, so the clamp removes most of the control variate.
    d = math.exp(-5.0)
    ls = [math.log1p(-d), -5.0]
    lo = [LOG_HALF, LOG_HALF]
    b = clamp_tokens("OpenRLHF:k3:loss", ls, lo)
    t0, t1 = LOG_HALF - ls[0], LOG_HALF - ls[1]
    assert _k3(t1) == pytest.approx(0.5 * math.exp(5.0) - 1.0 - (5.0 + LOG_HALF), abs=1e-12)
    assert _k3(t1) == pytest.approx(68.8997, abs=1e-4)
    assert b.hit_prob == pytest.approx(d, rel=1e-14)
    assert b.mean == pytest.approx((1 - d) * _k3(t0) + d * 10.0, rel=1e-13)
    assert b.kl == pytest.approx((1 - d) * -t0 + d * -t1, rel=1e-13)
    assert b.mean - b.kl == pytest.approx(d * (10.0 - _k3(t1)), rel=1e-12)


def test_openrlhf_k2_is_biased_before_and_after_its_clamp():
    lo1 = -6.0  # k2 = (log 2 - 6)^2 / 2 = 14.08 > 10 on token 1
    lo0 = math.log1p(-math.exp(lo1))
    b = clamp_tokens("OpenRLHF:k2:reward", [LOG_HALF, LOG_HALF], [lo0, lo1])
    t0, t1 = lo0 - LOG_HALF, lo1 - LOG_HALF
    assert b.unclamped_mean == pytest.approx(0.25 * t0**2 + 0.25 * t1**2, abs=1e-12)
    assert b.mean == pytest.approx(0.25 * t0**2 + 0.5 * 10.0, abs=1e-12)
    assert b.kl == pytest.approx(-0.5 * (t0 + t1), abs=1e-12)


def test_unclamped_entry_never_hits():
    b = clamp_tokens("TRL:k3:reward", [LOG_HALF, LOG_HALF], [math.log1p(-math.exp(-40.0)), -40.0])
    assert b.hit_prob == 0.0
    assert b.mean == b.unclamped_mean == pytest.approx(b.kl, rel=1e-12)


def test_ppo_kl_log_ratio_clamp_changes_k1():
    # verl actor/ppo_kl: k1 of old||new with log r clamped to [-20, 20], no value clamp.
    lo1 = -25.0
    lo0 = math.log1p(-math.exp(lo1))
    b = clamp_tokens("verl:actor/ppo_kl:metric", [LOG_HALF, LOG_HALF], [lo0, lo1])
    t0 = lo0 - LOG_HALF
    assert b.mean == pytest.approx(0.5 * -t0 + 0.5 * 20.0, abs=1e-12)
    assert b.logr_hit.tolist() == [False, True] and not b.value_hit.any()


# ------------------------------------------------------------ along the paths


def test_peaked_path_kl_matches_its_closed_form():
    # KL[p_θ || p_0] = θ p_θ(7) - (lse(ℓ0 + θ e7) - lse(ℓ0)) for p_θ = softmax(ℓ0 + θ e7).
    l0 = np.array([2.0, 1.0, 0.5, 0.0, -1.0, -2.0, -3.0, -19.5])
    for theta in (0.0, 12.0, 20.0, 30.0):
        lt = l0.copy()
        lt[7] += theta
        lse0 = math.log(math.fsum(np.exp(l0)))
        lset = math.log(math.fsum(np.exp(lt)))
        p7 = math.exp(lt[7] - lset)
        pt = clamp_point("TRL:k3:reward", "peaked", theta)
        assert pt.kl == pytest.approx(theta * p7 - (lset - lse0), abs=1e-12)
        assert pt.mean == pytest.approx(pt.kl, abs=1e-10)


def test_peaked_path_starts_with_a_token_of_log_prob_minus_22():
    assert PEAKED.base.log_probs[7] == pytest.approx(-22.088445, abs=1e-6)
    p7 = PEAKED.base.probs[7]
    assert PEAKED.fisher == pytest.approx(p7 * (1 - p7), rel=1e-12)
    assert set(CLAMP_PATHS) == {"peaked", "logit"}
    assert CLAMP_PATHS["logit"] is PATHS["logit"]


def test_clamps_bite_at_large_drift_on_the_peaked_path():
    # Moderate drift: every clamp is inactive and the estimates are exact.
    for eid in ("verl:low_var_kl:loss", "OpenRLHF:k1:reward", "OpenRLHF:k3:reward"):
        small = clamp_point(eid, "peaked", 8.0)
        assert small.hit_prob == 0.0
        assert small.mean == pytest.approx(small.kl, abs=1e-12)
        # Large drift: the value is capped at 10 per token while the KL is 22.
        big = clamp_point(eid, "peaked", 30.0)
        assert big.kl == pytest.approx(22.0771, abs=1e-4)
        assert big.mean <= 10.0 + 1e-12
        assert big.hit_prob > 0.999
        assert big.relative_bias < -0.5
        assert big.clamp_effect == pytest.approx(big.bias, abs=1e-9)  # k1, k3 are unbiased
    # verl's log-ratio clamp at -20 only starts biting past θ ≈ 22.
    assert clamp_point("verl:low_var_kl:loss", "peaked", 20.0).logr_hit_prob == 0.0
    assert clamp_point("verl:low_var_kl:loss", "peaked", 30.0).logr_hit_prob > 0.99


def test_k3_value_clamp_bites_on_the_mild_logit_path():
    pt = clamp_point("OpenRLHF:k3:reward", "logit", 3.0)
    sampler, other = roles_at("OpenRLHF:k3:reward", "logit", 3.0)
    logr = other.log_probs - sampler.log_probs
    k3 = np.exp(logr) - 1 - logr
    hits = k3 > 10
    assert hits.tolist() == [True, False, False, False, False]  # the abandoned top token
    assert pt.hit_prob == pytest.approx(float(sampler.probs[hits].sum()), rel=1e-12)
    expected = math.fsum(sampler.probs * np.minimum(k3, 10.0))
    assert pt.mean == pytest.approx(expected, rel=1e-12)
    assert pt.unclamped_mean == pytest.approx(pt.kl, rel=1e-12)
    # k1 with the same clamp never reaches 10 on this path.
    assert clamp_point("OpenRLHF:k1:reward", "logit", 3.0).hit_prob == 0.0


def test_curve_matches_points_and_its_endpoints():
    c = clamp_curve("OpenRLHF:k1:reward", "peaked", n=61)
    assert c.entry_id == "OpenRLHF:k1:reward" and c.drifting == "sampler"
    assert c.theta[0] == 0.0 and c.theta[-1] == PEAKED.theta_max and c.theta.size == 61
    assert c.kl[0] == 0.0 and c.mean[0] == 0.0 and c.hit_prob[0] == 0.0
    i = 40
    pt = clamp_point("OpenRLHF:k1:reward", "peaked", float(c.theta[i]))
    assert (c.kl[i], c.mean[i], c.hit_prob[i]) == (pt.kl, pt.mean, pt.hit_prob)
    np.testing.assert_allclose(c.unclamped_mean, c.kl, atol=1e-10)
    assert np.all(c.mean <= c.kl + 1e-12)  # capping k1 at 10 can only lower it here
    assert np.all(np.diff(c.hit_prob) >= 0)
    assert 10.0 < c.first_hit(1e-3) < 20.0
    assert math.isnan(clamp_curve("TRL:k3:reward", "peaked", n=5).first_hit())
    np.testing.assert_allclose(c.bias, c.mean - c.kl)


def test_drifting_role_and_roles_at():
    assert {eid: drifting_role(eid) for eid in DEMO_ENTRIES} == {
        "verl:low_var_kl:loss": "sampler",
        "OpenRLHF:k1:reward": "sampler",
        "OpenRLHF:k2:reward": "sampler",
        "OpenRLHF:k3:reward": "sampler",
        "verl:actor/ppo_kl:metric": "other",
        "TRL:k3:reward": "sampler",
    }
    s, o = roles_at("TRL:k3:reward", "logit", 1.0)
    assert s == PATHS["logit"].at(1.0) and o == PATHS["logit"].base
    s, o = roles_at("verl:actor/ppo_kl:metric", "logit", 1.0)
    assert s == PATHS["logit"].base and o == PATHS["logit"].at(1.0)


def test_entry_ids_round_trip_for_every_entry():
    for e in CROSSWALK:
        assert entry_by_id(entry_id(e)) is e
    assert len({entry_id(e) for e in CROSSWALK}) == len(CROSSWALK)
    for eid in DEMO_ENTRIES:
        entry_by_id(eid)


# ------------------------------------------------------------ sign errors


def test_token_expectations_by_hand():
    s = Categorical((math.log(0.2), math.log(0.3), math.log(0.5)))
    o = Categorical((math.log(0.5), math.log(0.3), math.log(0.2)))
    ps, po = [0.2, 0.3, 0.5], [0.5, 0.3, 0.2]
    kl_so = math.fsum(a * math.log(a / b) for a, b in zip(ps, po, strict=True))
    kl_os = math.fsum(b * math.log(b / a) for a, b in zip(ps, po, strict=True))
    chi2 = math.fsum(a * a / b for a, b in zip(ps, po, strict=True)) - 1.0
    t = token_expectations(s, o)
    assert t.kl_sampler_other == pytest.approx(kl_so, abs=1e-14)
    assert t.kl_other_sampler == pytest.approx(kl_os, abs=1e-14)
    assert t.sampler_minus_other == pytest.approx(kl_so, abs=1e-14)
    assert t.other_minus_sampler == pytest.approx(-kl_so, abs=1e-14)
    assert t.k3 == pytest.approx(kl_so, abs=1e-14)
    assert t.k3_flipped == pytest.approx(chi2 - kl_so, abs=1e-14)
    assert t.k3_pq == pytest.approx(kl_os, abs=1e-14)
    half_sq = [0.5 * math.log(b / a) ** 2 for a, b in zip(ps, po, strict=True)]
    assert t.k2 == pytest.approx(
        math.fsum(a * h for a, h in zip(ps, half_sq, strict=True)), abs=1e-14
    )
    assert t.k1_negative_share == pytest.approx(0.2)  # log s - log o < 0 only on token 0
    assert t.k1_negative_tokens == 1 and t.tokens == 3


def test_the_peaked_paths_rare_token_is_the_one_theta_moves():
    base, moved = np.array(PEAKED.base.logits), np.array(PEAKED.at(1.0).logits)
    assert np.flatnonzero(moved != base).tolist() == [clamps.PEAKED_TOKEN]
    assert PEAKED.base.probs[clamps.PEAKED_TOKEN] == min(PEAKED.base.probs)
    assert f"\\ell_{clamps.PEAKED_TOKEN} - \\ell_{{0,{clamps.PEAKED_TOKEN}}}" in PEAKED.theta_latex
    assert f"e_{clamps.PEAKED_TOKEN}" in PEAKED.family_latex
    assert "\\text" not in PEAKED.theta_latex  # no English inside the formula: the zh page showed it untranslated


def test_token_expectations_on_the_logit_example():
    old, new = PATHS["logit"].base, PATHS["logit"].at(1.0)
    t = token_expectations(old, new)
    assert t.kl_sampler_other > 0
    assert t.other_minus_sampler == pytest.approx(-t.kl_sampler_other, abs=1e-15)
    assert t.k3_flipped != pytest.approx(t.kl_sampler_other, rel=1e-3)
    assert 0 < t.k1_negative_share < 1
    # the share is a probability under the sampler, not a share of the vocabulary
    assert (t.k1_negative_tokens, t.tokens) == (3, 5) and t.k1_negative_share != pytest.approx(3 / 5, abs=0.05)


# ------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: clamp_point("TRL:k3:reward", "spiky", 1.0), "path must be one of"),
        (lambda: clamp_point("TRL:k3:reward", "peaked", 31.0), r"theta must be in \[0, 30\]"),
        (lambda: clamp_point("TRL:k3:reward", "logit", -0.1), "theta must be in"),
        (lambda: clamp_point("TRL:k3:reward", "logit", float("nan")), "theta must be finite"),
        (
            lambda: clamp_point("TRL:k9:reward", "peaked", 1.0),
            "eid must be 'library:option:acts_on'",
        ),
        (lambda: clamp_point("TRL:full:reward", "peaked", 1.0), "exact full-vocabulary KL"),
        (lambda: clamp_curve("TRL:use_bias_correction_kl:loss"), "importance-weighted"),
        (lambda: clamp_curve("TRL:k3:reward", n=1), "n must be >= 2"),
        (lambda: clamp_curve("TRL:k3:reward", n=2.5), "n must be a positive integer"),
        (
            lambda: clamp_tokens("TRL:k3:reward", [-0.1, -0.1], [LOG_HALF, LOG_HALF]),
            "logp_sampler must be normalised",
        ),
        (
            lambda: clamp_tokens("TRL:k3:reward", [LOG_HALF, LOG_HALF], [0.0]),
            "logp_other must have the shape",
        ),
        (
            lambda: clamp_tokens("TRL:k3:reward", [0.0, -np.inf], [LOG_HALF, LOG_HALF]),
            "logp_sampler must be finite",
        ),
        (
            lambda: clamp_tokens("TRL:k3:reward", [[LOG_HALF]], [LOG_HALF]),
            "logp_sampler must be a non-empty 1-D",
        ),
        (lambda: clamp_tokens(42, [0.0], [0.0]), "entry must be a CrosswalkEntry"),
        (lambda: entry_id("TRL:k3:reward"), "entry must be a CrosswalkEntry"),
        (
            lambda: token_expectations(PATHS["shift"].base, PATHS["shift"].at(1.0)),
            "sampler must be a Categorical",
        ),
        (
            lambda: token_expectations(PATHS["logit"].base, PEAKED.base),
            "other must have the sampler's 5 tokens",
        ),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_module_exports_exist():
    for name in clamps.__all__:
        assert hasattr(clamps, name)
