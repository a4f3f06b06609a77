"""Bregman gap: k3 is the vertical gap between log r and its tangent r − 1 at r = 1.

Seeded draws of r (``kl_core.estimation.bregman.draw_log_ratios``) become points on the
curve, each with its gap (``kl_core.estimation.bregman.tangent_picture``); one r moves by
hand.  The same picture follows for KL[p‖q] (u log u, gap k3_pq) and any f of
the core's registry.  URL keys: ``q``, ``p``, ``draws``, ``seed``, ``r``, ``f``.
"""

import math

import numpy as np
import streamlit as st

from charts.bregman import tangent_gap_chart
from i18n import _
from kl_core import QuadratureError
from kl_core.estimation import estimators
from kl_core.estimation.bregman import tangent_picture
from kl_core.estimation.divergences import DIVERGENCES
from lab import cache, state, ui
from lab.format import number
from lab.notes import bregman_gap as notes
from lab.picker import distribution_pair, wait_for_specs
from lab.widgets import count_slider, page_opening, seed_picker

R_MIN, R_MAX = 0.05, 5.0
# The x-range of every picture: dense where log u bends near 0, 121 points in all
# (each chart row costs the browser payload and Altair's to_dict time on every rerun).
U_GRID = np.concatenate([np.geomspace(R_MIN, 1.0, 41), np.linspace(1.0, R_MAX, 81)[1:]])
F_ORDER = ("kl_pq", "k2", "pearson", "hellinger", "js", "tv")  # the registry, KL[q‖p] first above


first = page_opening(_("Bregman gap"), _(  # first; its container holds the answer (see lab.widgets)
    "Why is k3 = (r − 1) − log r never negative? Draw the curve **log r** and its **tangent line "
    "r − 1** at r = 1. log is concave, so the curve never rises above its tangent, and k3 is "
    "exactly the **vertical gap** between the two at the sample's r. Every sample's k3 is a "
    "length: it can be small, never negative."
))

st.subheader(_("Change q, p and the draws"))
q, p = distribution_pair("normal(0,1)", "normal(1,1)")  # i18n: ok (specs)
c_draws, c_seed = st.columns(2, gap="medium")
with c_draws:
    draws = count_slider(
        _("Draws x ~ q shown"), "draws", value=200, hi=1_000,
        help=_("Each draw x gives one ratio r = p(x)/q(x): one point on the curve and one gap."),
    )
with c_seed:
    seed = seed_picker()
r = state.slider(
    _("Move one r by hand"),
    "r",
    min_value=R_MIN,
    max_value=R_MAX,
    value=2.5,
    step=0.05,
    format="%.2f",
    help=_("A single ratio r = p(x)/q(x); its gap is the thick purple segment on both charts."),
)
wait_for_specs("q", "p")  # a bad spec: the controls above stay, the results wait
try:  # p = q to double precision (written two ways, too): the Control variates page's test
    same = notes.p_equals_q(cache.lambda_parabola(q.spec, p.spec))
except QuadratureError:
    same = False
logr = notes.as_shown(same, cache.draw_log_ratios(q.spec, p.spec, draws, seed))  # rounding noise: 0
grid = tangent_picture("kl_qp", u=U_GRID)
drawn = tangent_picture("kl_qp", logu=logr)
hand = tangent_picture("kl_qp", u=[r])
k3_hand = float(estimators.k3(hand.logu)[0])
try:
    true_kl = notes.as_shown(same, cache.exact_kl(q.spec, p.spec))
except QuadratureError:  # the integrand overflows: q and p are extremely far apart
    true_kl = math.nan
# χ²(p‖q) finite but past a double: Var(k3) and Pearson χ² then show as inf but are not infinite
try:
    chi2_overflow = notes.chi2_overflows(cache.lambda_star(q.spec, p.spec).note)
except QuadratureError:
    chi2_overflow = False

# ------------------------------------------------------------ KL[q‖p]: log r under r − 1
with first:
    ui.answer(notes.answer(draws, float(drawn.gap.min()), float(drawn.gap.max()), drawn.mean_gap, true_kl))
    ui.chart(
        tangent_gap_chart(
            grid,
            samples=drawn,
            hand=hand,
            curve_label=_("log r (the curve)"),
            tangent_label=_("r − 1 (its tangent at r = 1)"),
            gap_label=_("gap at each draw = k3"),
            x_title="r = p(x)/q(x)",
            y_title=_("log r and r − 1"),
            title=[
                _("{draws:,} draws: mean gap {mean},").format(draws=draws, mean=number(drawn.mean_gap)),
                _("exact KL[q‖p] = {kl}").format(kl=number(true_kl)),
            ],
            subtitle=[_("q = {q}, p = {p}, seed {seed}").format(q=q.name, p=p.name, seed=seed)],
            height=420,
        ),
        name=_("bregman-gap-kl-qp-r-{r:g}").format(r=r),
        caption=notes.kl_caption(true_kl, drawn.mean_gap, q.k if q.discrete else None,
                                 on_chart=notes.draws_on_chart(drawn.u, R_MIN, R_MAX), draws=draws,
                                 u_range=(R_MIN, R_MAX)),
    )
st.header(_("KL[q‖p]: the curve log r under its tangent r − 1"))
with ui.metric_row():
    st.metric(_("tangent r − 1"), number(float(hand.tangent[0])))
    st.metric(_("curve log r"), number(float(hand.curve[0])))
    st.metric(
        _("gap = tangent − curve"),
        number(float(hand.gap[0])),
        help="kl_core.estimation.bregman.tangent_picture('kl_qp', u=[r]).gap",  # i18n: ok (code)
    )
    st.metric(
        _("k3 at this log r"),
        number(k3_hand),
        help=_("kl_core.estimation.estimators.k3(log r): the same number, computed as the estimator."),
    )
ui.formula(
    r"k_3 = \underbrace{(r - 1)}_{\text{" + _("tangent") + r"}} - \underbrace{\log r}_{\text{"
    + _("curve") + r"}} \;\ge\; 0"
)
ui.formula(
    r"\mathbb{E}_q[k_3] = \underbrace{\mathbb{E}_q[r - 1]}_{=\,0} "
    r"+ \mathbb{E}_q[-\log r] = \mathrm{KL}[q\|p]"
)
moments, _failed = cache.moments_or_failures(("k1", "k3"), q.spec, p.spec, 1.0)
st.markdown(notes.tangent_text(notes.as_shown(same, moments["k1"].var), notes.as_shown(same, moments["k3"].var),
                               chi2_overflow))

# ------------------------------------------------------------ any f
st.header(_("The same picture for KL[p‖q] and any f-divergence"))
st.markdown(_(
    r"An f-divergence is $D_f(p, q) = \mathbb{E}_q[f(r)]$ for a convex f with f(1) = 0. The gap "
    r"between f and its tangent at u = 1 is again ≥ 0, and its mean under q is again $D_f(p, q)$, "
    r"because the tangent's part $f'(1)(r - 1)$ averages to zero. With $f(u) = u \log u$ this is "
    r"the estimator of KL[p‖q] from samples of q."
))
f_key = state.segmented(
    _("f (from kl_core.estimation.divergences)"),
    "f",
    list(F_ORDER),
    value="kl_pq",
    format_func=lambda k: _(DIVERGENCES[k].name),
    help=_("The registry's f-divergences; KL[q‖p] itself is the picture above."),
)
f_grid = tangent_picture(f_key, u=U_GRID)
f_drawn = tangent_picture(f_key, logu=logr)
f_hand = tangent_picture(f_key, u=[r])
try:
    exact_f = notes.as_shown(same, cache.f_divergence(f_key, p.spec, q.spec))
except QuadratureError:  # the integrand overflows: q and p are extremely far apart
    exact_f = math.nan
div = DIVERGENCES[f_key]
f_picture = {  # what both f pictures share
    "samples": f_drawn, "hand": f_hand,
    "curve_label": _("f(u), {name}").format(name=_(div.name)),
    "x_title": "u = r = p(x)/q(x)",
}

if f_grid.smooth:
    tangent_at = _("tangent at")  # a label inside TeX: translated, then formatted in
    ui.formulas(rf"f(u) = {f_grid.curve_latex},", rf"\text{{{tangent_at} }} u = 1:\ {f_grid.tangent_latex},",
                rf"{f_grid.gap_latex} \;\ge\; 0")
    gap_label = (
        _("gap at each draw = {estimator}").format(
            estimator=estimators.ESTIMATORS[f_grid.estimator].name)
        if f_grid.estimator
        else _("gap at each draw")
    )
    f_overflow = f_key == "pearson" and chi2_overflow  # the only f whose D_f is χ²
    f_moments = (cache.moments_or_failures((f_grid.estimator,), q.spec, p.spec, 1.0)[0][f_grid.estimator]
                 if f_grid.estimator else None)  # the gap's estimator (k3_pq, k2): the average's standard error
    f_caption = notes.f_caption(f_key, _(div.name), draws, f_drawn.mean_gap, exact_f, f_overflow, f_moments)
    ui.chart(
        tangent_gap_chart(
            f_grid,
            **f_picture,
            tangent_label=_("its tangent at u = 1"),
            gap_label=gap_label,
            y_title=_("f(u) and its tangent"),
            title=[
                _("The same {draws:,} draws: mean gap {mean},").format(
                    draws=draws, mean=number(f_drawn.mean_gap)),
                notes.exact_title(_(div.name), exact_f, f_overflow),
            ],
            subtitle=[_("q = {q}, p = {p}, seed {seed}").format(q=q.name, p=p.name, seed=seed)],
            height=480,
        ),
        name=_("bregman-gap-{f}-r-{r:g}").format(f=f_key, r=r),
        caption=f_caption,
    )
    with ui.metric_row():
        st.metric(_("your r"), f"{r:g}")
        st.metric(_("tangent at your r"), number(float(f_hand.tangent[0])))
        st.metric("f(r)", number(float(f_hand.curve[0])))
        st.metric(
            _("gap = f(r) − tangent"),
            number(float(f_hand.gap[0])),
            help=f"kl_core.estimation.estimators.bregman({f_key!r}, log r)",  # i18n: ok (code)
        )
        if f_grid.estimator:
            est_name = estimators.ESTIMATORS[f_grid.estimator].name
            st.metric(
                _("{estimator} at this log r").format(estimator=est_name),
                number(float(estimators.evaluate(f_grid.estimator, f_hand.logu)[0])),
                help=_("kl_core.estimation.estimators.{estimator}(log r): the same number.").format(
                    estimator=f_grid.estimator),
            )
else:
    st.info(notes.kink_note(f_key), icon=":material/info:")
    ui.formula(rf"f(u) = {f_grid.curve_latex}")
    ui.chart(
        tangent_gap_chart(
            f_grid,
            **f_picture,
            tangent_label=None,
            gap_label="",
            y_title="f(u)",
            title=_("{name}: the kink at u = 1").format(name=_(div.name)),
        ),
        name=_("bregman-curve-{f}").format(f=f_key),
        caption=notes.kink_caption(f_key),
    )
ui.show_source(estimators.bregman)
