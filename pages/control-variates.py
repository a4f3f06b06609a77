"""Control variates: kλ = −log r + λ(r − 1), its exact variance against λ, and why λ = 1.

Every kλ is unbiased because E_q[r − 1] = 0.  The page shows the exact variance
parabola (``kl_core.estimation.control_variates.lambda_parabola``), the per-sample
histogram at the reader's λ (``kl_core.estimation.montecarlo.simulate``), why only λ = 1
keeps every sample ≥ 0 (``kl_core.estimation.bregman.k_lambda_negative_interval``), and
how the advantage of λ* over λ = 1 changes along a path (``gain_along_path``).
URL keys: ``q``, ``p``, ``lam``, ``n``, ``seed``, ``path``.
"""

import math

import numpy as np
import streamlit as st

from charts.control_variates import (
    gain_chart,
    k_lambda_histogram,
    k_lambda_profile,
    lambda_star_chart,
    variance_parabola,
)
from charts.histograms import common_domain
from i18n import _
from kl_core import QuadratureError
from kl_core.estimation import control_variates, estimators
from kl_core.estimation.bregman import k_lambda_negative_interval
from kl_core.estimation.paths import PATHS
from lab import cache, state, ui
from lab.notes import control_variates as notes
from lab.picker import distribution_pair, wait_for_specs
from lab.widgets import count_slider, page_opening, seed_picker

LAM_MIN, LAM_MAX = -1.0, 3.0
HISTOGRAM_SAMPLE = 20_000  # the histograms show a uniform subsample of at most this many draws

first = page_opening(_("Control variates"), _(  # first; its container holds the answer (see lab.widgets)
    "k1 = −log r is unbiased but noisy. Add any multiple of **r − 1**, whose average under q is "
    "exactly 0, and the estimator stays unbiased — so which multiple λ should we add? "
    "This page computes the variance of every choice **exactly** (no sampling), and shows "
    "why Schulman's k3 takes λ = 1 although a smaller variance is often available."
))
ui.formulas(  # three pieces: one line on a wide screen, and none wider than a phone
    r"k_\lambda = -\log r + \lambda\,(r - 1),", r"\mathbb{E}_{q}[r - 1] = 0 \;\Longrightarrow",
    r"\mathbb{E}_q[k_\lambda] = \mathrm{KL}[q\|p] \ \text{" + _("for every λ") + r"}",
)

st.subheader(_("Change q, p and λ"))
q, p = distribution_pair("normal(0,1)", "normal(1,1)")  # i18n: ok (specs)
try:
    par = notes.as_shown(cache.lambda_parabola(q.spec, p.spec))  # p = q's rounding noise shown as 0
except QuadratureError:
    ui.fail(_(
        "kl_core could not compute the exact variances for this pair: double precision cannot "
        "resolve the integrand. Move p a little."
    ))
all_infinite = math.isinf(par.var_log_r)
c_lam, c_n, c_seed = st.columns([2.2, 1, 1], gap="medium")
with c_lam:
    lam = state.slider(
        _("λ, the coefficient of r − 1 in kλ"), "lam", min_value=LAM_MIN, max_value=LAM_MAX,
        value=0.5, step=0.05, format="%.3f",
        help=_("λ = 0 is k1, λ = 1 is k3. Where KL[q‖p] is finite, every λ gives an unbiased estimator "
               "of it."),
    )
    with st.container(horizontal=True, gap="small"):
        st.button("λ = 0 (k1)", key="set_k1", on_click=state.set_values, kwargs={"lam": 0.0})
        st.button("λ = 1 (k3)", key="set_k3", on_click=state.set_values, kwargs={"lam": 1.0})
        if notes.has_one_lam_star(par) and LAM_MIN <= par.lam_star <= LAM_MAX:
            st.button(_("λ = λ* = {lam} (least variance)").format(lam=notes.lam_text(par.lam_star)),
                      key="set_star",
                      on_click=state.set_values, kwargs={"lam": par.lam_star})
    if (why_no_star := notes.lambda_star_missing(par, LAM_MIN, LAM_MAX)) is not None:
        st.caption(why_no_star)
with c_n:
    n = count_slider(_("N, draws x ~ q"), "n", value=10_000, hi=1_000_000, accept_from=100,
                     help=_("How many draws the per-sample averages and shares below use. The "
                            "histograms show at most {m:,} of them: a uniform subsample when N is "
                            "larger.").format(m=HISTOGRAM_SAMPLE))
with c_seed:
    seed = seed_picker()

wait_for_specs("q", "p")  # a bad spec: the controls above stay, the results wait
# ------------------------------------------------------------ the exact numbers
# Where the parabola cancels to rounding noise at the reader's λ, integrate Var(kλ) itself.
direct = (cache.estimator_moments("k_lambda", q.spec, p.spec, lam).var
          if notes.needs_direct_var(par, lam) else None)
with ui.metric_row():
    # Short labels (a metric is ~180 px wide at 1024 px); the long form is in the help.
    st.metric(
        _("λ*, least variance"), notes.lam_star_text(par),
        help=_("λ* = (KL[p‖q] + KL[q‖p]) / χ²(p‖q), from "
               "kl_core.estimation.control_variates.lambda_parabola. Undefined when every λ has infinite "
               "variance; any λ when p = q."),
    )
    st.metric(_("Var(kλ), λ = {lam}").format(lam=notes.lam_text(lam)), notes.var_lam_text(par, lam, direct),
              help=_("The exact variance per sample of kλ at your λ."))
    st.metric(_("Var(k3), λ = 1"), notes.var_k3_text(par), help=_("Exact, per sample."))
    st.metric(_("Var(kλ*), λ = λ*"), notes.var_optimal_text(par),
              help=_("Exact, per sample."))
    st.metric(_("Var(k3) / Var(kλ*)"), notes.gain_text(par),
              help=_("The gain of kλ* over k3: how many times more samples k3 needs than kλ* "
                     "for the same standard error."))
with first:
    ui.answer(notes.answer(par))
    lam_grid = np.linspace(*notes.parabola_range(par, LAM_MIN, LAM_MAX), 121)  # smooth enough
    ui.chart(
        variance_parabola(lam_grid, par.variance(lam_grid), notes.parabola_marks(par, lam, direct),
                          infinite_note=notes.parabola_note(par)),
        name=_("variance-parabola"),
        caption=notes.parabola_caption(par),
    )
why = cache.estimator_moments("k1", q.spec, p.spec).note if all_infinite else ""
if (note := notes.pair_note(par, why)) is not None:
    ui.note(note.kind, note.text, note.icon)

# ------------------------------------------------------------ 1. the parabola
st.header(_("1. The variance is a parabola in λ"))
st.markdown(_(
    "Expanding the variance of a sum gives three exact coefficients, each a divergence between "
    "q and p:"
))
ui.formulas(
    r"\begin{aligned} \mathrm{Var}_q(k_\lambda) &= \mathrm{Var}_q(\log r) \\ "
    r"&\quad - 2\lambda\,\bigl(\mathrm{KL}[p\|q] + \mathrm{KL}[q\|p]\bigr) \\ "
    r"&\quad + \lambda^2\,\chi^2(p\,\|\,q), \end{aligned}",
    r"\lambda^* = \frac{\mathrm{KL}[p\|q] + \mathrm{KL}[q\|p]}{\chi^2(p\,\|\,q)}",
)
ui.show_source(control_variates.lambda_parabola)

# ------------------------------------------------------------ 2. the histograms
st.header(_("2. What the samples look like at your λ"))
sim = cache.simulate(
    q.spec, p.spec, n, seed=seed, lam=lam, keys=("k_lambda", "k3"), sample_size=min(n, HISTOGRAM_SAMPLE)
)
s, s3 = sim["k_lambda"], sim["k3"]
domain = common_domain([s.samples, s3.samples], include=(0.0, par.true_kl))
left, right = (col for _key, col in ui.grid(("k_lambda", "k3"), per_row=2, key="histograms"))
with left:
    ui.chart(
        k_lambda_histogram(s.samples, lam, true_value=par.true_kl, mean=s.mean,
                           neg_fraction=s.neg_fraction, domain=domain),
        name=_("k-lambda-histogram-lam-{lam}").format(lam=f"{lam:g}"),
        caption=notes.histogram_caption(s.neg_fraction, n),
    )
with right:
    ui.chart(
        k_lambda_histogram(s3.samples, 1.0, key="k3", true_value=par.true_kl, mean=s3.mean,
                           neg_fraction=s3.neg_fraction, domain=domain),
        name=_("k3-histogram"),
        caption=_("The same draws with λ = 1: never a negative value. Both panels share one "
                  "x-axis."),
    )

# ------------------------------------------------------------ 3. why λ = 1
st.header(_("3. Why only λ = 1 keeps every sample ≥ 0 for every q and p"))
st.markdown(_(
    "Split kλ into k3 plus what is left over. k3 is the gap between log r and its tangent line "
    "r − 1 at r = 1 (see the *Bregman gap* page), so it is never negative and it touches 0 at "
    "r = 1 **with zero slope**: near there it is only about ½(r − 1)². The left-over term is a "
    "straight line through 0 at r = 1 with slope λ − 1. Close to r = 1 a line always beats a "
    "parabola, so kλ takes the sign of (λ − 1)(r − 1) there: for **λ < 1 it is negative just "
    "above r = 1**, for **λ > 1 just below**. Only λ = 1 removes the line and leaves the gap."
))
ui.formula(
    r"\begin{gathered} k_\lambda = \underbrace{(r - 1) - \log r}_{k_3\ \ge\ 0,\ \ \approx\ \frac12 (r-1)^2}"
    r"\;+\;(\lambda - 1)(r - 1), \\"
    r"\log r \le r - 1, \ \text{" + _("with equality only at r = 1") + r"} \end{gathered}"
)
interval = k_lambda_negative_interval(lam)
logr_grid = np.linspace(*notes.profile_range(interval), 101)  # smooth curves; the band's ends are exact
ui.chart(
    k_lambda_profile(logr_grid, notes.profile_curves(logr_grid, lam), negative=interval,
                     negative_label=_("kλ < 0 for λ = {lam}").format(lam=notes.lam_text(lam))),
    name=_("k-lambda-profile-lam-{lam}").format(lam=f"{lam:g}"),
    caption=notes.profile_caption(lam, interval, s.neg_fraction),
)
ui.show_source(estimators.k_lambda)

# ------------------------------------------------------------ 4. the gain along a path
st.header(_("4. How much does λ* beat λ = 1 as p moves away?"))
st.markdown(_(notes.PATH_INTRO))
path_key = state.segmented(
    _("Path from q to p"), "path", list(PATHS), value="shift",
    format_func=lambda k: _(PATHS[k].name),
    help=_("Each path starts at p = q (θ = 0); see kl_core.estimation.paths."),
)
path = PATHS[path_key]
st.latex(path.family_latex + r",\qquad " + path.theta_latex)
curve = cache.gain_along_path(path_key, notes.PATH_THETAS[path_key])
theta_title = notes.theta_title(path_key)
g_left, g_right = (col for _key, col in ui.grid(("gain", "lambda-star"), per_row=2, key="path"))
with g_left:
    ui.chart(
        gain_chart(curve.thetas, curve.gain, theta_title=theta_title, true_kl=curve.true_kl,
                   lam_star=curve.lam_star, current=notes.gain_marker(path_key, curve)),
        name=_("gain-{path}").format(path=path_key),
        caption=notes.gain_caption(path_key, curve),
    )
with g_right:
    ui.chart(
        lambda_star_chart(curve.thetas, curve.lam_star, theta_title=theta_title,
                          infinite=curve.var_k3),
        name=_("lambda-star-{path}").format(path=path_key),
        caption=_(
            "λ* tends to k3's λ = 1 as p → q on every path, and moves away from it as p moves "
            "away from q."
        ),
    )
st.markdown(notes.path_trend(curve))
ui.show_source(control_variates.gain_along_path)
