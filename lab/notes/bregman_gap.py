"""What the Bregman gap page says about its pictures (no streamlit)."""

from __future__ import annotations

import math

from i18n import N_, _
from kl_core.estimation.divergences import DIVERGENCES
from lab.format import number

__all__ = ["K2_CONVEXITY", "answer", "f_caption", "kink_caption", "kink_note", "kl_caption", "tangent_text"]

#: The caveat under k2's picture: f(u) = ½ log² u has f″(u) = (1 − log u)/u².
K2_CONVEXITY = N_(
    "(½ log² u is convex only up to u = e and concave beyond, so this f bends the rule; its "
    "gap is still ≥ 0 because its tangent at 1 is the line zero and ½ log² u ≥ 0.)"
)


def answer(draws: int, min_gap: float, max_gap: float, mean_gap: float, true_kl: float) -> str:
    """The page's answer, from the draws on screen: every gap is ≥ 0, and they average to the KL.

    ``min_gap`` can be a rounding error below zero only if the core's gap is computed
    carelessly; it is formatted, never assumed.
    """
    text = _("**Answer:** each of the {n:,} draws gives a gap ≥ 0 (from {lo} to {hi}), because the "
             "curve log r never rises above its tangent r − 1.").format(
        n=draws, lo=number(min_gap), hi=number(max_gap))
    if math.isfinite(true_kl):
        text += " " + _("Their mean, {mean}, estimates KL[q‖p] = {kl}.").format(
            mean=number(mean_gap), kl=number(true_kl))
    return text


def tangent_text(var_k1: float, var_k3: float) -> str:
    """Under the k3 formulas: what the tangent term r − 1 does to the mean and to the noise.

    ``var_k1``, ``var_k3`` are the exact per-sample variances of k1 and k3 for the pair
    shown (NaN if they could not be computed).  Var(k3) − Var(k1) = χ²(p‖q) −
    2(KL[p‖q] + KL[q‖p]) is negative while p is close to q and can be positive (or
    infinite) further away, so the sentence about this pair is chosen from the numbers.
    """
    text = _(
        "The tangent term averages to zero under q, so it adds no bias. While p is close to q and "
        "has no heavier tails than q, it cancels most of the noise of −log r; otherwise it can "
        "add noise instead, because "
        "Var(k3) − Var(k1) = χ²(p‖q) − 2(KL[p‖q] + KL[q‖p])."
    )
    if var_k1 == 0.0 and var_k3 == 0.0:  # p = q
        pair = _("With p = q both variances are zero.")
    elif math.isnan(var_k1) or math.isnan(var_k3):
        pair = ""
    elif math.isinf(var_k1):
        pair = _("For this pair Var(k1) is infinite, and so is Var(k3).")
    elif number(var_k3) == number(var_k1) and var_k3 != var_k1:
        pair = _("For this pair the two variances agree to the 4 digits shown, {k1}.")
    elif var_k3 < var_k1:
        pair = _("For this pair it cancels noise: Var(k3) = {k3} against Var(k1) = {k1}.")
    elif var_k3 > var_k1:
        pair = _("For this pair it adds noise: Var(k3) = {k3} against Var(k1) = {k1}.")
    else:
        pair = _("For this pair the two variances are equal, {k1}.")
    if pair:
        text += " " + pair.format(k3=number(var_k3), k1=number(var_k1))
    return text + " " + _(
        "The tangent term is the control variate of the *Control variates* page with λ = 1, and "
        "the picture shows why no other λ keeps every gap ≥ 0: tilt the line and it crosses the "
        "curve."
    )


def kl_caption(true_kl: float, mean_gap: float, categories: int | None) -> str:
    """Under the KL[q‖p] picture: what the green segments are, and their average.

    ``categories`` is K for a categorical pair (its draws pile up on K ratios), else None.
    """
    if true_kl == 0.0:
        text = _(
            "With p = q every draw has r = 1, where the tangent touches the curve: every gap, and "
            "so every sample of k3, is zero."
        )
    elif math.isinf(true_kl):
        text = _(
            "Every green segment is one draw's k3; the thick purple one is your r. Here KL[q‖p] is "
            "infinite: their average, {mean}, has no finite value to settle to, and grows as rarer, "
            "larger gaps are drawn."
        ).format(mean=number(mean_gap))
    else:
        text = _(
            "Every green segment is one draw's k3. The segments vanish where r is near 1 (there "
            "p(x) ≈ q(x) and the tangent hugs the curve) and grow on both sides; the thick purple "
            "one is your r. Their average, {mean}, estimates KL[q‖p] = {kl}: unbiased, but a "
            "finite set of draws can miss rare, large gaps."
        ).format(mean=number(mean_gap), kl=number(true_kl))
    if categories is not None:
        text += " " + _(
            "With {k} categories at most {k} different ratios can occur: the draws pile up on them "
            "(bigger dot = more draws)."
        ).format(k=categories)
    return text


def f_caption(f_key: str, name: str, draws: int, mean_gap: float, exact: float) -> str:
    """Under the picture of a smooth f: the gaps' average against the exact D_f, with caveats."""
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
    text = text.format(draws=draws, mean=number(mean_gap), name=name, exact=number(exact))
    if f_key == "k2":
        text += " " + _(K2_CONVEXITY)
    if math.isnan(exact):
        text += " " + _(
            "(The exact value could not be computed: the integrand overflows double precision "
            "for a pair this far apart.)"
        )
    if math.isinf(exact):
        text += " " + _(
            "The exact value is infinite for this pair: rare, extreme r (huge, or near 0, beyond "
            "the chart) carry the mean, and a finite sample's average cannot show that."
        )
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
