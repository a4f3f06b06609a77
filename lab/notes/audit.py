"""What the "Audit your log-probs" page says about a report (no streamlit).

The column roles and their URL keys, the bundled example's exact values for
the roles it was made with, the summary and position tables, and the captions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from charts.audit import bucket_label
from kl_core.audit.statistics import ESTIMATOR_KEYS, RB_KEY, AuditReport, EstimatorSummary
from lab.i18n import N_, _

__all__ = [
    "AUDIT_KEYS",
    "DIRECTION_LABELS",
    "direction_label",
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
    "position_rows",
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
#: The two directions in words (shown translated: :func:`direction_label`).
DIRECTION_LABELS = {"sampler-other": N_("KL[sampler‖other]"), "other-sampler": N_("KL[other‖sampler]")}


def direction_label(direction: str) -> str:
    """``"sampler-other"`` → ``KL[sampler‖other]``, in the run's language."""
    return _(DIRECTION_LABELS[direction])


def example_info(meta: Mapping, file_name: str) -> str:
    """The box that says the bundled example is shown, and what it is."""
    return _(
        "**No file uploaded, so this is the bundled example** `data/{name}`: {seqs} sequences "
        "from a toy policy over {vocab} tokens, with a reference model drifting away along the "
        "sequence (made by `{generator}`). Its exact KLs are known and shown beside the "
        "estimates. The column choices below are part of this page's link."
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


def kl_column_note(meta: Mapping | None, kl_col: str | None, direction: str) -> str | None:
    """A warning when the example's exact-KL column is the other direction's."""
    if meta is None or kl_col is None:
        return None
    cols = meta.get("kl_cols", {})
    want = cols.get(direction)
    if kl_col == want or kl_col not in cols.values():
        return None
    return _(
        "`{col}` holds the exact next-token KL in the other direction; for {kl} choose `{want}`, "
        "so that rb estimates the same KL as k1 and k3."
    ).format(col=kl_col, kl=direction_label(direction), want=want)


def ratio_text(x: float | None) -> str:
    """A variance ratio as shown in a metric: ``×12.3``; ``—`` when undefined, ``∞`` when rb is constant."""
    if x is None or math.isnan(x):
        return "—"
    return "×∞" if math.isinf(x) else "×{x:.4g}".format(x=x)


def rb_caption(report: AuditReport) -> str:
    """What the rb figures mean, and the honest limit for sequence sums."""
    text = _(
        "rb is the exact KL of the two next-token distributions at each token's prefix: the "
        "mean of k1 (and of k3) given that prefix. Per token it can only remove variance "
        "(law of total variance); here Var(k1)/Var(rb) = {k1} and Var(k3)/Var(rb) = {k3}."
    ).format(k1=ratio_text(report.variance_ratio["k1"]), k3=ratio_text(report.variance_ratio["k3"]))
    seq = report.sequences
    if seq is not None and seq.variance_ratio is not None:
        r1 = seq.variance_ratio["k1"]
        text += " " + _(
            "Summed over each sequence it is usually far less variable too, but not always: the "
            "terms of a sum covary across positions (see *Tokens & sequences*). Here "
            "Var(Σk1)/Var(Σrb) = {r}."
        ).format(r=ratio_text(r1))
        if not math.isnan(r1) and r1 < 1:
            text += " " + _("For this file the sums of rb vary **more** than the sums of k1.")
    return text


def counted_line(report: AuditReport, file_name: str) -> str:
    """Which tokens count, and which KL the report estimates."""
    if report.n == report.n_total:
        text = _("**{name}:** all {n:,} tokens, estimating **{kl}**.")
    else:
        text = _(
            "**{name}:** {n:,} of {total:,} tokens (the mask drops the rest), estimating **{kl}**."
        )
    return text.format(name=file_name, n=report.n, total=report.n_total,
                       kl=direction_label(report.direction))


def summary_frame(stats: Mapping[str, EstimatorSummary], exact: Mapping[str, float] | None,
                  prefix: str = "") -> pd.DataFrame:
    """One row per estimator: mean, SE, spread, share < 0, tail; the exact mean beside it if known."""
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
    return df


def summary_caption(has_exact: bool, weighted: bool) -> str:
    """Under the summary table."""
    text = (
        _("Mean ± SE per token; the example's exact means sit beside the estimates.")
        if has_exact
        else _("Mean ± SE per token.")
    )
    if weighted:
        text += " " + _("Weighted figures: self-normalised importance sampling.")
    return text + " " + _(SE_CAVEAT)


#: Why a ±SE from data alone may be too narrow (issue 11: an error bar the app cannot
#: back says so).  The figure: k3 with q = N(0,1), p = N(3,1), N = 1000 over 300 seeds.
SE_CAVEAT = N_(
    "The SE uses the sample SD: if the log-ratios have heavy tails it can be far too narrow, "
    "and no sample shows the tail it missed (for k3 with q = N(0,1) and p = N(3,1), N = 1,000, "
    "the ±1.96 SE band holds the true KL in only about 3 runs in 5). The Estimator Lab checks "
    "this exactly where the distributions are known."
)


def histogram_caption(summary: EstimatorSummary, weighted: bool) -> str:
    """Under one estimator's histogram of per-token values."""
    text = _("{share:.1%} of tokens below 0; p99 {p99:.4g}.").format(
        share=summary.neg_fraction, p99=summary.p99
    )
    if summary.p99 != summary.p99:  # nan: withheld, too few tokens (kl_core.audit.statistics.sample_size_check)
        text = _("{share:.1%} of tokens below 0.").format(share=summary.neg_fraction)
    if weighted:
        text += " " + _("Bars count tokens as drawn (unweighted).")
    return text


def position_rows(report: AuditReport) -> pd.DataFrame:
    """The position buckets as numbers: tokens, and each estimator's mean and SE (rb's too if given)."""
    rows: dict[str, list] = {
        _("positions"): [bucket_label(b) for b in report.positions],
        _("tokens"): [b.count for b in report.positions],
    }
    for k in (*ESTIMATOR_KEYS, *((RB_KEY,) if report.rb is not None else ())):
        rows[_("{k} mean").format(k=k)] = [b.mean[k] for b in report.positions]
        rows[_("{k} SE").format(k=k)] = [b.se[k] for b in report.positions]
    return pd.DataFrame(rows)


def sequences_caption(n_sequences: int) -> str:
    """Under the sequence-sum table."""
    return _(
        "Each estimator summed over each sequence's counted tokens, {n:,} sequences. Summed k1 "
        "and k3 estimate the sequence-level KL: by the chain rule, the sum of the per-token KLs."
    ).format(n=n_sequences)


#: The core's one-line meanings of k1, k2, k3 and rb (kl_core.audit.statistics.DEFINITIONS and
#: RB_DEFINITIONS), as the page shows them: typeset and marked for translation.
MEANINGS: dict[str, str] = {
    "unbiased for KL[sampler||other]; single values can be negative":  # i18n: ok (the core's text, a key)
        N_("unbiased for KL[sampler‖other]; single values can be negative"),
    "biased (f = 1/2 log^2 u), >= 0; equals the KL to second order in log r":  # i18n: ok (the core's text, a key)
        N_(r"biased ($f = \tfrac12\log^2 u$), ≥ 0; equals the KL to second order in $\log r$"),
    "unbiased for KL[sampler||other], every value >= 0":  # i18n: ok (the core's text, a key)
        N_("unbiased for KL[sampler‖other], every value ≥ 0"),
    "unbiased for KL[other||sampler]; single values can be negative":  # i18n: ok (the core's text, a key)
        N_("unbiased for KL[other‖sampler]; single values can be negative"),
    "biased (f = 1/2 u log^2 u), >= 0; equals the KL to second order in log r":  # i18n: ok (the core's text, a key)
        N_(r"biased ($f = \tfrac12 u\log^2 u$), ≥ 0; equals the KL to second order in $\log r$"),
    "unbiased for KL[other||sampler], every value >= 0 (k3_pq)":  # i18n: ok (the core's text, a key)
        N_("unbiased for KL[other‖sampler], every value ≥ 0 (k3_pq)"),
}


def meaning(text: str) -> str:
    """A core meaning (:data:`MEANINGS`) as the page shows it, translated; an unknown one as it is."""
    return _(MEANINGS[text]) if text in MEANINGS else text
