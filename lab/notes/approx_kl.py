"""What the "approx_kl in practice" page says: the four questions, the crosswalk, the clamps.

Pure functions of core results (no streamlit).  The checklist's numbers are
exact token sums from :func:`kl_core.clamps.token_expectations`; the crosswalk
rows and facts come from :data:`kl_core.crosswalk.CROSSWALK` entries.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from kl_core.clamps import TokenBreakdown, TokenExpectations
from kl_core.crosswalk import CrosswalkEntry
from kl_core.estimators import ESTIMATORS
from lab.notes.gradients import gradients_link

__all__ = [
    "CHECKLIST_INTRO",
    "PATH_HELP",
    "ChecklistItem",
    "caveat_note",
    "checklist",
    "clamp_roles",
    "clamp_token_rows",
    "clamps_text",
    "crosswalk_frame",
    "entry_facts",
    "estimator_text",
    "variables_text",
]

WRONG, RIGHT = ":red[:material/close:]", ":green[:material/check:]"
TANG_MUNOS = "Tang & Munos, [arXiv:2506.09477](https://arxiv.org/abs/2506.09477)"
CHECKLIST_INTRO = (
    "Every number below is an exact sum over the five tokens of a small next-token distribution "
    "(`kl_core.paths` path *logit*): **π_old = π_ref = {old}** and **π_new = π_θ = {new}**, one "
    "step (θ = 1) apart. In a PPO update the batch was drawn from π_old; in an RLHF penalty the "
    "response was drawn from the current policy π_θ."
)
PATH_HELP = (
    "Rare token: 8 tokens, the policy learns to emit a token the anchor gives 2.6e-10. "
    "Mild drift: 5 tokens, mass moves from the likely tokens to the unlikely ones."
)


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
        text = "*{setting}*  \n{wrong}  \n{right}".format(
            setting=self.setting, wrong=self.wrong, right=self.right
        )
        return text + ("  \n" + self.note if self.note else "")


def _n(x: float) -> str:
    return f"{x:+.4f}"


def checklist(ppo: TokenExpectations, rlhf: TokenExpectations) -> list[ChecklistItem]:
    """The four questions, each with a sign error worked out on the five-token example.

    ``ppo``: tokens from π_old compared with π_new; ``rlhf``: tokens from π_θ
    compared with π_ref (:func:`kl_core.clamps.token_expectations`).
    """
    return [
        ChecklistItem(
            "1 · Whose samples?",
            "Average over the policy that drew the tokens, and subtract the other policy from it: "
            r"$k_1 = \log\pi_{\text{sampler}} - \log\pi_{\text{other}}$.",
            "RLHF penalty, tokens drawn from π_θ:",
            "{mark} `ref_logprob - logprob` as a positive penalty: mean **{mean}**".format(
                mark=WRONG, mean=_n(rlhf.other_minus_sampler)),
            "{mark} `logprob - ref_logprob`: mean **{mean}** = KL[π_θ‖π_ref]".format(
                mark=RIGHT, mean=_n(rlhf.sampler_minus_other)),
        ),
        ChecklistItem(
            "2 · Which direction?",
            "The KL is taken *from* the sampler: tokens of π_old estimate "
            r"$\mathrm{KL}[\pi_{\text{old}}\|\pi_{\text{new}}] = \mathbb{E}_{\text{old}}[\log\pi_{\text{old}} - \log\pi_{\text{new}}]$.",
            "PPO batch, tokens drawn from π_old:",
            "{mark} `new_logprob - old_logprob` as a positive KL(old‖new): mean **{mean}**".format(
                mark=WRONG, mean=_n(ppo.other_minus_sampler)),
            "{mark} `old_logprob - new_logprob`: mean **{mean}** = KL[π_old‖π_new]".format(
                mark=RIGHT, mean=_n(ppo.sampler_minus_other)),
            "KL[π_new‖π_old] = {other:.4f} is the other direction, a different number "
            "(r log r − (r − 1) estimates it from the same tokens: {k3pq:.4f}).".format(
                other=ppo.kl_other_sampler, k3pq=ppo.k3_pq),
        ),
        ChecklistItem(
            "3 · Which ratio?",
            r"$r = \pi_{\text{other}}/\pi_{\text{sampler}}$, target over sampler (here "
            r"$\pi_{\text{new}}/\pi_{\text{old}}$): only then is $\mathbb{E}_{\text{sampler}}[r-1] = 0$, "
            "the control variate inside k3.",
            "PPO batch, k3 = (r − 1) − log r:",
            "{mark} r = π_old/π_new: mean **{mean}** (χ² − KL, not a KL)".format(
                mark=WRONG, mean=_n(ppo.k3_flipped)),
            "{mark} r = π_new/π_old: mean **{mean}** = KL[π_old‖π_new]".format(
                mark=RIGHT, mean=_n(ppo.k3)),
        ),
        ChecklistItem(
            "4 · Which estimator?",
            "k1, k2 and k3 differ in bias, spread and sign: compare a number only with one made "
            "by the same estimator.",
            "PPO batch, KL[π_old‖π_new] = {kl:.4f}:".format(kl=ppo.kl_sampler_other),
            "{mark} k2 read as the KL: mean **{mean}**".format(mark=WRONG, mean=_n(ppo.k2)),
            "{mark} k3: mean **{mean}** = the KL, never negative".format(mark=RIGHT, mean=_n(ppo.k3)),
            "k1 also averages {mean:.4f}, but **{share:.0%}** of tokens give a negative value.".format(
                mean=ppo.sampler_minus_other, share=ppo.k1_negative_share),
        ),
    ]


def clamps_text(e: CrosswalkEntry) -> str:
    """An entry's clamps in words: ``log r ∈ [−20, 20]; value ∈ [−10, 10]`` or ``none``."""
    parts = []
    if e.logr_clamp is not None:
        parts.append("log r ∈ [{lo:g}, {hi:g}]".format(lo=e.logr_clamp[0], hi=e.logr_clamp[1]))
    if e.value_clamp is not None:
        parts.append("value ∈ [{lo:g}, {hi:g}]".format(lo=e.value_clamp[0], hi=e.value_clamp[1]))
    return "; ".join(parts) or "none"


def estimator_text(e: CrosswalkEntry) -> str:
    """An entry's estimator for the table: ``k3``, ``k3 (+ k2 gradient)`` or the exact KL."""
    if e.estimator == "full":
        return "exact (full vocabulary)"
    name = ESTIMATORS[e.estimator].name
    return name + " (+ k2 gradient)" if e.straight_through else name


def crosswalk_frame(entries: list[CrosswalkEntry]) -> pd.DataFrame:
    """The crosswalk as a table: the first eight columns are shown, the rest go to the CSV.

    ``gradient`` is the link to the Gradients page with the entry highlighted
    (None for a logged metric, which has no gradient).
    """
    return pd.DataFrame(
        {
            "library": [e.library for e in entries],
            "option": [", ".join(e.names) for e in entries],
            "acts on": [e.acts_on for e in entries],
            "estimator": [estimator_text(e) for e in entries],
            "estimates": [e.direction for e in entries],
            "unbiased": ["yes" if e.unbiased else "no" for e in entries],
            "clamps": [clamps_text(e) for e in entries],
            "gradient": [gradients_link(e) for e in entries],
            "set or shown as": [e.setting for e in entries],
            "samples from": [e.sampler for e in entries],
            "compared with": [e.other for e in entries],
            "library code": [e.library_formula for e in entries],
            "weight": [e.weight or "" for e in entries],
            "logged as": [e.logged_as or "" for e in entries],
            "source": [e.source for e in entries],
            "verified in": [e.verified_in for e in entries],
            "caveat": [e.caveat for e in entries],
        }
    )


_ROLES = {"sampler": "sampler", "other": "other policy", "current": "policy being updated"}


def variables_text(e: CrosswalkEntry) -> str:
    """What each variable of the library's code is."""
    return "In this code: {vars}.".format(
        vars="; ".join(
            "`{name}` = log-prob under the {role}".format(name=name, role=_ROLES[role])
            for name, role in e.variables
        )
    )


def entry_facts(e: CrosswalkEntry, estimator_name_md: str = "") -> list[str]:
    """The facts of one option as Markdown bullets (without the leading dash).

    ``estimator_name_md`` is the estimator's name as the page colours it
    (``lab.ui.estimator_name``); the plain name is used without it.
    """
    if e.estimator == "full":
        what = "the exact KL at each position, summed over the whole vocabulary"
        unbiased = "exact"
    else:
        info = ESTIMATORS[e.estimator]
        what = "{name}, whose mean over the sampler is {target}".format(
            name=estimator_name_md or info.name, target=info.estimates
        )
        unbiased = "yes" if e.unbiased else "no"
    if e.logr_clamp or e.value_clamp:
        unbiased_line = "**Unbiased for that KL:** {u} (clamps aside)".format(u=unbiased)
    else:
        unbiased_line = "**Unbiased for that KL:** {u}".format(u=unbiased)
    if e.weight:
        acts = "**Acts on:** the {where}, weighted by `{weight}`".format(where=e.acts_on, weight=e.weight)
    else:
        acts = "**Acts on:** the {where}".format(where=e.acts_on)
    facts = [
        "**Estimates:** {d}".format(d=e.direction),
        "**Samples from:** {s}".format(s=e.sampler),
        "**Compared with:** {o}".format(o=e.other),
        "**Estimator:** {what} (q = sampler, p = other)".format(what=what),
        unbiased_line,
        "**Clamps:** {c}".format(c=clamps_text(e)),
        acts,
    ]
    if e.straight_through:
        facts.append("**Straight-through:** forward value as above, backward pass uses k2's gradient")
    if e.early_stop:
        facts.append("**Early stopping:** {s}".format(s=e.early_stop))
    if e.logged_as:
        facts.append("**Logged as:** `{name}`".format(name=e.logged_as))
    facts.append("**Source:** `{src}`".format(src=e.source))
    return facts


def caveat_note(e: CrosswalkEntry) -> tuple[str, str, str]:
    """The entry's caveat as ``(kind, text, icon)``: a warning when the value acts on a loss."""
    caveat = e.caveat.replace("Tang & Munos, arXiv:2506.09477", TANG_MUNOS)
    if e.acts_on == "loss":
        return "warning", "**In a loss:** {c}".format(c=caveat), ":material/warning:"
    return "info", "**Caveat:** {c}".format(c=caveat), ":material/info:"


def _role_name(text: str) -> str:
    return text.split(" (")[0]


def clamp_roles(e: CrosswalkEntry, moving: str, family_latex: str, theta_latex: str,
                base_name: str) -> str:
    """Which policy drifts along the path (``moving``: ``"sampler"`` or ``"other"``) and the clamps."""
    if moving == "sampler":
        roles = (
            "Here the **sampler** ({sampler}) drifts along the path, $p_\\theta$, away from the "
            "fixed **{other}**, $p_0$."
        )
    else:
        roles = (
            "Here the **sampler** ({sampler}) stays at $p_0$ and the **{other}** drifts along "
            "the path, $p_\\theta$."
        )
    return (
        "Path: ${family}$, ${theta}$, with $p_0$ = {base}. " + roles + " The option computes "
        "{direction}; clamps: {clamps}."
    ).format(family=family_latex, theta=theta_latex, base=base_name,
             sampler=_role_name(e.sampler), other=_role_name(e.other), direction=e.direction,
             clamps=clamps_text(e))


def clamp_token_rows(tokens: TokenBreakdown, estimator: str) -> pd.DataFrame:
    """Every token of the clamp demo: probabilities, log r, the raw and the library's value."""
    return pd.DataFrame(
        {
            "token": range(tokens.logr.size),
            "P under sampler": tokens.sampler_probs,
            "P under other": tokens.other_probs,
            "log r": tokens.logr,
            "{k}, no clamp".format(k=estimator): tokens.raw,
            "library value": tokens.value,
            "clamped": ["yes" if h else "" for h in tokens.hit],
        }
    )
