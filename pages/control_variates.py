"""Control variates: kλ = −log r + λ(r − 1), its exact variance against λ, and why λ = 1.

Every kλ is unbiased because E_q[r − 1] = 0.  The page shows the exact variance
parabola (``kl_core.control_variates.lambda_parabola``), the per-sample
histogram at the reader's λ (``kl_core.montecarlo.simulate``), why only λ = 1
keeps every sample ≥ 0 (``kl_core.bregman.k_lambda_negative_interval``), and
how the advantage of λ* over λ = 1 grows along a path (``gain_along_path``).
URL keys: ``q``, ``p``, ``lam``, ``n``, ``seed``, ``path``.
"""

import math

import numpy as np
import streamlit as st

from charts.control_variates import (
    LambdaMark,
    gain_chart,
    k_lambda_histogram,
    k_lambda_profile,
    lambda_star_chart,
    variance_parabola,
)
from charts.histograms import common_domain
from charts.palette import REFERENCE_COLOR, color
from kl_core import control_variates, estimators
from kl_core._quadrature import QuadratureError
from kl_core.bregman import k_lambda_negative_interval
from kl_core.paths import PATHS
from lab import cache, state, ui
from lab.navigation import leave_legacy_wrapper
from lab.picker import distribution_pair
from lab.widgets import seed_picker

LAM_MIN, LAM_MAX = -1.0, 3.0
# The θ grid of each path's gain curve.  θ = 0 (p = q, gain 0/0) is left out: the gain
# tends to a path-dependent constant there, which a point "1 by convention" would hide.
PATH_THETAS = {
    "shift": tuple(np.linspace(0.05, 3.0, 60).tolist()),
    "scale": tuple(np.linspace(-0.6, 0.6, 60).tolist()),
    "logit": tuple(np.linspace(-3.0, 3.0, 60).tolist()),
}
THETA_TITLES = {
    "shift": "μ, the mean of p = N(μ, 1)   (q = N(0, 1))",
    "scale": "log σ, where p = N(0, σ²)   (q = N(0, 1))",
    "logit": "θ, a step along the logit direction v   (q = p at θ = 0)",
}


def fmt(x: float) -> str:
    """A number as the page shows it: 4 significant digits, ∞ for infinity."""
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.4g}"


leave_legacy_wrapper()  # first, before anything is drawn: see lab/navigation.py

st.title("Control variates")
st.markdown(
    "k1 = −log r is unbiased but noisy. Add any multiple of **r − 1**, whose average under q is "
    "exactly 0, and the estimator stays unbiased — so which multiple λ should we add? "
    "This page computes the variance of every choice **exactly** (no sampling), and shows "
    "why Schulman's k3 takes λ = 1 although a smaller variance is often available."
)
ui.formula(
    r"k_\lambda = -\log r + \lambda\,(r - 1), \qquad "
    r"\mathbb{E}_{q}[r - 1] = 0 \;\Longrightarrow\; "
    r"\mathbb{E}_q[k_\lambda] = \mathrm{KL}[q,p] \ \text{for every } \lambda"
)

q, p = distribution_pair("normal(0,1)", "normal(1,1)")
try:
    par = cache.lambda_parabola(q.spec, p.spec)
except QuadratureError:
    ui.fail(
        "kl_core could not compute the exact variances for this pair: the integrand overflows "
        "double precision, because q and p are extremely far apart. Move p closer to q."
    )
p_equals_q = par.var_log_r == 0.0 and par.var_r == 0.0
all_infinite = math.isinf(par.var_log_r)
chi2_infinite = math.isinf(par.var_r) and not all_infinite


def _set_lam(value: float) -> None:
    state.set_values(lam=value)


c_lam, c_n, c_seed = st.columns([2.2, 1, 1], gap="medium")
with c_lam:
    lam = state.slider(
        "λ, the coefficient of r − 1 in kλ",
        "lam",
        min_value=LAM_MIN,
        max_value=LAM_MAX,
        value=0.5,
        step=0.05,
        format="%.3f",
        help="λ = 0 is k1, λ = 1 is k3. Every λ gives an unbiased estimator of KL[q, p].",
    )
    lam_star_usable = math.isfinite(par.var_log_r) and LAM_MIN <= par.lam_star <= LAM_MAX
    with st.container(horizontal=True, gap="small"):
        st.button("λ = 0 (k1)", key="set_k1", on_click=_set_lam, args=(0.0,), type="secondary")
        st.button("λ = 1 (k3)", key="set_k3", on_click=_set_lam, args=(1.0,), type="secondary")
        st.button(
            f"λ = λ* = {par.lam_star:.3f} (least variance)" if not all_infinite
            else "λ = λ* (undefined here)",
            key="set_star",
            on_click=_set_lam,
            args=(par.lam_star,),
            type="secondary",
            disabled=not lam_star_usable,
            help=None if lam_star_usable else "λ* is undefined or outside the slider's range here.",
        )
with c_n:
    n = state.number(
        "N, draws x ~ q",
        "n",
        min_value=100,
        max_value=1_000_000,
        value=10_000,
        step=1_000,
        help="How many samples the per-sample histograms below are made of.",
    )
with c_seed:
    seed = seed_picker()

# ------------------------------------------------------------ the exact numbers
var_lam = float(par.variance(lam))
lam_star_text = "—" if all_infinite else fmt(par.lam_star)
gain = math.nan if all_infinite else par.gain

m = st.columns(5, gap="small")
m[0].metric(
    "λ*, least variance",
    lam_star_text,
    help=(
        "λ* = (KL[p,q] + KL[q,p]) / χ²(p‖q), from kl_core.control_variates.lambda_parabola. "
        "Undefined (—) when every λ has infinite variance."
    ),
)
m[1].metric(f"Var(kλ) at your λ = {lam:.3g}", fmt(var_lam), help="Exact, per sample.")
m[2].metric("Var(k3), λ = 1", fmt(par.var_k3), help="Exact, per sample.")
m[3].metric(
    "Var(kλ*), λ = λ*", "—" if all_infinite else fmt(par.var_optimal), help="Exact, per sample."
)
m[4].metric(
    "gain Var(k3) / Var(kλ*)",
    "—" if math.isnan(gain) else ("∞" if math.isinf(gain) else f"×{gain:.4g}"),
    help="How many times more samples k3 needs than kλ* for the same standard error.",
)

if p_equals_q:
    st.info(
        "p = q: r = 1 at every sample, so every kλ is exactly 0 and every λ has variance 0. "
        "Move p away from q to see the parabola.",
        icon=":material/info:",
    )
elif all_infinite:
    why = cache.estimator_moments("k1", q.spec, p.spec).note
    st.warning(
        "**Var(log r) is infinite for this pair**, so every kλ has infinite variance: adding "
        "λ(r − 1) cannot cancel it, and λ* is undefined. "
        + (f"({why})" if why else ""),
        icon=":material/warning:",
    )
elif chi2_infinite:
    st.warning(
        "**χ²(p‖q) = Var_q(r) is infinite for this pair**: the control variate r − 1 itself has "
        "infinite variance: E_q[r²] = ∫ p²/q diverges when p's tails are too heavy for "
        "q's, and exceeds the largest double (≈1.8e308) when q and p are very far apart, "
        "as e^{μ²} does for Gaussians μ > 26.6 apart. Then Var(kλ) = ∞ for **every λ ≠ 0** — k3 included — and the best one "
        "can do is λ* = 0, plain k1. The histograms can still look tame: the variance lives in "
        "rare, huge values of r that a finite sample seldom contains.",
        icon=":material/warning:",
    )

# ------------------------------------------------------------ 1. the parabola
st.header("1. The variance is a parabola in λ")
st.markdown(
    "Expanding the variance of a sum gives three exact coefficients, each a divergence between "
    "q and p:"
)
ui.formula(
    r"\mathrm{Var}_q(k_\lambda) = \mathrm{Var}_q(\log r) "
    r"- 2\lambda\,\bigl(\mathrm{KL}[p,q] + \mathrm{KL}[q,p]\bigr) + \lambda^2\,\chi^2(p\,\|\,q),"
    r"\qquad \lambda^* = \frac{\mathrm{KL}[p,q] + \mathrm{KL}[q,p]}{\chi^2(p\,\|\,q)}"
)
if math.isfinite(par.lam_star) and not all_infinite:
    lo = min(LAM_MIN, par.lam_star - 0.3)
    hi = max(LAM_MAX, par.lam_star + 0.3)
else:
    lo, hi = LAM_MIN, LAM_MAX
lam_grid = np.linspace(lo, hi, 121)  # a parabola: 121 points draw it smoothly
marks = [
    LambdaMark("λ = 0: k1", 0.0, par.var_log_r, color("k1")),
    LambdaMark("λ = 1: k3", 1.0, par.var_k3, color("k3")),
]
if not all_infinite:
    marks.append(LambdaMark(f"λ* = {par.lam_star:.3g}: least variance", par.lam_star,
                            par.var_optimal, REFERENCE_COLOR))
marks.append(LambdaMark(f"your λ = {lam:.3g}", lam, var_lam, color("k_lambda")))
if all_infinite:
    note = "Var(kλ) = ∞ for every λ: no curve to draw"
elif chi2_infinite:
    note = "Var(kλ) = ∞ for every λ ≠ 0: only the point at λ = 0 is finite"
else:
    note = None
if p_equals_q:
    parabola_caption = "With p = q every coefficient is 0: the 'parabola' is flat at 0."
elif all_infinite:
    parabola_caption = "Nothing to minimise: the variance is infinite for every λ."
elif chi2_infinite:
    parabola_caption = (
        f"Only λ = 0 (k1) has a finite variance, {fmt(par.var_log_r)}; the coefficient of λ², "
        "χ²(p‖q), is infinite, so any λ ≠ 0 makes the variance infinite."
    )
else:
    parabola_caption = (
        f"The minimum sits at λ* = {par.lam_star:.3g}, not at λ = 1: there Var = "
        f"{fmt(par.var_optimal)} against {fmt(par.var_k3)} for k3 and {fmt(par.var_log_r)} for k1. "
        "Every point of the curve has the same mean, KL[q,p] = "
        f"{fmt(par.true_kl)}; only the spread changes."
    )
ui.chart(
    variance_parabola(lam_grid, par.variance(lam_grid), marks, infinite_note=note),
    name="variance-parabola",
    caption=parabola_caption,
)
ui.show_source(control_variates.lambda_parabola)

# ------------------------------------------------------------ 2. the histograms
st.header("2. What the samples look like at your λ")
with st.spinner("Drawing samples…"):
    sim = cache.simulate(
        q.spec, p.spec, n, seed=seed, lam=lam, keys=("k_lambda", "k3"), sample_size=min(n, 20_000)
    )
domain = common_domain(
    [sim["k_lambda"].samples, sim["k3"].samples], include=(0.0, par.true_kl)
)
left, right = st.columns(2, gap="medium")
with left:
    s = sim["k_lambda"]
    ui.chart(
        k_lambda_histogram(s.samples, lam, true_value=par.true_kl, mean=s.mean,
                           neg_fraction=s.neg_fraction, domain=domain),
        name=f"k-lambda-histogram-lam-{lam:g}",
        caption=(
            f"{s.neg_fraction:.1%} of the {n:,} values are negative (shaded side), although "
            "every single one is a sample of a KL estimator."
            if s.neg_fraction > 0
            else "No value is negative at this λ."
        ),
    )
with right:
    s3 = sim["k3"]
    ui.chart(
        k_lambda_histogram(s3.samples, 1.0, key="k3", true_value=par.true_kl, mean=s3.mean,
                           neg_fraction=s3.neg_fraction, domain=domain),
        name="k3-histogram",
        caption="The same draws with λ = 1: never a negative value. Both panels share one x-axis.",
    )

# ------------------------------------------------------------ 3. why λ = 1
st.header("3. Why only λ = 1 keeps every sample ≥ 0")
st.markdown(
    "Split kλ into k3 plus what is left over. k3 is the gap between log r and its tangent line "
    "r − 1 at r = 1 (see the *Bregman gap* page), so it is never negative and it touches 0 at "
    "r = 1 **with zero slope**: near there it is only about ½(r − 1)². The left-over term is a "
    "straight line through 0 at r = 1 with slope λ − 1. Close to r = 1 a line always beats a "
    "parabola, so kλ takes the sign of (λ − 1)(r − 1) there: for **λ < 1 it is negative just "
    "above r = 1**, for **λ > 1 just below**. Only λ = 1 removes the line and leaves the gap."
)
ui.formula(
    r"k_\lambda = \underbrace{(r - 1) - \log r}_{k_3\ \ge\ 0,\ \ \approx\ \frac12 (r-1)^2}"
    r"\;+\;(\lambda - 1)(r - 1),"
    r"\qquad \log r \le r - 1 \text{ with equality only at } r = 1"
)
logr_grid = np.linspace(-2.5, 2.5, 101)  # smooth curves; the band's ends are exact
curves = []
if lam not in (0.0, 1.0):
    curves.append((f"kλ, λ = {lam:.3g}", estimators.k_lambda(logr_grid, lam), color("k_lambda"),
                   False))
curves.append(("k3 (λ = 1)", estimators.k3(logr_grid), color("k3"), False))
curves.append(("k1 (λ = 0)", estimators.k1(logr_grid), color("k1"), True))
interval = k_lambda_negative_interval(lam)
if interval is None:
    profile_caption = (
        "At λ = 1 the curve (green) touches 0 at log r = 0 and is positive everywhere else: "
        "no sample can be negative."
    )
elif math.isinf(interval[1]):
    profile_caption = (
        f"For λ = {lam:.3g} ≤ 0 both terms of kλ are negative whenever log r > 0: every sample "
        f"with p(x) > q(x) is negative — {sim['k_lambda'].neg_fraction:.1%} of the draws above."
    )
else:
    a, b = interval
    profile_caption = (
        f"For λ = {lam:.3g}, kλ < 0 exactly when {fmt(a)} < log r < {fmt(b)} (shaded purple), "
        f"a stretch that shrinks to nothing as λ → 1. That is where the "
        f"{sim['k_lambda'].neg_fraction:.1%} negative draws above come from."
    )
ui.chart(
    k_lambda_profile(logr_grid, curves, negative=interval,
                     negative_label=f"kλ < 0 for λ = {lam:.3g}"),
    name=f"k-lambda-profile-lam-{lam:g}",
    caption=profile_caption,
)
ui.show_source(estimators.k_lambda)

# ------------------------------------------------------------ 4. the gain along a path
st.header("4. How much does λ* beat λ = 1 as p moves away?")
st.markdown(
    "Take p one step θ away from q along a path and compute λ\\* and the gain "
    "Var(k3) / Var(kλ\\*) exactly at each step. Near p = q the numerator and the denominator of "
    "λ\\* are both ≈ F θ² (F the Fisher information), so **λ\\* → 1 on every path**. That does "
    "not make k3 optimal: both variances shrink like θ⁴, and their ratio tends to a constant set "
    "by the direction of the step — 1 only for the Gaussian mean shift. Further away χ²(p‖q) "
    "grows faster than the KLs, λ\\* moves away from 1 and the gain grows."
)
path_key = state.segmented(
    "Path from q to p",
    "path",
    list(PATHS),
    value="shift",
    format_func=lambda k: PATHS[k].name,
    help="Each path starts at p = q (θ = 0); see kl_core.paths.",
)
path = PATHS[path_key]
st.latex(path.family_latex + r",\qquad " + path.theta_latex)
with st.spinner("Computing λ* and both variances along the path…"):
    curve = cache.gain_along_path(path_key, PATH_THETAS[path_key])
marker = None
if path_key == "shift":
    i = int(np.argmin(np.abs(curve.thetas - 1.0)))
    marker = (float(curve.thetas[i]), float(curve.gain[i]))
near = int(np.argmin(np.abs(curve.thetas)))  # the step closest to p = q
near_text = f"×{curve.gain[near]:.3g} at θ = {curve.thetas[near]:.2g}"
g_left, g_right = st.columns(2, gap="medium")
with g_left:
    if path_key == "shift":
        gain_caption = (
            f"The gain is {near_text}, ×{marker[1]:.3g} at Schulman's μ = 1 (black dot) and "
            f"about ×{curve.gain[-1]:,.0f} at μ = {curve.thetas[-1]:g}: k3 is nearly optimal "
            "only for small shifts."
        )
    elif path_key == "scale":
        gain_caption = (
            f"Already {near_text}, next to p = q: for a change of scale k3 is not nearly "
            "optimal even for tiny steps. Widening p past σ = √2 (θ ≈ 0.35) makes χ² infinite, "
            "so Var(k3) = ∞ while kλ* (λ* = 0, plain k1) stays finite: grey band."
        )
    else:
        gain_caption = (
            f"For this 5-token categorical the gain is {near_text}, next to p = q, and stays "
            f"between ×{np.nanmin(curve.gain):.3g} and ×{np.nanmax(curve.gain):.3g} on the "
            "range shown: all variances are finite."
        )
    ui.chart(
        gain_chart(curve.thetas, curve.gain, theta_title=THETA_TITLES[path_key],
                   true_kl=curve.true_kl, lam_star=curve.lam_star, current=marker),
        name=f"gain-{path_key}",
        caption=gain_caption,
    )
with g_right:
    ui.chart(
        lambda_star_chart(curve.thetas, curve.lam_star, theta_title=THETA_TITLES[path_key],
                          infinite=curve.var_k3),
        name=f"lambda-star-{path_key}",
        caption=(
            "λ* tends to k3's λ = 1 as p → q on every path, and moves away from it as p moves "
            "away from q."
        ),
    )
ui.show_source(control_variates.gain_along_path)
