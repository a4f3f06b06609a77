r"""The doctor's KL card, as text (``python -m kl_core doctor``) and as Markdown (``--format md``).

One reading of a :class:`~kl_core.doctor.diagnosis.Diagnosis` for both: first, where the release
refuses settings of the script (:attr:`~kl_core.doctor.diagnosis.Diagnosis.rejected`) or a start-up check
of it fails (``STARTUP_CHECK_FAILS``), that the run stops before training and what the rest describes; then every KL term with
where it acts, its option as the script spells it, its estimator, coefficient and controller,
the KL its value estimates, its exact gradient class and its aggregation over tokens; then
other releases, off-policy steps, the warnings with their fixes, the keys the release does
not know, and notes.  Every fact and word on it is the diagnosis's; this module only lays
them out (the sources are those of :mod:`kl_core.doctor.diagnosis`).
"""

from __future__ import annotations

import textwrap

from kl_core.doctor.diagnosis import (
    GRADIENT_WORDS,
    Diagnosis,
    KLUse,
    flag_left_off,
    no_fix_words,
    other_release_words,
    render_changes,
)

__all__ = ["WIDTH", "card_lines", "card_markdown"]

#: The text card's line width.
WIDTH = 100


def _wrap(text: str, indent: str, hang: int = 2) -> list[str]:
    """Wrapped lines; continuation lines indented ``hang`` more (under a label's text).

    Never at a hyphen: a setting or value (``seq-mean-token-sum-norm``, ``mini-batch``) stays whole, to copy.
    """
    lines = textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + " " * hang,
                          break_on_hyphens=False)
    return lines or [indent]


def _aggregation_how(d: Diagnosis, u: KLUse, code: str = "") -> str:
    """How a term is aggregated, for both cards: the mode's name and the setting that chose it (``code``
    wraps the setting: a backtick in Markdown), or that the setting's value is not a mode of the release."""
    if u.aggregation is None:
        if u.aggregation_setting:
            return f"{code}{u.aggregation_setting}={u.aggregation_value}{code}: not a mode the release defines"
        return "—"
    if not u.aggregation_setting:
        return str(u.aggregation.name)
    if (flag := flag_left_off(d.profile, u.aggregation_setting, u.aggregation_value)) is not None:
        return f"{u.aggregation.name} (without {code}{flag}{code})"
    setting = render_changes(d.profile, d.kind, ((u.aggregation_setting, u.aggregation_value),))
    return f"{u.aggregation.name} ({code}{setting}{code})"


def _stops(d: Diagnosis) -> str:
    """The card's first line where the release refuses settings of the script: the run stops before training."""
    shown = ", ".join(d.rejected[:4]) + (f" (+{len(d.rejected) - 4})" if len(d.rejected) > 4 else "")
    return (f"The run stops before training: {d.library} {d.release} does not accept {shown} (SETTING_REJECTED). "
            "What follows describes the run without those settings.")


def _check_stops(d: Diagnosis) -> list[str]:
    """The card's first lines where a start-up check of the release refuses settings together (STARTUP_CHECK_FAILS)."""
    return [f"The run stops before training (STARTUP_CHECK_FAILS): {w.message} What follows describes the run once "
            "the check passes." for w in d.warnings if w.code == "STARTUP_CHECK_FAILS"]


def _no_kl_term(d: Diagnosis) -> str:
    """The card's line where the script has no KL term."""
    if d.rejected:
        return "Without it: no KL term." if len(d.rejected) == 1 else "Without them: no KL term."
    if "UNKNOWN_OPTION" in d.codes:
        return "No KL term: the release rejects an option value, so the run stops (UNKNOWN_OPTION)."
    if "NONFINITE_COEF" in d.codes:
        return ("No KL term: the release computes none for a coefficient that is not a finite number, but that "
                "coefficient still makes the loss or the rewards NaN (NONFINITE_COEF).")
    return "No KL term."


def _option_text(d: Diagnosis, u: KLUse) -> str:
    """A KL term's option as written in the script's syntax, or the crosswalk's setting."""
    if not u.setting:
        return u.entry.setting
    text = d.profile.written(u.setting, u.written) or render_changes(d.profile, d.kind, ((u.setting, u.written),))
    return text + " (release default)" if u.setting in u.defaults_used else text


def _coef_text(u: KLUse, controller: str) -> str:
    """A KL term's coefficient and, in brackets, its controller (and whether it is the default)."""
    coef = "?" if u.coef is None else f"{u.coef:g}"
    default = ", release default" if u.coef_setting in u.defaults_used else ""
    return f"{coef} ({controller}{default})"


def card_lines(d: Diagnosis) -> list[str]:
    """The KL card as text lines.

    Parameters
    ----------
    d : Diagnosis
        A diagnosis (:func:`kl_core.doctor.diagnosis.diagnose`).

    Returns
    -------
    list of str
    """
    prof = d.profile
    out = [f"{prof.library} {prof.release} ({prof.trainer}): settings not given take this release's defaults"]
    if d.release_why:
        out += _wrap(f"release: {d.release_why}", "", 9)
    if d.command:
        out.append(f"read: {d.command}")
    out.append("")
    if d.rejected:
        out += [*_wrap(_stops(d), ""), ""]
    for line in _check_stops(d):
        out += [*_wrap(line, ""), ""]
    if not d.kl_uses:
        out += [*_wrap(_no_kl_term(d), ""), ""]
    for i, u in enumerate(d.kl_uses, 1):
        e = u.entry
        out.append(f"KL term {i}: in the {u.where}")
        out.append(f"  option       {_option_text(d, u)}  ->  {e.estimator} (crosswalk row {u.crosswalk_name})")
        out.append("  computes")
        out += [f"      {ln}" for ln in u.library_formula.strip("\n").split("\n")]
        ctrl = u.controller
        if u.controller == "adaptive":
            ctrl += f", target KL {u.target_kl:g}, horizon {u.horizon:g}"
        out.append(f"  coefficient  {prof.spelled(u.coef_setting)} = {_coef_text(u, ctrl)}")
        out.append(f"  value        estimates {e.direction}")
        grad = f"{u.gradient_target}: {GRADIENT_WORDS[u.gradient_target]}"
        out += _wrap(f"gradient     {grad}", "  ", 13)
        if u.gradient_target_off_policy is not None:
            when = ("in every optimizer step (the tokens come from an older policy)" if d.off_policy_every_step
                    else "in later optimizer steps on the same batch")
            out += _wrap(f"off-policy   {u.gradient_target_off_policy} {when}", "  ", 13)
        if u.aggregation is not None:
            out += _wrap(f"aggregation  {_aggregation_how(d, u)}: {u.aggregation.coefficient}", "  ", 13)
        else:
            out.append(f"  aggregation  {_aggregation_how(d, u)}")
        out += _wrap(f"caveat       {e.caveat}", "  ", 13)
        alts = ", ".join(f"{o} {t}" for o, _, t, _ in u.alternatives if o != e.option)
        if alts:
            out += _wrap(f"other options here (on-policy gradient): {alts}", "  ")
        out.append("")
    if d.also:
        out.append("Other release:")
        for o in d.also:
            out += _wrap(str(other_release_words(o)), "  ")
        if d.changed:
            out += _wrap(f"What changed: {d.changed}", "  ")
        out.append("")
    if d.off_policy:
        out.append("Off-policy steps:")
        for why in d.off_policy:
            out += _wrap(why, "  ")
        out.append("")
    if d.warnings:
        out.append("Warnings:")
        for w in d.warnings:
            out += _wrap(f"{w.code}: {w.message}", "  ")
            if w.fix:
                fix = w.fix.split("\n")
                out.append(f"    fix: {fix[0]}")
                out += [f"         {ln}" for ln in fix[1:]]
                if w.requires:
                    out += _wrap(f"needs: {w.requires}", "    ")
            else:
                out += _wrap(f"no fix: {no_fix_words(d, w)}", "    ")
        out.append("")
    if d.unrecognised:
        out.append(f"Not settings of {prof.library} {prof.release}:")
        for k in d.unrecognised:
            out.append(f"  {k.key}" + (f"  (did you mean {k.suggestion}?)" if k.suggestion else ""))
        out.append("")
    if d.notes:
        out.append("Notes:")
        for n in d.notes:
            out += _wrap(n, "  ")
    while out and out[-1] == "":
        out.pop()
    return out


def card_markdown(d: Diagnosis, title: str | None = None) -> list[str]:
    """The KL card as Markdown, to paste into a pull request or a chat.

    Parameters
    ----------
    d : Diagnosis
        A diagnosis (:func:`kl_core.doctor.diagnosis.diagnose`).
    title : str, optional
        A heading (the file's name).

    Returns
    -------
    list of str
    """
    prof = d.profile
    out = [f"### KL card: {title}" if title else "### KL card", "",
           f"**{prof.library} {prof.release}** ({prof.trainer}); settings not given take this release's defaults."]
    if d.release_why:
        out.append(f"Release: {d.release_why}.")
    if d.command:
        out.append(f"Read: `{d.command}`")
    out.append("")
    for line in [_stops(d)] * bool(d.rejected) + _check_stops(d):
        head, colon, rest = line.partition(":")
        out += [f"**{head}{colon}**{rest}", ""]
    if not d.kl_uses:
        head, colon, rest = _no_kl_term(d).partition(":")
        out += [f"**{head}{colon}**{rest}", ""]
    else:
        out += ["| | where | option | estimator | coefficient | aggregated as | value estimates | gradient |",
                "|---|---|---|---|---|---|---|---|"]
        for i, u in enumerate(d.kl_uses, 1):
            out.append(f"| {i} | {u.where} | `{_option_text(d, u)}` | {u.estimator} | {_coef_text(u, u.controller)} | "
                       f"{_aggregation_how(d, u, '`')} | {u.entry.direction} | "
                       f"**{u.gradient_target}**: {GRADIENT_WORDS[u.gradient_target]} |")
        out.append("")
    if d.also:
        out.append("**Other release**")
        out += [f"- {other_release_words(o)}" for o in d.also]
        if d.changed:
            out.append(f"- What changed: {d.changed}")
        out.append("")
    if d.warnings:
        out.append("**Warnings**")
        for w in d.warnings:
            lines = w.fix.splitlines() if w.fix else []  # one change a line (a YAML's, each refused setting's)
            after = f" Fix: `{'; '.join(' '.join(ln.split()) for ln in lines)}`" if w.fix else \
                f" No fix: {no_fix_words(d, w)}"
            after += f" Needs: {w.requires}." if w.requires else ""
            out.append(f"- `{w.code}`: {w.message}{after}")
        out.append("")
    if d.unrecognised:
        keys = ", ".join(f"`{k.key}`" + (f" (did you mean `{k.suggestion}`?)" if k.suggestion else "")
                         for k in d.unrecognised)
        out += [f"**Not settings of {prof.library} {prof.release}:** {keys}", ""]
    if d.notes:
        out.append("**Notes**")
        out += [f"- {n}" for n in d.notes]
    while out and out[-1] == "":
        out.pop()
    return out
