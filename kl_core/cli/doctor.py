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

``--release`` picks the release to describe (``latest`` or an older era of
``kl_core/doctor/releases.toml``, such as ``verl-0.3``, which its help lists; inferred from the text by
default).  ``--format md`` prints the card as Markdown.  ``--fail-on CODE,...``
exits with 1 when a card has one of those warnings; several files may be given
(the ``kl-doctor`` pre-commit hook passes the changed ones), and then one that
cannot be read is reported and skipped; ``--skip-unreadable`` (which the hook passes) does so for a
single file too.

``--json`` prints one object: ``library`` (``"verl"``, ``"OpenRLHF"`` or
``"TRL"``), ``release``, ``trainer``, ``input``, ``kl_uses`` (each with
``where``, ``option``, ``estimator``, ``coef``, ``controller``, ``target_kl``,
``gradient_target`` and more), ``warnings`` (``code``, ``message``, ``fix``,
``requires``, and for a warning without a fix ``tried`` and ``needs``),
``unrecognised`` (keys), ``suggestions``, ``off_policy``, ``defaults_assumed``,
``notes``, ``release_why``, ``also`` (each other release: ``release``, ``fails``, ``stops``, ``lacks``,
``refuses``, ``words`` and its ``kl_uses`` with their ``aggregation``) and ``changed``.

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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kl_core.cli._common import Command, json_value

__all__ = ["register", "run_doctor"]



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


def _era_ids() -> list[str]:
    """The ids of ``doctor/releases.toml``'s eras, read without loading the doctor (``--help`` stays fast)."""
    import tomllib

    path = Path(__file__).resolve().parents[1] / "doctor" / "releases.toml"
    with open(path, "rb") as fh:
        return [e["id"] for e in tomllib.load(fh).get("eras", [])]


def _arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("file", metavar="FILE|-", nargs="+",
                    help="the config or launch script (several for a pre-commit hook); - reads standard input")
    sp.add_argument("--library", type=str.lower, choices=_LIBRARIES, metavar="LIBRARY",  # a metavar: argparse
                    help="%(choices)s (default: detected from the text)")  # lists choices only for help
    sp.add_argument("--release", metavar="RELEASE",
                    help=f"the release to describe: latest, or an older era ({', '.join(_era_ids())}); default: "
                         "inferred from the settings the text uses")
    sp.add_argument("--json", action="store_true", help="print one JSON object (a list of them for several files)")
    sp.add_argument("--format", choices=("text", "md"), default="text",
                    help="text (default) or md: the card as Markdown, to paste into a pull request or a chat")
    sp.add_argument("--fail-on", metavar="CODE,...", dest="fail_on",
                    help="exit with code 1 when a card has one of these warning codes (e.g. FORWARD_KL_GRAD,KL_TWICE)")
    sp.add_argument("--skip-unreadable", action="store_true", dest="skip_unreadable",
                    help="report a file the doctor cannot read and go on, even when it is the only one (the "
                         "pre-commit hook: a commit that changes one such file is not blocked)")


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
        is raised).  With several files, or ``--skip-unreadable`` (the pre-commit hook), an unreadable
        one is reported and skipped.
    """
    from kl_core.doctor.card import card_lines, card_markdown
    from kl_core.doctor.diagnosis import UnreadableInput, diagnose

    files = args.file if isinstance(args.file, list) else [args.file]
    fail_on = _fail_codes(getattr(args, "fail_on", None))
    fmt = "json" if args.json else getattr(args, "format", "text") or "text"
    many = len(files) > 1
    skip = many or getattr(args, "skip_unreadable", False)
    failed, docs, blocks = False, [], []
    for f in files:
        try:
            data, name = _read(f)
            d = diagnose(data, args.library, filename=name, release=getattr(args, "release", None))
        except (UnreadableInput, ValueError) as exc:
            code = "unreadable" if isinstance(exc, UnreadableInput) else "bad_argument"
            if not skip:
                if fmt != "json":
                    raise
                print(json.dumps({"error": str(exc), "code": code}, ensure_ascii=False, allow_nan=False))
                return 2
            if fmt == "json":
                docs.append({"file": f, "error": str(exc), "code": code})
            else:
                blocks.append([f"{f}: not read: {exc}"])
            continue
        hit = sorted(fail_on & set(d.codes))
        failed |= bool(hit)
        if fmt == "json":
            docs.append({"file": f, **d.to_json()} if skip else d.to_json())
        elif fmt == "md":
            blocks.append(card_markdown(d, f if many else None))
        else:
            blocks.append(([f"==> {f} <=="] if many else []) + card_lines(d))
        if hit:
            blocks.append([f"{f}: fails on {', '.join(hit)}"]) if fmt != "json" else None
    if fmt == "json":  # strict JSON, as every command writes it: inf as "inf" (kl_core.cli.main.json_value)
        print(json.dumps(json_value(docs if skip else docs[0]), indent=2, allow_nan=False, ensure_ascii=False))
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
