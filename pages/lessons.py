"""Lessons: predict, check, explore — seven short lessons, one step at a time.

Each step is a question from ``kl_core.lessons.catalog`` (a setting, an exact answer
computed by ``kl_core``, an explanation): the reader commits to a number or a
choice, or asks "Show me", and only then sees the exact value, how far off the
guess was, the explanation, a small simulation where it helps, and a link to
the page that covers the setting.  URL keys: ``lesson`` (1–7), ``step``, ``v``
(the variant: the same ``v`` is the same numbers for everyone), ``present=1``
(presenter mode: no sidebar, large type, the answer hidden until revealed).
"""

import streamlit as st

from i18n import _, message
from kl_core.lessons import catalog as core
from lab import lessons, state, ui
from lab.navigation import leave_legacy_wrapper
from lab.notes import lessons as notes
from lab.pages import page_by_url

leave_legacy_wrapper()  # first, before anything is drawn: see lab/navigation.py
present = lessons.presenter_mode()
if not present:
    st.title(_("Lessons"))

# ------------------------------------------------------------ which step
pickers = st.expander(_("Lesson, step and variant"), icon=":material/list:") if present else st.container()
with pickers:
    c_lesson, c_step = st.columns([1.4, 1], gap="medium")
    with c_lesson:
        lesson_no = state.segmented(
            _("Lesson"), "lesson", [les.number for les in core.LESSONS], value=1, format_func=str,
            on_change=state.set_values, kwargs={"step": 1},
            help=_("1 Why is my approx_kl negative? · 2 Bias and spread · 3 Control variates · 4 Which "
                   "direction? · 5 Value ≠ gradient · 6 Tokens and sequences · 7 Your library"),
        )
    les = core.lesson(lesson_no)
    with c_step:
        step_no = state.segmented(_("Step"), "step", list(range(1, len(les.steps) + 1)), value=1, format_func=str)
body = st.container()  # the step: its question, the lesson's point and the chart first (issue 20)
with state.notes_below(), (pickers if present else st.expander(_("More settings"), icon=":material/tune:")):
    variant = state.number(_("Variant"), "v", min_value=0, max_value=core.MAX_VARIANT, value=0, step=1,
                           help=_("The same variant is the same numbers on every screen."))
q = lessons.question(lesson_no, step_no, int(variant))
with body:  # everything up to the step's links is drawn in the body, above "More settings"
    st.caption(notes.lesson_caption(lesson_no))
    (st.title if present else st.header)(notes.step_heading(q))  # presenter: the step is the screen's heading
    ask, show = st.columns([1, 1.1], gap="medium")  # on a phone: the question and its form, then the point
    with show:  # the lesson's point, not the step's answer (the verdict says that after a guess), and the setting
        ui.answer(notes.point(q))
        lessons.draw_setting(q)
    with ask:
        st.markdown(message(q.setup))
        st.markdown("**{prompt}**".format(prompt=message(q.prompt)))
        # -------------------------------------------------------- the prediction
        key = "L{l}-S{s}-v{v}".format(l=q.lesson, s=q.step, v=q.variant)
        with st.form(key="guess-" + key, border=False, enter_to_submit=True):
            if q.kind == "numeric":
                st.text_input(_("Your prediction"), key="typed-" + key, placeholder=_("A number, e.g. 0.25"),
                              help=_("0.25, 25% and 0,25 are all read as the same number."))
            else:
                st.radio(_("Your prediction"), [k for k, _label in q.choices], index=None, key="chosen-" + key,
                         format_func=lambda k: message(dict(q.choices)[k]))
            with st.container(horizontal=True, gap="small"):
                st.form_submit_button(_("Check"), type="primary", icon=":material/check:",
                                      on_click=lessons.submit, args=(q, False))
                st.form_submit_button(_("Reveal the answer") if present else _("Show me"),
                                      icon=":material/visibility:", on_click=lessons.submit, args=(q, True))
        if lessons.missing_guess(q):
            st.warning(notes.missing_text(q, st.session_state.get("typed-" + key, "")), icon=":material/edit:")
        # -------------------------------------------------------- the check
        rec = lessons.records().get((q.lesson, q.step, q.variant))
        if rec is not None:
            kind, text = notes.verdict(q, rec)
            ui.note(kind, text, {"success": ":material/check_circle:", "error": ":material/cancel:"}.get(
                kind, ":material/visibility:"))
    if rec is not None:
        if q.kind == "numeric":
            with ui.metric_row():
                st.metric(_("Exact value (kl_core)"), notes.answer_text(q))
                st.metric(_("Your prediction"), notes.guess_text(q, rec.guess))
                if rec.guess is not None and q.answer != 0:
                    st.metric(_("Off by"), notes.off_by_text(q, rec.guess), help=_("(guess − exact) / |exact|"))
                st.metric(_("Counts as right within"), "± " + notes.tolerance_text(q))
        st.markdown(message(q.explanation))
        lessons.draw_chart(q)  # the step's simulation, where it has one
        path, query = q.explore
        target = page_by_url(path)
        st.page_link(target.path, icon=":material/explore:", query_params=query or None,
                     label=_("Explore this: the same setting on {page}").format(page=_(target.title)))

    # ------------------------------------------------------------ moving on
    back, nxt = lessons.neighbours(q.lesson, q.step)
    with st.container(horizontal=True, gap="small", key="lesson-nav"):
        st.button(_("Back"), icon=":material/arrow_back:", disabled=back is None, key="back",
                  on_click=lessons.go, args=back or (q.lesson, q.step))
        st.button(_("New numbers"), icon=":material/casino:", key="new_numbers",
                  on_click=lessons.new_variant, args=(q.variant,),
                  help=_("A fresh variant of this step, drawn where the lesson's point still holds."))
        st.button(_("Next"), icon=":material/arrow_forward:", type="primary", disabled=nxt is None, key="next",
                  on_click=lessons.go, args=nxt or (q.lesson, q.step))
        st.button(_("Leave presenter mode") if present else _("Presenter mode"), icon=":material/co_present:",
                  on_click=lessons.set_presenter, args=(not present,), key="present_switch",
                  help=_("One step per screen in large type, without the sidebar; the answer stays hidden "
                         "until you reveal it. The link carries it as present=1."))
if not present:
    st.markdown(_(notes.INTRO))  # how the page works, under the step (issue 20: the step first)
st.caption(_("This variant's link: `{link}`").format(link=lessons.share_link(q, present)))

# ------------------------------------------------------------ progress
done = lessons.records()
st.caption(notes.progress_line(done, q.lesson))
with st.expander(_("Your progress and answers"), icon=":material/checklist:", expanded=False):
    st.markdown("\n".join("- " + _("**{lesson}**: {done} of {steps} steps done, {right} right").format(
        lesson=label, done=n_done, steps=n_steps, right=n_right) for label, n_done, n_right, n_steps in
        notes.progress_rows(done)))
    frame = notes.answers_frame(done.values())
    st.download_button(_("Download my answers (CSV)"), frame.to_csv(index=False).encode("utf-8"),
                       file_name=_("my-answers.csv"), mime="text/csv", icon=":material/download:",
                       disabled=frame.empty, key="download_answers")
