"""The distribution picker: a family menu and a slider per parameter, over the spec string.

A distribution is picked with a family menu and one slider per parameter
(:func:`distribution_picker`).  The one value that lives in the URL is the
spec string, the same string ``Distribution.spec`` writes and
``kl_core.estimation.distributions.parse`` reads (``normal(0.1,1)``, ``laplace(0,1)``,
``t(3,0,1)``, ``mixture(0.5:-1:1,0.5:1:1)``, ``categorical(0,1,2)``), so the
URL carries the whole distribution compactly: ``?q=normal(0,1)&p=normal(1,1)``.

The spec sits in an "advanced" text field under the sliders.  The family menu
and the sliders are not in the URL: they are read from the spec on every run
(:mod:`lab.spec_params`), and moving one writes a new spec into the field from
its callback (:func:`lab.state.set_values`).  So slider, typed spec and URL
always agree, and a spec typed by hand re-seeds the sliders.

Labels and messages are in the run's language; the spec string, the URL
value, is the same in every language.  An unreadable spec or one outside the
practical range is shown with the core's reason, translated
(:func:`i18n.message`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd
import streamlit as st

from i18n import N_, _, message
from kl_core.estimation.distributions import (
    Categorical,
    Distribution,
    Gaussian,
    parse,
    practical_issue,
)
from kl_core.estimation.families import FAMILIES as REGISTRY
from lab import spec_params, state
from lab.spec_params import FAMILIES, VOCABULARIES
from lab.ui import fail

__all__ = ["SPEC_HELP", "distribution_pair", "distribution_picker", "spec_help", "wait_for_specs"]

#: The spec field's help: this head, then one line per family of the registry (its ``help``).
SPEC_HELP = N_("Type a distribution as `family(parameters)`:")


def spec_help() -> str:
    """The spec grammar in the run's language: :data:`SPEC_HELP`, then each family's help line."""
    lines = "\n".join(f"- {_(family.help)}" for family in REGISTRY.values())
    return f"{_(SPEC_HELP)}\n\n{lines}"
RANGE_NOTE = N_(
    "The lab keeps scales within [1e-6, 1e6], locations within ±1e6, Student t's df ≥ 0.1 "
    "and logits within ±1e4: beyond that, double precision can no longer tell the two "
    "distributions apart reliably."
)
VOCABULARY_LABELS = {"peaked": N_("Rare token (8 tokens)"), "logit": N_("Mild drift (5 tokens)")}
OWN_VOCABULARY = N_("{k} tokens, as typed")


def _g(x: float) -> str:
    return f"{x:g}"


def _current(key: str) -> Distribution | None:
    """The distribution in the spec field ``key`` (its value in session state), or None."""
    try:
        return parse(st.session_state.get(key, ""))
    except ValueError:
        return None


def _usable(key: str) -> Distribution | None:
    """The spec field's distribution, or while it is unreadable the one the page uses instead."""
    return _current(key) or _current(f"{key}.good")


def _match_partner(new: Distribution, partner: str | None, *, drifted: bool) -> dict[str, str]:
    """A new spec for the other picker if it could no longer be compared with ``new``.

    q and p must both be continuous or both categorical with the same tokens;
    a change of family or vocabulary on one side carries over to the other.
    """
    other = _current(partner) if partner else None
    if other is None:
        return {}
    if new.discrete and (not other.discrete or other.k != new.k):
        key = spec_params.vocabulary_of(new)
        if key is None:
            return {}
        return {partner: spec_params.vocabulary(key, drifted=not drifted).spec}
    if not new.discrete and other.discrete:
        return {partner: spec_params.switch_family(other, "normal", drifted=not drifted).spec}
    return {}


def _set_specs(values: dict[str, str]) -> None:
    """Write new specs after a change of family or vocabulary; token menus start afresh."""
    for key in values:
        st.session_state.pop(f"{key}.token", None)
    state.set_values(**values)


def _on_family(key: str, partner: str | None, drifted: bool) -> None:
    family = st.session_state[f"{key}.family"]
    if family is None:
        return
    # From an unreadable spec, start over from the one in use (else N(0, 1); p: N(0.5, 1)).
    cur = _usable(key) or Gaussian(0.5 if drifted else 0.0, 1.0)
    new = spec_params.switch_family(cur, family, drifted=drifted)
    _set_specs({key: new.spec, **_match_partner(new, partner, drifted=drifted)})


def _on_vocabulary(key: str, partner: str | None, drifted: bool) -> None:
    vocab = st.session_state[f"{key}.vocab"]
    if vocab not in VOCABULARIES:
        return
    new = spec_params.vocabulary(vocab, drifted=drifted)
    _set_specs({key: new.spec, **_match_partner(new, partner, drifted=drifted)})


def _on_knob(key: str, knob_id: str) -> None:
    cur = _usable(key)  # a slider moved under an unreadable spec repairs it
    if cur is not None:
        new = spec_params.with_knob(cur, knob_id, st.session_state[f"{key}.{knob_id}"])
        state.set_values(**{key: new.spec})


def _on_table(key: str, editor: str) -> None:
    cur = _current(key)
    edited = st.session_state[editor].get("edited_rows", {})
    edits = {int(row): cells["logit"] for row, cells in edited.items() if "logit" in cells}
    if cur is not None and cur.discrete and edits:
        state.set_values(**{key: spec_params.with_logits(cur, edits).spec})


def _show(widget_key: str, value: Any) -> None:
    """Make the derived widget ``widget_key`` show ``value`` (the spec decides).

    Written when it differs: a write from code is echoed to the browser, and an
    echo of the value a slider is being dragged from would pull the thumb back
    mid-drag.  Written again, unchanged, while the browser has not reported the
    widget: a value written from code reaches the browser only with the run that
    wrote it, and a widget the browser mounts only in a later run (a slow first
    draw, then a click that reruns the page) was drawn at its minimum, while the
    numbers kept the link's value.
    """
    if (widget_key not in st.session_state or st.session_state[widget_key] != value
            or not state.browser_reported(widget_key)):
        st.session_state[widget_key] = value


def _knob_widget(key: str, knob: spec_params.Knob) -> None:
    wkey = f"{key}.{knob.id}"
    _show(wkey, knob.value)
    if knob.log:
        st.select_slider(knob.label, knob.steps, format_func=_g, key=wkey,
                         on_change=_on_knob, args=(key, knob.id))
    else:
        st.slider(knob.label, min_value=knob.lo, max_value=knob.hi, step=knob.step,
                  format="%g", key=wkey, on_change=_on_knob, args=(key, knob.id))


def _categorical_widgets(key: str, d: Categorical, partner: str | None, drifted: bool) -> None:
    vocab = spec_params.vocabulary_of(d)
    labels = {k: _(v) for k, v in VOCABULARY_LABELS.items()}
    labels["own"] = _(OWN_VOCABULARY).format(k=d.k)
    _show(f"{key}.vocab", vocab or "own")
    state.follows_language(f"{key}.vocab")
    st.selectbox(
        _("Vocabulary"),
        [*VOCABULARIES, *(["own"] if vocab is None else [])],
        format_func=labels.get,
        key=f"{key}.vocab",
        on_change=_on_vocabulary,
        args=(key, partner, drifted),
        help=_(
            "Rare token: token 7 is all but impossible (log-prob −22); raise its logit to make it "
            "likely, as fine-tuning can. Mild drift: 5 tokens, the last ones gaining mass. Both are "
            "the start of the lab's drift paths (kl_core.libraries.clamps.CLAMP_PATHS); then move any token's "
            "logit, or type one in the table."
        ),
    )
    token_key = f"{key}.token"
    token = st.session_state.get(token_key)
    _show(token_key, token if token in range(d.k) else spec_params.moving_token(d))
    c_token, c_logit = st.columns([1, 3], gap="small", vertical_alignment="bottom")
    with c_token:
        token = st.selectbox(_("Token"), range(d.k), key=token_key)
    with c_logit:
        _knob_widget(key, spec_params.logit_knob(d, token))
    digest = hashlib.blake2s(d.spec.encode(), digest_size=6).hexdigest()
    editor = f"{key}.logits.{digest}"  # a new spec gives a fresh table
    # Column ids stay as they are (the edit callback reads "logit"); their labels are translated.
    st.data_editor(
        pd.DataFrame({"token": range(d.k), "logit": d.logits, "probability": d.probs}),  # i18n: ok
        key=editor,
        hide_index=True,
        num_rows="fixed",
        disabled=["token", "probability"],
        on_change=_on_table,
        args=(key, editor),
        column_config={
            "token": st.column_config.NumberColumn(_("token"), width="small"),
            "logit": st.column_config.NumberColumn(_("logit"), format="%g", required=True,
                                                   help=_("Click to type a logit.")),
            "probability": st.column_config.NumberColumn(_("probability"), format="%.3g"),
        },
    )


def distribution_picker(
    label: str,
    key: str,
    default_spec: str,
    *,
    partner: str | None = None,
    drifted: bool = False,
    help: str | None = None,
) -> Distribution:
    """A family menu and one slider per parameter, over the spec field bound to ``?key=``.

    Returns the parsed distribution.  On a spec that ``parse`` rejects, or one
    outside :func:`kl_core.estimation.distributions.practical_issue`'s range, shows the
    reason at the field and returns the last spec that worked in this session
    (else ``default_spec``), which the family menu and sliders start from: the
    page goes on drawing its other controls (N, R, seed), and stops where the
    results begin with :func:`wait_for_specs`.

    Parameters
    ----------
    label : str
        The picker's heading, e.g. ``"q — the sampler"``, shown as given
        (translated by the caller).
    key : str
        URL key of the spec, e.g. ``"q"``; the sliders' session keys start with it.
    default_spec : str
        The spec shown when the URL has none; must parse.
    partner : str, optional
        URL key of the other picker of a pair: a change of family or vocabulary
        that would make the two incomparable changes it too.
    drifted : bool
        True for the target p: a new categorical starts a step along its path.
    help : str, optional
        Tooltip of the spec field; defaults to the spec grammar (:func:`spec_help`, translated).
    """
    st.markdown("**{label}**".format(label=label))
    sliders = st.container()
    shown = st.container()
    with st.expander(_("Type a spec (advanced)"), icon=":material/edit:"):
        spec = state.text(
            _("Spec of {key}, as in the link").format(key=key), key, value=default_spec,
            help=help or spec_help(),
        )
    typed, problem = _read_spec(spec)
    st.session_state[f"{key}.unreadable"] = problem is not None  # read by wait_for_specs()
    if problem is None:
        dist = typed
        st.session_state[f"{key}.good"] = dist.spec
    else:  # say what is wrong at the field, and go on with the last spec that worked
        dist = _current(f"{key}.good") or parse(default_spec)
    shown_dist = typed or dist  # the sliders show an out-of-range spec as it is, to move back from
    family_key = f"{key}.family"
    _show(family_key, spec_params.family_of(shown_dist))
    state.follows_language(family_key)
    with sliders:
        st.selectbox(
            _("Family"),
            list(FAMILIES),
            format_func=lambda family: _(FAMILIES[family]),
            key=family_key,
            placeholder=_("Choose a family to start again"),
            on_change=_on_family,
            args=(key, partner, drifted),
        )
        if shown_dist.discrete:
            _categorical_widgets(key, shown_dist, partner, drifted)
        for knob in spec_params.knobs(shown_dist):
            _knob_widget(key, knob)
    with shown:
        if problem is not None:
            st.error(problem, icon=":material/error:")
            if typed is None:
                st.caption(_(
                    "Fix it under “Type a spec (advanced)”, or move a slider: the sliders start from "
                    "`{spec}`, the last spec that worked."
                ).format(spec=dist.spec))
        elif dist.discrete:  # the table above already lists the probabilities
            st.caption(_("Written `{spec}` in the link.").format(spec=dist.spec))
        else:
            st.caption(_("= {name}, written `{spec}` in the link").format(name=dist.name, spec=dist.spec))
    return dist


def _read_spec(spec: str) -> tuple[Distribution | None, str | None]:
    """The typed spec's distribution (None if it can't be read) and what is wrong with it, if anything.

    Wrong: ``parse`` refuses it (the core names the mistake: a missing
    bracket, a count of numbers, σ ≤ 0, an unknown family), or it is outside
    :func:`kl_core.estimation.distributions.practical_issue`'s range (then the
    distribution is returned too, for the sliders).  The text is in the run's language.
    """
    try:
        dist = parse(spec)
    except ValueError as exc:
        return None, _("**This spec can't be read.** {why}").format(why=message(exc))
    issue = practical_issue(dist)
    if issue:
        return dist, _("**This spec is out of range:** {issue}. {note}").format(
            issue=message(issue), note=_(RANGE_NOTE))
    return dist, None


def distribution_pair(
    q_default: str,
    p_default: str,
    *,
    q_label: str = N_("q — the sampler"),
    p_label: str = N_("p — the target"),
    q_key: str = "q",
    p_key: str = "p",
) -> tuple[Distribution, Distribution]:
    """Two pickers side by side; stops with a clear error if q and p cannot be compared.

    The labels are translated here (``_(q_label)``): pass English source strings
    marked with ``N_``, or text already translated.
    """
    left, right = st.columns(2, gap="medium")
    with left:
        q = distribution_picker(_(q_label), q_key, q_default, partner=p_key)
    with right:
        p = distribution_picker(_(p_label), p_key, p_default, partner=q_key, drifted=True)
    if q.discrete != p.discrete:
        fail(_("q and p must both be continuous or both be categorical."))
    if q.discrete and getattr(q, "k", None) != getattr(p, "k", None):
        fail(
            _("q has {kq} categories but p has {kp}; give both the same number of logits.").format(
                kq=q.k, kp=p.k
            )
        )
    return q, p


def wait_for_specs(*keys: str) -> None:
    """Stop the run here, with a note, if the spec field of any of ``keys`` is unreadable.

    A page calls it after its controls and before its results
    (``wait_for_specs("q", "p")``): an unreadable spec leaves the page's other
    controls on screen, with the mistake named at the field, and only the
    results wait for a spec that can be read.
    """
    bad = [key for key in keys or ("q", "p") if st.session_state.get(f"{key}.unreadable")]
    if bad:
        st.info(
            _("The results need a distribution that can be read: fix the spec of {keys} above.").format(
                keys=", ".join(bad)),
            icon=":material/pending:",
        )
        st.stop()
