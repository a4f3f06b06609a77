"""What the Estimator Lab says about its numbers: warnings, captions and Schulman's table rows.

Pure functions of core results (no streamlit): the page draws what they return.
Every sentence is whole, with named placeholders, so it can be translated as one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from i18n import N_, Nn_, _, message, ngettext
from kl_core import CHI2_OVERFLOW_NOTE, OVERFLOW_NOTE
from kl_core.estimation import sampling_distributions as sampling
from kl_core.estimation.estimators import ESTIMATORS
from kl_core.estimation.exact import MEAN_PRECISION, LambdaStar, Moments
from kl_core.estimation.montecarlo import EstimatorSummary
from kl_core.estimation.published import PublishedExperiment
from kl_core.estimation.reliability import (
    FOURTH_MOMENT_OVERFLOW,
    ErrorBarCheck,
    count_text,
    least_reliable_n,
)
from kl_core.numbers import SMALLEST_NORMAL, unresolved
from kl_core.validation import Message
from lab.format import lam_text, number, share
from lab.notes import Note

__all__ = [
    "HEADERS",
    "answer",
    "NOT_PUBLISHED",
    "SE_TRUSTED",
    "error_bar_notes",
    "estimate_caption",
    "exact_text",
    "mc_std_underflows",
    "lambda_star_text",
    "what_to_notice_applies",
    "normal_curve",
    "unresolved",
    "variance_unresolved",
    "lambda_star_line",
    "estimator_mean_line",
    "column_name",
    "notes",
    "per_sample_caption",
    "per_sample_intro",
    "preset_line",
    "relative_caption",
    "relative_format",
    "running_caption",
    "table_intro",
    "table_rows",
    "too_many_draws",
    "variance_overflowed",
]


def _names(keys: Sequence[str]) -> str:
    return ", ".join(ESTIMATORS[k].name for k in keys)


#: The heads of the core's moment notes (kl_core.estimation.exact): "Var(k3) is infinite: <why>".
_HEADS = ("{what} is infinite: {why}", "{what} is reported as inf: {why}")  # i18n: ok (core templates)


def _shown(why: str) -> str:
    """A core reason in the run's language; the overflow note's example typeset.

    The core writes ``E_q[r²] = e^{μ²}`` in plain text for the command line; on a page it is a formula.
    """
    if isinstance(why, Message) and why.template == OVERFLOW_NOTE.template:
        why = Message(why.template, **{**why.params, "example": r"$\mathbb{E}_q[r^2] = e^{\mu^2}$"})
    return message(why)


def _reason(note: str) -> str:
    """A core note without its "X is infinite: " head: the reason, still a core message.

    Compared and grouped in English (a :class:`Message` is its English text); shown
    with :func:`i18n.message`, in the run's language.
    """
    if isinstance(note, Message) and note.template in _HEADS:
        return note.params["why"]
    for head in (" is infinite: ", " is reported as inf: "):  # i18n: ok (core text)
        note = note.split(head, 1)[-1]
    return note


def _spread_text(estimates: np.ndarray) -> str:
    """The standard deviation of the estimates as the answer prints it; "< 2.225e-308" where every
    estimate is subnormal, so that their spread is not resolved (k2's at Gaussians 1e-161 apart
    came out 0: the estimates, multiples of 4.9e-324, were all equal)."""
    top = float(np.max(np.abs(estimates)))
    return exact_text(top) if unresolved(top) else number(_sd(estimates))


def _sd(values: np.ndarray) -> float:
    """The standard deviation (``ddof=1``) of ``values``, also where their squares underflow.

    Estimates near 1e-172 differ, but their squared deviations round to 0: they are scaled first.
    """
    sd = float(np.std(values, ddof=1))
    if sd == 0.0 and np.ptp(values) > 0.0:
        scale = float(np.max(np.abs(values)))
        sd = float(np.std(values / scale, ddof=1)) * scale
    return sd


def variance_unresolved(m: Moments) -> bool:
    """The exact variance's digits are lost to subnormal doubles (:attr:`Moments.var_unresolved`)."""
    return m.var_unresolved


def exact_text(x: float) -> str:
    """An exact figure as a metric prints it: :func:`lab.format.number`, or "< 2.225e-308" below the
    smallest normal double, where its digits are not resolved."""
    return "< {tiny}".format(tiny=number(SMALLEST_NORMAL)) if unresolved(x) else number(x)


def lambda_star_text(star: LambdaStar) -> str:
    """The metric "λ*": its value; "undefined"; "not resolved" where λ* = (KL[p‖q] + KL[q‖p]) / χ²
    divides numbers below the smallest normal double (1.111 for Gaussians 1e-161 apart, where it is 1)."""
    if star.value is None:
        return _("undefined")
    if not star.resolved:
        return _("not resolved")
    if star.note == CHI2_OVERFLOW_NOTE:  # 0 stands for a positive λ* below (KL sum)/largest double
        return "≈ 0"  # the metric's help gives the reason (the core's note)
    return number(star.value)


def normal_curve(m: Moments, n: int) -> sampling.NormalApproximation | None:
    """The CLT curve over the histogram of estimates: None where the exact moments are missing or
    the variance is not resolved (:func:`variance_unresolved`)."""
    if math.isnan(m.var) or variance_unresolved(m):
        return None
    return sampling.batch_mean_normal(m.mean, m.var, n)


def mc_std_underflows(r: EstimatorSummary) -> bool:
    """The sample standard deviation is not resolved (:attr:`EstimatorSummary.std_unresolved`)."""
    return r.std_unresolved


def _zero_exactly(m: Moments | None, r: EstimatorSummary) -> bool:
    """Target, exact mean and exact variance all 0 to double precision (p = q, or a KL that underflows)."""
    return m is not None and m.mean == 0.0 and m.var == 0.0 and r.target == 0.0


def answer(results: Mapping[str, EstimatorSummary], n: int, repeats: int,
           moments: Mapping[str, Moments] | None = None,
           checks: Mapping[str, ErrorBarCheck | None] | None = None) -> str:
    """The page's answer to its three questions, from the draws on screen.

    Negative shares and the estimates' spread are read off the runs; an average
    "is on target" when it lies within 2 standard errors (over all N·R draws)
    of its exact target, and that is decided per estimator, never assumed.  An
    estimator whose exact variance (``moments``) is infinite, or too large for
    a double, has no error bar, however finite its sample SE looks; one whose
    error bar can't be trusted at N·R draws (``checks``, the error-bar checks at
    N·R, :func:`kl_core.estimation.reliability.error_bar_check`) is put on no side
    of its target.  Where target, exact mean and exact variance are all 0 to
    double precision, what the estimates show is noise around 0, not a bias.
    """
    neg = ", ".join(f"{r.name} {share(r.neg_fraction)}" for r in results.values())
    spread = ", ".join(f"{r.name} {_spread_text(r.batch_means)}" for r in results.values()
                       if r.batch_means.size > 1)
    total = n * repeats
    on, off, unknown, huge, untrusted, too_small, unchecked, zero, noise = [], [], [], [], [], [], [], [], []
    for key, r in results.items():
        se = r.std / math.sqrt(total)
        m = moments.get(key) if moments is not None else None
        exact_var = m.var if m is not None else 0.0
        check = (checks or {}).get(key)
        if _zero_exactly(m, r):
            (zero if r.mean == 0.0 and not np.any(r.batch_means) else noise).append(r)
        elif not (math.isfinite(r.mean) and math.isfinite(r.target) and math.isfinite(se)
                  and not math.isinf(exact_var)):
            (huge if m is not None and math.isfinite(r.target) and _overflowed(m) else unknown).append(r.name)
        elif check is not None and not check.reliable and not math.isnan(check.kurtosis):
            untrusted.append(r.name)
        elif (se == 0.0 or unresolved(se)) and (r.mean != r.target or mc_std_underflows(r)):  # values near 1e-310
            too_small.append(r.name)
        elif check is not None and not check.reliable:  # κ unresolved: moments below the smallest normal double
            unchecked.append(r.name)
        elif abs(r.mean - r.target) <= 2.0 * se:
            on.append(r.name)
        else:
            off.append(_("{name} ({mean} against {target} = {value}, {z} standard errors off)").format(
                name=r.name, mean=number(r.mean), target=r.target_name, value=number(r.target),
                z=f"{abs(r.mean - r.target) / se:.3g}"))
    text = _("**Answer**, from {n:,} × {r:,} draws: a single value is negative for {neg} of the draws; "
             "the {r:,} estimates scatter with a standard deviation of {spread}.").format(
        n=n, r=repeats, neg=neg, spread=spread)
    if on:
        text += " " + _("Within 2 standard errors of its target: {names}.").format(names=", ".join(on))
    if off:
        text += " " + _("Off its target by more than 2 standard errors: {names}.").format(names="; ".join(off))
    if untrusted:
        text += " " + _(
            "No trustworthy error bar (at N · R = {total:,} draws the kurtosis is too large, or the "
            "fourth moment is infinite or too large for a double; see “SE trusted” in §4): {names}."
        ).format(total=total, names=", ".join(untrusted))
    if unknown:
        text += " " + _("No error bar (an infinite variance or target): {names}.").format(
            names=", ".join(unknown))
    if huge:
        text += " " + _("No error bar (a variance too large for a double): {names}.").format(
            names=", ".join(huge))
    if too_small:
        text += " " + _("No error bar (a standard error below the smallest normal double): {names}.").format(
            names=", ".join(too_small))
    if unchecked:
        text += " " + _("No error bar check (the variance or fourth moment is below the smallest normal double, "
                        "and the kurtosis could not be worked out from their logs): {names}.").format(
            names=", ".join(unchecked))
    if zero:
        # p = N(1e-170, 1): the target is 5e-341, 0 only in a double
        text += " " + _("Every estimate of {names} is exactly 0, and so is the target to double precision.").format(
            names=", ".join(r.name for r in zero))
    if noise:
        size = max(float(np.max(np.abs(r.batch_means))) for r in noise)
        text += " " + _(
            "Noise around 0, not a bias: {names}. Target, exact mean and exact variance are all 0 "
            "to double precision, and every estimate lies within about {size} of 0 (rounding, or "
            "values too small for a double to square)."
        ).format(names=", ".join(r.name for r in noise), size=number(size))
    return text


def preset_line(title: str, blurb: str, source: str) -> str:
    """The note on the active preset: its title, blurb and source (translated here).

    A source ending in a web address shows as a link named by the rest.
    """
    source = _(source)
    text, sep, url = source.rpartition(", http")
    if sep:
        source = "[{text}](http{url})".format(text=text, url=url)  # i18n: ok (a link)
    return _("**{title}.** {blurb} *({source})*").format(title=_(title), blurb=_(blurb),
                                                         source=source)


def too_many_draws(n: int, repeats: int, limit: int) -> str | None:
    """The message when N · R is over the page's ``limit``, else ``None``."""
    if n * repeats <= limit:
        return None
    return _(
        "N · R = {n:,} × {r:,} = {total:,} draws is more than this page runs ({limit:,}, about "
        "two seconds). Lower N or R."
    ).format(n=n, r=repeats, total=n * repeats, limit=limit)


def _infinite_target(target_name: str, users: Sequence[str], moments: Mapping[str, Moments]) -> str:
    note = next((moments[k].note for k in users if moments[k].note), "")
    text = (
        _("**{target} is infinite** for this pair ({why}). {names} has no finite value to "
          "converge to: the estimates keep growing with N, and bias/true and stdev/true are "
          "undefined.")
        if len(users) == 1
        else _("**{target} is infinite** for this pair ({why}). {names} have no finite value to "
               "converge to: the estimates keep growing with N, and bias/true and stdev/true are "
               "undefined.")
    )
    return text.format(target=target_name, why=_shown(_reason(note)), names=_names(users))


def _fourth_moment_overflows(check: ErrorBarCheck) -> bool:
    """The check's reason is the core's "fourth moment exceeds the largest double" (compared by template)."""
    reason = check.note.params.get("reason") if isinstance(check.note, Message) else None
    return isinstance(reason, Message) and reason.template == FOURTH_MOMENT_OVERFLOW.template


def _infinite_variance(why: str, keys: Sequence[str], moments: Mapping[str, Moments] | None = None) -> str:
    names = ["Var({name})".format(name=ESTIMATORS[k].name) for k in keys]
    # TRANSLATORS: a list of variances, e.g. "Var(k2), Var(k3) and Var(kλ)"
    variances = names[0] if len(names) == 1 else _("{most} and {last}").format(
        most=", ".join(names[:-1]), last=names[-1])
    overflow = isinstance(why, Message) and why.template == OVERFLOW_NOTE.template
    # where the variance is past a double, its square root may not be: §4 then shows it, not ∞
    fits = [k for k in keys if overflow and moments is not None and _sd_fits(moments[k])]
    one = len(keys) == 1
    if one:
        head = (_("**{v} is too large for a double**") if fits
                else _("**{v} is too large for a double (shown as ∞)**") if overflow
                else _("**{v} is infinite**"))
    else:
        head = (_("**{v} are too large for a double**") if fits
                else _("**{v} are too large for a double (shown as ∞)**") if overflow
                else _("**{v} are infinite**"))
    hint = "" if "r^2" not in why else (
        _(r"This estimator contains $r = p/q$, so its variance needs "
          r"$\mathbb{E}_q[r^2] = \int p(x)^2/q(x)\,dx < \infty$, and here it is not.") if one else
        _(r"These estimators contain $r = p/q$, so their variance needs "
          r"$\mathbb{E}_q[r^2] = \int p(x)^2/q(x)\,dx < \infty$, and here it is not.")
    )
    if fits == list(keys):
        sd = (_("Its square root, the per-sample standard deviation, fits in a double: §4 shows it.")
              if len(keys) == 1
              else _("Their square roots, the per-sample standard deviations, fit in a double: §4 "
                     "shows them."))
    elif fits:
        sd = _(
            "The per-sample standard deviation, the square root, fits in a double for {fit} (§4 "
            "shows it), but not for {over} (shown as ∞)."
        ).format(fit=_names(fits), over=_names([k for k in keys if k not in fits]))
    else:
        sd = ""
    hint = " ".join(filter(None, (hint, sd)))  # two whole sentences
    if overflow and one:
        text = _(
            "{head}: {why}. {hint} Its mean is still finite, but no N you can draw is large "
            "enough for its estimates to take a normal shape: no normal curve is drawn, and no "
            "±2 SE band or SE column can be trusted (a rare huge value can move an estimate far)."
        )
    elif overflow:
        text = _(
            "{head}: {why}. {hint} Their means are still finite, but no N you can draw is large "
            "enough for their estimates to take a normal shape: no normal curve is drawn, and no "
            "±2 SE band or SE column can be trusted (a rare huge value can move an estimate far)."
        )
    elif one:
        text = _(
            "{head}: {why}. {hint} Its mean is still finite, but its estimates do not settle "
            "into a normal shape: no normal curve is drawn, and the ±2 SE band and SE column "
            "have no meaning (a rare huge value can move an estimate far at any N)."
        )
    else:
        text = _(
            "{head}: {why}. {hint} Their means are still finite, but their estimates do not settle "
            "into a normal shape: no normal curve is drawn, and the ±2 SE bands and SE columns "
            "have no meaning (a rare huge value can move an estimate far at any N)."
        )
    return text.format(head=head.format(v=variances), why=_shown(why), hint=hint).replace(".  ", ". ")


def notes(
    keys: Sequence[str],
    targets: Mapping[str, tuple[str, float]],
    moments: Mapping[str, Moments],
    failed: Mapping[str, str],
    true_kl: float,
    true_kl_pq: float,
    *,
    same_pair: bool = False,
) -> list[Note]:
    """The warnings about this pair, in the order the page shows them.

    An infinite KL that a shown estimator targets; estimators whose variance is
    infinite (grouped by reason); exact moments that could not be computed;
    p = q (``same_pair``: both written alike), or a KL of 0 to double precision.
    """
    out = []
    for name, target in (("KL[q‖p]", true_kl), ("KL[p‖q]", true_kl_pq)):
        users = [k for k in keys if targets[k][0] == name]
        if math.isinf(target) and users:
            out.append(Note("warning", _infinite_target(name, users, moments), ":material/all_inclusive:"))
    infinite: dict[str, list[str]] = {}
    for k in keys:
        m = moments[k]
        if math.isfinite(m.mean) and math.isinf(m.var):
            infinite.setdefault(_reason(m.note), []).append(k)
    for why, ks in infinite.items():
        out.append(Note("warning", _infinite_variance(why, ks, moments), ":material/warning:"))
    endless = [k for k in keys if math.isinf(moments[k].mean) and math.isfinite(targets[k][1])]
    if endless:
        text = _(
            "**The mean of {names} is infinite** for this pair ({why}), although the {target} it "
            "is compared with is finite: its estimates grow without bound as N grows, and its "
            "bias/true is undefined."
        ).format(names=_names(endless), why=_shown(_reason(moments[endless[0]].note)),
                 target=targets[endless[0]][0])
        out.append(Note("warning", text, ":material/all_inclusive:"))
    if failed:
        text = _(
            "kl_core could not compute the exact moments of {names} for this pair ({why}); their "
            "exact columns are left blank. The Monte Carlo figures are still shown."
        ).format(names=_names(list(failed)), why=next(iter(failed.values())))
        out.append(Note("warning", text, ":material/warning:"))
    tiny = [name for name, target in (("KL[q‖p]", true_kl), ("KL[p‖q]", true_kl_pq))  # i18n: ok
            if unresolved(target) and any(targets[k][0] == name for k in keys)]
    tiny += [f"Var({k})" for k in keys if variance_unresolved(moments[k])]  # i18n: ok (notation)
    tiny += [f"E_q[{k}]" for k in keys if unresolved(moments[k].mean)]  # i18n: ok (notation)
    if tiny:
        text = _(
            "**Below the smallest normal double (≈{tiny}) for this pair: {names}.** A double holds "
            "such a number with fewer significant digits, and the integrals behind it lose more, or "
            "round it to 0 (for Gaussians 1e-161 apart Var(k1) comes out 10% low). So the page "
            "leaves out every figure it would compute from them (blank in §4's tables), rather than "
            "print digits it cannot resolve."
        ).format(tiny=number(SMALLEST_NORMAL), names=", ".join(dict.fromkeys(tiny)))
        out.append(Note("warning", text, ":material/straighten:"))
    if true_kl == 0.0 and same_pair:
        text = _(
            "**p = q**: log r = 0 at every sample, so every estimator gives exactly zero and the "
            "true KL is zero. Bias/true and stdev/true divide by the true KL, so they are "
            "undefined here; the table below shows the absolute numbers instead."
        )
        out.append(Note("info", text, ":material/info:"))
    elif true_kl == 0.0:
        text = _(
            "**KL[q‖p] is 0 to double precision**: q and p are one distribution written two ways, "
            "or they differ by too little for a double to resolve. Bias/true and stdev/true divide "
            "by the true KL, so they are undefined here; the table below shows the absolute numbers "
            "instead."
        )
        out.append(Note("info", text, ":material/info:"))
    return out


def estimator_mean_line(key: str, lam: float) -> str:
    """The estimator's summary and what its mean is, under its formula."""
    info = ESTIMATORS[key]
    summary = _(info.summary)
    if info.parameter is not None:
        summary = _("{summary} Here λ = {lam}.").format(summary=summary, lam=lam_text(lam))
    if info.unbiased_for:
        mean = _("Its mean: {target} exactly.").format(target=f"${info.estimates_latex}$")
    else:
        mean = _("Its mean is {target}: close to the KL when p ≈ q; further away the two in "
                 "general differ.").format(
            target=f"${info.estimates_latex}$"
        )
    return summary + "\n\n" + mean


def per_sample_intro(results: Mapping[str, EstimatorSummary], total: int, shown: int) -> str:
    """Above the per-sample histograms: which of the shown estimators gave a negative value in this run.

    Chosen from the runs' negative shares (over all ``total`` draws), not from the
    estimators' names: kλ at λ = 1 is k3, and with p = q no value is negative.  The subsample
    of ``shown`` binned values is named only where it is smaller than ``total``.
    """
    negative = [r.name for r in results.values() if r.neg_fraction > 0.0]
    if shown >= total:  # every draw is binned: no subsample to mention
        if negative:
            text = _("The per-sample values $k(x_i)$ of all {total:,} draws are binned. A KL is never "
                     "negative, but in this run single values of {names} are.")
        else:
            text = _("The per-sample values $k(x_i)$ of all {total:,} draws are binned. A KL is never "
                     "negative, and in this run no single value is either.")
    elif negative:
        text = _("The per-sample values $k(x_i)$ of all {total:,} draws (a uniform subsample of "
                 "{shown:,} is binned). A KL is never negative, but in this run single values of "
                 "{names} are.")
    else:
        text = _("The per-sample values $k(x_i)$ of all {total:,} draws (a uniform subsample of "
                 "{shown:,} is binned). A KL is never negative, and in this run no single value is "
                 "either.")
    return text.format(total=total, shown=shown, names=", ".join(negative))


def per_sample_caption(key: str, result: EstimatorSummary, zero_kl: bool, same_pair: bool = False) -> str:
    """Under a per-sample histogram: how many values are negative, and what the dashed line is
    (with p = q, or a KL of 0 to double precision, that every value is 0 where it is)."""
    if zero_kl and same_pair:
        return _("With p = q every log-ratio is 0, so every value is 0.")
    if zero_kl and not np.any(result.samples):
        return _("Every value is 0 to double precision.")
    if ESTIMATORS[key].nonnegative:
        return _("Never negative ({share:.0%} below 0); dashed: the true {target}.").format(
            share=result.neg_fraction, target=result.target_name
        )
    return _(
        "{share} of single values are negative (shaded), though a KL never is; dashed: the "
        "true {target}."
    ).format(share=share(result.neg_fraction), target=result.target_name)


def estimate_caption(key: str, moments: Moments, approx: sampling.NormalApproximation | None,
                     target_name: str, check: ErrorBarCheck | None = None, *,
                     estimates: np.ndarray | None = None, target: float | None = None) -> str:
    """Under a histogram of estimates: the standard error, or why no normal curve is drawn.

    With an unreliable ``check`` (the ±SE at this N), says why the bars look narrower
    than the curve.  ``target`` (the value of ``target_name``) decides whether a biased
    estimator's curve is said to be off it: only where the two differ in the digits
    shown.  ``estimates`` (the R estimates) decide whether a zero variance means
    "every estimate is exactly the same": with p = q yes, with a KL of 0 to double
    precision they can still differ.
    """
    name = ESTIMATORS[key].name
    if approx is None and variance_unresolved(moments):
        return _("No curve: the exact variance of {name} is below the smallest normal double "
                 "(≈{tiny}) for this pair, too small for the page to resolve.").format(
            name=name, tiny=number(SMALLEST_NORMAL))
    if approx is not None and approx.has_density:
        gap = math.nan if target is None else abs(moments.mean - target)
        if ESTIMATORS[key].unbiased_for or gap == 0.0:
            text = _("SE of one estimate σ/√N = {se}; the curve is centred on the truth.")
        elif target is not None and not bias_resolved(moments.mean, target):
            text = _("SE of one estimate σ/√N = {se}; the curve is centred at {mean}, which agrees "
                     "with {target} to the precision of the integration.")
        elif target is not None and number(moments.mean) == number(target):
            text = _("SE of one estimate σ/√N = {se}; the curve is centred at {mean}, which agrees "
                     "with {target} to the digits shown (they differ by {gap}).")
        else:
            text = _("SE of one estimate σ/√N = {se}; the curve is centred at {mean}, not at "
                     "{target}.")
        # the gap is a difference of two nearly equal numbers: 2 significant digits (at
        # p = N(1e-7, 1) it is μ⁴/8 = 1.25e-29, computed as 1.262e-29)
        text = text.format(se=number(approx.se), mean=number(moments.mean), target=target_name,
                           gap=f"{gap:.2g}")
        if _unreliable(check):
            text += " " + _untrusted_spread(estimates, approx.se)
        return text
    if approx is not None and math.isinf(approx.var):
        if _sd_fits(moments):  # σ is shown in §4, but no N you can draw gives the estimates its shape
            return _("No curve: Var({name}) is too large for a double, and no N you can draw is large "
                     "enough for the estimates to take the normal curve's shape.").format(name=name)
        if _overflowed(moments):
            return _("No curve: Var({name}) is too large for a double (shown as ∞), so the normal "
                     "curve cannot be drawn.").format(name=name)
        return _(
            "No curve: Var({name}) is infinite, so the CLT's normal approximation does not exist."
        ).format(name=name)
    if approx is not None:
        if estimates is not None and np.ptp(estimates) > 0.0:
            return _("No curve: the exact variance of {name} is 0 to double precision, yet the "
                     "estimates differ, by up to about {ptp}: rounding, or values too small for a "
                     "double to square.").format(name=name, ptp=number(float(np.ptp(estimates))))
        return _("No curve: every estimate is exactly the same (variance zero).")
    return _("No curve: the exact moments could not be computed for this pair.")


#: Why the band of some estimators under the running means is unreliable: (one, several), each "{text} …".
_BAND_LARGE = Nn_(
    "{text} Var({names}) is too large for a double: that band is unreliable, and the mean jumps when a rare huge "
    "value arrives.",
    "{text} The variances of {names} are too large for a double: those bands are unreliable, and the means jump "
    "when a rare huge value arrives.")
_BAND_HUGE = Nn_(
    "{text} Var({names}) is too large for a double (shown as ∞): that band is unreliable, and the mean jumps when "
    "a rare huge value arrives.",
    "{text} The variances of {names} are too large for a double (shown as ∞): those bands are unreliable, and the "
    "means jump when a rare huge value arrives.")
_BAND_INFINITE = Nn_(
    "{text} Var({names}) is infinite: that band is unreliable, and the mean jumps when a rare huge value arrives.",
    "{text} The variances of {names} are infinite: those bands are unreliable, and the means jump when a rare "
    "huge value arrives.")
_BAND_NARROW = Nn_(
    "{text} The band of {names} can't be trusted at this N: most runs of N draws miss the rare, huge values "
    "behind its SD (see the warning above).",
    "{text} The bands of {names} can't be trusted at this N: most runs of N draws miss the rare, huge values "
    "behind their SDs (see the warning above).")


def running_caption(results: Mapping[str, EstimatorSummary], moments: Mapping[str, Moments],
                    n: int, checks: Mapping[str, ErrorBarCheck | None] | None = None) -> str:
    """Under the running means: each estimate at n = N, and a word on bands that can't be trusted.

    ``checks`` are the error-bar checks at N (:func:`kl_core.estimation.reliability.error_bar_check`).
    """
    # a standard deviation below the smallest normal double has lost its digits (values near 1e-310)
    lost = [k for k, r in results.items() if r.std_unresolved]
    finals = " · ".join(
        "{name} {mean} (SE {se})".format(  # i18n: ok (a name and numbers)
            name=ESTIMATORS[k].name, mean=number(r.running_mean[-1]),
            se="—" if k in lost else number(r.running_se[-1])
        )
        for k, r in results.items()
    )
    text = _("At n = {n:,}: {finals}.").format(n=n, finals=finals)
    if lost:
        text += " " + ngettext("No SE for {names}: its standard deviation is below the smallest normal double.",
                               "No SE for {names}: their standard deviations are below the smallest normal double.",
                               len(lost)).format(names=", ".join(ESTIMATORS[k].name for k in lost))
    huge = [ESTIMATORS[k].name for k in results
            if math.isinf(moments[k].var) and _overflowed(moments[k]) and not _sd_fits(moments[k])]
    large = [ESTIMATORS[k].name for k in results if _sd_fits(moments[k])]  # σ itself fits: not "∞"
    unsettled = [ESTIMATORS[k].name for k in results
                 if math.isinf(moments[k].var) and not _overflowed(moments[k])]
    narrow = [ESTIMATORS[k].name for k in results if _unreliable((checks or {}).get(k))]
    for names, (one, many) in ((large, _BAND_LARGE), (huge, _BAND_HUGE), (unsettled, _BAND_INFINITE),
                               (narrow, _BAND_NARROW)):
        if names:
            text = ngettext(one, many, len(names)).format(text=text, names=", ".join(names))
    return text


def _overflowed(m: Moments) -> bool:
    """True when ``m``'s variance is finite in exact arithmetic but past a double (shown as inf)."""
    return isinstance(m.note, Message) and m.note.template == _HEADS[1]


def variance_overflowed(m: Moments) -> bool:
    """True when ``m``'s variance is ∞ only because it is too large for a double."""
    return math.isinf(m.var) and _overflowed(m)


def _exp(log_x: float) -> float:
    """e^log_x, ``inf`` where that is past the largest double."""
    try:
        return math.exp(log_x)
    except OverflowError:
        return math.inf


def _exact_sd(m: Moments) -> float:
    """The exact per-sample SD: ``m.std``, or e^{½ log Var} where only the variance is past a double
    (:attr:`~kl_core.estimation.exact.Moments.log_var`); ``inf`` where the SD is past a double too."""
    if variance_overflowed(m) and math.isfinite(m.log_var):
        return _exp(m.log_std)
    return m.std


def _sd_fits(m: Moments) -> bool:
    """The variance is too large for a double but the standard deviation is not: §4 shows it."""
    return variance_overflowed(m) and math.isfinite(_exact_sd(m))


def _untrusted_spread(estimates: np.ndarray | None, se: float) -> str:
    """Why the bars need not match the curve where the ±SE can't be trusted, and what they did in this run:
    narrower than the curve, or not (the sd of the estimates against σ/√N, as in the chart's subtitle)."""
    why = _("Batches of N draws often miss the rare, huge values behind σ, and then crowd into a narrower "
            "heap than the curve (see the warning above).")
    sd = math.nan if estimates is None else sampling.observed_spread(estimates)[1]
    if not math.isfinite(sd):
        return why
    # an sd from R estimates is itself uncertain by about 1/√(2(R − 1)) (for normal estimates; more for
    # heavier tails): narrower only past twice that, so noise is not read as the effect
    noise = 2.0 / math.sqrt(2.0 * max(estimates.size - 1, 1))
    if noise >= 1.0:  # R ≤ 3: no sd from so few estimates tells narrower from as wide
        here = ngettext("With {r} estimate, its sd ({sd}, against σ/√N = {se}) cannot tell whether they are "
                        "narrower.",
                        "With only {r} estimates, their sd ({sd}, against σ/√N = {se}) is too uncertain to tell "
                        "whether they are narrower.", estimates.size)
        return why + " " + here.format(r=estimates.size, sd=number(sd), se=number(se))
    if number(sd) == number(se):
        here = _("In this run they do not: the bars spread as wide as the curve to the digits shown (sd {sd}, "
                 "σ/√N = {se}).")
    elif sd < se * (1.0 - noise):
        here = _("Here they do: the bars' sd is {sd} against σ/√N = {se}.")
    elif sd < se:
        here = _("In this run they are about as wide as the curve: the bars' sd, {sd}, is below σ/√N = {se} by "
                 "less than the noise of an sd from this many estimates.")
    else:
        here = _("In this run they do not: the bars spread wider than the curve (sd {sd} against σ/√N = {se}).")
    return why + " " + here.format(sd=number(sd), se=number(se))


def _unreliable(check: ErrorBarCheck | None) -> bool:
    """True for a finite-variance estimator whose ±SE at this N can't be trusted.

    (An infinite variance has its own warning.)
    """
    return (check is not None and not check.reliable and math.isfinite(check.exact_sd)
            and not math.isnan(check.kurtosis))  # NaN: no kurtosis to speak of (moments below a double)


def error_bar_notes(
    checks: Mapping[str, ErrorBarCheck | None], results: Mapping[str, EstimatorSummary]
) -> list[Note]:
    """One warning per estimator whose variance is finite but whose ±SE at N can't be trusted.

    The exact SD is shown beside the sample SD of the first N draws (the one the
    §3 band uses): with a huge or infinite fourth moment the sample SD is
    usually far below the truth (:mod:`kl_core.estimation.reliability`).
    """
    out = []
    for key, check in checks.items():
        if not _unreliable(check):
            continue
        r = results[key]
        sample_sd = r.running_se[-1] * math.sqrt(r.running_n[-1])
        if math.isinf(check.kurtosis):
            text = _(
                "**The ±SE of {name} can't be trusted at N = {n:,}.** Its variance is finite but "
                "its fourth moment is infinite, so most runs of N draws miss the rare, huge values "
                "that carry the variance. Exact SD {exact}; the sample SD of this run's first "
                "{n:,} draws is {sample}."
            )
        else:
            text = _(
                "**The ±SE of {name} can't be trusted at N = {n:,}.** Its kurtosis is {kappa}, "
                "so N draws estimate its variance with a relative standard error of about {rel}; "
                "a trustworthy ±SE needs N ≥ {need}. Exact SD {exact}; the sample SD of this "
                "run's first {n:,} draws is {sample}."
            )
        if math.isinf(check.kurtosis) and _fourth_moment_overflows(check):
            text = _(
                "**The ±SE of {name} can't be trusted at N = {n:,}.** Its variance is finite but "
                "its fourth moment is too large for a double, so most runs of N draws miss the "
                "rare, huge values that carry the variance. Exact SD {exact}; the sample SD of "
                "this run's first {n:,} draws is {sample}."
            )
        if sample_sd < check.exact_sd:
            text += " " + _("So this run's ±2 SE band is too narrow.")
        else:
            text += " " + _("This run's is not below the exact SD, but at this N most runs' are: "
                            "its ±2 SE band can't be relied on.")
        out.append(Note("warning", text.format(
            name=ESTIMATORS[key].name, n=check.n, kappa=number(check.kurtosis),
            rel=number(check.var_relative_se),
            need=count_text(least_reliable_n(check.kurtosis)) if math.isfinite(check.kurtosis) else "",
            exact=number(check.exact_sd), sample=number(sample_sd),
        ), ":material/error_outline:"))
    return out


def lambda_star_line(star: LambdaStar, lo: float, hi: float) -> str | None:
    """Why no button sets λ = λ*: it does not exist here, or it is off the slider's [lo, hi]."""
    if star.value is None:
        return _("There is no λ*: {why}.").format(why=message(star.note))
    if not star.resolved:
        return _("No button sets λ = λ*: {why}.").format(why=message(star.note))
    if not lo <= star.value <= hi:
        shown = number(star.value)
        if float(shown) in (lo, hi):  # 2.000000117 prints as the slider's own end, 2
            shown = lam_text(star.value, also=(lo, hi))
        return _("λ* = {lam} is outside the slider's range.").format(lam=shown)
    return None


SE_TRUSTED = N_(
    "Can the MC SE be trusted at N · R draws? Decided exactly: unchecked where the variance or "
    "the fourth moment is infinite or too large for a double, or both are too small for a double to "
    "give the kurtosis κ, even from their logs, or κ is so large that N · R < 2(κ − 1)."
)

NOT_PUBLISHED = N_(
    "Schulman published figures only for q = N(0,1) with p = N(0.1,1) and p = N(1,1): the first "
    "two presets add his column."
)

#: The column headers of Schulman's table and of the absolute table (``_()`` where shown).
HEADERS = {
    "estimator": N_("estimator"),
    # TRANSLATORS: a column of exact values
    "exact": N_("exact"),
    # TRANSLATORS: a column of Monte Carlo values
    "MC": N_("MC"),
    "MC SE": N_("MC SE"),
    "SE trusted": N_("SE trusted"),
    "Schulman": N_("Schulman"),
    "target": N_("target"),
    "true value": N_("true value"),
    "mean (exact)": N_("mean (exact)"),
    "mean (MC)": N_("mean (MC)"),
    "mean (MC SE)": N_("mean (MC SE)"),
    "stdev (exact)": N_("stdev (exact)"),
    "stdev (MC)": N_("stdev (MC)"),
    "stdev (MC SE)": N_("stdev (MC SE)"),
    "share < 0 (MC)": N_("share < 0 (MC)"),
}


def column_name(key: str) -> str:
    """A table column's header in the run's language (``key`` of :data:`HEADERS`)."""
    return _(HEADERS[key])


def table_intro(total: int, seed: int, published: bool) -> str:
    """Above Schulman's table: what the columns are (his own column only for his pairs)."""
    text = _(
        "Each estimator's **bias** and per-sample **standard deviation**, divided by the true "
        "value it estimates (KL[q‖p]; KL[p‖q] for k3_pq), as in Schulman's post. **MC**: this "
        "run's {total:,} draws (seed {seed}); **MC SE**: the standard error of that MC figure, "
        "so where **SE trusted** is ticked, MC should lie within about 2 MC SE of exact."
    ).format(total=total, seed=seed)
    if published:
        text = _("{text} **Schulman**: his published figure for this very pair, as printed.").format(
            text=text)
    return text


def bias_resolved(mean: float, target: float) -> bool:
    """Whether an exact mean and its target differ by more than the precision they are computed to
    (:data:`kl_core.estimation.exact.MEAN_PRECISION`, relative): k2's exact bias/true at p = N(1e-9, 1) is
    μ²/4 = 2.5e-19, but the difference of the two computed values is rounding, 1.9e-16."""
    return abs(mean - target) > MEAN_PRECISION * max(abs(mean), abs(target))


def relative_format(rows: Sequence[Mapping[str, object]]) -> str:
    """The number format of a bias/true or stdev/true table: 4 decimals, as Schulman prints them;
    4 significant digits where a figure reaches 1e6 (a stdev/true worked out from log Var can be
    6e192, which fixed point writes in 197 characters)."""
    big = any(isinstance(v := row.get(column_name(col)), float) and math.isfinite(v) and abs(v) >= 1e6
              for row in rows for col in ("exact", "MC", "MC SE"))
    return "%.4g" if big else "%.4f"


def relative_caption(figure: str, any_infinite: bool, any_overflow: bool = False,
                     rows: Sequence[Mapping[str, object]] | None = None) -> str:
    """Under the bias/true or stdev/true table.

    ``any_infinite``: an exact variance is infinite; ``any_overflow``: one is finite but
    too large for a double (:func:`variance_overflowed`): the bias/true table shows no SE for
    it, the stdev/true table a figure worked out from log Var (∞ where that is past a double too).
    ``rows``, the table's rows (:func:`table_rows`): ∞ and *None* are explained only
    where the table shows them (without ``rows``, wherever the variances allow them).
    """
    cells = [] if rows is None else [
        (col, v) for row in rows for col in ("exact", "MC", "MC SE")
        if isinstance(v := row.get(column_name(col)), float)]
    shows_inf = rows is None or any(math.isinf(v) for _col, v in cells)
    blank = {col for col, v in cells if math.isnan(v)}
    text = [
        _("(mean − true) / true: zero for an unbiased estimator.")
        if figure == "bias/true"
        else _("stdev / true: the per-sample spread, relative to the truth.")
    ]
    if figure == "stdev/true" and any_overflow:
        text.append(_("Where the exact variance is finite but too large for a double, the figure is worked "
                      "out from its logarithm, exp(½ log Var) / true."))
    if shows_inf and any_infinite and any_overflow:
        text.append(_("∞: the exact variance is infinite, or the figure itself is too large for a "
                      "double.") if figure == "stdev/true" else
                    _("∞: the exact variance is infinite, or too large for a double."))
    elif shows_inf and any_infinite:
        text.append(_("∞: the exact variance is infinite."))
    elif shows_inf and any_overflow:
        text.append(_("∞: the figure itself is too large for a double.") if figure == "stdev/true"
                    else _("∞: the exact variance is finite but too large for a double."))
    if (any_infinite or any_overflow) and (rows is None or blank == {"MC SE"}):
        text.append(_("*None*: no standard error, which needs a finite variance that a double can hold.")
                    if any_overflow else _("*None*: no standard error, which needs a finite variance."))
    elif blank:
        text.append(_("*None*: a figure this page cannot compute or resolve here: an exact mean that agrees with "
                      "the KL to the precision of the integration ({precision:g}, relative), or one the notes "
                      "above explain.").format(precision=MEAN_PRECISION))
    return " ".join(text)


def table_rows(
    results: Mapping[str, EstimatorSummary],
    moments: Mapping[str, Moments],
    total: int,
    published: PublishedExperiment | None,
    checks: Mapping[str, ErrorBarCheck | None] | None = None,
) -> tuple[dict[str, list[dict]], list[dict]]:
    """Schulman's table, Monte Carlo beside exact: ``({"bias/true": rows, "stdev/true": rows}, absolute rows)``.

    ``total`` is N · R, the number of draws behind every MC figure.  The MC
    standard errors are left out (NaN) where the exact variance is infinite.  Where it is
    finite but past a double, the exact SD and stdev/true come from its log
    (:attr:`~kl_core.estimation.exact.Moments.log_var`): exp(½ log Var) and
    exp(½ log Var − log true), ∞ only where past a double too.
    With ``published`` (the pair is one of Schulman's), his printed figure is a
    column right after "exact" ("—" for an estimator he did not print).  ``checks`` (the error-bar
    checks at N · R) add a column "SE trusted": False where the MC SE can't be
    trusted (an infinite variance or fourth moment, or a huge kurtosis).
    Column headers are in the run's language (:func:`column_name`).
    """
    h = {key: column_name(key) for key in HEADERS}
    figures: dict[str, list[dict]] = {"bias/true": [], "stdev/true": []}
    absolute = []
    for key, s in results.items():
        m = moments[key]
        exact_bias, exact_std = sampling.exact_relative_figures(m.mean, m.var, s.target)
        se_bias, se_std = sampling.mc_relative_standard_errors(s.samples, s.std, total, s.target)
        se_mean, se_sd = sampling.mc_standard_errors(s.samples, s.std, total)
        if math.isinf(m.var):  # the MC SEs assume a finite variance
            se_bias = se_std = se_sd = se_mean = math.nan
        mc_bias, mc_std = s.bias_over_true, s.std_over_true
        exact_mean, exact_sd = m.mean, _exact_sd(m)
        if _sd_fits(m) and math.isfinite(s.target) and s.target > 0.0:  # Var past a double, σ/true not
            exact_std = _exp(m.log_std - math.log(s.target))
        if unresolved(m.mean):  # exact figures the page can't resolve: blank, said in the note
            exact_bias = exact_mean = math.nan
        elif exact_bias != 0.0 and not bias_resolved(m.mean, s.target):  # k2 at μ = 1e-9: rounding, not bias
            exact_bias = math.nan
        if variance_unresolved(m):
            exact_std = exact_sd = math.nan
        mc_sd, target = s.std, s.target
        mc_mean = math.nan if unresolved(s.mean) else s.mean  # an average of subnormal values
        if mc_std_underflows(s):  # a subnormal sample std: no MC stdev, no SE
            mc_sd = mc_std = se_bias = se_std = se_mean = se_sd = math.nan
        if unresolved(s.target):  # everything divided by the target
            exact_bias = exact_std = mc_bias = mc_std = se_bias = se_std = target = math.nan
        pub = published.row(key) if published is not None else None
        for fig, exact_value, mc_value, se in (
            ("bias/true", exact_bias, mc_bias, se_bias),
            ("stdev/true", exact_std, mc_std, se_std),
        ):
            row = {h["estimator"]: s.name, h["exact"]: exact_value}
            if published is not None:  # beside "exact", which it is read against (and in view on a phone)
                row[h["Schulman"]] = (
                    (pub.bias if fig == "bias/true" else pub.std).text if pub else "—"
                )
            row |= {h["MC"]: mc_value, h["MC SE"]: se}
            if checks is not None:
                check = checks.get(key)
                row[h["SE trusted"]] = None if check is None else check.reliable
            figures[fig].append(row)
        absolute.append(
            {
                h["estimator"]: s.name,
                h["target"]: s.target_name,
                h["true value"]: target,
                h["mean (exact)"]: exact_mean,
                h["mean (MC)"]: mc_mean,
                h["mean (MC SE)"]: se_mean,
                h["stdev (exact)"]: exact_sd,
                h["stdev (MC)"]: mc_sd,
                h["stdev (MC SE)"]: se_sd,
                h["share < 0 (MC)"]: s.neg_fraction,
            }
        )
    return figures, absolute


#: "What to notice" under the tables (k2's bias need not grow with the distance: on a logit
#: path it shrinks back to 0 and changes sign, see tests/claims/test_k2_bias_along_path.py).
def what_to_notice_applies(keys: Sequence[str], zero_kl: bool) -> bool:
    """:data:`WHAT_TO_NOTICE` reads k1's, k2's and k3's rows of the bias/true and stdev/true tables: shown only
    when all three are (and the KL is not 0, where those tables are not drawn)."""
    return not zero_kl and {"k1", "k2", "k3"} <= set(keys)


WHAT_TO_NOTICE = N_(
    "**What to notice.** k1 and k3 have the same mean, but k3's stdev/true is much smaller "
    "whenever p is close to q and neither has heavier tails than the other. k2's bias/true is "
    "near zero there too; further away, or with tails of another weight, it can grow, shrink or "
    "change sign. Where “SE trusted” is ticked, the MC "
    "column should agree with the exact one to within about 2 MC SE; change the seed to see it "
    "move."
)
