"""Audit your log-probs: k1, k2, k3 of your own per-token log-probs, by position and sequence.

An uploaded CSV or Parquet file, or the bundled example ``data/example_audit.csv``
whose column choices live in the URL (``?sc=…&oc=…&mc=…&pc=…&qc=…&rc=…&dir=…``,
the keys this audit had on the "approx_kl in practice" page).  Every figure is
:func:`kl_core.audit.statistics.audit`'s; a bad file gets a clear message, not a traceback.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from charts.audit import estimates_chart, position_chart
from charts.histograms import common_domain, per_sample_histogram
from charts.palette import RB_COLOR, color
from i18n import _
from kl_core.audit import statistics as audit
from lab import cache, state, ui
from lab.navigation import leave_legacy_wrapper
from lab.notation import audit_label, policy_mapping
from lab.notes import audit as notes

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_CSV = ROOT / "data" / "example_audit.csv"
EXAMPLE_JSON = ROOT / "data" / "example_audit.json"
KEYS = audit.ESTIMATOR_KEYS
NUMBER = {f: st.column_config.NumberColumn(format=f) for f in ("%.5f", "%.4f", "%.2g")}

leave_legacy_wrapper()  # first, before anything is drawn: see lab/navigation.py
SUMMARY_FORMAT = {  # keyed by the tables' headers, in the run's language
    _("mean"): NUMBER["%.5f"],
    _("exact mean"): st.column_config.NumberColumn(format="%.5f",
                                                   help=_("From the generator: data/example_audit.json.")),
    "SE": st.column_config.NumberColumn(format="%.2g", help=_("Standard error of the mean.")),
    _("share < 0"): st.column_config.NumberColumn(format="percent"),
    **{c: NUMBER["%.4f"] for c in (_("std"), "p95", "p99", _("max"))},
}
st.title(_("Audit your log-probs"))
st.markdown(_(notes.QUESTION))
st.caption(policy_mapping("audit"))  # the one sentence that maps sampler/other to q/p (lab/notation.py)
top = st.container()  # the point first: which file, the verdict and its chart (filled below)

# ------------------------------------------------------------ the file
st.header(_("Your file"))
uploaded = st.file_uploader(
    _("Upload a CSV or Parquet file (one row per sampled token)"), key="upload",
    help=_("Up to {mib} MB. Log-probs must be ≤ 0 and finite.").format(mib=audit.MAX_FILE_BYTES // 2**20),
)
if uploaded is None:
    key, name, data, upload_id = str(EXAMPLE_CSV), EXAMPLE_CSV.name, None, None
    meta = cache.json_file(str(EXAMPLE_JSON))
    st.info(notes.example_info(meta, EXAMPLE_CSV.name), icon=":material/dataset:")
    st.caption(_("A file over {mb} MB is refused by the box above (a red mark on its name): upload fewer rows, "
                 "or save them as Parquet.").format(mb=audit.MAX_FILE_BYTES // 2**20))  # never reaches the server
else:
    key, name, data, upload_id = uploaded.file_id, uploaded.name, uploaded.getvalue(), uploaded.file_id
    meta = None
    st.caption(_(
        ":material/link_off: An uploaded file stays in this browser session: a link can't carry "
        "it, so the column choices for it are not in the URL."
    ))
ui.table(notes.columns_frame(), name=_("audit-columns"),
         caption=_("One row per sampled token; the column names are yours to choose below."))
st.download_button(_("Download the example file ({name})").format(name=EXAMPLE_CSV.name),
                   data=EXAMPLE_CSV.read_bytes(), file_name=EXAMPLE_CSV.name, mime="text/csv",
                   icon=":material/download:")
try:
    columns = cache.table_columns(key, name, _data=data)
except ValueError as exc:
    with top:
        ui.fail(_("**This file can't be audited.** {why}").format(why=ui.error_text(exc)))

# ------------------------------------------------------------ the columns
def follow_direction() -> None:
    state.rewrite(notes.holds_kl_column, lambda col: notes.kl_column_after_switch(col, st.session_state["dir"]))


chosen: dict[str, str | None] = {}
unmatched = upload_id is not None and not {notes.EXAMPLE_ROLES["sc"], notes.EXAMPLE_ROLES["oc"]} <= set(columns)
with state.notes_below(), st.expander(_("More settings: columns and direction"), expanded=unmatched,
                 icon=":material/tune:"):
    direction = state.segmented(  # first: the exact-KL column's default follows it
        _("Direction"), "dir", list(audit.DIRECTIONS), value="sampler-other",
        format_func=notes.direction_label, help=_(notes.DIRECTION_HELP), on_change=follow_direction,
    )
    for role_label_required, col in ui.grid(notes.PICKERS, key="columns"):
        role, label, required = role_label_required
        label = _(label)
        opts = list(columns) if required else [notes.NONE, *columns]
        default = notes.example_role(role, direction) if notes.example_role(role, direction) in opts else None
        with col:
            if upload_id is None:  # the example: the choice is part of the link
                value = state.select(label, role, opts, value=default)
            else:  # an upload: not in the URL; keyed by the upload so new columns start fresh
                value = st.selectbox(
                    label, opts, key=notes.upload_key(role, upload_id), placeholder=_("choose a column"),
                    index=opts.index(default) if default is not None else (None if required else 0),
                )
        chosen[role] = None if value in (None, notes.NONE) else value
if (missing := notes.missing_columns(name, list(columns), chosen)) is not None:
    top.warning(missing, icon=":material/table_rows:")
    st.stop()

# ------------------------------------------------------------ the core call
try:
    report = cache.audit_file(
        key, name, chosen["sc"], chosen["oc"], mask_col=chosen["mc"], position_col=chosen["pc"],
        sequence_col=chosen["qc"], rollout_col=chosen["rc"], direction=direction, _data=data,
        kl_col=chosen["kc"],
    )
except ValueError as exc:
    with top:
        ui.fail(_("**This file can't be audited with these columns.** {why}").format(why=ui.error_text(exc)))
exact = notes.exact_for(meta, chosen, direction) if meta is not None else None
small = report.sample_size()
kl_note = notes.kl_column_note(meta, chosen, direction)  # rb holds another KL than k1 and k3 estimate
with top:
    st.markdown(notes.counted_line(report, name))
    with st.container(border=True):
        st.markdown("\n".join(f"- {line}" for line in notes.verdict(report, exact, small.se, kl_note is None)))
    rows = notes.verdict_rows(report, small.se)
    ui.chart(
        estimates_chart(rows, exact=None if exact is None else exact["k3"]),
        name=_("audit-verdict"),
        caption=notes.verdict_chart_caption(exact is not None, rows),
    )
if kl_note is not None:
    st.warning(kl_note, icon=":material/swap_horiz:")
if meta is not None and exact is None:
    st.caption(_(
        "The example's exact KLs apply to its own roles (sampler `logp_policy`, other "
        "`logp_ref`, mask `mask`, no rollout column), so they are not shown for this choice."
    ))

# ------------------------------------------------------------ the report
st.header(_("The report"))
if small.note:  # too few tokens: say so, and withhold SE/std/p95/p99
    st.warning(ui.error_text(small.note), icon=":material/data_alert:")
defs = audit.DEFINITIONS[report.direction]
for k, col in ui.grid(KEYS, key="formulas"):
    with col:
        ui.formula(rf"\color{{{color(k)}}}{{k_{k[1]}}} = {defs[k]['formula']}")
        st.caption(notes.meaning(report.direction, k))
with ui.metric_row():
    st.metric(_("Tokens counted"), f"{report.n:,}")
    for k in KEYS:
        s = report.summaries[k]
        st.metric(
            _("{k} mean").format(k=k), notes.summary_mean_text(s),
            delta=_("± {se} (SE)").format(se=notes.se_text(s)) if small.se else None,
            delta_color="off", delta_arrow="off",
            help=notes.mean_help(k, small.se),
        )
    if report.rb is not None:
        st.metric(
            _("rb mean"), notes.summary_mean_text(report.rb),
            delta=_("± {se} (SE)").format(se=notes.se_text(report.rb)) if small.se else None,
            delta_color="off", delta_arrow="off",
            help=_("Mean of the exact next-token KL column over the counted tokens (Rao–Blackwellized)."),
        )
    if exact is not None:
        st.metric(
            _("Exact KL"), notes.mean_text(exact['k1']),
            help=_("The exact {kl}, from the generator (data/example_audit.json): the exact expectation "
                   "for these tokens.").format(kl=notes.direction_label(report.direction)),
        )
if report.weighted:
    with ui.metric_row():
        st.metric(_("ESS, tokens"), audit.count_text(report.ess),
                  help=_(r"Effective sample size in tokens: $(\sum w)^2 / \sum w^2$, "
                         r"$w = {sampler} / {rollout}$ per token.").format(sampler=audit_label("sampler"),
                                                                           rollout=r"\text{rollout}"))
        st.metric(_("ESS / tokens"), notes.ess_share(report.ess_fraction))
        if report.sequences is not None and report.sequences.ess is not None:
            st.metric(_("ESS, sequences"), audit.count_text(report.sequences.ess),
                      help=_("The effective number of sequences."))
if report.rb is not None:
    ui.formulas(r"\color{{{c}}}{{\mathrm{{rb}}}} =\;".format(c=RB_COLOR), notes.rb_formula(report.direction),
                joined=True)
    if small.se:  # too few tokens: no SDs, so no ratio of variances
        with ui.metric_row():
            st.metric("Var(k1)/Var(rb)", notes.variance_ratio_text(report.variance_ratio, report.log_variance_ratio, "k1"),  # i18n: ok (notation)
                      help=_("Per token: how many times more tokens k1 needs than rb for the same "
                             "standard error."))
            st.metric("Var(k3)/Var(rb)", notes.variance_ratio_text(report.variance_ratio, report.log_variance_ratio, "k3"),  # i18n: ok (notation)
                      help=_("Per token: the same ratio for k3."))
            if (seq := notes.sequence_ratio_shown(report)) is not None:
                st.metric("Var(Σk1)/Var(Σrb)", notes.variance_ratio_text(seq.variance_ratio, seq.log_variance_ratio, "k1"),  # i18n: ok (notation)
                          help=_("Per sequence: the variance of the sums of k1 over that of the sums of rb."))
    st.markdown(notes.rb_caption(report, kl_note is None, small.se))
ui.table(
    notes.summary_frame(small.masked_all(report.all_summaries), exact).dropna(axis=1, how="all"),
    name=_("audit-summary"),
    caption=notes.summary_caption(exact is not None, report.weighted, small.se), column_config=SUMMARY_FORMAT,
)
domain = common_domain([report.values[k] for k in KEYS],
                       include=(0.0,) + ((exact["k1"],) if exact is not None else ()))
for k, col in ui.grid(KEYS, key="histograms"):
    s = report.summaries[k]
    with col:
        ui.chart(
            per_sample_histogram(
                report.values[k], k, true_value=None if exact is None else exact[k],
                true_label=_("exact KL") if k != "k2" else _("exact mean"), mean=s.mean,
                neg_fraction=notes.drawn_share(report, k), domain=domain, height=280, log_mean=s.log_mean,
            ),
            name=_("audit-{k}-histogram").format(k=k),
            caption=notes.histogram_caption(report, k, small),
        )
if report.positions is not None:
    st.subheader(_("By position"))
    ui.chart(position_chart(notes.position_buckets(report, small.se)), name=_("audit-positions"),
             caption=notes.position_caption(small.se, report.weighted, notes.thin_buckets(report, small.se),
                                            len(report.positions)) + notes.unseen_position_means(report))
    ui.table(
        notes.position_rows(report, small.se), name=_("audit-positions"), caption=_("The same buckets as numbers."),
        column_config={c: NUMBER[f] for c, f in notes.position_formats(report, small.se).items()},
    )
if report.sequences is not None:
    st.subheader(_("Sequence sums"))
    if (few := report.sequences.sample_size()).note:  # too few sequences for their SE/percentiles
        st.caption(ui.error_text(few.note))
    ui.table(
        notes.summary_frame(few.masked_all(report.sequences.stats), exact, prefix="seq_").dropna(axis=1, how="all"),
        name=_("audit-sequences"),
        caption=notes.sequences_caption(report.sequences.n_sequences), column_config=SUMMARY_FORMAT,
    )
ui.show_source(audit.audit)
