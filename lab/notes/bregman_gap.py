"""What the Bregman gap page says about its pictures (no streamlit)."""

from __future__ import annotations

import math
import sys

import numpy as np

from i18n import N_, _, ngettext
from kl_core.estimation.control_variates import LambdaParabola
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.exact import Moments
from lab.format import from_log, number
from lab.notes import control_variates
from lab.notes.control_variates import chi2_overflows

__all__ = ["K2_CONVEXITY", "answer", "as_shown", "chi2_overflows", "draws_on_chart",
           "exact_title", "f_caption", "kink_caption", "kink_note", "kl_caption", "p_equals_q", "tangent_text"]

#: The caveat under k2's picture: f(u) = ½ log² u has f″(u) = (1 − log u)/u².
K2_CONVEXITY = N_(
    "(½ log² u is convex only up to u = e and concave beyond, so this f bends the rule; its "
    "gap is still ≥ 0 because its tangent at 1 is the line zero and ½ log² u ≥ 0.)"
)


def p_equals_q(par: LambdaParabola | None) -> bool:
    """p = q to double precision, by the Control variates page's test (Var(log r) and Var(r) at most
    :data:`lab.notes.control_variates.ROUNDING_VAR`): the same distribution written two ways
    (``categorical(0.1,0.2,0.3)`` and ``categorical(1.1,1.2,1.3)``) as well as written the same.
    False where the parabola could not be computed (``None``)."""
    return par is not None and control_variates.p_equals_q(par)


def as_shown(same: bool, value):
    """``value`` (a number, or the draws' log-ratios) as the page shows it: where p = q to double
    precision (:func:`p_equals_q`), the rounding noise (KL 8.2e-33, log r = −2.2e-16) set to the zero it
    stands for, as the Control variates page does (:func:`lab.notes.control_variates.as_shown`)."""
    if not same:
        return value
    return np.zeros_like(value) if isinstance(value, np.ndarray) else 0.0


def answer(draws: int, min_gap: float, max_gap: float, mean_gap: float, true_kl: float) -> str:
    """The page's answer, from the draws on screen: every gap is ≥ 0, and they average to the KL.

    ``min_gap`` can be a rounding error below zero only if the core's gap is computed
    carelessly; it is formatted, never assumed.  Where every gap is 0 (every draw has r = 1,
    as at p = q) it says so instead of a range "from 0 to 0".
    """
    if min_gap == 0.0 and max_gap == 0.0:
        text = _("**Answer:** every gap is exactly 0: each of the {n:,} draws has r = 1, where the "
                 "curve log r touches its tangent r − 1.").format(n=draws)
    else:
        text = _("**Answer:** each of the {n:,} draws gives a gap ≥ 0 (from {lo} to {hi}), because the "
                 "curve log r never rises above its tangent r − 1.").format(
            n=draws, lo=number(min_gap), hi=number(max_gap))
    if math.isfinite(true_kl):
        text += " " + _("Their mean, {mean}, estimates KL[q‖p] = {kl}.").format(
            mean=number(mean_gap), kl=number(true_kl))
    return text


def draws_on_chart(u: np.ndarray, lo: float, hi: float) -> int:
    """How many draws' ratios ``u`` lie on a chart whose x-range is [lo, hi] (the rest are not drawn)."""
    u = np.asarray(u, float)
    return int(np.count_nonzero(np.isfinite(u) & (u >= lo) & (u <= hi)))


def exact_title(name: str, value: float, overflow: bool = False) -> str:
    """The f picture's second title line: the exact D_f, or that it is finite but past a double."""
    if overflow and math.isinf(value):
        return _("exact {name}: too large for a double").format(name=name)
    return _("exact {name} = {value}").format(name=name, value=number(value))


def tangent_text(var_k1: float, var_k3: float, chi2_overflow: bool = False) -> str:
    """Under the k3 formulas: what the tangent term r − 1 does to the mean and to the noise.

    ``var_k1``, ``var_k3`` are the exact per-sample variances of k1 and k3 for the pair
    shown (NaN if they could not be computed).  Var(k3) − Var(k1) = χ²(p‖q) −
    2(KL[p‖q] + KL[q‖p]) is negative while p is close to q and can be positive (or
    infinite) further away, so the sentence about this pair is chosen from the numbers.
    ``chi2_overflow``: χ²(p‖q) is finite but past a double (:func:`chi2_overflows`), so an
    infinite ``var_k3`` stands for a finite value above ≈1.8e308.
    """
    text = _(
        "The tangent term averages to zero under q, so it adds no bias. As p comes close to q and "
        "has no heavier tails than q, it cancels a growing share of the noise of −log r, nearly all "
        "of it in the limit; otherwise it can add noise instead, because "
        "Var(k3) − Var(k1) = χ²(p‖q) − 2(KL[p‖q] + KL[q‖p])."
    )
    if var_k1 == 0.0 and var_k3 == 0.0:  # p = q
        pair = _("With p = q both variances are zero.")
    elif math.isnan(var_k1) or math.isnan(var_k3):
        pair = ""
    elif math.isinf(var_k1):
        pair = _("For this pair Var(k1) is infinite, and so is Var(k3).")
    elif math.isinf(var_k3) and chi2_overflow:
        pair = _("For this pair it adds noise: Var(k3) is finite but too large for a double (above "
                 "≈1.8e308), against Var(k1) = {k1}.")
    elif number(var_k3) == number(var_k1) and var_k3 != var_k1:
        pair = _("For this pair the two variances agree to the 4 digits shown, {k1}.")
    elif var_k3 < var_k1:
        pair = _("For this pair it cancels {share} of the variance: Var(k3) = {k3} against Var(k1) = "
                 "{k1}.")
    elif var_k3 > var_k1:
        pair = _("For this pair it adds noise: Var(k3) = {k3} against Var(k1) = {k1}.")
    else:
        pair = _("For this pair the two variances are equal, {k1}.")
    if pair:
        share = _cancelled(1.0 - var_k3 / var_k1) if 0.0 < var_k1 < math.inf else ""
        text += " " + pair.format(k3=number(var_k3), k1=number(var_k1), share=share)
    return text + " " + _(
        "The tangent term is the control variate of the *Control variates* page with λ = 1, and "
        "the picture shows why no other λ keeps every gap ≥ 0: tilt the line and it crosses the "
        "curve."
    )


def _cancelled(share: float) -> str:
    """A share in (0, 1) as a whole percent, never rounded to 0% or 100%."""
    if f"{share:.0%}" == "100%":
        return _("more than 99%")
    if f"{share:.0%}" == "0%":
        return _("less than 1%")
    return f"{share:.0%}"


def kl_caption(true_kl: float, mean_gap: float, categories: int | None, on_chart: int | None = None,
               draws: int = 0, u_range: tuple[float, float] = (0.05, 5.0)) -> str:
    """Under the KL[q‖p] picture: what the green segments are, and their average.

    ``categories`` is K for a categorical pair (its draws pile up on K ratios), else None.
    ``on_chart`` is how many of the ``draws`` have r inside the chart's ``u_range``
    (:func:`draws_on_chart`; None: not counted): with none there, no green segment shows.
    """
    if true_kl == 0.0:
        text = _(
            "With p = q every draw has r = 1, where the tangent touches the curve: every gap, and "
            "so every sample of k3, is zero."
        )
    else:
        if on_chart == 0:
            lead = _(
                "None of the {n:,} draws has its r inside the chart's range, {lo} to {hi}, so no "
                "green segment (one draw's k3) shows; the thick purple one is your r."
            ).format(n=draws, lo=number(u_range[0]), hi=number(u_range[1]))
        elif math.isinf(true_kl):
            lead = _("Every green segment is one draw's k3; the thick purple one is your r.")
        else:
            lead = _(
                "Every green segment is one draw's k3. The segments vanish where r is near 1 (there "
                "p(x) ≈ q(x) and the tangent hugs the curve) and grow on both sides; the thick "
                "purple one is your r."
            )
        if math.isinf(true_kl):
            tail = _(
                "Here KL[q‖p] is infinite: the draws' average gap, {mean}, has no finite value to "
                "settle to, and grows as rarer, larger gaps are drawn."
            ).format(mean=number(mean_gap))
        else:
            tail = _(
                "The draws' average gap, {mean}, estimates KL[q‖p] = {kl}: unbiased, but a finite "
                "set of draws can miss rare, large gaps."
            ).format(mean=number(mean_gap), kl=number(true_kl))
        text = lead + " " + tail
    if categories is not None:
        text += " " + ngettext(
            "With one category every draw has the same ratio: the draws pile up on one dot.",
            "With {k} categories at most {k} different ratios can occur: the draws pile up on them "
            "(bigger dot = more draws).", categories
        ).format(k=categories)
    return text


def _standard_error(draws: int, moments: Moments | None) -> float:
    """The log of the standard error of the mean of ``draws`` gaps, from the gap estimator's exact
    moments (``Moments.log_std``, finite also where Var is past a double); NaN where unknown
    (no estimator, or the core could not compute it), ``inf`` where the variance is infinite."""
    if moments is None or math.isnan(moments.var) or draws < 1:
        return math.nan
    return moments.log_std - 0.5 * math.log(draws)


def _se_text(log_se: float) -> str:
    """A standard error from its log: 4 digits, from the log where it is past a double."""
    se = math.exp(log_se) if log_se < math.log(sys.float_info.max) else math.inf
    return number(se) if math.isfinite(se) else from_log(log_se, 4, trim=True)


def _finite_sample(draws: int, moments: Moments | None) -> str:
    """The finite-sample caveat of an f picture's average, with the exact standard error where the
    core gives the gap estimator's variance (k3_pq for KL[p‖q], k2), as the KL[q‖p] caption warns."""
    log_se = _standard_error(draws, moments)
    if math.isnan(log_se) or log_se == -math.inf:
        return _("The average is unbiased, but a finite set of draws can miss rare, large gaps.")
    if math.isinf(log_se):
        return _("The average is unbiased, but a finite set of draws can miss rare, large gaps; here one "
                 "gap's variance is infinite, so no standard error bounds how far the average can be off.")
    return _("The average is unbiased, but a finite set of draws can miss rare, large gaps; its standard "
             "error here is {se}.").format(se=_se_text(log_se))


def f_caption(f_key: str, name: str, draws: int, mean_gap: float, exact: float,
              overflow: bool = False, moments: Moments | None = None) -> str:
    """Under the picture of a smooth f: the gaps' average against the exact D_f, with caveats.

    ``overflow``: an infinite ``exact`` is finite but past a double (Pearson χ² where
    :func:`chi2_overflows`), not a divergence.  ``moments``: the exact moments of the gap's
    estimator (``k3_pq``, ``k2``; None for an f without one), for the standard error of the
    average.  A finite, positive ``exact`` always gets the finite-sample caveat (the average
    of 10 draws from N(0, 1) against p = N(5, 1) is 0.9977 against a KL[p‖q] of 12.5, yet
    within a standard error, 3.1e+06, of it: no threshold in standard errors would warn there).
    """
    overflow = overflow and math.isinf(exact) and f_key != "k2"  # χ² only: k2's D_f is ½E[log² r]
    if f_key == "k2":  # ½ log² u is convex only up to u = e (K2_CONVEXITY)
        text = _(
            "The curve lies above its tangent this time, so each gap is f minus the line; the "
            "{draws:,} gaps average {mean}, an estimate of the exact {name} = {exact}."
        )
    else:
        text = _(
            "The curve lies above its tangent this time (f is convex), so each gap is f minus the "
            "line; the {draws:,} gaps average {mean}, an estimate of the exact {name} = {exact}."
        )
    if overflow:
        text = _(
            "The curve lies above its tangent this time (f is convex), so each gap is f minus the "
            "line; the {draws:,} gaps average {mean}, an estimate of the exact {name}, which is "
            "finite but too large for a double (above ≈1.8e308)."
        )
    text = text.format(draws=draws, mean=number(mean_gap), name=name, exact=number(exact))
    if f_key == "k2":
        text += " " + _(K2_CONVEXITY)
    if math.isnan(exact):
        text += " " + _(
            "(The exact value could not be computed: the integrand overflows double precision "
            "for a pair this far apart.)"
        )
    if overflow:
        text += " " + _(
            "Rare, huge r (far beyond the chart) carry the mean, and a finite sample's average "
            "cannot show that."
        )
    elif math.isinf(exact):
        text += " " + _(
            "The exact value is infinite for this pair: rare, extreme r (huge, or near 0, beyond "
            "the chart) carry the mean, and a finite sample's average cannot show that."
        )
    elif math.isfinite(exact) and exact > 0.0:
        text += " " + _finite_sample(draws, moments)
    return text


def kink_note(f_key: str) -> str:
    """Above the picture of an f with a kink at 1 (total variation): many supporting lines, no unique tangent."""
    div = DIVERGENCES[f_key]
    lo, hi = div.slopes_at_1
    name = _(div.name)
    text = _(
        "The f of {name} has a kink at u = 1: its slope jumps from {lo} to {hi} there, so f′(1) "
        "does not exist and no tangent is unique. Every line through (1, 0) with a slope s from "
        "{lo} to {hi} stays below the curve, so f(r) − s(r − 1) is ≥ 0 and its mean under q is "
        "the {name} for each such s: there is a whole family of gap estimators, and none is "
        "'the' one."
    ).format(name=name, lo=number(lo), hi=number(hi))
    if lo <= 0.0 <= hi:
        text += " " + _("With s = 0 the gap is f(r) itself.")
    if [k for k, d in DIVERGENCES.items() if d.fprime_at_1 is None] == [f_key]:
        text += " " + _("No other entry of the registry has a kink at u = 1.")
    return text


def kink_caption(f_key: str) -> str:
    """Under the picture of an f with a kink at 1: what the V shows."""
    lo, hi = DIVERGENCES[f_key].slopes_at_1
    return _(
        "The V has two slopes at u = 1 ({lo} and {hi}): every line through (1, 0) with a slope "
        "between them touches it there and stays below, so none is 'the' tangent."
    ).format(lo=number(lo), hi=number(hi))
