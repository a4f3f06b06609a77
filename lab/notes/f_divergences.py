"""What the f-divergences & Fisher page says about its numbers (no streamlit).

The θ grids each path is integrated on, the registry table of f's, the rows of
the end-point and Schulman tables, and the captions chosen by the path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from charts.f_divergences import F_COLORS, f_label
from i18n import N_, _, ngettext
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.paths import PATHS
from kl_core.estimation.published import SCHULMAN_2020

__all__ = [
    "DEFAULT_F",
    "K2_BIAS_INTRO",
    "K2_COMMON_SLIP",
    "K2_SMALL_PRINT",
    "BiasSide",
    "bias_sides",
    "OLD_VIEWS",
    "THETA_TITLES",
    "U",
    "WITHIN",
    "answer",
    "VIEWS",
    "end_rows",
    "ends_caption",
    "f_curves_caption",
    "f_table",
    "f_table_markdown",
    "infinite_note",
    "k2_vs_kl_caption",
    "path_caption",
    "schulman_caption",
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
    slopes = sorted({d.fprime_at_1 for d in DIVERGENCES.values() if d.fprime_at_1 is not None})
    text = _(
        "All curves pass through 0 at u = 1 (p = q), but the smooth ones leave it with slopes "
        "f′(1) of {slopes} (see the table). Those slopes do not matter ({zero}); switch on the "
        "toggle to remove them and compare the curvatures f″(1) near u = 1."
    ).format(slopes=", ".join(f"{v:g}".replace("-", "−") for v in slopes),
             zero=r"$\mathbb{E}_q[r - 1] = 0$")
    kinked = [_(d.name) for d in DIVERGENCES.values() if d.fprime_at_1 is None]
    if kinked:
        text += " " + ngettext("The f of {names} has a kink there: no single slope.",
                               "The f's of {names} have a kink there: no single slope.",
                               len(kinked)).format(names=_(" and ").join(kinked))
    return text


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


#: On the mean shift both KLs are exactly θ²/2, their parabola (N(θ, 1) against N(0, 1)).
EXACT_PARABOLAS = {"shift": ("kl_qp", "kl_pq")}


def path_caption(ratio: bool, path: str, chosen: list[str], lo: float = -math.inf,
                 hi: float = math.inf) -> str:
    """Under D_f along the path on the range ``[lo, hi]``: the values against their parabolas,
    or their ratio."""
    exact = [k for k in EXACT_PARABOLAS.get(path, ()) if k in chosen]
    others = [k for k in chosen if k not in exact]
    near_zero = lo <= 0.0 <= hi
    if ratio:
        text = (_("Every line heads to 1 at θ = 0: near q each f-divergence is its parabola.")
                if near_zero else
                _("Every line would head to 1 at θ = 0, outside the range shown: near q each "
                  "f-divergence is its parabola."))
        if len(others) > 1:
            text += " " + _("How fast it leaves 1 is set by the terms past θ², which differ between the f's.")
        elif others:
            text += " " + _("How fast it leaves 1 is set by the terms past θ².")
        return text + _on_parabola(exact, ngettext(
            "On this path {names} stays at exactly 1: it is θ²/2, its parabola.",
            "On this path {names} stay at exactly 1: each is θ²/2, its parabola.", len(exact)))
    text = (_(
        "Near θ = 0 each solid line hugs its dashed parabola of the same colour; the parabolas "
        "differ only by f″(1), so f's with equal f″(1) share one."
    ) if near_zero else _(
        "Each solid line is drawn with its dashed parabola of the same colour; they meet near "
        "θ = 0, outside the range shown. The parabolas differ only by f″(1), so f's with equal "
        "f″(1) share one."
    ))
    if others:
        text += " " + (_("Further out the other lines part from their parabolas (the terms past θ²).")
                       if exact else
                       _("Further out the lines part from their parabolas (the terms past θ²)."))
    return text + _on_parabola(exact, ngettext(
        "On this path {names} is exactly θ²/2: its solid line lies on its parabola.",
        "On this path {names} are exactly θ²/2: their solid lines lie on their parabola.", len(exact)))


def _on_parabola(exact: list[str], template: str) -> str:
    """The caption's last sentence, with a leading space: the divergences in ``exact`` that are their
    parabola on this path, by name; "" when there are none."""
    names = _(" and ").join(_(DIVERGENCES[k].name) for k in exact)
    return " " + template.format(names=names) if exact else ""


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


def ends_caption(path: str, fisher: float, at_zero: bool = False) -> str:
    """Under the end-point table; on the mean shift, the closed forms; with an end at θ = 0 (``at_zero``),
    that its ratio is a limit (both sides are 0 there)."""
    text = _(
        "The numbers at the two ends of the θ range (F = {f:.6g}); drag the range ends to read "
        "other θ."
    ).format(f=fisher)
    if at_zero:
        text += " " + _("At θ = 0 both sides are 0: the ratio shown there is its limit, 1.")
    if path == "shift":
        text += " " + _("On this path {kl}, {chi2} and {h2} exactly.").format(
            kl=r"$\mathrm{KL}[q\|p] = \theta^2/2$", chi2=r"$\chi^2 = e^{\theta^2} - 1$",
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


@dataclass(frozen=True)
class BiasSide:
    """What k2's relative bias does on one side of θ = 0 within the range shown.

    ``kind`` is "single" (one point), "grows" or "shrinks" (its size moves one way, one
    sign), "flips" (it changes sign, at ``zeros``) or "turns" (one sign, its size not
    monotone; largest at ``t_peak``).  ``a`` at ``t_a`` is the point nearest θ = 0,
    ``b`` at ``t_b`` the farthest.
    """

    side: str
    kind: str
    t_a: float
    a: float
    t_b: float
    b: float
    zeros: tuple[float, ...] = ()
    t_peak: float = float("nan")
    peak: float = float("nan")


def _merged(bias, ends, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """θ's and relative biases of the grid inside [lo, hi] and of the range's ends, finite ones."""
    t, rb = [np.asarray(bias.thetas, float)], [np.asarray(bias.relative_bias, float)]
    if ends is not None:
        t.append(np.asarray(ends.thetas, float))
        rb.append(np.asarray(ends.relative_bias, float))
    t, rb = np.concatenate(t), np.concatenate(rb)
    keep = (t >= lo) & (t <= hi) & np.isfinite(rb)
    t, idx = np.unique(t[keep], return_index=True)
    return t, rb[keep][idx]


def bias_sides(bias, lo: float, hi: float, ends=None) -> list[BiasSide]:
    """k2's relative bias on each side of θ = 0 in ``[lo, hi]``: θ > 0 first, then θ < 0.

    ``bias`` is the path's grid (``kl_core.estimation.fisher.K2Bias``), ``ends`` the same at the
    range's two ends (drawn on the chart too).
    """
    t, rb = _merged(bias, ends, lo, hi)
    sides = []
    for side, mask in (("θ > 0", t > 0), ("θ < 0", t < 0)):  # i18n: ok (maths)
        order = np.argsort(np.abs(t[mask]))
        ts, ds = t[mask][order], rb[mask][order]
        if ts.size == 0:
            continue
        a, b = dict(t_a=float(ts[0]), a=float(ds[0])), dict(t_b=float(ts[-1]), b=float(ds[-1]))
        if ts.size == 1:
            sides.append(BiasSide(side, "single", **a, **b))
            continue
        cross = np.flatnonzero(np.sign(ds[:-1]) * np.sign(ds[1:]) < 0)
        if cross.size:
            zeros = tuple(float(ts[i] - ds[i] * (ts[i + 1] - ts[i]) / (ds[i + 1] - ds[i]))
                          for i in cross)
            sides.append(BiasSide(side, "flips", **a, **b, zeros=zeros))
            continue
        size = np.diff(np.abs(ds))
        if (size >= 0).all():
            sides.append(BiasSide(side, "grows", **a, **b))
        elif (size <= 0).all():
            sides.append(BiasSide(side, "shrinks", **a, **b))
        else:
            i = int(np.argmax(np.abs(ds)))
            sides.append(BiasSide(side, "turns", **a, **b, t_peak=float(ts[i]), peak=float(ds[i])))
    return sides


def _side_text(s: BiasSide) -> str:
    values = dict(side=s.side, a=f"{s.a:+.3g}", ta=f"{s.t_a:.3g}", b=f"{s.b:+.3g}",
                  tb=f"{s.t_b:.3g}")
    if s.kind == "single":
        return _("At θ = {ta} it is {a}.").format(**values)
    if s.kind == "grows":
        return _("For {side} it grows in size, from {a} at θ = {ta} to {b} at θ = {tb}.").format(
            **values)
    if s.kind == "shrinks":
        return _("For {side} it shrinks in size, from {a} at θ = {ta} to {b} at θ = {tb}.").format(
            **values)
    if s.kind == "flips":
        return _(
            "For {side} it goes from {a} at θ = {ta} to {b} at θ = {tb} and changes sign at "
            "θ ≈ {zeros}, where k2 is exactly unbiased."
        ).format(**values, zeros=", ".join(f"{z:.2g}" for z in s.zeros))  # i18n: ok (numbers)
    return _(
        "For {side} it goes from {a} at θ = {ta} to {b} at θ = {tb}, and is largest in size "
        "({peak}) at θ ≈ {tp}: not monotone."
    ).format(**values, peak=f"{s.peak:+.3g}", tp=f"{s.t_peak:.2g}")


#: The answer's band: E[k2] "tracks" KL[q‖p] where its relative bias is within ±10%.
WITHIN = 0.10


def _percent(x: float) -> str:
    """A relative bias as a signed percentage to 3 significant digits: ``+225%``, ``+0.25%``."""
    return "{v:+.3g}%".format(v=100 * x)  # i18n: ok (number)


def _zeros(t: np.ndarray, rb: np.ndarray) -> list[float]:
    """The θ's (ascending ``t``) where the relative bias ``rb`` is 0 or changes sign, interpolated."""
    out = [float(x) for x in t[rb == 0.0]]
    for j in np.flatnonzero(rb[:-1] * rb[1:] < 0.0):
        out.append(float(t[j] - rb[j] * (t[j + 1] - t[j]) / (rb[j + 1] - rb[j])))
    return sorted(out)


def _reach(ts: np.ndarray, ds: np.ndarray) -> tuple[float, bool]:
    """Walking out from θ = 0 along ``ts`` (sorted by |θ|): the last θ with |bias| ≤ WITHIN
    before the first beyond it (0.0 if the first is beyond), and whether one was beyond."""
    last = 0.0
    for t, d in zip(ts, ds, strict=True):
        if abs(d) > WITHIN:
            return last, True
        last = float(t)
    return last, False


def answer(path: str, bias, lo: float, hi: float, ends=None) -> str:
    """The page's answer: how far along ``path`` E[k2] stays within :data:`WITHIN` of KL[q‖p].

    From the relative bias on the range ``[lo, hi]`` (``bias``: the path's grid,
    ``ends``: the range's ends, both ``kl_core.estimation.fisher.K2Bias``): the θ's
    where it first leaves the band on each side of θ = 0 and its largest size; or,
    for a range that avoids θ = 0, the span of the bias there.
    """
    t, rb = _merged(bias, ends, lo, hi)
    name = _(PATHS[path].name)
    if t.size == 0:
        return _("The θ range is the single point θ = 0, where p = q: E[k2] and KL[q‖p] are both "
                 "0. Widen the range to see them part.")
    size = np.abs(rb)
    i = int(np.flatnonzero(size >= size.max() * (1 - 1e-9))[-1])  # the largest in size; on a tie, the larger θ
    values = dict(path=name, band=f"{WITHIN:.0%}", lo=f"{lo:.3g}", hi=f"{hi:.3g}",
                  big=_percent(rb[i]), t_big=f"{t[i]:.3g}")
    if t.size == 1:
        return _("On the {path} path at θ = {t_big}, E[k2] is off from KL[q‖p] by **{big}** of the "
                 "KL. Widen the range to see where they agree.").format(**values)
    if not lo <= 0.0 <= hi:
        zeros = _zeros(t, rb)
        if zeros:  # the sign changes inside the range: "between" is the signed span
            return _("On the {path} path with θ from {lo} to {hi} (p ≠ q throughout), E[k2] is off "
                     "from KL[q‖p] by between {low} and {high} of the KL, and exactly unbiased at "
                     "θ ≈ {zeros}.").format(**values, low=_percent(rb.min()), high=_percent(rb.max()),
                                            zeros=", ".join(f"{z:.3g}" for z in zeros))
        return _("On the {path} path with θ from {lo} to {hi} (p ≠ q throughout), E[k2] is off from "
                 "KL[q‖p] by between {small} and **{big}** of the KL. Include θ = 0 to see them "
                 "meet.").format(**values, small=_percent(rb[int(np.argmin(np.abs(rb)))]))
    up, up_out = _reach(t[t > 0], rb[t > 0])
    order = np.argsort(-t[t < 0])
    down, down_out = _reach(t[t < 0][order], rb[t < 0][order])
    if not (up_out or down_out):
        return _("On the {path} path, E[k2] stays within {band} of KL[q‖p] over the whole range "
                 "shown (θ from {lo} to {hi}); its largest relative bias is {big}, at θ = {t_big}.").format(
            **values)
    return _("Near p = q, k2 = ½(log r)² averages to nearly KL[q‖p]: on the {path} path, E[k2] stays within "
             "{band} of the KL for θ from {down} to {up}, and at θ = {t_big} it is off by "
             "**{big}**.").format(**values, down=f"{down:.3g}", up=f"{up:.3g}")


def relative_bias_caption(path: str, bias, marks: list, lo: float, hi: float,
                          ends=None) -> str:
    """Under k2's relative bias (``bias``: K2Bias along the path) on the range ``[lo, hi]``.

    What the bias does on each side of θ = 0, from the numbers (:func:`bias_sides`;
    ``ends``: K2Bias at lo and hi), and which of Schulman's ``marks`` lie outside.
    """
    sides = bias_sides(bias, lo, hi, ends)
    parts = []
    if lo <= 0.0 <= hi:
        parts.append(_("Relative to the KL, k2's bias tends to 0 as θ → 0 (p = q)."))
        if len(sides) == 2 and np.sign(sides[0].a) != np.sign(sides[1].a):
            parts.append(_("Next to θ = 0 it has opposite signs on the two sides (the O(θ³) "
                           "term is odd)."))
    else:
        parts.append(_("Relative to the KL, k2's bias on the range shown:"))
    parts += [_side_text(s) for s in sides]
    inside = [m for m in marks if lo <= m[0] <= hi]
    if path == "shift" and len(inside) == len(marks) and marks:
        parts.append(_("The dots are Schulman's two cases."))
    elif path == "shift" and inside:
        parts.append(_("The dot is one of Schulman's two cases."))
    outside = [m[0] for m in marks if not lo <= m[0] <= hi]
    if outside:
        # TRANSLATORS: joins two values, "μ = 0.1 and μ = 1"
        parts.append(_("Widen the θ range to see {mus}.").format(
            mus=_(" and ").join("μ = {mu:g}".format(mu=mu) for mu in outside)  # i18n: ok
        ))
    return " ".join(parts)


#: Section 3's opening, under "Where E[k2] departs from KL" ({k2}, {f}: maths; {path}: its name).
K2_BIAS_INTRO = N_(
    "The mean of {k2} is the f-divergence with {f}. It shares KL's parabola but not its higher "
    "terms, so k2 picks up a bias as p moves away from q: its size grows at first, and further "
    "out it can shrink, vanish and change sign. Same path ({path}) and θ range as above."
)

#: The small print under the registry table: ½ log² u is convex only for u ≤ e.
K2_SMALL_PRINT = N_(
    "Small print: ½ log² u is convex only for u ≤ e (its f″(u) = (1 − log u)/u² turns negative "
    "beyond), so strictly it is not one of Csiszár's f-divergences. It is still ≥ 0 with "
    "f(1) = 0, and all the second-order argument below needs is f″(1)."
)

#: The slip the seed notes make (f″ = (1 + log u)/u², "not convex below 1/e"), corrected.
K2_COMMON_SLIP = N_(
    "A common slip: differentiating f′(u) = (log u)/u as 1/u² + (log u)/u² gives "
    "f″(u) = (1 + log u)/u² and the claim that ½ log² u is not convex below u = 1/e. The "
    "quotient rule gives 1/u² − (log u)/u² = (1 − log u)/u², which is positive for every u < e: "
    "the f is convex below e (1/e included) and concave above it."
)


#: The exact columns of the Schulman table (maths: the same in every language).
SCHULMAN_COLUMNS = ("KL[q‖p]", "E[k2]", "(E[k2] − KL)/KL")


def schulman_rows(bias) -> list[dict]:  # bias: kl_core.estimation.fisher.K2Bias at Schulman's μ's
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
                _("Schulman's printed k2 bias/true"): row.bias.text if row else "",
            }
        )
    return rows


def k2_vs_kl_caption(lo: float, hi: float) -> str:
    """Under E[k2] against KL on the θ range ``[lo, hi]``: where the two lines leave 0."""
    if lo <= 0.0 <= hi:
        return _("The blue line (E[k2]) and the green one (KL) leave 0 together; the shaded gap is "
                 "k2's bias. Its size relative to the KL is the chart at the top of the page.")
    return _("The blue line (E[k2]) and the green one (KL) would leave 0 together at θ = 0, outside "
             "the range shown; the shaded gap is k2's bias. Its size relative to the KL is the chart "
             "at the top of the page.")


def _on_rounding_boundary(x: float, decimals: int) -> bool:
    """x is (to 1e-9 of a last place) halfway between two numbers of ``decimals`` decimals."""
    scaled = x * 10.0**decimals
    return abs(scaled - math.floor(scaled) - 0.5) < 1e-9


def schulman_caption(bias) -> str:  # bias: kl_core.estimation.fisher.K2Bias at Schulman's μ's
    """Under Schulman's table: each exact relative bias beside his printed figure, from the numbers."""
    published = {e.p.mu: e for e in SCHULMAN_2020}
    n = len(bias.thetas)
    parts = [ngettext(
        "Schulman's case, on the mean-shift path, where the exact relative bias is {t2} (the KL, "
        "E[k2] and bias columns are exact).",
        "Schulman's {n} cases, on the mean-shift path, where the exact relative bias is {t2} (the "
        "KL, E[k2] and bias columns are exact).", n).format(n=n, t2=r"$\theta^2/4$")]
    for mu, rel in zip(bias.thetas, bias.relative_bias, strict=True):
        row = published[float(mu)].row("k2")
        values = dict(mu=f"{mu:g}", exact=f"{rel:.4g}", printed=row.bias.text if row else "",
                      d=row.bias.decimals if row else 0)
        if row is None:
            parts.append(_("At μ = {mu} it is {exact}.").format(**values))
        elif round(rel, row.bias.decimals) == row.bias.value and not _on_rounding_boundary(
                rel, row.bias.decimals):
            parts.append(_("At μ = {mu} it is {exact}; he printed {printed}, the same to his "
                           "{d} decimals.").format(**values))
        elif _on_rounding_boundary(rel, row.bias.decimals):
            parts.append(_("At μ = {mu} it is {exact}; his printed {printed} comes from sampling, and "
                           "the exact {exact} sits right on the boundary of rounding to {d} "
                           "decimals.").format(**values))
        else:
            parts.append(_("At μ = {mu} it is {exact}; his printed {printed} comes from sampling, and "
                           "the exact value rounds to {rounded} at {d} decimals.").format(
                               rounded=f"{rel:.{row.bias.decimals}f}", **values))
    return " ".join(parts)
