"""lab.notes.bregman_gap: the captions of the two tangent pictures."""

import math

from lab.notes import bregman_gap as notes


def test_kl_caption():
    assert "every gap, and so every sample of k3, is zero" in notes.kl_caption(0.0, 0.0, None)
    text = notes.kl_caption(0.5, 0.4871, 5)
    assert "The draws' average gap, 0.4871, estimates KL[q‖p] = 0.5" in text
    assert "With 5 categories at most 5 different ratios can occur" in text
    one = notes.kl_caption(0.0, 0.0, 1)  # categorical(0) against categorical(3): "With 1 categories" before
    assert "With one category every draw has the same ratio" in one and "categories" not in one


def test_f_caption_adds_the_caveats():
    plain = notes.f_caption("pearson", "Pearson χ²", 200, 1.2, 1.718)
    assert plain.split("line; ")[1].startswith("the 200 gaps average 1.2, an estimate of the exact Pearson χ² = 1.718.")
    assert "convex only up to u = e and concave beyond" in notes.f_caption("k2", "k2", 200, 1.0, 1.0)
    assert "could not be computed" in notes.f_caption("kl_pq", "KL", 200, 1.0, math.nan)
    assert "infinite for this pair" in notes.f_caption("pearson", "χ²", 200, 1.0, math.inf)


def test_tangent_text_chooses_its_verdict_from_the_variances():
    assert "For this pair it cancels 80% of the variance: Var(k3) = 0.2 against Var(k1) = 1." in notes.tangent_text(1.0, 0.2)
    # the page's default, N(0,1) against N(1,1): Var(k3) = e − 2, only 28% less; "most of the noise" was false
    assert "it cancels 28% of the variance" in notes.tangent_text(1.0, math.e - 2)
    assert "cancels most" not in notes.tangent_text(1.0, math.e - 2)
    assert "it cancels more than 99% of the variance" in notes.tangent_text(1.0, 1e-6)
    assert "it cancels less than 1% of the variance" in notes.tangent_text(1.0, 0.999)
    assert "For this pair it adds noise: Var(k3) = ∞" in notes.tangent_text(0.5, math.inf)
    assert "both variances are zero" in notes.tangent_text(0.0, 0.0)
    assert "For this pair" not in notes.tangent_text(math.nan, math.nan)
    assert "Var(k1) is infinite, and so is Var(k3)" in notes.tangent_text(math.inf, math.inf)
    assert "only cancels" not in notes.tangent_text(1.0, 0.2)


def test_the_kink_note_and_caption_in_both_languages():
    import i18n

    en = notes.kink_note("tv")
    assert "slope jumps from -0.5 to 0.5" in en and "whole family of gap estimators" in en
    assert notes.kink_caption("tv").startswith("The V has two slopes at u = 1 (-0.5 and 0.5)")
    with i18n.using("zh"):
        zh, cap = notes.kink_note("tv"), notes.kink_caption("tv")
    assert "-0.5" in zh and "0.5" in zh and "折点" in zh and "（-0.5 和 0.5）" in cap


def test_the_answer_is_formatted_from_the_draws():
    text = notes.answer(200, 0.0012, 3.4567, 0.49, 0.5)
    assert "200" in text and "0.0012" in text and "3.457" in text and "0.49" in text and "0.5" in text
    assert "KL[q‖p]" in text


def test_the_answer_without_an_exact_kl_names_no_kl():
    assert "KL[q‖p] =" not in notes.answer(10, 0.0, 1.0, 0.3, float("nan"))


def test_the_kl_caption_never_promises_a_settling_average_for_an_infinite_kl():
    text = notes.kl_caption(math.inf, 104.8, None)
    assert "no finite value to settle to" in text and "settles" not in text
    assert "(raise the draws and it settles)" not in notes.kl_caption(0.5, 0.42, None)


def test_k2s_caption_does_not_call_its_f_convex():
    text = notes.f_caption("k2", "k2's divergence", 200, 0.1, 0.11)
    assert "(f is convex)" not in text
    assert "(f is convex)" in notes.f_caption("pearson", "Pearson χ²", 200, 0.1, 0.11)
    assert "huge, or near 0" in notes.f_caption("k2", "k2's divergence", 200, 104.8, math.inf)


def test_variances_equal_to_the_digits_shown_are_not_ranked():
    text = notes.tangent_text(2.4940001e7, 2.4940002e7)
    assert "agree to the 4 digits shown, 2.494e+07" in text
    assert "adds noise" not in text and "cancels noise" not in text


def test_a_chi2_past_a_double_is_called_finite_not_infinite():
    """q = N(0, 0.1), p = N(2.7, 0.1), f = Pearson: χ² = e^729 − 1 is finite but above 1.8e308;
    the page said "Var(k3) = ∞ against Var(k1) = 729", "The exact value is infinite for this pair"
    and titled the chart "exact Pearson χ² = ∞"."""
    from kl_core.estimation.distributions import parse
    from kl_core.estimation.exact import lambda_star

    overflow = notes.chi2_overflows(lambda_star(parse("normal(0,0.1)"), parse("normal(2.7,0.1)")).note)
    assert overflow
    text = notes.tangent_text(729.0, math.inf, overflow)
    assert "Var(k3) is finite but too large for a double" in text and "= ∞" not in text
    text = notes.f_caption("pearson", "Pearson χ²", 200, 0.0, math.inf, overflow)
    assert "finite but too large for a double" in text and "infinite" not in text
    assert notes.exact_title("Pearson χ²", math.inf, overflow) == "exact Pearson χ²: too large for a double"
    assert notes.exact_title("Pearson χ²", 1.718, False) == "exact Pearson χ² = 1.718"
    # a true divergence keeps its words
    assert not notes.chi2_overflows(lambda_star(parse("normal(0,1)"), parse("normal(0,1.5)")).note)
    assert "infinite for this pair" in notes.f_caption("pearson", "χ²", 200, 1.0, math.inf, False)


def test_the_kl_caption_says_so_when_no_draw_is_on_the_chart():
    """Same pair: every r ≈ e^{−364} lies left of the chart, yet the caption described the green
    segments vanishing near r = 1."""
    import numpy as np

    u = np.exp(np.array([-364.5, -300.0, -400.0]))
    shown = notes.draws_on_chart(u, 0.05, 5.0)
    assert shown == 0 and notes.draws_on_chart(np.array([0.04, 1.0, 5.0, 6.0]), 0.05, 5.0) == 2
    text = notes.kl_caption(364.5, 364.6, None, on_chart=shown, draws=200)
    assert "None of the 200 draws has its r inside the chart's range, 0.05 to 5" in text
    assert "Every green segment" not in text and "vanish" not in text
    assert "Every green segment is one draw's k3. The segments vanish" in notes.kl_caption(
        0.5, 0.49, None, on_chart=150, draws=200)


# ------------------------------------------------------------------ audit findings (Bregman gap)


def _moments(key: str, q: str, p: str):
    from kl_core.estimation.distributions import parse
    from kl_core.estimation.exact import estimator_moments

    return estimator_moments(key, parse(q), parse(p))


def test_the_f_caption_warns_that_a_finite_sample_can_miss_the_mean():
    """Finding 5: /bregman-gap?p=normal(5,1)&draws=10, f = KL[p‖q]: "the 10 gaps average 0.9977, an
    estimate of the exact KL[p‖q] = 12.5" with no warning. The average is 3.7e-06 standard errors from
    the KL (SE 3.1e+06), so a threshold in standard errors would not warn: the caveat is always said,
    with the exact standard error where the core has the gap's estimator (k3_pq, k2)."""
    import numpy as np

    from kl_core.estimation.bregman import draw_log_ratios, tangent_picture
    from kl_core.estimation.distributions import parse

    logr = draw_log_ratios(parse("normal(0,1)"), parse("normal(5,1)"), 10, 0)
    mean = tangent_picture("kl_pq", logu=logr).mean_gap
    m = _moments("k3_pq", "normal(0,1)", "normal(5,1)")
    se = math.sqrt(m.var / 10)
    assert notes.number(mean) == "0.9977" and m.mean == 12.5 and abs(mean - 12.5) < 1e-4 * se
    text = notes.f_caption("kl_pq", "KL[p‖q]", 10, mean, 12.5, moments=m)
    assert "the 10 gaps average 0.9977, an estimate of the exact KL[p‖q] = 12.5." in text
    assert "a finite set of draws can miss rare, large gaps" in text
    assert f"its standard error here is {notes.number(se)}." in text and notes.number(se) == "3.126e+06"
    # an f whose gap has no estimator in the core (Pearson χ²: 0.9994 against 7.2e+10): the caveat alone
    text = notes.f_caption("pearson", "Pearson χ²", 10, 0.9994, 7.2e10)
    assert text.endswith("The average is unbiased, but a finite set of draws can miss rare, large gaps.")
    # the page's default, Pearson 0.7974 against 1.718: warned too
    assert "can miss rare, large gaps" in notes.f_caption("pearson", "Pearson χ²", 200, 0.7974, 1.718)
    # an infinite variance (p = N(0, 3²): E_q[r²] diverges) has no standard error to quote
    inf = _moments("k3_pq", "normal(0,1)", "normal(0,3)")
    assert math.isfinite(inf.mean) and math.isinf(inf.var)
    text = notes.f_caption("kl_pq", "KL[p‖q]", 200, 0.5, inf.mean, moments=inf)
    assert "one gap's variance is infinite" in text and "standard error here" not in text
    # k2: its own standard error, after the convexity note
    k2 = _moments("k2", "normal(0,1)", "normal(1,1)")
    text = notes.f_caption("k2", "k2's divergence", 200, 0.5794, k2.mean, moments=k2)
    assert text.index("convex only up to u = e") < text.index("standard error here is "
                                                              f"{notes.number(math.sqrt(k2.var / 200))}")
    # at p = q every gap is 0: nothing to miss
    assert "miss" not in notes.f_caption("kl_pq", "KL[p‖q]", 200, 0.0, 0.0, moments=_moments(
        "k3_pq", "normal(0,1)", "normal(0,1)"))
    assert np.isfinite(se)


def test_the_same_distribution_written_two_ways_is_p_equal_q():
    """Finding 6: categorical(0.1,0.2,0.3) and categorical(1.1,1.2,1.3) are one softmax; the page said
    "cancels more than 99% of the variance: Var(k3) = 1.348e-64 against Var(k1) = 1.638e-32" and a KL
    of 8.19e-33, while Control variates calls the pair p = q to double precision (the same test)."""
    import numpy as np

    from kl_core.estimation.control_variates import lambda_parabola
    from kl_core.estimation.distributions import parse
    from lab.notes import control_variates as cv

    two_ways = lambda_parabola(parse("categorical(0.1,0.2,0.3)"), parse("categorical(1.1,1.2,1.3)"))
    # log-ratios from the logits (log_ratio_from_logits): the rounding of two log-softmaxes left a KL of 8e-33
    assert two_ways.true_kl == 0 and cv.pair_note(two_ways, "").kind == "info"  # Control variates: p = q
    assert notes.p_equals_q(two_ways) and notes.p_equals_q(lambda_parabola(parse("normal(0,1)"), parse("normal(0,1)")))
    resolved = lambda_parabola(parse("normal(1e-14,1)"), parse("normal(0,1)"))  # a pair a double resolves
    assert not notes.p_equals_q(resolved) and not notes.p_equals_q(None)
    # shown as the zero it stands for: no "cancels", a KL of 0, every draw at r = 1
    var_k1, var_k3 = (notes.as_shown(True, v) for v in (1.638e-32, 1.348e-64))
    assert var_k1 == var_k3 == 0.0 and "both variances are zero" in notes.tangent_text(var_k1, var_k3)
    logr = notes.as_shown(True, np.array([-2.220446049250313e-16, 0.0]))
    assert not logr.any() and notes.as_shown(False, 0.5) == 0.5
    assert "every gap, and so every sample of k3, is zero" in notes.kl_caption(notes.as_shown(True, 8.19e-33), 0.0, 3)


def test_the_answer_says_every_gap_is_zero_not_from_0_to_0():
    """Finding 7: at p = q the answer read "(from 0 to 0)"."""
    text = notes.answer(200, 0.0, 0.0, 0.0, 0.0)
    assert "every gap is exactly 0" in text and "from 0 to 0" not in text
    assert "(from 0.0012 to 3.457)" in notes.answer(200, 0.0012, 3.4567, 0.49, 0.5)
    assert "(from 0 to 3.457)" in notes.answer(200, 0.0, 3.4567, 0.49, 0.5)  # one draw at r = 1: a range


def test_the_pickers_name_the_roles_without_a_policy():
    """Finding 9: "q — the sampler (old policy)" reads q as PPO's π_old, while the RL pages' KL penalty
    samples from π_θ (lab.notation.policy_mapping); the pickers name the roles only."""
    import inspect

    from lab.notation import policy_mapping
    from lab.picker import distribution_pair

    defaults = inspect.signature(distribution_pair).parameters
    assert (defaults["q_label"].default, defaults["p_label"].default) == ("q — the sampler", "p — the target")
    assert r"q = \pi_\theta" in policy_mapping()
