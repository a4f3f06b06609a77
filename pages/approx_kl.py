"""approx_kl in practice: what a library's KL line means, how its clamps bias it, and an audit.

Four sections, each fed by ``kl_core``:

1. four questions to ask of any KL number, each with a sign error worked out
   exactly on a five-token example (:func:`kl_core.clamps.token_expectations`);
2. the library crosswalk (:data:`kl_core.crosswalk.CROSSWALK`) and a
   "translate" picker, ``?lib=…&opt=…``;
3. the clamps along a drift path (:mod:`kl_core.clamps`), ``?cpath=…&ce=…&th=…``;
4. an audit of per-token log-probs (:mod:`kl_core.audit`): an uploaded CSV or
   Parquet file, or the bundled example ``data/example_audit.csv`` whose column
   choices live in the URL (``?sc=…&oc=…&mc=…&pc=…&qc=…&rc=…&dir=…``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from charts.approx_kl import bucket_label, clamp_chart, clamp_hit_chart, position_chart
from charts.histograms import common_domain, per_sample_histogram
from charts.palette import color
from kl_core import audit, clamps
from kl_core.crosswalk import CROSSWALK, CrosswalkEntry, evaluate, libraries, options
from kl_core.estimators import ESTIMATORS
from kl_core.paths import PATHS
from lab import cache, state, ui
from lab.navigation import leave_legacy_wrapper

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_CSV = ROOT / "data" / "example_audit.csv"
EXAMPLE_JSON = ROOT / "data" / "example_audit.json"
KEYS = audit.ESTIMATOR_KEYS
NONE = "(none)"
TANG_MUNOS = "Tang & Munos, [arXiv:2506.09477](https://arxiv.org/abs/2506.09477)"

leave_legacy_wrapper()  # first, before anything is drawn: see lab/navigation.py

st.title("approx_kl in practice")
st.markdown(
    "Training logs print a line such as `approx_kl`, `ppo_kl` or `kl_penalty`, and RL libraries "
    "offer options such as `low_var_kl`, `k3` or `mse`. This page turns that line into a precise "
    "statement — **whose samples, which KL direction, which ratio, which estimator**, and whether "
    "the value acts on the **reward**, the **loss** or only a **metric** — shows how the libraries' "
    "clamps bias it, and audits your own log-probs."
)

# =================================================================== 1. checklist
st.header("Four questions, four common mistakes")
OLD, NEW = PATHS["logit"].base, PATHS["logit"].at(1.0)
ppo = clamps.token_expectations(OLD, NEW)  # a PPO batch: tokens from π_old, compared with π_new
rlhf = clamps.token_expectations(NEW, OLD)  # an RLHF penalty: tokens from π_θ, compared with π_ref


def _n(x: float) -> str:
    return f"{x:+.4f}"


st.markdown(
    "Every number below is an exact sum over the five tokens of a small next-token distribution "
    f"(`kl_core.paths` path *logit*): **π_old = π_ref = {OLD.name}** and "
    f"**π_new = π_θ = {NEW.name}**, one step (θ = 1) apart. In a PPO update the batch was drawn "
    "from π_old; in an RLHF penalty the response was drawn from the current policy π_θ."
)
WRONG, RIGHT = ":red[:material/close:]", ":green[:material/check:]"
CHECKLIST = (
    (
        "1 · Whose samples?",
        "Average over the policy that drew the tokens, and subtract the other policy from it: "
        r"$k_1 = \log\pi_{\text{sampler}} - \log\pi_{\text{other}}$.",
        "RLHF penalty, tokens drawn from π_θ:",
        f"{WRONG} `ref_logprob - logprob` as a positive penalty: mean **{_n(rlhf.other_minus_sampler)}**",
        f"{RIGHT} `logprob - ref_logprob`: mean **{_n(rlhf.sampler_minus_other)}** = KL[π_θ‖π_ref]",
        "",
    ),
    (
        "2 · Which direction?",
        "The KL is taken *from* the sampler: tokens of π_old estimate "
        r"$\mathrm{KL}[\pi_{\text{old}}\|\pi_{\text{new}}] = \mathbb{E}_{\text{old}}[\log\pi_{\text{old}} - \log\pi_{\text{new}}]$.",
        "PPO batch, tokens drawn from π_old:",
        f"{WRONG} `new_logprob - old_logprob` as a positive KL(old‖new): mean **{_n(ppo.other_minus_sampler)}**",
        f"{RIGHT} `old_logprob - new_logprob`: mean **{_n(ppo.sampler_minus_other)}** = KL[π_old‖π_new]",
        f"KL[π_new‖π_old] = {ppo.kl_other_sampler:.4f} is the other direction, a different number "
        f"(r log r − (r − 1) estimates it from the same tokens: {ppo.k3_pq:.4f}).",
    ),
    (
        "3 · Which ratio?",
        r"$r = \pi_{\text{other}}/\pi_{\text{sampler}}$, target over sampler (here "
        r"$\pi_{\text{new}}/\pi_{\text{old}}$): only then is $\mathbb{E}_{\text{sampler}}[r-1] = 0$, "
        "the control variate inside k3.",
        "PPO batch, k3 = (r − 1) − log r:",
        f"{WRONG} r = π_old/π_new: mean **{_n(ppo.k3_flipped)}** (χ² − KL, not a KL)",
        f"{RIGHT} r = π_new/π_old: mean **{_n(ppo.k3)}** = KL[π_old‖π_new]",
        "",
    ),
    (
        "4 · Which estimator?",
        "k1, k2 and k3 differ in bias, spread and sign: compare a number only with one made by the "
        "same estimator.",
        f"PPO batch, KL[π_old‖π_new] = {ppo.kl_sampler_other:.4f}:",
        f"{WRONG} k2 read as the KL: mean **{_n(ppo.k2)}**",
        f"{RIGHT} k3: mean **{_n(ppo.k3)}** = the KL, never negative",
        f"k1 also averages {ppo.sampler_minus_other:.4f}, but **{ppo.k1_negative_share:.0%}** of "
        "tokens give a negative value.",
    ),
)
for row in (CHECKLIST[:2], CHECKLIST[2:]):
    for col, (question, rule, setting, wrong, right, note) in zip(
        st.columns(2, gap="medium"), row, strict=True
    ):
        with col, st.container(border=True, height="stretch"):
            st.markdown(f"#### {question}\n{rule}")
            st.markdown(f"*{setting}*  \n{wrong}  \n{right}" + (f"  \n{note}" if note else ""))
ui.show_source(clamps.token_expectations)

# =================================================================== 2. crosswalk
st.divider()
st.header("The library crosswalk")
st.markdown(
    "What each library computes for each KL option, as data "
    "(`kl_core.crosswalk.CROSSWALK`, read from the libraries' own source). "
    "In every row, log r = log π_other − log π_sampler on the sampled tokens."
)


def _clamps_text(e: CrosswalkEntry) -> str:
    parts = []
    if e.logr_clamp is not None:
        parts.append(f"log r ∈ [{e.logr_clamp[0]:g}, {e.logr_clamp[1]:g}]")
    if e.value_clamp is not None:
        parts.append(f"value ∈ [{e.value_clamp[0]:g}, {e.value_clamp[1]:g}]")
    return "; ".join(parts) or "none"


def _estimator_text(e: CrosswalkEntry) -> str:
    if e.estimator == "full":
        return "exact (full vocabulary)"
    return ESTIMATORS[e.estimator].name + (" (+ k2 gradient)" if e.straight_through else "")


crosswalk_df = pd.DataFrame(
    {
        "library": [e.library for e in CROSSWALK],
        "option": [", ".join(e.names) for e in CROSSWALK],
        "acts on": [e.acts_on for e in CROSSWALK],
        "estimator": [_estimator_text(e) for e in CROSSWALK],
        "estimates": [e.direction for e in CROSSWALK],
        "unbiased": ["yes" if e.unbiased else "no" for e in CROSSWALK],
        "clamps": [_clamps_text(e) for e in CROSSWALK],
        "set or shown as": [e.setting for e in CROSSWALK],
        "samples from": [e.sampler for e in CROSSWALK],
        "compared with": [e.other for e in CROSSWALK],
        "library code": [e.library_formula for e in CROSSWALK],
        "weight": [e.weight or "" for e in CROSSWALK],
        "logged as": [e.logged_as or "" for e in CROSSWALK],
        "source": [e.source for e in CROSSWALK],
        "verified in": [e.verified_in for e in CROSSWALK],
        "caveat": [e.caveat for e in CROSSWALK],
    }
)
ui.table(
    crosswalk_df,
    name="kl-crosswalk",
    caption=(
        f"{len(CROSSWALK)} options in {len(libraries())} libraries; scroll for more. The CSV adds "
        "where each is set, the library code, sampler, weight, source, the version read and a caveat."
    ),
    column_order=[
        "library",
        "option",
        "acts on",
        "estimator",
        "estimates",
        "unbiased",
        "clamps",
    ],
    height=330,
)

st.subheader("Translate one option")
lib_col, opt_col = st.columns(2, gap="medium")
with lib_col:
    library = state.select("Library", "lib", libraries(), value="verl")
lib_entries = options(library)
ids = [clamps.entry_id(e) for e in lib_entries]
by_id = {clamps.entry_id(e): e for e in lib_entries}
default_id = "verl:low_var_kl:loss" if library == "verl" else ids[0]
with opt_col:
    chosen_id = state.select(
        "Option or logged name",
        "opt",
        ids,
        value=default_id,
        format_func=lambda i: f"{by_id[i].option} ({by_id[i].acts_on})",
        help="The option a user sets, or the name a log shows; in brackets where the value acts.",
    )
entry = by_id[chosen_id]

st.markdown(f"**{entry.library} · {entry.component}** — set or shown as `{entry.setting}`")
ui.formula(entry.formula_latex)
formula_col, facts_col = st.columns([1, 1], gap="large")
with formula_col:
    st.code(entry.library_formula, language="python")
    roles = {"sampler": "sampler", "other": "other policy", "current": "policy being updated"}
    st.markdown(
        "In this code: "
        + "; ".join(
            f"`{name}` = log-prob under the {roles[role]}" for name, role in entry.variables
        )
        + "."
    )
with facts_col:
    if entry.estimator == "full":
        what = "the exact KL at each position, summed over the whole vocabulary"
        unbiased = "exact"
    else:
        info = ESTIMATORS[entry.estimator]
        what = (
            f"{ui.estimator_name(entry.estimator)}, whose mean over the sampler is {info.estimates}"
        )
        unbiased = "yes" if entry.unbiased else "no"
    facts = [
        f"**Estimates:** {entry.direction}",
        f"**Samples from:** {entry.sampler}",
        f"**Compared with:** {entry.other}",
        f"**Estimator:** {what} (q = sampler, p = other)",
        f"**Unbiased for that KL:** {unbiased}"
        + (" (clamps aside)" if entry.logr_clamp or entry.value_clamp else ""),
        f"**Clamps:** {_clamps_text(entry)}",
        f"**Acts on:** the {entry.acts_on}"
        + (f", weighted by `{entry.weight}`" if entry.weight else ""),
    ]
    if entry.straight_through:
        facts.append(
            "**Straight-through:** forward value as above, backward pass uses k2's gradient"
        )
    if entry.early_stop:
        facts.append(f"**Early stopping:** {entry.early_stop}")
    if entry.logged_as:
        facts.append(f"**Logged as:** `{entry.logged_as}`")
    facts.append(f"**Source:** `{entry.source}`")
    st.markdown("\n".join(f"- {f}" for f in facts))
    st.caption(f"Checked in: {entry.verified_in}")
caveat = entry.caveat.replace("Tang & Munos, arXiv:2506.09477", TANG_MUNOS)
if entry.acts_on == "loss":
    st.warning(f"**In a loss:** {caveat}", icon=":material/warning:")
else:
    st.info(f"**Caveat:** {caveat}", icon=":material/info:")

# =================================================================== 3. clamps
st.divider()
st.header("Clamps: when the library's number stops growing")
st.markdown(
    "verl clamps `low_var_kl` (log r to [−20, 20], the value to [−10, 10]); OpenRLHF clamps k1, "
    "k2 and k3 to [−10, 10]. While every sampled token's log-ratio is moderate the clamps do "
    "nothing; once the policy puts real mass on tokens the other policy finds nearly impossible, "
    "they cap those tokens' values and the mean falls below the KL. All numbers here are exact sums "
    "over the tokens, not samples."
)
PATH_LABELS = {"peaked": "Rare token", "logit": "Mild drift"}
path_col, entry_col = st.columns([1, 2], gap="medium")
with path_col:
    path_key = state.segmented(
        "Drift path",
        "cpath",
        list(PATH_LABELS),
        value="peaked",
        format_func=PATH_LABELS.get,
        help="Rare token: 8 tokens, the policy learns to emit a token the anchor gives 2.6e-10. "
        "Mild drift: 5 tokens, mass moves from the likely tokens to the unlikely ones.",
    )
with entry_col:
    demo_id = state.select(
        "Library option",
        "ce",
        list(clamps.DEMO_ENTRIES),
        value="verl:low_var_kl:loss",
        format_func=lambda i: " ".join(i.split(":")[:2]) + f" ({i.split(':')[2]})",
        help="Every clamped option of the crosswalk, and TRL's unclamped k3 for reference.",
    )
demo = clamps.entry_by_id(demo_id)
path = clamps.CLAMP_PATHS[path_key]
if path_key == "peaked":
    theta = state.slider(
        "Drift θ: how much the policy has raised the logit of token 7",
        "th",
        min_value=0.0,
        max_value=30.0,
        value=20.0,
        step=0.5,
        format="%.1f",
    )
    x_title = "drift θ (logit boost of token 7)"
else:
    theta = state.slider(
        "Drift θ along the direction v",
        "thm",
        min_value=0.0,
        max_value=3.0,
        value=3.0,
        step=0.05,
        format="%.2f",
    )
    x_title = "drift θ (along v)"

moving = clamps.drifting_role(demo)
if moving == "sampler":
    roles_text = (
        f"Here the **sampler** ({demo.sampler.split(' (')[0]}) drifts along the path, "
        f"$p_\\theta$, away from the fixed **{demo.other.split(' (')[0]}**, $p_0$."
    )
else:
    roles_text = (
        f"Here the **sampler** ({demo.sampler.split(' (')[0]}) stays at $p_0$ and the "
        f"**{demo.other.split(' (')[0]}** drifts along the path, $p_\\theta$."
    )
st.markdown(
    f"Path: ${path.family_latex}$, ${path.theta_latex}$, with $p_0$ = {path.base.name}. {roles_text} "
    f"The option computes {demo.direction}; clamps: {_clamps_text(demo)}."
)

curve = cache.clamp_curve(demo_id, path_key)
point = clamps.clamp_point(demo_id, path_key, theta)
kl_name = demo.direction.split(" (")[0]
m1, m2, m3, m4 = st.columns(4)
m1.metric(f"Exact {kl_name}", f"{point.kl:.4g}", help="Exact sum over the tokens.")
rel = f" ({point.relative_bias:+.0%})" if point.kl > 0 else ""
m2.metric(
    "Library's mean",
    f"{point.mean:.4g}",
    delta=f"{point.bias:+.3g} vs the KL{rel}" if point.bias != 0 else None,
    help="Exact mean over the sampler's tokens of the library's clamped per-token value.",
)
m3.metric(
    "Same estimator, no clamps",
    f"{point.unclamped_mean:.4g}",
    help="k1 and k3 are unbiased without clamps; k2 is biased with or without.",
)
m4.metric(
    "P(sampled token is clamped)",
    f"{point.hit_prob:.3g}",
    help="Probability, under the sampler, that the token's log-ratio or value is outside a clamp.",
)
chart_col, hit_col = st.columns([3, 2], gap="medium")
with chart_col:
    ui.chart(
        clamp_chart(
            curve,
            point,
            estimator_key=demo.estimator,
            title=f"{demo.library} {demo.option} ({demo.acts_on}) against the exact KL",
            x_title=x_title,
        ),
        name=f"clamps-{demo.library}-{demo.option}-{path_key}",
        caption=(
            "Solid: the library's mean per token; dashed black: the exact KL; dotted: the same "
            "estimator without clamps. Where the solid line leaves the others, the clamps bias it."
        ),
    )
with hit_col:
    ui.chart(
        clamp_hit_chart(curve, point, x_title=x_title, show_logr=demo.logr_clamp is not None),
        name=f"clamp-hits-{demo.library}-{demo.option}-{path_key}",
        caption=(
            "The share of sampled tokens whose log-ratio or value a clamp changes."
            if curve.hit_prob[-1] > 0
            else "No sampled token reaches this option's clamps anywhere on this path."
        ),
    )

sampler_d, other_d = clamps.roles_at(demo_id, path_key, theta)
tokens = clamps.clamp_tokens(demo_id, sampler_d.log_probs, other_d.log_probs)
ui.table(
    pd.DataFrame(
        {
            "token": range(tokens.logr.size),
            "P under sampler": tokens.sampler_probs,
            "P under other": tokens.other_probs,
            "log r": tokens.logr,
            f"{demo.estimator}, no clamp": tokens.raw,
            "library value": tokens.value,
            "clamped": ["yes" if h else "" for h in tokens.hit],
        }
    ),
    name=f"clamp-tokens-{demo.library}-{demo.option}-{path_key}-{theta:g}",
    caption=(
        f"Every token at θ = {theta:g}: the library's mean is the sum of "
        "P under sampler × library value; the KL is the same sum without clamps (for k1 and k3)."
    ),
    column_config={
        "P under sampler": st.column_config.NumberColumn(format="%.3g"),
        "P under other": st.column_config.NumberColumn(format="%.3g"),
        "log r": st.column_config.NumberColumn(format="%.3f"),
        f"{demo.estimator}, no clamp": st.column_config.NumberColumn(format="%.4g"),
        "library value": st.column_config.NumberColumn(format="%.4g"),
    },
)
ui.show_source(clamps.clamp_tokens)
ui.show_source(evaluate)

# =================================================================== 4. audit
st.divider()
st.header("Audit your own log-probs")
st.markdown(
    "One row per sampled token: its log-prob under the policy that **sampled** it and under the "
    "**other** policy; optionally a mask (1 = count the token), its position in the sequence, a "
    "sequence id, and the log-prob under a third **rollout** policy that actually drew the tokens "
    "(then every figure is importance-weighted and the effective sample size is reported)."
)

EXAMPLE_ROLES = {
    "sc": "logp_policy",
    "oc": "logp_ref",
    "mc": "mask",
    "pc": "position",
    "qc": "sequence_id",
    "rc": NONE,
}
PICKERS = (
    ("sc", "Sampler log-prob column", True),
    ("oc", "Other log-prob column", True),
    ("mc", "Mask column (1 = count)", False),
    ("pc", "Position column", False),
    ("qc", "Sequence id column", False),
    ("rc", "Rollout log-prob column", False),
)
DIRECTION_LABELS = {"sampler-other": "KL[sampler‖other]", "other-sampler": "KL[other‖sampler]"}


def _pick_columns(columns: list[str], upload_id: str | None) -> dict[str, str | None]:
    """The column chosen for each role; bound to the URL for the example only."""
    chosen: dict[str, str | None] = {}
    rows = (st.columns(3, gap="small"), st.columns(3, gap="small"))
    for i, (key, label, required) in enumerate(PICKERS):
        opts = list(columns) if required else [NONE, *columns]
        default = EXAMPLE_ROLES[key] if EXAMPLE_ROLES[key] in opts else None
        with rows[i // 3][i % 3]:
            if upload_id is None:
                value = state.select(label, key, opts, value=default)
            else:  # an upload: not in the URL; keyed by the upload so new columns start fresh
                value = st.selectbox(
                    label,
                    opts,
                    index=opts.index(default) if default is not None else (None if required else 0),
                    key=f"up_{key}_{upload_id}",
                    placeholder="choose a column",
                )
        chosen[key] = None if value in (None, NONE) else value
    return chosen


def _exact_for(
    meta: dict, chosen: dict[str, str | None], direction: str
) -> dict[str, float] | None:
    """The example's exact means for this direction, if the columns keep the generator's roles."""
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
    if chosen["qc"] == args["sequence_col"]:
        out |= {
            "seq_k1": ex[f"kl_{d}_per_sequence"],
            "seq_k2": ex[f"k2_{d}_per_sequence"],
            "seq_k3": ex[f"kl_{d}_per_sequence"],
        }
    return out


def _summary_frame(
    stats: dict[str, audit.EstimatorSummary], exact: dict[str, float] | None, prefix: str = ""
) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "estimator": list(stats),
            "mean": [s.mean for s in stats.values()],
            "SE": [s.se for s in stats.values()],
            "std": [s.std for s in stats.values()],
            "share < 0": [s.neg_fraction for s in stats.values()],
            "p95": [s.p95 for s in stats.values()],
            "p99": [s.p99 for s in stats.values()],
            "max": [s.max for s in stats.values()],
        }
    )
    if exact is not None and all(f"{prefix}{k}" in exact for k in stats):
        df.insert(2, "exact mean", [exact[f"{prefix}{k}"] for k in stats])
    return df


SUMMARY_FORMAT = {
    "mean": st.column_config.NumberColumn(format="%.5f"),
    "exact mean": st.column_config.NumberColumn(
        format="%.5f", help="From the generator: data/example_audit.json."
    ),
    "SE": st.column_config.NumberColumn(format="%.2g", help="Standard error of the mean."),
    "std": st.column_config.NumberColumn(format="%.4f"),
    "share < 0": st.column_config.NumberColumn(format="percent"),
    "p95": st.column_config.NumberColumn(format="%.4f"),
    "p99": st.column_config.NumberColumn(format="%.4f"),
    "max": st.column_config.NumberColumn(format="%.4f"),
}


def _report(report: audit.AuditReport, exact: dict[str, float] | None, name: str) -> None:
    """Draw the audit report: definitions, summary, histograms, positions, sequences."""
    counted = (
        f"all {report.n:,} tokens"
        if report.n == report.n_total
        else f"{report.n:,} of {report.n_total:,} tokens (the mask drops the rest)"
    )
    st.markdown(f"**{name}:** {counted}, estimating **{DIRECTION_LABELS[report.direction]}**.")
    defs = audit.DEFINITIONS[report.direction]
    for k, col in zip(KEYS, st.columns(3, gap="medium"), strict=True):
        with col:
            ui.formula(rf"\color{{{color(k)}}}{{k_{k[1]}}} = {defs[k]['formula']}")
            st.caption(defs[k]["meaning"])
    cols = st.columns(5 if exact is not None else 4)
    cols[0].metric("Tokens counted", f"{report.n:,}")
    for k, col in zip(KEYS, cols[1:4], strict=True):
        s = report.summaries[k]
        col.metric(
            f"{k} mean",
            f"{s.mean:.5f}",
            delta=f"± {s.se:#.2g} (SE)",
            delta_color="off",
            delta_arrow="off",
            help=f"Mean of {k} over the counted tokens, and its standard error.",
        )
    if exact is not None:
        cols[4].metric(
            f"Exact {DIRECTION_LABELS[report.direction]}",
            f"{exact['k1']:.5f}",
            help="From the generator (data/example_audit.json): the exact expectation for these tokens.",
        )
    if report.weighted:
        e1, e2, e3 = st.columns(3)
        e1.metric(
            "Effective sample size (tokens)",
            f"{report.ess:,.0f}",
            help="(Σw)² / Σw², w = π_sampler / π_rollout per token.",
        )
        e2.metric("ESS / tokens", f"{report.ess_fraction:.1%}")
        if report.sequences is not None and report.sequences.ess is not None:
            e3.metric("Effective number of sequences", f"{report.sequences.ess:,.1f}")
    ui.table(
        _summary_frame(report.summaries, exact),
        name="audit-summary",
        caption=(
            "Mean ± SE per token; the example's exact means sit beside the estimates. "
            if exact is not None
            else "Mean ± SE per token. "
        )
        + ("Weighted figures: self-normalised importance sampling." if report.weighted else ""),
        column_config=SUMMARY_FORMAT,
    )
    domain = common_domain(
        [report.values[k] for k in KEYS],
        include=(0.0,) + ((exact["k1"],) if exact is not None else ()),
    )
    for k, col in zip(KEYS, st.columns(3, gap="medium"), strict=True):
        s = report.summaries[k]
        with col:
            ui.chart(
                per_sample_histogram(
                    report.values[k],
                    k,
                    true_value=None if exact is None else exact[k],
                    true_label="exact KL" if k != "k2" else "exact mean",
                    mean=s.mean,
                    neg_fraction=s.neg_fraction,
                    domain=domain,
                    height=280,
                ),
                name=f"audit-{k}-histogram",
                caption=f"{s.neg_fraction:.1%} of tokens below 0; p99 {s.p99:.4g}."
                + (" Bars count tokens as drawn (unweighted)." if report.weighted else ""),
            )
    if report.positions is not None:
        st.subheader("By position")
        ui.chart(
            position_chart(report.positions),
            name="audit-positions",
            caption="Each estimator's mean per token in log2-wide position buckets, ±2 SE.",
        )
        rows = {
            "positions": [bucket_label(b) for b in report.positions],
            "tokens": [b.count for b in report.positions],
        }
        for k in KEYS:
            rows[f"{k} mean"] = [b.mean[k] for b in report.positions]
            rows[f"{k} SE"] = [b.se[k] for b in report.positions]
        ui.table(
            pd.DataFrame(rows),
            name="audit-positions",
            caption="The same buckets as numbers.",
            column_config={
                c: st.column_config.NumberColumn(format="%.5f" if c.endswith("mean") else "%.2g")
                for c in rows
                if c.startswith("k")
            },
        )
    if report.sequences is not None:
        seq = report.sequences
        st.subheader("Sequence sums")
        ui.table(
            _summary_frame(seq.stats, exact, prefix="seq_"),
            name="audit-sequences",
            caption=(
                f"Each estimator summed over each sequence's counted tokens, {seq.n_sequences:,} "
                "sequences. Summed k1 and k3 estimate the sequence-level KL: by the chain rule, the "
                "sum of the per-token KLs."
            ),
            column_config=SUMMARY_FORMAT,
        )


def audit_section() -> None:
    """Upload or example → column choices → report; a bad file gets an st.error, not a traceback."""
    uploaded = st.file_uploader(
        "Upload a CSV or Parquet file (one row per sampled token)",
        key="upload",
        help=f"Up to {audit.MAX_FILE_BYTES // 2**20} MiB. Log-probs must be ≤ 0 and finite.",
    )
    if uploaded is None:
        key, name, data, upload_id = str(EXAMPLE_CSV), EXAMPLE_CSV.name, None, None
        meta = cache.json_file(str(EXAMPLE_JSON))
        st.info(
            f"**No file uploaded, so this is the bundled example** `data/{EXAMPLE_CSV.name}`: "
            f"{meta['n_sequences']} sequences from a toy policy over {meta['vocab_size']} tokens, "
            "with a reference model drifting away along the sequence (made by "
            f"`{meta['generator']}`). Its exact KLs are known and shown beside the estimates. "
            "The column choices below are part of this page's link.",
            icon=":material/dataset:",
        )
    else:
        key, name, data, upload_id = (
            uploaded.file_id,
            uploaded.name,
            uploaded.getvalue(),
            uploaded.file_id,
        )
        meta = None
        st.caption(
            ":material/link_off: An uploaded file stays in this browser session: a link can't "
            "carry it, so the column choices for it are not in the URL."
        )
    try:
        columns = cache.table_columns(key, name, _data=data)
    except ValueError as exc:
        st.error(f"**This file can't be audited.** {exc}", icon=":material/error:")
        return
    chosen = _pick_columns(columns, upload_id)
    direction = state.segmented(
        "Direction",
        "dir",
        list(audit.DIRECTIONS),
        value="sampler-other",
        format_func=DIRECTION_LABELS.get,
        help="KL[sampler‖other] uses k1, k2, k3 of log r; KL[other‖sampler] weights them by r (k3 becomes k3_pq).",
    )
    if chosen["sc"] is None or chosen["oc"] is None:
        st.info(
            "Choose the sampler and the other log-prob columns to see the report.",
            icon=":material/touch_app:",
        )
        return
    try:
        with st.spinner("Auditing the file…"):
            report = cache.audit_file(
                key,
                name,
                chosen["sc"],
                chosen["oc"],
                mask_col=chosen["mc"],
                position_col=chosen["pc"],
                sequence_col=chosen["qc"],
                rollout_col=chosen["rc"],
                direction=direction,
                _data=data,
            )
    except ValueError as exc:
        st.error(
            f"**This file can't be audited with these columns.** {exc}", icon=":material/error:"
        )
        return
    exact = _exact_for(meta, chosen, direction) if meta is not None else None
    if meta is not None and exact is None:
        st.caption(
            "The example's exact KLs apply to its own roles (sampler `logp_policy`, other "
            "`logp_ref`, mask `mask`, no rollout column), so they are not shown for this choice."
        )
    _report(report, exact, name)
    ui.show_source(audit.audit)


audit_section()
