"""What the "Config doctor" page says: the card, the warnings, the tables (no streamlit).

Every sentence is composed from a :class:`kl_core.doctor.diagnosis.Diagnosis`; the page
only lays it out.  Sentences are whole, with named placeholders, ready for
translation.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kl_core.doctor.diagnosis import (
    GRADIENT_WORDS,
    PULL_T_MAX,
    Diagnosis,
    DoctorWarning,
    KLUse,
    clamp_sides,
    other_release_words,
    render_changes,
)
from kl_core.doctor.releases import eras
from lab.i18n import N_, _, message, pgettext

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
    "pull_caption",
    "read_line",
    "settings_frame",
    "summary_lines",
    "unknown_frame",
    "use_facts",
    "use_title",
    "warning_title",
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
RELEASES: dict[str, str] = {"auto": N_("Infer"), "latest": N_("Latest"),
                            **{e.id: "{lib} {label}".format(lib=e.library, label=e.label) for e in eras()}}

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
    r"|\b[A-Za-z_][A-Za-z0-9_]+(?:\.[a-z_][a-z0-9_]+)+(?:=[^\s,;:)（），；。]+)?"  # a dotted key, key=value
    r"|\b[a-z]+_[a-z0-9_]+(?:=[^\s,;:)（），；。]+)?"  # a snake_case name
)


def code_settings(text: str) -> str:
    """Settings, flags and option names in a sentence as code spans (``--init_kl_coef``, ``a.b=True``).

    Code spans already there stay as they are; so does the rest of the sentence.
    """
    parts = text.split("`")
    return "`".join(part if i % 2 else _SETTING.sub(lambda m: "`{s}`".format(s=m.group(0)), part)
                    for i, part in enumerate(parts))


def badge(target: str) -> str:
    """The coloured markdown badge of a gradient target, in the run's language."""
    colour, icon, word = GRADIENT_BADGES[target]
    return ":{c}-badge[:material/{i}: {w}]".format(c=colour, i=icon, w=_(word))


def gradient_words(target: str) -> str:
    """What a gradient target means for training, typeset and translated."""
    return typeset(_(GRADIENT_WORDS[target]))


def example_text(key: str) -> str:
    """The text of example ``key`` (empty for "own").

    Parameters
    ----------
    key : str
        A key of :data:`EXAMPLES`.

    Returns
    -------
    str
    """
    ex = EXAMPLES[key]
    return (ROOT / "data" / "doctor_examples" / ex.file).read_text(encoding="utf-8") if ex.file else ""


def headline(d: Diagnosis) -> str:
    """One line over the card: the release, and how many KL terms where."""
    where = _(", ").join(_("the reward") if u.where == "reward" else _("the loss") for u in d.kl_uses)
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
    return _(
        "Read as {kind}: {trainer}. {given} of the {n} settings the card depends on are in your text; "
        "the others take the defaults of {lib} {rel}, read from that release's own files."
    ).format(kind=kind, trainer=trainer, given=given, n=len(d.profile.relevant), lib=d.library, rel=d.release)


def use_title(d: Diagnosis, u: KLUse) -> str:
    """The heading of one KL term's card."""
    if u.setting:
        option = render_changes(d.profile, d.kind, ((u.setting, u.written),))
    else:
        option = u.entry.setting
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
        _("**Coefficient** `{key}` = {coef} ({ctrl})").format(key=u.coef_setting, coef=coef, ctrl=ctrl),
        _("**Its value estimates** {kl}").format(kl=typeset(message(u.entry.direction))),
        _("**Its expected gradient** {badge} {words}").format(
            badge=badge(u.gradient_target), words=gradient_words(u.gradient_target)),
    ]
    if u.gradient_target_off_policy is not None:
        facts.append(_("**In later optimizer steps on the same batch** {badge} {words}").format(
            badge=badge(u.gradient_target_off_policy), words=gradient_words(u.gradient_target_off_policy)))
    if u.aggregation is not None:
        how = message(u.aggregation.name)
        if u.aggregation_setting:
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


def warning_title(w: DoctorWarning) -> str:
    """The bold first words of a warning box."""
    return "**{code}** · {message}".format(code=w.code, message=typeset(message(w.message)))


def caveat(u: KLUse) -> str:
    """The crosswalk's caveat of a KL term's option, in the run's language, typeset."""
    return typeset(message(u.entry.caveat))


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
    """One markdown line per KL term: where, option, what the value estimates, where the gradient pushes."""
    lines = []
    for u in d.kl_uses:
        option = u.written or u.option
        text = (_("**In the reward:** `{option}`{est} · its value estimates {kl} · its gradient {badge}")
                if u.where == "reward" else
                _("**In the loss:** `{option}`{est} · its value estimates {kl} · its gradient {badge}"))
        line = text.format(option=option, est="" if option == u.estimator else " ({e})".format(e=u.estimator),
                           kl=typeset(message(u.entry.direction)), badge=badge(u.gradient_target))
        if u.gradient_target_off_policy is not None:
            line += " · " + _("in later steps {badge}").format(badge=badge(u.gradient_target_off_policy))
        lines.append(line)
    return lines or [_("**No KL term**: nothing ties the policy to its reference model.")]


def fix_groups(d: Diagnosis) -> list[tuple[str, list[str]]]:
    """Each distinct fix, with the warning codes it removes, in the warnings' order."""
    groups: dict[str, list[str]] = {}
    for w in d.warnings:
        if w.fix:
            groups.setdefault(w.fix, []).append(w.code)
    return list(groups.items())


def no_fix_text(d: Diagnosis, w: DoctorWarning) -> str:
    """What to do about a warning no setting removes."""
    if w.code == "NOT_LITERAL":
        return _("Write the value itself where the config sets it, and the doctor can check it.")
    if w.code == "LEGACY_TRAINER":
        return _("Move to a trainer {lib} still ships; the card above describes the old one.").format(lib=d.library)
    return _("No setting of {lib} {rel} removes this one.").format(lib=d.library, rel=d.release)


_PULL = {
    "reverse_kl": N_("The coloured line lies on the black one: this term pulls each token back as the reverse "
                     "KL does."),
    "forward_kl": N_(r"The coloured line follows the grey forward-KL line, not the black reverse-KL one: it "
                     r"pushes $\pi_\theta$ to cover the reference, most strongly on tokens $\pi_\theta$ has all "
                     r"but dropped ($t > 0$)."),
    "zero": N_("Where the coloured line leaves the black one, this term's gradient is not the KL penalty's."),
    "mixed": N_("The coloured line follows neither KL's line: on average its pull is neither KL's gradient."),
}


def _t(t: float) -> str:
    return format(t, ".2f").replace("-", "−")


def clamp_words(below: float | None, above: float | None, t_max: float = PULL_T_MAX) -> str:
    """Where the pull chart's line goes flat (``kl_core.doctor.diagnosis.clamp_sides``), with a leading space; or "".

    Says on which side of the chart the clamp bites, and where it bites only off the chart (|t| ≥ t_max).
    """
    shown = [t for t in (below, above) if t is not None and abs(t) < t_max]
    off = [t for t in (below, above) if t is not None and abs(t) >= t_max]
    if len(shown) == 2 and math.isclose(-shown[0], shown[1], rel_tol=1e-9):
        return " " + _("Past |t| = {b} the clamp bites: the line goes flat, and larger drifts are pulled no "
                       "harder.").format(b=_t(shown[1]))
    if len(shown) == 2:
        return " " + _("Below t = {lo} and past t = {hi} the clamp bites: the line goes flat, and larger "
                       "drifts are pulled no harder.").format(lo=_t(shown[0]), hi=_t(shown[1]))
    if len(shown) == 1:
        (t,) = shown
        text = (_("Past t = {t} the clamp bites: the line goes flat, and larger drifts are pulled no harder.")
                if t > 0 else
                _("Below t = {t} the clamp bites: the line goes flat, and larger drifts are pulled no harder.")
                ).format(t=_t(t))
        if off:
            text += " " + (_("On the other side it bites only below t = {far}, off the chart.") if off[0] < 0 else
                           _("On the other side it bites only past t = {far}, off the chart.")).format(far=_t(off[0]))
        else:
            text += " " + _("On the other side it never bites.")
        return " " + text
    return ""


def pull_caption(u: KLUse) -> str:
    """What to look at in the pull chart of one KL term."""
    text = _(_PULL[u.gradient_target])
    if u.entry.grad_mode in ("autograd", "score", "score_current"):
        text += clamp_words(*clamp_sides(u.entry))
    if u.entry.acts_on == "reward":
        text += " " + _("In the reward the pull is the detached value itself, through the policy-gradient term.")
    return text


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
