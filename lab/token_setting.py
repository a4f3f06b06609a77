"""The Gradients page's setting: a small vocabulary, π_θ's drift (or its logits), the sampler.

:func:`token_setting` draws the widgets, all bound to the URL (``?k=``,
``?t=``, ``?smp=``, ``?told=``, ``?logits=``, ``?rew=``), and returns the
:class:`lab.notes.gradients.Setting` they describe:

* the vocabulary size K; π_ref is uniform over it;
* the drift t of π_θ = softmax(t·v) along the toy direction
  (:func:`kl_core.gradients.demo.demo_logits`), unless π_θ's logits are set by hand;
* on-policy tokens, or tokens from an older π_old with its own drift;
* an expander with π_θ's logits and the reward R as text (the link's form)
  and as an editable token table; editing a cell writes the text fields.

Changing K cuts or fills the hand-set vectors so they stay usable.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from i18n import N_, _
from kl_core.gradients import demo
from lab import state, ui
from lab.notes import gradients as notes

__all__ = ["K_MAX", "token_setting"]

#: The sampler's options, translated where shown (a link names them in English in both languages).
SAMPLERS = {"on": N_("on-policy"), "old": N_("older policy")}
#: Most tokens the page offers: the gradient bars and token colours stay readable.
K_MAX = 10


def _on_tokens() -> None:
    """A new vocabulary size: hand-set logits and rewards follow it."""
    k = st.session_state["k"]
    state.set_values(
        logits=notes.resize_values(st.session_state.get("logits", ""), k, demo.demo_logits(k, 0.0)),
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


def token_setting() -> notes.Setting:
    """The setting widgets, in a row of three columns and an expander; warnings for unusable hand-set values."""
    c_k, c_t, c_s = st.columns([1, 1.4, 1.4], gap="medium")
    with c_k:
        k = state.slider(_("Tokens in the vocabulary"), "k", min_value=2, max_value=K_MAX,
                         value=demo.DEMO_TOKENS, step=1, on_change=_on_tokens,
                         help=_(r"$\pi_\mathrm{ref}$ is uniform over the tokens; $\pi_\theta$ moves away from it."))
    by_hand = st.expander(_(r"$\pi_\theta$'s logits and the reward, token by token"), icon=":material/edit:")
    with by_hand:
        logits_text = state.text(_(r"$\pi_\theta$'s logits, comma-separated (empty: the drift slider sets them)"),
                                 "logits", value="")
        reward_text = state.text(_("Reward R per token, comma-separated (empty: the default)"),
                                 "rew", value="")
    with c_t:
        drift = state.slider(
            _(r"Drift $t$: $\pi_\theta = \mathrm{softmax}(t\,v)$ moves away from $\pi_\mathrm{ref}$ along $v$"), "t", min_value=-3.0,
            max_value=3.0, value=1.0, step=0.05, format="%.2f", disabled=bool(logits_text.strip()),
            help=_(r"$v = (1, 0, -1, 0.5, 0, 0)$, repeated for more tokens. At $t = 0$, $\pi_\theta = \pi_\mathrm{ref}$."),
        )
        if logits_text.strip():
            st.caption(_(r"$\pi_\theta$'s logits are set by hand in the box below; empty its field to "
                         "use the slider again."))
    with c_s:
        sampler = state.segmented(
            _(r"Tokens drawn from $\pi_\theta$ (on-policy) or an older $\pi_\mathrm{old}$"), "smp", ["on", "old"], value="on",
            format_func=lambda k: _(SAMPLERS[k]),
            help=_("A later PPO epoch or mini-batch reuses tokens drawn by the policy before the update."),
        )
        old_drift = state.slider(_(r"$\pi_\mathrm{old}$'s drift $t$ along the same $v$"), "told", min_value=-3.0,
                                 max_value=3.0, value=0.5, step=0.05, format="%.2f",
                                 disabled=sampler == "on")
    s, problems = notes.setting(k, drift, logits_text, sampler == "on", old_drift, reward_text)
    with by_hand:
        _token_table(s)
    for problem in problems:
        ui.note(problem.kind, problem.text, problem.icon)
    return s
