r"""The command line: ``python -m kl_core <command> ...``.

Commands
--------
One module of :mod:`kl_core.cli` per command: ``table`` (:mod:`kl_core.cli.table`,
Schulman's bias/true and stdev/true table, Monte Carlo beside exact), ``kl``
(:mod:`kl_core.cli.kl`, both KL directions and every f-divergence, exactly), ``audit``,
``sequence``, ``grad``, ``doctor`` and ``quiz``.

Adding a command
----------------
Write a module that ends with ``register = Command(name=..., help=..., description=...,
arguments=..., handler=...)`` (:class:`kl_core.cli._common.Command`, the one register
helper: it adds the subparser, its arguments and its handler); then add ONE line,
``"your.module:register",``, to :data:`SUBCOMMANDS` (any ``register(subparsers)`` callable
will do).  A handler prints its output and returns the exit code; a ``ValueError`` it raises
becomes one ``error: ...`` line on stderr and exit code 2.  :func:`add_pair_arguments`,
:func:`parse_pair` and :func:`json_value` are there to share.

Registration must stay cheap: every run imports every module of
:data:`SUBCOMMANDS`, ``--help`` included.  At its top level such a module
imports only the standard library, numpy and light ``kl_core`` modules; scipy,
pandas, pyarrow (and ``kl_core`` modules that import them at their top, such as
:mod:`kl_core.estimation.bregman`) are imported inside the handler that needs them.
``scipy.special`` alone costs 0.1–0.3 s, more than numpy.  tests/cli/test_main.py
checks that ``--help``, ``table`` and ``kl`` for Gaussian pairs import none of them.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from kl_core.cli._common import HelpFormatter, add_pair_arguments, json_value, one_line, parse_pair
from kl_core.estimation._quadrature import QuadratureError

__all__ = [
    "PROG", "SUBCOMMANDS", "add_pair_arguments", "build_parser", "json_value", "main",
    "parse_pair",
]

PROG = "python -m kl_core"

# One "module:function" per command; each function registers its subparser.
SUBCOMMANDS: tuple[str, ...] = (
    "kl_core.cli.table:register",
    "kl_core.cli.kl:register",
    "kl_core.cli.audit:register",
    "kl_core.cli.sequence:register",
    "kl_core.cli.grad:register",
    "kl_core.cli.doctor:register",
    "kl_core.cli.quiz:register",
)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, not a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see --help)\n")


# ------------------------------------------------------------ entry point


def build_parser() -> argparse.ArgumentParser:
    """The parser with every command of :data:`SUBCOMMANDS` registered.

    Returns
    -------
    argparse.ArgumentParser
        The ``python -m kl_core`` parser.
    """
    parser = _Parser(
        prog=PROG,
        description="KL Estimator Lab: Monte Carlo and exact figures for Schulman's KL estimators.",
        formatter_class=HelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for entry in SUBCOMMANDS:
        module, _, func = entry.partition(":")
        getattr(importlib.import_module(module), func)(subparsers)
    return parser


#: A value that starts with a minus sign and a digit: a number (``-1e14``) or a list (``-1,0,1``),
#: never an option's name.
_NEGATIVE_VALUE = re.compile(r"-\.?\d")


def _negative_values_attached(argv: list[str]) -> list[str]:
    """``--lam -1e14`` as ``--lam=-1e14``: argparse takes a value that starts with ``-`` for an
    option unless it looks like a plain number (``-1.5``), so it refused ``-1e14`` and ``--reward -1,0,1``."""
    out: list[str] = []
    for arg in argv:
        prev = out[-1] if out else ""
        if (_NEGATIVE_VALUE.match(arg) and prev.startswith("--") and "=" not in prev and prev != "--"):
            out[-1] = f"{prev}={arg}"
        else:
            out.append(arg)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 2 bad input).

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        The exit code.  Bad arguments print one ``error: ...`` line on stderr.
    """
    parser = build_parser()
    argv = _negative_values_attached(sys.argv[1:] if argv is None else list(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one line (or --help)
        return int(exc.code or 0)
    try:
        return int(args.handler(args))
    except ValueError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    except QuadratureError as exc:  # a numerical failure, not bad input
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
