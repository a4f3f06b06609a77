"""The lessons' registry and its quantities: closed forms, every variant's point, grading."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from kl_core.estimation.distributions import Categorical, Gaussian
from kl_core.lessons import catalog as L
from kl_core.lessons.quantities import compute, prob_log_ratio_above

PHI = NormalDist().cdf
MUS = (0.2, 0.5, 0.8, 1.1, 1.6)


def shift(mu: float, **extra: object) -> dict:
    return {"q": "normal(0,1)", "p": f"normal({mu:g},1)", **extra}


@pytest.mark.parametrize("mu", MUS)
def test_shifted_normals_against_closed_forms(mu: float) -> None:
    u = mu * mu
    p = shift(mu, n=100, lam=0.5)
    assert compute("kl_qp", p) == pytest.approx(u / 2, rel=1e-12)
    assert compute("kl_pq", p) == pytest.approx(u / 2, rel=1e-12)
    assert compute("mean_k3", p) == pytest.approx(u / 2, rel=1e-9)
    assert compute("bias_k2", p) == pytest.approx(u * u / 8, rel=1e-7)
    assert compute("sd_k1", p) == pytest.approx(mu, rel=1e-9)
    assert compute("sd_k2", p) == pytest.approx(math.sqrt(u * u / 2 + u**3 / 4), rel=1e-7)
    assert compute("sd_k3", p) == pytest.approx(math.sqrt(math.expm1(u) - u), rel=1e-7)
    assert compute("neg_share_k1", p) == pytest.approx(PHI(-mu / 2), abs=1e-12)
    assert compute("neg_share_mean_k1", p) == pytest.approx(PHI(-mu * 10 / 2), abs=1e-12)
    assert compute("sd_mean_k1", p) == pytest.approx(mu / 10, rel=1e-9)
    assert compute("lambda_star", p) == pytest.approx(u / math.expm1(u), rel=1e-9)
    var_lam = u * (1 - 2 * 0.5) + 0.25 * math.expm1(u)
    assert compute("sd_k_lambda", p) == pytest.approx(math.sqrt(var_lam), rel=1e-7)
    lam = u / math.expm1(u)
    ratio = (u - 2 * lam * u + lam * lam * math.expm1(u)) / u
    assert compute("var_ratio_lambda_star", p) == pytest.approx(ratio, rel=1e-7)


@pytest.mark.parametrize("sigma", (0.6, 1.5, 2.5))
def test_scaled_normals_against_closed_forms(sigma: float) -> None:
    p = {"q": "normal(0,1)", "p": f"normal(0,{sigma:g})"}
    assert compute("kl_pq", p) == pytest.approx(0.5 * (sigma**2 - 1) - math.log(sigma), rel=1e-10)
    assert compute("kl_qp", p) == pytest.approx(math.log(sigma) + 0.5 / sigma**2 - 0.5, rel=1e-10)
    # log r > 0 ⇔ x² (1 − 1/σ²) / 2 > log σ
    c = math.sqrt(2 * math.log(sigma) / (1 - 1 / sigma**2))
    expected = 2 * PHI(-c) if sigma > 1 else 1 - 2 * PHI(-c)
    assert compute("neg_share_k1", p) == pytest.approx(expected, abs=1e-12)


def test_neg_share_k_lambda_against_sampling() -> None:
    rng = np.random.default_rng(7)
    mu, lam = 1.0, 0.4
    x = rng.standard_normal(400_000)
    logr = mu * x - mu * mu / 2
    share = float(np.mean(-logr + lam * np.expm1(logr) < 0))
    se = math.sqrt(share * (1 - share) / x.size)
    assert abs(compute("neg_share_k_lambda", shift(mu, lam=lam)) - share) < 4 * se
    assert compute("neg_share_k_lambda", shift(mu, lam=1.0)) == 0.0


def test_prob_log_ratio_above_categorical_and_refusals() -> None:
    q, p = Categorical((0.0, 0.0, 0.0)), Categorical((1.0, 0.0, -1.0))
    above = (p.log_probs - q.log_probs) > 0
    assert prob_log_ratio_above(q, p, 0.0) == pytest.approx(float(np.exp(q.log_probs[above]).sum()))
    assert prob_log_ratio_above(Gaussian(0, 1), Gaussian(0, 1), 0.0) == 0.0
    with pytest.raises(ValueError, match="normals or two categoricals"):
        prob_log_ratio_above(Gaussian(0, 1), Categorical((0.0, 1.0)), 0.0)
    with pytest.raises(ValueError, match="level"):
        prob_log_ratio_above(Gaussian(0, 1), Gaussian(1, 1), math.nan)


def test_crossovers() -> None:
    # k1 = k3: μ² = e^{μ²} − 1 − μ²; k1 = k2: μ² = √5 − 1
    u = compute("mu_equal_sd", {"a": "k1", "b": "k3"}) ** 2
    assert math.expm1(u) - 2 * u == pytest.approx(0.0, abs=1e-8)
    assert compute("mu_equal_sd", {"a": "k1", "b": "k2"}) == pytest.approx(math.sqrt(math.sqrt(5) - 1), abs=1e-8)


def test_gradient_sequence_and_doctor_quantities() -> None:
    g = {"k": 6, "t": 1.0}
    assert compute("grad_norm", {**g, "option": "k1"}) == 0.0
    assert compute("grad_target", {**g, "option": "k2"}) == "reverse_kl"
    assert compute("grad_target", {**g, "option": "k3"}) == "forward_kl"
    assert compute("grad_cos_forward", {**g, "option": "k3"}) == pytest.approx(1.0, abs=1e-12)
    s = {"K": 6, "drift": 0.5, "T": 64}
    assert compute("seq_mean_mean_k3", s) == pytest.approx(compute("seq_kl", s) / 64, rel=1e-12)
    assert compute("beta_per_sequence", {"beta": 0.04, "T": 64}) == pytest.approx(0.04 / 64)
    assert compute("kl_where", {"config": "trl_grpo_config.yaml"}) == "none"
    assert compute("kl_coef", {"config": "trl_grpo_config.yaml"}) == 0.0
    assert compute("kl_where", {"config": "verl_rloo_qwen3_8b.sh"}) == "reward"
    with pytest.raises(ValueError, match="quantity"):
        compute("nope", {})


VARIANTS = range(0, 40)


@pytest.mark.parametrize("number", range(1, len(L.LESSONS) + 1))
def test_every_variant_makes_its_point(number: int) -> None:
    les = L.lesson(number)
    assert 4 <= len(les.steps) <= 8
    for s, step in enumerate(les.steps, start=1):
        for v in VARIANTS:
            q = L.question(number, s, v)
            facts = {**q.facts, "answer": q.answer}
            assert step.holds(facts), (number, s, v)
            assert q.quantity in L.vocabulary()
            if q.kind == "numeric":
                assert math.isfinite(q.answer) and q.tolerance > 0
                assert L.grade(q, q.answer).correct
                assert not L.grade(q, q.answer + 2.5 * q.tolerance).correct
            else:
                keys = [k for k, _ in q.choices]
                assert q.answer in keys and len(set(keys)) == len(keys) >= 2
                assert L.grade(q, q.answer).correct
                assert not L.grade(q, next(k for k in keys if k != q.answer)).correct
            assert q.link() == f"/lessons?lesson={number}&step={s}&v={v}"


def test_variant_ranges() -> None:
    """Each variant lies where its lesson says: spot checks of the ranges."""
    for v in VARIANTS:
        assert 0.2 <= L.question(1, 1, v).params["mu"] <= 1.0
        assert L.question(2, 3, v).params["mu"] < 1.12  # k3 narrower than k1
        assert L.question(2, 4, v).params["mu"] > 1.121  # k1 narrower
        assert 0 < L.question(3, 3, v).answer < 1
        q42 = L.question(4, 2, v)
        assert q42.answer > q42.params["kl_qp"]  # p wider than q: KL[p‖q] > KL[q‖p]
        assert L.question(1, 2, v).params["mu"] <= 1.0


def test_variants_are_reproducible_and_vary() -> None:
    assert L.question(2, 3, 17).params == L.question(2, 3, 17).params
    assert len({L.question(1, 1, v).params["p"] for v in range(30)}) > 5


def test_bad_arguments_name_the_parameter() -> None:
    with pytest.raises(ValueError, match="lesson"):
        L.question(8, 1)
    with pytest.raises(ValueError, match="step"):
        L.question(1, 9)
    with pytest.raises(ValueError, match="variant"):
        L.question(1, 1, -1)
    with pytest.raises(ValueError, match="variants"):
        L.all_questions(0)


def test_grade_numbers() -> None:
    q = L.question(1, 1, 3)
    g = L.grade(q, q.answer + q.tolerance / 2)
    assert g.correct and g.error == pytest.approx(q.tolerance / 2)
    assert not L.grade(q, None).correct
    assert not L.grade(q, math.nan).correct


@pytest.mark.parametrize("t", (-1.3, -0.2, 0.4, 2.0))
def test_values_at_one_log_ratio(t: float) -> None:
    r = math.exp(t)
    p = {"logr": t}
    assert compute("k1_at", p) == pytest.approx(-t)
    assert compute("k2_at", p) == pytest.approx(0.5 * t * t)
    assert compute("k3_at", p) == pytest.approx(r - 1 - t)
    assert compute("k3_pq_at", p) == pytest.approx(r * t - (r - 1))


@pytest.mark.parametrize("mu", (0.4, 1.0))
def test_k_lambda_mean_and_k3_pq_spread_by_direct_quadrature(mu: float) -> None:
    assert compute("mean_k_lambda", shift(mu, lam=-0.5)) == pytest.approx(mu * mu / 2, rel=1e-9)
    # Var(k3_pq) on a fine grid of x ~ N(0, 1): an independent check of the quadrature engine
    x = np.linspace(-14, 14, 400_001)
    w = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    t = mu * x - mu * mu / 2
    k = np.exp(t) * t - np.expm1(t)
    mean = np.trapezoid(w * k, x)
    sd = math.sqrt(np.trapezoid(w * (k - mean) ** 2, x))
    assert compute("sd_k3_pq", shift(mu)) == pytest.approx(sd, rel=1e-7)
    assert compute("mean_k3_pq", shift(mu)) == pytest.approx(mu * mu / 2, rel=1e-9)


def test_sequence_spreads_are_consistent() -> None:
    s = {"K": 4, "drift": 0.5, "T": 32}
    assert compute("seq_sd_mean_k3", s) == pytest.approx(compute("seq_sd_sum_k3", s) / 32, rel=1e-12)
    assert compute("seq_mean_sum_k3", s) == pytest.approx(compute("seq_kl", s), rel=1e-9)
    assert compute("seq_mean_rb", s) == pytest.approx(compute("seq_kl", s), rel=1e-9)


#: (lesson, step, the misconception's guess from the question's facts): each must be graded wrong.
MISCONCEPTIONS = [
    (1, 4, lambda q: 0.0),  # "a mean of k1 is never negative"
    (3, 3, lambda q: 1.0),  # λ* is k3's λ
    (3, 5, lambda q: q.facts["k1"]),  # λ*'s negative share is k1's
    (4, 5, lambda q: q.params["k3"]),  # the flipped k3 is the unflipped one
    (2, 2, lambda q: q.facts["mean_k2"]),  # k3's mean is k2's (accepted at μ = 0.5: 0.1328 for 0.125 ± 0.01)
    (3, 2, lambda q: q.answer**2),  # kλ's SD is its variance (accepted at μ = 1.2, λ = 0.25)
]


@pytest.mark.parametrize(("lesson", "step", "guess"), MISCONCEPTIONS,
                         ids=["L1.4", "L3.3", "L3.5", "L4.5", "L2.2", "L3.2"])
def test_the_guess_a_step_argues_against_is_graded_wrong(lesson, step, guess) -> None:
    """Over 600 variants (every setting of these steps' grids): the tolerance is tighter than the
    gap between the answer and the misconception (L4.5 at |log r| = 0.3 graded the unflipped
    k3, 0.009 off, as right)."""
    for v in range(600):
        q = L.question(lesson, step, v)
        assert not L.grade(q, guess(q)).correct, (v, q.params, q.answer, guess(q), q.tolerance)


def test_k2s_spread_names_the_crossings_it_states() -> None:
    """L2.5 said k2's SD equals k3's at k1 = k3's crossing (1.121); k2 = k3 is at 1.2047."""
    q = L.question(2, 5, 0)
    assert q.facts["cross23"] == pytest.approx(compute("mu_equal_sd", {"a": "k2", "b": "k3"}), rel=1e-9)
    assert q.facts["cross23"] == pytest.approx(1.2047, abs=5e-4)
    assert f"past $\\mu \\approx$ {q.facts['cross23']:.3f} k2 is the narrower of the two" in q.explanation


def test_no_sd_step_grades_the_naive_guess_right():
    """Lesson 3 step 2 accepted SD(k1) or SD(k3) for SD(kλ) at 5 of its 24 settings (v0: 0.7 for 0.6654 ±
    0.0466), and lesson 1 step 3 the variance μ² = 0.9025 for the SD 0.95 (on the edge of ± 0.0475)."""
    for v in range(0, L.MAX_VARIANT + 1, 7):
        q = L.question(3, 2, v)
        assert not any(L.grade(q, q.facts[k]).correct for k in ("sd_k1", "sd_k3")), q.params
        q = L.question(1, 3, v)
        assert not L.grade(q, 2 * q.facts["kl"]).correct, q.params
        # L2.3 and L2.5 graded the other step's SD right, and at μ = 0.2 the KL (audit finding)
        k3, k2 = L.question(2, 3, v), L.question(2, 5, v)
        assert not any(L.grade(k3, k3.facts[k]).correct for k in ("sd_k1", "kl")), k3.params
        assert not any(L.grade(k2, k2.facts[k]).correct for k in ("sd_k1", "sd_k3")), k2.params


def test_k3_as_a_loss_says_the_two_gradients_point_alike_only_where_they_do():
    """L5.3 says the two KL gradients 'point alike' near π_ref: true at every variant (cosine ≥ 0.9), and the
    setup names the direction v the policy moved along."""
    for v in range(L.MAX_VARIANT + 1):
        q = L.question(5, 3, v)
        assert q.facts["cos_r"] >= 0.9, q.params
        assert f"$v$ = {q.params['v']}" in q.setup and q.params["v"].count(",") == q.params["k"] - 1


def test_lesson_7_says_which_defaults_the_config_leaves_to_its_release() -> None:
    """trl_grpo_config.yaml sets no beta: its answers (no KL term, coefficient 0) rest on TRL 1.16.0's default
    beta = 0.0, and trl_deepseekmath.py's reverse-KL gradient on use_bias_correction_kl = True (audit finding:
    the setup showed neither)."""
    seen = {}
    for v in range(200):
        q = L.question(7, 3, v)
        seen.setdefault(q.params["config"], q.setup)
    assert "Read as TRL 1.16.0." in seen["trl_grpo_config.yaml"]
    assert "`beta = 0.0`, `use_bias_correction_kl = True`" in seen["trl_grpo_config.yaml"]
    assert "`use_bias_correction_kl = True`" in seen["trl_deepseekmath.py"]
    assert "`beta" not in seen["trl_deepseekmath.py"]  # it sets beta itself


def test_the_toy_chains_setup_describes_the_chains_the_answers_use() -> None:
    """Lesson 6's setup defined neither chain, so its answers could not be worked out (audit finding); the
    chains it now describes are those of (``kl_core.sequences.markov.drift_pair``) to 1e-12."""
    import numpy as np

    from kl_core.sequences.markov import drift_pair

    q = L.question(6, 3, 0)
    k, d = q.params["K"], q.params["drift"]
    assert "1/(1+j)" in q.setup and r"1/(1 + (j - i) \bmod K)" in q.setup and "v_j = 1 - 2j/(K-1)" in q.setup
    j = np.arange(k)
    v = 1 - 2 * j / (k - 1)

    def probs(w):
        w = np.asarray(w, float)
        return w / w.sum(axis=-1, keepdims=True)

    def softmax(a):
        a = np.asarray(a, float)
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    ref_first, ref_trans = probs(1 / (1 + j)), probs(1 / (1 + (j[None, :] - j[:, None]) % k))
    policy, ref = drift_pair(k, d)
    np.testing.assert_allclose(softmax(ref.first), ref_first, rtol=1e-12)
    np.testing.assert_allclose(softmax(ref.transitions), ref_trans, rtol=1e-12)
    np.testing.assert_allclose(softmax(policy.first), probs(ref_first * np.exp(d * v)), rtol=1e-12)
    np.testing.assert_allclose(softmax(policy.transitions), probs(ref_trans * np.exp(d * v)[None, :]), rtol=1e-12)
