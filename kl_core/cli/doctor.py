r"""The ``doctor`` command: ``python -m kl_core doctor FILE|-... [--library …] [--release …] [--json | --format md] [--fail-on CODE,...]``.

Reads a training config without running it: a verl launch script (Hydra
overrides) or YAML, an OpenRLHF ``train_ppo_ray`` command, or a TRL GRPO/RLOO
config as YAML, JSON, a ``trl grpo``/``trl rloo`` command or Python holding a
``GRPOConfig(...)`` / ``RLOOConfig(...)`` call (``-`` reads standard input).
Prints the KL card (:func:`kl_core.doctor.diagnosis.diagnose`): every KL term with where
it acts, its option and estimator, coefficient and controller, the KL its value
estimates, its exact gradient class and its aggregation over tokens; then the
warnings, each with the setting to change; the keys the release does not know;
and the release whose defaults were assumed.

``--release`` picks the release to describe (``latest`` or an older era such as
``openrlhf-0.10.1``, ``verl-0.3``, ``trl-grpo-0.18``; inferred from the text by
default).  ``--format md`` prints the card as Markdown.  ``--fail-on CODE,...``
exits with 1 when a card has one of those warnings; several files may be given
(the ``kl-doctor`` pre-commit hook passes the changed ones), and then one that
cannot be read is reported and skipped.

``--json`` prints one object: ``library`` (``"verl"``, ``"OpenRLHF"`` or
``"TRL"``), ``release``, ``trainer``, ``input``, ``kl_uses`` (each with
``where``, ``option``, ``estimator``, ``coef``, ``controller``, ``target_kl``,
``gradient_target`` and more), ``warnings`` (``code``, ``message``, ``fix``, and
for a warning without a fix ``tried`` and ``needs``),
``unrecognised`` (keys), ``suggestions``, ``off_policy``, ``defaults_assumed``,
``notes``, ``release_why``, ``also`` and ``changed``.

Unreadable input (binary, too large, invalid YAML/JSON/Python, a YAML tag, no
known library, a trainer the doctor does not cover) gives one line on stderr
and exit code 2; with ``--json`` it gives ``{"error": …, "code": "unreadable"}``
(or ``"bad_argument"``) on stdout, with the same exit code.  This module imports
nothing heavy until the command runs.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; Y. Tang and R. Munos, "On a few pitfalls
in KL divergence gradient estimation for RL", arXiv:2506.09477.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kl_core.cli._common import Command

__all__ = ["card_lines", "card_markdown", "register", "run_doctor"]



class _DoctorLibraries:
    """The libraries the doctor has a profile for, lower-cased, read on first use.

    argparse asks for them only to check a ``--library`` given or to print the
    doctor's help, so ``python -m kl_core --help`` still reads no profile.
    """

    def _names(self) -> tuple[str, ...]:
        from kl_core.doctor.profiles import profiles

        return tuple(dict.fromkeys(p.library.lower() for p in profiles()))

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())


_LIBRARIES = _DoctorLibraries()
_WIDTH = 100


def _arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("file", metavar="FILE|-", nargs="+",
                    help="the config or launch script (several for a pre-commit hook); - reads standard input")
    sp.add_argument("--library", type=str.lower, choices=_LIBRARIES, metavar="LIBRARY",  # a metavar: argparse
                    help="%(choices)s (default: detected from the text)")  # lists choices only for help
    sp.add_argument("--release", metavar="RELEASE",
                    help="the release to describe: latest, or an older era (openrlhf-0.10.1, verl-0.3, "
                         "trl-grpo-0.18); default: inferred from the settings the text uses")
    sp.add_argument("--json", action="store_true", help="print one JSON object (a list of them for several files)")
    sp.add_argument("--format", choices=("text", "md"), default="text",
                    help="text (default) or md: the card as Markdown, to paste into a pull request or a chat")
    sp.add_argument("--fail-on", metavar="CODE,...", dest="fail_on",
                    help="exit with code 1 when a card has one of these warning codes (e.g. FORWARD_KL_GRAD,KL_TWICE)")


def _read(path: str) -> tuple[bytes, str | None]:
    """At most MAX_BYTES + 1 bytes of the input; a larger input is refused with its real size."""
    from kl_core.doctor.parse import MAX_BYTES, too_large

    def rest(fh: Any, got: int) -> int:  # count the remainder without keeping it
        while chunk := fh.read(1 << 20):
            got += len(chunk)
        return got

    if path == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise too_large(rest(sys.stdin.buffer, len(data)))
        return data, None
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
            if len(data) > MAX_BYTES:
                raise too_large(rest(fh, len(data)))
            return data, p.name
    except OSError as exc:
        raise ValueError(f"file {path!r} cannot be read: {exc.strerror or exc}") from None


def _wrap(text: str, indent: str, hang: int = 2) -> list[str]:
    """Wrapped lines; continuation lines indented ``hang`` more (under a label's text)."""
    lines = textwrap.wrap(text, _WIDTH, initial_indent=indent, subsequent_indent=indent + " " * hang)
    return lines or [indent]


def _no_kl_term(d: Any) -> str:
    """The card's line where the script has no KL term."""
    if "UNKNOWN_OPTION" in d.codes:
        return "No KL term: the release rejects an option value, so the run stops (UNKNOWN_OPTION)."
    return "No KL term."


def _option_text(d: Any, u: Any) -> str:
    """A KL term's option as written in the script's syntax, or the crosswalk's setting."""
    from kl_core.doctor.diagnosis import render_changes

    if not u.setting:
        return u.entry.setting
    text = render_changes(d.profile, d.kind, ((u.setting, u.written),))
    return text + " (release default)" if u.setting in u.defaults_used else text


def _coef_text(u: Any, controller: str) -> str:
    """A KL term's coefficient and, in brackets, its controller (and whether it is the default)."""
    coef = "?" if u.coef is None else f"{u.coef:g}"
    default = ", release default" if u.coef_setting in u.defaults_used else ""
    return f"{coef} ({controller}{default})"


def card_lines(d: Any) -> list[str]:
    """The KL card as text lines.

    Parameters
    ----------
    d : kl_core.doctor.diagnosis.Diagnosis
        A diagnosis.

    Returns
    -------
    list of str
    """
    from kl_core.doctor.diagnosis import (
        GRADIENT_WORDS,
        no_fix_words,
        other_release_words,
        render_changes,
    )

    prof = d.profile
    out = [f"{prof.library} {prof.release} ({prof.trainer}): settings not given take this release's defaults"]
    if d.release_why:
        out += _wrap(f"release: {d.release_why}", "", 9)
    if d.command:
        out.append(f"read: {d.command}")
    out.append("")
    if not d.kl_uses:
        out += [_no_kl_term(d), ""]
    for i, u in enumerate(d.kl_uses, 1):
        e = u.entry
        out.append(f"KL term {i}: in the {u.where}")
        out.append(f"  option       {_option_text(d, u)}  ->  {e.estimator} (crosswalk row {u.crosswalk_name})")
        out.append("  computes")
        out += [f"      {ln}" for ln in e.library_formula.strip("\n").split("\n")]
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
            how = u.aggregation.name
            if u.aggregation_setting:
                how += f" ({render_changes(prof, d.kind, ((u.aggregation_setting, u.aggregation_value),))})"
            out += _wrap(f"aggregation  {how}: {u.aggregation.coefficient}", "  ", 13)
        else:
            out.append(f"  aggregation  {u.aggregation_setting}={u.aggregation_value}: not a mode the release defines")
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


def card_markdown(d: Any, title: str | None = None) -> list[str]:
    """The KL card as Markdown, to paste into a pull request or a chat.

    Parameters
    ----------
    d : kl_core.doctor.diagnosis.Diagnosis
        A diagnosis.
    title : str, optional
        A heading (the file's name).

    Returns
    -------
    list of str
    """
    from kl_core.doctor.diagnosis import (
        GRADIENT_WORDS,
        no_fix_words,
        other_release_words,
    )

    prof = d.profile
    out = [f"### KL card: {title}" if title else "### KL card", "",
           f"**{prof.library} {prof.release}** ({prof.trainer}); settings not given take this release's defaults."]
    if d.release_why:
        out.append(f"Release: {d.release_why}.")
    if d.command:
        out.append(f"Read: `{d.command}`")
    out.append("")
    if not d.kl_uses:
        head, colon, rest = _no_kl_term(d).partition(":")
        out += [f"**{head}{colon}**{rest}", ""]
    else:
        out += ["| | where | option | estimator | coefficient | value estimates | gradient |",
                "|---|---|---|---|---|---|---|"]
        for i, u in enumerate(d.kl_uses, 1):
            out.append(f"| {i} | {u.where} | `{_option_text(d, u)}` | {u.estimator} | {_coef_text(u, u.controller)} | "
                       f"{u.entry.direction} | "
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
            after = f" Fix: `{' '.join(w.fix.split())}`" if w.fix else \
                f" No fix: {no_fix_words(d, w)}"
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


def _fail_codes(text: str | None) -> set[str]:
    from kl_core.doctor.diagnosis import WARNING_CODES

    if not text:
        return set()
    codes = {c.strip().upper() for c in text.split(",") if c.strip()}
    bad = sorted(codes - set(WARNING_CODES))
    if bad:
        raise ValueError(f"fail-on must be warning codes of {sorted(WARNING_CODES)}, got {bad}")
    return codes


def run_doctor(args: argparse.Namespace) -> int:
    """Handler of ``doctor``: print each file's card (text, Markdown or JSON).

    Parameters
    ----------
    args : argparse.Namespace
        ``file`` (one or more), ``library``, ``release``, ``format``, ``json`` and ``fail_on``.

    Returns
    -------
    int
        0; 1 when a card has a warning named by ``--fail-on``; 2 when the one
        file given is unreadable under ``--json`` (without ``--json`` that error
        is raised).  With several files (a pre-commit hook) an unreadable one is
        reported and skipped.
    """
    from kl_core.doctor.diagnosis import UnreadableInput, diagnose

    files = args.file if isinstance(args.file, list) else [args.file]
    fail_on = _fail_codes(getattr(args, "fail_on", None))
    fmt = "json" if args.json else getattr(args, "format", "text") or "text"
    many = len(files) > 1
    failed, docs, blocks = False, [], []
    for f in files:
        try:
            data, name = _read(f)
            d = diagnose(data, args.library, filename=name, release=getattr(args, "release", None))
        except (UnreadableInput, ValueError) as exc:
            code = "unreadable" if isinstance(exc, UnreadableInput) else "bad_argument"
            if not many:
                if fmt != "json":
                    raise
                print(json.dumps({"error": str(exc), "code": code}, ensure_ascii=False))
                return 2
            if fmt == "json":
                docs.append({"file": f, "error": str(exc), "code": code})
            else:
                blocks.append([f"{f}: not read: {exc}"])
            continue
        hit = sorted(fail_on & set(d.codes))
        failed |= bool(hit)
        if fmt == "json":
            docs.append({"file": f, **d.to_json()} if many else d.to_json())
        elif fmt == "md":
            blocks.append(card_markdown(d, f if many else None))
        else:
            blocks.append(([f"==> {f} <=="] if many else []) + card_lines(d))
        if hit:
            blocks.append([f"{f}: fails on {', '.join(hit)}"]) if fmt != "json" else None
    if fmt == "json":
        print(json.dumps(docs if many else docs[0], indent=2, ensure_ascii=False))
    else:
        print("\n\n".join("\n".join(b) for b in blocks))
    return 1 if failed else 0


register = Command(
    name="doctor",
    help="read a verl / OpenRLHF / TRL config and say what its KL term estimates and where its gradient pushes",
    description=(
        "Read a training config without running it (a verl launch script or YAML, an OpenRLHF "
        "train_ppo_ray command, a TRL GRPO/RLOO YAML, JSON, trl command or GRPOConfig(...) call) and "
        "print its KL card: each KL term's placement, option, estimator, coefficient and controller, "
        "the KL its value estimates, its exact expected gradient and its aggregation over tokens; "
        "warnings with the setting to change; unrecognised keys; the release whose defaults were assumed."
    ),
    arguments=_arguments,
    handler=run_doctor,
)
