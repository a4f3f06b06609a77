"""What the Control variates page says about its numbers (no streamlit).

The exact variance parabola's warnings, marks and caption; the k_λ profile's
curves and caption; the gain curve's θ grids and caption.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace

import numpy as np

from charts.control_variates import LambdaMark
from i18n import N_, _, message
from kl_core import CHI2_OVERFLOW_NOTE
from kl_core.estimation import estimators
from kl_core.estimation.control_variates import (
    CANCELLATION,
    RESOLVED_SHARE,
    ZERO_TO_ROUNDING,
    GainCurve,
    LambdaParabola,
)
from lab.format import from_log, lam_text, number, share
from lab.notes import Note

__all__ = [
    "answer",
    "chi2_overflows",
    "lam_text",
    "needs_direct_var",
    "p_equals_q",
    "shown_var_lam",
    "var_k3_text",
    "var_lam_text",
    "var_optimal_text",
    "PATH_INTRO",
    "GainSide",
    "gain_sides",
    "lambda_star_missing",
    "path_trend",
    "PATH_THETAS",
    "THETA_TITLES",
    "gain_caption",
    "gain_marker",
    "gain_text",
    "histogram_caption",
    "pair_note",
    "parabola_caption",
    "parabola_marks",
    "parabola_note",
    "parabola_range",
    "profile_caption",
    "profile_curves",
    "theta_title",
]

# The θ grid of each path's gain curve.  θ = 0 (p = q, gain 0/0) is left out: the gain
# tends to a path-dependent constant there, which a point "1 by convention" would hide.
PATH_THETAS = {
    "shift": tuple(np.linspace(0.05, 3.0, 60).tolist()),
    "scale": tuple(np.linspace(-0.6, 0.6, 60).tolist()),
    "logit": tuple(np.linspace(-3.0, 3.0, 60).tolist()),
}
#: The x-axis title of each path's charts, one line each (``_()`` where shown: :func:`theta_title`).
THETA_TITLES = {
    "shift": (N_("μ, the mean of p = N(μ, 1)"), "(q = N(0, 1))"),
    "scale": (N_("log σ, where p = N(0, σ²)"), "(q = N(0, 1))"),
    "logit": (N_("θ, a step along the logit direction v"), N_("(q = p at θ = 0)")),
}


#: Section 4's opening (the path's own behaviour is :func:`path_trend`, from the numbers).
PATH_INTRO = N_(
    "Take p one step θ away from q along a path and compute λ\\* and the gain "
    "Var(k3) / Var(kλ\\*) exactly at each step. Near p = q the numerator and the denominator of "
    "λ\\* are both ≈ F θ² (F the Fisher information), so **λ\\* → 1 on every path**. That does "
    "not make k3 optimal: both variances shrink like θ⁴, and their ratio tends to a constant set "
    "by the direction of the step: 1 when the score of the step has zero third moment (the "
    "Gaussian mean shift, or any symmetric location shift), above 1 otherwise. Further away it "
    "depends on the path and on the side of θ = 0: λ\\* < 1 where χ²(p‖q) exceeds "
    "KL[p‖q] + KL[q‖p], λ\\* > 1 where it falls short, and the gain may rise or fall. The line "
    "under the charts says what the chosen path does."
)


@dataclass(frozen=True)
class GainSide:
    """What λ* and the gain do on one side of θ = 0 of a path's grid, moving away from p = q.

    ``trend`` of the finite gains: "rises", "falls", "rises-falls", "falls-rises" (turning
    at ``t_turn``, value ``g_turn``) or "mixed".  ``t_infinite`` is the first θ where
    Var(k3) (so the gain) is infinite, NaN if none.
    """

    side: str
    t_a: float
    t_b: float
    lam_a: float
    lam_b: float
    g_a: float
    g_b: float
    trend: str
    t_turn: float = math.nan
    g_turn: float = math.nan
    g_min: float = math.nan
    g_max: float = math.nan
    t_infinite: float = math.nan


def gain_sides(curve: GainCurve) -> list[GainSide]:
    """λ* and the gain on each side of θ = 0 (θ > 0 first), ordered away from p = q."""
    out = []
    thetas = np.asarray(curve.thetas, float)
    for side, mask in (("θ > 0", thetas > 0), ("θ < 0", thetas < 0)):  # i18n: ok (maths)
        order = np.argsort(np.abs(thetas[mask]))
        t, lam, gain = (np.asarray(a, float)[mask][order] for a in (thetas, curve.lam_star,
                                                                     curve.gain))
        finite = np.isfinite(gain)
        if not finite.any():
            continue
        t_inf = float(t[~finite][0]) if (~finite).any() else math.nan
        n = int(np.argmin(finite)) if (~finite).any() else t.size  # the finite stretch
        t, lam, g = t[:n], lam[:n], gain[:n]
        steps = np.sign(np.diff(g))
        steps = steps[steps != 0]
        turns = np.flatnonzero(steps[1:] != steps[:-1])
        extra = {}
        if steps.size == 0 or turns.size == 0:
            trend = "rises" if steps.size and steps[0] > 0 else "falls"
        elif turns.size == 1:
            trend = "rises-falls" if steps[0] > 0 else "falls-rises"
            i = int(np.argmax(g)) if steps[0] > 0 else int(np.argmin(g))
            extra = dict(t_turn=float(t[i]), g_turn=float(g[i]))
        else:
            trend = "mixed"
        out.append(GainSide(side, float(t[0]), float(t[-1]), float(lam[0]), float(lam[-1]),
                            float(g[0]), float(g[-1]), trend, g_min=float(g.min()),
                            g_max=float(g.max()), t_infinite=t_inf, **extra))
    return out


def _gain_side_text(s: GainSide) -> str:
    values = dict(side=s.side, ta=f"{s.t_a:.2g}", tb=f"{s.t_b:.2g}", la=f"{s.lam_a:.3g}",
                  lb=f"{s.lam_b:.3g}", ga=f"{s.g_a:.4g}", gb=f"{s.g_b:.4g}",
                  tt=f"{s.t_turn:.2g}", gt=f"{s.g_turn:.4g}", lo=f"{s.g_min:.4g}",
                  hi=f"{s.g_max:.4g}")
    templates = {
        "rises": N_("For {side}, from θ = {ta} to {tb}, λ\\* goes from {la} to {lb} and the gain "
                    "rises from ×{ga} to ×{gb}."),
        "falls": N_("For {side}, from θ = {ta} to {tb}, λ\\* goes from {la} to {lb} and the gain "
                    "falls from ×{ga} to ×{gb}."),
        "rises-falls": N_("For {side}, from θ = {ta} to {tb}, λ\\* goes from {la} to {lb}; the "
                          "gain rises from ×{ga} to ×{gt} (θ = {tt}), then falls to ×{gb}."),
        "falls-rises": N_("For {side}, from θ = {ta} to {tb}, λ\\* goes from {la} to {lb}; the "
                          "gain falls from ×{ga} to ×{gt} (θ = {tt}), then rises to ×{gb}."),
        "mixed": N_("For {side}, from θ = {ta} to {tb}, λ\\* goes from {la} to {lb}; the gain "
                    "moves up and down between ×{lo} and ×{hi}, ending at ×{gb}."),
    }
    text = _(templates[s.trend]).format(**values)
    if not math.isnan(s.t_infinite):
        text += " " + _("From θ = {t} on, Var(k3) and so the gain are infinite.").format(
            t=f"{s.t_infinite:.2g}")
    return text


def path_trend(curve: GainCurve) -> str:
    """Under the path charts: what λ* and the gain do on each side of θ = 0, from the numbers."""
    return " ".join(_gain_side_text(s) for s in gain_sides(curve))


def theta_title(path_key: str) -> list[str]:
    """The x-axis title of a path's charts, its lines in the run's language."""
    return [_(line) for line in THETA_TITLES[path_key]]


def _all_infinite(par: LambdaParabola) -> bool:
    return math.isinf(par.var_log_r)


def _chi2_infinite(par: LambdaParabola) -> bool:
    return math.isinf(par.var_r) and not _all_infinite(par)


def chi2_overflows(lam_star_note: str) -> bool:
    """χ²(p‖q) is finite but past a double, from the core's λ* note (``LambdaStar.note``)."""
    return lam_star_note == CHI2_OVERFLOW_NOTE


def _chi2_overflows(par: LambdaParabola) -> bool:
    """χ² is finite but past a double: shown as ∞, yet every Var(kλ) is finite."""
    return _chi2_infinite(par) and chi2_overflows(par.lam_star_note)


#: The metrics' word for a variance that is finite but past the largest double (≈1.8e308).
TOO_LARGE = N_("too large for a double")
#: How far apart (in standard deviations) two Gaussians of one width are when E_q[r²] = e^{μ²/σ²}
#: passes the largest double.
OVERFLOW_SDS = math.sqrt(math.log(sys.float_info.max))


#: Var(log r) and Var(r) at or below this are rounding, not a difference between p and q: log r's
#: spread is then under 1e-15, a few units in the last place of r = 1 (shifted categorical
#: logits give 1.6e-32; normal(1e-170,1) against normal(0,1) gives 0).
ROUNDING_VAR = 1e-30


def p_equals_q(par: LambdaParabola) -> bool:
    """p = q to double precision (written the same, written two ways, or too close to resolve)."""
    return par.var_log_r <= ROUNDING_VAR and par.var_r <= ROUNDING_VAR


def as_shown(par: LambdaParabola) -> LambdaParabola:
    """The parabola the page draws and prints: where p = q to double precision, its rounding
    noise (Var(log r) = 1.6e-32 for shifted categorical logits) set to the zero it stands for."""
    if not p_equals_q(par):
        return par
    return replace(par, var_log_r=0.0, cov=0.0, var_r=0.0, true_kl=0.0, direct_var_k3=None, direct_var_optimal=None)


def has_one_lam_star(par: LambdaParabola) -> bool:
    """λ* is one λ to show or set: defined, resolved, not p = q (where every λ ties at 0), and not
    the tiny positive λ* of a χ² past a double (the core's 0, a duplicate of λ = 0)."""
    return par.lam_star_defined and par.resolved and not p_equals_q(par) and not _chi2_overflows(par)


def _from_log(log_x: float) -> str:
    """A positive number from its natural log, 3 significant digits, even past a double's range."""
    if math.log(sys.float_info.min) < log_x < math.log(sys.float_info.max):
        return lam_text(math.exp(log_x))
    return from_log(log_x, 3, trim=True)


def _lam_star(par: LambdaParabola) -> str:
    """λ* as printed: :func:`lam_text`, or from its log where χ² is past a double (the core's 0)."""
    if _chi2_overflows(par) and math.isfinite(par.log_lam_star):
        return _from_log(par.log_lam_star)
    return lam_text(par.lam_star)


def _overflow_limit(par: LambdaParabola) -> str:
    """Where χ² is past a double: |λ| below this keeps λ²·E_q[r²], so Var(kλ), in a double.
    Rounded up at 3 digits, so that "only for |λ| below it" stays true."""
    log_lim = par.log_lam_limit
    exponent = math.floor(log_lim / math.log(10.0))
    mantissa = math.ceil(math.exp(log_lim - exponent * math.log(10.0)) * 100.0) / 100.0
    return _from_log(math.log(mantissa) + exponent * math.log(10.0))


def lam_star_text(par: LambdaParabola) -> str:
    """The metric "λ*": its value; "any λ" where p = q to double precision (every λ ties at 0);
    "undefined" where every λ has infinite variance."""
    if not par.lam_star_defined:
        return _("undefined")
    if p_equals_q(par):
        return _("any λ")
    return _lam_star(par) if par.resolved else _("not resolved")


def _k3_below_resolution(par: LambdaParabola) -> bool:
    """Var(k3) was integrated directly and rounded to 0 (below ZERO_TO_ROUNDING · Var(log r))."""
    return par.direct_var_k3 == 0.0 and not p_equals_q(par)


def _resolution(par: LambdaParabola) -> float:
    return ZERO_TO_ROUNDING * par.var_log_r


def var_k3_text(par: LambdaParabola) -> str:
    """The metric "Var(k3)": its value; "< floor" below the page's resolution; "too large for a
    double" where χ² overflows (Var(k3) ≥ χ² − 2 Cov is then past the largest double too)."""
    if _k3_below_resolution(par):
        return "< {floor}".format(floor=number(_resolution(par)))
    if _chi2_overflows(par):
        return _(TOO_LARGE)
    return number(par.var_k3)


def needs_direct_var(par: LambdaParabola, lam: float) -> bool:
    """Whether the page must integrate Var(kλ) at ``lam`` directly: the parabola's three terms
    cancel there to below CANCELLATION · Var(log r), leaving rounding noise (as the core does for
    k3 and kλ*). λ = 1 and λ = λ* reuse the core's direct values."""
    if p_equals_q(par) or not (math.isfinite(par.var_log_r) and math.isfinite(par.var_r)):
        return False
    if lam == 1.0 or (lam == par.lam_star and par.direct_var_optimal is not None):
        return False
    return float(par.variance(lam)) < CANCELLATION * par.var_log_r


def shown_var_lam(par: LambdaParabola, lam: float, direct: float | None = None) -> float:
    """Var(kλ) at the reader's λ as the page shows it: the core's direct Var(k3) at λ = 1 and
    Var(kλ*) at λ*; ``direct`` (Var(kλ) integrated, see :func:`needs_direct_var`) where the
    parabola cancels, rounded to 0 below the page's resolution; where χ² is past a double, the
    exact value wherever it fits (``LambdaParabola.variance_at``); else the parabola."""
    if lam == 1.0:
        return par.var_k3
    if lam == par.lam_star and par.direct_var_optimal is not None:
        return par.var_optimal
    if direct is not None and needs_direct_var(par, lam):
        return 0.0 if direct < _resolution(par) else direct
    if _chi2_overflows(par):
        return par.variance_at(lam)
    return float(par.variance(lam))


def var_lam_text(par: LambdaParabola, lam: float, direct: float | None = None) -> str:
    """The metric "Var(kλ)" at the reader's λ (:func:`shown_var_lam`): "< floor" below the page's
    resolution, as for Var(k3); "too large for a double" where it is finite but past one."""
    if lam == 1.0:
        return var_k3_text(par)
    if direct is not None and needs_direct_var(par, lam) and direct < _resolution(par):
        return "< {floor}".format(floor=number(_resolution(par)))
    var = shown_var_lam(par, lam, direct)
    if _chi2_overflows(par) and math.isinf(var):
        return _(TOO_LARGE)
    return number(var)


def var_optimal_text(par: LambdaParabola) -> str:
    """The metric "Var(kλ*)": its value; — where every λ is infinite or λ* is not resolved."""
    if _all_infinite(par) or not par.resolved:
        return "—"
    return number(par.var_optimal)


def gain_text(par: LambdaParabola) -> str:
    """The metric "gain Var(k3) / Var(kλ*)": ×1.234, ∞, or — where λ* is undefined or not
    resolved; where χ² overflows, the bound Var(k3)/Var(k1) > 1.8e308/Var(k1) that a double allows."""
    if _chi2_overflows(par) and par.var_log_r > 0.0:
        bound = min(sys.float_info.max / par.var_log_r, sys.float_info.max)
        return "> {bound}".format(bound=number(bound))
    gain = math.nan if _all_infinite(par) else par.gain
    if math.isnan(gain):
        return "—"
    return "∞" if math.isinf(gain) else "×{gain:.4g}".format(gain=gain)


def pair_note(par: LambdaParabola, why_infinite: str) -> Note | None:
    """The note on this pair: p = q, every variance infinite, or χ² infinite (else None).

    ``why_infinite`` is the core's reason Var(log r) is infinite (``Moments.note`` of k1).
    """
    if p_equals_q(par):
        return Note(
            "info",
            _("p = q to double precision: r = 1 at every sample up to rounding, so every kλ is zero "
              "up to rounding, and so is every λ's variance. Move p away from q to see the parabola."),
            ":material/info:",
        )
    if _all_infinite(par):
        text = _(
            "**Var(log r) is infinite for this pair**, so every kλ has infinite variance: adding "
            "λ(r − 1) cannot cancel it, and λ* is undefined."
        )
        if why_infinite:
            text = _("{text} ({why})").format(text=text, why=message(why_infinite))
        return Note("warning", text, ":material/warning:")
    if _chi2_overflows(par):
        return Note(
            "warning",
            _(r"**$\chi^2(p\|q) = \mathrm{{Var}}_q(r)$ is too large for a double for this pair**: "
              r"$\mathbb{{E}}_q[r^2] = \int p^2/q$ is finite but above ≈1.8e308, as $e^{{\mu^2/\sigma^2}}$ "
              r"is for two Gaussians of width σ more than {sds} standard deviations apart. The "
              r"histograms can still look tame: the variance lives in rare, huge values of r that a "
              r"finite sample seldom contains.").format(sds=f"{OVERFLOW_SDS:.3g}"),
            ":material/warning:",
        )
    if _chi2_infinite(par):
        return Note(
            "warning",
            _(r"**$\chi^2(p\|q) = \mathrm{Var}_q(r)$ is infinite for this pair**: the control "
              r"variate r − 1 itself has infinite variance: $\mathbb{E}_q[r^2] = \int p^2/q$ "
              r"diverges, because p's tails are too heavy for q's. Then Var(kλ) = ∞ for "
              r"**every λ ≠ 0** — k3 included — and "
              r"the best one can do is λ* = 0, plain k1. The histograms can still look tame: the "
              r"variance lives in rare, huge values of r that a finite sample seldom contains."),
            ":material/warning:",
        )
    return None


def lambda_star_missing(par: LambdaParabola, lo: float, hi: float) -> str | None:
    """Why there is no "λ = λ*" button: λ* does not exist for this pair, or lies off [lo, hi]."""
    if not par.lam_star_defined:
        return _("No λ = λ* button: λ* does not exist here ({why}).").format(
            why=message(par.lam_star_note))
    if not par.resolved and not p_equals_q(par):
        return _("No λ = λ* button: double precision cannot resolve λ* for this pair.")
    if _chi2_overflows(par):
        return _("No λ = λ* button: λ* = {lam} is positive but 0 to the slider's precision, so "
                 "λ = 0 (k1) stands for it.").format(lam=_lam_star(par))
    if not lo <= par.lam_star <= hi:
        return _("λ* = {lam} lies outside the slider's range [{lo:g}, {hi:g}].").format(
            lam=lam_text(par.lam_star, also=(lo, hi)), lo=lo, hi=hi)
    return None


def parabola_range(par: LambdaParabola, lo: float, hi: float) -> tuple[float, float]:
    """The λ range of the parabola chart: the slider's, widened to show λ* with a margin."""
    if math.isfinite(par.lam_star) and not _all_infinite(par):
        return min(lo, par.lam_star - 0.3), max(hi, par.lam_star + 0.3)
    return lo, hi


def parabola_marks(par: LambdaParabola, lam: float, direct: float | None = None) -> list[LambdaMark]:
    """The marked points: k1 (λ = 0), k3 (λ = 1), λ* (if defined) and the reader's λ (at the
    variance the metric shows, :func:`shown_var_lam`; off the chart where χ² is past a double)."""
    marks = [
        LambdaMark("λ = 0: k1", 0.0, par.var_log_r, "k1"),  # i18n: ok
        LambdaMark("λ = 1: k3", 1.0, par.var_k3, "k3"),  # i18n: ok
    ]
    if not (_all_infinite(par) or p_equals_q(par)) and par.resolved:  # p = q: every λ ties
        label = _("λ* = {lam}: least variance").format(lam=_lam_star(par))
        marks.append(LambdaMark(label, par.lam_star, par.var_optimal, None))
    label = _("your λ = {lam}").format(lam=lam_text(lam))
    var = float(par.variance(lam)) if _chi2_overflows(par) else shown_var_lam(par, lam, direct)
    marks.append(LambdaMark(label, lam, var, "k_lambda"))
    return marks


def parabola_note(par: LambdaParabola) -> list[str] | None:
    """The chart's title when the curve cannot be drawn, in short lines (a phone is 358 px wide)."""
    if _all_infinite(par):
        return [_("Var(kλ) = ∞ for every λ:"), _("no curve to draw")]
    if _chi2_overflows(par):
        return [_("χ² is too large for a double:"), _("only λ = 0 is drawn")]
    if _chi2_infinite(par):
        return [_("Var(kλ) = ∞ for every λ ≠ 0:"), _("only the point at λ = 0 is finite")]
    return None


def answer(par: LambdaParabola) -> str:
    """The page's answer to "which λ?", from the exact variances of this pair."""
    if _chi2_overflows(par):  # the conclusion; the caption says what the chart can draw
        return _("**Answer:** k1 (λ = 0) is the best λ to double precision, with a variance of {v} "
                 "per sample. λ* = {lam} is positive but tiny, because its denominator χ²(p‖q) is "
                 "finite but too large for a double; Var(k3) (λ = 1) is too large for a double as "
                 "well.").format(v=number(par.var_log_r), lam=_lam_star(par))
    if p_equals_q(par) or _all_infinite(par) or _chi2_infinite(par):
        return _("**Answer:** {text}").format(text=parabola_caption(par))
    if _k3_below_resolution(par):
        return _("**Answer:** Var(k3) and Var(kλ*) are both below {floor}, which is {rel:g} times "
                 "Var(k1) = {k1} (λ = 0), the smallest share of it this page resolves. So it shows "
                 "neither λ* nor how much kλ* beats k3.").format(floor=number(_resolution(par)), k1=number(par.var_log_r),
                                     rel=ZERO_TO_ROUNDING)
    if not par.resolved:
        return _("**Answer:** Double precision cannot resolve λ* and the gain Var(k3) / Var(kλ*) "
                 "for this pair: Var(kλ*) is so small next to Var(k1) = {k1} (λ = 0) that the "
                 "rounding of log r = log p − log q moves the computed λ* enough to change "
                 "Var(kλ*) by more than {share} of its value, so the page shows neither. "
                 "Var(k3) (λ = 1) is {k3}.").format(k1=number(par.var_log_r), k3=number(par.var_k3),
                                                    share=share(RESOLVED_SHARE))
    text = _(
        "**Answer:** λ* = {lam} has the least variance, {opt} per sample, against {k3} for k3 "
        "(λ = 1) and {k1} for k1 (λ = 0): for the same standard error k3 needs {gain} times as many "
        "samples as kλ*."
    ).format(lam=_lam_star(par), opt=number(par.var_optimal), k3=number(par.var_k3),
             k1=number(par.var_log_r), gain=number(par.gain))
    if par.var_optimal == 0.0:  # resolved: the core checked that r takes at most two values
        text += " " + _("Here Var(kλ*) is 0 to double precision: λ*(r − 1) cancels all of k1's noise. "
                        "It can do so exactly only where r takes two values, since a straight line "
                        "meets the curve log r in at most two points.")
    tied = [name for name, v in (("k1", par.var_log_r), ("k3", par.var_k3))
            if number(v) == number(par.var_optimal)]
    if len(tied) == 2:
        text += " " + _("To the 4 digits shown, k1 and k3 are already as good as kλ*.")
    elif tied:
        text += " " + _("To the 4 digits shown, {name} is already as good as kλ*.").format(name=tied[0])
    return text


def parabola_caption(par: LambdaParabola) -> str:
    """Under the parabola: where its minimum is, or why there is none."""
    if p_equals_q(par):
        return _("With p = q (to double precision) every coefficient is zero up to rounding: the "
                 "'parabola' is flat at zero.")
    if _all_infinite(par) and math.isinf(par.true_kl):
        return _("Nothing to minimise: the variance is infinite for every λ. KL[q‖p] itself is infinite "
                 "here, so no kλ has a finite mean to be unbiased for.")
    if _all_infinite(par):
        return _("Nothing to minimise: the variance is infinite for every λ.")
    if _chi2_overflows(par):
        return _(
            "The chart draws k1's ● at λ = 0 alone: it computes Var(kλ) from three coefficients, "
            "and the coefficient of λ², χ²(p‖q), is too large for a double. Var(kλ) itself is "
            "finite for every λ, but fits in a double only for |λ| below {lim}."
        ).format(lim=_overflow_limit(par))
    if _chi2_infinite(par):
        return _(
            "Only λ = 0 (k1) has a finite variance, {v}; the coefficient of λ², χ²(p‖q), is "
            "infinite, so any λ ≠ 0 makes the variance infinite."
        ).format(v=number(par.var_log_r))
    if not par.resolved:
        return _(
            "Double precision cannot place the bottom of this curve: its minimum Var(kλ*) is too "
            "small next to Var(k1) = {k1} (the ● at λ = 0) to resolve, so no ★ is drawn. Every "
            "point of it has the same mean, KL[q‖p] = {kl}; only the spread changes."
        ).format(k1=number(par.var_log_r), kl=number(par.true_kl))
    same = _("Every point of it has the same mean, KL[q‖p] = {kl}; only the spread changes.").format(
        kl=number(par.true_kl))
    low1, low3 = (number(v) == number(par.var_optimal) for v in (par.var_log_r, par.var_k3))
    if low1 and low3:
        where = _("The ★ marks the bottom of the curve, λ* = {lam}; to the 4 digits shown k1's ● and "
                  "k3's ▲ are as low.")
    elif low3:
        where = _("The ★ marks the bottom of the curve, λ* = {lam}: k3's ▲ sits there too (to the 4 "
                  "digits shown), and k1's ● higher.")
    elif low1:
        where = _("The ★ marks the bottom of the curve, λ* = {lam}: k1's ● sits there too (to the 4 "
                  "digits shown), and k3's ▲ higher.")
    else:
        where = _("The ★ marks the bottom of the curve, λ* = {lam}; k1's ● and k3's ▲ sit higher on "
                  "it.")
    return where.format(lam=_lam_star(par)) + " " + same


def histogram_caption(neg_fraction: float, n: int) -> str:
    """Under the kλ histogram: the share of negative values."""
    if neg_fraction > 0:
        return _(
            "{share} of the {n:,} values are negative (shaded side), although every single "
            "one is a sample of a KL estimator."
        ).format(share=share(neg_fraction), n=n)
    return _("No value is negative at this λ.")


#: The log r range of the profile chart, widened to show the negative band's finite end (up to ±this).
PROFILE_REACH = 6.0


def profile_range(interval: tuple[float, float] | None) -> tuple[float, float]:
    """The profile chart's log r range: [−2.5, 2.5], widened to show the negative band's finite end with a
    margin (λ = 3: −2.82; λ = 0.1: 3.61), but not past ±:data:`PROFILE_REACH`."""
    lo, hi = -2.5, 2.5
    if interval is not None:
        ends = [x for x in interval if math.isfinite(x) and abs(x) <= PROFILE_REACH - 0.3]
        lo, hi = min([lo, *(x - 0.3 for x in ends)]), max([hi, *(x + 0.3 for x in ends)])
    return lo, hi


def profile_curves(logr: np.ndarray, lam: float) -> list[tuple[str, np.ndarray, str]]:
    """kλ (unless λ is 0 or 1), k3 and k1 as functions of log r: ``(label, values, estimator key)``."""
    curves = []
    if lam not in (0.0, 1.0):
        label = "kλ, λ = {lam}".format(lam=lam_text(lam))  # i18n: ok
        curves.append((label, estimators.k_lambda(logr, lam), "k_lambda"))
    curves.append(("k3 (λ = 1)", estimators.k3(logr), "k3"))
    curves.append(("k1 (λ = 0)", estimators.k1(logr), "k1"))
    return curves


def profile_caption(lam: float, interval: tuple[float, float] | None, neg_fraction: float) -> str:
    """Under the profile: where kλ < 0 (``interval`` of log r), tied to the histogram's share."""
    if interval is None:
        return _(
            "At λ = 1 the curve (green) touches 0 at log r = 0 and is positive everywhere else: "
            "no sample can be negative."
        )
    if math.isinf(interval[1]):
        if neg_fraction == 0.0:
            return _(
                "For λ = {lam} ≤ 0, −log r < 0 and λ(r − 1) ≤ 0 whenever log r > 0: every sample "
                "with p(x) > q(x) is negative, though none of the draws above has p(x) > q(x)."
            ).format(lam=lam_text(lam))
        return _(
            "For λ = {lam} ≤ 0, −log r < 0 and λ(r − 1) ≤ 0 whenever log r > 0: every sample "
            "with p(x) > q(x) is negative — {share} of the draws above."
        ).format(lam=lam_text(lam), share=share(neg_fraction))
    if neg_fraction == 0.0:
        return _(
            "For λ = {lam}, kλ < 0 exactly when {a} < log r < {b} (shaded purple), a stretch that "
            "shrinks to nothing as λ → 1. None of the draws above fell there: no value is negative."
        ).format(lam=lam_text(lam), a=number(interval[0]), b=number(interval[1]))
    return _(
        "For λ = {lam}, kλ < 0 exactly when {a} < log r < {b} (shaded purple), a stretch that "
        "shrinks to nothing as λ → 1. That is where the {share} negative draws above come from."
    ).format(lam=lam_text(lam), a=number(interval[0]), b=number(interval[1]), share=share(neg_fraction))


def gain_marker(path_key: str, curve: GainCurve) -> tuple[float, float] | None:
    """On the mean-shift path, the point nearest Schulman's μ = 1 (a black dot)."""
    if path_key != "shift":
        return None
    i = int(np.argmin(np.abs(curve.thetas - 1.0)))
    return float(curve.thetas[i]), float(curve.gain[i])


def gain_caption(path_key: str, curve: GainCurve) -> str:
    """Under the gain curve: the gain next to p = q, and what it does further out."""
    near = int(np.argmin(np.abs(curve.thetas)))  # the step closest to p = q
    near_text = _("×{gain:.4g} at θ = {theta:.2g}").format(gain=curve.gain[near],
                                                           theta=curve.thetas[near])
    if path_key == "shift":
        marker = gain_marker(path_key, curve)
        return _(
            "The gain is {near}, ×{at1:.4g} at Schulman's μ = 1 (the labelled dot) and about ×{far:,.0f} "
            "at μ = {end:g}: k3 is nearly optimal only for small shifts."
        ).format(near=near_text, at1=marker[1], far=curve.gain[-1], end=curve.thetas[-1])
    if path_key == "scale":
        return _(
            "Already {near}, next to p = q: for a change of scale k3 is not nearly optimal even "
            "for tiny steps. Widening p past σ = √2 (θ ≈ 0.35) makes χ² infinite, so Var(k3) = ∞ "
            "while kλ* (λ* = 0, plain k1) stays finite: grey band."
        ).format(near=near_text)
    return _(
        "For this 5-token categorical the gain is {near}, next to p = q, and stays between "
        "×{lo:.4g} and ×{hi:.4g} on the range shown: all variances are finite."
    ).format(near=near_text, lo=np.nanmin(curve.gain), hi=np.nanmax(curve.gain))
