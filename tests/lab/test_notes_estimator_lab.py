"""lab.notes.estimator_lab: warnings from the core's notes, captions and Schulman's table rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kl_core.estimation import sampling_distributions as sampling
from kl_core.estimation.distributions import parse
from kl_core.estimation.estimators import ESTIMATORS
from kl_core.estimation.exact import Moments, estimator_moments, kl, lambda_star
from kl_core.estimation.montecarlo import simulate, target_of
from kl_core.estimation.published import match_published
from lab.format import number
from lab.notes import estimator_lab as notes

KEYS = ("k1", "k2", "k3", "k3_pq")


def setting(q_spec: str, p_spec: str, keys=KEYS, n=200, repeats=20):
    q, p = parse(q_spec), parse(p_spec)
    true_kl, true_pq = kl(q, p), kl(p, q)
    sim = simulate(q, p, n, repeats=repeats, seed=0, keys=keys)
    moments = {k: estimator_moments(k, q, p) for k in keys}
    targets = {k: target_of(k, true_kl, true_pq) for k in keys}
    return q, p, sim, moments, targets, true_kl, true_pq


def _std(values: np.ndarray) -> float:
    """The sample standard deviation (ddof=1) of values whose squares may underflow: scaled first."""
    top = float(np.max(np.abs(values)))
    return float(np.std(values / top, ddof=1)) * top


def test_too_many_draws_names_the_product_and_the_limit():
    assert notes.too_many_draws(1000, 200, 20_000_000) is None
    text = notes.too_many_draws(10_000_000, 100, 20_000_000)
    assert "10,000,000 × 100 = 1,000,000,000 draws" in text and "20,000,000" in text


def test_a_tame_pair_has_no_warning():
    _, _, _, moments, targets, true_kl, true_pq = setting("normal(0,1)", "normal(0.1,1)")
    assert notes.notes(KEYS, targets, moments, {}, true_kl, true_pq) == []


def test_heavy_tails_group_the_infinite_variances_with_the_cores_reason():
    _, _, _, moments, targets, true_kl, true_pq = setting("normal(0,1)", "normal(0,1.5)")
    (note,) = notes.notes(KEYS, targets, moments, {}, true_kl, true_pq)
    assert note.kind == "warning"
    infinite = [k for k in KEYS if math.isinf(moments[k].var)]
    assert "k3" in infinite and "k1" not in infinite
    names = [f"Var({ESTIMATORS[k].name})" for k in infinite]
    head = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    assert note.text.startswith(f"**{head} " + ("are" if len(infinite) > 1 else "is") + " infinite**")
    reason = moments["k3"].note.split(" is infinite: ", 1)[1]
    assert reason in note.text and "E}_q[r^2]" in note.text


def test_an_infinite_kl_is_named_with_the_estimators_that_target_it():
    _, _, _, moments, targets, true_kl, true_pq = setting("normal(0,1)", "t(2,0,1)", keys=("k1", "k3_pq"))
    texts = [n.text for n in notes.notes(("k1", "k3_pq"), targets, moments, {}, true_kl, true_pq)]
    name = ESTIMATORS["k3_pq"].name
    assert any(t.startswith("**KL[p‖q] is infinite**") and f"{name} has no finite value" in t for t in texts)
    assert not any("KL[q‖p] is infinite" in t for t in texts)


def test_failed_moments_and_p_equal_q():
    moments = {"k1": Moments(math.nan, math.nan, "boom")}
    targets = {"k1": ("KL[q‖p]", 0.0)}
    kinds = [(n.kind, n.text) for n in notes.notes(("k1",), targets, moments, {"k1": "boom"}, 0.0, 0.0,
                                                   same_pair=True)]
    assert kinds[0][0] == "warning" and "exact moments of k1" in kinds[0][1] and "(boom)" in kinds[0][1]
    assert kinds[1][0] == "info" and kinds[1][1].startswith("**p = q**")


def test_a_kl_that_underflows_is_not_called_p_equal_q():
    """N(1e-170, 1) against N(0, 1): the KL, 5e-341, rounds to 0, yet log r = 1e-170·x − … is not 0."""
    q, p, sim, moments, targets, true_kl, true_pq = setting("normal(1e-170,1)", "normal(0,1)", keys=("k1", "k2"))
    assert true_kl == 0.0 and q.spec != p.spec
    assert np.any(sim["k1"].samples) and not np.any(sim["k2"].samples)  # ½ log² r underflows too
    (note,) = notes.notes(("k1", "k2"), targets, moments, {}, true_kl, true_pq, same_pair=False)
    assert note.text.startswith("**KL[q‖p] is 0 to double precision**") and "p = q" not in note.text
    k1 = notes.per_sample_caption("k1", sim["k1"], True, False)
    assert "p = q" not in k1 and k1.startswith(f"{sim['k1'].neg_fraction:.1%} of single values")
    assert notes.per_sample_caption("k2", sim["k2"], True, False) == "Every value is 0 to double precision."
    # k1's values, about 1e-170, have a variance that underflows (their std does not): with a target
    # of 0, exact mean 0 and exact variance 0, the answer calls them noise, with no z-score
    assert sim["k1"].samples.size == 4000 and sim["k1"].std == pytest.approx(_std(sim["k1"].samples), rel=1e-9)
    assert sim["k1"].mean != 0.0
    text = notes.answer({k: sim[k] for k in ("k1", "k2")}, 200, 20, moments)
    assert "Noise around 0, not a bias: k1." in text and "Every estimate of k2 is exactly 0" in text
    assert "Off its target" not in text and "Within 2 standard errors" not in text


def test_captions_follow_the_numbers():
    _, _, sim, moments, _, _, _ = setting("normal(0,1)", "normal(1,1)")
    k1 = sim["k1"]
    assert notes.per_sample_caption("k1", k1, False).startswith(f"{k1.neg_fraction:.1%} of single values")
    assert notes.per_sample_caption("k3", sim["k3"], False).startswith("Never negative (0% below 0)")
    assert notes.per_sample_caption("k3", sim["k3"], True, True).startswith("With p = q")
    m = moments["k2"]
    approx = sampling.batch_mean_normal(m.mean, m.var, 200)
    assert "centred at 0.625, not at KL[q‖p]" in notes.estimate_caption("k2", m, approx, "KL[q‖p]")
    m3 = moments["k3"]
    assert "centred on the truth" in notes.estimate_caption(
        "k3", m3, sampling.batch_mean_normal(m3.mean, m3.var, 200), "KL[q‖p]")
    inf = sampling.batch_mean_normal(0.1, math.inf, 200)
    assert notes.estimate_caption("k3", m3, inf, "KL[q‖p]").startswith("No curve: Var(k3) is infinite")
    assert "variance zero" in notes.estimate_caption("k3", m3, sampling.batch_mean_normal(0, 0, 5), "")
    assert "could not be computed" in notes.estimate_caption("k3", m3, None, "")
    text = notes.running_caption({k: sim[k] for k in ("k1", "k3")}, moments, 200)
    assert text.startswith("At n = 200: k1 ") and " · k3 " in text and "infinite" not in text


def test_table_rows_are_the_cores_figures_with_schulmans_column():
    q, p, sim, moments, _, _, _ = setting("normal(0,1)", "normal(0.1,1)", keys=("k1", "k2", "k3"))
    published = match_published(q, p)
    figures, absolute = notes.table_rows({k: sim[k] for k in ("k1", "k2", "k3")}, moments, 4000, published)
    assert [r["estimator"] for r in figures["stdev/true"]] == ["k1", "k2", "k3"]
    assert [r["Schulman"] for r in figures["stdev/true"]] == ["20", "1.42", "1.42"]
    # his printed figure sits beside "exact", which it is read against: on a phone both are in view
    assert list(figures["bias/true"][0])[:3] == ["estimator", "exact", "Schulman"]
    k3 = figures["bias/true"][2]
    exact_bias, _ = sampling.exact_relative_figures(moments["k3"].mean, moments["k3"].var, sim["k3"].target)
    assert k3["exact"] == exact_bias and k3["MC"] == sim["k3"].bias_over_true
    assert absolute[0]["mean (MC)"] == sim["k1"].mean and absolute[0]["target"] == "KL[q‖p]"
    assert absolute[2]["stdev (exact)"] == pytest.approx(moments["k3"].std, rel=1e-15)
    assert "Schulman" in notes.table_intro(4000, 0, True) and "4,000 draws (seed 0)" in notes.table_intro(4000, 0, False)
    assert "∞:" in notes.relative_caption("stdev/true", True)
    assert notes.relative_caption("bias/true", False) == "(mean − true) / true: zero for an unbiased estimator."


def test_infinite_variance_leaves_the_mc_standard_errors_blank():
    q, p, sim, moments, _, _, _ = setting("normal(0,1)", "normal(0,1.5)", keys=("k1", "k3"))
    figures, absolute = notes.table_rows({k: sim[k] for k in ("k1", "k3")}, moments, 4000, None)
    assert math.isnan(figures["stdev/true"][1]["MC SE"]) and math.isnan(absolute[1]["mean (MC SE)"])
    assert not math.isnan(figures["stdev/true"][0]["MC SE"])
    assert "Schulman" not in figures["bias/true"][0]


def test_the_estimator_line_says_what_its_mean_is():
    assert "exactly" in notes.estimator_mean_line("k3", 1.0)
    assert "close to the KL when p ≈ q" in notes.estimator_mean_line("k2", 1.0)
    assert "Here λ = 0.25." in notes.estimator_mean_line("k_lambda", 0.25)


# ---------------------------------------------------------------- error bars and λ*


def _checks(q_spec, p_spec, keys, n):
    from kl_core.estimation.reliability import error_bar_check

    q, p = parse(q_spec), parse(p_spec)
    return {k: error_bar_check(k, q, p, n) for k in keys}


def test_schulmans_pairs_get_no_error_bar_warning():
    for p_spec in ("normal(0.1,1)", "normal(1,1)"):
        _, _, sim, *_ = setting("normal(0,1)", p_spec, keys=("k1", "k2", "k3"), n=1000, repeats=2)
        checks = _checks("normal(0,1)", p_spec, ("k1", "k2", "k3"), 1000)
        assert notes.error_bar_notes(checks, {k: sim[k] for k in checks}) == []


def test_a_huge_kurtosis_gets_a_warning_with_both_sds():
    q, p, sim, moments, *_ = setting("normal(0,1)", "normal(3,1)", keys=("k1", "k3"), n=1000, repeats=2)
    checks = _checks("normal(0,1)", "normal(3,1)", ("k1", "k3"), 1000)
    results = {k: sim[k] for k in checks}
    (note,) = notes.error_bar_notes(checks, results)  # k1 = −log r is Gaussian here: fine
    assert note.kind == "warning"
    assert "±SE of k3 can't be trusted at N = 1,000" in note.text
    assert "Exact SD {sd}".format(sd=f"{math.sqrt(moments['k3'].var):.4g}") in note.text
    sample_sd = sim["k3"].running_se[-1] * math.sqrt(1000)
    assert f"is {sample_sd:.4g}" in note.text
    # the closing sentence follows this run: its sample SD against the exact one
    assert ("too narrow" in note.text) == (sample_sd < math.sqrt(moments["k3"].var))
    assert "understate" not in note.text
    caption = notes.running_caption(results, moments, 1000, checks)
    assert "band of k3 can't be trusted at this N" in caption and "too narrow" not in caption
    approx = sampling.batch_mean_normal(moments["k3"].mean, moments["k3"].var, 1000)
    assert "narrower" in notes.estimate_caption("k3", moments["k3"], approx, "KL[q‖p]", checks["k3"])
    assert "narrower" not in notes.estimate_caption("k1", moments["k1"], approx, "KL[q‖p]", checks["k1"])
    # with the R estimates, the caption says what this run's bars did, from their sd against σ/√N
    for scale, says in ((0.5, "Here they do: the bars' sd is"), (2.0, "In this run they do not")):
        estimates = moments["k3"].mean + scale * approx.se * np.array([-1.0, 1.0] * 100)
        text = notes.estimate_caption("k3", moments["k3"], approx, "KL[q‖p]", checks["k3"], estimates=estimates)
        sd = float(np.std(estimates, ddof=1))
        assert says in text and f"{number(sd)} against σ/√N = {number(approx.se)}" in text
    # 0.2 % narrower from 200 estimates is noise (an sd is uncertain by about 5 % there): not "Here they do"
    estimates = moments["k3"].mean + 0.998 * approx.se * np.array([-1.0, 1.0] * 100) * math.sqrt(199 / 200)
    text = notes.estimate_caption("k3", moments["k3"], approx, "KL[q‖p]", checks["k3"], estimates=estimates)
    assert "Here they do" not in text and "less than the noise of an sd from this many estimates" in text
    figures, _ = notes.table_rows(results, moments, 2000, None, checks)
    trusted = {row["estimator"]: row["SE trusted"] for row in figures["bias/true"]}
    assert trusted == {"k1": True, "k3": False}


def test_an_infinite_variance_is_left_to_its_own_warning():
    _, _, sim, *_ = setting("t(3,0,1)", "normal(0,1)", keys=("k1", "k3"), n=1000, repeats=2)
    checks = _checks("t(3,0,1)", "normal(0,1)", ("k1", "k3"), 1000)
    assert not any(c.reliable for c in checks.values())
    assert notes.error_bar_notes(checks, {k: sim[k] for k in checks}) == []


def test_lambda_star_line_says_why_there_is_no_button():
    from kl_core.estimation.exact import lambda_star

    assert notes.lambda_star_line(lambda_star(parse("normal(0,1)"), parse("normal(1,1)")), -1, 2) is None
    text = notes.lambda_star_line(lambda_star(parse("t(3,0,1)"), parse("normal(0,1)")), -1, 2)
    assert text.startswith("There is no λ*") and "no λ helps" in text
    off = notes.lambda_star_line(lambda_star(parse("normal(0,1)"), parse("normal(0.01,1)")), -1, 0.5)
    assert off is not None and "outside the slider's range" in off


def test_lambda_star_just_past_the_sliders_end_is_not_printed_as_that_end():
    """An audit: q = laplace(0,1), p = normal(0,1.1753817): λ* = 2.000000117, printed "λ* = 2 is outside" a [−1, 2]
    slider (7 digits were not enough)."""
    from kl_core.estimation.exact import lambda_star

    star = lambda_star(parse("laplace(0,1)"), parse("normal(0,1.1753817)"))
    assert 2.0 < star.value < 2.000001
    text = notes.lambda_star_line(star, -1, 2)
    shown = text.split("λ* = ")[1].split(" is outside")[0]
    assert float(shown) > 2.0, text


def test_a_spread_from_three_estimates_is_not_called_about_as_wide():
    """An audit: with R = 2 or 3 the noise of an sd is over 100%, so every narrower run was "about as wide as the
    curve" (sd 1.894 against σ/√N = 8.5e4)."""
    text = notes._untrusted_spread(np.array([1.0, 3.0, 5.2]), 8.486e4)
    assert "about as wide" not in text and "too uncertain" in text and "With only 3 estimates" in text
    many = notes._untrusted_spread(np.linspace(0.0, 1.0, 200), 10.0)
    assert "Here they do" in many


def test_the_preset_line_links_its_source():
    from kl_core.estimation.presets import PRESETS

    small = PRESETS["schulman-small"]
    line = notes.preset_line(small.title, small.blurb, small.source)
    assert line.startswith("**Schulman's small-KL case (μ = 0.1).** True KL 0.005")
    assert line.endswith("*([J. Schulman, Approximating KL Divergence (2020)]"
                         "(http://joschu.net/blog/kl-approx.html))*")
    lab = PRESETS["laplace-gaussian"]
    assert notes.preset_line(lab.title, lab.blurb, lab.source).endswith("*(This lab)*")


def test_the_cores_reasons_are_shown_in_the_runs_language():
    import i18n
    from kl_core.estimation.exact import lambda_star

    for q_spec, p_spec, en, zh in [
        ("t(3,0,1)", "normal(0,1)", "q's tail is too heavy", "q 的尾部太重"),
        ("normal(0,1)", "normal(0,1.5)", "grows faster than q decays", "增长得比 q 衰减得快"),
    ]:
        _, _, _, moments, targets, true_kl, true_pq = setting(q_spec, p_spec)
        english = notes.notes(KEYS, targets, moments, {}, true_kl, true_pq)[0]  # the variances; then k2's mean
        with i18n.using("zh"):
            chinese = notes.notes(KEYS, targets, moments, {}, true_kl, true_pq)[0]
        assert en in english.text and "积分在 x → +∞ 时发散" in chinese.text and zh in chinese.text
    with i18n.using("zh"):
        text = notes.lambda_star_line(lambda_star(parse("t(3,0,1)"), parse("normal(0,1)")), -1, 2)
    assert "λ* 无定义" in text and "no λ helps" not in text


def test_the_overflow_note_typesets_its_example():
    _, _, _, moments, targets, true_kl, true_pq = setting("normal(0,1)", "normal(40,1)", keys=("k3",))
    assert "E_q[r²] = e^{μ²}" in moments["k3"].note  # the core's plain text, for the command line
    (note,) = notes.notes(("k3",), targets, moments, {}, true_kl, true_pq)
    assert "too large for a double" in note.text
    assert r"$\mathbb{E}_q[r^2] = e^{\mu^2}$" in note.text and "E_q[" not in note.text


def _answer_for(q: str, p: str, n: int = 1_000, repeats: int = 50, keys=("k1", "k2", "k3")):
    sim = simulate(parse(q), parse(p), n, repeats=repeats, seed=0, keys=keys)
    results = {k: sim[k] for k in keys}
    return results, notes.answer(results, n, repeats)


def test_the_answer_quotes_the_negative_shares_and_spreads_of_the_run():
    results, text = _answer_for("normal(0,1)", "normal(0.1,1)")
    assert f"k1 {results['k1'].neg_fraction:.1%}" in text and "k3 0.0%" in text
    for r in results.values():
        assert f"{r.name} {number(float(r.batch_means.std(ddof=1)))}" in text


def test_the_answer_puts_each_average_on_or_off_target_from_its_error_bar():
    results, text = _answer_for("normal(0,1)", "normal(1,1)", n=200, repeats=500)
    for r in results.values():
        on = abs(r.mean - r.target) <= 2 * r.std / math.sqrt(200 * 500)
        where = text.split("Within 2 standard errors of its target:")[-1].split(".")[0] if on else \
            text.split("Off its target by more than 2 standard errors:")[-1]
        assert r.name in where
    # k2 is biased for KL[q‖p] at μ = 1: log r ~ N(−½, 1), so E[k2] = ½(1 + ¼) = 0.625 against 0.5.
    assert "Off its target" in text and "k2 (" in text


def test_the_error_bar_warning_follows_the_runs_own_sample_sd():
    """At Schulman's μ = 1 with N = 100, k3's ±SE is untrusted; some seeds' sample SD is above the
    exact SD, others' below, and the warning says which this run is (never "understates" blindly)."""
    q, p = parse("normal(0,1)"), parse("normal(1,1)")
    check = _checks("normal(0,1)", "normal(1,1)", ("k3",), 100)
    assert not check["k3"].reliable
    exact = check["k3"].exact_sd
    seen = set()
    for seed in range(40):
        sim = simulate(q, p, 100, repeats=2, seed=seed, keys=("k3",))
        (note,) = notes.error_bar_notes(check, {"k3": sim["k3"]})
        sample_sd = sim["k3"].running_se[-1] * math.sqrt(100)
        below = sample_sd < exact
        seen.add(below)
        assert ("too narrow" in note.text) == below, seed
        assert ("can't be relied on" in note.text) == (not below), seed
    assert seen == {True, False}  # both branches occur at this setting


def test_the_answer_gives_no_error_bar_to_an_infinite_variance():
    """Heavy tails: k3's exact variance is infinite, so it is never "within 2 standard errors"."""
    _, _, sim, moments, *_ = setting("t(3,0,1)", "normal(0,1)", keys=("k1", "k3"), n=1000, repeats=20)
    assert math.isinf(moments["k3"].var) and all(math.isfinite(sim[k].std) for k in ("k1", "k3"))
    text = notes.answer({k: sim[k] for k in ("k1", "k3")}, 1000, 20, moments)
    assert all(math.isinf(moments[k].var) for k in ("k1", "k3"))  # −log r ~ x²/2 has no 4th moment under t3
    assert text.endswith("No error bar (an infinite variance or target): k1, k3.")
    assert "Within 2 standard errors" not in text and "Off its target" not in text
    # without the exact moments the sample SEs look finite: the old answer said "within"
    assert "No error bar" not in notes.answer({k: sim[k] for k in ("k1", "k3")}, 1000, 20)


def test_an_overflowed_variance_is_not_called_infinite():
    """q = N(−5, 0.1), p = N(5, 0.1) (both slider ends): Var(k3) is finite but past a double."""
    q_spec, p_spec = "normal(-5,0.1)", "normal(5,0.1)"
    _, _, sim, moments, targets, true_kl, true_pq = setting(q_spec, p_spec, keys=("k3",), n=100, repeats=2)
    assert math.isinf(moments["k3"].var)
    approx = sampling.batch_mean_normal(moments["k3"].mean, moments["k3"].var, 100)
    caption = notes.estimate_caption("k3", moments["k3"], approx, "KL[q‖p]")
    assert "too large for a double" in caption and "is infinite" not in caption
    running = notes.running_caption({"k3": sim["k3"]}, moments, 100)
    assert "too large for a double" in running and "is infinite" not in running
    (note,) = notes.notes(("k3",), targets, moments, {}, true_kl, true_pq)
    assert "too large for a double" in note.text and "do not settle" not in note.text


def test_an_infinite_mean_against_a_finite_kl_is_named():
    """q = t(3), p = N(0, 1): KL[q‖p] = 0.6455 is finite but E_q[½ log² r] is not."""
    _, _, _, moments, targets, true_kl, true_pq = setting("t(3,0,1)", "normal(0,1)", keys=("k1", "k2"))
    assert math.isfinite(true_kl) and math.isinf(moments["k2"].mean)
    texts = [n.text for n in notes.notes(("k1", "k2"), targets, moments, {}, true_kl, true_pq)]
    (endless,) = [t for t in texts if "The mean of k2 is infinite" in t]
    assert "KL[q‖p] it is compared with is finite" in endless
    assert "q's tail is too heavy" in endless


def test_an_off_target_average_says_how_many_standard_errors_off():
    _, _, sim, moments, *_ = setting("normal(-5,0.1)", "normal(5,0.1)", keys=("k1",), n=1000, repeats=20)
    r = sim["k1"]
    text = notes.answer({"k1": r}, 1000, 20, moments)
    z = abs(r.mean - r.target) / (r.std / math.sqrt(20_000))
    if z > 2:
        assert f"{z:.3g} standard errors off" in text
    else:
        assert "Within 2 standard errors of its target: k1." in text


def test_a_lambda_star_just_past_the_slider_end_is_not_printed_as_the_end():
    from kl_core.estimation.exact import LambdaStar

    text = notes.lambda_star_line(LambdaStar(2.00002, ""), -1, 2)
    assert "λ* = 2.00002 is outside" in text
    assert "λ* = 3.5 is outside" in notes.lambda_star_line(LambdaStar(3.5, ""), -1, 2)


def test_a_fourth_moment_past_a_double_is_told_by_the_cores_message_not_its_words():
    """q = N(0,1), p = N(12,1): Var(k3) = e^{144} − … is finite, E[(k3 − mean)⁴] ≈ e^{864} overflows."""
    from kl_core.estimation.reliability import FOURTH_MOMENT_OVERFLOW, error_bar_check

    q, p, sim, *_ = setting("normal(0,1)", "normal(12,1)", keys=("k3",), n=100, repeats=2)
    check = error_bar_check("k3", q, p, 100)
    assert math.isinf(check.kurtosis) and check.note.params["reason"] == FOURTH_MOMENT_OVERFLOW
    (note,) = notes.error_bar_notes({"k3": check}, {"k3": sim["k3"]})
    assert "fourth moment is too large for a double" in note.text


# ---------------------------------------------------------------- the audit's settings (every sentence true)


def _page(q_spec, p_spec, keys=("k1", "k2", "k3"), n=1000, repeats=200, lam=1.0):
    """What the page computes at its defaults N = 1,000, R = 200: runs, moments, checks at N and at N · R."""
    from kl_core.estimation.reliability import error_bar_check

    q, p = parse(q_spec), parse(p_spec)
    sim = simulate(q, p, n, repeats=repeats, seed=0, lam=lam, keys=keys)
    lams = {k: (lam if ESTIMATORS[k].parameter else None) for k in keys}
    moments = {k: estimator_moments(k, q, p, lam=lams[k]) for k in keys}
    at_n = {k: error_bar_check(k, q, p, n, lams[k]) for k in keys}
    at_total = {k: error_bar_check(k, q, p, n * repeats, lams[k]) for k in keys}
    return {k: sim[k] for k in keys}, moments, at_n, at_total


def _caption(key, results, moments, checks, n=1000):
    m = moments[key]
    approx = sampling.batch_mean_normal(m.mean, m.var, n)
    return notes.estimate_caption(key, m, approx, results[key].target_name, checks[key],
                                  estimates=results[key].batch_means, target=results[key].target)


def test_a_kl_of_zero_gives_noise_around_zero_not_an_estimate_off_target():
    """One normal written as a mixture of two copies: KL 0 and every exact variance 0, yet log r is
    rounding noise (about 1e-17). The old answer said "k1 (-4.832e-17 …, 204 standard errors off)" and
    the caption "every estimate is exactly the same" beside a spread of 3.6e-18."""
    results, moments, at_n, at_total = _page("normal(0,1)", "mixture(0.5:0:1,0.5:0:1)")
    assert all(moments[k].mean == 0.0 and moments[k].var == 0.0 for k in results)
    text = notes.answer(results, 1000, 200, moments, at_total)
    assert "standard errors off" not in text and "Off its target" not in text
    assert "Noise around 0, not a bias: k1, k2, k3." in text
    size = max(float(np.abs(r.batch_means).max()) for r in results.values())
    assert f"within about {number(size)} of 0" in text
    for k, r in results.items():
        assert np.ptp(r.batch_means) > 0
        caption = _caption(k, results, moments, at_n)
        assert "exactly the same" not in caption
        assert f"differ, by up to about {number(float(np.ptp(r.batch_means)))}" in caption
    # N(1e-170, 1): the estimates of k1 differ by about 1e-171, but their squares underflow
    results, moments, at_n, at_total = _page("normal(0,1)", "normal(1e-170,1)")
    k1 = results["k1"].batch_means
    assert k1.std(ddof=1) == 0.0 and np.ptp(k1) > 0
    text = notes.answer(results, 1000, 200, moments, at_total)
    sd = float((k1 / np.abs(k1).max()).std(ddof=1) * np.abs(k1).max())
    assert f"standard deviation of k1 {number(sd)}," in text and "k1 0," not in text
    assert "Noise around 0, not a bias: k1." in text and "Every estimate of k2, k3 is exactly 0" in text
    assert "exactly the same" not in _caption("k1", results, moments, at_n)
    assert _caption("k2", results, moments, at_n) == "No curve: every estimate is exactly the same (variance zero)."


def test_the_error_bar_warning_gives_no_relative_error_of_the_sd():
    """sqrt((κ − 1)/4N) is a first-order figure, over 0.35 wherever the warning shows: it said "its SD
    with about 3.06" (Laplace vs Gaussian, k2) and "5.752e+40" (N(0, 0.1) vs N(0.7, 0.1), k3)."""
    for q_spec, p_spec, key, old in (("laplace(0,1)", "normal(0,1)", "k2", "3.06"),
                                     ("normal(0,0.1)", "normal(0.7,0.1)", "k3", "5.752e+40")):
        results, _, at_n, _ = _page(q_spec, p_spec, repeats=2)
        (note,) = notes.error_bar_notes(at_n, results)
        assert at_n[key].sd_relative_se > 0.35 and number(at_n[key].sd_relative_se) == old
        assert "its SD with" not in note.text and old not in note.text
        assert f"relative standard error of about {number(at_n[key].var_relative_se)};" in note.text


def test_an_untrusted_error_bar_puts_an_estimator_neither_on_nor_off_target():
    """N(0, 0.1) vs N(0.7, 0.1) at N = 1,000, R = 200: κ(k3) = 1.3e85, so "SE trusted" is unticked;
    the old answer said "k3 (23.53 against KL[q‖p] = 24.5, 30.5 standard errors off)"."""
    results, moments, _, at_total = _page("normal(0,0.1)", "normal(0.7,0.1)")
    assert not at_total["k3"].reliable and at_total["k3"].kurtosis > 1e85
    assert at_total["k1"].reliable and at_total["k2"].reliable
    text = notes.answer(results, 1000, 200, moments, at_total)
    assert "k3 (" not in text
    assert text.endswith("No trustworthy error bar (at N · R = 200,000 draws the kurtosis is too large, "
                         "or the fourth moment is infinite or too large for a double; see “SE trusted” "
                         "in §4): k3.")
    assert "Within 2 standard errors of its target: k1." in text and "k2 (324.7 against" in text


def test_an_error_bar_check_lost_to_subnormal_moments_is_not_called_a_large_kurtosis():
    """N(1e-160, 1) vs N(0, 1): k2's values (~5e-321) and moments are subnormal, so no kurtosis can be
    worked out (not even from logs) and the check is not "reliable".  The answer put k2 among the bars
    whose "kurtosis is too large, or the fourth moment is infinite or too large for a double"."""
    results, moments, _, at_total = _page("normal(1e-160,1)", "normal(0,1)", keys=("k1", "k2"))
    assert not at_total["k2"].reliable and math.isnan(at_total["k2"].kurtosis)
    assert at_total["k1"].reliable and at_total["k1"].kurtosis == pytest.approx(3.0, rel=1e-9)
    text = notes.answer(results, 1000, 200, moments, at_total)
    assert "No trustworthy error bar" not in text
    assert "No error bar (a standard error below the smallest normal double): k2." in text


def test_an_unchecked_error_bar_with_a_normal_standard_error_is_said_so():
    """The answer's own rule, apart from any one pair: a check with no kurtosis (NaN) and a standard error
    that a double resolves puts the estimator on no side of its target, for that reason."""
    from kl_core.estimation.reliability import ErrorBarCheck

    results, moments, _, at_total = _page("normal(0,1)", "normal(1,1)", keys=("k1",), repeats=20)
    unchecked = {"k1": ErrorBarCheck(False, "no check", 1.0, math.nan, 20_000)}
    text = notes.answer(results, 1000, 20, moments, unchecked)
    assert "Within 2 standard errors" not in text and "Off its target" not in text
    assert text.endswith("No error bar check (the variance or fourth moment is below the smallest normal "
                         "double, and the kurtosis could not be worked out from their logs): k1.")


def test_a_variance_past_a_double_is_not_called_infinite_in_the_answer_and_tables():
    """q = N(−5, 0.1), p = N(5, 0.1): Var(k3) is finite but overflows; it was "an infinite variance"."""
    results, moments, _, at_total = _page("normal(-5,0.1)", "normal(5,0.1)", repeats=20)
    assert notes.variance_overflowed(moments["k3"]) and not notes.variance_overflowed(moments["k1"])
    text = notes.answer(results, 1000, 20, moments, at_total)
    assert "No error bar (a variance too large for a double): k3." in text and "infinite variance" not in text
    caption = notes.relative_caption("stdev/true", False, True)
    assert "too large for a double" in caption and "is infinite" not in caption
    both = notes.relative_caption("stdev/true", True, True)
    assert "the exact variance is infinite, or the figure itself is too large for a double" in both
    assert "infinite, or too large for a double" in notes.relative_caption("bias/true", True, True)
    assert "∞: the exact variance is infinite." in notes.relative_caption("stdev/true", True, False)
    assert "infinite or too large for a double" in notes.SE_TRUSTED


def test_an_unbiased_looking_curve_is_not_said_to_miss_the_kl():
    """p = N(0, 9.111162): E[k2] = KL to 2.7e-9 relative, both print as 1.716: it said "centred at 1.716,
    not at KL[q‖p]"."""
    results, moments, at_n, _ = _page("normal(0,1)", "normal(0,9.111162)", keys=("k2",), repeats=2)
    gap = abs(moments["k2"].mean - results["k2"].target)
    assert 0 < gap / results["k2"].target < 3e-9
    caption = _caption("k2", results, moments, at_n)
    assert "not at" not in caption
    assert f"centred at 1.716, which agrees with KL[q‖p] to the digits shown (they differ by {gap:.2g})" in caption
    results, moments, at_n, _ = _page("normal(0,1)", "normal(1,1)", keys=("k2",), repeats=2)
    assert "centred at 0.625, not at KL[q‖p]." in _caption("k2", results, moments, at_n)


def test_a_small_negative_share_is_not_printed_as_zero():
    """N(0, 0.1) vs N(0.7, 0.1): 54 of 200,000 values of k1 are negative, 0.027% (it said 0.0%)."""
    results, moments, _, at_total = _page("normal(0,0.1)", "normal(0.7,0.1)", keys=("k1",))
    assert round(results["k1"].neg_fraction * 200_000) == 54
    assert "negative for k1 0.027% of the draws" in notes.answer(results, 1000, 200, moments, at_total)
    caption = notes.per_sample_caption("k1", results["k1"], False)
    assert caption.startswith("0.027% of single values are negative")


def test_the_n_an_error_bar_needs_is_rounded_up_with_separators():
    """p = N(1.0448089868389996, 1): 2(κ − 1) = 1000.3 for k3, so N = 1,000 is short; it said "N ≥ 1000"."""
    results, _, at_n, _ = _page("normal(0,1)", "normal(1.0448089868389996,1)", keys=("k3",), repeats=2)
    assert 1000 < 2 * (at_n["k3"].kurtosis - 1) < 1001
    (note,) = notes.error_bar_notes(at_n, results)
    assert "a trustworthy ±SE needs N ≥ 1,001." in note.text
    results, _, at_n, _ = _page("normal(0,0.1)", "normal(0.7,0.1)", keys=("k3",), repeats=2)
    need = 2 * (at_n["k3"].kurtosis - 1)
    (note,) = notes.error_bar_notes(at_n, results)
    shown = note.text.split("needs N ≥ ")[1].split(". ")[0]
    assert float(shown) >= need and shown == "2.647e+85"


def test_the_per_sample_intro_names_only_estimators_negative_in_this_run():
    """It said "a single value of k1 or kλ can be [negative]", false for kλ at λ = 1 (it is k3) and at p = q."""
    results, *_ = _page("normal(0,1)", "normal(1,1)", keys=("k_lambda",), repeats=2, lam=1.0)
    text = notes.per_sample_intro(results, 2000, 2000)
    assert results["k_lambda"].neg_fraction == 0.0
    assert text.endswith("A KL is never negative, and in this run no single value is either.")
    results, *_ = _page("normal(0,1)", "normal(0,1)", keys=("k1", "k_lambda"), repeats=2, lam=0.5)
    assert "no single value is either" in notes.per_sample_intro(results, 2000, 2000)
    results, *_ = _page("normal(0,1)", "normal(1,1)", keys=("k1", "k3", "k_lambda"), repeats=2, lam=0.5)
    assert notes.per_sample_intro(results, 2000, 1000).endswith(
        "(a uniform subsample of 1,000 is binned). A KL is never negative, but in this run single values "
        "of k1, kλ are.")


def test_mc_against_exact_is_promised_only_where_the_se_is_trusted():
    assert "so where **SE trusted** is ticked, MC should lie within about 2 MC SE" in notes.table_intro(10, 0, False)
    assert "Where “SE trusted” is ticked, the MC column should agree" in notes.WHAT_TO_NOTICE


def test_the_per_sample_intro_names_a_subsample_only_where_there_is_one():
    """N = 1,000, R = 20: "of all 20,000 draws (a uniform subsample of 20,000 is binned)"."""
    results, *_ = _page("normal(0,1)", "normal(1,1)", keys=("k1", "k3"), repeats=2, lam=0.5)
    text = notes.per_sample_intro(results, 20_000, 20_000)
    assert "subsample" not in text
    assert text.startswith("The per-sample values $k(x_i)$ of all 20,000 draws are binned. A KL is never")
    assert "(a uniform subsample of 20,000 is binned)" in notes.per_sample_intro(results, 40_000, 20_000)


def test_the_se_of_a_tiny_variance_does_not_underflow_to_0():
    """q = N(0, 1), p = N(1e-161, 1): k1's caption said "SE of one estimate σ/√N = 0" (σ²/N underflows)
    while the answer gave k1's spread 3.54e-163."""
    results, moments, at_n, _t = _page("normal(0,1)", "normal(1e-161,1)", keys=("k1",), repeats=2)
    var = moments["k1"].var  # μ² = 1e-322, a subnormal double (the core gives 9e-323)
    assert 0.0 < var < 1e-321 and var / 1000 == 0.0  # σ²/N underflows
    approx = sampling.batch_mean_normal(moments["k1"].mean, var, 1000)
    assert approx.se == math.sqrt(var) / math.sqrt(1000) > 1e-163
    text = _caption("k1", results, moments, at_n)
    assert f"σ/√N = {number(approx.se)};" in text and "σ/√N = 0;" not in text


def test_a_gap_the_digits_hide_is_printed_with_two_digits_where_it_is_resolved():
    """p = N(1e-3, 1): k2's exact gap μ⁴/8 = 1.25e-13 hides behind 4 digits; p = N(1e-7, 1): the gap, 1.25e-29, is
    2.5e-15 of the KL, below the precision the exact moments are integrated to (it was printed 1.262e-29; at
    μ = 1e-9 the table's bias/true, μ²/4 = 2.5e-19, was rounding, 1.9e-16)."""
    results, moments, at_n, _t = _page("normal(0,1)", "normal(1e-3,1)", keys=("k2",), repeats=2)
    assert "to the digits shown (they differ by 1.3e-13)" in _caption("k2", results, moments, at_n)  # 1.25000…e-13
    results, moments, at_n, _t = _page("normal(0,1)", "normal(1e-7,1)", keys=("k2",), repeats=2)
    text = _caption("k2", results, moments, at_n)
    assert "to the precision of the integration" in text and "differ by" not in text
    figures, _ = notes.table_rows(results, moments, 2000, None)
    assert math.isnan(figures["bias/true"][0][notes.column_name("exact")])
    assert "agrees with the KL to the precision of the integration (1e-12" in notes.relative_caption(
        "bias/true", False, False, figures["bias/true"])


def test_exact_figures_below_the_smallest_normal_double_are_not_printed():
    """q = N(1e-161, 1), p = N(0, 1): the page stopped on a ZeroDivisionError in §4 (the kurtosis
    behind the MC SE of stdev divided by m2² = 0); above it, it printed KL = 4.941e-323 (it is 5e-323),
    λ* = 1.111 (it is 1) and a normal curve from Var(k1) = 9e-323 (it is μ² = 1e-322); the table would
    have said k2's bias/true is -0.2 (it is μ²/4)."""
    keys = ("k1", "k2", "k3")
    q, p, sim, moments, targets, true_kl, true_pq = setting("normal(1e-161,1)", "normal(0,1)", keys=keys)
    assert notes.unresolved(true_kl) and notes.unresolved(moments["k1"].var)
    assert abs(moments["k1"].var / 1e-322 - 1) > 0.05  # the core's subnormal Var(k1) is off
    figures, absolute = notes.table_rows({k: sim[k] for k in keys}, moments, 4000, None)  # no exception
    for rows in figures.values():
        for row in rows:  # every relative figure divides by the subnormal KL: all blank
            assert all(math.isnan(row[notes.column_name(c)]) for c in ("exact", "MC", "MC SE"))
    for row in absolute:
        for col in ("true value", "mean (exact)", "stdev (exact)"):
            assert math.isnan(row[notes.column_name(col)])
    # k1's MC stdev (~1e-161) has a variance below the smallest normal double, but is one itself: shown
    assert absolute[0][notes.column_name("stdev (MC)")] == pytest.approx(_std(sim["k1"].samples), rel=1e-9)
    assert notes.exact_text(true_kl) == "< 2.225e-308" and notes.exact_text(0.5) == "0.5"
    star = lambda_star(q, p)
    assert number(star.value) != "1"  # the core's λ* from subnormal numbers
    assert notes.lambda_star_text(star) == "not resolved" and not star.resolved
    assert notes.lambda_star_line(star, -1, 2).startswith("No button sets λ = λ*: λ* = (KL[p‖q] + KL[q‖p])")
    assert notes.normal_curve(moments["k1"], 1000) is None
    caption = notes.estimate_caption("k1", moments["k1"], None, "KL[q‖p]")
    assert "below the smallest normal double" in caption and "could not be computed" not in caption
    texts = [n.text for n in notes.notes(keys, targets, moments, {}, true_kl, true_pq)]
    (text,) = [t for t in texts if "smallest normal double" in t]
    assert "KL[q‖p], Var(k1)" in text and "KL[p‖q]" not in text  # k3_pq not shown: its KL not named


def test_a_variance_that_underflows_to_0_is_not_printed_as_a_stdev_of_0():
    """q = N(1e-100, 1), p = N(0, 1): Var(k2) ≈ μ⁴/2 = 5e-401 rounds to 0, and §4 printed k2's
    stdev/true as 0, exact and MC (it is √2); k1's figures are normal doubles and stay."""
    keys = ("k1", "k2")
    q, p, sim, moments, targets, true_kl, true_pq = setting("normal(1e-100,1)", "normal(0,1)", keys=keys)
    assert moments["k2"].var == 0.0 and not notes.unresolved(true_kl)
    assert notes.variance_unresolved(moments["k2"]) and not notes.variance_unresolved(moments["k1"])
    # k2's values (~1e-200) square to 0, but their std is summed on a power-of-two scale: resolved
    assert not notes.mc_std_underflows(sim["k2"]) and not notes.mc_std_underflows(sim["k1"])
    figures, _ = notes.table_rows({k: sim[k] for k in keys}, moments, 4000, None)
    k1, k2 = figures["stdev/true"]
    assert k1[notes.column_name("exact")] == pytest.approx(2e100, rel=1e-6)
    assert math.isnan(k2[notes.column_name("exact")])
    assert k2[notes.column_name("MC")] == pytest.approx(_std(sim["k2"].samples) / true_kl, rel=1e-9)
    # the sample sd of χ²₁/2 over 4,000 draws: its relative SE is √((15 − 1)/(4·4000)) ≈ 0.03
    assert k2[notes.column_name("MC")] == pytest.approx(math.sqrt(2), rel=4 * 0.03)
    assert notes.lambda_star_text(lambda_star(q, p)) == "1" and lambda_star(q, p).resolved
    # a variance of exactly 0 where the values are not tiny is a zero, not an underflow
    assert not notes.variance_unresolved(Moments(mean=0.5, var=0.0))


def test_a_standard_deviation_that_fits_is_shown_where_only_the_variance_is_past_a_double():
    """q = N(0,1), p = N(30,1): Var(k3) = e^{900} − 901 is past a double, σ ≈ e^{450} is not. §4 showed
    σ and stdev/true as ∞, and the notes said "(shown as ∞)"; now they show e^{450} and e^{450}/450."""
    keys = ("k1", "k3", "k3_pq")
    _, _, sim, moments, targets, true_kl, true_pq = setting("normal(0,1)", "normal(30,1)", keys=keys,
                                                            n=100, repeats=2)
    assert all(math.isinf(moments[k].var) and math.isfinite(moments[k].log_var) for k in ("k3", "k3_pq"))
    figures, absolute = notes.table_rows({k: sim[k] for k in keys}, moments, 200, None)
    h = notes.column_name
    for row, abs_row, key in zip(figures["stdev/true"], absolute, keys, strict=True):
        m = moments[key]
        sd = math.sqrt(m.var) if key == "k1" else math.exp(0.5 * m.log_var)
        assert abs_row[h("stdev (exact)")] == pytest.approx(sd, rel=1e-12)
        assert row[h("exact")] == pytest.approx(sd / targets[key][1], rel=1e-12)
        assert math.isnan(row[h("MC SE")]) == (key != "k1")  # still no SE: it needs a variance in a double
    assert figures["stdev/true"][1][h("exact")] == pytest.approx(math.exp(450.0) / 450.0, rel=1e-10)
    (note,) = notes.notes(keys, targets, moments, {}, true_kl, true_pq)
    assert note.text.startswith("**Var(k3) and Var(k3 (KL[p‖q])) are too large for a double**:")
    assert "shown as ∞" not in note.text
    assert "Their square roots, the per-sample standard deviations, fit in a double: §4 shows them." in note.text
    caption = _caption("k3", {k: sim[k] for k in keys}, moments, dict.fromkeys(keys), n=100)
    assert caption.startswith("No curve: Var(k3) is too large for a double, and no N you can draw")
    running = notes.running_caption({k: sim[k] for k in keys}, moments, 100)
    assert "The variances of k3, k3 (KL[p‖q]) are too large for a double: those bands" in running
    assert "shown as ∞" not in caption + running
    stdev = notes.relative_caption("stdev/true", False, True)
    assert "worked out from its logarithm" in stdev and "∞: the figure itself is too large" in stdev
    # on the page the caption explains only what the table shows: no ∞ in either table here
    figures, _ = notes.table_rows({k: sim[k] for k in keys}, moments, 200, None)
    for fig, rows in figures.items():
        shown = notes.relative_caption(fig, False, True, rows)
        assert "∞:" not in shown and "*None*: no standard error" in shown
        assert notes.relative_format(rows) == ("%.4g" if fig == "stdev/true" else "%.4f")


def test_a_standard_deviation_past_a_double_too_is_still_shown_as_infinite():
    """q = N(−5, 0.1), p = N(5, 0.1): log Var(k3) = 10⁴, so σ = e^{5000} is past a double as well."""
    keys = ("k3",)
    _, _, sim, moments, targets, true_kl, true_pq = setting("normal(-5,0.1)", "normal(5,0.1)", keys=keys,
                                                            n=100, repeats=2)
    assert moments["k3"].log_var == pytest.approx(1e4, rel=1e-12)
    figures, absolute = notes.table_rows({"k3": sim["k3"]}, moments, 200, None)
    assert math.isinf(figures["stdev/true"][0][notes.column_name("exact")])
    assert math.isinf(absolute[0][notes.column_name("stdev (exact)")])
    (note,) = notes.notes(keys, targets, moments, {}, true_kl, true_pq)
    assert note.text.startswith("**Var(k3) is too large for a double (shown as ∞)**")


def test_a_group_where_only_some_standard_deviations_fit_names_both():
    from kl_core import OVERFLOW_NOTE
    from kl_core.validation import Message

    def past(name, log_var):
        note = Message("{what} is reported as inf: {why}", what=f"Var({name})", why=OVERFLOW_NOTE)
        return Moments(700.0, math.inf, note, log_var)

    moments = {"k3": past("k3", 1400.0), "k3_pq": past("k3 (KL[p‖q])", 1430.0)}  # σ: e^{700}, e^{715}
    targets = {"k3": ("KL[q‖p]", 700.0), "k3_pq": ("KL[p‖q]", 700.0)}
    (note,) = notes.notes(("k3", "k3_pq"), targets, moments, {}, 700.0, 700.0)
    assert note.text.startswith("**Var(k3) and Var(k3 (KL[p‖q])) are too large for a double**:")
    assert ("The per-sample standard deviation, the square root, fits in a double for k3 (§4 shows it), "
            "but not for k3 (KL[p‖q]) (shown as ∞)." in note.text)


def test_the_table_captions_explain_only_what_the_table_shows():
    """q = N(0,1), p = N(30,1): the bias/true caption explained *Infinity*, which that table never shows
    (the means are finite); a stdev/true of 6.0e192 was formatted "%.4f" (197 characters) on the page."""
    keys = ("k1", "k3")
    _, _, sim, moments, _, _, _ = setting("normal(0,1)", "normal(30,1)", keys=keys, n=100, repeats=2)
    figures, _ = notes.table_rows({k: sim[k] for k in keys}, moments, 200, None)
    bias = notes.relative_caption("bias/true", False, True, figures["bias/true"])
    assert "∞:" not in bias and "*None*: no standard error" in bias
    assert notes.relative_format(figures["bias/true"]) == "%.4f"
    assert notes.relative_format(figures["stdev/true"]) == "%.4g"
    # near q nothing is blank or infinite: the captions say only what the figures are
    _, _, sim, moments, _, _, _ = setting("normal(0,1)", "normal(0.1,1)", keys=keys, n=100, repeats=2)
    figures, _ = notes.table_rows({k: sim[k] for k in keys}, moments, 200, None)
    for fig, rows in figures.items():
        assert "*" not in notes.relative_caption(fig, False, False, rows)
        assert notes.relative_format(rows) == "%.4f"


def test_the_answer_does_not_call_subnormal_estimates_a_spread_of_0():
    """N(1e-161,1) vs N(0,1): k2's estimates are multiples of 4.9e-324, here all equal, and the answer
    said they "scatter with a standard deviation of ... k2 0"; k1's estimates (~1e-163) are normal doubles."""
    keys = ("k1", "k2")
    q, p, sim, moments, targets, true_kl, true_pq = setting("normal(1e-161,1)", "normal(0,1)", keys=keys,
                                                              n=1000, repeats=50)
    assert notes.unresolved(float(np.max(np.abs(sim["k2"].batch_means))))
    text = notes.answer({k: sim[k] for k in keys}, 1000, 50, moments)
    bm = sim["k1"].batch_means  # ~1e-163: their squares underflow, so scale first
    k1_sd = float(np.std(bm / np.max(np.abs(bm)), ddof=1)) * float(np.max(np.abs(bm)))
    assert f"a standard deviation of k1 {number(k1_sd)}, k2 < 2.225e-308." in text


def test_the_running_caption_gives_the_se_of_values_whose_squares_underflow():
    """N(1e-170,1) vs N(0,1): k1's values (~1e-170) differ, but their squares underflow to 0, and the
    caption under the running means read "k1 … (SE 0)", later "(SE —)"; the moments now keep a
    power-of-two scale, so the SE is σ/√200 with σ the values' own standard deviation."""
    keys = ("k1",)
    q, p, sim, moments, targets, true_kl, true_pq = setting("normal(1e-170,1)", "normal(0,1)", keys=keys)
    se = sim["k1"].running_se[-1]
    assert se == pytest.approx(_std(sim["k1"].samples[:200]) / math.sqrt(200), rel=1e-9)
    text = notes.running_caption({"k1": sim["k1"]}, moments, 200)
    assert f"(SE {number(se)})" in text and "No SE" not in text


def test_the_running_caption_says_why_a_subnormal_standard_deviation_has_no_se():
    keys = ("k2",)
    q, p, sim, moments, *_ = setting("normal(1e-160,1)", "normal(0,1)", keys=keys)  # k2 ~ 1e-320
    assert sim["k2"].std_unresolved
    text = notes.running_caption({"k2": sim["k2"]}, moments, 200)
    assert "(SE —)" in text and "No SE for k2: its standard deviation is below the smallest normal double." in text
    q, p, sim, moments, *_ = setting("normal(0,1)", "normal(1,1)", keys=keys)
    assert "(SE —)" not in notes.running_caption({"k2": sim["k2"]}, moments, 200)


def test_the_running_se_of_values_near_1e_161_is_not_0():
    """N(1e-161,1) vs N(0,1): Var(k1) ≈ μ² = 1e-322 is subnormal, and var / n underflowed to 0;
    the SE is √Var/√n ≈ 1e-161/√200, to the few digits a subnormal keeps."""
    q, p, sim, *_ = setting("normal(1e-161,1)", "normal(0,1)", keys=("k1",))
    assert sim["k1"].running_se[-1] == pytest.approx(1e-161 / math.sqrt(200), rel=0.25)


def test_lambda_star_past_a_double_is_not_shown_as_zero():
    """At p = N(30, 1) λ* = μ²/(e^{μ²} − 1) ≈ 1e-388 > 0: the metric read '0' (audit finding); μ = 26 keeps its digits."""
    from kl_core.estimation.distributions import parse

    q = parse("normal(0,1)")
    far = lambda_star(q, parse("normal(30,1)"))
    assert far.value == 0.0 and notes.lambda_star_text(far) == "≈ 0"
    near = lambda_star(q, parse("normal(26,1)"))
    assert near.value == pytest.approx(26**2 / math.expm1(26**2), rel=1e-6)
    assert notes.lambda_star_text(near) == notes.number(near.value)


def test_what_to_notice_is_shown_only_beside_the_rows_it_reads():
    """It discusses k1's, k2's and k3's rows; with keys kλ and k3_pq it was shown beside tables without them."""
    assert notes.what_to_notice_applies(("k1", "k2", "k3"), zero_kl=False)
    assert notes.what_to_notice_applies(("k1", "k2", "k3", "k_lambda"), zero_kl=False)
    assert not notes.what_to_notice_applies(("k_lambda", "k3_pq"), zero_kl=False)
    assert not notes.what_to_notice_applies(("k1", "k3"), zero_kl=False)
    assert not notes.what_to_notice_applies(("k1", "k2", "k3"), zero_kl=True)


def test_the_running_caption_speaks_of_several_bands_in_the_plural():
    """'Var(k1, k2, k3) is infinite: that band is unreliable' spoke of three bands as one (audit finding)."""
    _, _, sim, moments, _, _, _ = setting("t(1,0,1)", "normal(0,1)", keys=("k1", "k2", "k3"))
    several = notes.running_caption({k: sim[k] for k in ("k1", "k2", "k3")}, moments, 200)
    assert "The variances of k1, k2, k3 are infinite: those bands are unreliable, and the means jump" in several
    one = notes.running_caption({"k1": sim["k1"]}, moments, 200)
    assert "Var(k1) is infinite: that band is unreliable, and the mean jumps" in one


def test_one_infinite_variance_is_spoken_of_in_the_singular():
    """Only Var(k3) is infinite: "These estimators … Their means" read as if others were meant too."""
    _, _, _, moments, targets, true_kl, true_pq = setting("normal(0,1)", "normal(0,1.5)", keys=("k1", "k3"))
    (note,) = notes.notes(("k1", "k3"), targets, moments, {}, true_kl, true_pq)
    assert note.text.startswith("**Var(k3) is infinite**")
    assert "This estimator contains" in note.text and "Its mean is still finite" in note.text
    assert "These estimators" not in note.text and "Their means" not in note.text


def test_k2_is_near_unbiased_only_where_neither_tail_is_heavier():
    """With q heavier-tailed than p (Laplace q, normal p) k2's bias is 3.5 times the KL, although p has no
    heavier tails than q: the registry's summary asks for neither tail heavier than the other."""
    from kl_core.estimation.distributions import Gaussian, Laplace
    from kl_core.estimation.exact import estimator_moments, kl

    q, p = Laplace(0, 1), Gaussian(0, 1)
    bias_over_true = (estimator_moments("k2", q, p).mean - kl(q, p)) / kl(q, p)
    assert bias_over_true > 3.0
    assert "neither has heavier tails than the other" in ESTIMATORS["k2"].summary
    assert "neither has heavier tails than the other" in notes.WHAT_TO_NOTICE


def test_a_target_zero_only_in_a_double_is_said_to_be_zero_only_there():
    """An audit: p = normal(1e-170, 1): "Every estimate of k2, k3 … is exactly 0, and so is the target", which is
    5e-341 (0 only in a double)."""
    keys = ("k2", "k3")
    q, p, sim, moments, targets, true_kl, true_pq = setting("normal(0,1)", "normal(1e-170,1)", keys=keys)
    text = notes.answer({k: sim[k] for k in keys}, 200, 20, moments)
    assert "and so is the target to double precision" in text, text
