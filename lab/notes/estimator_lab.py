"""What the Estimator Lab says about its numbers: warnings, captions and Schulman's table rows.

Pure functions of core results (no streamlit): the page draws what they return.
Every sentence is whole, with named placeholders, so it can be translated as one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from kl_core import sampling
from kl_core.estimators import ESTIMATORS
from kl_core.exact import Moments
from kl_core.montecarlo import EstimatorSummary
from kl_core.published import PublishedExperiment
from lab.format import number
from lab.notes import Note

__all__ = [
    "NOT_PUBLISHED",
    "estimate_caption",
    "estimator_mean_line",
    "notes",
    "per_sample_caption",
    "relative_caption",
    "running_caption",
    "table_intro",
    "table_rows",
    "too_many_draws",
]


def _names(keys: Sequence[str]) -> str:
    return ", ".join(ESTIMATORS[k].name for k in keys)


def _reason(note: str) -> str:
    """A core note without its "X is infinite: " head."""
    for head in (" is infinite: ", " is reported as inf: "):
        note = note.split(head, 1)[-1]
    return note


def too_many_draws(n: int, repeats: int, limit: int) -> str | None:
    """The message when N · R is over the page's ``limit``, else ``None``."""
    if n * repeats <= limit:
        return None
    return (
        "N · R = {n:,} × {r:,} = {total:,} draws is more than this page runs ({limit:,}, about "
        "two seconds). Lower N or R."
    ).format(n=n, r=repeats, total=n * repeats, limit=limit)


def _infinite_target(target_name: str, users: Sequence[str], moments: Mapping[str, Moments]) -> str:
    note = next((moments[k].note for k in users if moments[k].note), "")
    text = (
        "**{target} is infinite** for this pair ({why}). {names} has no finite value to converge "
        "to: the estimates keep growing with N, and bias/true and stdev/true are undefined."
        if len(users) == 1
        else "**{target} is infinite** for this pair ({why}). {names} have no finite value to "
        "converge to: the estimates keep growing with N, and bias/true and stdev/true are "
        "undefined."
    )
    return text.format(target=target_name, why=_reason(note), names=_names(users))


def _infinite_variance(why: str, keys: Sequence[str]) -> str:
    names = ["Var({name})".format(name=ESTIMATORS[k].name) for k in keys]
    variances = names[0] if len(names) == 1 else "{most} and {last}".format(
        most=", ".join(names[:-1]), last=names[-1])
    overflow = "largest double" in why
    if len(keys) == 1:
        head = "**{v} is too large for a double (shown as ∞)**" if overflow else "**{v} is infinite**"
    else:
        head = "**{v} are too large for a double (shown as ∞)**" if overflow else "**{v} are infinite**"
    hint = (
        " These estimators contain $r = p/q$, so their variance needs "
        "$\\mathbb{E}_q[r^2] = \\int p(x)^2/q(x)\\,dx < \\infty$, and here it is not."
        if "r^2" in why
        else ""
    )
    return (
        head.format(v=variances)
        + ": {why}.{hint} Their means are still finite, but their estimates do not settle into "
        "a normal shape: no normal curve is drawn, and the ±2 SE bands and SE columns "
        "understate the uncertainty (a rare huge value can move an estimate far at any N)."
    ).format(why=why, hint=hint)


def notes(
    keys: Sequence[str],
    targets: Mapping[str, tuple[str, float]],
    moments: Mapping[str, Moments],
    failed: Mapping[str, str],
    true_kl: float,
    true_kl_pq: float,
) -> list[Note]:
    """The warnings about this pair, in the order the page shows them.

    An infinite KL that a shown estimator targets; estimators whose variance is
    infinite (grouped by reason); exact moments that could not be computed;
    p = q.
    """
    out = []
    for name, target in (("KL[q,p]", true_kl), ("KL[p,q]", true_kl_pq)):
        users = [k for k in keys if targets[k][0] == name]
        if math.isinf(target) and users:
            out.append(Note("warning", _infinite_target(name, users, moments), ":material/all_inclusive:"))
    infinite: dict[str, list[str]] = {}
    for k in keys:
        m = moments[k]
        if math.isfinite(m.mean) and math.isinf(m.var):
            infinite.setdefault(_reason(m.note), []).append(k)
    for why, ks in infinite.items():
        out.append(Note("warning", _infinite_variance(why, ks), ":material/warning:"))
    if failed:
        text = (
            "kl_core could not compute the exact moments of {names} for this pair ({why}); their "
            "exact columns are left blank. The Monte Carlo figures are still shown."
        ).format(names=_names(list(failed)), why=next(iter(failed.values())))
        out.append(Note("warning", text, ":material/warning:"))
    if true_kl == 0.0:
        text = (
            "**p = q**: log r = 0 at every sample, so every estimator gives exactly 0 and the true "
            "KL is 0. Bias/true and stdev/true divide by the true KL, so they are undefined here; "
            "the table below shows the absolute numbers instead."
        )
        out.append(Note("info", text, ":material/info:"))
    return out


def estimator_mean_line(key: str, lam: float) -> str:
    """The estimator's summary and what its mean is, under its formula."""
    info = ESTIMATORS[key]
    summary = info.summary
    if key == "k_lambda":
        summary += " Here λ = {lam:g}.".format(lam=lam)
    if info.unbiased_for:
        mean = "Its mean: ${target}$ exactly.".format(target=info.estimates_latex)
    else:
        mean = "Its mean: ${target}$, close to the KL only when p ≈ q.".format(
            target=info.estimates_latex
        )
    return summary + "\n\n" + mean


def per_sample_caption(key: str, result: EstimatorSummary, zero_kl: bool) -> str:
    """Under a per-sample histogram: how many values are negative, and what the dashed line is."""
    if zero_kl:
        return "With p = q every log-ratio is 0, so every value is 0."
    if ESTIMATORS[key].nonnegative:
        return "Never negative ({share:.0%} below 0); dashed: the true {target}.".format(
            share=result.neg_fraction, target=result.target_name
        )
    return (
        "{share:.1%} of single values are negative (shaded), though a KL never is; dashed: the "
        "true {target}."
    ).format(share=result.neg_fraction, target=result.target_name)


def estimate_caption(key: str, moments: Moments, approx: sampling.NormalApproximation | None,
                     target_name: str) -> str:
    """Under a histogram of estimates: the standard error, or why no normal curve is drawn."""
    name = ESTIMATORS[key].name
    if approx is not None and approx.has_density:
        if ESTIMATORS[key].unbiased_for:
            text = "SE of one estimate σ/√N = {se}; the curve is centred on the truth."
        else:
            text = "SE of one estimate σ/√N = {se}; the curve is centred at {mean}, not at {target}."
        return text.format(se=number(approx.se), mean=number(moments.mean), target=target_name)
    if approx is not None and math.isinf(approx.var):
        return (
            "No curve: Var({name}) is infinite, so the CLT's normal approximation does not exist."
        ).format(name=name)
    if approx is not None:
        return "No curve: every estimate is exactly the same (variance 0)."
    return "No curve: the exact moments could not be computed for this pair."


def running_caption(results: Mapping[str, EstimatorSummary], moments: Mapping[str, Moments],
                    n: int) -> str:
    """Under the running means: each estimate at n = N, and a word on infinite variances."""
    finals = " · ".join(
        "{name} {mean} (SE {se})".format(
            name=ESTIMATORS[k].name, mean=number(r.running_mean[-1]), se=number(r.running_se[-1])
        )
        for k, r in results.items()
    )
    text = "At n = {n:,}: {finals}.".format(n=n, finals=finals)
    unsettled = [ESTIMATORS[k].name for k in results if math.isinf(moments[k].var)]
    if unsettled:
        text += (
            " Var({names}) is infinite: that band is unreliable, and the mean jumps when a rare "
            "huge value arrives."
        ).format(names=", ".join(unsettled))
    return text


NOT_PUBLISHED = (
    "Schulman published figures only for q = N(0,1) with p = N(0.1,1) and p = N(1,1): the first "
    "two presets add his column."
)


def table_intro(total: int, seed: int, published: bool) -> str:
    """Above Schulman's table: what the columns are (his own column only for his pairs)."""
    text = (
        "Each estimator's **bias** and per-sample **standard deviation**, divided by the true "
        "value it estimates (KL[q,p]; KL[p,q] for k3_pq), as in Schulman's post. **MC**: this "
        "run's {total:,} draws (seed {seed}); **MC SE**: the standard error of that MC figure, "
        "so MC should lie within about 2 MC SE of exact."
    )
    if published:
        text += " **Schulman**: his published figure for this very pair, as printed."
    return text.format(total=total, seed=seed)


def relative_caption(figure: str, any_infinite: bool) -> str:
    """Under the bias/true or stdev/true table."""
    text = (
        "(mean − true) / true: 0 for an unbiased estimator."
        if figure == "bias/true"
        else "stdev / true: the per-sample spread, relative to the truth."
    )
    if any_infinite:
        text += (
            " *Infinity*: the exact variance is infinite; *None*: no standard error, which needs "
            "a finite variance."
        )
    return text


def table_rows(
    results: Mapping[str, EstimatorSummary],
    moments: Mapping[str, Moments],
    total: int,
    published: PublishedExperiment | None,
) -> tuple[dict[str, list[dict]], list[dict]]:
    """Schulman's table, Monte Carlo beside exact: ``({"bias/true": rows, "stdev/true": rows}, absolute rows)``.

    ``total`` is N · R, the number of draws behind every MC figure.  The MC
    standard errors are left out (NaN) where the exact variance is infinite.
    With ``published`` (the pair is one of Schulman's), his printed figure is a
    column ("—" for an estimator he did not print).
    """
    figures: dict[str, list[dict]] = {"bias/true": [], "stdev/true": []}
    absolute = []
    for key, s in results.items():
        m = moments[key]
        exact_bias, exact_std = sampling.exact_relative_figures(m.mean, m.var, s.target)
        se_bias, se_std = sampling.mc_relative_standard_errors(s.samples, s.std, total, s.target)
        se_mean, se_sd = sampling.mc_standard_errors(s.samples, s.std, total)
        if math.isinf(m.var):  # the MC SEs assume a finite variance
            se_bias = se_std = se_sd = se_mean = math.nan
        pub = published.row(key) if published is not None else None
        for fig, exact_value, mc_value, se in (
            ("bias/true", exact_bias, s.bias_over_true, se_bias),
            ("stdev/true", exact_std, s.std_over_true, se_std),
        ):
            row = {"estimator": s.name, "exact": exact_value, "MC": mc_value, "MC SE": se}
            if published is not None:
                row["Schulman"] = (pub.bias_text if fig == "bias/true" else pub.std_text) if pub else "—"
            figures[fig].append(row)
        absolute.append(
            {
                "estimator": s.name,
                "target": s.target_name,
                "true value": s.target,
                "mean (exact)": m.mean,
                "mean (MC)": s.mean,
                "mean (MC SE)": se_mean,
                "stdev (exact)": m.std,
                "stdev (MC)": s.std,
                "stdev (MC SE)": se_sd,
                "share < 0 (MC)": s.neg_fraction,
            }
        )
    return figures, absolute
