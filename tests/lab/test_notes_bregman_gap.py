"""lab.notes.bregman_gap: the captions of the two tangent pictures."""

import math

from lab.notes import bregman_gap as notes


def test_kl_caption():
    assert "every gap, and so every sample of k3, is zero" in notes.kl_caption(0.0, 0.0, None)
    text = notes.kl_caption(0.5, 0.4871, 5)
    assert "The draws' average gap, 0.4871, estimates KL[q‖p] = 0.5" in text
    assert "With 5 categories at most 5 different ratios can occur" in text


def test_f_caption_adds_the_caveats():
    plain = notes.f_caption("pearson", "Pearson χ²", 200, 1.2, 1.718)
    assert "the 200 gaps average 1.2, an estimate of the exact Pearson χ² = 1.718." == plain.split("line; ")[1]
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
