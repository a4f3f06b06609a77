"""What the "Config doctor" page says: the card, the warnings, the tables (no streamlit).

Every sentence is composed from a :class:`kl_core.doctor.diagnosis.Diagnosis`; the page
only lays it out.  Sentences are whole, with named placeholders, ready for
translation.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from charts.config_doctor import Y_LIMIT
from i18n import N_, _, message, ngettext, pgettext
from kl_core.doctor.diagnosis import (
    GRADIENT_WORDS,
    PULL_T_MAX,
    Diagnosis,
    DoctorWarning,
    KLUse,
    PullCurve,
    clamp_sides,
    flag_left_off,
    lacking_settings,
    other_release_words,
    pull_curve,
    render_changes,
)
from kl_core.doctor.parse import MAX_BYTES, UnreadableInput
from kl_core.doctor.releases import eras
from kl_core.libraries.crosswalk import CROSSWALK
from kl_core.validation import Message

__all__ = [
    "clamp_words",
    "gradients_query",
    "EXAMPLES",
    "EXAMPLE_LABELS",
    "GRADIENT_BADGES",
    "INTRO",
    "LIBRARIES",
    "RELEASES",
    "other_release_lines",
    "release_line",
    "Example",
    "alternatives_frame",
    "code_settings",
    "badge",
    "gradient_words",
    "typeset",
    "card_json",
    "caveat",
    "note_text",
    "crosswalk_query",
    "example_text",
    "fix_language",
    "fix_groups",
    "headline",
    "no_fix_text",
    "no_warnings_text",
    "pull_caption",
    "unclamped_label",
    "release_error",
    "upload_label",
    "read_line",
    "settings_frame",
    "summary_lines",
    "unknown_frame",
    "use_facts",
    "use_title",
    "warning_title",
    "WARNING_TITLES",
    "error_text",
    "fix_cost",
    "fix_heading",
    "stacked",
    "fix_group_cost",
    "plain_title",
]

ROOT = Path(__file__).resolve().parents[2]

INTRO = N_(
    "Paste the launch script of a run (verl, OpenRLHF) or its config (TRL: YAML, JSON, a `trl` "
    "command or a `GRPOConfig(...)` call), or start from an example. The doctor reads it without "
    "running anything and tells you, for each KL term: **where it acts** (reward or loss), **what it "
    "computes**, **what its value estimates**, and **where its gradient pushes** — the exact expected "
    "gradient, which is often not the KL its value estimates. Then what to change, as the setting "
    "to write."
)


@dataclass(frozen=True)
class Example:
    """A ready example: a real config from the library's own sources."""

    label: str
    file: str
    library: str


#: The examples; the URL carries the label (``?ex=OpenRLHF``), the files live in ``data/doctor_examples/``.
EXAMPLES: dict[str, Example] = {
    "verl": Example("verl", "verl_grpo_qwen3_8b.sh", "verl"),
    "openrlhf": Example("OpenRLHF", "openrlhf_dapo_hybrid.sh", "OpenRLHF"),
    "trl": Example("TRL", "trl_deepseekmath.py", "TRL"),
    "own": Example(N_("Your own"), "", ""),
}

#: Key → label, for the example picker's ``format_func`` (show it as ``_(label)``).
EXAMPLE_LABELS: dict[str, str] = {key: ex.label for key, ex in EXAMPLES.items()}

#: The ``?library=`` choices and their labels (show them as ``_(label)``).
LIBRARIES: dict[str, str] = {"auto": N_("Detect"), "verl": "verl", "openrlhf": "OpenRLHF", "trl": "TRL"}

# The release selector: inferred from the text, the release the crosswalk describes, or an older era.
#: An era of a library's other trainer names it (TRL 0.10.1–0.21.0 (rloo)); the first trainer's keep their labels,
#: which shared links hold.
RELEASES: dict[str, str] = {"auto": N_("Infer"), "latest": N_("Latest"), **{
    e.id: ("{lib} {label}" if e.trainer == next(o.trainer for o in eras() if o.library == e.library)
           else "{lib} {label} ({trainer})")  # i18n: ok (names: library, releases, trainer)
    .format(lib=e.library, label=e.label, trainer=e.trainer) for e in eras()}}

#: A coloured badge per gradient target (green only for the gradient a KL penalty means):
#: colour, icon and word; :func:`badge` writes it.
GRADIENT_BADGES: dict[str, tuple[str, str, str]] = {
    "reverse_kl": ("green", "check", N_("reverse KL")),
    "forward_kl": ("orange", "swap_horiz", N_("forward KL")),
    "zero": ("red", "block", N_("zero")),
    "mixed": ("violet", "shuffle", N_("mixed")),
}

_PI = {"θ": r"\pi_\theta", "ref": r"\pi_\mathrm{ref}", "old": r"\pi_\mathrm{old}"}
_NOTATION = re.compile(r"(∇\s?)?KL\[π_(θ|ref|old)‖π_(θ|ref|old)\]|π_(θ|ref|old)")


def _tex(m: re.Match) -> str:
    if m.group(4):
        return "${p}$".format(p=_PI[m.group(4)])
    grad = r"\nabla" if m.group(1) else ""
    return r"${g}\mathrm{{KL}}[{a}\|{b}]$".format(g=grad, a=_PI[m.group(2)], b=_PI[m.group(3)])


def typeset(text: str) -> str:
    """The core's plain-text notation as markdown maths: ``KL[π_θ‖π_ref]``, ``∇KL[…]``, ``π_θ``, ``π_old``.

    Code spans (between backticks) stay as they are.
    """
    parts = text.split("`")
    return "`".join(part if i % 2 else _NOTATION.sub(_tex, part) for i, part in enumerate(parts))


_SETTING = re.compile(
    r"--[A-Za-z][\w.\-]*(?:[= ](?:True|False|k[123]|\d[\d.e\-]*)\b)?"  # a flag, with a short value
    r"|\b[\w-]+(?:/[\w.-]+)+\.(?:py|yaml|sh)\b"  # a file path, whole (verl/workers/utils/losses.py)
    r"|\b[A-Za-z_][A-Za-z0-9_]+(?:\.[a-z_][a-z0-9_]+)+(?:=[^\s,;:)（），；。]+)?"  # a dotted key, key=value
    r"|\b[a-z]+_[a-z0-9_]+\+?(?:=[^\s,;:)（），；。]+)?"  # a snake_case name (verl's low_var_kl+ too)
)


def code_settings(text: str) -> str:
    """Settings, flags and option names in a sentence as code spans (``--init_kl_coef``, ``a.b=True``).

    Code spans already there stay as they are; so does the rest of the sentence.
    """
    parts = text.split("`")
    return "`".join(part if i % 2 else _SETTING.sub(_code_span, part) for i, part in enumerate(parts))


def _code_span(m: re.Match[str]) -> str:
    """A match as a code span, the sentence's full stop left outside it (a copied `kl_loss_type=k2.` is wrong)."""
    text = m.group(0)
    core = text.rstrip(".")
    return "`{s}`{stop}".format(s=core, stop=text[len(core):]) if core else text


def badge(target: str) -> str:
    """The coloured markdown badge of a gradient target, in the run's language."""
    colour, icon, word = GRADIENT_BADGES[target]
    return ":{c}-badge[:material/{i}: {w}]".format(c=colour, i=icon, w=_(word))


def gradient_words(target: str) -> str:
    """What a gradient target means for training, typeset and translated."""
    return typeset(_(GRADIENT_WORDS[target]))


def example_text(key: str) -> str:
    """The text of example ``key``, a key of :data:`EXAMPLES` (empty for "own")."""
    ex = EXAMPLES[key]
    return (ROOT / "data" / "doctor_examples" / ex.file).read_text(encoding="utf-8") if ex.file else ""


def upload_label() -> str:
    """The upload's label, with the doctor's own size limit (:data:`kl_core.doctor.parse.MAX_BYTES`)."""
    return _("A launch script, YAML, JSON or Python file (at most {size} KiB)").format(size=MAX_BYTES // 1024)


def release_error(release: str, exc: ValueError) -> str:
    """Why the release chosen under **Release** does not fit the text, and what to choose instead.

    ``release`` is a key of :data:`RELEASES`; ``exc`` the doctor's error, a
    :class:`kl_core.doctor.releases.ReleaseMismatch` naming the text's library and trainer.
    """
    label = RELEASES.get(release, release)
    era = next((e for e in eras() if e.id == release), None)
    lib, trainer = getattr(exc, "library", None), getattr(exc, "trainer", None)
    if era is None or lib is None:
        return _("**The doctor cannot read this text as {release}.** Choose Infer or Latest.").format(release=label)
    if era.library != lib:
        head = _("**{release} is not a release of {lib}, this text's library.**").format(release=label, lib=lib)
    else:
        head = _("**{release} covers {lib}'s `{era_trainer}` trainer, and this text is for its `{trainer}` "
                 "trainer.**").format(release=label, lib=lib, era_trainer=era.trainer, trainer=trainer)
    own = [RELEASES[e.id] for e in eras() if e.library == lib and e.trainer == trainer]
    if not own:
        return head + " " + _("Choose Infer or Latest.")
    return head + " " + ngettext("Choose Infer, Latest or {releases}.", "Choose Infer, Latest or one of {releases}.",
                                 len(own)).format(releases=_(", ").join(own))


def headline(d: Diagnosis) -> str:
    """One line over the card: the release, and how many KL terms where; or that the run stops before training,
    where the release refuses settings of the script or a start-up check of it fails (the summary under it says
    what the card describes then)."""
    if d.rejected:
        return _("{lib} {rel}: the run stops before training, on settings it does not accept").format(
            lib=d.library, rel=d.release)
    if "STARTUP_CHECK_FAILS" in d.codes:
        return _("{lib} {rel}: the run stops before training, at a start-up check").format(
            lib=d.library, rel=d.release)
    places = [_("the reward") if u.where == "reward" else _("the loss") for u in d.kl_uses]
    where = (_("{first} and {last}").format(first=_(", ").join(places[:-1]), last=places[-1]) if len(places) > 1
             else _(", ").join(places))
    if not d.kl_uses:
        return _("{lib} {rel}: no KL term").format(lib=d.library, rel=d.release)
    if len(d.kl_uses) == 1:
        return _("{lib} {rel}: one KL term, in {where}").format(lib=d.library, rel=d.release, where=where)
    return _("{lib} {rel}: {n} KL terms, in {where}").format(lib=d.library, rel=d.release, n=len(d.kl_uses),
                                                             where=where)


_KINDS = {"command": N_("a command"), "yaml": "YAML", "json": "JSON", "python": "Python"}


def read_line(d: Diagnosis) -> str:
    """How the input was read and which defaults filled the rest."""
    given = len(d.given)
    kind = _(_KINDS[d.kind]) if d.kind in _KINDS else d.kind
    trainer = "`{c}`".format(c=d.command) if d.command else _("{lib}'s `{t}`").format(
        lib=d.library, t=d.profile.trainer)
    return ngettext(
        "Read as {kind}: {trainer}. {given} of the {n} settings the card depends on is in your text; "
        "the others take the defaults of {lib} {rel}, read from that release's own files.",
        "Read as {kind}: {trainer}. {given} of the {n} settings the card depends on are in your text; "
        "the others take the defaults of {lib} {rel}, read from that release's own files.", given
    ).format(kind=kind, trainer=trainer, given=given, n=len(d.profile.relevant), lib=d.library, rel=d.release)


def use_title(d: Diagnosis, u: KLUse) -> str:
    """The heading of one KL term's card."""
    if u.setting:
        option = d.profile.written(u.setting, u.written) or render_changes(d.profile, d.kind, ((u.setting, u.written),))
    else:  # the row's settings as code (the crosswalk's setting column has English words); an older release's only
        lacking = lacking_settings(d.profile, u.entry)
        prefix = d.profile.prefix
        option = ", ".join(
            "{key}{cond}".format(key=k, cond=" " + c if c[:1] and c[:1] in "<>!=" else "=" + c)
            for k, c in u.entry.config if k.removeprefix(prefix) not in lacking)
    text = _("In the reward: `{option}` → {est}") if u.where == "reward" else _("In the loss: `{option}` → {est}")
    return text.format(option=option, est=u.estimator)


def use_facts(d: Diagnosis, u: KLUse) -> list[str]:
    """The card's facts, one markdown line each: coefficient, value, gradient, off-policy."""
    coef = "?" if u.coef is None else f"{u.coef:g}"
    if u.controller == "adaptive":
        ctrl = _("adaptive, target KL {t:g}, horizon {h:g}").format(t=u.target_kl or 0.0, h=u.horizon or 0.0)
    else:
        ctrl = _("fixed")
    facts = [
        _("**Coefficient** `{key}` = {coef} ({ctrl})").format(key=d.profile.spelled(u.coef_setting), coef=coef, ctrl=ctrl),
        _("**Its value estimates** {kl}").format(kl=typeset(message(u.entry.direction))),
        _("**Its expected gradient** {badge} {words}").format(
            badge=badge(u.gradient_target), words=gradient_words(u.gradient_target)),
    ]
    if u.gradient_target_off_policy is not None:
        text = (_("**In every optimizer step, on tokens from an older policy** {badge} {words}")
                if d.off_policy_every_step else _("**In later optimizer steps on the same batch** {badge} {words}"))
        facts.append(text.format(badge=badge(u.gradient_target_off_policy),
                                 words=gradient_words(u.gradient_target_off_policy)))
    if u.aggregation is not None:
        how = message(u.aggregation.name)
        if (flag := flag_left_off(d.profile, u.aggregation_setting, u.aggregation_value)) is not None:
            how = _("{name} (without `{flag}`)").format(name=how, flag=flag)
        elif u.aggregation_setting:
            how = "{name} (`{setting}`)".format(
                name=how, setting=render_changes(d.profile, d.kind, ((u.aggregation_setting, u.aggregation_value),)))
        facts.append(_("**Aggregated as** {how}: {meaning}").format(
            how=how, meaning=typeset(message(u.aggregation.coefficient))))
    else:
        facts.append(_("**Aggregated as** `{value}`, which {lib} {rel} does not define.").format(
            value=u.aggregation_value, lib=d.library, rel=d.release))
    return facts


def alternatives_frame(u: KLUse) -> pd.DataFrame:
    """Every option of this placement with its gradient, the one in use marked."""
    off_col = _("gradient off-policy")
    def word(target: str) -> str:
        return _(GRADIENT_BADGES[target][2]) if target in GRADIENT_BADGES else target

    rows = [{
        _("option"): opt,
        _("estimator"): est,
        _("gradient on-policy"): word(on),
        off_col: "" if off is None else word(off),
        _("in use"): opt == u.option,
    } for opt, est, on, off in u.alternatives]
    df = pd.DataFrame(rows)
    if all(r[off_col] == "" for r in rows):
        df = df.drop(columns=off_col)
    return df


def crosswalk_query(u: KLUse) -> dict[str, str]:
    """The approx_kl page's "Translate one option" link for this term: ``?lib=…&opt=…``."""
    return {"lib": u.entry.library, "opt": "{option} ({where})".format(option=u.option, where=u.where)}


def gradients_query(u: KLUse) -> dict[str, str] | None:
    """The Gradients page's link for this term, with its option highlighted (``?option=…``).

    None for a term whose option has no gradient (a logged metric).
    """
    from kl_core.gradients.expected import entry_name
    from lab.notes.gradients import OPTION_KEY

    if u.entry.grad_mode == "none":
        return None
    return {OPTION_KEY: entry_name(u.entry)}


#: Each warning code in plain words: the bold title of its box (the code itself is shown small beside it).
#: Each title must hold for every message the core gives with that code (see its ``_warn`` calls).
WARNING_TITLES: dict[str, str] = {
    "SETTING_REJECTED": N_("Settings the release refuses stop the run before training"),
    "KL_OFF": N_("A KL penalty that is switched off"),
    "KL_SETTING_UNUSED": N_("A KL setting that has no effect"),
    "ZERO_GRAD_LOSS": N_("The KL loss does not pull the policy back"),
    "ZERO_GRAD_REWARD": N_("The KL reward does not pull the policy back"),
    "FORWARD_KL_GRAD": N_("The gradient is the other KL direction's"),
    "MIXED_GRAD": N_("The gradient is neither KL's"),
    "KL_TWICE": N_("The KL is paid twice, in the reward and in the loss"),
    "CLAMP_HIDES_DRIFT": N_("A clamp hides the tokens that drift most"),
    "OFF_POLICY_UNCORRECTED": N_("Later steps on a batch bias the KL gradient"),
    "NEGATIVE_COEF": N_("A negative KL coefficient rewards drifting away"),
    "NONFINITE_COEF": N_("A KL coefficient that is not a finite number"),
    "UNKNOWN_OPTION": N_("A KL option this release does not have"),
    "NOT_LITERAL": N_("A value the doctor cannot read"),
    "LEGACY_TRAINER": N_("A trainer the current release no longer ships"),
    "SEQUENCE_LEVEL_KL_WEIGHT": N_("The KL's bias correction uses a whole-sequence weight"),
    "STARTUP_CHECK_FAILS": N_("A start-up check stops the run before training"),
}


#: The title of ``OFF_POLICY_UNCORRECTED`` when every optimizer step is off-policy, the first on each batch too
#: (:attr:`kl_core.doctor.diagnosis.Diagnosis.off_policy_every_step`): there are no "later steps" to blame.
EVERY_STEP_TITLE = N_("Off-policy steps bias the KL gradient")


def plain_title(code: str, d: Diagnosis | None = None) -> str:
    """A warning code in plain words, in the run's language (the code itself for a code not in the table).

    With the diagnosis ``d``, the off-policy title follows which steps are off-policy.
    """
    if code == "OFF_POLICY_UNCORRECTED" and d is not None and d.off_policy_every_step:
        return _(EVERY_STEP_TITLE)
    return _(WARNING_TITLES[code]) if code in WARNING_TITLES else code


def warning_title(w: DoctorWarning, d: Diagnosis | None = None) -> str:
    """The first lines of a warning box: its title in plain words, the code small beside it, then the core's text."""
    return "**{title}** :small[`{code}`]  \n{message}".format(
        title=plain_title(w.code, d), code=w.code, message=typeset(message(w.message)))


def fix_heading(codes: list[str], d: Diagnosis | None = None) -> str:
    """The line over a fix in the verdict card: what it removes, in plain words."""
    return _("**Change** · removes: {what}").format(what=_("; ").join(plain_title(c, d)
                                                                      for c in codes))


# ------------------------------------------------------------------ what each fix costs
_COST_OFF_POLICY = N_(
    "**Cost:** each batch of samples then feeds a single optimizer step instead of several, so the run makes "
    "fewer updates per rollout and spends more time generating for the same number of updates.")
_COST_ASYNC = N_(
    "**Cost:** the next rollout is no longer generated while the policy trains: each step waits for "
    "generation, so the run is slower.")
_COST_WEIGHT = N_(
    "**Trade-off:** each token's KL gradient is multiplied by the importance weight π_θ/π_old: exact "
    "in expectation, but noisier once the policy has moved away from the one that sampled the batch.")
_COST_SAME_VALUE = N_(
    "**Trade-off:** the logged value is the same estimator ({est}), so its curves stay comparable with earlier "
    "runs; only the gradient changes, so a coefficient tuned with the old gradient may need retuning.")
_COST_NEW_VALUE = N_(
    "**Trade-off:** the logged KL becomes {new} instead of {old}: its curves are not comparable with earlier "
    "runs, and a coefficient tuned with the old term may need retuning.")
_COST_ENABLE = N_(
    "**Trade-off:** a KL term holds the policy near the reference, so it also slows how far training can move it "
    "(the reason some recipes drop it), and it needs the reference model's log-probabilities for every token.")
_COST_UNUSED = N_(
    "**Trade-off:** this turns the KL term on. If you meant it off, delete the setting instead: training "
    "stays as it is.")
_COST_TWICE = N_(
    "**Trade-off:** the run keeps one KL term, so the total penalty is smaller; its coefficient was chosen "
    "alongside the other one, so watch the logged KL and raise it if the policy drifts further.")
_COST_NEGATIVE = N_(
    "**Trade-off:** none worth keeping: with the sign flipped the term holds the policy back instead of "
    "rewarding drift, so the run behaves differently from before.")
_COST_FINITE = N_(
    "**Trade-off:** none worth keeping: with a coefficient that is not a finite number the run cannot train at "
    "all, so any finite value is a change for the better; choose its size as for any KL coefficient.")
_COST_UNKNOWN = N_(
    "**Trade-off:** check that it is the option you meant: it is the nearest name this release knows, and "
    "each option has its own gradient (see the table of options above).")
_COST_REJECTED = N_(
    "**Trade-off:** none for the run, which cannot start as written. Check each change: a suggested name is the "
    "nearest one this release knows and may mean something else, and a removed setting no longer does what it "
    "was written for (the card above describes the run without it).")
_COST_SEQUENCE = N_(
    "**Trade-off:** this also makes the policy loss's importance weights per token (GRPO's) instead of per "
    "sequence (GSPO's).")


def _placement(d: Diagnosis, u: KLUse):  # -> kl_core.doctor.profiles.Placement | None
    for pl in d.profile.placements:
        if u.entry in pl.entries and pl.acts_on == u.where and pl.coef == u.coef_setting:
            return pl
    return None


def fix_cost(d: Diagnosis, w: DoctorWarning) -> str:
    """What the fix of warning ``w`` costs or trades away (:func:`_fix_cost`), and the release it needs, if any."""
    return " ".join(t for t in (_fix_cost(d, w), fix_requires(w)) if t)


def fix_requires(w: DoctorWarning) -> str:
    """The release the fix of ``w`` needs (:attr:`DoctorWarning.requires`), one markdown sentence, or ``""``."""
    if not (w.fix and w.requires):
        return ""
    req = w.requires
    if isinstance(req, Message) and "value" in req.params:  # the option as code, its '+' included
        as_code = "`" + str(req.params["value"]) + "`"
        req = Message(req.template, **{**req.params, "value": as_code})
    return typeset(_("**Needs:** {what}.").format(what=code_settings(message(req))))

#: The cost of a fix where the warning's code alone decides it; the other codes' costs depend on the settings the
#: fix changes (:func:`_fix_cost`).
_COST_BY_CODE: dict[str, str] = {
    "SETTING_REJECTED": _COST_REJECTED,
    "KL_OFF": _COST_ENABLE,
    "KL_SETTING_UNUSED": _COST_UNUSED,
    "KL_TWICE": _COST_TWICE,
    "NEGATIVE_COEF": _COST_NEGATIVE,
    "UNKNOWN_OPTION": _COST_UNKNOWN,
    "SEQUENCE_LEVEL_KL_WEIGHT": _COST_SEQUENCE,
}


def _fix_cost(d: Diagnosis, w: DoctorWarning) -> str:
    """What the fix of warning ``w`` costs or trades away, one markdown sentence (``""`` when ``w`` has no fix).

    Chosen by the warning's code and by which settings the fix changes: a batch setting (one optimizer step per
    batch), an importance-weight toggle, the KL option (same logged estimator or another), a switch.
    """
    if not w.fix:
        return ""
    keys = [k for k, _v in w.changes]
    if w.code == "NONFINITE_COEF":  # no KL term computed yet: the fix turns one on
        return typeset(_(_COST_ENABLE if w.kl_use is None else _COST_FINITE))
    if w.code in _COST_BY_CODE:
        return typeset(_(_COST_BY_CODE[w.code]))
    caution = next((c for c in d.profile.cautions if c.code == w.code and c.cost and c.fix[0] in keys), None)
    if caution is not None:  # a trap of the release, with its own words on the fix (crosswalk.toml)
        return typeset(message(caution.cost))
    off_keys = {r.fix[0] for r in d.profile.off_policy}
    if keys and all(k in off_keys for k in keys):
        parts = []
        if any("async" in k for k in keys):
            parts.append(_(_COST_ASYNC))
        if any("async" not in k for k in keys):
            parts.append(_(_COST_OFF_POLICY))
        return " ".join(parts)
    u = d.kl_uses[w.kl_use] if w.kl_use is not None else None
    pl = _placement(d, u) if u is not None else None
    if pl is not None and pl.option and pl.option in keys:
        new = dict(w.changes)[pl.option]
        entry = next((e for e in pl.entries if str(new) in e.names or str(new) == e.option), None)
        if entry is not None and entry.estimator == u.estimator:
            return _(_COST_SAME_VALUE).format(est=u.estimator)
        return _(_COST_NEW_VALUE).format(new=entry.estimator if entry is not None else new, old=u.estimator)
    if pl is not None and any(k in [t for t, _v in pl.toggles] for k in keys):
        return typeset(_(_COST_WEIGHT))
    if pl is not None and any(k in [s for s, _v in pl.switch] for k in keys):
        return _(_COST_TWICE)
    raise AssertionError(f"no cost sentence for {w.code} with {keys}")  # tests/lab: every code and fix kind


# ------------------------------------------------------------------ errors in the page's words
#: Core error templates that speak of the command line, and the page's words for them (same placeholders).
WEB_ERRORS: dict[str, str] = {
    "the doctor cannot tell which library this is for: no setting of "
    "{libraries} was found; pass --library verl, openrlhf or trl": N_(  # i18n: ok (the key: the core's English template, matched)
        "the doctor cannot tell which library this is for: no setting of {libraries} was found. Choose the "
        "library under **Library** above, or check that this is a launch script or config of a training run."),
    "this runs {script}, a script of its own, and its command line gives no setting the doctor "
    "knows ({flags}): its settings come from the script itself or a config it reads; give the "
    "doctor that file": N_(  # i18n: ok (the key: the core's English template, matched)
        "this runs {script}, a script of its own, and its command line gives no setting the doctor knows "
        "({flags}): its settings come from the script itself or a config it reads. Paste that file in the box "
        "or upload it."),
    "the Python builds its config with {built} on line {line}: its settings come from the command "
    "line or a YAML file given with --config, not from this file, and its docstring shows no launch "
    "command; give the doctor that command or YAML": N_(  # i18n: ok (the key: the core's English template, matched)
        "the Python builds its config with {built} on line {line}: its settings come from the command line or "
        "a YAML file the script is given, not from this file, and its docstring shows no launch command. Paste "
        "that command or YAML in the box."),
}


def error_text(exc: UnreadableInput) -> str:
    """Why the doctor can't read the input, in the page's words: its controls, never a command-line flag.

    The reason may sit inside the sentence that names the file ("“run.sh”: {why}", every upload and example):
    it is put in the page's words there too."""
    return message(_web_words(exc.user))


def _web_words(m: Any) -> Any:
    """``m`` with every Message whose template :data:`WEB_ERRORS` words for the page replaced, at any depth."""
    if not isinstance(m, Message):
        return m
    params = {k: _web_words(v) for k, v in m.params.items()}
    return Message(WEB_ERRORS.get(m.template, m.template), **params)


# ------------------------------------------------------------------ equations that fit a phone
_BREAK = re.compile(r",?\s*\\q?quad(?![A-Za-z])\s*")


def stacked(latex: str) -> str:
    r"""A formula whose parts are set side by side (``,\quad``, ``\qquad``, outside braces) stacked one per line.

    On a phone each part fits where the whole line did not; a formula with one part is returned as it is.
    """
    pieces, buf, depth, j = [], "", 0, 0
    while j < len(latex):
        c = latex[j]
        if depth == 0 and c in ",\\" and (m := _BREAK.match(latex, j)):
            pieces.append(buf)
            buf, j = "", m.end()
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        buf += c
        j += 1
    pieces = [p.strip() for p in [*pieces, buf] if p.strip()]
    if len(pieces) == 1:
        return latex
    return r"\begin{gathered}" + r" \\ ".join(pieces) + r"\end{gathered}"


def _era_caveat(entry: Any) -> bool:
    """Whether ``entry``'s caveat is an era's (``releases.toml`` entries), not the crosswalk row's of today."""
    today = next((e for e in CROSSWALK if (e.library, e.component, e.option, e.acts_on)
                  == (entry.library, entry.component, entry.option, entry.acts_on)), None)
    return today is not None and str(today.caveat) != str(entry.caveat)


def caveat(u: KLUse, d: Diagnosis | None = None) -> str:
    """The crosswalk's caveat of a KL term's option, in the run's language, typeset.

    With the diagnosis ``d`` of an older release: when the caveat names a setting that release does not have
    (TRL's ``use_bias_correction_kl`` before 0.26), a sentence says what it says of it holds for later releases.
    """
    text = typeset(message(u.entry.caveat))
    if d is None or _era_caveat(u.entry):
        return text  # an era's own caveat speaks of that era's releases ("These releases have no …")
    named = [k for k in lacking_settings(d.profile, u.entry)
             if re.search(r"(?<![\w.\-])" + re.escape(k) + r"(?![\w\-])", str(u.entry.caveat))]
    if named:
        text += " " + ngettext("{keys} is not a setting of {lib} {rel}: what this says of it holds for later "
                               "releases only.",
                               "{keys} are not settings of {lib} {rel}: what this says of them holds for later "
                               "releases only.", len(named)).format(
            keys=_(", ").join("`{k}`".format(k=k) for k in named), lib=d.library, rel=d.release)
    return text


def note_text(note: str) -> str:
    """One of the doctor's notes on how it read the input, in the run's language, typeset."""
    return typeset(message(note))


def fix_language(d: Diagnosis) -> str:
    """The code language to show a fix in."""
    return {"yaml": "yaml", "json": "json", "python": "python"}.get(d.kind, "bash")


def unknown_frame(d: Diagnosis) -> pd.DataFrame:
    """The keys the release does not know, with the nearest known key."""
    return pd.DataFrame([{_("key"): u.key, _("did you mean"): u.suggestion or ""} for u in d.unrecognised])


def settings_frame(d: Diagnosis) -> pd.DataFrame:
    """Every setting the card depends on: its value, and whether the text or the release set it."""
    rows = []
    for key in d.profile.relevant:
        value = d.settings.get(key)
        rows.append({
            _("setting"): key,
            _("value"): "" if value is None else json.dumps(value) if not isinstance(value, str) else value,
            # TRANSLATORS: column of the settings table: who set the value (your text or the release's default)
            pgettext("settings table", "from"): _("your text") if key in d.given else _("{lib} {rel} default").format(
                lib=d.library, rel=d.release),
        })
    return pd.DataFrame(rows)


def card_json(d: Diagnosis) -> str:
    """The card as the JSON of ``python -m kl_core doctor --json``."""
    return json.dumps(d.to_json(), indent=2, ensure_ascii=False)


def summary_lines(d: Diagnosis) -> list[str]:
    """One markdown line per KL term: where, option, what the value estimates, where the gradient pushes.

    Where the release refuses settings of the script, a first line says the run stops before training and that
    the lines after it describe the run without those settings; where a start-up check fails
    (``STARTUP_CHECK_FAILS``), a line says so, and that they describe the run once it passes.
    """
    lines = []
    if d.rejected:
        lines.append(ngettext("**The run stops before training:** {lib} {rel} does not accept {settings}. Without it:",
                              "**The run stops before training:** {lib} {rel} does not accept {settings}. Without them:",
                              len(d.rejected))
                     .format(lib=d.library, rel=d.release,
                             settings=_(", ").join("`{k}`".format(k=k) for k in d.rejected)))
    if "STARTUP_CHECK_FAILS" in d.codes:
        lines.append(_("**The run stops before training:** a start-up check of {lib} {rel} refuses these settings "
                       "together (the first warning says which). Once it passes:").format(lib=d.library,
                                                                                          rel=d.release))
    for u in d.kl_uses:
        option = u.written or u.option
        text = (_("**In the reward:** `{option}`{est} · its value estimates {kl} · its gradient {badge}")
                if u.where == "reward" else
                _("**In the loss:** `{option}`{est} · its value estimates {kl} · its gradient {badge}"))
        line = text.format(option=option, est="" if option == u.estimator else " ({e})".format(e=u.estimator),
                           kl=typeset(message(u.entry.direction)), badge=badge(u.gradient_target))
        if u.gradient_target_off_policy is not None:
            later = _("off-policy in every step {badge}") if d.off_policy_every_step else _("in later steps {badge}")
            line += " · " + later.format(badge=badge(u.gradient_target_off_policy))
        lines.append(line)
    if not d.kl_uses and "UNKNOWN_OPTION" in d.codes:
        return [*lines, _("**No KL term**: the release rejects the option value, so the run stops.")]
    if not d.kl_uses:
        return [*lines, _("**No KL term**: nothing ties the policy to its reference model.")]
    return lines


def fix_groups(d: Diagnosis) -> list[tuple[str, list[str]]]:
    """Each distinct fix, with the warning codes it removes, in the warnings' order."""
    groups: dict[str, list[str]] = {}
    for w in d.warnings:
        if w.fix:
            groups.setdefault(w.fix, []).append(w.code)
    return list(groups.items())


def fix_group_cost(d: Diagnosis, fix: str) -> str:
    """What one fix of :func:`fix_groups` costs: the distinct cost sentences of the warnings it removes."""
    fixed = [w for w in d.warnings if w.fix == fix]
    return " ".join(t for t in dict.fromkeys([*(_fix_cost(d, w) for w in fixed), *(fix_requires(w) for w in fixed)]) if t)


#: Why the doctor did not keep a change it tried, one clause per key of ``kl_core.doctor.diagnosis.REJECTIONS``
#: ("raises" is worded in :func:`no_fix_text`, by how many warnings the change raises).
_TRIED = {
    "stays": N_("`{change}` leaves it in place"),
    "no_term": N_("`{change}` removes it but leaves no KL term where it was"),
    "no_reverse_kl": N_("`{change}` switches on no KL term with the reverse-KL gradient"),
}


def no_fix_text(d: Diagnosis, w: DoctorWarning) -> str:
    """What to do about a warning no setting removes."""
    if w.code == "NOT_LITERAL":
        return _("Write the value itself where the config sets it, and the doctor can check it.")
    if w.code == "LEGACY_TRAINER":
        return _("Move to a trainer {lib} still ships; the card above describes the old one.").format(lib=d.library)
    parts = []
    if w.tried:  # what the doctor diagnosed and rejected, and why (kl_core.doctor.diagnosis._rejection)
        items = []
        for change, why, raised in w.tried:
            text = (ngettext("`{change}` removes it but raises {n} other warning ({titles})",
                             "`{change}` removes it but raises {n} other warnings ({titles})", len(raised))
                    if why == "raises" else _(_TRIED[why]))
            items.append(text.format(change=change.replace("\n", ", "), n=len(raised),
                                     titles=_("; ").join(plain_title(c, d) for c in raised)))
        parts.append(ngettext("The doctor tried {n} change and did not keep it: {items}.",
                              "The doctor tried {n} changes and kept none: {items}.",
                              len(items)).format(n=len(items), items=_("; ").join(items)))
    if w.needs:  # changes the release cannot make
        keys = _(", ").join("`{k}`".format(k=k) for k in w.needs)
        parts.append(ngettext("{lib} {rel} does not have {keys}, so none of the doctor's changes set it.",
                              "{lib} {rel} does not have {keys}, so none of the doctor's changes set them.",
                              len(w.needs)).format(keys=keys, lib=d.library, rel=d.release))
    if not parts:
        parts.append(_("The doctor has no change to try for this warning in {lib} {rel}.").format(
            lib=d.library, rel=d.release))
    return " ".join(parts)


def no_warnings_text(d: Diagnosis) -> str:
    """The verdict when the doctor finds nothing to warn about: every KL term has the reverse-KL gradient.

    A config without warnings has a KL term (none would be ``KL_OFF``), each with the reverse-KL gradient on-policy;
    off-policy steps, if the config has any, keep it too (otherwise ``OFF_POLICY_UNCORRECTED``).
    """
    if d.off_policy:
        return _("Nothing to change: every KL term has the reverse-KL gradient, on-policy and in the optimizer "
                 "steps that train on an older policy's tokens.")
    return _("Nothing to change: every KL term has the reverse-KL gradient, and the doctor finds no optimizer step "
             "that trains on an older policy's tokens.")


_PULL = {
    "reverse_kl": N_("The coloured line lies on the dashed reverse-KL line: this term pulls each token back as "
                     "the reverse KL does."),
    "forward_kl": N_(r"The coloured line follows the dotted forward-KL line, not the dashed reverse-KL one: it "
                     r"pushes $\pi_\theta$ to cover the reference, most strongly on tokens $\pi_\theta$ has all "
                     r"but dropped ($\log r > 0$)."),
    "zero": N_("Where the coloured line leaves the dashed reverse-KL line, this term's gradient is not the KL "
            "penalty's."),
    "mixed": N_("The coloured line follows neither KL's line: on average its pull is neither KL's gradient."),
}
#: The same where a clamp bites on the chart: the line follows its KL only until then (:func:`clamp_words` says where,
#: and what the line does past it).
_PULL_CLAMPED = {
    **_PULL,
    "reverse_kl": N_("Until the clamp bites, the coloured line lies on the dashed reverse-KL line: this term pulls "
                     "each token back as the reverse KL does."),
    "forward_kl": N_(r"Until the clamp bites, the coloured line follows the dotted forward-KL line, not the dashed "
                     r"reverse-KL one: it pushes $\pi_\theta$ to cover the reference, harder the further "
                     r"$\pi_\theta$ has fallen below it ($\log r > 0$)."),
}
#: What the pull does past a clamp, by the entry's gradient mode: through autograd torch.clamp passes no gradient
#: (the pull drops to 0); a detached reward's pull is its clamped value (flat at the clamp's level).
CLAMP_ZEROES = frozenset({"autograd"})


def _logr(value: float) -> str:
    """A log-ratio for inside TeX (KaTeX sets the ASCII hyphen as a minus sign)."""
    return format(value, ".2f")


def _shown_clamps(below: float | None, above: float | None, t_max: float = PULL_T_MAX) -> list[float]:
    return [v for v in (below, above) if v is not None and abs(v) < t_max]


#: Where the clamp bites: on both sides at ±b, on two sides, or on one side past or below one value.
_CLAMP_WHERE = {
    "both": N_("Past $|\\log r| = {b}$ the clamp bites."),
    "two": N_("Below $\\log r = {lo}$ and past $\\log r = {hi}$ the clamp bites."),
    "past": N_("Past $\\log r = {value}$ the clamp bites."),
    "below": N_("Below $\\log r = {value}$ the clamp bites."),
}
#: What the line does there: goes flat (a clamped value), or with ``zero`` drops to 0 (autograd passes
#: no gradient through a clamp).
_CLAMP_EFFECT = {
    False: N_("There the line goes flat: larger drifts are pulled no harder."),
    True: N_("There the clamp passes no gradient, so the line drops to zero: larger drifts are not pulled at all."),
}


def clamp_words(below: float | None, above: float | None, t_max: float = PULL_T_MAX, *, zero: bool = False) -> str:
    r"""Where the pull chart's line leaves its course (``kl_core.doctor.diagnosis.clamp_sides``), with a leading space; or "".

    Says on which side of the chart the clamp bites, and where it bites only off the chart
    (:math:`|\log r| \ge` ``t_max``).  The log-ratio is the chart's,
    :math:`\log r = \log\pi_\mathrm{ref}(x) - \log\pi_\theta(x)` (``lab.notation``).  Past the clamp the
    line goes flat (a clamped value, the pull no harder), or with ``zero`` drops to 0 (a clamp in the autograd
    graph passes no gradient: no pull at all).
    """
    shown = _shown_clamps(below, above, t_max)
    off = [v for v in (below, above) if v is not None and abs(v) >= t_max]
    if len(shown) == 2:
        where = "both" if math.isclose(-shown[0], shown[1], rel_tol=1e-9) else "two"
    elif len(shown) == 1:
        where = "past" if shown[0] > 0 else "below"
    else:
        return ""
    text = _(_CLAMP_WHERE[where]).format(b=_logr(shown[-1]), lo=_logr(shown[0]), hi=_logr(shown[-1]),
                                         value=_logr(shown[0])) + " " + _(_CLAMP_EFFECT[zero])
    if len(shown) == 1:
        if off:
            text += " " + (_("On the other side it bites only below $\\log r = {far}$, off the chart.")
                           if off[0] < 0 else
                           _("On the other side it bites only past $\\log r = {far}$, off the chart.")
                           ).format(far=_logr(off[0]))
        else:
            text += " " + _("On the other side it never bites.")
    return " " + text


def _clamp_on_chart(u: KLUse) -> bool:
    """The term's pull goes through its clamp (autograd or a score form), and the clamp bites on the chart."""
    return u.entry.grad_mode in ("autograd", "score", "score_current") and bool(_shown_clamps(*clamp_sides(u.entry)))


def pull_caption(u: KLUse) -> str:
    """What to look at in the pull chart of one KL term."""
    sides = clamp_sides(u.entry)
    text = _((_PULL_CLAMPED if _clamp_on_chart(u) else _PULL)[u.gradient_target])
    if u.entry.grad_mode in ("autograd", "score", "score_current"):
        text += clamp_words(*sides, zero=u.entry.grad_mode in CLAMP_ZEROES)
    if _clamp_on_chart(u) and u.clamp_from:  # an era whose first releases have no clamp (OpenRLHF before 0.8.6)
        text += " " + (_("The clamp is there from {first} on; earlier releases have none: their pull is the thin "
                         "dashed line, which carries on past the clamp's edge.") if _unclamped_visible(u) else
                       _("The clamp is there from {first} on; earlier releases have none: past the clamp's edge "
                         "their pull carries on, off the chart.")).format(first=u.clamp_from)
    if u.entry.acts_on == "reward":
        text += " " + _("In the reward the pull is the detached value itself, through the policy-gradient term.")
    return text


@functools.lru_cache(maxsize=64)
def _pull_curve(entry: Any) -> PullCurve:  # a CrosswalkEntry (hashable, frozen)
    """The core's pull curve of one crosswalk row, kept: the caption and the legend ask for it on every rerun."""
    return pull_curve(entry)


def _unclamped_visible(u: KLUse) -> bool:
    """Somewhere on the pull chart the term's pull without its clamps differs from it and is inside the plot."""
    curve = _pull_curve(u.entry)
    if curve.unclamped is None:
        return False
    apart = ~np.isclose(curve.option, curve.unclamped, rtol=1e-9, atol=1e-12)
    return bool(np.any(apart & (np.abs(curve.unclamped) <= Y_LIMIT)))


def unclamped_label(u: KLUse) -> str | None:
    """Legend text of the term's pull in the releases of its era before the clamp came in, where the chart shows
    it apart from the clamped line (else None: no such line)."""
    if not (_clamp_on_chart(u) and u.clamp_from and _unclamped_visible(u)):
        return None
    return _("{option} ({where}) before {first}: no clamp").format(option=u.option, where=u.where, first=u.clamp_from)


def release_line(d: Diagnosis) -> str:
    """Which release the card describes, and why (empty when the library has one release only)."""
    if not d.release_why:
        return ""
    return typeset(_("**Release:** {lib} {rel}, because {why}.").format(
        lib=d.library, rel=d.release, why=code_settings(message(d.release_why))))


def other_release_lines(d: Diagnosis) -> list[str]:
    """What the other release makes of the same script, and what changed between them (typeset)."""
    lines = [typeset(code_settings(message(other_release_words(o)))) for o in d.also]
    if d.also and d.changed:
        lines.append(typeset(_("What changed: {what}.").format(what=code_settings(message(d.changed).rstrip(".")))))
    return lines
