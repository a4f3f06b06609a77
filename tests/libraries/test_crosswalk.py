"""Tests for kl_core.libraries.crosswalk: every library entry checked by exact expectations.

Expectations are sums over all K tokens of a small categorical policy, weighted
by the sampler's probabilities, so no sampling noise enters any assertion.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import log_softmax

from kl_core.estimation import estimators
from kl_core.libraries import crosswalk as cw
from kl_core.libraries.crosswalk import (
    CROSSWALK,
    CROSSWALK_FILE,
    EXPECTED_GRADIENTS,
    GRAD_MODES,
    GRADIENT_TARGETS,
    RELEASES,
    CrosswalkEntry,
    evaluate,
    libraries,
    load_crosswalk,
    lookup,
    options,
    releases,
)

K = 6
SEED = 20240611


def _policy(rng: np.random.Generator, scale: float = 0.8) -> np.ndarray:
    """Log-probs of a random categorical policy over K tokens."""
    return log_softmax(scale * rng.standard_normal(K))


@pytest.fixture(scope="module")
def pols() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    return {"a": _policy(rng), "b": _policy(rng), "c": _policy(rng)}


def kl(logp: np.ndarray, logq: np.ndarray) -> float:
    """Exact KL[p‖q] for log-prob vectors over the same K tokens."""
    return float(np.sum(np.exp(logp) * (logp - logq)))


def expect(entry: CrosswalkEntry, log_s: np.ndarray, log_o: np.ndarray, log_c=None) -> float:
    """Exact mean of evaluate(entry, ...) with tokens drawn from the sampler."""
    kwargs = {} if log_c is None else {"logp_current": log_c}
    values = evaluate(entry, log_s, log_o, **kwargs)
    return float(np.sum(np.exp(log_s) * values))


def claimed_kl(entry: CrosswalkEntry, roles: dict[str, np.ndarray]) -> float:
    first, second = entry.kl_roles
    return kl(roles[first], roles[second])


NON_FULL = [e for e in CROSSWALK if e.estimator != "full"]


def _id(e: CrosswalkEntry) -> str:
    return f"{e.library}:{e.option}:{e.acts_on}"


# --------------------------------------------------------------------------- #
# Expectations match the direction each entry claims
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("entry", NON_FULL, ids=_id)
def test_exact_expectation_matches_claimed_kl(entry, pols):
    log_s, log_o = pols["a"], pols["b"]
    roles = {"sampler": log_s, "other": log_o, "current": log_s}  # current defaults to sampler
    mean = expect(entry, log_s, log_o)
    target = claimed_kl(entry, roles)
    logr = log_o - log_s
    assert np.abs(logr).max() < 10  # clamps ([-20, 20] on logr, [-10, 10] on values) inactive here
    if entry.unbiased:
        assert mean == pytest.approx(target, rel=1e-10)
    elif entry.estimator == "k2":
        # E_q[k2] = sum_x q(x) f(p/q) with f(u) = ½ log² u, computed independently here;
        # ≥ 0, and equal to the KL only to second order (see the small-drift test below).
        f_div = float(np.sum(np.exp(log_s) * 0.5 * logr**2))
        assert mean == pytest.approx(f_div, rel=1e-12)
        assert mean >= 0.0
    elif entry.estimator == "abs":
        # Triangle inequality: E_q|log r| >= |E_q log r| = KL[q‖p].  Not a divergence estimate.
        assert mean >= abs(float(np.sum(np.exp(log_s) * logr)))
        assert mean >= target
        assert mean > target + 1e-3  # strictly larger for this pair: it is not the KL
    else:  # pragma: no cover - every estimator key is handled above
        pytest.fail(f"no expectation check for estimator {entry.estimator!r}")


@pytest.mark.parametrize("entry", [e for e in NON_FULL if e.unbiased], ids=_id)
def test_wrong_direction_claim_would_fail(entry, pols):
    log_s, log_o = pols["a"], pols["b"]
    kl_so, kl_os = kl(log_s, log_o), kl(log_o, log_s)
    assert abs(kl_so - kl_os) > 1e-2  # the pair is asymmetric enough to tell directions apart
    mean = expect(entry, log_s, log_o)
    assert entry.kl_roles in (("sampler", "other"), ("current", "other"))
    assert mean == pytest.approx(kl_so, rel=1e-10)
    assert abs(mean - kl_os) > 1e-2  # the reversed claim KL[other‖sampler] is false


def test_k3_pq_would_be_needed_for_the_reverse_direction(pols):
    # No library entry estimates KL[other‖sampler]; the estimator that would is k3_pq.
    log_s, log_o = pols["a"], pols["b"]
    mean = float(np.sum(np.exp(log_s) * estimators.k3_pq(log_o - log_s)))
    assert mean == pytest.approx(kl(log_o, log_s), rel=1e-10)
    assert all(e.kl_roles != ("other", "sampler") for e in CROSSWALK)


@pytest.mark.parametrize("entry", [e for e in NON_FULL if e.estimator == "k2"], ids=_id)
def test_k2_matches_kl_to_second_order(entry, pols):
    log_q = pols["a"]
    h = np.random.default_rng(SEED + 1).standard_normal(K)
    rel_errs = []
    for eps in (1e-2, 1e-3):
        log_p = log_softmax(log_q + eps * h)
        mean = expect(entry, log_q, log_p)
        target = kl(log_q, log_p)
        rel_errs.append(abs(mean - target) / target)
    assert rel_errs[0] < 0.1
    # The relative gap is first order in eps (the absolute gap third order): 10x smaller eps, ~10x smaller gap.
    assert rel_errs[1] < rel_errs[0] / 5


# --------------------------------------------------------------------------- #
# Importance-weighted KL (TRL use_bias_correction_kl)
# --------------------------------------------------------------------------- #
def test_bias_corrected_kl_is_unbiased_off_policy(pols):
    log_old, log_theta, log_ref = pols["a"], pols["b"], pols["c"]
    corrected = lookup("TRL", "use_bias_correction_kl")
    mean = expect(corrected, log_old, log_ref, log_c=log_theta)
    assert mean == pytest.approx(kl(log_theta, log_ref), rel=1e-10)
    # Without the weight, k3 on tokens from π_old misses KL[π_θ‖π_ref].
    plain = float(np.sum(np.exp(log_old) * estimators.k3(log_ref - log_theta)))
    assert abs(plain - kl(log_theta, log_ref)) > 1e-3


def test_bias_corrected_kl_defaults_to_on_policy(pols):
    entry = lookup("TRL", "use_bias_correction_kl")
    a, b = pols["a"], pols["b"]
    np.testing.assert_array_equal(evaluate(entry, a, b), evaluate(lookup("TRL", "beta"), a, b))


# --------------------------------------------------------------------------- #
# Gradient claims in the caveats, checked by finite differences on softmax logits.
# A loss term sum_x q0(x) k(x; θ) with q0 frozen at θ0 is what autograd sees.
# --------------------------------------------------------------------------- #
def _grad(f, theta: np.ndarray, h: float = 1e-5) -> np.ndarray:
    g = np.zeros_like(theta)
    for i in range(theta.size):
        d = np.zeros_like(theta)
        d[i] = h
        g[i] = (f(theta + d) - f(theta - d)) / (2 * h)
    return g


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("kl", "zero"),
        ("low_var_kl", "kl_ref_theta"),
        ("mse", "kl_theta_ref"),
        ("k3+", "kl_theta_ref"),
    ],
)
def test_loss_gradient_caveats(option, expected):
    rng = np.random.default_rng(SEED + 2)
    theta0, log_ref = rng.standard_normal(K), log_softmax(rng.standard_normal(K))
    entry = lookup("verl", option, acts_on="loss")
    # A straight-through ('+') option back-propagates k2's gradient, whatever its forward value.
    grad_entry = lookup("verl", "k2", acts_on="loss") if entry.straight_through else entry
    q0 = np.exp(log_softmax(theta0))  # sampling distribution, frozen (stop-gradient)

    def loss(theta):
        return float(np.sum(q0 * evaluate(grad_entry, log_softmax(theta), log_ref)))

    g = _grad(loss, theta0)
    if expected == "zero":
        want = np.zeros(K)
    elif expected == "kl_ref_theta":
        want = _grad(lambda t: kl(log_ref, log_softmax(t)), theta0)
    else:
        want = _grad(lambda t: kl(log_softmax(t), log_ref), theta0)
    np.testing.assert_allclose(g, want, atol=1e-7)


def test_bias_corrected_gradient_is_kl_gradient():
    rng = np.random.default_rng(SEED + 3)
    log_old, log_ref = log_softmax(rng.standard_normal(K)), log_softmax(rng.standard_normal(K))
    theta0 = rng.standard_normal(K)
    entry = lookup("TRL", "use_bias_correction_kl")

    def loss(theta):
        return expect(entry, log_old, log_ref, log_c=log_softmax(theta))

    want = _grad(lambda t: kl(log_softmax(t), log_ref), theta0)
    np.testing.assert_allclose(_grad(loss, theta0), want, atol=1e-7)


# --------------------------------------------------------------------------- #
# Clamps
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("acts_on", ["reward", "loss"])
def test_verl_low_var_kl_clamps(acts_on):
    e = lookup("verl", "low_var_kl", acts_on=acts_on)
    assert e.logr_clamp == (-20.0, 20.0) and e.value_clamp == (-10.0, 10.0)
    # logr = +50 -> clamped to 20 -> k3 = e^20 - 21 -> clamped to 10
    assert evaluate(e, [-50.0], [0.0]).tolist() == [10.0]
    # logr = -50 -> clamped to -20 -> k3 = e^-20 + 19 ≈ 19 -> clamped to 10
    assert evaluate(e, [0.0], [-50.0]).tolist() == [10.0]
    # below both clamps the value is plain k3
    np.testing.assert_allclose(evaluate(e, [-2.0], [-1.0]), estimators.k3([1.0]), rtol=1e-15)


def test_verl_ppo_kl_logr_clamp():
    e = lookup("verl", "actor/ppo_kl")
    # sampler = π_old, other = π_θ; logr = log π_θ - log π_old, clamped to [-20, 20]; k1 = -logr
    assert evaluate(e, [-30.0], [0.0]).tolist() == [-20.0]
    assert evaluate(e, [0.0], [-30.0]).tolist() == [20.0]
    assert evaluate(e, [0.0], [-3.0]).tolist() == [3.0]


@pytest.mark.parametrize("estimator", ["k1", "k2", "k3"])
@pytest.mark.parametrize("acts_on", ["reward", "loss"])
def test_openrlhf_value_clamp(estimator, acts_on):
    e = lookup("OpenRLHF", estimator, acts_on=acts_on)
    # 0.11.2 bounds k3's log-ratio before the exponential: log_ratio >= -10 in its sign, logr <= 10 here
    want_logr = (-np.inf, 10.0) if estimator == "k3" else None
    assert e.logr_clamp == want_logr and e.value_clamp == (-10.0, 10.0)
    big = evaluate(e, [-50.0], [0.0])  # logr = +50
    small = evaluate(e, [0.0], [-50.0])  # logr = -50
    expected = {"k1": ([-10.0], [10.0]), "k2": ([10.0], [10.0]), "k3": ([10.0], [10.0])}[estimator]
    assert (big.tolist(), small.tolist()) == expected


def test_unclamped_entries_are_not_clamped():
    e = lookup("TRL", "k3")
    assert e.logr_clamp is None and e.value_clamp is None
    np.testing.assert_allclose(evaluate(e, [-30.0], [0.0]), [np.expm1(30.0) - 30.0], rtol=1e-12)


# --------------------------------------------------------------------------- #
# Straight-through options: forward value equals the base estimator
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("plus", "base"), [("k1+", "kl"), ("abs+", "abs"), ("k2+", "mse"), ("k3+", "low_var_kl")]
)
def test_straight_through_forward_equals_base(plus, base, pols):
    st, b = lookup("verl", plus, acts_on="loss"), lookup("verl", base, acts_on="loss")
    assert st.straight_through and not b.straight_through
    assert (st.estimator, st.logr_clamp, st.value_clamp) == (
        b.estimator,
        b.logr_clamp,
        b.value_clamp,
    )
    ls, lo = np.r_[pols["a"], -50.0, 0.0], np.r_[pols["b"], 0.0, -50.0]
    np.testing.assert_array_equal(evaluate(st, ls, lo), evaluate(b, ls, lo))


# --------------------------------------------------------------------------- #
# One source of truth for formulas
# --------------------------------------------------------------------------- #
def test_evaluate_delegates_to_kl_core_estimators(monkeypatch, pols):
    calls = []
    real = estimators.evaluate

    def spy(key, logr, lam=1.0):
        calls.append(key)
        return real(key, logr, lam=lam)

    monkeypatch.setattr(cw.estimators, "evaluate", spy)
    for e in NON_FULL:
        evaluate(e, pols["a"], pols["b"])
    assert calls == [e.estimator for e in NON_FULL]


def test_full_entry_refuses_sampled_logprobs(pols):
    e = lookup("TRL", "full")
    assert e.estimator == "full" and e.unbiased
    with pytest.raises(ValueError, match="full"):
        evaluate(e, pols["a"], pols["b"])


# --------------------------------------------------------------------------- #
# Lookup
# --------------------------------------------------------------------------- #
def test_lookup_by_alias():
    assert lookup("verl", "k3", acts_on="loss") is lookup("verl", "low_var_kl", acts_on="loss")
    assert lookup("verl", "k1", acts_on="reward") is lookup("verl", "kl", acts_on="reward")
    assert lookup("verl", "mse+", acts_on="loss") is lookup("verl", "k2+", acts_on="loss")
    assert lookup("verl", "low_var_kl+", acts_on="loss") is lookup("verl", "k3+", acts_on="loss")
    # verl's reward accepts the '+' spellings too (the same detached value as the base option)
    assert lookup("verl", "k3+", acts_on="reward") is lookup("verl", "low_var_kl", acts_on="reward")
    assert lookup("verl", "distillation/low_var_kl", acts_on="loss").option == "distillation/k3"
    assert lookup("OpenRLHF", "k3+unbiased_gradient").grad_mode == "k2_is"
    assert lookup("verl", "ppo_kl") is lookup("verl", "actor/ppo_kl")
    assert lookup("sb3", "approx_kl") is lookup("Stable-Baselines3", "approx_kl_div")
    assert lookup("CLEANRL", "losses/approx_kl") is lookup("CleanRL", "approx_kl")
    assert lookup("huggingface/trl", "per_token_kl") is lookup("TRL", "beta")


def test_lookup_unknown_library():
    with pytest.raises(ValueError, match=r"library must be one of .*'verl'"):
        lookup("rllib", "kl")
    with pytest.raises(ValueError, match="library"):
        options("nope")


def test_lookup_unknown_option_lists_choices():
    with pytest.raises(ValueError, match=r"option must be one of .*'low_var_kl'"):
        lookup("verl", "k4")
    with pytest.raises(ValueError, match="option"):
        lookup("TRL", "K3")  # options are case-sensitive, as in the libraries


def test_lookup_ambiguous_option_needs_acts_on():
    with pytest.raises(ValueError, match=r"acts_on.*loss.*reward"):
        lookup("verl", "low_var_kl")
    with pytest.raises(ValueError, match="acts_on"):
        lookup("OpenRLHF", "k3")
    with pytest.raises(ValueError, match="acts_on"):
        lookup("verl", "low_var_kl", acts_on="metric")
    with pytest.raises(ValueError, match="acts_on"):
        lookup("verl", "low_var_kl", acts_on="gradient")


# --------------------------------------------------------------------------- #
# Table integrity and coverage
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("entry", CROSSWALK, ids=_id)
def test_every_entry_is_documented(entry):
    assert entry.source.strip() and entry.direction.strip() and entry.verified_in.strip()
    assert entry.acts_on in {"reward", "loss", "metric"}
    assert entry.library_formula.strip() and entry.formula_latex.strip() and entry.caveat.strip()
    assert entry.sampler.strip() and entry.other.strip() and entry.setting.strip()
    assert entry.estimator == "full" or entry.estimator in estimators.ESTIMATORS
    if entry.acts_on == "loss":
        assert "2506.09477" in entry.caveat  # differentiating a value estimator ≠ KL gradient
    if entry.acts_on == "metric" and entry.early_stop is None:
        assert entry.weight is None


def test_no_name_collisions_within_a_placement():
    seen: dict[tuple[str, str, str], str] = {}
    for e in CROSSWALK:
        for name in e.names:
            key = (e.library, e.acts_on, name)
            assert key not in seen, f"{key} used by {seen[key]!r} and {e.option!r}"
            seen[key] = e.option


def test_coverage_of_required_options():
    required = {
        "TRL": ["kl", "abs", "mse", "full", "k1", "k3", "beta", "use_bias_correction_kl"],
        "verl": ["kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3", "k3+", "actor/ppo_kl"],
        "OpenRLHF": ["k1", "k2", "k3"],
        "CleanRL": ["old_approx_kl", "approx_kl"],
        "Stable-Baselines3": ["approx_kl"],
    }
    assert libraries() == list(required)
    for lib, names in required.items():
        available = {n for e in options(lib) for n in e.names}
        assert set(names) <= available, (lib, set(names) - available)


def test_key_facts():
    assert lookup("CleanRL", "old_approx_kl").estimator == "k1"
    assert lookup("CleanRL", "approx_kl").estimator == "k3"
    assert "target_kl" in lookup("CleanRL", "approx_kl").early_stop
    sb3 = lookup("sb3", "approx_kl")
    assert sb3.estimator == "k3" and "1.5·target_kl" in sb3.early_stop
    assert lookup("verl", "actor/ppo_kl").direction == "KL[π_old‖π_θ]"
    grpo = lookup("TRL", "beta")
    assert (grpo.estimator, grpo.acts_on, grpo.weight) == ("k3", "loss", "GRPOConfig.beta")
    assert lookup("TRL", "use_bias_correction_kl").importance_weighted
    assert lookup("verl", "low_var_kl", acts_on="reward").acts_on == "reward"
    for e in options("verl"):
        assert e.straight_through == e.option.endswith("+")


# --------------------------------------------------------------------------- #
# The recorded library code, run on numpy, agrees with evaluate()
# --------------------------------------------------------------------------- #
class _T(np.ndarray):
    """numpy array with the few torch.Tensor methods the recorded formulas use."""

    def abs(self):
        return np.abs(self)

    def square(self):
        return np.square(self)

    def exp(self):
        return np.exp(self)

    def clamp(self, min=None, max=None):  # noqa: A002 - torch's keyword names
        return np.clip(self, min, max)

    def sum(self, axis=None, **kwargs):  # torch's positional dim, as in .sum(-1)
        return np.asarray(self).sum(axis=axis, **kwargs)

    def float(self):
        return self

    def contiguous(self):
        return self

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return np.asarray(self)


def _masked_mean(x, mask):
    return np.sum(x * mask) / np.sum(mask)


_TORCH = SimpleNamespace(
    exp=np.exp, mean=np.mean, clamp=lambda x, min=None, max=None: np.clip(x, min, max)
)

# Name of the variable that holds the per-token KL value (or the logged mean) in
# formulas that do not end in `return`.
_OUTPUT = {
    ("TRL", "policy/policykl"): "policykl",
    ("TRL", "policy/approxkl"): "approxkl",
    ("TRL", "k1"): "kl",
    ("TRL", "k3"): "kl",
    ("TRL", "policy/approxkl_avg"): "approxkl",
    ("TRL", "beta"): "per_token_kl",
    ("TRL", "use_bias_correction_kl"): "per_token_kl",
    ("verl", "actor/ppo_kl"): "ppo_kl",
    ("TRL", "RLOOConfig.beta"): "per_token_kl",
    ("OpenRLHF", "k1"): "value",
    ("OpenRLHF", "k2"): "value",
    ("OpenRLHF", "k3"): "value",
    ("verl", "distillation/k1"): "distillation_losses",
    ("verl", "distillation/k2"): "distillation_losses",
    ("verl", "distillation/k3"): "distillation_losses",
    ("CleanRL", "old_approx_kl"): "old_approx_kl",
    ("CleanRL", "approx_kl"): "approx_kl",
    ("Stable-Baselines3", "approx_kl_div"): "approx_kl_div",
}


def run_library_formula(entry: CrosswalkEntry, arrays: dict[str, np.ndarray]):
    """Execute entry.library_formula with numpy stand-ins; return its KL value."""
    ones = np.ones_like(arrays["sampler"]).view(_T)
    ns: dict[str, object] = {
        "torch": _TORCH,
        "th": _TORCH,
        "verl_F": SimpleNamespace(masked_mean=_masked_mean),
        "masked_mean": _masked_mean,
        "mask": ones,
        "response_mask": ones,
        "mb_inds": slice(None),
        "per_token_loss": 0.0,
        "self": SimpleNamespace(beta=0.1, args=SimpleNamespace(use_bias_correction_kl=True)),
        "kl_penalty": entry.option,
        "completion_mask": ones,
        "rewards": 0.0,
        "KL_IS_WEIGHT_CLIP": 10.0,
    }
    settings = dict(entry.config)
    if "distillation.distillation_loss.loss_mode" in settings:
        # verl's distillation calls kl_penalty(student, teacher) with the configured loss_mode

        def kl_penalty(logprob, ref_logprob, kl_penalty):
            base = lookup("verl", kl_penalty, acts_on="loss")
            return run_library_formula(base, {"sampler": logprob, "other": ref_logprob})

        ns["kl_penalty"] = kl_penalty
        ns["loss_config"] = SimpleNamespace(loss_mode=settings["distillation.distillation_loss.loss_mode"])
    if entry.straight_through:

        def kl_penalty_forward(logprob, ref_logprob, name):
            base = lookup(entry.library, name, acts_on="loss")
            return run_library_formula(base, {"sampler": logprob, "other": ref_logprob})

        ns["kl_penalty_forward"] = kl_penalty_forward
    for name, role in entry.variables:
        value = np.asarray(arrays[role], dtype=float).view(_T)
        if "." in name:
            obj, attr = name.split(".")
            ns[obj] = SimpleNamespace(**{attr: value})
        else:
            ns[name] = value
    code = entry.library_formula
    if "return " in code:
        ns_fn: dict[str, object] = {}
        body = "\n".join("    " + line for line in code.splitlines())
        exec(f"def _f():\n{body}\n", ns, ns_fn)  # noqa: S102 - recorded library code
        return ns_fn["_f"]()
    exec(code, ns)  # noqa: S102 - recorded library code
    return ns[_OUTPUT[(entry.library, entry.option)]]


@pytest.mark.parametrize("extreme", [False, True], ids=["moderate", "with_logr_pm50"])
@pytest.mark.parametrize("entry", NON_FULL, ids=_id)
def test_library_formula_agrees_with_evaluate(entry, pols, extreme):
    ls, lo, lc = pols["a"], pols["b"], pols["c"]
    if extreme:  # two more tokens with logr = +50 and -50, where the clamps are active
        ls, lo, lc = np.r_[ls, -50.0, 0.0], np.r_[lo, 0.0, -50.0], np.r_[lc, -1.0, -1.0]
    arrays = {"sampler": ls, "other": lo, "current": lc}
    kwargs = {"logp_current": lc} if entry.uses_current else {}
    ours = evaluate(entry, ls, lo, **kwargs)
    with np.errstate(over="ignore"):
        theirs = np.asarray(run_library_formula(entry, arrays), dtype=float)
    if theirs.ndim == 0:  # the library logs a token mean
        np.testing.assert_allclose(theirs, ours.mean(), rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_allclose(theirs, ours, rtol=1e-9, atol=1e-12)


def test_entries_are_frozen():
    with pytest.raises(AttributeError):
        CROSSWALK[0].option = "other"  # type: ignore[misc]


def test_entry_validation():
    base = lookup("TRL", "k1")
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    with pytest.raises(ValueError, match="acts_on"):
        CrosswalkEntry(**{**fields, "acts_on": "gradient"})
    with pytest.raises(ValueError, match="estimator"):
        CrosswalkEntry(**{**fields, "estimator": "k9"})
    with pytest.raises(ValueError, match="sign"):
        CrosswalkEntry(**{**fields, "sign": 0})
    with pytest.raises(ValueError, match="value_clamp"):
        CrosswalkEntry(**{**fields, "value_clamp": (10.0, -10.0)})


# --------------------------------------------------------------------------- #
# Input validation
# --------------------------------------------------------------------------- #
@pytest.fixture
def k3_entry() -> CrosswalkEntry:
    return lookup("TRL", "k3")


def test_rejects_mismatched_shapes(k3_entry):
    with pytest.raises(ValueError, match="logp_other"):
        evaluate(k3_entry, [-1.0, -2.0], [-1.0])


def test_rejects_empty(k3_entry):
    with pytest.raises(ValueError, match="logp_sampler"):
        evaluate(k3_entry, [], [])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_rejects_non_finite(k3_entry, bad):
    with pytest.raises(ValueError, match="logp_other"):
        evaluate(k3_entry, [-1.0, -2.0], [-1.0, bad])
    with pytest.raises(ValueError, match="logp_sampler"):
        evaluate(k3_entry, [bad, -2.0], [-1.0, -2.0])


def test_rejects_positive_logprob(k3_entry):
    with pytest.raises(ValueError, match="logp_sampler"):
        evaluate(k3_entry, [0.5], [-1.0])
    with pytest.raises(ValueError, match="logp_other"):
        evaluate(k3_entry, [-0.5], [1e-3])


def test_rejects_non_numeric(k3_entry):
    with pytest.raises(ValueError, match="logp_sampler"):
        evaluate(k3_entry, ["a"], [-1.0])


def test_logp_current_validation(k3_entry):
    with pytest.raises(ValueError, match="logp_current"):
        evaluate(k3_entry, [-1.0], [-1.0], logp_current=[-1.0])
    corrected = lookup("TRL", "use_bias_correction_kl")
    with pytest.raises(ValueError, match="logp_current"):
        evaluate(corrected, [-1.0, -2.0], [-1.0, -2.0], logp_current=[-1.0])
    with pytest.raises(ValueError, match="logp_current"):
        evaluate(corrected, [-1.0], [-1.0], logp_current=[0.5])


def test_rejects_non_entry():
    with pytest.raises(TypeError, match="entry"):
        evaluate("k3", [-1.0], [-1.0])  # type: ignore[arg-type]


def test_preserves_shape_and_accepts_scalars(k3_entry):
    ls = np.full((2, 3), -1.0)
    lo = np.full((2, 3), -1.5)
    assert evaluate(k3_entry, ls, lo).shape == (2, 3)
    assert evaluate(k3_entry, -1.0, -1.5).shape == (1,)


# --------------------------------------------------------------------------- #
# The data file, its loader, and what the releases say
# --------------------------------------------------------------------------- #
MINIMAL = """
[snippets]
a = "alpha"
b = "@{a} beta"

[templates.t]
library = "X"
component = "c"
setting = "s"
estimator = "k1"
library_formula = "return 1"
formula_latex = "x"
sampler = "s"
other = "o"
variables = [["lp", "sampler"], ["ref", "other"]]
direction = "KL"
kl_roles = ["sampler", "other"]
sign = 1
straight_through = false
importance_weighted = false
acts_on = "reward"
source = "here"
verified_in = "there"
aliases = []
grad_target = "reverse_kl"

[[entries]]
template = "t"
option = "one"
caveat = "@{b}: {braces} stay, \\\\LaTeX too"
"""


def _write(tmp_path, text: str):
    p = tmp_path / "cw.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_loader_reads_the_shipped_file():
    data = load_crosswalk(CROSSWALK_FILE)
    assert data.entries == CROSSWALK and data.releases == RELEASES
    assert len(CROSSWALK) == 41


def test_a_file_without_a_libraries_table_gets_one_library_per_entry_library(tmp_path):
    data = load_crosswalk(_write(tmp_path, MINIMAL))
    assert [(lib.name, lib.aliases, lib.packages) for lib in data.libraries] == [("X", (), ())]
    data = load_crosswalk(_write(tmp_path, MINIMAL + '\n[[libraries]]\nname = "X"\naliases = ["ex"]\n'))
    assert data.libraries[0].names == ("x", "ex")


def test_loader_expands_snippets_and_templates(tmp_path):
    (e,) = load_crosswalk(_write(tmp_path, MINIMAL)).entries
    assert e.caveat == "alpha beta: {braces} stay, \\LaTeX too"
    assert (e.library, e.option, e.weight, e.release, e.grad_mode) == ("X", "one", None, None, "score")


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda t: t.replace('template = "t"\noption', 'template = "u"\noption'), "unknown template 'u'"),
        (lambda t: t.replace("@{b}:", "@{nope}:"), r"unknown snippet @\{nope\}"),
        (lambda t: t.replace('a = "alpha"', 'a = "@{b}"'), "refers to itself"),
        (lambda t: t + 'colour = "red"\n', r"unknown field\(s\) \['colour'\]"),
        (lambda t: t.replace('source = "here"\n', ""), "missing field 'source'"),
        (lambda t: t.replace('grad_target = "reverse_kl"', 'grad_target = "sideways"'), "grad_target must be one of"),
        (lambda t: t + 'release = "9.9"\n', "release '9.9' is not among the"),
        (lambda t: t + "legacy = true\n", "release must name the last release"),
        (lambda t: t.replace("[[entries]]", "[[entries]]\n= broken"), "is not valid TOML"),
        (lambda t: t.split("[[entries]]")[0], "has no"),
        (lambda t: t + '\n[[libraries]]\nname = "Y"\n', r"library 'X' is not among the \[\[libraries\]\]"),
        (lambda t: t + '\n[[libraries]]\nname = "X"\naliases = ["Z"]\n', "aliases must be non-empty lower-case"),
        (lambda t: t + '\n[[libraries]]\nname = "X"\npackages = ["a-b"]\n', "packages must be Python package names"),
        (lambda t: t + '\n[[libraries]]\nname = "X"\ncolour = "red"\n', r"libraries\[0\] \(X\): unknown field"),
        (lambda t: t + '\n[[libraries]]\nname = "X"\n[[libraries]]\nname = "Y"\naliases = ["x"]\n',
         "'x' names both X and Y"),
    ],
)
def test_loader_names_what_is_wrong(tmp_path, edit, match):
    with pytest.raises(ValueError, match=match):
        load_crosswalk(_write(tmp_path, edit(MINIMAL)))


def test_releases_read():
    current = {r.library: r for r in RELEASES if r.current}
    assert {k: r.version for k, r in current.items()} == {"verl": "0.9.1", "OpenRLHF": "0.11.2", "TRL": "1.16.0"}
    for r in current.values():
        assert r.source.startswith("PyPI wheel") and len(r.sha256 or "") == 64 and r.commit is None
    assert [(r.version, r.current) for r in releases("TRL")] == [("1.16.0", True), ("1.12.0", False), ("0.11.4", False)]
    assert releases("trl")[2].commit == "1f8ba929fbb6962249386f7dce20155da8a26cda"
    assert releases() == list(RELEASES)
    with pytest.raises(ValueError, match="library must be one of"):
        releases("rllib")


def test_release_defaults_that_select_entries():
    verl, orlhf, trl = (releases(n)[0] for n in ("verl", "OpenRLHF", "TRL"))
    assert verl.default("algorithm.use_kl_in_reward") == "False"
    assert verl.default("algorithm.kl_penalty") == "kl"
    assert verl.default("actor_rollout_ref.actor.kl_loss_type") == "low_var_kl"
    assert orlhf.default("--algo.kl.estimator") == "k1" and orlhf.default("--algo.kl.use_loss") == "False"
    assert trl.default("GRPOConfig.use_bias_correction_kl") == "True"
    assert trl.default("GRPOConfig.beta").startswith("0.0")
    assert trl.default("RLOOConfig.beta") == "0.05"
    for r in RELEASES:
        assert r.defaults and all(d.file for d in r.defaults)
    with pytest.raises(ValueError, match="key must be one of"):
        verl.default("algorithm.nope")


def test_every_entry_of_the_three_libraries_names_its_release():
    current = {r.library: r.version for r in RELEASES if r.current}
    for e in CROSSWALK:
        if e.library not in current:
            assert e.release is None  # CleanRL, Stable-Baselines3: read at a commit
            continue
        assert e.release is not None
        if e.legacy:
            assert e.release != current[e.library] and "Legacy" in e.caveat
        else:
            assert e.release == current[e.library]
    legacy = {e.option for e in CROSSWALK if e.legacy}
    assert legacy == {"kl", "abs", "mse", "full", "policy/policykl", "policy/approxkl", "k1", "k3", "policy/approxkl_avg"}
    assert all(e.library == "TRL" for e in CROSSWALK if e.legacy)


def test_every_expected_gradient_has_its_own_words():
    assert GRADIENT_TARGETS == tuple(EXPECTED_GRADIENTS) == ("reverse_kl", "forward_kl", "zero", "mixed", "none")
    assert all(key == g.key for key, g in EXPECTED_GRADIENTS.items())
    for field in ("name", "meaning"):
        words = [getattr(g, field) for g in EXPECTED_GRADIENTS.values()]
        assert all(w.strip() for w in words) and len(set(words)) == len(words), field
    # the two directions are told apart by their order inside ∇KL[·‖·]
    assert "∇KL[π_θ‖π_ref]" in EXPECTED_GRADIENTS["reverse_kl"].meaning
    assert "∇KL[π_ref‖π_θ]" in EXPECTED_GRADIENTS["forward_kl"].meaning


def test_every_gradient_entry_records_its_settings_and_claims():
    for e in CROSSWALK:
        assert e.grad_mode in GRAD_MODES and e.grad_target in GRADIENT_TARGETS
        assert e.grad_expected.strip(), e.option
        if e.acts_on != "metric":
            assert e.config, f"{e.library} {e.option}: no config recorded"
            assert e.grad_target_off_policy is not None
            assert e.grad_target != "none"
        else:
            assert e.grad_target == "none" and e.grad_mode == "none"
        if e.grad_target in ("forward_kl", "mixed", "zero") and e.acts_on == "loss" and e.library in ("verl", "OpenRLHF", "TRL"):
            # a library loss whose gradient is not the reverse KL's names the library's fix, unless intended
            assert e.grad_fix or e.option.startswith("distillation/") or e.option in ("k2", "mse"), e.option


def test_key_facts_of_the_refreshed_releases():
    grpo_default = lookup("TRL", "use_bias_correction_kl")
    assert ("GRPOConfig.use_bias_correction_kl", "True") in grpo_default.config
    assert grpo_default.grad_target == "reverse_kl" and lookup("TRL", "beta").grad_target == "forward_kl"
    rloo = lookup("TRL", "RLOOConfig.beta")
    assert (rloo.estimator, rloo.acts_on, rloo.grad_target) == ("k1", "reward", "reverse_kl")
    assert "sum(-1)" in rloo.library_formula
    k3 = lookup("OpenRLHF", "k3", acts_on="loss")
    assert k3.logr_clamp == (-np.inf, 10.0) and "k3_log_ratio = log_ratio.clamp(min=-10)" in k3.library_formula
    ub = lookup("OpenRLHF", "k3+unbiased_gradient")
    assert (ub.grad_mode, ub.grad_is_clip, ub.straight_through) == ("k2_is", 10.0, True)
    assert ("--algo.kl.unbiased_gradient", "set") in ub.config
    assert "--algo.kl.estimator" in lookup("OpenRLHF", "k1", acts_on="reward").setting
    for name in ("k1+", "k3+", "low_var_kl+", "mse+"):
        assert lookup("verl", name, acts_on="reward").acts_on == "reward"
    assert "verl/workers/utils/losses.py" in lookup("verl", "low_var_kl", acts_on="loss").source
    distill = lookup("verl", "distillation/k3", acts_on="loss")
    assert distill.grad_target == "forward_kl" and "teacher" in distill.other
    assert lookup("verl", "distillation/k1", acts_on="reward").grad_mode == "score_current"
    for e in options("TRL"):
        if e.component.startswith("PPOTrainer"):
            assert e.legacy


def test_gradient_field_validation():
    base = lookup("verl", "k3+", acts_on="loss")
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    with pytest.raises(ValueError, match="grad_mode must be one of"):
        CrosswalkEntry(**{**fields, "grad_mode": "magic"})
    with pytest.raises(ValueError, match="straight_through must be True exactly"):
        CrosswalkEntry(**{**fields, "grad_mode": "autograd"})
    with pytest.raises(ValueError, match="grad_is_clip is required exactly"):
        CrosswalkEntry(**{**fields, "grad_is_clip": 5.0})
    with pytest.raises(ValueError, match="for acts_on='loss'"):
        CrosswalkEntry(**{**fields, "grad_mode": "score"})
    with pytest.raises(ValueError, match="grad_target is 'none' exactly for metrics"):
        CrosswalkEntry(**{**fields, "grad_target": "none"})
    with pytest.raises(ValueError, match="grad_target_off_policy"):
        CrosswalkEntry(**{**fields, "grad_target_off_policy": "none"})
    ub = lookup("OpenRLHF", "k3+unbiased_gradient")
    ub_fields = {f: getattr(ub, f) for f in ub.__dataclass_fields__}
    with pytest.raises(ValueError, match="kl_roles uses 'current'"):
        CrosswalkEntry(**{**ub_fields, "kl_roles": ("sampler", "other")})


def test_unbiased_gradient_entry_evaluates_the_current_policy(pols):
    # OpenRLHF's unbiased_gradient keeps the value of k3 on π_θ (current), tokens from π_old (sampler).
    ub, plain = lookup("OpenRLHF", "k3+unbiased_gradient"), lookup("OpenRLHF", "k3", acts_on="loss")
    old, theta, ref = pols["a"], pols["b"], pols["c"]
    np.testing.assert_array_equal(evaluate(ub, old, ref, logp_current=theta), evaluate(plain, theta, ref))
    np.testing.assert_array_equal(evaluate(ub, theta, ref), evaluate(plain, theta, ref))  # on-policy default


def test_evaluate_without_checks_gives_the_same_values(pols):
    for e in NON_FULL:
        kwargs = {"logp_current": pols["c"]} if e.uses_current else {}
        np.testing.assert_array_equal(
            evaluate(e, pols["a"], pols["b"], check=False, **kwargs), evaluate(e, pols["a"], pols["b"], **kwargs)
        )


# ------------------------------------------------------------ issue 13: the prose fields are messages
def test_prose_fields_are_messages_whose_english_is_the_expanded_text():
    import tomllib

    from kl_core.libraries.crosswalk import CROSSWALK_FILE, PROSE_FIELDS, prose
    from kl_core.libraries.snippets import _expand
    from kl_core.validation import Message

    raw = tomllib.loads(CROSSWALK_FILE.read_text("utf-8"))
    snippets = raw["snippets"]
    e = lookup("verl", "low_var_kl", acts_on="loss")
    assert isinstance(e.caveat, Message) and "{k3_loss}" in e.caveat.template
    for name in PROSE_FIELDS["entries"]:
        for entry in CROSSWALK:
            value = getattr(entry, name)
            assert value is None or isinstance(value, Message), (entry.option, name)
    for text in ("plain {braces} stay", "@{tang_munos}: a snippet", "a @{k2_reward} nested one"):
        m = prose(text, snippets)
        assert str(m) == _expand(text, snippets, "test")  # byte-identical English
        assert Message(m.template, **m.params) == m
    with pytest.raises(ValueError, match="unknown snippet"):
        prose("@{no_such_snippet}", snippets, "here")


def test_the_extractor_yields_each_prose_template_once_from_the_data_file():
    import io

    from kl_core.libraries.babel_extractor import extract_messages
    from kl_core.libraries.crosswalk import CROSSWALK_FILE

    found = list(extract_messages(io.BytesIO(CROSSWALK_FILE.read_bytes()), None, [], {}))
    templates = [t for _, _, t, _ in found]
    assert len(templates) == len(set(templates)) > 100
    e = lookup("verl", "low_var_kl", acts_on="loss")
    assert e.caveat.template in templates and e.caveat.params["k3_loss"].template in templates
    assert "reference π_ref" in templates and "GRPOConfig.beta" not in templates  # words, not settings
    assert not any(t.strip().startswith("{") and t.strip().endswith("}") and t.count("{") == 1 for t in templates)
    text = CROSSWALK_FILE.read_text("utf-8")
    for lineno, _, _t, _ in found[:20]:
        assert 1 <= lineno <= text.count("\n") + 1


@pytest.mark.parametrize("estimator, qualifier", [("k2", " (to second order)"),
                                                  ("abs", " (intended; E|log r| is not a KL)")])
def test_a_biased_rows_kl_says_how_it_is_meant(estimator, qualifier):
    """k2 matches its KL only to second order and |log r| not at all: every such row says so, as TRL's did."""
    rows = [e for e in CROSSWALK if e.estimator == estimator]
    assert rows
    for e in rows:
        assert e.direction.endswith(qualifier), (e.library, e.option, e.acts_on, e.direction)


def test_trl_ppo_reward_rows_estimate_the_rollout_policys_kl():
    """The reward KL of TRL's PPOTrainer is computed once per batch from the rollout policy's log-probs.

    TRL 1.12.0 wheel (pip download --no-deps trl==1.12.0), trl/experimental/ppo/ppo_trainer.py PPOTrainer.train:
    under torch.no_grad() (line 672) logprob = selective_log_softmax(generation logits) (line 703);
    logr = ref_logprobs - logprobs, kl, non_score_reward = -kl_coef * kl (lines 773-775), before the
    num_ppo_epochs loop (line 802).  TRL 0.11.4 wheel, trl/trainer/ppo_trainer.py step(): all_logprobs and
    ref_logprobs under torch.no_grad() (lines 747-765), compute_rewards (lines 767-777), then the ppo_epochs
    loop (line 799).  So the value estimates KL[π_old‖π_ref], not KL[π_θ‖π_ref].
    """
    rows = [e for e in CROSSWALK if e.library == "TRL" and e.acts_on == "reward"
            and e.component.startswith("PPOTrainer")]
    assert {(e.release, e.option) for e in rows} == {("1.12.0", "k1"), ("1.12.0", "k3"), ("0.11.4", "kl"),
                                                     ("0.11.4", "abs"), ("0.11.4", "mse"), ("0.11.4", "full")}
    for e in rows:
        assert str(e.direction).startswith("KL[π_old‖π_ref]"), (e.option, e.direction)
        assert "π_old" in str(e.sampler) and "π_θ" not in str(e.sampler), (e.option, e.sampler)
        assert "\\pi_\\theta" not in e.formula_latex and "\\pi_{\\mathrm{old}}" in e.formula_latex, e.formula_latex
    full = next(e for e in rows if e.option == "full")
    assert "gives KL[π_old‖π_ref]" in str(full.caveat)
