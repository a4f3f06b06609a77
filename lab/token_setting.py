"""The Gradients page's setting: a small vocabulary, π_ref, π_θ's drift (or its logits), the sampler.

:func:`token_setting` draws the widgets, all bound to the URL (``?k=``,
``?piref=``, ``?t=``, ``?smp=``, ``?told=``, ``?logits=``, ``?rew=``), and returns the
:class:`lab.notes.gradients.Setting` they describe:

* the drift s of π_θ = softmax(ℓ_ref + s·v) from π_ref along the reference's
  direction (:func:`kl_core.gradients.demo.demo_logits`; the link key stays ``t``
  for old links), unless π_θ's logits are set by hand, with two preset buttons:
  "they disagree" (the defaults) and "here they agree" (a small drift);
* under "More settings": the vocabulary size K, π_ref (uneven, the default, or
  uniform, the lessons' setting), on-policy tokens or tokens from an older
  π_old with its own drift, and π_θ's logits and the reward R as text (the
  link's form) and as an editable token table; editing a cell writes the text fields.

Changing K cuts or fills the hand-set vectors so they stay usable.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from i18n import N_, _
from kl_core.gradients import demo
from lab import state, ui
from lab.notes import gradients as notes

__all__ = ["K_MAX", "REF_KEY", "token_setting"]

#: The sampler's options, translated where shown (a link names them in English in both languages).
SAMPLERS = {"on": N_("on-policy"), "old": N_("older policy")}
#: Most tokens the page offers: the gradient bars and token colours stay readable.
K_MAX = 10
#: The link key of π_ref's menu (``?piref=uniform``); not ``ref``, the Sequences page's text field.
REF_KEY = "piref"


def _on_tokens() -> None:
    """A new vocabulary size: hand-set logits and rewards follow it."""
    k = st.session_state["k"]
    ref = st.session_state.get(REF_KEY, notes.DEFAULT_REFERENCE)
    state.set_values(
        logits=notes.resize_values(st.session_state.get("logits", ""), k,
                                   demo.demo_logits(k, 0.0, reference=ref)),
        rew=notes.resize_values(st.session_state.get("rew", ""), k, demo.demo_reward(k)),
    )


def _on_table(s: notes.Setting, editor: str) -> None:
    edits = st.session_state[editor].get("edited_rows", {})
    if changed := notes.apply_edits(s, edits):
        state.set_values(**changed)


def _token_table(s: notes.Setting) -> None:
    frame = notes.token_frame(s)
    digest = hashlib.blake2s(repr(s).encode(), digest_size=6).hexdigest()
    editor = f"tokens.{digest}"  # a new setting gives a fresh table
    editable = {_("logit of π_θ"), _("reward R")}
    st.data_editor(
        frame, key=editor, hide_index=True, num_rows="fixed",
        disabled=[c for c in frame.columns if c not in editable],
        on_change=_on_table, args=(s, editor),
        column_config={c: st.column_config.NumberColumn(format="%.4f" if c not in editable else "%g")
                       for c in frame.columns[1:]},
    )
    st.caption(_("Click a logit or a reward to change it; the fields above hold the same numbers "
                 "and go into the link."))


def _presets(drift: float, by_hand: bool, on_policy: bool, reference: str, k: int) -> None:
    """Two buttons: "they disagree" (the defaults) and "here they agree" (a small drift), bound to the URL.

    With two tokens every gradient lies on one line, so the buttons name only the drift there.
    """
    collinear = k == 2
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        for key, text, value, extra in (
            ("disagree", _("s = {s:g}") if collinear else _("They disagree: s = {s:g}"),
             notes.DEFAULT_DRIFT, {REF_KEY: notes.DEFAULT_REFERENCE}),
            ("agree", _("s = {s:g}") if collinear else _("Here they agree: s = {s:g}"),
             notes.AGREE_DRIFT, {}),
        ):
            active = (drift == value and not by_hand and on_policy
                      and reference == extra.get(REF_KEY, reference))
            st.button(text.format(s=value), key=f"preset_{key}", on_click=state.set_values,
                      kwargs={"t": value, "logits": "", "smp": "on", **extra},
                      type="primary" if active else "secondary")


def token_setting() -> notes.Setting:
    """The drift slider and the presets; K, π_ref, the sampler and hand-set vectors under "More settings"."""
    top = st.container()
    more = st.expander(_(r"More settings: the vocabulary, $\pi_\mathrm{ref}$, older samples, logits by hand"),
                       icon=":material/tune:")
    with state.notes_below(), more:  # a link's unusable value is noted below the closed expander
        c_k, c_r = st.columns(2, gap="medium")
        with c_k:
            k = state.slider(_("Tokens in the vocabulary"), "k", min_value=2, max_value=K_MAX,
                             value=demo.DEMO_TOKENS, step=1, on_change=_on_tokens)
        with c_r:
            reference = state.segmented(
                _(r"$\pi_\mathrm{ref}$, the reference"), REF_KEY, notes.REFERENCES,
                value=notes.DEFAULT_REFERENCE,
                help=notes.reference_help(k))
        c_s, c_o = st.columns(2, gap="medium")
        with c_s:
            sampler = state.segmented(
                _(r"Tokens drawn from $\pi_\theta$ (on-policy) or an older $\pi_\mathrm{old}$"), "smp",
                SAMPLERS, value="on",
                help=_("A later PPO epoch or mini-batch reuses tokens drawn by the policy before the update."),
            )
        with c_o:
            old_drift = state.slider(_(r"$\pi_\mathrm{old}$'s drift along the same $v$"), "told",
                                     min_value=-3.0, max_value=3.0, value=0.5, step=0.05, format="%.2f",
                                     disabled=sampler == "on")
        st.markdown(_(r"**$\pi_\theta$'s logits and the reward, token by token**"))
        logits_text = state.text(_(r"$\pi_\theta$'s logits, comma-separated (empty: the drift slider sets them)"),
                                 "logits", value="")
        reward_text = state.text(_("Reward R per token, comma-separated (empty: the default)"),
                                 "rew", value="")
    with top:
        drift = state.slider(
            _(r"Drift $s$: how far $\pi_\theta$ has moved from $\pi_\mathrm{ref}$"), "t",
            min_value=-3.0, max_value=3.0, value=notes.DEFAULT_DRIFT, step=0.05, format="%.2f",
            disabled=bool(logits_text.strip()), help=notes.drift_help(reference, k),
        )
        if logits_text.strip():
            st.caption(_(r"$\pi_\theta$'s logits are set by hand under “More settings”; empty that field "
                         "to use the slider again."))
        _presets(drift, bool(logits_text.strip()), sampler == "on", reference, k)
    s, problems = notes.setting(k, drift, logits_text, sampler == "on", old_drift, reward_text, reference)
    with more:
        _token_table(s)
    for problem in problems:
        ui.note(problem.kind, problem.text, problem.icon)
    return s
