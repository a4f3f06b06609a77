"""What the commands of ``python -m kl_core`` share: the one register helper and small utilities.

A command is one module of :mod:`kl_core.cli` that ends with

.. code-block:: python

    register = Command(name=..., help=..., description=..., arguments=_arguments, handler=run_x)

and is named ``"kl_core.cli.x:register"`` in :data:`kl_core.cli.main.SUBCOMMANDS`.  A handler
prints its output and returns the exit code; a ``ValueError`` it raises becomes one
``error: ...`` line on stderr and exit code 2.

Registration must stay cheap: every run registers every command, ``--help`` included.  This
module imports only the standard library; so must a command module at its top, numpy aside
where it needs it, with scipy, pandas and pyarrow (and ``kl_core`` modules that import them)
imported inside the handler.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kl_core.numbers import share

if TYPE_CHECKING:
    from kl_core.estimation.distributions import Distribution

__all__ = [
    "HANDLER_SECTIONS",
    "Command",
    "HelpFormatter",
    "add_pair_arguments",
    "count",
    "dumps",
    "fmt",
    "json_value",
    "named_by_flags",
    "one_line",
    "parse_pair",
    "plain_numbers",
    "plural",
    "share",
    "text_table",
]

#: The Parameters and Returns sections of a command's handler, ``run_<command>``
#: (filled in by :func:`kl_core._docfill.docfill`).
HANDLER_SECTIONS = {
    "handler": """\
Parameters
----------
args : argparse.Namespace
    The command's parsed arguments (those its ``register`` adds).

Returns
-------
int
    The exit code, 0.  Bad input raises ``ValueError``, which :func:`kl_core.cli.main.main`
    prints as one ``error:`` line with exit code 2.""",
}


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped without breaking a word at a hyphen.

    argparse wraps with :func:`textwrap.wrap`, which splits ``trl-grpo-0.18`` into
    ``trl-`` and ``grpo-0.18`` at the end of a line; an era id or a flag must stay whole to be copied.
    """

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False)


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, its two texts, its arguments and its handler.

    Attributes
    ----------
    name : str
        The command, e.g. ``"table"``.
    help : str
        Its line in ``python -m kl_core --help``.
    description : str
        The paragraph of its own ``--help``.
    arguments : callable
        Adds the command's arguments to its parser.
    handler : callable
        Runs the command on the parsed arguments and returns the exit code.
    """

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]

    def __call__(self, subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
        """Register the command: its parser, its arguments and its handler.

        Parameters
        ----------
        subparsers : argparse._SubParsersAction
            The ``python -m kl_core`` subcommand collection.

        Returns
        -------
        argparse.ArgumentParser
            The command's parser, registered in place.
        """
        sp = subparsers.add_parser(self.name, help=self.help, description=self.description,
                                   formatter_class=HelpFormatter)
        self.arguments(sp)
        sp.set_defaults(handler=self.handler)
        return sp


def one_line(text: str) -> str:
    """``text`` with every run of whitespace made one space."""
    return " ".join(str(text).split())


def count(text: str, example: str = "1e6", most: int | None = None) -> int:
    """A sample count: ``10000000``, ``10_000_000`` or ``1e7``; the error names ``example``.

    With ``most``, a larger count is refused (argparse names the flag in its error line).
    """
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number such as {example}, got {text!r}"
        ) from None
    if not (math.isfinite(value) and value.is_integer() and value >= 1):
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    if most is not None and value > most:
        raise argparse.ArgumentTypeError(f"must be at most {most:,}, got {text!r}")
    return int(value)


def plural(n: int, one: str, many: str) -> str:
    """``"1 row"``, ``"2 rows"``: ``n`` with thousands separators and the right noun."""
    return f"{n:,} {one if n == 1 else many}"


# A parameter's name is replaced where it is what the sentence is about: before a verb, a colon,
# or at the end of a clause ("the same column as sampler_col"); never inside prose ("the drift
# family"), a quoted value or an identifier.
_AS_SUBJECT = r"(?=\s(?:must|has|is|needs|keeps|contains|and|or)\b|\s'|\s[×=]\s|:|,|;|\)|$)"


def named_by_flags(exc: ValueError, names: dict[str, str]) -> ValueError:
    """``exc`` as a ``ValueError`` whose text names command-line flags instead of core parameters.

    A core function names its parameters (``other_col='x' is not a column``, ``lam must be
    finite``, ``length must be at most MAX_LENGTH = 4096``); the user typed flags.  Each key of
    ``names`` is replaced, as a whole word, by its flag (``name='x'`` becomes ``flag 'x'``),
    and the name of a module constant before its value (``MAX_LENGTH = ``) is dropped.

    Parameters
    ----------
    exc : ValueError
        The core's error.
    names : dict of str to str
        Core parameter name → flag, e.g. ``{"lam": "--lam"}``.

    Returns
    -------
    ValueError
        A new error with the rewritten one-line text (chain it ``from None``).
    """
    text = str(exc)
    for name, flag in names.items():
        text = re.sub(rf"(?<![\w'\"\-.]){re.escape(name)}=", flag + " ", text)
        text = re.sub(rf"(?<![\w'\"\-.]){re.escape(name)}{_AS_SUBJECT}", flag, text)
    text = re.sub(r"\bMAX_[A-Z_]+ = ", "", text)
    text = re.sub(r" \(MAX_[A-Z_]+\)", "", text)
    return ValueError(plain_numbers(text))


def plain_numbers(text: str) -> str:
    """``text`` with every numpy scalar's repr written as its number: ``np.float64(-1.0)`` → ``-1.0``.

    Parameters
    ----------
    text : str
        An error's text.

    Returns
    -------
    str
        The same text, as a user reads it.

    Examples
    --------
    >>> plain_numbers("weights must be > 0, got np.float64(-1.0)")
    'weights must be > 0, got -1.0'
    """
    return re.sub(r"\bnp\.(?:float|int|uint)\d+\(([^()]*)\)", r"\1", text)


def add_pair_arguments(parser: argparse.ArgumentParser, q: str, p: str) -> None:
    """Add ``--q`` and ``--p`` distribution specs with the given defaults.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    q, p : str
        Default specs of the sampler and the target.

    Returns
    -------
    None
        The arguments are added to ``parser`` in place.
    """
    # numpy, no scipy: the help lists the registry's families
    from kl_core.estimation import families

    specs = families.syntax()
    parser.add_argument(
        "--q", default=q, metavar="SPEC", help=f"sampler q (default {q}); one of {specs}"
    )
    parser.add_argument("--p", default=p, metavar="SPEC", help=f"target p (default {p})")


def parse_pair(args: argparse.Namespace) -> tuple[Distribution, Distribution]:
    """Parse ``args.q`` and ``args.p``; ``ValueError`` with a one-line reason if they are bad.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments with ``q`` and ``p`` spec strings.

    Returns
    -------
    tuple of Distribution
        ``(q, p)``, of the same kind (both continuous or both categorical).
    """
    from kl_core.estimation.distributions import parse

    parsed = []
    for flag, spec in (("--q", args.q), ("--p", args.p)):
        try:
            d = parse(spec)
        except ValueError as exc:  # the parser names the spec, not the flag that gave it
            raise ValueError(plain_numbers(f"{flag}: {exc}")) from None
        check_practical(flag, d)
        parsed.append(d)
    q, p = parsed
    if q.discrete != p.discrete:
        raise ValueError(
            f"--q {q.spec} and --p {p.spec} must both be continuous or both be categorical"
        )
    return q, p


def check_practical(flag: str, d: Distribution) -> None:
    """``ValueError`` naming ``flag`` and the parameter if ``d`` is outside the practical range.

    The app refuses the same settings with the same sentence
    (:func:`~kl_core.estimation.distributions.practical_issue`): beyond it a
    double cannot compare the two distributions (σ = 1e-300 divides by 0, μ = 1e300 overflows).

    Parameters
    ----------
    flag : str
        The option that gave ``d``, e.g. ``"--q"``.
    d : Distribution
        The parsed distribution.
    """
    from kl_core.estimation.distributions import practical_issue

    issue = practical_issue(d)
    if issue:
        raise ValueError(f"{flag} {d.spec}: {issue}, the range where double precision can compare two distributions")


def json_value(x: Any) -> Any:
    """A value as strict JSON: ``inf`` → ``"inf"``, ``-inf`` → ``"-inf"``, nan → None.

    Parameters
    ----------
    x : Any
        A float, or a dict, list or tuple of them (converted recursively).

    Returns
    -------
    Any
        The same structure with non-finite floats replaced.

    Examples
    --------
    >>> json_value(float("inf")), json_value(float("nan")), json_value(0.5)
    ('inf', None, 0.5)
    """
    if isinstance(x, dict):
        return {k: json_value(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_value(v) for v in x]
    if isinstance(x, float):
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def dumps(obj: Any) -> str:
    """``obj`` as indented strict JSON (:func:`json_value`), non-ASCII kept."""
    return json.dumps(json_value(obj), indent=2, allow_nan=False, ensure_ascii=False)


def fmt(x: float | None, spec: str = ".6g") -> str:
    """A number for the human table: — for missing or nan, inf spelled out."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return format(x + 0.0, spec)  # + 0.0: a negative zero prints as 0, not -0


def text_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]
) -> list[str]:
    """Aligned text columns."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if rj else c.ljust(w) for c, w, rj in zip(cells, widths, right, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]
