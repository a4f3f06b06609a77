"""f-divergences & Fisher: why k2 = ½(log r)² tracks KL near p = q, and where it stops.

Three parts, all numbers from ``kl_core``:

1. the registry's f curves near u = 1 and the table of f′(1), f″(1);
2. D_f(p_θ, p_0) along a one-parameter path against ½ f″(1) F θ²
   (``?path=``, ``?f=``, ``?th_<path>=`` for the θ range, ``?view=``);
3. E[k2] against KL[q,p] along the same path, and k2's relative bias, with
   Schulman's two cases (μ = 0.1 and μ = 1 on the mean-shift path) marked.
"""

import numpy as np
import pandas as pd
import streamlit as st

from charts.fisher import (
    F_COLORS,
    divergence_along_path,
    f_curves,
    f_label,
    k2_against_kl,
    k2_relative_bias,
)
from kl_core import exact, fisher
from kl_core.divergences import DIVERGENCES
from kl_core.estimators import bregman
from kl_core.paths import PATHS
from kl_core.published import SCHULMAN_2020
from lab import cache, state, ui
from lab.export import csv_download
from lab.navigation import leave_legacy_wrapper

#: Slider step of the θ range on each path (a path added to the core later gets θ_max / 60).
STEPS = {"shift": 0.05, "scale": 0.01, "logit": 0.05}


def step_of(path: str) -> float:
    """The θ slider's step on ``path``."""
    return STEPS.get(path, PATHS[path].theta_max / 60)
#: x-axis titles: what θ is on each path.
THETA_TITLES = {
    "shift": "θ = μ, the mean of p = N(θ, 1)",
    "scale": "θ = log σ, where p = N(0, σ²)",
    "logit": "θ, the step along v: p = softmax(ℓ₀ + θ·v)",
}
#: f's shown on the path chart by default: f″(1) = 1, 1, 2 and ½.
DEFAULT_F = ("kl_qp", "k2", "pearson", "hellinger")
#: The ratios u = p/q on the f-curve chart.
U = np.linspace(0.2, 3.0, 113)


def theta_grid(path: str) -> np.ndarray:
    """θ's to integrate at: every other slider step, every step in the central half, and a
    finer grid in the central tenth (zooming in on θ = 0 keeps smooth lines).

    The range's two ends are integrated separately, so the lines always reach them.
    """
    top, step = PATHS[path].theta_max, step_of(path)
    n = round(top / step)
    coarse = np.arange(-n, n + 1, 2) * step
    half = np.arange(-(n // 2), n // 2 + 1) * step
    fine = np.linspace(-top / 10, top / 10, 21)
    return np.unique(np.round(np.concatenate([coarse, half, fine]), 10))


#: The θ grid of each path (fixed, so moving the range slider reuses the cache).
GRIDS = {path: theta_grid(path) for path in PATHS}


def latex_cell(tex: str) -> str:
    """Inline maths for a Markdown table cell (a bare | would end the cell)."""
    return "$" + tex.replace(r"\|", r"\Vert ").replace("|", r"\vert ") + "$"


def swatch(key: str) -> str:
    """A square in the f's chart colour, for the table."""
    return f':color[■]{{foreground="{F_COLORS[key]}"}}'


leave_legacy_wrapper()  # first, before anything is drawn: see lab/navigation.py

st.title("f-divergences & Fisher")
st.markdown(
    "k2 = ½(log r)² is **not** the KL: it averages to a different number. Yet when p is close "
    "to q it averages to almost exactly KL[q, p]. This page shows why (every smooth "
    "f-divergence starts as the same parabola, scaled by f″(1), and k2's f has the same "
    "f″(1) = 1 as KL) and how far from q the agreement lasts."
)

# ====================================================================== 1. the f's
st.header("1. One convex f, one divergence")
st.markdown(
    "An **f-divergence** averages a function of the likelihood ratio $r = p(x)/q(x)$ over "
    "samples $x \\sim q$. The function f is convex with $f(1) = 0$, so the divergence is "
    "0 when p = q. Here q is the sampler (the old policy) and p the target (the new one)."
)
ui.formula(r"D_f(p, q) \;=\; \mathbb{E}_{x\sim q}\!\left[f\big(r(x)\big)\right], \qquad r(x) = \frac{p(x)}{q(x)}")

tangent = state.toggle(
    "Subtract each f's tangent at u = 1: draw f(u) − f′(1)·(u − 1)",
    "tan",
    value=False,
    help="Adding c·(u − 1) to f does not change D_f, because E_q[r − 1] = 0. Subtracting the "
    "tangent makes every smooth f touch 0 flat at u = 1, so only its curvature f″(1) is left.",
)
with np.errstate(divide="ignore"):
    log_u = np.log(U)
f_values = {
    key: (bregman(key, log_u) if tangent and d.fprime_at_1 is not None else d.f(U))
    for key, d in DIVERGENCES.items()
}
ui.chart(
    f_curves(U, f_values, tangent_removed=tangent),
    name="f-curves-tangent" if tangent else "f-curves",
    caption=(
        "Every smooth curve now touches 0 flat at u = 1 and bends with curvature f″(1): "
        "χ² most (2), the three f″(1) = 1 curves alike near u = 1, JS least (¼). "
        "Total variation keeps its kink."
        if tangent
        else "All curves pass through 0 at u = 1 (p = q), but leave it with different slopes "
        "f′(1). Those slopes do not matter (E_q[r − 1] = 0); switch on the toggle to remove them "
        "and compare the curvatures f″(1) near u = 1."
    ),
)

f_table = pd.DataFrame(
    {
        "f-divergence": [d.name for d in DIVERGENCES.values()],
        "f(u) (LaTeX)": [d.f_latex for d in DIVERGENCES.values()],
        "D_f(p,q) is (LaTeX)": [d.divergence_latex for d in DIVERGENCES.values()],
        "f′(1)": [d.fprime_at_1 for d in DIVERGENCES.values()],
        "f″(1)": [d.f2_at_1 for d in DIVERGENCES.values()],
    }
)


def number_cell(x: float | None, missing: str) -> str:
    return missing if x is None else f"{x:g}".replace("-", "−")


md = [
    "| | f-divergence | $f(u)$ | $D_f(p,q)$ is | $f'(1)$ | $f''(1)$ |",
    "|---|---|---|---|---:|---:|",
]
for key, d in DIVERGENCES.items():
    md.append(
        f"| {swatch(key)} | {d.name} | {latex_cell(d.f_latex)} | {latex_cell(d.divergence_latex)} "
        f"| {number_cell(d.fprime_at_1, '—')} | {number_cell(d.f2_at_1, '— (kink)')} |"
    )
st.markdown("\n".join(md))
with st.container(horizontal=True, vertical_alignment="center", gap="small"):
    st.markdown(
        ":material/visibility: KL[q,p] and k2's ½ log² u share **f″(1) = 1**, χ² has 2, "
        "Hellinger ½, JS ¼. Total variation has a kink at u = 1: no f′(1), no f″(1), so no "
        "Fisher parabola (TV grows like |θ|, not θ²).",
        width="stretch",
    )
    csv_download(f_table, "f-divergence-registry")
st.markdown(
    "Small print: ½ log² u is convex only for u ≤ e (its f″(u) = (1 − log u)/u² turns negative "
    "beyond), so strictly it is not one of Csiszár's f-divergences. It is still ≥ 0 with "
    "f(1) = 0, and all the second-order argument below needs is f″(1)."
)

# ====================================================================== 2. along a path
st.header("2. Near p = q, every smooth D_f is a parabola")
st.markdown(
    "Move p away from q = p₀ along a one-parameter path θ ↦ p_θ. Expanding $f(r)$ around "
    "$r = 1$ (with $\\mathbb{E}_q[r - 1] = 0$ killing the first-order term) gives, for "
    "every f with a second derivative at 1,"
)
ui.formula(
    r"D_f(p_\theta, p_0) \;=\; \tfrac12\, f''(1)\; \theta^\top F\, \theta \;+\; O(\theta^3),"
    r"\qquad F = \mathbb{E}_{p_0}\!\left[\big(\partial_\theta \log p_\theta(x)\big|_{\theta=0}\big)^2\right]"
)
st.markdown(
    "F is the path's **Fisher information**; with one parameter $\\theta^\\top F\\theta = F\\theta^2$. "
    "So near p = q all smooth f-divergences are the same quadratic, up to the factor f″(1)."
)

path = state.segmented(
    "Path from q = p₀ to p = p_θ",
    "path",
    list(PATHS),
    value="shift",
    format_func=lambda k: PATHS[k].name,
)
info = PATHS[path]
smooth = list(fisher.smooth_divergences())
chosen = state.multiselect(
    "f-divergences to draw (total variation has no f″(1), so no parabola)",
    "f",
    smooth,
    value=[k for k in DEFAULT_F if k in smooth],
    format_func=f_label,
)
top = info.theta_max
range_col, view_col = st.columns([3, 2], gap="medium", vertical_alignment="bottom")
with range_col:
    lo, hi = state.slider(
        f"Range of θ, where ${info.theta_latex}$",
        f"th_{path}",
        min_value=-top,
        max_value=top,
        value=(-top, top),
        step=step_of(path),
        format="%.2f",
    )
with view_col:
    view = state.segmented(
        "Show",
        "view",
        ["values", "ratio"],
        value="values",
        format_func=lambda v: {"values": "D_f and parabola", "ratio": "D_f ÷ parabola"}[v],
        help="The ratio tends to 1 as θ → 0 for every smooth f: that is the Fisher statement.",
    )
lo, hi = sorted((float(lo), float(hi)))  # a link may give the two ends in either order
ui.formula(rf"{info.family_latex}, \qquad p_0 = q, \qquad F = {info.fisher:.6g}")

grid = GRIDS[path]
ends = np.array([lo, hi])
with st.spinner("Integrating the f-divergences along the path (first time only)…"):
    curves = [cache.fisher_curve(path, key, grid) for key in chosen]
    end_curves = [cache.fisher_curve(path, key, ends) for key in chosen]
    biases = cache.k2_bias(path, grid)
    end_bias = cache.k2_bias(path, ends)
    schulman = cache.k2_bias("shift", np.array([e.p.mu for e in SCHULMAN_2020]))

if lo == hi:
    st.info(f"The θ range is the single point θ = {lo:g}; widen it to see the curves.")
if not chosen:
    st.info("Pick at least one f-divergence above to draw it along the path.")
else:
    ratio = view == "ratio"
    ui.chart(
        divergence_along_path(
            curves + end_curves, lo=lo, hi=hi, theta_title=THETA_TITLES.get(path, "θ"), ratio=ratio
        ),
        name=f"f-divergences-{path}-{view}",
        caption=(
            "Every line heads to 1 at θ = 0: near q each D_f is its parabola. How fast it "
            "leaves 1 is the O(θ³) term, which differs between the f's."
            if ratio
            else "Near θ = 0 each solid line hugs its dashed parabola of the same colour; "
            "the parabolas differ only by f″(1), so f's with equal f″(1) share one. Further out "
            "the lines part from their parabolas (the O(θ³) terms)."
            + (" On this path KL[q,p] is exactly θ²/2: its solid line lies on its parabola."
               if path == "shift" and "kl_qp" in chosen else "")
        ),
    )
    if any(
        not np.isfinite(c.exact[(c.thetas >= lo) & (c.thetas <= hi)]).all()
        for c in curves + end_curves
    ):
        st.info(
            "An f-divergence can be infinite: Pearson χ² is $\\mathbb{E}_q[r^2] - 1$, and "
            "$r^2 = p^2/q^2$ has a finite mean under q only if p's tails are light enough. "
            "For q = N(0, 1) and p = N(0, σ²) that needs σ² < 2, i.e. θ < ½ log 2 ≈ 0.347."
            if path == "scale"
            else "Some f-divergence is infinite in this range: the integral of f(r) under q "
            "diverges there.",
            icon=":material/all_inclusive:",
        )
    end_rows = []
    for c in end_curves:
        for i, theta in enumerate(c.thetas):
            end_rows.append(
                {
                    "f-divergence": f_label(c.name),
                    "f″(1)": c.f2_at_1,
                    "θ": theta,
                    "exact D_f(p_θ, p₀)": c.exact[i],
                    "½ f″(1) F θ²": c.quadratic[i],
                    "ratio": c.ratio[i],
                }
            )
    ui.table(
        pd.DataFrame(end_rows),
        name=f"f-divergences-{path}-ends",
        caption=(
            f"The numbers at the two ends of the θ range (F = {info.fisher:.6g}); drag the "
            "range ends to read other θ."
            + (
                " On this path KL[q,p] = $\\theta^2/2$, χ² = $e^{\\theta^2} - 1$ and "
                "H² = $2(1 - e^{-\\theta^2/8})$ exactly."
                if path == "shift"
                else ""
            )
        ),
        column_config={
            "f″(1)": st.column_config.NumberColumn(format="%g"),
            "θ": st.column_config.NumberColumn(format="%.4g"),
            "exact D_f(p_θ, p₀)": st.column_config.NumberColumn(format="%.6g"),
            "½ f″(1) F θ²": st.column_config.NumberColumn(format="%.6g"),
            "ratio": st.column_config.NumberColumn(format="%.5f"),
        },
    )

with st.expander("Why KL and k2's f share f″(1) = 1, and where the parabola comes from",
                 icon=":material/school:"):
    st.markdown(
        "Write $s(x) = \\partial_\\theta \\log p_\\theta(x)\\big|_{\\theta=0}$ (the score). "
        "Then $r = p_\\theta/p_0 = 1 + \\theta s + O(\\theta^2)$, and Taylor's theorem at $r = 1$ gives"
    )
    st.latex(
        r"\mathbb{E}_{p_0}[f(r)] = f(1) + f'(1)\,\underbrace{\mathbb{E}_{p_0}[r-1]}_{=\,0}"
        r" + \tfrac12 f''(1)\,\underbrace{\mathbb{E}_{p_0}[(r-1)^2]}_{=\,F\theta^2 + O(\theta^3)}"
        r" + O(\theta^3)."
    )
    st.markdown("For the f of KL[q,p] and the f of k2 the second derivatives at 1 agree:")
    st.latex(
        r"f(u) = -\log u:\; f''(u) = \frac{1}{u^2} \to 1, \qquad "
        r"f(u) = \tfrac12 \log^2 u:\; f''(u) = \frac{1 - \log u}{u^2} \to 1."
    )
    st.markdown(
        "So $\\mathbb{E}_q[k_2]$ and $\\mathrm{KL}[q,p]$ are the same parabola "
        "$\\tfrac12 F\\theta^2$, and the bias $\\mathbb{E}_q[k_2] - \\mathrm{KL}[q,p]$ is "
        "$O(\\theta^3)$: relative to the KL it shrinks like θ. On the mean-shift path the odd "
        "terms cancel and it is exactly $\\theta^4/8$, a relative bias of $\\theta^2/4$."
    )
ui.show_source(fisher.fisher_curve)
ui.show_source(fisher.quadratic_approximation)
ui.show_source(exact.f_divergence)

# ====================================================================== 3. k2 against KL
st.header("3. Where E[k2] departs from KL")
st.markdown(
    "The mean of $k_2 = \\tfrac12(\\log r)^2$ is the f-divergence with $f(u) = \\tfrac12\\log^2 u$. "
    "It shares KL's parabola but not its higher terms, so k2's bias grows with the distance "
    f"between q and p. Same path ({info.name}) and θ range as above."
)
marks = []
if path == "shift":
    marks = [
        (float(t), float(b), f"μ = {t:g}: {b:.4g}")
        for t, b in zip(schulman.thetas, schulman.relative_bias, strict=True)
    ]
left, right = st.columns(2, gap="medium")
theta_title = THETA_TITLES.get(path, "θ")
with left:
    ui.chart(
        k2_against_kl([biases, end_bias], lo=lo, hi=hi, theta_title=theta_title),
        name=f"k2-and-kl-{path}",
        caption="The blue line (E[k2]) and the green one (KL) leave 0 together; the shaded "
        "gap is k2's bias.",
    )
with right:
    outside = [m for m in marks if not lo <= m[0] <= hi]
    shown_bias = biases.relative_bias[(biases.thetas >= lo) & (biases.thetas <= hi)]
    flips = bool((shown_bias > 0).any() and (shown_bias < 0).any())
    ui.chart(
        k2_relative_bias([biases, end_bias], lo=lo, hi=hi, theta_title=theta_title, marks=marks),
        name=f"k2-relative-bias-{path}",
        caption=(
            "Relative to the KL, k2's bias starts at 0 and grows with the distance; the dots are "
            "Schulman's two cases."
            if path == "shift"
            else "Relative to the KL, k2's bias starts at 0 and grows with the distance"
            + ("; on this path it changes sign with θ (the O(θ³) term is odd)." if flips else ".")
        )
        + (
            " Widen the θ range to see " + " and ".join(f"μ = {m[0]:g}" for m in outside) + "."
            if outside
            else ""
        ),
    )

published = {e.p.mu: e for e in SCHULMAN_2020}
schulman_rows = []
for i, mu in enumerate(schulman.thetas):
    e = published[float(mu)]
    row = e.row("k2")
    schulman_rows.append(
        {
            "q": e.q.name,
            "p": e.p.name,
            "KL[q,p] (exact)": schulman.kl[i],
            "E[k2] (exact)": schulman.mean_k2[i],
            "(E[k2] − KL)/KL (exact)": schulman.relative_bias[i],
            "Schulman's printed k2 bias/true": row.bias_text if row else "",
        }
    )
ui.table(
    pd.DataFrame(schulman_rows),
    name="k2-bias-schulman",
    caption=(
        "Schulman's two cases, on the mean-shift path, where the exact relative bias is "
        "$\\theta^2/4$: 0.0025 at μ = 0.1 and 0.25 at μ = 1. His printed 0.002 comes from "
        "sampling; the exact 0.0025 sits right on the boundary of rounding to three decimals."
    ),
    column_config={
        "KL[q,p] (exact)": st.column_config.NumberColumn(format="%.6g"),
        "E[k2] (exact)": st.column_config.NumberColumn(format="%.6g"),
        "(E[k2] − KL)/KL (exact)": st.column_config.NumberColumn(format="%.6g"),
    },
)
ui.show_source(fisher.k2_bias_along_path)
