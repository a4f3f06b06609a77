"""What the "approx_kl in practice" page says: the four questions, the crosswalk, the clamps.

Pure functions of core results (no streamlit).  The checklist's numbers are
exact token sums from :func:`kl_core.libraries.clamps.token_expectations`; the crosswalk
rows and facts come from :data:`kl_core.libraries.crosswalk.CROSSWALK` entries.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from i18n import N_, _, message, ngettext
from kl_core.doctor.diagnosis import clamp_sides
from kl_core.estimation.distributions import Categorical
from kl_core.estimation.estimators import ESTIMATORS
from kl_core.estimation.paths import PATHS
from kl_core.libraries.clamps import (
    PEAKED,
    PEAKED_TOKEN,
    ClampPoint,
    TokenBreakdown,
    TokenExpectations,
)
from kl_core.libraries.crosswalk import CrosswalkEntry
from lab.format import number, probability_text, share
from lab.notation import audit_label
from lab.notes.gradients import gradients_link

__all__ = [
    "CHECKLIST_INTRO",
    "CHECKLIST_THETA",
    "CLAMP_CHART_CAPTION",
    "NO_GRADIENT",
    "PATH_HELP",
    "ChecklistItem",
    "QUESTION",
    "ROLES_LINE",
    "answer",
    "bias_delta",
    "caveat_note",
    "checked_in",
    "entry_heading",
    "checklist",
    "checklist_intro",
    "clamp_bands",
    "clamp_roles",
    "clamp_token_rows",
    "clamps_intro",
    "library_mean_help",
    "clamps_text",
    "crosswalk_frame",
    "crosswalk_intro",
    "demo_help",
    "entry_facts",
    "estimator_text",
    "hit_caption",
    "path_help",
    "typeset",
    "unbiased_text",
    "variables_text",
]

WRONG, RIGHT = ":red[:material/close:]", ":green[:material/check:]"
TANG_MUNOS = "Tang & Munos, [arXiv:2506.09477](https://arxiv.org/abs/2506.09477)"
CHECKLIST_INTRO = N_(
    r"Every number below is an exact sum over the {k} tokens of a small next-token distribution "
    r"(`kl_core.estimation.paths` path *logit*): $\pi_{{\mathrm{{old}}}} = \pi_{{\mathrm{{ref}}}}$ = **{old}**, "
    r"where the path starts, and $\pi_{{\mathrm{{new}}}} = \pi_\theta$ = **{new}**, the path at θ = {theta}. "
    r"In a PPO update the batch was drawn from $\pi_{{\mathrm{{old}}}}$; in an RLHF penalty the response "
    r"was drawn from the current policy $\pi_\theta$."
)
#: Where on the *logit* path the checklist's π_new sits (π_old is the path's start, its ``base``).
CHECKLIST_THETA = 1.0
#: The page's question (issue 20: the point first).
QUESTION = N_(
    "Your training log prints `approx_kl` (or `ppo_kl`, `kl_penalty`): does that number still "
    "measure the KL once the policy moves far from the reference?"
)
#: The RL page's one mapping of π_θ, π_ref onto the lab's q and p (lab notation, issue 20 §5);
#: Said after :func:`lab.notation.policy_mapping` (the sentence every RL page shares).
ROLES_LINE = N_(
    r"A PPO batch's tokens come from $\pi_\mathrm{old}$: its approx_kl compares $\pi_\theta$ with "
    r"$\pi_\mathrm{old}$, so there $q = \pi_\mathrm{old}$ and $p = \pi_\theta$. "
    "The tables call each row's q the **sampler** and its p the **other** policy."
)
PATH_HELP = N_(
    "Rare token: {k_rare} tokens, the policy learns to emit a token the anchor gives {p_rare}. "
    "Mild drift: {k_mild} tokens, mass moves from the likely tokens to the unlikely ones."
)
#: The clamp chart's caption: what each line is, and what a gap between them means.
CLAMP_CHART_CAPTION = N_(
    "Solid, the library's mean per token; thick dots, the same estimator without clamps; thin dashes, "
    "the exact KL (for k1 and k3 the dots sit round the dashes: without clamps they are unbiased). Where "
    "the solid line leaves the dots, the clamps bias it. The controls are below."
)

#: Plain-text policy names as the crosswalk's data writes them (π_θ, π_ref, π_old …),
#: and its KLs between two of them (KL[π_θ‖π_ref]).
_PI = r"π_(θ|\w+)"
_KL_PI = re.compile(rf"KL\[{_PI}‖{_PI}\]")
_PI_ALONE = re.compile(_PI)
#: Code spans and maths already typeset: left as they are.
_KEEP = re.compile(r"(`[^`]*`|\$[^$]*\$)")


def _pi_tex(name: str) -> str:
    return r"\pi_\theta" if name == "θ" else rf"\pi_{{\mathrm{{{name}}}}}"


def typeset(markdown: str) -> str:
    r"""``markdown`` with plain-text policy notation typeset: π_θ → $\pi_\theta$,
    KL[π_θ‖π_ref] → $\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]$ (code and maths untouched)."""
    parts = _KEEP.split(markdown)
    for i in range(0, len(parts), 2):  # the even parts are outside code and maths
        text = _KL_PI.sub(
            lambda m: rf"$\mathrm{{KL}}[{_pi_tex(m[1])}\|{_pi_tex(m[2])}]$", parts[i])
        parts[i] = _PI_ALONE.sub(lambda m: f"${_pi_tex(m[1])}$", text)
    return "".join(parts)


def path_help() -> str:
    """The drift-path picker's help: each path's vocabulary size, and how rare the rare token starts."""
    return _(PATH_HELP).format(k_rare=PEAKED.base.k, p_rare=f"{PEAKED.base.probs[PEAKED_TOKEN]:.2g}",
                               k_mild=PATHS["logit"].base.k)


def checklist_intro(old: Categorical, new: Categorical, theta: float = CHECKLIST_THETA) -> str:
    """The checklist's first paragraph: the two distributions every card sums over."""
    return _(CHECKLIST_INTRO).format(k=old.k, old=old.name, new=new.name, theta=f"{theta:g}")


@dataclass(frozen=True)
class ChecklistItem:
    """One of the four questions: the rule, a setting, the wrong and right formula, a remark."""

    question: str
    rule: str
    setting: str
    wrong: str
    right: str
    note: str = ""

    def markdown(self) -> str:
        """The card's body under its heading."""
        text = "*{setting}*  \n{wrong}  \n{right}".format(  # i18n: ok (layout)
            setting=self.setting, wrong=self.wrong, right=self.right
        )
        return text + ("  \n" + self.note if self.note else "")


def _n(x: float) -> str:
    return f"{x:+.4f}"


def _marked(mark: str, template: str, mean: float) -> str:
    """A checklist's wrong or right line: ``template`` with its ``{mark}`` and signed ``{mean}``."""
    return template.format(mark=mark, mean=_n(mean))


def checklist(ppo: TokenExpectations, rlhf: TokenExpectations) -> list[ChecklistItem]:
    """The four questions, each with a sign error worked out on the five-token example.

    ``ppo``: tokens from π_old compared with π_new; ``rlhf``: tokens from π_θ
    compared with π_ref (:func:`kl_core.libraries.clamps.token_expectations`).
    """
    return [
        ChecklistItem(
            _("1 · Whose samples?"),
            _(
                "Average over the policy that drew the tokens, and subtract the other policy from "
                "it: {k1}."
            ).format(k1=rf"$k_1 = \log\pi_{{{audit_label('sampler')}}} - \log\pi_{{{audit_label('other')}}}$"),
            _("RLHF penalty, tokens drawn from π_θ:"),
            _marked(WRONG, _("{mark} `ref_logprob - logprob` as a positive penalty: mean **{mean}**"),
                    rlhf.other_minus_sampler),
            _marked(RIGHT, _("{mark} `logprob - ref_logprob`: mean **{mean}** = KL[π_θ‖π_ref]"),
                    rlhf.sampler_minus_other),
        ),
        ChecklistItem(
            _("2 · Which direction?"),
            _("The KL is taken *from* the sampler: tokens of π_old estimate {kl}.").format(
                kl=r"$\mathrm{KL}[\pi_\mathrm{old}\|\pi_\mathrm{new}] = \mathbb{E}_\mathrm{old}"
                r"[\log\pi_\mathrm{old} - \log\pi_\mathrm{new}]$"),
            _("PPO batch, tokens drawn from π_old:"),
            _marked(WRONG, _("{mark} `new_logprob - old_logprob` as a positive KL[π_old‖π_new]: mean **{mean}**"),
                    ppo.other_minus_sampler),
            _marked(RIGHT, _("{mark} `old_logprob - new_logprob`: mean **{mean}** = KL[π_old‖π_new]"),
                    ppo.sampler_minus_other),
            _(
                "KL[π_new‖π_old] = {other:.4f} is the other direction, a different number "
                "(r log r − (r − 1) estimates it from the same tokens: {k3pq:.4f})."
            ).format(other=ppo.kl_other_sampler, k3pq=ppo.k3_pq),
        ),
        ChecklistItem(
            _("3 · Which ratio?"),
            _(
                "{r}, target over sampler (here {here}): only then is {zero}, the control variate "
                "inside k3."
            ).format(r=rf"$r = \pi_{{{audit_label('other')}}}/\pi_{{{audit_label('sampler')}}}$",
                     here=r"$\pi_\mathrm{new}/\pi_\mathrm{old}$",
                     zero=rf"$\mathbb{{E}}_{{{audit_label('sampler')}}}[r-1] = 0$"),
            _("PPO batch, k3 = (r − 1) − log r:"),
            _marked(WRONG, _("{mark} r = π_old/π_new: mean **{mean}** (χ² − KL, not a KL)"),
                    ppo.k3_flipped),
            _marked(RIGHT, _("{mark} r = π_new/π_old: mean **{mean}** = KL[π_old‖π_new]"), ppo.k3),
        ),
        ChecklistItem(
            _("4 · Which estimator?"),
            _(
                "k1, k2 and k3 differ in bias, spread and sign: compare a number only with one "
                "made by the same estimator."
            ),
            _("PPO batch, KL[π_old‖π_new] = {kl:.4f}:").format(kl=ppo.kl_sampler_other),
            _marked(WRONG, _("{mark} k2 read as the KL: mean **{mean}**"), ppo.k2),
            _marked(RIGHT, _("{mark} k3: mean **{mean}** = the KL, never negative"), ppo.k3),
            ngettext(
                "k1 also averages {mean:.4f}, but {n} of the {k} tokens gives a negative value, and a "
                "token drawn from π_old is that one with probability **{share}**.",
                "k1 also averages {mean:.4f}, but {n} of the {k} tokens give a negative value, and a "
                "token drawn from π_old is one of them with probability **{share}**.",
                ppo.k1_negative_tokens,
            ).format(mean=ppo.sampler_minus_other, n=ppo.k1_negative_tokens,
                     k=ppo.tokens, share=share(ppo.k1_negative_share)),
        ),
    ]


#: Column headers of the page's tables, by key (shown translated: :func:`header`).
HEADERS = {
    "library": N_("library"),
    "option": N_("option"),
    "acts on": N_("acts on"),
    "estimator": N_("estimator"),
    "estimates": N_("estimates"),
    "unbiased": N_("unbiased"),
    "clamps": N_("clamps"),
    "gradient": N_("gradient"),
    "set or shown as": N_("set or shown as"),  # i18n: ok (key)
    "samples from": N_("samples from"),
    "compared with": N_("compared with"),
    "library code": N_("library code"),
    "weight": N_("weight"),
    "logged as": N_("logged as"),
    "source": N_("source"),
    "verified in": N_("verified in"),
    "caveat": N_("caveat"),
    "token": N_("token"),
    "P under sampler": N_("P under sampler"),
    "P under other": N_("P under other"),
    "log r": "log r",
    "library value": N_("library value"),
    "clamped": N_("clamped"),
}
#: The crosswalk columns the page shows (the CSV has them all).
SHOWN_COLUMNS = ("library", "option", "acts on", "gradient", "estimator", "estimates", "unbiased",
                 "clamps")
#: What the crosswalk table shows in a cell with no value: the gradient link of a logged metric, which
#: has no gradient (the page passes it to ``st.dataframe(placeholder=…)``; Streamlit shows "None" otherwise).
NO_GRADIENT = "—"  # i18n: ok (a dash, no words)
#: Where a library puts the value (``CrosswalkEntry.acts_on``), in words.
ACTS_ON = {"loss": N_("loss"), "reward": N_("reward"), "metric": N_("metric")}


def header(key: str) -> str:
    """The column ``key`` of :data:`HEADERS` as the table shows it, in the run's language."""
    return _(HEADERS[key])


def no_clamp_header(estimator: str) -> str:
    """The token table's column of the estimator's raw value: ``k3, no clamp``."""
    return _("{k}, no clamp").format(k=estimator)


def _yes(flag: bool) -> str:
    return _("yes") if flag else _("no")


def _value_unbiased(e: CrosswalkEntry) -> bool | None:
    """Is the mean of the entry's value, clamps aside, the KL it estimates: True, False, or None for
    "only on-policy": a value about π_θ without importance weight on tokens that, after the first
    optimizer step on a batch, come from π_old (a ``current`` role, any term in the loss, or a reward the
    updated policy computes, ``grad_mode = "score_current"``: verl 0.9.1's distillation rewards take
    student_log_probs of π_θ on tokens the rollout policy sampled, verl/trainer/distillation/losses.py)."""
    if not e.unbiased:
        return False
    if (e.uses_current or e.acts_on == "loss" or e.grad_mode == "score_current") and not e.importance_weighted:
        return None
    return True


def unbiased_text(e: CrosswalkEntry) -> str:
    """The crosswalk table's "unbiased" cell: ``yes``, ``no``, ``exact`` or ``only on-policy``, with
    ``(clamps aside)`` where a clamp can bias a value that would otherwise be unbiased."""
    verdict = _value_unbiased(e)
    if verdict is False:
        return _("no")
    word = _("exact") if e.estimator == "full" else _("yes") if verdict else _("only on-policy")
    # TRANSLATORS: a cell of the crosswalk's "unbiased" column: "yes (clamps aside)"
    return _("{u} (clamps aside)").format(u=word) if e.clamped else word


def _logr_interval(lo: float, hi: float) -> str:
    """``log r ∈ [-20, 20]``, or one bound where the other end is open: ``log r ≤ 10``."""
    if math.isinf(lo) and not math.isinf(hi):
        return "log r ≤ {hi:g}".format(hi=hi)
    if math.isinf(hi) and not math.isinf(lo):
        return "log r ≥ {lo:g}".format(lo=lo)
    return "log r ∈ [{lo:g}, {hi:g}]".format(lo=lo, hi=hi)


def clamps_text(e: CrosswalkEntry) -> str:
    """An entry's clamps in words: ``log r ∈ [-20, 20]; value ∈ [-10, 10]``, ``log r ≤ 10`` or ``none``."""
    parts = []
    if e.logr_clamp is not None:
        parts.append(_logr_interval(*e.logr_clamp))
    if e.value_clamp is not None:
        parts.append(_("value ∈ [{lo:g}, {hi:g}]").format(lo=e.value_clamp[0], hi=e.value_clamp[1]))
    # TRANSLATORS: an option's clamps: none
    return _("; ").join(parts) or _("none")


def _option_names(entries: list[CrosswalkEntry]) -> str:
    """``TRL `full`, OpenRLHF `k1+unbiased_gradient` …``: options named as the crosswalk names them."""
    # TRANSLATORS: separates the options of a list such as "TRL `full`, OpenRLHF `k1`"
    return _(", ").join("{lib} `{opt}`".format(lib=e.library, opt=e.option)  # i18n: ok (names)
                        for e in entries)


def crosswalk_intro(entries: list[CrosswalkEntry]) -> str:
    """The crosswalk's first paragraph: what log r is in its rows, counted from the data.

    Most rows compare two log-prob columns on the sampled tokens, log r = log π_other − log π_sampler;
    the rows with a ``current`` role take log r against the policy being updated (the tokens come
    from π_old), and the exact ``full`` KL is not taken on the sampled tokens at all.
    """
    current = [e for e in entries if e.uses_current]
    full = [e for e in entries if e.estimator == "full"]
    plain = len(entries) - len(current) - len(full)
    logr = rf"$\log r = \log\pi_{{{audit_label('other')}}} - \log\pi_{{{audit_label('sampler')}}}$"
    parts = [_(
        "What each library computes for each KL option, as data "
        "(`kl_core.libraries.crosswalk.CROSSWALK`, read from the libraries' own source). In {n} of "
        "its {total} rows, {logr} on the sampled tokens."
    ).format(n=plain, total=len(entries), logr=logr)]
    if current:
        parts.append(_(
            "In {names}, whose value is about the policy being updated, π_θ, while the tokens were "
            "drawn from π_old, {logr} on those tokens."
        ).format(names=_option_names(current),
                 logr=rf"$\log r = \log\pi_{{{audit_label('other')}}} - \log\pi_\theta$"))
    if full:
        parts.append(_("{names} sums the exact KL over the whole vocabulary instead of taking "
                       "sampled tokens.").format(names=_option_names(full)))
    return typeset(" ".join(parts))


def estimator_text(e: CrosswalkEntry) -> str:
    """An entry's estimator for the table: ``k3``, ``k3 (+ k2 gradient)`` or the exact KL."""
    if e.estimator == "full":
        return _("exact (full vocabulary)")
    name = ESTIMATORS[e.estimator].name
    return _("{name} (+ k2 gradient)").format(name=name) if e.straight_through else name


def _plain(text: str) -> str:
    """A crosswalk sentence for a table cell, which shows no markdown: without code backticks."""
    return text.replace("`", "")


_SOURCE_REF = re.compile(r"(?<![\w`@/.-])(?:[A-Za-z0-9_.-]+/[A-Za-z0-9_./@-]*[A-Za-z0-9_]|[A-Za-z0-9_-]*@[0-9a-f]{7,}"
                         r"|[A-Za-z0-9_]+\.(?:py|yaml|json))(?![\w`@/])")


def _code_refs(text: str) -> str:
    """Paths, ``repo@commit`` and file names in ``text`` as code spans (in any language: they are not words)."""
    parts = text.split("`")
    return "`".join(p if i % 2 else _SOURCE_REF.sub(lambda m: "`" + m.group(0) + "`", p) for i, p in enumerate(parts))


def checked_in(e: CrosswalkEntry) -> str:
    """Where the entry was read, in the run's language (the crosswalk's ``verified_in``), paths as code."""
    return _("Checked in: {v}").format(v=_code_refs(message(e.verified_in)))


def formula_pieces(e: CrosswalkEntry) -> list[str]:
    r"""The entry's formula cut at its top-level ``,\quad`` (the clamped ℓ is defined after it), so a
    phone shows one piece a line; each piece but the last keeps its comma."""
    pieces = e.formula_latex.split(r",\quad")
    return [p.strip() + "," for p in pieces[:-1]] + [pieces[-1].strip()]


def entry_heading(e: CrosswalkEntry) -> str:
    """The option box's first line: library, component (in the run's language) and the setting."""
    return _("**{lib} · {part}** — set or shown as `{setting}`").format(
        lib=e.library, part=message(e.component), setting=e.setting)


def crosswalk_frame(entries: list[CrosswalkEntry]) -> pd.DataFrame:
    """The crosswalk as a table: the first eight columns are shown, the rest go to the CSV.

    ``gradient`` is the link to the Gradients page with the entry highlighted
    (None for a logged metric, which has no gradient).
    """
    columns = {
        "library": [e.library for e in entries],
        "option": [", ".join(e.names) for e in entries],
        "acts on": [_(ACTS_ON[e.acts_on]) for e in entries],
        "estimator": [estimator_text(e) for e in entries],
        "estimates": [message(e.direction) for e in entries],
        "unbiased": [unbiased_text(e) for e in entries],
        "clamps": [clamps_text(e) for e in entries],
        "gradient": [gradients_link(e) for e in entries],
        "set or shown as": [e.setting for e in entries],  # i18n: ok (key)
        "samples from": [message(e.sampler) for e in entries],
        "compared with": [message(e.other) for e in entries],
        "library code": [e.library_formula for e in entries],
        "weight": [message(e.weight or "") for e in entries],
        "logged as": [e.logged_as or "" for e in entries],
        "source": [e.source for e in entries],
        "verified in": [_plain(message(e.verified_in)) for e in entries],
        "caveat": [_plain(message(e.caveat)) for e in entries],
    }
    return pd.DataFrame({header(k): v for k, v in columns.items()})


_ROLES = {"sampler": N_("sampler"), "other": N_("other policy"),
          "current": N_("policy being updated")}


def variables_text(e: CrosswalkEntry) -> str:
    """What each variable of the library's code is."""
    # TRANSLATORS: separates the variables of "In this code: {vars}."
    return _("In this code: {vars}.").format(
        vars=_("; ").join(
            _("`{name}` = log-prob under the {role}").format(name=name, role=_(_ROLES[role]))
            for name, role in e.variables
        )
    )


def entry_facts(e: CrosswalkEntry, estimator_name_md: str = "") -> list[str]:
    """The facts of one option as Markdown bullets (without the leading dash).

    ``estimator_name_md`` is the estimator's name as the page colours it
    (``lab.ui.estimator_name``); the plain name is used without it.
    """
    verdict = _value_unbiased(e)
    if e.estimator == "full":
        estimator_line = _("**Estimator:** {what} (q = sampler, p = other)").format(
            what=_("the exact KL at each position, summed over the whole vocabulary"))
        unbiased = _("exact")
    else:
        info = ESTIMATORS[e.estimator]
        name = estimator_name_md or info.name
        if not e.uses_current:
            estimator_line = _("**Estimator:** {what} (q = sampler, p = other)").format(
                what=_("{name}, whose mean over the sampler is {target}").format(name=name, target=info.estimates))
        elif e.importance_weighted:
            estimator_line = _(
                "**Estimator:** {name} times the weight π_θ/π_old, so its mean over the tokens the sampler "
                "π_old drew is {name}'s mean over π_θ: {target} (q = π_θ, the policy being updated; "
                "p = other)").format(name=name, target=info.estimates)
        else:
            estimator_line = _(
                "**Estimator:** {name}, whose mean over π_θ would be {target} (q = π_θ, the policy being "
                "updated; p = other); but the tokens come from the sampler π_old, with no weight on the "
                "value").format(name=name, target=info.estimates)
        unbiased = _yes(bool(verdict))
    if verdict is None and e.uses_current:
        unbiased_line = (
            _("**Unbiased for that KL:** only on-policy (π_old = π_θ), clamps aside; the gradient is "
              "importance-corrected, the value is not") if e.clamped else
            _("**Unbiased for that KL:** only on-policy (π_old = π_θ); the gradient is importance-corrected, "
              "the value is not"))
    elif verdict is None:
        unbiased_line = (
            _("**Unbiased for that KL:** only on-policy (π_old = π_θ, as in the first optimizer step on a "
              "batch), clamps aside") if e.clamped else
            _("**Unbiased for that KL:** only on-policy (π_old = π_θ, as in the first optimizer step on a "
              "batch)"))
    elif e.clamped and verdict:
        unbiased_line = _("**Unbiased for that KL:** {u} (clamps aside)").format(u=unbiased)
    else:
        unbiased_line = _("**Unbiased for that KL:** {u}").format(u=unbiased)
    where = _(ACTS_ON[e.acts_on])
    if e.weight:
        acts = _("**Acts on:** the {where}, weighted by `{weight}`").format(
            where=where, weight=message(e.weight))
    else:
        acts = _("**Acts on:** the {where}").format(where=where)
    facts = [
        _("**Estimates:** {d}").format(d=message(e.direction)),
        _("**Samples from:** {s}").format(s=message(e.sampler)),
        _("**Compared with:** {o}").format(o=message(e.other)),
        estimator_line,
        unbiased_line,
        _("**Clamps:** {c}").format(c=clamps_text(e)),
        acts,
    ]
    if e.straight_through:
        facts.append(
            _("**Straight-through:** forward value as above, backward pass uses k2's gradient"))
    if e.early_stop:
        facts.append(_("**Early stopping:** {s}").format(s=message(e.early_stop)))
    if e.logged_as:
        facts.append(_("**Logged as:** `{name}`").format(name=e.logged_as))
    facts.append(_("**Source:** `{src}`").format(src=e.source))
    return [typeset(f) for f in facts]


def caveat_note(e: CrosswalkEntry) -> tuple[str, str, str]:
    """The entry's caveat as ``(kind, text, icon)``: a warning when the value acts on a loss."""
    caveat = message(e.caveat).replace("Tang & Munos, arXiv:2506.09477", TANG_MUNOS)
    if e.acts_on == "loss":
        return "warning", typeset(_("**In a loss:** {c}").format(c=caveat)), ":material/warning:"
    return "info", typeset(_("**Caveat:** {c}").format(c=caveat)), ":material/info:"


def _policies(e: CrosswalkEntry) -> tuple[str, str]:
    """The sampler and the other policy as symbols (π_θ, π_ref), read from the KL the entry
    estimates; the crosswalk's role descriptions (English data) where it does not say."""
    m = _KL_PI.match(e.direction)
    if m and e.kl_roles == ("sampler", "other"):
        return f"π_{m[1]}", f"π_{m[2]}"
    return re.split(r" \(|（", message(e.sampler))[0], re.split(r" \(|（", message(e.other))[0]


def _same(a: float, b: float) -> bool:
    """Equal as far as the page's figures go: the closeness behind "is the exact KL"."""
    return math.isclose(a, b, rel_tol=1e-6)  # relative only: a KL of 9.4e-12 is not a mean of 1.0e-11


def _signed_share(x: float) -> str:
    """A relative difference with its sign, never ``0%`` when it is not zero: ``+49.5%``, ``-0.5%``."""
    return ("+" if x > 0 else "") + share(x)


def bias_delta(bias: float, kl: float) -> tuple[str | None, str | None]:
    """The delta of the "Library's mean" metric, and its description: the bias against the exact KL.

    ``st.metric`` draws a red down-arrow when the delta text starts with "-"
    and a green up-arrow otherwise, so the signed number leads in every
    language (``-0.0512 (-12%)``) and the words ("vs the KL") go in the
    metric's ``delta_description``.  The relative bias is shown when the KL is
    positive (:func:`lab.format.share`, so a bias that is not zero never reads 0%).  No delta
    (``None, None``) when the mean is the KL by the test :func:`answer` uses to say so.
    """
    if _same(kl + bias, kl):
        return None, None
    rel = " ({b})".format(b=_signed_share(bias / kl)) if kl > 0 else ""
    return "{b:+.3g}{rel}".format(b=bias, rel=rel), _("vs the KL")


def answer(lib: str, option: str, theta: float, point: ClampPoint, clamped: bool = True) -> str:
    """The page's answer at the clamp demo's setting: does the library's mean still match the KL?

    Chosen from the exact numbers of ``point`` (:func:`kl_core.libraries.clamps.clamp_point`):
    no drift; no token reaching a clamp (the mean is the plain estimator's, equal to the KL or
    off by the estimator's own bias); or clamped tokens, with the mean below, above or at the KL
    (exactly, or "to the digits shown": a clamped mean that :func:`_same` calls the KL is within 1e-6
    of it, which ``number``'s 4 digits do not tell apart at any slider setting; the tests check each).
    ``clamped`` is False for an option without clamps (TRL's k3, shown for reference).
    """
    opt = "{lib} `{opt}`".format(lib=lib, opt=option)  # i18n: ok (names)
    values = dict(opt=opt, theta=f"{theta:g}", mean=number(point.mean), kl=number(point.kl),
                  raw=number(point.unclamped_mean), hit=probability_text(point.hit_prob))
    same = _same(point.mean, point.kl)
    if point.kl == 0 and same and not clamped:
        return _("At drift θ = {theta} the policy has not moved: the exact KL and {opt}'s mean are "
                 "both **0**. This option has no clamps: move θ to compare its mean with the KL.").format(**values)
    if point.kl == 0 and same:
        return _("At drift θ = {theta} the policy has not moved: the exact KL and {opt}'s mean are "
                 "both **0**. Move θ to see the clamps act.").format(**values)
    if not clamped:
        if same:
            return _("At drift θ = {theta} {opt} has no clamps: its mean **{mean}** is the exact KL, "
                     "however far the policy moves.").format(**values)
        return _("At drift θ = {theta} {opt} has no clamps; its mean **{mean}** differs from the "
                 "exact KL **{kl}** by the estimator's own bias ({rel}).").format(
            **values, rel=_signed_share(point.bias / point.kl))
    if point.hit_prob == 0:
        if same:
            return _("At drift θ = {theta} no sampled token reaches the clamps of {opt}: its mean "
                     "**{mean}** is the exact KL.").format(**values)
        return _("At drift θ = {theta} no sampled token reaches the clamps of {opt}; its mean "
                 "**{mean}** differs from the exact KL **{kl}** by the estimator's own bias "
                 "({rel}), not by the clamps.").format(**values, rel=_signed_share(point.bias / point.kl))
    if same and _same(point.mean, point.unclamped_mean):
        if point.mean == point.kl:
            return _("At drift θ = {theta} a sampled token hits the clamps of {opt} with probability "
                     "{hit}, yet its mean **{mean}** still equals the exact KL.").format(**values)
        return _("At drift θ = {theta} a sampled token hits the clamps of {opt} with probability "
                 "{hit}, yet its mean **{mean}** still equals the exact KL to the digits shown.").format(**values)
    if same:
        if point.mean == point.kl:
            return _("At drift θ = {theta} a sampled token hits the clamps of {opt} with probability "
                     "{hit}: they move its mean from {raw} to **{mean}**, which happens to equal the exact "
                     "KL.").format(**values)
        return _("At drift θ = {theta} a sampled token hits the clamps of {opt} with probability "
                 "{hit}: they move its mean from {raw} to **{mean}**, which happens to equal the exact "
                 "KL to the digits shown.").format(**values)
    rel = share(abs(point.bias) / point.kl)
    if not _same(point.unclamped_mean, point.kl):  # k2: its own bias and the clamps, said apart
        return _own_bias_and_clamps(values, point, rel)
    return _clamped_gap("clamps", values, point.bias < 0, rel=rel)


#: The clamped answer, in three sentences: how often the clamps are hit; where the mean lands (by
#: ``below``, is it under the exact KL); what made the gap (the clamps alone; the estimator's own bias
#: alone, clamps that leave the mean unchanged, k2; both, said apart).
_CLAMPS_HIT = N_("At drift θ = {theta} a sampled token hits the clamps of {opt} with probability {hit}.")
_CLAMPED_MEAN = {
    True: N_("It averages **{mean}**, **{rel} below** the exact KL **{kl}**."),
    False: N_("It averages **{mean}**, **{rel} above** the exact KL **{kl}**."),
}
_GAP_CAUSE = {
    "clamps": N_("Without clamps it would average {raw}."),
    "own bias": N_("The clamps leave its mean unchanged: all of that gap is the estimator's own bias."),
    "both": N_("Two causes add up to that gap, each as a share of the exact KL: the estimator's own bias, "
               "{own} (without clamps it averages {raw}), and the clamps, {clamp}."),
}


def _clamped_gap(cause: str, values: dict[str, str], below: bool, **more: str) -> str:
    """The clamped answer's three sentences, for a gap made by ``cause`` (a key of :data:`_GAP_CAUSE`)."""
    return " ".join(_(template).format(**values, **more)
                    for template in (_CLAMPS_HIT, _CLAMPED_MEAN[below], _GAP_CAUSE[cause]))


def _own_bias_and_clamps(values: dict[str, str], point: ClampPoint, rel: str) -> str:
    """The clamped answer for an estimator biased without clamps (k2): the gap to the KL split into
    the estimator's own bias, unclamped mean − KL, and the clamps' part, mean − unclamped mean, each
    as a share of the KL, so the two add up to the gap."""
    own = _signed_share((point.unclamped_mean - point.kl) / point.kl)
    if _same(point.mean, point.unclamped_mean):
        return _clamped_gap("own bias", values, point.bias < 0, rel=rel)
    clamp = _signed_share((point.mean - point.unclamped_mean) / point.kl)
    return _clamped_gap("both", values, point.bias < 0, rel=rel, own=own, clamp=clamp)


def _three(x: float) -> float:
    """``x`` rounded to 3 significant digits (a band's bound as the intro writes it)."""
    return float(f"{x:.3g}") if math.isfinite(x) else x


def clamp_bands(entries: list[CrosswalkEntry]) -> list[tuple[float, float, list[CrosswalkEntry]]]:
    """Each clamped entry's band of log r, ``(lo, hi, entries)``, entries with one band together, in
    the order first met: inside it no clamp changes a token's value, beyond it one does.

    The bounds are :func:`kl_core.doctor.diagnosis.clamp_sides` (a log-ratio clamp's bound, or where
    the estimator first reaches a value clamp: k3 = 10 at log r ≈ 2.61 and ≈ −11, k2 = 10 at
    |log r| = √20); ``-inf`` or ``inf`` on a side where no clamp bites.
    """
    bands: dict[tuple[float, float], list[CrosswalkEntry]] = {}
    for e in entries:
        if not e.clamped:
            continue
        below, above = clamp_sides(e)
        if below is None and above is None:
            continue
        key = (-math.inf if below is None else below, math.inf if above is None else above)
        bands.setdefault(key, []).append(e)
    return [(lo, hi, group) for (lo, hi), group in bands.items()]


def clamps_intro(entries: list[CrosswalkEntry]) -> str:
    """The clamp section's first paragraph: each clamped option of the demo and its clamps, from the
    crosswalk's data; the band of log r inside which each leaves a token's value alone
    (:func:`clamp_bands`), and how narrow the narrowest is; then what the clamps do (nothing while
    every token the sampler can draw is inside, then they move the mean off the estimator's own,
    which for k1 and k3 is the KL)."""
    libs: dict[str, list[str]] = {}
    for e in entries:
        if e.clamped:
            libs.setdefault(e.library, []).append(
                "`{opt}` ({clamps})".format(opt=e.option, clamps=clamps_text(e)))  # i18n: ok (layout)
    # TRANSLATORS: one library's clamps: "verl clamps `low_var_kl` (log r ∈ [-20, 20]), `actor/ppo_kl` (…)."
    which = " ".join(_("{lib} clamps {options}.").format(lib=lib, options=_(", ").join(opts))
                     for lib, opts in libs.items())
    bands = clamp_bands(entries)
    # TRANSLATORS: one band of the clamp intro: "log r ∈ [-11, 2.61] for verl `low_var_kl`, OpenRLHF `k3`"
    listed = _("; ").join(_("{band} for {options}").format(band=_logr_interval(_three(lo), _three(hi)),
                                                          options=_option_names(group))
                          for lo, hi, group in bands)
    parts = [which]
    if bands:
        parts.append(_(
            "Each option leaves a token's value as its estimator computes it only while the token's "
            "log-ratio stays inside a band: {bands}.").format(bands=listed))
    parts.append(_(
        "While every token the sampler can draw lies inside the band the clamps do nothing; once the "
        "sampler draws tokens outside it with some probability, the clamps change those tokens' values, "
        "and the library's mean parts from the same estimator's mean without clamps, which for k1 and k3 "
        "is the KL."))
    upper = [(hi, group) for _lo, hi, group in bands if math.isfinite(hi) and hi > 0]
    if upper:
        hi, group = min(upper, key=lambda b: b[0])
        parts.append(_(
            "No nearly impossible token is needed: under {options} a token is clamped once the other "
            "policy gives it about {r} times the sampler's probability or more (log r > {hi})."
        ).format(options=_option_names(group), r=f"{math.exp(_three(hi)):.3g}", hi=f"{_three(hi):g}"))
    parts.append(_("All numbers here are exact sums over the tokens, not samples."))
    return " ".join(parts)


def _clamp_kind(e: CrosswalkEntry) -> tuple[str, object, object]:
    """What a clamped option computes per token: its estimator and its clamps."""
    return e.estimator, e.logr_clamp, e.value_clamp


def demo_help(entries: list[CrosswalkEntry], demo: list[CrosswalkEntry]) -> str:
    """The clamp demo's menu help: how many of the crosswalk's clamped options it offers, and whether
    they cover every clamped per-token formula (chosen from ``entries``, the whole crosswalk)."""
    clamped = [e for e in entries if e.clamped]
    shown = [e for e in demo if e.clamped]
    values = dict(shown=len(shown), total=len(clamped), unclamped=_option_names([e for e in demo if not e.clamped]))
    if {_clamp_kind(e) for e in clamped} <= {_clamp_kind(e) for e in shown}:
        return _("{shown} of the crosswalk's {total} clamped options, one for each clamped per-token formula "
                 "(every other clamped option applies one of these), and {unclamped} (no clamps) for "
                 "reference.").format(**values)
    return _("{shown} of the crosswalk's {total} clamped options, and {unclamped} (no clamps) for "
             "reference.").format(**values)


def library_mean_help(clamped: bool) -> str:
    """The help of the "Library's mean" metric: the clamped per-token value, or (TRL's k3) the value as is."""
    if clamped:
        return _("Exact mean over the sampler's tokens of the library's clamped per-token value.")
    return _("Exact mean over the sampler's tokens of the library's per-token value (this option has no "
             "clamps).")


def hit_caption(clamped: bool, any_hit: bool) -> str:
    """The clamp-hit chart's caption: what it shows, or why its line stays at 0."""
    if not clamped:
        return _("This option has no clamps: no token's value is ever changed.")
    if any_hit:
        return _("The share of sampled tokens whose log-ratio or value a clamp changes.")
    return _("No sampled token reaches this option's clamps anywhere on this path.")


def clamp_roles(e: CrosswalkEntry, moving: str, family_latex: str, theta_latex: str,
                base_name: str) -> str:
    """Which policy drifts along the path (``moving``: ``"sampler"`` or ``"other"``) and the clamps."""
    if moving == "sampler":
        text = _(
            "Path: ${family}$, ${theta}$, with $p_0$ = {base}. Here the **sampler** ({sampler}) "
            "drifts along the path, $p_\\theta$, away from the fixed **other policy** ({other}), "
            "$p_0$. The option computes {direction}; clamps: {clamps}."
        )
    else:
        text = _(
            "Path: ${family}$, ${theta}$, with $p_0$ = {base}. Here the **sampler** ({sampler}) "
            "stays at $p_0$ and the **other policy** ({other}) drifts along the path, $p_\\theta$. "
            "The option computes {direction}; clamps: {clamps}."
        )
    sampler, other = _policies(e)
    return typeset(text.format(
        family=family_latex, theta=theta_latex, base=base_name, sampler=sampler, other=other,
        direction=e.direction.split(" (")[0], clamps=clamps_text(e)))


def clamp_token_rows(tokens: TokenBreakdown, estimator: str) -> pd.DataFrame:
    """Every token of the clamp demo: probabilities, log r, the raw and the library's value."""
    return pd.DataFrame(
        {
            header("token"): range(tokens.logr.size),
            header("P under sampler"): tokens.sampler_probs,  # i18n: ok (key)
            header("P under other"): tokens.other_probs,  # i18n: ok (key)
            "log r": tokens.logr,  # i18n: ok (key)
            no_clamp_header(estimator): tokens.raw,
            header("library value"): tokens.value,  # i18n: ok (key)
            header("clamped"): [_("yes") if h else "" for h in tokens.hit],
        }
    )
