"""What the f-divergences & Fisher page says about its numbers (no streamlit).

The θ grids each path is integrated on, the registry table of f's, the rows of
the end-point and Schulman tables, and the captions chosen by the path.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from charts.fisher import F_COLORS, f_label
from kl_core.divergences import DIVERGENCES
from kl_core.paths import PATHS
from kl_core.published import SCHULMAN_2020
from lab.i18n import N_, _

__all__ = [
    "DEFAULT_F",
    "OLD_VIEWS",
    "THETA_TITLES",
    "U",
    "VIEWS",
    "end_rows",
    "ends_caption",
    "f_curves_caption",
    "f_table",
    "f_table_markdown",
    "infinite_note",
    "path_caption",
    "relative_bias_caption",
    "schulman_marks",
    "schulman_rows",
    "step_of",
    "theta_grid",
]

#: Slider step of the θ range on each path (a path added to the core later gets θ_max / 60).
STEPS = {"shift": 0.05, "scale": 0.01, "logit": 0.05}
#: x-axis titles: what θ is on each path.
THETA_TITLES = {
    "shift": N_("θ = μ, the mean of p = N(θ, 1)"),
    "scale": N_("θ = log σ, where p = N(0, σ²)"),
    "logit": N_("θ, the step along v: p = softmax(ℓ₀ + θ·v)"),
}
#: The two views of the path chart (shown translated).
VIEWS = {"values": N_("f-divergence and parabola"), "ratio": N_("f-divergence ÷ parabola")}
#: The views' labels in links made before they were reworded.
OLD_VIEWS = {"D_f and parabola": "values", "D_f ÷ parabola": "ratio"}
#: f's shown on the path chart by default: f″(1) = 1, 1, 2 and ½.
DEFAULT_F = ("kl_qp", "k2", "pearson", "hellinger")
#: The ratios u = p/q on the f-curve chart.
U = np.linspace(0.2, 3.0, 113)


def step_of(path: str) -> float:
    """The θ slider's step on ``path``."""
    return STEPS.get(path, PATHS[path].theta_max / 60)


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


def f_curves_caption(tangent_removed: bool) -> str:
    """Under the f curves: slopes (as drawn) or curvatures (tangent removed)."""
    if tangent_removed:
        return _(
            "Every smooth curve now touches 0 flat at u = 1 and bends with curvature f″(1): χ² "
            "most (2), the three f″(1) = 1 curves alike near u = 1, JS least (¼). Total "
            "variation keeps its kink."
        )
    return _(
        "All curves pass through 0 at u = 1 (p = q), but leave it with different slopes f′(1). "
        "Those slopes do not matter ({zero}); switch on the toggle to remove them and "
        "compare the curvatures f″(1) near u = 1."
    ).format(zero=r"$\mathbb{E}_q[r - 1] = 0$")


def f_table() -> pd.DataFrame:
    """The registry as a table (for the CSV): name, f(u) and D_f in LaTeX, f′(1), f″(1)."""
    return pd.DataFrame(
        {
            _("f-divergence"): [_(d.name) for d in DIVERGENCES.values()],
            _("f(u) (LaTeX)"): [d.f_latex for d in DIVERGENCES.values()],
            _("D_f(p,q) is (LaTeX)"): [d.divergence_latex for d in DIVERGENCES.values()],
            "f′(1)": [d.fprime_at_1 for d in DIVERGENCES.values()],
            "f″(1)": [d.f2_at_1 for d in DIVERGENCES.values()],
        }
    )


def _latex_cell(tex: str) -> str:
    """Inline maths for a Markdown table cell (a bare | would end the cell)."""
    return "$" + tex.replace(r"\|", r"\Vert ").replace("|", r"\vert ") + "$"


def _number_cell(x: float | None, missing: str) -> str:
    return missing if x is None else f"{x:g}".replace("-", "−")


def f_table_markdown() -> str:
    """The registry as a Markdown table with typeset maths and a colour swatch per f."""
    rows = [
        "| | {name} | $f(u)$ | {is_} | $f'(1)$ | $f''(1)$ |".format(  # i18n: ok (layout)
            name=_("f-divergence"), is_=_("{df} is").format(df="$D_f(p,q)$")),
        "|---|---|---|---|---:|---:|",
    ]
    for key, d in DIVERGENCES.items():
        swatch = ':color[■]{{foreground="{c}"}}'.format(c=F_COLORS[key])
        rows.append(
            "| {swatch} | {name} | {f} | {div} | {f1} | {f2} |".format(  # i18n: ok (layout)
                swatch=swatch, name=_(d.name), f=_latex_cell(d.f_latex),
                div=_latex_cell(d.divergence_latex), f1=_number_cell(d.fprime_at_1, "—"),
                f2=_number_cell(d.f2_at_1, _("— (kink)")),
            )
        )
    return "\n".join(rows)


def path_caption(ratio: bool, path: str, chosen: list[str]) -> str:
    """Under D_f along the path: the values against their parabolas, or their ratio."""
    if ratio:
        return _(
            "Every line heads to 1 at θ = 0: near q each f-divergence is its parabola. How fast it leaves "
            "1 is the O(θ³) term, which differs between the f's."
        )
    text = _(
        "Near θ = 0 each solid line hugs its dashed parabola of the same colour; the parabolas "
        "differ only by f″(1), so f's with equal f″(1) share one. Further out the lines part from "
        "their parabolas (the O(θ³) terms)."
    )
    if path == "shift" and "kl_qp" in chosen:
        text += " " + _("On this path KL[q,p] is exactly θ²/2: its solid line lies on its parabola.")
    return text


#: The end-point table's column of exact values (maths: the same in every language).
EXACT_COLUMN = "D_f(p_θ, p₀)"


def end_rows(curves: list) -> list[dict]:
    """One row per f and end of the θ range: exact D_f, ½ f″(1) F θ² and their ratio."""
    return [
        {
            _("f-divergence"): f_label(c.name),
            "f″(1)": c.f2_at_1,
            "θ": theta,
            EXACT_COLUMN: c.exact[i],
            "½ f″(1) F θ²": c.quadratic[i],
            _("ratio"): c.ratio[i],
        }
        for c in curves
        for i, theta in enumerate(c.thetas)
    ]


def ends_caption(path: str, fisher: float) -> str:
    """Under the end-point table; on the mean shift, the closed forms."""
    text = _(
        "The numbers at the two ends of the θ range (F = {f:.6g}); drag the range ends to read "
        "other θ."
    ).format(f=fisher)
    if path == "shift":
        text += " " + _("On this path {kl}, {chi2} and {h2} exactly.").format(
            kl=r"$\mathrm{KL}[q,p] = \theta^2/2$", chi2=r"$\chi^2 = e^{\theta^2} - 1$",
            h2=r"$H^2 = 2(1 - e^{-\theta^2/8})$")
    return text


def infinite_note(path: str, curves: list, lo: float, hi: float) -> str | None:
    """Why a D_f is infinite somewhere in ``[lo, hi]`` (``curves``: FisherCurve's), else None."""
    if all(np.isfinite(c.exact[(c.thetas >= lo) & (c.thetas <= hi)]).all() for c in curves):
        return None
    if path == "scale":
        return _(
            "An f-divergence can be infinite: Pearson χ² is {chi2}, and {r2} has a finite mean "
            "under q only if p's tails are light enough. For q = N(0, 1) and p = N(0, σ²) that "
            "needs σ² < 2, i.e. θ < ½ log 2 ≈ 0.347."
        ).format(chi2=r"$\mathbb{E}_q[r^2] - 1$", r2=r"$r^2 = p^2/q^2$")
    return _(
        "Some f-divergence is infinite in this range: the integral of f(r) under q diverges "
        "there."
    )


def schulman_marks(path: str, bias) -> list[tuple[float, float, str]]:
    """Schulman's two cases on the relative-bias chart (mean-shift path only): (μ, bias, label)."""
    if path != "shift":
        return []
    return [
        (float(t), float(b), "μ = {mu:g}: {bias:.4g}".format(mu=t, bias=b))  # i18n: ok (maths)
        for t, b in zip(bias.thetas, bias.relative_bias, strict=True)
    ]


def relative_bias_caption(path: str, bias, marks: list, lo: float, hi: float) -> str:
    """Under k2's relative bias (``bias``: K2Bias along the path) on the range ``[lo, hi]``.

    How the bias grows, whether it changes sign in the range, and which of
    Schulman's ``marks`` lie outside it.
    """
    shown = bias.relative_bias[(bias.thetas >= lo) & (bias.thetas <= hi)]
    flips = bool((shown > 0).any() and (shown < 0).any())
    outside = [m[0] for m in marks if not lo <= m[0] <= hi]
    if path == "shift":
        text = _(
            "Relative to the KL, k2's bias starts at 0 and grows with the distance; the dots are "
            "Schulman's two cases."
        )
    elif flips:
        text = _(
            "Relative to the KL, k2's bias starts at 0 and grows with the distance; on this path "
            "it changes sign with θ (the O(θ³) term is odd)."
        )
    else:
        text = _("Relative to the KL, k2's bias starts at 0 and grows with the distance.")
    if outside:
        # TRANSLATORS: joins two values, "μ = 0.1 and μ = 1"
        text += " " + _("Widen the θ range to see {mus}.").format(
            mus=_(" and ").join("μ = {mu:g}".format(mu=mu) for mu in outside)  # i18n: ok
        )
    return text


#: The exact columns of the Schulman table (maths: the same in every language).
SCHULMAN_COLUMNS = ("KL[q,p]", "E[k2]", "(E[k2] − KL)/KL")


def schulman_rows(bias) -> list[dict]:  # bias: kl_core.fisher.K2Bias at Schulman's μ's
    """Schulman's two cases: exact KL, E[k2] and k2's relative bias beside his printed figure."""
    published = {e.p.mu: e for e in SCHULMAN_2020}
    rows = []
    for i, mu in enumerate(bias.thetas):
        e = published[float(mu)]
        row = e.row("k2")
        rows.append(
            {
                "q": e.q.name,
                "p": e.p.name,
                SCHULMAN_COLUMNS[0]: bias.kl[i],
                SCHULMAN_COLUMNS[1]: bias.mean_k2[i],
                SCHULMAN_COLUMNS[2]: bias.relative_bias[i],
                _("Schulman's printed k2 bias/true"): row.bias_text if row else "",
            }
        )
    return rows
