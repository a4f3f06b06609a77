"""What the "Audit your log-probs" page says about a report (no streamlit).

The column roles and their URL keys, the bundled example's exact values for
the roles it was made with, the summary and position tables, and the captions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from charts.audit import bucket_label
from i18n import N_, _, ngettext
from kl_core.audit.statistics import (
    ESTIMATOR_KEYS,
    MIN_FOR_SE,
    RB_DEFINITIONS,
    RB_KEY,
    AuditReport,
    EstimatorSummary,
    PositionBucket,
    SampleSizeCheck,
    SequenceSummary,
    se_band_coverage,
    shown_positions,
)
from lab.format import from_log, number, share, with_past_double_logs
from lab.notation import audit_label

__all__ = [
    "AUDIT_KEYS",
    "COLUMN_ROWS",
    "QUESTION",
    "columns_frame",
    "mean_text",
    "se_text",
    "summary_mean_text",
    "missing_columns",
    "times_text",
    "verdict",
    "verdict_chart_caption",
    "verdict_rows",
    "DIRECTION_HELP",
    "DIRECTION_LABELS",
    "direction_label",
    "example_role",
    "kl_column_after_switch",
    "holds_kl_column",
    "upload_key",
    "drawn_share",
    "ess_share",
    "mean_help",
    "EXAMPLE_ROLES",
    "NONE",
    "PICKERS",
    "counted_line",
    "example_info",
    "exact_for",
    "histogram_caption",
    "meaning",
    "kl_column_note",
    "rb_caption",
    "ratio_text",
    "variance_ratio_text",
    "position_buckets",
    "position_caption",
    "unseen_position_means",
    "thin_buckets",
    "position_formats",
    "position_rows",
    "rb_formula",
    "se_caveat",
    "sequence_ratio_shown",
    "sequences_caption",
    "summary_caption",
    "summary_frame",
]

NONE = "(none)"
#: Column roles: URL key, label, required.  The keys are the ones the audit used
#: on the "approx_kl in practice" page, so old links keep their column choices;
#: ``kc``, the exact-KL column of the Rao–Blackwellized ``rb``, came with this page.
PICKERS = (
    ("sc", N_("Sampler log-prob column"), True),
    ("oc", N_("Other log-prob column"), True),
    ("mc", N_("Mask column (1 = count)"), False),
    ("pc", N_("Position column"), False),
    ("qc", N_("Sequence id column"), False),
    ("rc", N_("Rollout log-prob column"), False),
    ("kc", N_("Exact next-token KL column (gives rb)"), False),
)
#: Every URL key of the audit: the column roles and the direction.
AUDIT_KEYS = (*(key for key, _label, _required in PICKERS), "dir")
#: The bundled example's columns for each role (data/example_audit.csv).
EXAMPLE_ROLES = {
    "sc": "logp_policy",
    "oc": "logp_ref",
    "mc": "mask",
    "pc": "position",
    "qc": "sequence_id",
    "rc": NONE,
    "kc": "kl_policy_ref",
}
#: The bundled example's exact-KL column of each direction's KL (data/example_audit.json's
#: ``kl_cols``): the default of ``kc`` follows the direction, so that rb estimates the KL that k1
#: and k3 estimate (:func:`example_role`).
EXAMPLE_KL_COLS = {"sampler-other": "kl_policy_ref", "other-sampler": "kl_ref_policy"}
#: The two directions in words (shown translated: :func:`direction_label`).
DIRECTION_LABELS = {"sampler-other": N_("KL[sampler‖other]"), "other-sampler": N_("KL[other‖sampler]")}
#: The direction picker's help: what each direction averages (kl_core.audit.statistics.DEFINITIONS;
#: the other direction's k1, k2, k3 are r times k1, k2, k3 of −log r).
DIRECTION_HELP = N_(
    r"KL[sampler‖other] averages $k_i(\log r)$ for k1, k2, k3; KL[other‖sampler] averages "
    r"$r\,k_i(-\log r)$: each estimator of the reversed log-ratio, weighted by $r$ (for k3 that is k3_pq)."
)


def rb_formula(direction: str) -> str:
    r"""What the rb column holds, in TeX, its ``\text{sampler}``/``\text{other}`` labels in the run's language."""
    formula = RB_DEFINITIONS[direction]["formula"]
    for word in ("sampler", "other"):
        formula = formula.replace(r"\text{" + word + "}", audit_label(word))  # i18n: ok (the core's label, replaced)
    return formula


def direction_label(direction: str) -> str:
    """``"sampler-other"`` → ``KL[sampler‖other]``, in the run's language."""
    return _(DIRECTION_LABELS[direction])


def example_role(role: str, direction: str) -> str:
    """The column picker ``role``'s default: the example's column for it; for ``kc``, the exact-KL
    column of the KL that ``direction`` names (KL[policy‖ref] or KL[ref‖policy])."""
    return EXAMPLE_KL_COLS[direction] if role == "kc" else EXAMPLE_ROLES[role]


def upload_key(role: str, upload_id: str) -> str:
    """The widget key of an uploaded file's column picker: keyed by the upload, so a new file's
    columns start fresh, and kept out of the URL (a link can't carry the file)."""
    return f"up_{role}_{upload_id}"


def holds_kl_column(key: object) -> bool:
    """Whether a widget key is a picker of the exact-KL column (``kc``): the example's or an upload's."""
    return key == "kc" or str(key).startswith(upload_key("kc", ""))


def kl_column_after_switch(column: str | None, direction: str) -> str | None:
    """``kc`` once the direction is switched to ``direction``: the other direction's default column
    becomes this one's; any other choice (a column of the reader's, "(none)") is kept."""
    others = {col for d, col in EXAMPLE_KL_COLS.items() if d != direction}
    return EXAMPLE_KL_COLS[direction] if column in others else column


def example_info(meta: Mapping, file_name: str) -> str:
    """The box that says the bundled example is shown, and what it is."""
    return _(
        "**No file uploaded, so this is the bundled example** `data/{name}`: {seqs} sequences "
        "from a toy policy over {vocab} tokens, with a reference model drifting away along the "
        "sequence (made by `{generator}`). Its exact KLs are known, and shown beside the "
        "estimates while the columns keep its own roles. The column choices below are part of this page's link."
    ).format(name=file_name, seqs=meta["n_sequences"], vocab=meta["vocab_size"],
             generator=meta["generator"])


def exact_for(meta: Mapping, chosen: Mapping[str, str | None], direction: str) -> dict[str, float] | None:
    """The example's exact means for this direction, if the columns keep the generator's roles.

    Per token for k1, k2, k3; per sequence (``seq_k1`` …) too when the sequence
    column is the generator's.  ``None`` when the chosen roles differ.
    """
    args = meta["audit_args"]
    same = (
        chosen["sc"] == args["sampler_col"]
        and chosen["oc"] == args["other_col"]
        and chosen["mc"] == args["mask_col"]
        and chosen["rc"] is None
    )
    if not same:
        return None
    d = direction.replace("-", "_")
    ex = meta["exact"]
    out = {
        "k1": ex[f"kl_{d}_per_token"],
        "k2": ex[f"k2_{d}_per_token"],
        "k3": ex[f"kl_{d}_per_token"],
    }
    rb = chosen.get("kc") is not None and chosen.get("kc") == meta.get("kl_cols", {}).get(direction)
    if rb:  # rb estimates the same KL as k1 and k3
        out["rb"] = ex[f"kl_{d}_per_token"]
    if chosen["qc"] == args["sequence_col"]:
        out |= {
            "seq_k1": ex[f"kl_{d}_per_sequence"],
            "seq_k2": ex[f"k2_{d}_per_sequence"],
            "seq_k3": ex[f"kl_{d}_per_sequence"],
        }
        if rb:
            out["seq_rb"] = ex[f"kl_{d}_per_sequence"]
    return out


def _kl_pairs(meta: Mapping) -> dict[tuple[str, str], str]:
    """The example's exact-KL columns, keyed by the log-prob columns of the KL each holds.

    ``kl_cols[d]`` is direction ``d``'s column for the generator's roles, so with sampler ``s`` and
    other ``o`` it holds KL[s‖o] for ``sampler-other`` and KL[o‖s] for ``other-sampler``.
    """
    args, cols = meta["audit_args"], meta.get("kl_cols", {})
    s, o = args["sampler_col"], args["other_col"]
    ends = {"sampler-other": (s, o), "other-sampler": (o, s)}
    return {ends[d]: col for d, col in cols.items() if d in ends}


def kl_column_note(meta: Mapping | None, chosen: Mapping[str, str | None], direction: str) -> str | None:
    """A warning when the example's exact-KL column is not the KL that k1 and k3 estimate here.

    That KL follows the chosen columns: KL[sampler column‖other column] for ``sampler-other``,
    KL[other column‖sampler column] for ``other-sampler``; so swapping the two log-prob columns
    swaps the exact-KL column that matches.
    """
    kl_col = chosen.get("kc")
    if meta is None or kl_col is None:
        return None
    pairs = _kl_pairs(meta)
    held = next((pair for pair, col in pairs.items() if col == kl_col), None)
    if held is None:  # not one of the example's exact-KL columns: nothing known about it
        return None
    sc, oc = chosen.get("sc"), chosen.get("oc")
    drawn = meta["audit_args"]["sampler_col"]
    if sc != drawn:  # the tokens were not drawn from the chosen sampler: no KL of the example is estimated
        return _(
            "The example's tokens were drawn from `{drawn}`, not from `{sc}`: with `{sc}` as the sampler "
            "column, k1 and k3 average over the wrong distribution and do not estimate the KL the direction "
            "names, so no exact-KL column, `{col}` included, is theirs to match."
        ).format(drawn=drawn, sc=sc, col=kl_col)
    estimated = (sc, oc) if direction == "sampler-other" else (oc, sc)
    if estimated == held:
        return None
    want = pairs.get(estimated)
    args = {"col": kl_col, "x": held[0], "y": held[1], "kl": direction_label(direction),
            "a": estimated[0], "b": estimated[1], "want": want}
    if want is not None:
        return _(
            "`{col}` holds the exact next-token KL[`{x}`‖`{y}`], but with these columns {kl} is "
            "KL[`{a}`‖`{b}`]: choose `{want}`, so that rb estimates the same KL as k1 and k3."
        ).format(**args)
    return _(
        "`{col}` holds the exact next-token KL[`{x}`‖`{y}`], but with these columns {kl} is "
        "KL[`{a}`‖`{b}`], which no column of the example holds: rb estimates another KL than k1 and k3."
    ).format(**args)


def ratio_text(x: float | None, log_x: float = math.nan) -> str:
    """A variance ratio as shown in a metric: ``×12.3``; ``—`` when undefined, ``∞`` when rb is constant;
    from its log ``log_x`` where it is past the largest double (``×4.152e+694``)."""
    if x is None or math.isnan(x):
        return "—"
    if math.isinf(x) and math.isfinite(log_x):
        return "×" + from_log(log_x, 4, trim=True)
    return "×∞" if math.isinf(x) else "×{x:.4g}".format(x=x)


def variance_ratio_text(ratios: Mapping[str, float], logs: Mapping[str, float] | None, key: str) -> str:
    """:func:`ratio_text` of ``ratios[key]`` (``AuditReport.variance_ratio`` or a sequence summary's),
    with its log from ``logs`` (``log_variance_ratio``) where it is past a double."""
    return ratio_text(ratios[key], (logs or {}).get(key, math.nan))


def rb_caption(report: AuditReport, same_kl: bool = True, se_shown: bool = True) -> str:
    """What the rb figures mean, and the honest limit for sequence sums.

    ``same_kl`` False (:func:`kl_column_note` warns that the column holds another KL than the one
    k1 and k3 estimate): rb is no conditional mean of k1 or k3, so the ratios compare estimators of
    different quantities, and the caption says only that.  ``se_shown`` False (too few tokens for a
    standard error, :meth:`~kl_core.audit.statistics.AuditReport.sample_size`): no standard deviation
    is shown, so no ratio of variances either, and no comparison.
    """
    if not se_shown:
        return _(
            "rb is the exact KL of the two next-token distributions at each token's prefix: the mean of k1 "
            "(and of k3) given that prefix. In expectation it can only remove variance (law of total "
            "variance); with this few tokens the variances are not shown, so neither are their ratios."
        )
    if not same_kl:
        return _(
            "rb is the mean of the exact-KL column, but that column holds another KL than the one k1 and "
            "k3 estimate here (see the warning), so it is not the mean of k1 (or of k3) given the prefix: "
            "Var(k1)/Var(rb) = {k1} and Var(k3)/Var(rb) = {k3} compare estimators of different quantities, "
            "not the variance rb removes."
        ).format(k1=variance_ratio_text(report.variance_ratio, report.log_variance_ratio, "k1"),
             k3=variance_ratio_text(report.variance_ratio, report.log_variance_ratio, "k3"))
    text = _(
        "rb is the exact KL of the two next-token distributions at each token's prefix: the "
        "mean of k1 (and of k3) given that prefix. In expectation it can only remove variance "
        "(law of total variance); here Var(k1)/Var(rb) = {k1} and Var(k3)/Var(rb) = {k3}."
    ).format(k1=variance_ratio_text(report.variance_ratio, report.log_variance_ratio, "k1"),
             k3=variance_ratio_text(report.variance_ratio, report.log_variance_ratio, "k3"))
    more = [k for k in ("k1", "k3") if report.variance_ratio[k] < 1]  # nan: no claim either way
    if len(more) == 2:
        text += " " + _("For this file rb varies **more** per token than k1 and k3.")
    elif more:
        text += " " + _("For this file rb varies **more** per token than {k}.").format(k=more[0])
    seq = sequence_ratio_shown(report)
    if seq is not None:
        r1 = seq.variance_ratio["k1"]
        text += " " + _(
            "Summed over each sequence it is usually far less variable too, but not always: the "
            "terms of a sum covary across positions (see *Tokens & sequences*). Here "
            "Var(Σk1)/Var(Σrb) = {r}."
        ).format(r=variance_ratio_text(seq.variance_ratio, seq.log_variance_ratio, "k1"))
        if not math.isnan(r1) and r1 < 1:
            text += " " + _("For this file the sums of rb vary **more** than the sums of k1.")
    return text


def sequence_ratio_shown(report: AuditReport) -> SequenceSummary | None:
    """The file's sequences where Var(Σk1)/Var(Σrb) is shown: where there are enough of them for a sequence
    standard error (``SequenceAudit.sample_size``), as for the sequence std beside it; else None (4 sequences
    gave "×1846" beside "too few sequences for a standard error")."""
    seq = report.sequences
    if seq is None or seq.variance_ratio is None or not seq.sample_size().se:
        return None
    return seq


def counted_line(report: AuditReport, file_name: str) -> str:
    """Which tokens count, and which KL the report estimates."""
    if report.n == report.n_total:
        text = ngettext("**{name}:** its one token, estimating **{kl}**.",
                        "**{name}:** all {n:,} tokens, estimating **{kl}**.", report.n)
    else:
        text = _(
            "**{name}:** {n:,} of {total:,} tokens (the mask drops the rest), estimating **{kl}**."
        )
    return text.format(name=file_name, n=report.n, total=report.n_total,
                       kl=direction_label(report.direction))


def summary_frame(stats: Mapping[str, EstimatorSummary], exact: Mapping[str, float] | None,
                  prefix: str = "") -> pd.DataFrame:
    """One row per estimator: mean, SE, spread, share < 0, tail; the exact mean beside it if known."""
    figures = {_("mean"): "mean", "SE": "se", _("std"): "std", "p95": "p95", "p99": "p99", _("max"): "max"}
    df = pd.DataFrame(
        {
            _("estimator"): list(stats),
            _("mean"): [s.mean for s in stats.values()],
            "SE": [s.se for s in stats.values()],
            _("std"): [s.std for s in stats.values()],
            _("share < 0"): [s.neg_fraction for s in stats.values()],
            "p95": [s.p95 for s in stats.values()],
            "p99": [s.p99 for s in stats.values()],
            _("max"): [s.max for s in stats.values()],
        }
    )
    if exact is not None and any(f"{prefix}{k}" in exact for k in stats):
        # a key without an exact value (rb from another direction's column) gets a blank
        df.insert(2, _("exact mean"), [exact.get(f"{prefix}{k}", math.nan) for k in stats])
    # a figure past a double (one token at log r = 800) is finite: shown from its log, not as ∞
    return with_past_double_logs(df, {col: [getattr(s, f"log_{f}") for s in stats.values()]
                                      for col, f in figures.items()})


def summary_caption(has_exact: bool, weighted: bool, se_shown: bool = True) -> str:
    """Under the summary table; ``se_shown`` False (too few tokens): no SE, so no word about one."""
    if se_shown:
        text = (
            _("Mean ± SE per token; the example's exact means sit beside the estimates.")
            if has_exact
            else _("Mean ± SE per token.")
        )
    else:
        text = (
            _("Mean per token; the example's exact means sit beside the estimates.")
            if has_exact
            else _("Mean per token.")
        )
    if weighted:
        text += " " + _("Weighted figures: self-normalised importance sampling.")
    return (text + " " + se_caveat()) if se_shown else text


#: Why a ±SE from data alone may be too narrow (issue 11: an error bar the app cannot
#: back says so).  Its figures are :func:`kl_core.audit.statistics.se_band_coverage`'s
#: seeded simulation, filled in by :func:`se_caveat`.
SE_CAVEAT = N_(
    "The SE uses the sample SD: if the log-ratios have heavy tails it can be far too narrow, "
    "and no sample shows the tail it missed (for {key} with q = {q} and p = {p}, N = {n:,}, "
    "the ±{z:g} SE band held the true KL in only {share} of {runs:,} simulated runs). The "
    "Estimator Lab checks this exactly where the distributions are known."
)


def se_caveat() -> str:
    """:data:`SE_CAVEAT` with the simulation's figures (computed once per process)."""
    c = se_band_coverage()
    return _(SE_CAVEAT).format(key=c.key, q=c.q, p=c.p, n=c.n, z=c.z, share=share(c.coverage), runs=c.runs)


def ess_share(fraction: float) -> str:
    """ESS / tokens as a percentage (:func:`lab.format.share`: an ESS of 99.97% of the tokens is not all of them)."""
    return share(fraction)


def drawn_share(report: AuditReport, key: str) -> float:
    """The share of counted tokens, as drawn (unweighted), whose ``key`` value is below 0."""
    return float(np.mean(report.values[key] < 0))


def histogram_caption(report: AuditReport, key: str, small: SampleSizeCheck) -> str:
    """Under one estimator's histogram of per-token values (whose bars count tokens as drawn).

    With a rollout column the share below 0 and p99 are weighted to the sampler, so the caption
    says so and gives the unweighted share of the bars beside it.
    """
    s = report.summaries[key]
    args = {"share": share(s.neg_fraction), "p99": number(s.p99), "drawn": share(drawn_share(report, key))}
    if not report.weighted:
        text = _("{share} of tokens below 0; p99 {p99}.") if small.p99 else _("{share} of tokens below 0.")
    elif small.p99:
        text = _("Weighted to the sampler, {share} of tokens are below 0 and p99 is {p99}; the bars "
                 "count tokens as drawn (unweighted), {drawn} of them below 0.")
    else:
        text = _("Weighted to the sampler, {share} of tokens are below 0; the bars count tokens as "
                 "drawn (unweighted), {drawn} of them below 0.")
    return text.format(**args)


def mean_help(key: str, se_shown: bool) -> str:
    """The help of an estimator's mean metric (its ± SE only when shown)."""
    if se_shown:
        return _("Mean of {k} over the counted tokens, and its standard error.").format(k=key)
    return _("Mean of {k} over the counted tokens.").format(k=key)


def _position_keys(report: AuditReport) -> tuple[str, ...]:
    return (*ESTIMATOR_KEYS, *((RB_KEY,) if report.rb is not None else ()))


def position_buckets(report: AuditReport, se_shown: bool = True) -> tuple[PositionBucket, ...]:
    """The buckets to chart and tabulate: each with its SEs, or with every SE ``nan`` (no bar) where it is
    withheld: in every bucket when ``se_shown`` is False (too few tokens in the file,
    :meth:`AuditReport.sample_size`), else in each bucket with fewer than :data:`MIN_FOR_SE` tokens
    (effective tokens with a rollout column: :meth:`PositionBucket.sample_size`)."""
    return shown_positions(report.positions, se_shown)


def thin_buckets(report: AuditReport, se_shown: bool = True) -> int:
    """How many position buckets have their SE withheld (:func:`position_buckets`)."""
    return sum(1 for a, b in zip(report.positions, position_buckets(report, se_shown), strict=True) if a is not b)


def position_rows(report: AuditReport, se_shown: bool = True) -> pd.DataFrame:
    """The position buckets as numbers: tokens, and each estimator's mean and SE (rb's too if given).

    The SE of a bucket with too few tokens is blank (:func:`position_buckets`); with no SE in any
    bucket (``se_shown`` False, or every bucket too thin) there are no SE columns.
    """
    buckets = position_buckets(report, se_shown)
    any_se = thin_buckets(report, se_shown) < len(buckets)
    rows: dict[str, list] = {
        _("positions"): [bucket_label(b) for b in buckets],
        _("tokens"): [b.count for b in buckets],
    }
    logs: dict[str, list[float]] = {}
    for k in _position_keys(report):
        mean_col, se_col = _("{k} mean").format(k=k), _("{k} SE").format(k=k)
        rows[mean_col] = [b.mean[k] for b in buckets]
        logs[mean_col] = [b.log_mean.get(k, math.nan) for b in buckets]
        if any_se:
            rows[se_col] = [b.se[k] for b in buckets]
            logs[se_col] = [b.log_se.get(k, math.nan) if math.isinf(b.se[k]) else math.nan for b in buckets]
    return with_past_double_logs(pd.DataFrame(rows), logs)


def position_formats(report: AuditReport, se_shown: bool = True) -> dict[str, str]:
    """The printf format of each number column of :func:`position_rows`: means ``%.5f``, SEs ``%.2g``."""
    any_se = thin_buckets(report, se_shown) < len(report.positions)
    out = {}
    for k in _position_keys(report):
        out[_("{k} mean").format(k=k)] = "%.5f"
        if any_se:
            out[_("{k} SE").format(k=k)] = "%.2g"
    return out


def unseen_position_means(report: AuditReport) -> str:
    """After the caption of the chart by position: which estimators lack a dot in some bucket because
    their mean there is past the largest double (one token at log r = 800); "" when none does."""
    keys = [k for k in _position_keys(report)
            if any(not math.isfinite(b.mean[k]) for b in report.positions or ())]
    if not keys:
        return ""
    return " " + ngettext("{keys} has no dot where its mean is past the largest double (see the table).",
                          "{keys} have no dot where their means are past the largest double (see the table).",
                          len(keys)).format(keys=_(", ").join(keys))


def position_caption(se_shown: bool, weighted: bool = False, thin: int = 0, buckets: int = 0) -> str:
    """Under the chart by position: ±2 SE, or why no bar is drawn (:meth:`AuditReport.sample_size`).

    ``thin`` of the ``buckets`` have fewer than :data:`MIN_FOR_SE` (effective) tokens
    (:func:`thin_buckets`): they get no bar and no SE, and the caption says so.
    """
    if se_shown and buckets and thin == buckets:
        if weighted:
            return _("Each estimator's mean per token in log2-wide position buckets; every bucket has fewer "
                     "than {least} effective tokens, too few for error bars, so none are drawn.").format(
                         least=MIN_FOR_SE)
        return _("Each estimator's mean per token in log2-wide position buckets; every bucket has fewer "
                 "than {least} tokens, too few for error bars, so none are drawn.").format(least=MIN_FOR_SE)
    if se_shown and thin:
        if weighted:
            extra = ngettext("{n} bucket has fewer than {least} effective tokens, so it gets no bar and no SE.",
                             "{n} buckets have fewer than {least} effective tokens, so they get no bar and no SE.",
                             thin)
        else:
            extra = ngettext("{n} bucket has fewer than {least} tokens, so it gets no bar and no SE.",
                             "{n} buckets have fewer than {least} tokens, so they get no bar and no SE.", thin)
        return (_("Each estimator's mean per token in log2-wide position buckets, ±2 SE.") + " "
                + extra.format(n=thin, least=MIN_FOR_SE))
    if se_shown:
        return _("Each estimator's mean per token in log2-wide position buckets, ±2 SE.")
    if weighted:
        return _("Each estimator's mean per token in log2-wide position buckets; too few effective "
                 "tokens for error bars, so none are drawn.")
    return _("Each estimator's mean per token in log2-wide position buckets; too few tokens for "
             "error bars, so none are drawn.")


def sequences_caption(n_sequences: int) -> str:
    """Under the sequence-sum table."""
    return ngettext(
        "Each estimator summed over the counted tokens of the file's one sequence. Summed k1 "
        "and k3 estimate the sequence-level KL: by the chain rule, the sum of the per-token KLs.",
        "Each estimator summed over each sequence's counted tokens, {n:,} sequences. Summed k1 "
        "and k3 estimate the sequence-level KL: by the chain rule, the sum of the per-token KLs.",
        n_sequences,
    ).format(n=n_sequences)


#: What k1, k2 and k3 mean, by direction and estimator (kl_core.audit.statistics.DEFINITIONS
#: holds the same in plain text, for the CLI): typeset and marked for translation.
MEANINGS: dict[tuple[str, str], str] = {
    ("sampler-other", "k1"): N_("unbiased for KL[sampler‖other]; single values can be negative"),
    ("sampler-other", "k2"): N_(
        r"biased ($f = \tfrac12\log^2 u$), ≥ 0; equals the KL to second order in $\log r$"),
    ("sampler-other", "k3"): N_("unbiased for KL[sampler‖other], every value ≥ 0"),
    ("other-sampler", "k1"): N_("unbiased for KL[other‖sampler]; single values can be negative"),
    ("other-sampler", "k2"): N_(
        r"biased ($f = \tfrac12 u\log^2 u$), ≥ 0; equals the KL to second order in $\log r$"),
    ("other-sampler", "k3"): N_("unbiased for KL[other‖sampler], every value ≥ 0 (k3_pq)"),
}


def meaning(direction: str, key: str) -> str:
    """What estimator ``key`` (``k1``, ``k2``, ``k3``) means in ``direction``, translated."""
    return _(MEANINGS[(direction, key)])


# ------------------------------------------------------------ the point first (issue 20)

#: The page's question, shown under its title.
QUESTION = N_(
    "**The question:** the approx_kl your trainer logs is the mean of a per-token estimator. "
    "Does it measure the KL between the two policies, and how many tokens does it need?"
)


def times_text(x: float) -> str:
    """A ratio's number as a reader counts it: ``250``, ``6.26``, ``1,234``, ``4.15e+09`` (the template adds ×)."""
    return f"{x:,.0f}" if 100 <= x < 1e6 else f"{x:.3g}"


def _fewer_clause(ratio: float, other: str, log_ratio: float = math.nan) -> str:
    """How many times fewer (or more) tokens than ``other``, for a variance ratio Var(other)/Var(this).

    A ratio of 0 (``other`` does not vary), ``inf`` (this one does not) or ``nan`` (neither varies, or a
    spread is undefined) gets words instead of a multiple.
    """
    if math.isnan(ratio):
        return _("a number of tokens that cannot be compared with {b}'s (their spreads are not both "
                 "positive numbers)").format(b=other)
    if math.isinf(ratio) and math.isfinite(log_ratio):  # finite, past a double
        return _("{x}× fewer tokens than {b}").format(x=from_log(log_ratio, 3, trim=True), b=other)
    if math.isinf(ratio):
        return _("far fewer tokens than {b} (rb does not vary in this file)").format(b=other)
    if ratio == 0:
        return _("more tokens than {b}, which does not vary in this file").format(b=other)
    if ratio >= 1.005:
        return _("{x}× fewer tokens than {b}").format(x=times_text(ratio), b=other)
    if ratio <= 1 / 1.005:
        return _("{x}× more tokens than {b}").format(x=times_text(1 / ratio), b=other)
    return _("as many tokens as {b}").format(b=other)


def se_text(s: EstimatorSummary) -> str:
    """A standard error as a metric's delta prints it: 2 significant digits (0.10, 63, not "63."),
    from its log where it is past the largest double."""
    if math.isinf(s.se) and math.isfinite(s.log_se):
        return from_log(s.log_se, 2, trim=True)
    return f"{s.se:#.2g}".rstrip(".") if math.isfinite(s.se) else number(s.se)


def summary_mean_text(s: EstimatorSummary) -> str:
    """:func:`mean_text` of a summary's mean, from its log where it is past the largest double."""
    if math.isinf(s.mean) and math.isfinite(s.log_mean):
        return from_log(s.log_mean, 4, trim=True)
    return mean_text(s.mean)


def mean_text(x: float) -> str:
    """A per-token mean as the report prints it: 5 decimals, or 3 significant digits below 0.001 (a KL of
    1.2e-4 is not "0.00012", one of 5e-13 not "0.00000") and from a million on (2.47e+302, not 303 digits)."""
    if not math.isfinite(x):
        return number(x)
    return f"{x:.5f}" if x == 0 or 1e-3 <= abs(x) < 1e6 else f"{x:#.3g}"


def _within(mean: float, se: float, target: float) -> bool:
    return abs(mean - target) <= 2 * se


#: The verdict's second line: k3 against the exact KL (``m``, ``bar``, ``kl``, ``e``, ``d``) …
_K3_MATCHES = N_(
    "k3's mean, {m} ± {bar:.2g} (2 SE), **matches** the exact {kl}, {e}, "
    "within its error bar."
)
_K3_MISSES = N_(
    "k3's mean, {m} ± {bar:.2g} (2 SE), **misses** the exact {kl}, {e}, by "
    "{d:.2g}: more than its error bar."
)
#: … or, with no exact value, k1 against k3 (``m1``, ``b1``, ``m3``, ``b3``, ``kl``).
_K1_K3_AGREE = N_(
    "No exact value is shown for this choice of columns: k1 ({m1} ± {b1:.2g}) and k3 "
    "({m3} ± {b3:.2g}), which would both be unbiased for {kl} if the tokens came from the "
    "sampler and the sampler covered the other policy, **agree** within their error bars (2 SE)."
)
_K1_K3_DISAGREE = N_(
    "No exact value is shown for this choice of columns: k1 ({m1} ± {b1:.2g}) and k3 "
    "({m3} ± {b3:.2g}), which would both be unbiased for {kl} if the tokens came from the "
    "sampler and the sampler covered the other policy, **disagree** beyond their error bars "
    "(2 SE): the tokens may not come from the sampler (swapped columns, another rollout "
    "policy), the other policy may put probability where the sampler never draws, or a heavy "
    "tail skews one of them."
)


def verdict(report: AuditReport, exact: Mapping[str, float] | None, se_shown: bool = True,
            same_kl: bool = True) -> list[str]:
    """Two or three lines that say what the report means for this file, chosen from its numbers.

    1. k1's share of negative per-token values (weighted to the sampler, with the share as
       drawn beside it, when a rollout column weights the tokens);
    2. k3 against the exact KL within ±2 SE (the example), or k3 against k1 (a file with no
       exact value);
    3. how many times fewer tokens rb (or, without rb, k3) needs than k1 for the same error
       bar, from the variance ratios.

    No error bar, so line 2 says why and line 3 is left out, when k3's mean is past the largest
    double (some token's k3 is too), when ``se_shown`` is False (too few tokens, or too few
    effective tokens with a rollout column: :meth:`AuditReport.sample_size`), or when a standard
    error is past the largest double.  Line 3 is left out too when ``same_kl`` is False: the
    exact-KL column holds another KL than k1 and k3 estimate (:func:`kl_column_note`), so rb's
    variance ratios compare estimators of different quantities.
    """
    k1, k3 = report.summaries["k1"], report.summaries["k3"]
    kl = direction_label(report.direction)
    lines = [_negative_line(report)]
    target = None if exact is None else exact.get("k3")
    if math.isinf(k3.mean) and math.isfinite(k3.log_mean):  # finite, worked out from its log
        lines.append(_("k3's mean is {m}, larger than any double (so is some token's k3), so no comparison is "
                       "made.").format(m=from_log(k3.log_mean, 4, trim=True)))
        return lines
    if not math.isfinite(k3.mean):
        lines.append(_("k3's mean is not a finite number, so no comparison is made."))
        return lines
    if not se_shown:
        few = (_("k3's mean is {m}; too few effective tokens for an error bar, so no comparison is made.")
               if report.weighted
               else _("k3's mean is {m}; too few tokens for an error bar, so no comparison is made."))
        lines.append(few.format(m=number(k3.mean)))  # 1e-12 is not "0.00000"
        return lines
    if not (math.isfinite(k3.se) and (target is not None or math.isfinite(k1.se))):
        se = k3 if not math.isfinite(k3.se) else k1
        lines.append(_(
            "k3's mean is {m}, but the standard error of {k} is {se}, past the largest double, so no "
            "comparison is made."
        ).format(m=mean_text(k3.mean), k="k3" if se is k3 else "k1",
                 se=from_log(se.log_se, 3, trim=True) if math.isfinite(se.log_se) else number(se.se)))
        return lines
    if target is not None:
        args = {"m": mean_text(k3.mean), "bar": 2 * k3.se, "kl": kl, "e": mean_text(target),
                "d": abs(k3.mean - target)}
        sentence = _K3_MATCHES if _within(k3.mean, k3.se, target) else _K3_MISSES
    else:
        args = {"m1": mean_text(k1.mean), "b1": 2 * k1.se, "m3": mean_text(k3.mean), "b3": 2 * k3.se, "kl": kl}
        overlap = abs(k1.mean - k3.mean) <= 2 * k1.se + 2 * k3.se
        sentence = _K1_K3_AGREE if overlap else _K1_K3_DISAGREE
    lines.append(_(sentence).format(**args))
    if report.rb is not None and not same_kl:
        return lines
    if report.rb is not None and report.variance_ratio is not None:
        r1, r3 = report.variance_ratio["k1"], report.variance_ratio["k3"]
        logs = report.log_variance_ratio or {}
        if not (math.isnan(r1) or math.isnan(r3)):
            lines.append(_("For the same error bar, rb needs {c1}, and {c3}.").format(
                c1=_fewer_clause(r1, "k1", logs.get("k1", math.nan)),
                c3=_fewer_clause(r3, "k3", logs.get("k3", math.nan))))
    elif k3.se > 0 and k1.se > 0:
        lines.append(_(
            "For the same error bar, k3 needs {c1}. A column with the exact next-token KL would "
            "give rb, with less variance still."
        ).format(c1=_fewer_clause((k1.se / k3.se) ** 2, "k1")))
    return lines


def _negative_line(report: AuditReport) -> str:
    """The verdict's first line: k1's share of negative values (:func:`lab.format.share`)."""
    weighted, drawn = report.k1.neg_fraction, drawn_share(report, "k1")
    if report.weighted and (weighted > 0 or drawn > 0):
        return _(
            "Weighted to the sampler, **{share}** of k1's per-token values are negative ({drawn} of "
            "the tokens as drawn): one token's k1 is no KL, only the mean over many tokens is."
        ).format(share=share(weighted), drawn=share(drawn))
    if weighted > 0:
        return _(
            "**{share}** of k1's per-token values are negative: one token's k1 is no KL, only "
            "the mean over many tokens is."
        ).format(share=share(weighted))
    return _("None of k1's per-token values is negative in this file.")


def verdict_rows(report: AuditReport, se_shown: bool = True) -> list[tuple[str, float, float]]:
    """``(key, mean, se)`` of k1, k3 (and rb) for the chart under the verdict; SE nan if withheld."""
    sums = report.all_summaries
    keys = ["k1", "k3", *(["rb"] if "rb" in sums else [])]
    return [(k, sums[k].mean, sums[k].se if se_shown else math.nan) for k in keys]


#: The columns table: (what the column holds, the example's column, required).
COLUMN_ROWS = (
    (N_("log-prob of the token under the policy that sampled it (≤ 0)"), "logp_policy", True),
    (N_("log-prob of the token under the other policy, e.g. the reference (≤ 0)"), "logp_ref", True),
    (N_("mask: 1 = count the token, 0 = skip it"), "mask", False),
    (N_("the token's position in its sequence"), "position", False),
    (N_("sequence id: gives the per-sequence sums"), "sequence_id", False),
    (N_("log-prob under a third rollout policy that drew the tokens (importance weights)"), None, False),
    (N_("exact KL of the two next-token distributions at the prefix: gives rb"), "kl_policy_ref", False),
)


def columns_frame() -> pd.DataFrame:
    """The table of required and optional columns, with the example file's names."""
    return pd.DataFrame({
        _("column"): [_(what) for what, _name, _req in COLUMN_ROWS],
        _("required"): [_("required") if req else _("optional") for _what, _name, req in COLUMN_ROWS],
        _("in the example"): [name or "—" for _what, name, _req in COLUMN_ROWS],
    })


def missing_columns(file_name: str, columns: list[str], chosen: Mapping[str, str | None]) -> str | None:
    """What a file lacks for the report: the required roles still without a column, and its columns."""
    missing = [_(label) for role, label, required in PICKERS if required and chosen.get(role) is None]
    if not missing:
        return None
    have = ", ".join(f"`{c}`" for c in columns) if columns else _("no columns at all")
    return _(
        "**{name} has no column chosen for: {missing}.** Its columns: {have}. The report needs "
        "two columns of log-probs (numbers ≤ 0): pick them under *More settings: columns and direction* below, "
        "or rename them `logp_policy` and `logp_ref`."
    ).format(name=file_name, missing="; ".join(missing), have=have)


def verdict_chart_caption(has_exact: bool, rows: list[tuple[str, float, float]]) -> str:
    """Under the chart of the verdict, whose ``rows`` (:func:`verdict_rows`) draw a dot where the mean is finite
    and a bar where the SE is too."""
    drawn = [k for k, m, _se in rows if math.isfinite(m)]
    barred = [k for k, m, se in rows if math.isfinite(m) and math.isfinite(se)]
    if barred and barred == drawn:
        text = _("Each dot is an estimator's mean over the counted tokens; its bar spans ±2 SE.")
    elif barred:
        text = _("Each dot is an estimator's mean over the counted tokens; a bar spans ±2 SE, drawn for {keys} "
                 "only (the verdict above says why).").format(keys=_(", ").join(barred))
    elif not drawn:  # every mean past the largest double: the chart is empty
        text = _("No estimator's mean fits in a double here, so the chart has no dot; the report below gives "
                 "them from their logs.")
    else:
        text = _("Each dot is an estimator's mean over the counted tokens; no error bar is drawn "
                 "(the verdict above says why).")
    if drawn and (unseen := [k for k, m, _se in rows if not math.isfinite(m)]):
        text += " " + ngettext("{keys} has a mean past the largest double, so it has no dot.",
                               "{keys} have means past the largest double, so they have no dot.",
                               len(unseen)).format(keys=_(", ").join(unseen))
    if has_exact:
        text += " " + (_("The dashed line is the exact KL: a bar that crosses it matches.") if barred
                       else _("The dashed line is the exact KL."))
    return text + " " + _("k2 estimates another quantity (it is biased), so it is left out here; "
                          "the report below has it.")
