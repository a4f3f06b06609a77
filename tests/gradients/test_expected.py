"""Tests for kl_core.gradients.expected: exact expected gradients, checked as identities and by finite differences.

Independent references used below:

* the true gradients are central differences of the exact KL sums in the logits;
* every option's expected gradient is also the central difference, in θ, of the
  surrogate loss autograd sees, Σ_x s(x)·loss(x; θ), with the sampler s and the
  detached parts frozen at θ0.  For a library entry that loss is the library's
  own per-token value, :func:`kl_core.libraries.crosswalk.evaluate` (clamps included), or
  for a straight-through option the backward surrogate the library writes
  (½ log² r, times the detached clipped weight).

Central differences with h = 1e-5 on smooth sums of O(1) terms are accurate to
about 1e-10; the tolerances below are 1e-7.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import log_softmax

from kl_core.estimation import estimators
from kl_core.estimation.distributions import Categorical, Gaussian
from kl_core.estimation.exact import optimal_lambda
from kl_core.gradients import expected as gradients
from kl_core.gradients.expected import (
    BASIC_CLAIMS,
    BASIC_OPTIONS,
    classify,
    entry_name,
    expected_gradient,
    gradient_coefficients,
    gradient_entries,
    gradient_row,
    gradient_spread,
    gradient_table,
    k_lambda_spread,
    lambda_grad_opt,
    loss_entries,
    projection_moments,
    sample_projection_means,
    true_gradients,
)
from kl_core.libraries.crosswalk import CROSSWALK, evaluate, lookup

K = 6
SEED = 20251201
FD_TOL = 1e-7


@pytest.fixture(scope="module")
def setting() -> dict[str, np.ndarray]:
    """Logits of π_θ, π_ref and an older sampler π_old, moderately apart (no clamp active)."""
    rng = np.random.default_rng(SEED)
    theta = 0.8 * rng.standard_normal(K)
    return {
        "theta": theta,
        "ref": 0.8 * rng.standard_normal(K),
        "old": theta + 0.4 * rng.standard_normal(K),
    }


def kl(logp: np.ndarray, logq: np.ndarray) -> float:
    return float(np.sum(np.exp(logp) * (logp - logq)))


def fd(f, x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Central differences of a scalar function of a vector."""
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# --------------------------------------------------------------------------- #
# True gradients
# --------------------------------------------------------------------------- #
def test_true_gradients_match_finite_differences(setting):
    lr = log_softmax(setting["ref"])
    rev, fwd = true_gradients(setting["theta"], setting["ref"])
    want_rev = fd(lambda t: kl(log_softmax(t), lr), setting["theta"])
    want_fwd = fd(lambda t: kl(lr, log_softmax(t)), setting["theta"])
    np.testing.assert_allclose(rev, want_rev, atol=FD_TOL)
    np.testing.assert_allclose(fwd, want_fwd, atol=FD_TOL)
    assert abs(rev.sum()) < 1e-15 and abs(fwd.sum()) < 1e-15  # softmax is shift-invariant


def test_true_gradients_accept_categoricals(setting):
    a = true_gradients(Categorical(tuple(setting["theta"])), Categorical(tuple(setting["ref"])))
    b = true_gradients(setting["theta"], setting["ref"])
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-14, atol=1e-16)


# --------------------------------------------------------------------------- #
# On-policy identities (the list) and the surrogate each option stands for
# --------------------------------------------------------------------------- #
def test_on_policy_identities(setting):
    th, ref = setting["theta"], setting["ref"]
    rev, fwd = true_gradients(th, ref)
    np.testing.assert_allclose(expected_gradient("k1", th, ref), 0.0, atol=1e-15)
    np.testing.assert_allclose(expected_gradient("k2", th, ref), rev, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(expected_gradient("k3", th, ref), fwd, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(expected_gradient("k1_score", th, ref), rev, rtol=1e-12, atol=1e-15)


def _basic_surrogate(key: str, theta0: np.ndarray, lr: np.ndarray, ls: np.ndarray, lam: float):
    """Σ_x s(x)·loss(x; θ), with the sampler and every stop-gradient frozen at θ0."""
    s = np.exp(ls)
    k1_0 = estimators.k1(lr - log_softmax(theta0))
    kl_0 = estimators.k_lambda(lr - log_softmax(theta0), lam)

    def loss(theta: np.ndarray) -> float:
        lp = log_softmax(theta)
        t = lr - lp
        if key == "k1_score":
            return float(s @ (k1_0 * lp))
        if key == "k_lambda":
            return float(s @ (kl_0 * lp + estimators.k_lambda(t, lam)))
        return float(s @ estimators.evaluate(key, t))

    return loss


@pytest.mark.parametrize("key", BASIC_OPTIONS)
@pytest.mark.parametrize("sampler", ["on", "off"])
def test_basic_options_equal_autograd_of_their_surrogate(key, sampler, setting):
    th, ref = setting["theta"], setting["ref"]
    old = setting["old"] if sampler == "off" else None
    lam = 0.37
    ls = log_softmax(th if old is None else old)
    want = fd(_basic_surrogate(key, th, log_softmax(ref), ls, lam), th)
    got = expected_gradient(key, th, ref, sampler=old, lam=lam)
    np.testing.assert_allclose(got, want, atol=FD_TOL)


@pytest.mark.parametrize("lam", [-1.0, 0.0, 0.5, 1.0, 2.5])
def test_k_lambda_is_unbiased_for_every_lambda(lam, setting):
    th, ref = setting["theta"], setting["ref"]
    rev, _ = true_gradients(th, ref)
    np.testing.assert_allclose(expected_gradient("k_lambda", th, ref, lam=lam), rev, rtol=1e-12, atol=1e-15)


def test_basic_claims_hold_on_policy(setting):
    t = gradient_table(setting["theta"], setting["ref"])
    for key in BASIC_OPTIONS:
        row = t.row(key)
        assert row.target == BASIC_CLAIMS[key] == row.claim, key


# --------------------------------------------------------------------------- #
# Off-policy: importance weights restore the reverse-KL gradient
# --------------------------------------------------------------------------- #
def test_off_policy_weighted_options_restore_reverse_kl(setting):
    th, ref, old = setting["theta"], setting["ref"], setting["old"]
    assert np.max(np.abs(log_softmax(th) - log_softmax(old))) < math.log(10)  # OpenRLHF's clip at 10 inactive
    rev, fwd = true_gradients(th, ref)
    for name in ("TRL:use_bias_correction_kl", "OpenRLHF:k1+unbiased_gradient", "OpenRLHF:k3+unbiased_gradient"):
        g = expected_gradient(name, th, ref, sampler=old)
        np.testing.assert_allclose(g, rev, rtol=1e-12, atol=1e-15, err_msg=name)
    for name in ("k2", "k1_score", "k_lambda", "verl:k3+", "OpenRLHF:k2", "TRL:beta"):
        g = expected_gradient(name, th, ref, sampler=old)
        assert classify(g, rev, fwd) == "mixed", name
        assert np.linalg.norm(g - rev) > 1e-3 * np.linalg.norm(rev), name


def test_off_policy_table_has_no_basic_claims(setting):
    t = gradient_table(setting["theta"], setting["ref"], sampler=setting["old"])
    assert not t.on_policy
    assert all(t.row(k).claim is None for k in BASIC_OPTIONS)
    assert t.row("TRL:use_bias_correction_kl").claim == "reverse_kl"


def test_sampler_equal_to_policy_counts_as_on_policy(setting):
    t = gradient_table(setting["theta"], setting["ref"], sampler=setting["theta"])
    assert t.on_policy and t.row("k3").claim == "forward_kl"


# --------------------------------------------------------------------------- #
# Every crosswalk entry: its gradient is autograd of the library's own value
# --------------------------------------------------------------------------- #
GRAD_ENTRIES = [e for e in CROSSWALK if e.grad_mode != "none"]


def _entry_surrogate(e, theta0: np.ndarray, lr: np.ndarray, ls: np.ndarray):
    """The loss autograd differentiates for entry e, samples from ls, detached parts frozen at θ0."""
    s = np.exp(ls)
    lp0 = log_softmax(theta0)
    w0 = np.exp(lp0 - ls)

    def loss(theta: np.ndarray) -> float:
        lp = log_softmax(theta)
        if e.grad_mode == "autograd":
            if e.uses_current:  # TRL: sampler π_old, current π_θ, weight not detached
                return float(s @ evaluate(e, ls, lr, logp_current=lp))
            return float(s @ evaluate(e, lp, lr))
        if e.grad_mode == "k2":
            return float(s @ estimators.k2(lr - lp))
        if e.grad_mode == "k2_is":
            return float(s @ (np.minimum(w0, e.grad_is_clip) * estimators.k2(lr - lp)))
        # score modes: sg(value)·ratio·log π_θ, the value from the rollout (score) or current policy
        if e.estimator == "full":
            base = ls if e.grad_mode == "score" else lp0
            value = np.full(lp.shape, kl(base, lr))
        else:
            value = evaluate(e, ls if e.grad_mode == "score" else lp0, lr)
        return float(s @ (w0 * value * lp))

    return loss


def _id(e) -> str:
    return f"{e.library}:{e.option}:{e.acts_on}"


@pytest.mark.parametrize("sampler", ["on", "off"])
@pytest.mark.parametrize("entry", GRAD_ENTRIES, ids=_id)
def test_entry_gradient_is_autograd_of_the_library_value(entry, sampler, setting):
    th, ref = setting["theta"], setting["ref"]
    old = setting["old"] if sampler == "off" else None
    ls = log_softmax(th if old is None else old)
    want = fd(_entry_surrogate(entry, th, log_softmax(ref), ls), th)
    got = gradient_row(entry, th, ref, sampler=old).expected_grad
    np.testing.assert_allclose(got, want, atol=FD_TOL)


@pytest.mark.parametrize("entry", GRAD_ENTRIES, ids=_id)
def test_entry_gradient_claims(entry, setting):
    """The recorded grad_target / grad_target_off_policy, checked by the core."""
    th, ref, old = setting["theta"], setting["ref"], setting["old"]
    on = gradient_row(entry, th, ref)
    assert on.target == entry.grad_target
    assert on.clamped_mass == 0.0  # moderate log-ratios: no clamp active
    if entry.grad_target_off_policy is not None:
        off = gradient_row(entry, th, ref, sampler=old)
        assert off.target == entry.grad_target_off_policy


def test_metric_entries_have_no_gradient(setting):
    with pytest.raises(ValueError, match="logged metric"):
        expected_gradient(lookup("verl", "actor/ppo_kl"), setting["theta"], setting["ref"])


def test_mixed_reward_gradients_in_closed_form(setting):
    """k3 in the reward: ∇KL[θ‖ref] − ∇KL[ref‖θ]; k2 in the reward: ∇E_θ[½ log² r] − ∇KL[θ‖ref]."""
    th, ref = setting["theta"], setting["ref"]
    lr = log_softmax(ref)
    rev, fwd = true_gradients(th, ref)
    k3_reward = lookup("TRL", "k3", acts_on="reward")
    np.testing.assert_allclose(gradient_row(k3_reward, th, ref).expected_grad, rev - fwd, rtol=1e-12, atol=1e-15)
    d_k2 = fd(lambda t: float(np.exp(log_softmax(t)) @ estimators.k2(lr - log_softmax(t))), th)
    k2_reward = lookup("OpenRLHF", "k2", acts_on="reward")
    np.testing.assert_allclose(gradient_row(k2_reward, th, ref).expected_grad, d_k2 - rev, atol=FD_TOL)


def test_full_kl_in_the_reward_has_zero_score_gradient(setting):
    row = gradient_row(lookup("TRL", "full"), setting["theta"], setting["ref"])
    assert row.target == "zero" and row.cos_reverse is None and row.cos_forward is None


# --------------------------------------------------------------------------- #
# Clamps at large log-ratios
# --------------------------------------------------------------------------- #
def test_value_clamp_removes_the_pull_on_rare_tokens():
    # Token 5: π_θ = π_ref·e^-4, so log r = 4 and k3 = e^4 − 5 ≈ 49.6 > 10: verl clamps it.
    lr = np.log(np.full(6, 1 / 6))
    lp = lr.copy()
    lp[5] = lr[5] - 4.0
    lp[:5] = np.log((1 - np.exp(lp[5])) / 5)
    e = lookup("verl", "low_var_kl", acts_on="loss")
    row = gradient_row(e, lp, lr)
    rev, fwd = true_gradients(lp, lr)
    assert row.clamped.tolist() == [False] * 5 + [True]
    assert row.clamped_mass == pytest.approx(np.exp(lp[5]), rel=1e-12)
    assert row.coef[5] == 0.0  # torch.clamp passes no gradient there
    assert row.target == "mixed"
    # Unclamped k3 pulls token 5 back up (descent raises its logit); clamped, only the
    # normalisation's share of the other tokens' gradient is left, over 100 times weaker.
    assert -fwd[5] > 0.1
    assert abs(row.expected_grad[5]) < 0.01 * abs(fwd[5])
    # verl's own fix, k3+, is not clamped in the backward pass: it stays ∇KL[π_θ‖π_ref].
    np.testing.assert_allclose(expected_gradient("verl:k3+", lp, lr), rev, rtol=1e-12, atol=1e-15)


def test_importance_weight_clip_biases_the_unbiased_gradient(setting):
    th, ref = setting["theta"], setting["ref"]
    old = th.copy()
    old[0] -= 4.0  # π_θ/π_old ≈ e^4 > 10 on token 0
    row = gradient_row("OpenRLHF:k2+unbiased_gradient", th, ref, sampler=old)
    rev, _ = true_gradients(th, ref)
    assert row.clamped[0] and row.clamped_mass > 0
    assert row.target == "mixed"
    # Without the clip the weighted gradient would be exact:
    ls = log_softmax(old)
    w = np.exp(log_softmax(th) - ls)
    c = w * estimators.k1(log_softmax(ref) - log_softmax(th))
    s, pi = np.exp(ls), np.exp(log_softmax(th))
    np.testing.assert_allclose(s * c - pi * (s @ c), rev, rtol=1e-12, atol=1e-15)


def test_library_clamps_do_not_matter_while_log_ratios_are_moderate(setting):
    t = gradient_table(setting["theta"], setting["ref"])
    for name in ("verl:low_var_kl", "OpenRLHF:k3", "TRL:beta"):
        np.testing.assert_allclose(t.row(name).expected_grad, t.true_forward, rtol=1e-12, atol=1e-15)


def test_large_log_ratios_stay_finite():
    # TRL's unclamped weighted k3: w·(k3 − k3') = −t·w in closed form, no inf − inf.
    lp = np.array([0.0, -60.0, -60.0])
    lr = np.array([-60.0, 0.0, 0.0])
    for name in ("TRL:use_bias_correction_kl", "k_lambda", "k2", "verl:low_var_kl"):
        row = gradient_row(name, lp, lr, lam=0.5)
        assert np.isfinite(row.expected_grad).all(), name


# --------------------------------------------------------------------------- #
# λ for the gradient against λ* for the value
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("sampler", ["on", "off"])
def test_lambda_grad_opt_minimises_the_spread(sampler, setting):
    th, ref = setting["theta"], setting["ref"]
    old = setting["old"] if sampler == "off" else None
    lam_star = lambda_grad_opt(th, ref, sampler=old)
    best = gradient_spread("k_lambda", th, ref, sampler=old, lam=lam_star)
    grid = np.linspace(lam_star - 2, lam_star + 2, 81)
    spreads = np.array([gradient_spread("k_lambda", th, ref, sampler=old, lam=g) for g in grid])
    assert best <= spreads.min() + 1e-12
    # spread² is a quadratic in λ: its second differences on the grid are constant
    d2 = np.diff(spreads**2, 2)
    np.testing.assert_allclose(d2, d2.mean(), rtol=1e-7)


def test_gradient_lambda_is_not_the_value_lambda(setting):
    th, ref = setting["theta"], setting["ref"]
    t = gradient_table(th, ref)
    assert t.lam == t.lam_grad_opt  # the k_lambda row uses the gradient-optimal λ by default
    value_opt = optimal_lambda(Categorical(tuple(th)), Categorical(tuple(ref)))
    assert t.lam_value_opt == pytest.approx(value_opt, rel=1e-12)
    assert abs(t.lam_grad_opt - t.lam_value_opt) > 0.1
    assert t.row("k_lambda").grad_spread < gradient_spread("k_lambda", th, ref, lam=t.lam_value_opt)


@pytest.mark.parametrize("sampler", ["on", "off"])
def test_k_lambda_spread_is_gradient_spread_at_every_lambda(sampler, setting):
    th, ref = setting["theta"], setting["ref"]
    old = setting["old"] if sampler == "off" else None
    lams = np.linspace(-2.0, 4.0, 13)
    want = [gradient_spread("k_lambda", th, ref, sampler=old, lam=float(x)) for x in lams]
    np.testing.assert_allclose(k_lambda_spread(th, ref, sampler=old, lam=lams), want, rtol=1e-10)
    best = lambda_grad_opt(th, ref, sampler=old)
    assert k_lambda_spread(th, ref, sampler=old, lam=best) <= min(want) + 1e-12
    assert k_lambda_spread(th, ref, sampler=old, lam=0.5).shape == ()


def test_lambda_grad_opt_is_one_when_policy_equals_ref():
    assert lambda_grad_opt([0.3, -0.2, 0.1], [0.3, -0.2, 0.1]) == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- #
# Spreads, cosines, projections
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("sampler", ["on", "off"])
def test_spread_matches_brute_force(sampler, setting):
    th, ref = setting["theta"], setting["ref"]
    old = setting["old"] if sampler == "off" else None
    ls = log_softmax(th if old is None else old)
    pi, s = np.exp(log_softmax(th)), np.exp(ls)
    for key in ("k1", "k3", "k_lambda"):
        c = gradient_coefficients(key, th, ref, sampler=old, lam=0.3)
        grads = [c[x] * (np.eye(K)[x] - pi) for x in range(K)]
        mean = sum(s[x] * grads[x] for x in range(K))
        var = sum(s[x] * np.sum((grads[x] - mean) ** 2) for x in range(K))
        assert gradient_spread(key, th, ref, sampler=old, lam=0.3) == pytest.approx(math.sqrt(var), rel=1e-12)


def test_cosines(setting):
    t = gradient_table(setting["theta"], setting["ref"])
    k2, k3, k1 = t.row("k2"), t.row("k3"), t.row("k1")
    assert k2.cos_reverse == pytest.approx(1.0, abs=1e-12)
    assert k3.cos_forward == pytest.approx(1.0, abs=1e-12)
    cos = t.true_reverse @ t.true_forward / (np.linalg.norm(t.true_reverse) * np.linalg.norm(t.true_forward))
    assert k2.cos_forward == pytest.approx(cos, abs=1e-12)
    assert k1.target == "zero" and k1.cos_reverse is None and k1.cos_forward is None


def test_projection_moments_against_monte_carlo(setting):
    t = gradient_table(setting["theta"], setting["ref"], sampler=setting["old"])
    row = t.row("k3")
    n, repeats = 50, 4000
    mean, sd = projection_moments(row, t, t.true_reverse, n)
    draws = sample_projection_means(row, t, t.true_reverse, n, repeats, seed=SEED)
    # 4 standard errors of the Monte Carlo mean (sd/√repeats) and of the sample sd (≈ sd/√(2·repeats))
    assert abs(draws.mean() - mean) < 4 * sd / math.sqrt(repeats)
    assert abs(draws.std(ddof=1) - sd) < 4 * sd / math.sqrt(2 * (repeats - 1))
    u = t.true_reverse / np.linalg.norm(t.true_reverse)
    assert mean == pytest.approx(row.expected_grad @ u, rel=1e-12)


def test_projection_rejects_bad_direction(setting):
    t = gradient_table(setting["theta"], setting["ref"])
    with pytest.raises(ValueError, match="direction"):
        t.row("k2").projection(np.zeros(K), t.policy_probs)
    with pytest.raises(ValueError, match="direction"):
        t.row("k2").projection(np.ones(K + 1), t.policy_probs)


# --------------------------------------------------------------------------- #
# The table
# --------------------------------------------------------------------------- #
def test_table_rows_and_names(setting):
    t = gradient_table(setting["theta"], setting["ref"])
    names = t.names
    assert names[: len(BASIC_OPTIONS)] == list(BASIC_OPTIONS)
    assert names[len(BASIC_OPTIONS) :] == [entry_name(e) for e in loss_entries()]
    assert len(set(names)) == len(names)
    for name in ("verl:low_var_kl", "verl:k3+", "OpenRLHF:k3", "OpenRLHF:k3+unbiased_gradient", "TRL:beta"):
        assert name in names
    assert t.k == K and t.kl_reverse == pytest.approx(kl(t.policy_log_probs, t.ref_log_probs), rel=1e-12)
    assert t.kl_forward == pytest.approx(kl(t.ref_log_probs, t.policy_log_probs), rel=1e-12)
    with pytest.raises(ValueError, match="name must be one of"):
        t.row("k9")


def test_entry_name_of_a_reward_entry():
    assert entry_name(lookup("verl", "low_var_kl", acts_on="reward")) == "verl:low_var_kl:reward"
    with pytest.raises(ValueError, match="entry"):
        entry_name("verl:low_var_kl")  # type: ignore[arg-type]


def test_table_at_k64_is_finite():
    rng = np.random.default_rng(SEED + 1)
    t = gradient_table(rng.standard_normal(64), rng.standard_normal(64), sampler=rng.standard_normal(64))
    for row in t.rows:
        assert np.isfinite(row.expected_grad).all() and math.isfinite(row.grad_spread), row.name


def test_classify():
    r, f = np.array([1.0, -1.0]), np.array([2.0, -2.0])
    assert classify(r, r, f) == "reverse_kl"
    assert classify(f, r, f) == "forward_kl"
    assert classify([1e-15, -1e-15], r, f) == "zero"
    assert classify([0.5, -0.5], r, f) == "mixed"
    with pytest.raises(ValueError, match="shape"):
        classify([1.0], r, f)


# --------------------------------------------------------------------------- #
# Bad input
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gradient_table([0.0, 1.0], [0.0, 1.0, 2.0]), "ref must have the policy's 2 tokens"),
        (lambda: gradient_table([0.0, 1.0], [0.0, 1.0], sampler=[0.0]), "sampler must be a 1-D vector of 2 to"),
        (lambda: gradient_table(Categorical((0.0,)), [0.0, 1.0]), "policy must have between 2 and"),
        (lambda: gradient_table(np.zeros(2000), np.zeros(2000)), "policy must be a 1-D vector of 2 to 1024"),
        (lambda: gradient_table([0.0, 1.0], [0.0, 1.0], sampler=[0.0, 1.0, 2.0]), "sampler must have"),
        (lambda: gradient_table(Gaussian(0, 1), [0.0, 1.0]), "policy must be a categorical"),
        (lambda: gradient_table([0.0, float("nan")], [0.0, 1.0]), "policy contains NaN"),
        (lambda: gradient_table([0.0, float("inf")], [0.0, 1.0]), "policy must have finite logits"),
        (lambda: gradient_table([[0.0, 1.0]], [0.0, 1.0]), "policy must be a 1-D vector"),
        (lambda: gradient_table([0.0, 1.0], [0.0, 1.0], lam=float("nan")), "lam must be finite"),
        (lambda: expected_gradient("k9", [0.0, 1.0], [0.0, 1.0]), "option must be one of"),
        (lambda: expected_gradient("verl:low_var_kl:reward", [0.0, 1.0], [0.0, 1.0]), "option must be one of"),
        (lambda: sample_projection_means(None, None, None, 0, 1), "n must be"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --------------------------------------------------------------------------- #
# The toy setting and the entry list
# --------------------------------------------------------------------------- #
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # kl_core.estimation.exact's λ* sum, 0·inf there
def test_kl_values_when_a_probability_underflows_to_zero():
    # π_θ(tokens 1, 2) = e^-1e4 is 0 in floating point while their k3 overflows
    t = gradient_table([1e4, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert t.kl_reverse == pytest.approx(math.log(3.0), rel=1e-12)  # KL[δ_0 ‖ uniform]
    assert t.kl_forward == pytest.approx(2e4 / 3 - math.log(3.0), rel=1e-12)  # Σ ref·(log ref − log π)


def test_gradient_entries_are_every_loss_and_reward_entry():
    entries = gradient_entries()
    assert all(e.grad_mode != "none" and e.acts_on in ("loss", "reward") for e in entries)
    assert [e for e in entries if e.acts_on == "loss"] == list(loss_entries())
    assert {e.acts_on for e in CROSSWALK} - {e.acts_on for e in entries} == {"metric"}
    t = gradient_table([1.0, 0.0, -1.0], [0.0, 0.0, 0.0], entries=entries)
    assert len(t.rows) == len(BASIC_OPTIONS) + len(entries)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: k_lambda_spread([0.0, 1.0], [0.0, 1.0], lam=[1.0, float("inf")]), "lam must be finite"),
    ],
)
def test_spread_refuses_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_module_exports_exist():
    for name in gradients.__all__:
        assert hasattr(gradients, name)


# --------------------------------------------------------------------------- #
# A nearly one-hot π_θ: tiny true gradients (audit finding 1)
# --------------------------------------------------------------------------- #
UNEVEN_REF_6 = [2.0, 0.0, 2.0, 0.0, 0.0, 0.0]


def _mp_reverse(logits, ref_logits):
    """∇KL[π_θ‖π_ref] in 80-digit arithmetic: π_θ ⊙ (k1 − E k1)."""
    import mpmath as mp

    with mp.workdps(80):
        z = mp.fsum(mp.e ** mp.mpf(v) for v in logits)
        zr = mp.fsum(mp.e ** mp.mpf(v) for v in ref_logits)
        p = [mp.e ** mp.mpf(v) / z for v in logits]
        k1 = [mp.mpf(a) - mp.log(z) - mp.mpf(b) + mp.log(zr) for a, b in zip(logits, ref_logits, strict=True)]
        mean = mp.fsum(a * b for a, b in zip(p, k1, strict=True))
        return np.array([float(a * (b - mean)) for a, b in zip(p, k1, strict=True)])


@pytest.mark.parametrize("top", [30.0, 40.0, 60.0, 100.0])
def test_true_reverse_gradient_is_accurate_for_a_nearly_one_hot_policy(top):
    """The likeliest token's entry cancelled (‖∇KL‖ 6.6e-16 for 8.9e-16 at 40; k3's cosine 0.375 for 0.911 at 100)."""
    logits = [top, 0.0, 0.0, 0.0, 0.0, 0.0]
    rev, _fwd = true_gradients(logits, UNEVEN_REF_6)
    exact = _mp_reverse(logits, UNEVEN_REF_6)
    np.testing.assert_allclose(rev, exact, rtol=1e-9, atol=0.0)
    t = gradient_table(logits, UNEVEN_REF_6)
    cos = float(exact @ t.true_forward / (np.linalg.norm(exact) * np.linalg.norm(t.true_forward)))
    assert t.row("k3").cos_reverse == pytest.approx(cos, abs=1e-9)


@pytest.mark.parametrize("top", [30.0, 40.0, 100.0])
def test_k2_equals_a_tiny_true_gradient_and_is_not_called_zero(top):
    t = gradient_table([top, 0.0, 0.0, 0.0, 0.0, 0.0], UNEVEN_REF_6)
    assert 0 < np.linalg.norm(t.true_reverse) < 1e-10
    for name in ("k2", "k1_score", "k_lambda"):
        row = t.row(name)
        assert row.target == "reverse_kl", name
        assert row.cos_reverse == pytest.approx(1.0, abs=1e-12), name
    k1 = t.row("k1")
    assert k1.target == "zero" and k1.cos_reverse is None


def test_classify_matches_before_it_calls_zero():
    r, f = np.array([1e-16, -1e-16]), np.array([0.3, -0.3])
    assert classify(r, r, f, scale=40.0) == "reverse_kl"
    assert classify(2 * r, r, f, scale=40.0) == "zero"
    assert classify([0.0, 0.0], [0.0, 0.0], [0.0, 0.0]) == "zero"
    with pytest.raises(ValueError, match="scale"):
        classify(r, r, f, scale=0.0)


def test_classify_sees_a_gradient_whose_squares_underflow():
    # ‖(1.5e-171, −1.5e-171)‖ = 2.1e-171, but its squares (2e-342) are 0 in doubles: the norm
    # was 0, and a gradient equal to ∇KL[π‖ρ] was called "zero"
    rev = [1.5e-171, -1.5e-171]
    assert classify(rev, rev, [0.3, -0.3]) == "reverse_kl"
    assert classify([3e-171, -3e-171], rev, [0.3, -0.3], scale=1e-174) == "mixed"


def test_every_lambda_is_the_values_lambda_star_only_where_the_policies_are_equal():
    """At π_θ = π_ref optimal_lambda's convention gives λ* = 1, which the Gradients page printed as "the
    value's λ*"; lam_value_any says that every λ is (each kλ value is 0)."""
    same = gradient_table([0.3, -1.0, 2.0], [0.3, -1.0, 2.0], entries=())
    assert same.lam_value_any and same.lam_value_opt == 1.0
    moved = gradient_table([0.3, -1.0, 2.1], [0.3, -1.0, 2.0], entries=())
    assert not moved.lam_value_any and 0.0 < moved.lam_value_opt < 1.0
