"""Config doctor: what a training config's KL term estimates, and where its gradient pushes.

A text box and an upload, with three real examples (``?ex=verl|OpenRLHF|TRL``,
``?ex=Your own`` for your own text), a library override (``?library=``; not ``lib``, which the approx_kl page's
crosswalk picker uses: the link from a card to its crosswalk row carries ``lib``) and a release
(``?release=``: inferred from the text, the latest, or an older era of :mod:`kl_core.doctor.releases`).  Every
finding is :func:`kl_core.doctor.diagnosis.diagnose`'s; its composed sentences are in
:mod:`lab.notes.config_doctor`.  Your own text is never put in the URL: a
launch script can hold paths and keys.
"""

from __future__ import annotations

import streamlit as st

from charts.config_doctor import pull_chart
from i18n import _
from kl_core.doctor import parse as doctor_parse
from kl_core.doctor.diagnosis import UnreadableInput, diagnose
from lab import cache, state, ui
from lab.navigation import leave_legacy_wrapper
from lab.notation import policy_mapping
from lab.notes import config_doctor as notes
from lab.pages import page_by_url

leave_legacy_wrapper()  # first, before anything is drawn: see lab/navigation.py


def follow_the_box(example: str) -> None:
    """The text area's on_change: an edited example becomes "Your own" text, and the selector follows."""
    key = "cfg_{ex}".format(ex=example)
    if example != "own" and st.session_state[key] != notes.example_text(example):
        st.session_state["cfg_own"] = st.session_state.pop(key)  # the example keeps its own text for later
        state.set_values(ex="own")


st.title(_("Config doctor"))
st.markdown(_(notes.INTRO))
st.caption(policy_mapping())  # the one sentence that maps π_θ, π_ref to q, p (lab/notation.py)

# ------------------------------------------------------------ the input
pick_col, lib_col, rel_col = st.columns([3.1, 3.1, 1.9], gap="small")  # both button rows fit at 1280 px
with pick_col:
    example = state.segmented(
        _("Example"), "ex", notes.EXAMPLE_LABELS, value="verl",
        help=_("Three real configs from the libraries' own sources: verl's GRPO example script, OpenRLHF's "
               "DAPO command, TRL's `GRPOConfig` for DeepSeekMath. Or your own text."),
    )
with lib_col:
    library = state.segmented(
        _("Library"), "library", notes.LIBRARIES, value="auto",
        help=_("Detect reads the library from the text; choose one if the text is ambiguous."),
    )
with rel_col:
    release = state.select(
        _("Release"), "release", notes.RELEASES, value="auto",
        help=_("Infer reads the release from the settings the text uses (flags an older release had, known "
               "forks); Latest is the release the crosswalk describes; or pick an older release."),
    )
paste_tab, upload_tab = st.tabs([_(":material/edit_note: Paste"), _(":material/upload_file: Upload a file")])
with paste_tab:
    text = st.text_area(
        _("Launch script or config"), value=notes.example_text(example), height=170,
        key="cfg_{ex}".format(ex=example), on_change=follow_the_box, args=(example,),
        placeholder="python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True …",  # i18n: ok
        help=_("Shell scripts are read, not run: the script's own variables and arrays are substituted, "
               "anything it would compute is reported as not literal."),
    )
with upload_tab:
    uploaded = st.file_uploader(
        notes.upload_label(), key="cfg_upload",
        help=_("An upload takes the place of the text box."),
        max_upload_size=-(-doctor_parse.MAX_BYTES // 2**20),  # MB, rounded up: the doctor's own limit words the rest
    )
if uploaded is not None:
    data, name = uploaded.getvalue(), uploaded.name
    st.caption(_(":material/link_off: An uploaded file stays in this browser session: a link can't carry it."))
else:
    data = text
    name = notes.EXAMPLES[example].file or None
    if example == "own" or text != notes.example_text(example):
        st.caption(_(":material/link_off: Your own text stays in this browser session: a link only carries "
                     "the example, the library and the release, never what you paste."))
if not str(data).strip():
    st.info(_("Paste a launch script or config above, or upload a file."), icon=":material/touch_app:")
    st.stop()
try:
    d = cache.diagnose(data, None if library == "auto" else library, name, None if release == "auto" else release)
except UnreadableInput as exc:
    ui.fail(_("**The doctor can't read this.** {why}").format(why=notes.error_text(exc)))
except ValueError as exc:  # a release of another library or trainer than the text's
    ui.fail(notes.release_error(release, exc))

# ------------------------------------------------------------ the verdict, in one screen
st.header(notes.headline(d))
with ui.card("verdict"):
    st.markdown("  \n".join(notes.summary_lines(d)))
    for fix, codes in notes.fix_groups(d):
        st.markdown(notes.fix_heading(codes, d))
        st.code(fix, language=notes.fix_language(d), wrap_lines=True)
        st.caption(notes.fix_group_cost(d, fix))
st.markdown(notes.read_line(d))
if line := notes.release_line(d):
    st.markdown(line)
if d.also:
    st.warning("  \n".join(notes.other_release_lines(d)), icon=":material/history:")

# ------------------------------------------------------------ the card
approx, gradients = page_by_url("approx-kl"), page_by_url("gradients")
for i, u in enumerate(d.kl_uses):
    with ui.card(f"use-{i}"):
        st.subheader(notes.use_title(d, u))
        st.markdown(_("**Per token, the library computes**"))
        ui.formula(notes.stacked(u.formula_latex))
        formula_col, facts_col = st.columns([1, 1], gap="large")
        with formula_col:
            st.code(u.library_formula.strip("\n"), language="python", wrap_lines=True)
        with facts_col:
            st.markdown("\n".join("- " + fact for fact in notes.use_facts(d, u)))
            if u.aggregation is not None:
                ui.formula(notes.stacked(u.aggregation.formula))
        ui.chart(pull_chart(cache.pull_curve(u.entry), estimator_key=u.estimator,
                            option_label="{o} ({w})".format(o=u.option, w=u.where),
                            unclamped_label=notes.unclamped_label(u)),
                 name=_("pull-{i}").format(i=i), caption=notes.pull_caption(u))
        st.caption(notes.caveat(u, d))
        st.page_link(approx.path, icon=":material/table_rows:", query_params=notes.crosswalk_query(u),
                      label=_("This option in the crosswalk: {row}").format(row=u.crosswalk_name))
        if (grad_query := notes.gradients_query(u)) is not None:
            st.page_link(gradients.path, icon=":material/trending_down:", query_params=grad_query,
                         label=_("Where its gradient pushes, on the Gradients page"))
        options_in = (_("Every option in the reward in {lib}, and its gradient") if u.where == "reward"
                      else _("Every option in the loss in {lib}, and its gradient"))
        with st.expander(options_in.format(lib=d.library)):
            ui.table(notes.alternatives_frame(u), name=_("options-{i}").format(i=i),
                     caption=_("The gradients come from `kl_core.gradients.expected`, exactly, at a small categorical "
                               "policy."))

# ------------------------------------------------------------ what to change
st.header(_("Warnings") if d.warnings else _("No warnings"))
if not d.warnings:
    st.success(notes.no_warnings_text(d), icon=":material/check_circle:")
for i, w in enumerate(d.warnings):
    with ui.card(f"warning-{i}"):
        st.markdown(":material/warning: " + notes.warning_title(w, d))
        if w.fix:
            st.markdown(_("**Change** (checked: the doctor finds the warning gone with it)"))
            st.code(w.fix, language=notes.fix_language(d), wrap_lines=True)
            st.caption(notes.fix_cost(d, w))
        else:
            st.caption(notes.no_fix_text(d, w))

if d.unrecognised:
    st.subheader(_("Keys {lib} {rel} does not know").format(lib=d.library, rel=d.release))
    ui.table(notes.unknown_frame(d), name=_("unrecognised-keys"),
             caption=_("A typo is silently ignored by some launchers and fatal in others; none of these is read."))
with st.expander(_("The settings the card used, and where each came from"), icon=":material/tune:"):
    ui.table(notes.settings_frame(d), name=_("settings"),
             caption=_("Release defaults come from {files}.").format(files=", ".join(f"`{f}`" for f in d.profile.key_files)))
for n in d.notes:
    st.caption(":material/info: " + notes.note_text(n))
st.download_button(_("Download the card (JSON)"), notes.card_json(d), file_name=_("kl-card.json"),
                   mime="application/json", icon=":material/download:",
                   help=_("The same JSON as `python -m kl_core doctor FILE --json`."))
ui.show_source(diagnose)
