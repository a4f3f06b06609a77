"""``python -m kl_core quiz``: the lessons' questions for a course's quiz system.

``quiz --lesson 1..7|all --variants N [--seed S] --format moodle|gift|json
[--lang en|zh] [--out FILE]`` writes every step of the chosen lessons, N
variants each (variants S … S + N − 1, wrapping to 0 after the last; the same ``v`` as the app's
``/lessons?lesson=L&step=S&v=V`` links), as Moodle XML, GIFT or JSON
(:mod:`kl_core.lessons.quiz`).  Every answer is computed by ``kl_core``
(:mod:`kl_core.lessons.quantities`).

Registration stays cheap: this module imports only the standard library at
its top; the lessons (and scipy, where a quantity needs it) load in the handler.
"""

from __future__ import annotations

import argparse
import sys

from kl_core.cli._common import Command

__all__ = ["register", "run_quiz"]

FORMATS = ("moodle", "gift", "json")
LANGUAGES = ("en", "zh")
LESSON_COUNT = 7
#: The last variant, :data:`kl_core.lessons.catalog.MAX_VARIANT` (a test checks they agree): the
#: catalog is not imported here, so that ``--help`` stays cheap.
MAX_SEED = 9999


def _lessons(text: str) -> tuple[int, ...]:
    """``all``, one lesson number, or a comma-separated list; a lesson given twice counts once
    (``1,3,1`` is lessons 1 and 3, in that order: twice would repeat every question and its ID)."""
    if text.strip().lower() == "all":
        return tuple(range(1, LESSON_COUNT + 1))
    try:
        numbers = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 1 to {LESSON_COUNT}, a list such as 1,3, or all; got {text!r}") from None
    if not numbers or any(not 1 <= n <= LESSON_COUNT for n in numbers):
        raise argparse.ArgumentTypeError(f"lessons are numbered 1 to {LESSON_COUNT}, got {text!r}")
    return tuple(dict.fromkeys(numbers))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--lesson", type=_lessons, default=_lessons("all"), metavar="1..7|all",
                    help="a lesson number, a list such as 1,3 (a repeated lesson counts once), or all (default all)")
    sp.add_argument("--variants", type=_positive, default=1, metavar="N", help=f"variants per step, 1 to {MAX_SEED + 1} (default 1)")
    sp.add_argument("--seed", type=int, default=0, metavar="S",
                    help=f"the first variant, 0 to {MAX_SEED} (default 0); variants S … S+N−1, wrapping to 0 "
                         f"after {MAX_SEED}")
    sp.add_argument("--format", choices=FORMATS, default="moodle", help="output format (default moodle)")
    sp.add_argument("--lang", choices=LANGUAGES, default="en", help="language of the texts (default en)")
    sp.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")


def run_quiz(args: argparse.Namespace) -> int:
    """Build the questions and write them.

    Parameters
    ----------
    args : argparse.Namespace
        ``lesson``, ``variants``, ``seed``, ``format``, ``lang`` and ``out``.

    Returns
    -------
    int
        The exit code, 0.
    """
    from kl_core.lessons.catalog import MAX_VARIANT, all_questions
    from kl_core.lessons.quiz import export

    if not 0 <= args.seed <= MAX_VARIANT:
        raise ValueError(f"--seed must be from 0 to {MAX_VARIANT}, got {args.seed}")
    if args.variants > MAX_VARIANT + 1:  # more would repeat variants
        raise ValueError(f"--variants must be at most {MAX_VARIANT + 1:,}, the number of variants, got {args.variants:,}")
    questions = all_questions(args.variants, args.seed, tuple(args.lesson))
    text = export(questions, args.format, args.lang)
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise ValueError(f"--out {args.out}: cannot write the file ({exc.strerror or exc})") from None
        print(f"{len(questions)} questions written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


register = Command(
    name="quiz",
    help="the lessons' questions for Moodle (XML), GIFT or JSON, answers computed by kl_core",
    description=(
        "Write every step of the chosen lessons, N variants each, as questions for a course's quiz "
        "system: Moodle XML (numerical questions with their tolerance, multiple choice, the explanation "
        "as general feedback; formulas as TeX for Moodle's MathJax filter), GIFT, or JSON (one object "
        "per question: lesson, step, variant, kind, prompt, params, quantity, answer, tolerance, "
        "choices, explanation, link). Variant v is the app's /lessons?lesson=L&step=S&v=v."
    ),
    arguments=_arguments,
    handler=run_quiz,
)
