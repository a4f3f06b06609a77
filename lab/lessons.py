"""The Lessons page's moving parts: the session's answers, presenter mode, navigation, charts.

The questions themselves (settings, exact answers, explanations) are
:mod:`kl_core.lessons.catalog`; the words about a guess are :mod:`lab.notes.lessons`.
Here: where the session keeps its answers, how ``?present=1`` turns the page
into one large step per screen, the Back / Next / New numbers callbacks, the
picture of a step's setting beside its question (:func:`setting_figure`, never
its answer), and the small simulation chart beside an exact value.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import altair as alt
import numpy as np
import streamlit as st

import i18n
from charts.control_variates import k_lambda_histogram
from charts.estimator_lab import batch_means_histogram
from charts.histograms import common_domain, per_sample_histogram
from charts.lessons import setting_chart, token_pair_chart
from i18n import _
from kl_core.estimation import sampling_distributions as sampling
from kl_core.estimation.distributions import parse
from kl_core.lessons import catalog as core
from kl_core.lessons.settings import token_pair
from lab import cache, state, ui
from lab.notes import lessons as notes

__all__ = [
    "PRESENTER_CSS",
    "Figure",
    "draw_chart",
    "draw_setting",
    "go",
    "neighbours",
    "new_variant",
    "presenter_mode",
    "question",
    "missing_guess",
    "records",
    "remember",
    "submit",
    "set_presenter",
    "setting_figure",
]

_RECORDS = "lessons.records"
_MISSING = "lessons.missing"
#: Query values that switch presenter mode on.
_ON = ("1", "true", "yes", "on")

#: One step per screen, large type, no sidebar: for a projector at 1280×800.
PRESENTER_CSS = (
    'section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],\n'  # i18n: ok (CSS)
    '[data-testid="stExpandSidebarButton"] { display: none !important; }\n'
    '[data-testid="stMainBlockContainer"] { max-width: 1200px; padding-top: 3.5rem; }\n'
    '[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p,\n'
    '[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] li { font-size: 1.4rem; line-height: 1.45; }\n'
    '[data-testid="stMainBlockContainer"] h2 { font-size: 2.1rem; }\n'
    '[data-testid="stMainBlockContainer"] .stButton button p,\n'
    '[data-testid="stMainBlockContainer"] [data-testid="stFormSubmitButton"] button p { font-size: 1.25rem; }\n'
    '[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"],\n'
    '[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p { font-size: 2.4rem; }\n'
)


@lru_cache(maxsize=512)
def question(lesson_no: int, step_no: int, variant: int) -> core.Question:
    """:func:`kl_core.lessons.catalog.question`, kept per process (a variant never changes)."""
    return core.question(lesson_no, step_no, variant)


def records() -> dict[tuple[int, int, int], notes.Record]:
    """This browser session's answers, by (lesson, step, variant)."""
    return st.session_state.setdefault(_RECORDS, {})


def remember(rec: notes.Record) -> None:
    """Keep ``rec``; a later answer to the same variant replaces it."""
    records()[(rec.lesson, rec.step, rec.variant)] = rec


def _key(q: core.Question) -> str:
    return "L{l}-S{s}-v{v}".format(l=q.lesson, s=q.step, v=q.variant)


def submit(q: core.Question, show: bool) -> None:
    """Form callback: record the typed or chosen guess (or "Show me") for ``q``.

    A numeric guess that is not a number is not recorded; the page then asks
    for one (:func:`missing_guess`).
    """
    key = _key(q)
    missing = st.session_state.setdefault(_MISSING, set())
    missing.discard(key)
    if show:
        if (q.lesson, q.step, q.variant) not in records():  # a guess already made stays the record
            remember(notes.check(q, None))
        return
    if q.kind == "numeric":
        guess = notes.parse_guess(st.session_state.get("typed-" + key, ""))
    else:
        guess = st.session_state.get("chosen-" + key)
    if guess is None:
        missing.add(key)
    else:
        remember(notes.check(q, guess))


def missing_guess(q: core.Question) -> bool:
    """True right after "Check" with nothing usable typed or chosen."""
    return _key(q) in st.session_state.get(_MISSING, set())


def share_link(q: core.Question, present: bool) -> str:
    """The link of this variant as shown on screen: its step, presenter mode, and the page's language."""
    return q.link() + ("&present=1" if present else "") + f"&lang={i18n.language()}"


def presenter_mode() -> bool:
    """True under ``?present=1``; then hide the sidebar and enlarge the type."""
    state.reads("present")
    on = st.query_params.get("present", "").lower() in _ON
    if on:
        st.html(f"<style>{PRESENTER_CSS}</style>")
    return on


def set_presenter(on: bool) -> None:
    """Button callback: switch presenter mode on or off (``?present=1``)."""
    if on:
        st.query_params["present"] = "1"
    else:
        st.query_params.pop("present", None)


def go(lesson_no: int, step_no: int) -> None:
    """Button callback: open step ``step_no`` of lesson ``lesson_no`` (same variant)."""
    state.set_values(lesson=lesson_no, step=step_no)


def new_variant(current: int) -> None:
    """Button callback: a fresh variant, other than ``current``."""
    choice = random.SystemRandom().randrange(1, core.MAX_VARIANT + 1)
    state.set_values(v=choice if choice != current else (choice % core.MAX_VARIANT) + 1)


def neighbours(lesson_no: int, step_no: int) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The steps before and after, across lessons (None at either end)."""
    steps = len(core.lesson(lesson_no).steps)
    back = (lesson_no, step_no - 1) if step_no > 1 else (
        (lesson_no - 1, len(core.lesson(lesson_no - 1).steps)) if lesson_no > 1 else None)
    nxt = (lesson_no, step_no + 1) if step_no < steps else (
        (lesson_no + 1, 1) if lesson_no < len(core.LESSONS) else None)
    return back, nxt


def _pair(q: core.Question):
    """The step's q and p as distributions, or None for a step without them (lessons 4–7's token steps)."""
    if not (isinstance(q.params.get("q"), str) and isinstance(q.params.get("p"), str)):
        return None
    return parse(q.params["q"]), parse(q.params["p"])


@dataclass(frozen=True)
class Figure:
    """A chart ready for :func:`lab.ui.chart`: the chart, its file name and its one-line caption."""

    chart: alt.TopLevelMixin
    name: str
    caption: str


def _densities(q: core.Question, qd, pd_) -> alt.TopLevelMixin:
    ends = np.array([qd.interval(0.998), pd_.interval(0.998)])
    x = np.linspace(ends[:, 0].min(), ends[:, 1].max(), 161)
    return setting_chart(x, qd.pdf(x), pd_.pdf(x), q_name=qd.name, p_name=pd_.name)


def setting_figure(q: core.Question) -> Figure | None:
    """The picture of the step's setting, drawn before any answer; None for a step without one.

    A step with a q and a p: their two density curves.  A step whose catalog
    entry names a token setting (``q.setting``, :mod:`kl_core.lessons.settings`):
    lesson 5's π_θ and π_ref, or lesson 6's token shares of the two chains, as
    bars.  Neither shows the step's answer (``tests/lab/test_lessons.py``
    checks every step and variant).
    """
    name = _("lesson-{lesson}-{step}-setting").format(lesson=q.lesson, step=q.step)
    pair = _pair(q)
    if pair is not None:
        return Figure(_densities(q, *pair), name,
                      _("x is drawn from q (solid); p (dashed) is the distribution compared with it."))
    if not q.setting:
        return None
    tokens = token_pair(q.setting, q.params)
    if q.setting == "policies":
        chart = token_pair_chart(tokens.sampled, tokens.reference, y_title=_("probability"),
                                 names=(_("π_θ (tokens are drawn from it)"), _("π_ref (uniform)")))
        caption = _(r"Look at which tokens $\pi_\theta$ (filled, at $s$ = {t:g}) favours over the uniform "
                    r"$\pi_\mathrm{{ref}}$ (dashed).").format(t=q.params["t"])
        return Figure(chart, name, caption)
    chart = token_pair_chart(tokens.sampled, tokens.reference, y_title=_("share of the T tokens"),
                             names=(_("policy (sequences come from it)"), _("reference chain")))
    caption = _("Each token's share of a sequence of T = {T} tokens: the tilt δ = {drift:g} moves the policy "
                "(filled) towards the low-numbered tokens, away from the reference chain (dashed).").format(
        T=q.params["T"], drift=q.params["drift"])
    return Figure(chart, name, caption)


def draw_setting(q: core.Question) -> bool:
    """Draw :func:`setting_figure` (it shows no answer); False if the step has none."""
    fig = setting_figure(q)
    if fig is None:
        return False
    ui.chart(fig.chart, name=fig.name, caption=fig.caption)
    return True


def draw_chart(q: core.Question) -> None:
    """The step's simulation beside its exact value, if it has one (``q.chart``)."""
    if not q.chart:
        return
    qs, ps = q.params["q"], q.params["p"]
    kl = cache.estimator_moments("k1", qs, ps).mean
    if q.chart == "mean_k1":
        n = int(q.params["n"])
        m = cache.estimator_moments("k1", qs, ps)
        s = cache.simulate(qs, ps, n, repeats=2000, seed=q.variant, keys=("k1",))["k1"]
        ui.chart(batch_means_histogram(s.batch_means, "k1", n=n, approx=sampling.batch_mean_normal(m.mean, m.var, n),
                                       true_value=kl, height=280),
                 name=_("lesson-means"),
                 caption=_("2,000 simulated means of N = {n} values of k1: {share:.1%} of them are negative, "
                           "against {exact:.1%} exactly.").format(
                     n=q.params["n"], share=float((s.batch_means < 0).mean()), exact=float(q.answer)))
        return
    if q.chart == "k_lambda":
        lam = float(q.params["lam"])
        sim = cache.simulate(qs, ps, 20_000, seed=q.variant, lam=lam, keys=("k_lambda",))
        s = sim["k_lambda"]
        ui.chart(k_lambda_histogram(s.samples, lam, true_value=kl, mean=s.mean, neg_fraction=s.neg_fraction),
                 name=_("lesson-k-lambda"),
                 caption=_("20,000 simulated values of kλ at λ = {lam:.3f}: {share:.1%} negative, against "
                           "{exact:.1%} exactly.").format(lam=lam, share=s.neg_fraction, exact=float(q.answer)))
        return
    keys = ("k1", "k3") if q.chart == "k1_k3" else ("k1",)
    sim = cache.simulate(qs, ps, 20_000, seed=q.variant, keys=keys)
    domain = common_domain([sim[k].samples for k in keys], include=(0.0, kl))
    for key, panel in ui.grid(keys, per_row=2, key="lesson-chart"):
        s = sim[key]
        with panel:
            sd = cache.estimator_moments(key, qs, ps).std
            ui.chart(per_sample_histogram(s.samples, key, true_value=kl, mean=s.mean, neg_fraction=s.neg_fraction,
                                          domain=domain, height=260),
                     name=_("lesson-{key}").format(key=key),
                     caption=_("20,000 simulated values of {key}: {share:.1%} negative, SD {sd_mc} (exact SD "
                               "{sd}).").format(key=key, share=s.neg_fraction, sd_mc=f"{s.std:.4g}",
                                                sd=f"{sd:.4g}"))
