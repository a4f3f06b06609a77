"""lab.notes.control_variates: notes, marks and captions follow the exact parabola."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kl_core.estimation.bregman import k_lambda_negative_interval
from kl_core.estimation.control_variates import gain_along_path, lambda_parabola
from kl_core.estimation.distributions import parse
from kl_core.estimation.estimators import k_lambda
from kl_core.estimation.exact import estimator_moments
from lab.format import number, share
from lab.notes import control_variates as notes


def parabola(q: str, p: str):
    return lambda_parabola(parse(q), parse(p))


def test_a_finite_pair_has_no_note_and_a_minimum_caption():
    par = parabola("normal(0,1)", "normal(1,1)")
    assert notes.pair_note(par, "") is None
    assert notes.parabola_note(par) is None
    caption = notes.parabola_caption(par)
    assert f"λ* = {par.lam_star:.3g}" in caption and "KL[q‖p] = 0.5" in caption
    assert notes.gain_text(par) == f"×{par.gain:.4g}"
    lo, hi = notes.parabola_range(par, -1.0, 3.0)
    assert lo <= par.lam_star - 0.3 and hi >= 3.0


@pytest.mark.parametrize(("q", "p"), [
    ("normal(0,1)", "normal(0,1)"),
    ("normal(1e-170,1)", "normal(0,1)"),  # the KL, 5e-341, and both variances underflow to 0
    ("categorical(0.1,0.2,0.3)", "categorical(0.2,0.3,0.4)"),  # the same softmax: only rounding differs
])
def test_p_equal_q_to_double_precision_is_an_info_and_a_flat_parabola(q, p):
    par = parabola(q, p)
    assert par.var_log_r <= notes.ROUNDING_VAR and par.var_r <= notes.ROUNDING_VAR
    assert notes.pair_note(par, "").kind == "info"
    assert "flat at zero" in notes.parabola_caption(par) and "flat at zero" in notes.answer(par)
    assert notes.lam_star_text(par) == "any λ" and not notes.has_one_lam_star(par)  # no "λ = λ*" button
    assert "times as many" not in notes.answer(par)
    shown = notes.as_shown(par)  # drawn and printed as the zero it stands for: a flat line, no λ* mark
    assert shown.var_log_r == shown.var_r == shown.true_kl == 0.0
    assert not np.any(shown.variance(np.linspace(-1.0, 3.0, 9)))
    assert [m.label for m in notes.parabola_marks(shown, 0.5)] == ["λ = 0: k1", "λ = 1: k3", "your λ = 0.5"]
    assert all(m.var == 0.0 for m in notes.parabola_marks(shown, 0.5))


def test_a_pair_a_double_resolves_is_not_called_p_equal_q():
    par = parabola("normal(1e-14,1)", "normal(0,1)")  # log r's spread 1e-14: ten times the rounding bound
    assert par.var_log_r > notes.ROUNDING_VAR
    assert notes.pair_note(par, "") is None and notes.as_shown(par) is par
    # Var(k3) ≈ 5e-57 is below the page's resolution, 1e-24 of Var(log r) = 1e-28: said, not ranked
    assert par.var_k3 == 0.0 and not par.resolved and not notes.has_one_lam_star(par)
    text = notes.answer(par)
    assert "below 1e-52, which is 1e-24 times Var(k1) = 1e-28" in text and "needs" not in text


@pytest.mark.parametrize(("q", "p", "floor"), [
    ("normal(0,1)", "normal(1e-12,1)", "1e-48"),  # Var(k3) = μ⁴/2 = 5e-49: not 0, and not "as good"
    ("categorical(0,0,0,0,0)", "categorical(1e-12,0,0,0,0)", "1.6e-49"),  # r two-valued: gain ∞, not 1
])
def test_variances_below_the_resolution_are_not_called_zero_or_tied(q, p, floor):
    """The answer said "Var(k3) and Var(kλ*) are both 0 to double precision … k3 is already as good
    as kλ*": Var(k3) is 5e-49 (a direct integral resolves it), just under the page's 1e-24 × Var(k1)."""
    par = parabola(q, p)
    text = notes.answer(par)
    assert f"Var(k3) and Var(kλ*) are both below {floor}, which is 1e-24 times Var(k1)" in text
    assert "already as good" not in text and "0 to double precision" not in text
    assert notes.var_k3_text(par) == f"< {floor}"
    assert notes.gain_text(par) == "—" and notes.var_optimal_text(par) == "—"
    assert notes.lam_star_text(par) == "not resolved"


@pytest.mark.parametrize("p", ["normal(0,1.00000001)", "normal(0,1.000000001)", "normal(0,1.00000000001)"])
def test_a_pair_too_close_to_resolve_lambda_star_prints_neither_it_nor_the_gain(p):
    """q = N(0, 1), p = N(0, σ²), σ = 1 + 1e-8 … 1e-11: the page printed λ* = 0.999999993 (exact
    0.99999998) and ×1.467 (exact ≈ 7/3), then "×1, already as good", then "∞ … r takes two values"."""
    par = parabola("normal(0,1)", p)
    text = notes.answer(par)
    assert "Double precision cannot resolve λ* and the gain" in text
    for wrong in ("×", "times as many", "already as good", "two values", "0.99999999"):
        assert wrong not in text
    assert notes.gain_text(par) == "—" and notes.lam_star_text(par) == "not resolved"
    assert not any(m.label.startswith("λ* =") for m in notes.parabola_marks(par, 0.5))
    assert "no ★ is drawn" in notes.parabola_caption(par)
    assert "cannot resolve λ*" in notes.lambda_star_missing(par, -1.0, 3.0)
    # 10× further away the same family is resolved: λ* = 1 − 2θ and the gain ≈ 7/3
    par = parabola("normal(0,1)", "normal(0,1.0000001)")
    assert par.resolved and notes.lam_text(par.lam_star) == "0.9999998"
    assert notes.gain_text(par) == "×2.333"


def test_chi_square_infinite_leaves_only_lambda_zero():
    par = parabola("normal(0,1)", "normal(0,1.5)")
    note = notes.pair_note(par, "")
    assert note.kind == "warning" and r"$\chi^2(p\|q) = \mathrm{Var}_q(r)$ is infinite" in note.text
    assert notes.parabola_note(par)[-1] == "only the point at λ = 0 is finite"
    assert "Only λ = 0 (k1) has a finite variance" in notes.parabola_caption(par)


def test_every_variance_infinite_says_so_with_the_cores_reason():
    par = parabola("t(1,0,1)", "normal(0,1)")
    assert math.isinf(par.var_log_r)
    note = notes.pair_note(par, "the reason")
    assert "Var(log r) is infinite" in note.text and "(the reason)" in note.text
    assert notes.gain_text(par) == "—"
    assert [m.label for m in notes.parabola_marks(par, 0.5)] == ["λ = 0: k1", "λ = 1: k3", "your λ = 0.5"]
    assert notes.parabola_range(par, -1.0, 3.0) == (-1.0, 3.0)


def test_marks_carry_the_exact_variances():
    par = parabola("normal(0,1)", "normal(1,1)")
    marks = {m.label: m for m in notes.parabola_marks(par, 0.5)}
    assert marks["λ = 1: k3"].var == par.var_k3
    assert marks["your λ = 0.5"].var == pytest.approx(float(par.variance(0.5)), rel=1e-15)
    assert any(label.startswith("λ* = ") for label in marks)


@pytest.mark.parametrize("lam", [1.0, -0.5, 0.5, 2.0])
def test_the_profile_caption_names_the_negative_interval(lam):
    interval = k_lambda_negative_interval(lam)
    text = notes.profile_caption(lam, interval, 0.123)
    if lam == 1.0:
        assert "no sample can be negative" in text
    elif lam <= 0:
        assert "every sample with p(x) > q(x) is negative — 12.3%" in text
    else:
        assert "kλ < 0 exactly when" in text and "12.3%" in text
    labels = [c[0] for c in notes.profile_curves(np.array([0.0, 1.0]), lam)]
    assert labels[-2:] == ["k3 (λ = 1)", "k1 (λ = 0)"] and len(labels) == (2 if lam == 1.0 else 3)


def test_profile_curves_are_the_estimators():
    t = np.linspace(-1, 1, 5)
    (_, values, _), *_ = notes.profile_curves(t, 0.5)
    np.testing.assert_array_equal(values, k_lambda(t, 0.5))


def test_histogram_caption():
    assert notes.histogram_caption(0.0, 100) == "No value is negative at this λ."
    assert notes.histogram_caption(0.25, 10_000).startswith("25.0% of the 10,000 values")


@pytest.mark.parametrize("path", ["shift", "scale", "logit"])
def test_gain_captions_follow_the_path(path):
    thetas = notes.PATH_THETAS[path][::15]
    curve = gain_along_path(path, thetas)
    text = notes.gain_caption(path, curve)
    near = int(np.argmin(np.abs(curve.thetas)))
    assert f"×{curve.gain[near]:.4g}" in text
    marker = notes.gain_marker(path, curve)
    assert (marker is not None) == (path == "shift")
    assert path in notes.THETA_TITLES


@pytest.mark.parametrize("path", list(notes.THETA_TITLES))
def test_theta_titles_come_in_lines_that_fit_a_panel(path):
    """One line was wider than a 260-px panel ("μ, the mean of p = N(μ, 1)   (q = N(0, 1))")."""
    lines = notes.theta_title(path)
    assert len(lines) == 2 and all(0 < len(line) <= 40 for line in lines)


def test_path_trend_describes_each_side_from_the_curve():
    from kl_core.estimation.control_variates import gain_along_path

    scale = notes.path_trend(gain_along_path("scale", notes.PATH_THETAS["scale"]))
    assert "For θ > 0, from θ = 0.01 to 0.34, λ\\* goes from 0.98 to 0.0962 and the gain rises" in scale
    assert "From θ = 0.36 on, Var(k3) and so the gain are infinite." in scale
    assert "For θ < 0, from θ = -0.01 to -0.6, λ\\* goes from 1.02 to 2.04 and the gain falls" in scale
    logit = notes.path_trend(gain_along_path("logit", notes.PATH_THETAS["logit"]))
    assert "then falls to" in logit and "then rises to" in logit


def test_the_answer_names_lambda_star_and_the_gain_from_the_numbers():
    par = parabola("normal(0,1)", "normal(1,1)")
    text = notes.answer(par)
    assert f"λ* = {par.lam_star:.3g}" in text
    assert number(par.gain) in text and number(par.var_k3) in text and number(par.var_log_r) in text


@pytest.mark.parametrize(("q", "p"), [("normal(0,1)", "normal(0,1)"), ("t(3,0,1)", "normal(0,1)"),
                                      ("normal(0,1)", "t(3,0,1)")])
def test_the_answer_without_a_finite_parabola_says_why(q, p):
    par = parabola(q, p)
    text = notes.answer(par)
    assert text.startswith("**Answer:**")
    if not (math.isfinite(par.var_log_r) and math.isfinite(par.var_r)) or par.var_log_r == 0.0:
        assert notes.parabola_caption(par) in text


def test_lambda_star_never_prints_as_k3s_1_or_k1s_0_when_it_is_not():
    """q = N(0, 1), p = 0.95 N(0, 1) + 0.05 N(0.05, 1): λ* = 0.99982, which ".3g" printed as "1"
    beside a different variance for k3 (λ = 1)."""
    par = lambda_parabola(parse("normal(0,1)"), parse("mixture(0.95:0:1,0.05:0.05:1)"))
    assert 0.999 < par.lam_star < 1.0
    shown = notes.lam_text(par.lam_star)
    assert float(shown) != 1.0 and abs(float(shown) - par.lam_star) < 1e-4
    assert f"λ* = {shown} has the least variance" in notes.answer(par)
    assert f"λ* = {shown}" in notes.parabola_caption(par)
    assert notes.lam_text(1.0) == "1" and notes.lam_text(0.5) == "0.5" and notes.lam_text(3.47e-10) == "3.47e-10"
    assert float(notes.lam_text(1 - 1e-7)) != 1.0 and float(notes.lam_text(4e-12)) != 0.0


def test_lambda_star_past_twelve_digits_and_at_the_sliders_end_is_printed_as_itself():
    """q = N(0, 1), p = N(1e-7, 1): λ* = 1 − 5e-15, which 12 digits still printed as k3's "1" in the metric, the
    button and the answer.  q = N(0, 2.99477), p = N(0, 1): λ* = 3.002 was said to be "λ* = 3" outside [−1, 3]."""
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(1e-7,1)"))
    assert par.lam_star != 1.0 and abs(par.lam_star - 1.0) < 1e-12
    shown = notes.lam_text(par.lam_star)
    assert float(shown) == par.lam_star and f"λ* = {shown}" in notes.answer(par)
    far = lambda_parabola(parse("normal(0,2.99477)"), parse("normal(0,1)"))
    assert 3.0 < far.lam_star < 3.01
    said = notes.lambda_star_missing(far, -1.0, 3.0)
    assert said is not None and "λ* = 3.002 lies outside" in said, said
    assert notes.lam_text(3.0, also=(-1.0, 3.0)) == "3" and notes.lam_text(-1.0, also=(-1.0, 3.0)) == "-1"


def test_a_tie_to_the_digits_shown_is_said_not_ranked():
    """q = N(0, 1), p = N(5, 1): λ* = 3.5e-10 and Var(kλ*) = 25 - 8.7e-9, which prints as k1's 25."""
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(5,1)"))
    assert number(par.var_optimal) == number(par.var_log_r) != number(par.var_k3)
    assert "k1 is already as good as kλ*" in notes.answer(par)
    caption = notes.parabola_caption(par)
    assert "k1's ● sits there too" in caption and "k3's ▲ higher" in caption
    assert "sit higher" not in caption
    # no tie at Schulman's μ = 1: the ranking stays
    par = lambda_parabola(parse("normal(0,1)"), parse("normal(1,1)"))
    assert "already as good" not in notes.answer(par) and "sit higher on it" in notes.parabola_caption(par)


def test_a_small_but_nonzero_negative_share_is_never_printed_as_0_percent():
    assert share(0.00037) == "0.037%" and share(0.25) == "25.0%"
    assert "0.037% of the 1,000,000 values are negative" in notes.histogram_caption(0.00037, 1_000_000)
    text = notes.profile_caption(0.95, (0.0, 0.1), 0.00037)
    assert "0.037% negative draws" in text and "0.0%" not in text
    text = notes.profile_caption(0.0, (0.0, math.inf), 0.5)
    assert "both terms" not in text and "λ(r − 1) ≤ 0" in text


def test_a_constant_k_lambda_star_is_said_with_an_infinite_gain():
    """Rare-token vocabulary, p's token-7 logit moved: the parabola printed 4.136e-24 and ×1.198e+15."""
    par = lambda_parabola(parse("categorical(2,1,0.5,0,-1,-2,-3,-19.5)"),
                          parse("categorical(2,1,0.5,0,-1,-2,-3,-24.9)"))
    text = notes.answer(par)
    assert "has the least variance, 0 per sample" in text and "needs ∞ times" in text
    assert "Var(kλ*) is 0 to double precision" in text and "r takes two values" in text
    assert notes.gain_text(par) == "∞"


def test_a_chi2_past_a_double_is_not_called_infinite():
    """q = N(0, 0.1), p = N(5, 0.1) (slider ends): χ² = e^{2500} − 1 is finite, every Var(kλ) too."""
    par = lambda_parabola(parse("normal(0,0.1)"), parse("normal(5,0.1)"))
    assert math.isinf(par.var_r) and par.lam_star == 0.0
    for text in (notes.pair_note(par, "").text, notes.answer(par), notes.parabola_caption(par)):
        assert "too large for a double" in text and "is infinite" not in text
        assert "makes the variance infinite" not in text
    # a true divergence keeps its words
    par = lambda_parabola(parse("normal(0,1)"), parse("t(3,0,1)"))
    assert "is infinite" in notes.answer(par) and "too large for a double" not in notes.answer(par)
    assert "p's tails are too heavy" in notes.pair_note(par, "").text


def test_lambda_is_never_printed_as_1_or_0_when_it_is_not():
    """?lam=0.9999: "For λ = 1, kλ < 0 exactly when 0 < log r < 0.0002 … the 0.0% negative draws"."""
    text = notes.profile_caption(0.9999, k_lambda_negative_interval(0.9999), 0.0)
    assert text.startswith("For λ = 0.9999, kλ < 0 exactly when") and "0.0%" not in text
    assert "None of the draws above fell there" in text
    labels = [c[0] for c in notes.profile_curves(np.array([0.0]), 0.9999)]
    assert labels[0] == "kλ, λ = 0.9999"
    par = parabola("normal(0,1)", "normal(1,1)")
    assert notes.parabola_marks(par, 0.9999)[-1].label == "your λ = 0.9999"
    text = notes.profile_caption(-0.0001, k_lambda_negative_interval(-0.0001), 0.0)
    assert text.startswith("For λ = -0.0001 ≤ 0") and "none of the draws above" in text


def test_the_chi2_overflow_note_counts_standard_deviations():
    """It fired for N(0, 0.1) against N(2.7, 0.1), 2.7 apart, saying "Gaussians more than 26.6 apart"."""
    par = parabola("normal(0,0.1)", "normal(2.7,0.1)")
    text = notes.pair_note(par, "").text
    assert "more than 26.6 standard deviations apart" in text and "26.6 apart" not in text
    assert notes.var_k3_text(par) == "too large for a double"
    assert notes.var_lam_text(par, 0.5) == "too large for a double"
    assert notes.var_lam_text(parabola("normal(0,1)", "normal(0,1.5)"), 0.5) == "∞"
    assert notes.gain_text(par) == "> 2.466e+305"  # Var(k3) > 1.8e308 and Var(kλ*) ≤ Var(k1) = 729
    assert notes.chi2_overflows(par.lam_star_note)


def _direct(q: str, p: str, lam: float) -> float | None:
    par = notes.as_shown(parabola(q, p))
    return (estimator_moments("k_lambda", parse(q), parse(p), lam=lam).var
            if notes.needs_direct_var(par, lam) else None)


@pytest.mark.parametrize(("p", "lam", "shown"), [
    ("normal(0,1.0000001)", 1.0, "1.4e-27"),  # the parabola gave 6.394e-24 beside Var(k3) 1.4e-27
    ("normal(0,1.0000001)", "star", "6e-28"),  # and 6.394e-24 beside Var(kλ*) 6e-28
    ("normal(0,1.0000001)", 0.9999999, "8e-28"),  # V* + χ²(λ − λ*)² = 6e-28 + 2e-28
    ("normal(0,1.00000001)", 1.0, "1.4e-31"),  # the parabola gave "0"
])
def test_var_lam_near_p_equal_q_is_integrated_not_the_parabolas_noise(p, lam, shown):
    par = notes.as_shown(parabola("normal(0,1)", p))
    lam = par.lam_star if lam == "star" else lam
    direct = _direct("normal(0,1)", p, lam)
    text = notes.var_lam_text(par, lam, direct)
    assert text == shown, text
    if lam == 1.0:
        assert text == notes.var_k3_text(par)
    mark = notes.parabola_marks(par, lam, direct)[-1]
    assert mark.var == pytest.approx(notes.shown_var_lam(par, lam, direct))
    assert mark.var < 1e-26


def test_var_lam_below_the_resolution_says_so_as_var_k3_does():
    """categorical(0,0,0,0,0) against categorical(1e-12,0,0,0,0) at λ = 1: "0" beside "< 1.6e-49"."""
    q, p = "categorical(0,0,0,0,0)", "categorical(1e-12,0,0,0,0)"
    par = notes.as_shown(parabola(q, p))
    assert notes.var_lam_text(par, 1.0, _direct(q, p, 1.0)) == "< 1.6e-49" == notes.var_k3_text(par)
    lam = 1.0 - 1e-13  # no shortcut: integrated, and below the floor
    assert notes.needs_direct_var(par, lam)
    assert notes.var_lam_text(par, lam, _direct(q, p, lam)) == "< 1.6e-49"


@pytest.mark.parametrize(("lam", "value"), [(0.05, 1.005e307), (-0.05, 1.005e307), (0.2, 1.608e308),
                                           (-0.2, 1.608e308)])
def test_a_var_lam_that_fits_a_double_is_printed_where_chi2_does_not(lam, value):
    """q = N(0, 1), p = N(26.7, 1): Var(kλ) = μ² − 2λμ² + λ²(e^{μ²} − 1) fits a double for
    |λ| ≤ 0.2 but the page said "too large for a double" (the quadrature overflows inside)."""
    par = parabola("normal(0,1)", "normal(26.7,1)")
    mu2 = 26.7**2
    assert par.log_second_moment == pytest.approx(mu2, rel=1e-12)  # log E_q[r²] = μ²
    text = notes.var_lam_text(par, lam)
    assert text == f"{value:.4g}" and float(text) == pytest.approx(value, rel=1e-3)
    assert notes.var_lam_text(par, 0.25) == "too large for a double"
    caption = notes.parabola_caption(par)
    assert "fits in a double only for |λ| below 0.212" in caption and "Only λ = 0" not in caption
    limit = math.exp(0.5 * (math.log(1.7976931348623157e308) - mu2))
    assert 0.211 < limit <= 0.212 and math.isfinite(par.variance_at(0.211))
    assert math.isinf(par.variance_at(0.2115))
    assert "|λ| below 0.212" not in notes.pair_note(par, "").text  # the caption's, said once


def test_lambda_star_is_never_rounded_to_k1s_0_or_k3s_1():
    """λ* printed "1" (p = N(0, 1.0000001²): 0.9999998; p = N(0.001, 1): 0.9999995) and, with χ²
    past a double (p = N(26.7, 1)), "0" for 1.77e-307, with a button duplicating "λ = 0 (k1)"."""
    assert notes.lam_star_text(parabola("normal(0,1)", "normal(0,1.0000001)")) == "0.9999998"
    assert notes.lam_star_text(parabola("normal(0,1)", "normal(0.001,1)")) == "0.9999995"
    par = parabola("normal(0,1)", "normal(26.7,1)")
    assert par.lam_star == 0.0  # the core's value: 0 to double precision in Var(kλ*)
    assert notes.lam_star_text(par) == "1.77e-307"  # 2μ²·e^{−μ²}/2 = μ² e^{−μ²}
    assert float(notes.lam_star_text(par)) == pytest.approx(26.7**2 * math.exp(-(26.7**2)), rel=1e-2)
    labels = [m.label for m in notes.parabola_marks(par, 0.5)]
    assert "λ* = 1.77e-307: least variance" in labels and "λ* = 0: least variance" not in labels
    assert not notes.has_one_lam_star(par)  # no "λ = λ* = 0" button beside "λ = 0 (k1)"
    assert "λ* = 1.77e-307 is positive" in notes.lambda_star_missing(par, -1.0, 3.0)
    far = parabola("normal(0,0.1)", "normal(5,0.1)")  # λ* = 2500 e^{−2500}: below any double
    assert notes.lam_star_text(far) == "4.59e-1083"


@pytest.mark.parametrize("p", ["normal(30,1)", "normal(26.7,1)"])
def test_a_chi2_past_a_double_answer_and_caption_say_different_things(p):
    """?p=normal(30,1): the answer was "**Answer:** " + the chart's caption, word for word, and the
    warning under them said the same |λ| limit, λ* and "k1 is the best λ" a third time."""
    par = notes.as_shown(parabola("normal(0,1)", p))
    answer, caption = notes.answer(par), notes.parabola_caption(par)
    note = notes.pair_note(par, "").text
    assert caption not in answer and answer.removeprefix("**Answer:** ") not in caption
    lam, lim = notes.lam_star_text(par), notes._overflow_limit(par)
    # the answer: which λ, at what variance, and λ*; the caption: what is drawn, and the |λ| limit
    assert "k1 (λ = 0) is the best λ" in answer and number(par.var_log_r) in answer
    assert f"λ* = {lam}" in answer and lim not in answer
    assert "draws k1's ● at λ = 0 alone" in caption and f"|λ| below {lim}" in caption
    assert lam not in caption and "best λ" not in caption
    # the warning: why χ² overflows, and the histograms; neither the limit nor λ* again
    assert "standard deviations apart" in note and lim not in note and lam not in note


def test_lam_text_is_the_one_lambda_formatter():
    """``lam_text`` was a one-line wrapper of ``_lam``; one function is left."""
    assert not hasattr(notes, "_lam")
    assert notes.lam_text(0.99982) == "0.99982" and notes.lam_text(4e-12) == "4e-12"


def test_an_infinite_kl_is_not_said_to_have_unbiased_estimators():
    """q = t(1), p = N(0, 1): KL[q‖p] is infinite, yet the page called every kλ unbiased for it."""
    from kl_core.estimation.control_variates import lambda_parabola
    from kl_core.estimation.distributions import parse

    par = lambda_parabola(parse("t(1)"), parse("normal(0,1)"))
    assert math.isinf(par.true_kl)
    assert "KL[q‖p] itself is infinite here" in notes.answer(par)
    finite = lambda_parabola(parse("normal(0,1)"), parse("t(1)"))  # every λ infinite, KL finite
    assert "itself is infinite" not in notes.parabola_caption(finite)


@pytest.mark.parametrize("lam", [3.0, 2.8, 0.1, 0.5])
def test_the_profile_chart_shows_the_negative_bands_finite_end(lam):
    """At λ = 3 the caption said −2.821 < log r < 0 while the chart stopped at log r = −2.5."""
    lo_band, hi_band = k_lambda_negative_interval(lam)
    lo, hi = notes.profile_range((lo_band, hi_band))
    for end in (lo_band, hi_band):
        if np.isfinite(end):
            assert lo < end < hi
    assert (lo, hi) == (-2.5, 2.5) or lam in (3.0, 2.8, 0.1)
    assert notes.profile_range(None) == (-2.5, 2.5)
