"""f-divergences & Fisher: why k2 = ½(log r)² tracks KL near p = q, and where it stops.

Three parts, all numbers from ``kl_core``:

1. the registry's f curves near u = 1 and the table of f′(1), f″(1);
2. D_f(p_θ, p_0) along a one-parameter path against ½ f″(1) F θ²
   (``?path=``, ``?f=``, ``?th_<path>=`` for the θ range, ``?view=``);
3. E[k2] against KL[q‖p] along the same path, and k2's relative bias, with
   Schulman's two cases (μ = 0.1 and μ = 1 on the mean-shift path) marked.
"""

import numpy as np
import pandas as pd
import streamlit as st

from charts.f_divergences import (
    divergence_along_path,
    f_curves,
    f_label,
    k2_against_kl,
    k2_relative_bias,
)
from i18n import _
from kl_core.estimation import exact, fisher
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.estimators import bregman
from kl_core.estimation.paths import PATHS
from kl_core.estimation.published import SCHULMAN_2020
from lab import cache, state, ui
from lab.export import csv_download
from lab.notes import f_divergences as notes
from lab.widgets import page_opening

#: The θ grid of each path (fixed, so moving the range slider reuses the cache).
GRIDS = {path: notes.theta_grid(path) for path in PATHS}

first = page_opening(_("f-divergences & Fisher"), _(  # first; its container holds the answer (see lab.widgets)
    "**How far from q does k2 = ½(log r)² still average to KL[q‖p]?** k2 is **not** the KL: in "
    "general it averages to a different number. Yet when p is close to q the two agree. This page shows why (every smooth "
    "f-divergence starts as the same parabola, scaled by f″(1), and k2's f has the same "
    "f″(1) = 1 as KL) and how far from q the agreement lasts."
))

# ====================================================================== 1. the f's
st.header(_("1. One convex f, one divergence"))
st.markdown(_(
    "An **f-divergence** averages a function of the likelihood ratio $r = p(x)/q(x)$ over "
    "samples $x \\sim q$. The function f is convex with $f(1) = 0$, so the divergence is "
    "zero when p = q. Here q is the sampler and p the target."
))
ui.formulas(r"D_f(p, q) \;=\; \mathbb{E}_{x\sim q}\!\left[f\big(r(x)\big)\right],", r"r(x) = \frac{p(x)}{q(x)}")

tangent = state.toggle(
    _("Subtract each f's tangent at u = 1: draw f(u) − f′(1)·(u − 1)"),
    "tan",
    value=False,
    help=_("Adding c·(u − 1) to f does not change {df}, because {zero}. Subtracting the "
           "tangent makes every smooth f touch 0 flat at u = 1, so only its curvature f″(1) is "
           "left.").format(df="$D_f$", zero=r"$\mathbb{E}_q[r - 1] = 0$"),
)
with np.errstate(divide="ignore"):
    log_u = np.log(notes.U)
f_values = {
    key: (bregman(key, log_u) if tangent and d.fprime_at_1 is not None else d.f(notes.U))
    for key, d in DIVERGENCES.items()
}
ui.chart(
    f_curves(notes.U, f_values, tangent_removed=tangent),
    name=_("f-curves-tangent") if tangent else _("f-curves"),
    caption=notes.f_curves_caption(tangent),
)

# A Markdown table keeps its typeset maths but does not wrap: on a phone it scrolls in its box.
st.html("<style>.st-key-f-registry table{display:block;overflow-x:auto;max-width:100%}</style>")
with st.container(key="f-registry"):
    st.markdown(notes.f_table_markdown())
with st.container(horizontal=True, vertical_alignment="center", gap="small"):
    st.markdown(
        ":material/visibility: " + _(
            "KL[q‖p] and k2's ½ log² u share **f″(1) = 1**, χ² has 2, Hellinger ½, JS ¼. Total "
            "variation has a kink at u = 1: no f′(1), no f″(1), so no Fisher parabola (TV grows "
            "like |θ|, not θ²)."
        ),
        width="stretch",
    )
    csv_download(notes.f_table(), _("f-divergence-registry"))
st.markdown(_(notes.K2_SMALL_PRINT))
st.caption(_(notes.K2_COMMON_SLIP))

# ====================================================================== 2. along a path
st.header(_("2. Near p = q, every smooth f-divergence is a parabola"))
st.markdown(_(
    "Move p away from q = p₀ along a one-parameter path {path}. Expanding $f(r)$ around "
    "$r = 1$ (with {zero} killing the first-order term) gives, for every f with a second "
    "derivative at 1,"
).format(path=r"$\theta \mapsto p_\theta$", zero=r"$\mathbb{E}_q[r - 1] = 0$"))
ui.formulas(
    r"D_f(p_\theta, p_0) \;=\; \tfrac12\, f''(1)\; \theta^\top F\, \theta \;+\; O(\theta^3),",
    r"F = \mathbb{E}_{p_0}\!\left[\big(\partial_\theta \log p_\theta(x)\big|_{\theta=0}\big)^2\right]",
)
st.markdown(_(
    "F is the path's **Fisher information**; with one parameter {quad}. So near p = q all "
    "smooth f-divergences are the same quadratic, up to the factor f″(1)."
).format(quad=r"$\theta^\top F\theta = F\theta^2$"))

path = state.segmented(
    _("Path from q = p₀ to p = {p}").format(p=r"$p_\theta$"),
    "path",
    list(PATHS),
    value="shift",
    format_func=lambda k: _(PATHS[k].name),
)
info = PATHS[path]
smooth = list(fisher.smooth_divergences())
chosen = state.multiselect(
    _("f-divergences to draw (total variation has no f″(1), so no parabola)"),
    "f",
    smooth,
    value=[k for k in notes.DEFAULT_F if k in smooth],
    format_func=f_label,
)
top = info.theta_max
range_col, view_col = st.columns([3, 2], gap="medium", vertical_alignment="bottom")
with range_col:
    lo, hi = state.slider(
        _("Range of θ, where {theta}").format(theta=f"${info.theta_latex}$"),
        f"th_{path}",
        min_value=-top,
        max_value=top,
        value=(-top, top),
        step=notes.step_of(path),
        format="%.2f",
    )
with view_col:
    if "view" not in st.session_state and st.query_params.get("view") in notes.OLD_VIEWS:
        st.session_state["view"] = notes.OLD_VIEWS[st.query_params["view"]]  # an older link
    view = state.segmented(
        _("Show"),
        "view",
        notes.VIEWS,
        value="values",
        help=_("The ratio tends to 1 as θ → 0 for every smooth f: that is the Fisher statement."),
    )
lo, hi = sorted((float(lo), float(hi)))  # a link may give the two ends in either order
ui.formula(rf"{info.family_latex}, \qquad p_0 = q, \qquad F = {info.fisher:.6g}")

grid = GRIDS[path]
theta_title = _(notes.THETA_TITLES[path]) if path in notes.THETA_TITLES else "θ"
ends = np.array([lo, hi])
curves = [cache.fisher_curve(path, key, grid) for key in chosen]
end_curves = [cache.fisher_curve(path, key, ends) for key in chosen]
biases = cache.k2_bias(path, grid)
end_bias = cache.k2_bias(path, ends)
schulman = cache.k2_bias("shift", np.array([e.p.mu for e in SCHULMAN_2020]))

if lo == hi:
    st.info(_("The θ range is the single point θ = {theta:g}; widen it to see the curves.").format(
        theta=lo))
if not chosen:
    st.info(_("Pick at least one f-divergence above to draw it along the path."))
else:
    ratio = view == "ratio"
    if lo < hi:  # a single θ has no line to draw, nor a caption about lines
        ui.chart(
            divergence_along_path(
                curves + end_curves, lo=lo, hi=hi, theta_title=theta_title, ratio=ratio
            ),
            name=_("f-divergences-{path}-{view}").format(path=path, view=view),
            caption=notes.path_caption(ratio, path, chosen, lo, hi),
        )
    if (message := notes.infinite_note(path, curves + end_curves, lo, hi)) is not None:
        st.info(message, icon=":material/all_inclusive:")
    ui.table(
        pd.DataFrame(notes.end_rows(end_curves)),
        name=_("f-divergences-{path}-ends").format(path=path),
        caption=notes.ends_caption(path, info.fisher, at_zero=0.0 in (lo, hi)),
        column_config={
            "f″(1)": st.column_config.NumberColumn(format="%g"),
            "θ": st.column_config.NumberColumn(format="%.4g"),
            notes.EXACT_COLUMN: st.column_config.NumberColumn(format="%.6g"),
            "½ f″(1) F θ²": st.column_config.NumberColumn(format="%.6g"),
            _("ratio"): st.column_config.NumberColumn(format="%.5f"),
        },
    )

with st.expander(_("Why KL and k2's f share f″(1) = 1, and where the parabola comes from"),
                 icon=":material/school:"):
    st.markdown(_(
        "Write {score} (the score). Then {r}, and Taylor's theorem at $r = 1$ gives"
    ).format(score=r"$s(x) = \partial_\theta \log p_\theta(x)\big|_{\theta=0}$",
             r=r"$r = p_\theta/p_0 = 1 + \theta s + O(\theta^2)$"))
    st.latex(  # three lines: on one it is wider than a phone
        r"\begin{aligned} \mathbb{E}_{p_0}[f(r)] &= f(1) + f'(1)\,\underbrace{\mathbb{E}_{p_0}[r-1]}_{=\,0} \\"
        r" &\quad + \tfrac12 f''(1)\,\underbrace{\mathbb{E}_{p_0}[(r-1)^2]}_{=\,F\theta^2 + O(\theta^3)} \\"
        r" &\quad + O(\theta^3). \end{aligned}"
    )
    st.markdown(_("For the f of KL[q‖p] and the f of k2 the second derivatives at 1 agree:"))
    ui.formulas(r"f(u) = -\log u:\; f'' = \frac{1}{u^2} \to 1,",
                r"f(u) = \tfrac12 \log^2 u:\; f'' = \frac{1 - \log u}{u^2} \to 1.")
    st.markdown(_(
        "So {ek2} and {kl} are the same parabola {parabola}, and the bias {bias} is {o3}: "
        "relative to the KL it shrinks like θ. On the mean-shift path the odd terms cancel and it "
        "is exactly {t4}, a relative bias of {t2}."
    ).format(ek2=r"$\mathbb{E}_q[k_2]$", kl=r"$\mathrm{KL}[q\|p]$", parabola=r"$\tfrac12 F\theta^2$",
             bias=r"$\mathbb{E}_q[k_2] - \mathrm{KL}[q\|p]$", o3=r"$O(\theta^3)$",
             t4=r"$\theta^4/8$", t2=r"$\theta^2/4$"))
ui.show_source(fisher.fisher_curve)
ui.show_source(fisher.quadratic_approximation)
ui.show_source(exact.f_divergence)

# ====================================================================== 3. k2 against KL
st.header(_("3. Where E[k2] departs from KL"))
st.markdown(_(notes.K2_BIAS_INTRO).format(k2=r"$k_2 = \tfrac12(\log r)^2$", f=r"$f(u) = \tfrac12\log^2 u$", path=_(info.name)))
marks = notes.schulman_marks(path, schulman)
with first:
    ui.answer(notes.answer(path, biases, lo, hi, end_bias))
    ui.chart(
        k2_relative_bias([biases, end_bias], lo=lo, hi=hi, theta_title=theta_title, marks=marks),
        name=_("k2-relative-bias-{path}").format(path=path),
        caption=notes.relative_bias_caption(path, biases, marks, lo, hi, end_bias)
        + " " + _("The path and the θ range are set in part 2 below."),
    )
if lo < hi:
    ui.chart(
        k2_against_kl([biases, end_bias], lo=lo, hi=hi, theta_title=theta_title),
        name=_("k2-and-kl-{path}").format(path=path),
        caption=notes.k2_vs_kl_caption(lo, hi),
    )

ui.table(
    pd.DataFrame(notes.schulman_rows(schulman)),
    name=_("k2-bias-schulman"),
    caption=notes.schulman_caption(schulman),
    column_config={c: st.column_config.NumberColumn(format="%.6g") for c in notes.SCHULMAN_COLUMNS},
)
ui.show_source(fisher.k2_bias_along_path)
