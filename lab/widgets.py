"""Small composite widgets shared by the pages: the opening, sample sizes, the seed, preset buttons.

* :func:`page_opening` – a page's first lines: the legacy-mode hand-over, the title, the question;
* :func:`count_slider` – a sample size on 1–2–5 steps (10, 20, 50, …), bound to the URL;
* :func:`seed_picker` – the seed field, one definition so ``?seed=`` carries between pages;
* :func:`preset_bar` – a row of buttons that set q and p, the active one highlighted;
* :func:`lambda_slider` – λ of kλ, with a button that sets λ = λ* where λ* exists.

The distribution picker is :mod:`lab.picker`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from i18n import N_, _
from kl_core.estimation.distributions import parse
from kl_core.estimation.presets import PRESETS, Preset
from lab import state
from lab.format import lam_text
from lab.grids import one_two_five
from lab.navigation import leave_legacy_wrapper
from lab.notation import policy_mapping

__all__ = ["LAMBDA_STAR_HELP", "active_preset", "count_slider", "lambda_slider", "page_opening",
           "preset_bar", "seed_picker"]

#: The help of the "Set λ = λ*" button (λ* minimises Var(−log r + λ(r − 1)) over λ).
LAMBDA_STAR_HELP = N_(
    "λ*, the λ of least variance, = Cov(log r, r)/Var(r) = (KL[p‖q] + KL[q‖p])/χ²(p‖q), from "
    "kl_core.estimation.exact.lambda_star."
)


def page_opening(title: str, intro: str, *, mapping: str | None = None, more: str = "") -> DeltaGenerator:
    """A page's first lines: the hand-over from Streamlit's legacy ``pages/`` mode, the title
    and the opening paragraph (the question the page answers); it returns the empty
    container under them, where the page draws its answer once the controls below it
    have been read (the point first, issue 20).

    The hand-over (:func:`lab.navigation.leave_legacy_wrapper`) must come before anything
    is drawn, so a page calls this first.  ``title`` and ``intro`` are shown as given
    (translated by the caller: ``page_opening(_("Bregman gap"), _("Why is k3 …"))``).
    An RL page passes ``mapping`` (a kind of :func:`lab.notation.policy_mapping`): the one
    sentence that maps its policies to q and p is shown under the intro, followed by
    ``more`` (translated) if given.  (The Gradients page draws its own in the returned
    container once its sampler is read: :func:`lab.notes.gradients.opening_caption`.)
    """
    leave_legacy_wrapper()
    st.title(title)
    st.markdown(intro)
    if mapping is not None:
        st.caption(" ".join(filter(None, (policy_mapping(mapping), more))))
    return st.container()


def _whole_number(lo: int, hi: int) -> Callable[[str], int | None]:
    def read(text: str) -> int | None:
        try:
            x = float(text)
        except ValueError:
            return None
        return int(x) if x.is_integer() and lo <= x <= hi else None

    return read


def count_slider(
    label: str,
    key: str,
    *,
    value: int,
    hi: int,
    lo: int = 10,
    accept_from: int | None = None,
    help: str | None = None,
) -> int:
    """A sample size on 1–2–5 steps from ``lo`` to ``hi``, bound to ``?key=``.

    ``label`` and ``help`` are shown as given (translated by the caller).  A link's whole number off the steps but within ``[accept_from, hi]``
    (``accept_from`` defaults to ``lo``; older pages allowed smaller values) is
    kept exactly, as one more step.
    """
    first = lo if accept_from is None else accept_from
    return int(
        state.select_slider(
            label,
            key,
            one_two_five(lo, hi),
            value=value,
            off_grid=_whole_number(first, hi),
            allowed=count_allowed(lo, hi, first),
            help=help,
        )
    )


def count_allowed(lo: int, hi: int, first: int) -> str:
    """What a link's sample size may be: the slider's steps below ``first``, then any whole number from ``first``
    to ``hi`` ("10, 20, 50 or a whole number from 100 to 1,000,000")."""
    whole = state.allowed_range(first, hi, whole=True)
    below = [v for v in one_two_five(lo, hi) if v < first]
    if not below:
        return whole
    # TRANSLATORS: a link's allowed sample sizes: "10, 20, 50 or a whole number from 100 to 1,000,000"
    return _("{steps} or {whole}").format(steps=", ".join(f"{v:,}" for v in below), whole=whole)


def seed_picker() -> int:
    """The seed field, ``?seed=``: one definition, so the seed carries from page to page."""
    return int(
        state.number(
            _("Seed"),
            "seed",
            min_value=0,
            max_value=2**31 - 1,
            value=0,
            step=1,
            help=_("Seed of numpy's default_rng: the same seed gives the same draws, on every machine."),
        )
    )


def _shown_spec(key: str, default: str) -> str | None:
    """The spec the field ``key`` will show on this run, normalised (``None`` if it does not parse).

    Read before the field is drawn, so that preset buttons can sit above the
    pickers and stay usable while a field holds an invalid spec.
    """
    raw = st.session_state.get(key, st.query_params.get(key, default))
    try:
        return parse(raw).spec
    except ValueError:
        return None


def active_preset(q_spec: str, p_spec: str) -> Preset | None:
    """The preset whose q and p are exactly ``q_spec`` and ``p_spec``, if any.

    None while the q or p field holds a spec that can't be read: the specs
    passed are then the last ones that worked, not what the user typed.
    """
    if any(st.session_state.get(f"{key}.unreadable") for key in ("q", "p")):
        return None
    return next((s for s in PRESETS.values() if (s.q_spec, s.p_spec) == (q_spec, p_spec)), None)


def preset_bar(buttons: Mapping[str, str], q_default: str, p_default: str) -> None:
    """One button per preset (``{preset key: button text}``) that sets ``?q=`` and ``?p=``.

    The preset that q and p currently equal is drawn as the primary button.
    Button texts are shown as given (translated by the caller); each button's
    tooltip gives the preset's title and blurb, translated.
    """
    shown = (_shown_spec("q", q_default), _shown_spec("p", p_default))
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        st.markdown(_("**Presets:**"), width="content")
        for key, text in buttons.items():
            preset = PRESETS[key]
            st.button(
                text,
                key=f"preset_{key}",
                help=_("{title}: q = {q}, p = {p}. {blurb}").format(
                    title=_(preset.title), q=preset.q.name, p=preset.p.name, blurb=_(preset.blurb)
                ),
                type="primary" if shown == (preset.q_spec, preset.p_spec) else "secondary",
                on_click=state.set_values,
                kwargs={"q": preset.q_spec, "p": preset.p_spec},
            )


def lambda_slider(star, lam_range: tuple[float, float], *, why_not: str | None) -> float:
    """λ of kλ = −log r + λ(r − 1) (``?lam=``), and a button that sets it to ``star.value``.

    ``star`` is :func:`lab.cache.lambda_star`'s result; ``why_not`` says why
    there is no button (λ* undefined or off the slider) and is shown instead.
    """
    lam = state.slider(
        _("λ of kλ = −log r + λ(r − 1)"), "lam", min_value=lam_range[0],
        max_value=lam_range[1], value=0.5, step=0.05, format="%.3f",
        help=_("λ = 0 gives k1, λ = 1 gives k3; every λ is unbiased."),
    )
    if why_not is None:
        st.button(
            _("Set λ = λ* = {lam}").format(lam=lam_text(star.value)), key="lam_star",
            type="tertiary", icon=":material/target:", on_click=state.set_values,
            kwargs={"lam": star.value},
            help=_(LAMBDA_STAR_HELP),
        )
    else:
        st.caption(why_not)
    return lam
