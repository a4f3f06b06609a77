"""approx_kl in practice: what a library's KL line means, and how its clamps bias it.

The point first (issue 20): the answer at the clamp demo's setting and its chart, then

1. the clamps along a drift path (:mod:`kl_core.libraries.clamps`), ``?cpath=…&ce=…&th=…``;
2. four questions to ask of any KL number, each with a sign error worked out
   exactly on a five-token example (:func:`kl_core.libraries.clamps.token_expectations`);
3. the library crosswalk (:data:`kl_core.libraries.crosswalk.CROSSWALK`) and a
   "translate" picker, ``?lib=…&opt=…``.

The audit of your own log-probs has its own page, ``/audit``; an old link to
this page that carried audit settings gets a note pointing there.
"""

from __future__ import annotations

import streamlit as st

from charts.approx_kl import clamp_chart, clamp_hit_chart
from i18n import _
from kl_core.estimation.paths import PATHS
from kl_core.libraries import clamps
from kl_core.libraries.crosswalk import CROSSWALK, evaluate, libraries, options
from lab import cache, state, ui
from lab.format import probability_text
from lab.notes import approx_kl as notes
from lab.notes.audit import AUDIT_KEYS
from lab.pages import page_by_url
from lab.spec_params import VOCABULARIES
from lab.widgets import page_opening

page_opening(  # first, before anything is drawn: see lab.widgets
    _("approx_kl in practice"), "**{q}**".format(q=_(notes.QUESTION)),  # i18n: ok (layout)
    mapping="theta", more=_(notes.ROLES_LINE))
audit_link = {k: st.query_params.get_all(k) for k in AUDIT_KEYS if k in st.query_params}
state.reads(*audit_link)  # the note below passes them on
audit_page = page_by_url("audit")
if audit_link:  # an old link from when the audit was part of this page
    st.info(_("This link carries settings for the log-prob audit, which now has its own page."),
            icon=":material/move_item:")
    st.page_link(audit_page.path, icon=audit_page.icon, query_params=audit_link,
                 label=_("Open {title}, with this link's settings").format(title=_(audit_page.title)))
first = st.container()  # the answer and the clamp chart, above the controls that set them (issue 20)

# =================================================================== 1. clamps
st.header(_("Clamps: when the library's number stops growing"))
demo_entries = [clamps.entry_by_id(i) for i in clamps.DEMO_ENTRIES]
st.markdown(notes.clamps_intro(demo_entries))
path_col, entry_col = st.columns([1, 2], gap="medium")
with path_col:
    path_key = state.segmented(_("Drift path"), "cpath", VOCABULARIES, value="peaked",
                               help=notes.path_help())
with entry_col:
    demo_id = state.select(
        _("Library option"), "ce", list(clamps.DEMO_ENTRIES), value="verl:low_var_kl:loss",
        format_func=lambda i: _("{lib} {opt} ({where})").format(
            lib=i.split(":")[0], opt=i.split(":")[1], where=_(notes.ACTS_ON[i.split(":")[2]])),
        help=notes.demo_help(list(CROSSWALK), demo_entries),
    )
demo = clamps.entry_by_id(demo_id)
path = clamps.CLAMP_PATHS[path_key]
if path_key == "peaked":
    theta = state.slider(_("Drift θ: how much the policy has raised the logit of token {i}").format(
        i=clamps.PEAKED_TOKEN), "th", min_value=0.0, max_value=30.0, value=20.0, step=0.5, format="%.1f")
    x_title = _("drift θ (logit boost of token {i})").format(i=clamps.PEAKED_TOKEN)
else:
    theta = state.slider(_("Drift θ along the direction v"), "thm", min_value=0.0, max_value=3.0,
                         value=3.0, step=0.05, format="%.2f")
    x_title = _("drift θ (along v)")
st.markdown(notes.clamp_roles(demo, clamps.drifting_role(demo), path.family_latex,
                              path.theta_latex, path.base.name))

curve = cache.clamp_curve(demo_id, path_key)
point = clamps.clamp_point(demo_id, path_key, theta)
kl_name = demo.direction.split(" (")[0]
with ui.metric_row():
    st.metric(_("Exact KL"), f"{point.kl:.4g}",
              help=notes.typeset(_("Exact {kl}: a sum over the tokens.").format(kl=kl_name)))
    delta, delta_words = notes.bias_delta(point.bias, point.kl)
    st.metric(
        _("Library's mean"), f"{point.mean:.4g}", delta=delta, delta_description=delta_words,
        help=notes.library_mean_help(demo.clamped),
    )
    st.metric(_("No clamps"), f"{point.unclamped_mean:.4g}",
              help=_("The same estimator without clamps: k1 and k3 are unbiased without clamps; "
                     "k2 is biased with or without."))
    st.metric(_("P(clamped)"), probability_text(point.hit_prob),
              help=_("Probability, under the sampler, that the sampled token's log-ratio or value "
                     "is outside a clamp."))
with first:
    ui.answer(notes.answer(demo.library, demo.option, theta, point, clamped=demo.clamped))
    ui.chart(
        clamp_chart(curve, point, estimator_key=demo.estimator, x_title=x_title,
                    title=[_("{lib} {opt} ({where})").format(
                        lib=demo.library, opt=demo.option, where=_(notes.ACTS_ON[demo.acts_on])),
                        _("against the exact KL")]),
        name=_("clamps-{lib}-{opt}-{path}").format(lib=demo.library, opt=demo.option, path=path_key),
        caption=_(notes.CLAMP_CHART_CAPTION),
    )
ui.chart(
    clamp_hit_chart(curve, point, x_title=x_title, show_logr=demo.logr_clamp is not None),
    name=_("clamp-hits-{lib}-{opt}-{path}").format(lib=demo.library, opt=demo.option, path=path_key),
    caption=notes.hit_caption(demo.clamped, bool((curve.hit_prob > 0).any())),
)

sampler_d, other_d = clamps.roles_at(demo_id, path_key, theta)
tokens = clamps.clamp_tokens(demo_id, sampler_d.log_probs, other_d.log_probs)
g3, g4 = st.column_config.NumberColumn(format="%.3g"), st.column_config.NumberColumn(format="%.4g")
ui.table(
    notes.clamp_token_rows(tokens, demo.estimator),
    name=_("clamp-tokens-{lib}-{opt}-{path}-{theta:g}").format(
        lib=demo.library, opt=demo.option, path=path_key, theta=theta),
    caption=_("Every token at θ = {theta:g}: the library's mean is the sum of P under sampler × "
              "library value; the KL is the same sum without clamps (for k1 and k3).").format(
        theta=theta),
    column_config={notes.header("P under sampler"): g3, notes.header("P under other"): g3,  # i18n: ok (keys)
                   notes.header("library value"): g4,  # i18n: ok (key)
                   "log r": st.column_config.NumberColumn(format="%.3f"),
                   notes.no_clamp_header(demo.estimator): g4},
)
ui.show_source(clamps.clamp_tokens)
if not audit_link:  # one short line (a phone cuts a long link label)
    st.page_link(audit_page.path, icon=audit_page.icon, label=_(audit_page.title),
                 help=_("Audit your own per-token log-probs: {title}").format(title=_(audit_page.title)))

# =================================================================== 2. checklist
st.divider()
st.header(_("Four questions, four common mistakes"))
st.markdown(_(
    "Training logs print a line such as `approx_kl`, `ppo_kl` or `kl_penalty`, and RL libraries "
    "offer options such as `low_var_kl`, `k3` or `mse`. Four questions turn that line into a precise "
    "statement — **whose samples, which KL direction, which ratio, which estimator** — and the "
    "crosswalk below says whether the value acts on the **reward**, the **loss** or only a **metric**."
))
OLD, NEW = PATHS["logit"].base, PATHS["logit"].at(notes.CHECKLIST_THETA)
ppo = clamps.token_expectations(OLD, NEW)  # a PPO batch: tokens from π_old, compared with π_new
rlhf = clamps.token_expectations(NEW, OLD)  # an RLHF penalty: tokens from π_θ, compared with π_ref
st.markdown(notes.checklist_intro(OLD, NEW))
items = notes.checklist(ppo, rlhf)
for row in (items[:2], items[2:]):
    for col, item in zip(st.columns(2, gap="medium"), row, strict=True):
        with col, st.container(border=True, height="stretch"):
            st.markdown(notes.typeset("#### {q}\n{rule}".format(q=item.question, rule=item.rule)))
            st.markdown(notes.typeset(item.markdown()))
ui.show_source(clamps.token_expectations)

# =================================================================== 3. crosswalk
st.divider()
st.header(_("The library crosswalk"))
st.markdown(notes.crosswalk_intro(list(CROSSWALK)))
ui.table(
    notes.crosswalk_frame(list(CROSSWALK)),
    name=_("kl-crosswalk"),
    caption=_(
        "{n} options in {libs} libraries; scroll for more. \"Gradients →\" opens what an option "
        "differentiates to in a loss or a reward. The CSV adds where each is set, the library code, "
        "sampler, weight, source, the version read and a caveat."
    ).format(n=len(CROSSWALK), libs=len(libraries())),
    column_order=[notes.header(k) for k in notes.SHOWN_COLUMNS],
    column_config={notes.header("gradient"): st.column_config.LinkColumn(
        display_text=_("Gradients →"),
        help=_("Open the Gradients page with this option highlighted. A logged metric has no gradient."))},
    height=330, placeholder=notes.NO_GRADIENT,  # a metric's empty link cell: a dash, not "None"
)

st.subheader(_("Translate one option"))
lib_col, opt_col = st.columns(2, gap="medium")
with lib_col:
    library = state.select(_("Library"), "lib", libraries(), value="verl")
by_id = {clamps.entry_id(e): e for e in options(library)}
with opt_col:
    chosen_id = state.select(
        _("Option or logged name"), "opt", list(by_id),
        value="verl:low_var_kl:loss" if library == "verl" else next(iter(by_id)),
        format_func=lambda i: _("{option} ({where})").format(
            option=by_id[i].option, where=_(notes.ACTS_ON[by_id[i].acts_on])),
        help=_("The option a user sets, or the name a log shows; in brackets where the value acts."),
    )
entry = by_id[chosen_id]
# The crosswalk's own words (component, sampler, caveat, where it was read) are kl_core/libraries/crosswalk.toml's
# prose fields, translated through i18n.message (notes.entry_heading, entry_facts, checked_in, caveat_note).
with st.container(key="crosswalk-entry"):
    st.markdown(notes.entry_heading(entry))
    ui.formulas(*notes.formula_pieces(entry))
    formula_col, facts_col = st.columns([1, 1], gap="large")
    with formula_col:
        st.code(entry.library_formula, language="python")
        st.markdown(notes.variables_text(entry))
    with facts_col:
        name_md = "" if entry.estimator == "full" else ui.estimator_name(entry.estimator)
        st.markdown("\n".join("- " + fact for fact in notes.entry_facts(entry, name_md)))
        st.caption(notes.checked_in(entry))
    ui.note(*notes.caveat_note(entry))

ui.show_source(evaluate)
