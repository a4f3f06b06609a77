"""What the Lessons page says about a guess: the verdict, the numbers, the progress, the CSV.

No streamlit here.  The questions and their exact answers come from
:mod:`kl_core.lessons.catalog`; this module only reads a typed guess, words the check
("Right. The exact value is 0.245; your 0.3 is 0.055 too high."), counts the
progress per lesson and lays out the downloadable answers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from i18n import N_, _, message
from kl_core.lessons.catalog import LESSONS, Grade, Question, grade
from lab.format import number

__all__ = [
    "INTRO",
    "POINTS",
    "RESULTS",
    "Record",
    "answer_text",
    "answers_frame",
    "check",
    "guess_text",
    "lesson_caption",
    "lesson_label",
    "parse_guess",
    "point",
    "progress_line",
    "progress_rows",
    "step_heading",
    "verdict",
]

INTRO = N_(
    "Seven short lessons through the ideas of this lab. Each step gives a setting and asks for a "
    "prediction: commit to a number or a choice, then check it against the exact value from "
    "kl_core. **New numbers** draws a fresh variant of the same step; its link (with `v=`) shows "
    "everyone the same numbers."
)

#: Each lesson's point (issue 20: the point first), worded so that it gives away no step's
#: answer: where a step asks "which one?", the point says what decides it, not which.
POINTS: dict[int, str] = {
    1: N_("a single k1 = −log r is negative wherever p(x) > q(x), so a logged approx_kl, the mean "
          "of a few of them, can be negative too, although the KL it estimates never is."),
    2: N_("k1, k2 and k3 can differ in what they average to and in how widely single values scatter; "
          "how their spreads compare depends on how far p is from q."),
    3: N_("adding λ(r − 1) leaves the mean of kλ at the KL for every λ: λ changes only the spread, "
          "and whether single values can fall below zero."),
    4: N_("KL[q‖p] and KL[p‖q] can be different numbers: which distribution was sampled and which "
          "ratio is used decide which one an estimator averages to."),
    5: N_("used as a loss, an estimator acts through its gradient, not its value: an estimator "
          "of the right number can push the policy towards a different target, or not at all."),
    6: N_("over a sequence, summing the per-token terms and averaging them estimate different "
          "things, and β means something different for each."),
    7: N_("a launch script decides where the KL goes (reward or loss), which estimator computes "
          "it and which way its gradient pushes: each can be read from the config and the release's "
          "defaults."),
}

#: How a step ended (CSV and progress): keys, with words shown as ``_(RESULTS[key])``.
RESULTS: dict[str, str] = {"right": N_("right"), "wrong": N_("wrong"), "shown": N_("shown")}

_NUMBER = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Record:
    """One answered (or shown) step of one variant, kept for the browser session."""

    lesson: int
    step: int
    variant: int
    quantity: str
    kind: str
    guess: float | str | None
    exact: float | str
    tolerance: float | None
    result: str  # a key of RESULTS


def parse_guess(text: str) -> float | None:
    """A typed number: ``0.25``, ``0,25``, ``25%``, ``7.8e-6``, ``−0.1``; None if it is not one.

    Examples
    --------
    >>> parse_guess("25%"), parse_guess("0,5"), parse_guess("abc")
    (0.25, 0.5, None)
    """
    value = _typed_value(text)
    return value if math.isfinite(value) else None


def _typed_value(text: str) -> float:
    """The typed number (``-0`` read as 0), ``inf`` past the largest double, NaN if it is not a number."""
    s = (text or "").strip().replace("−", "-").replace(" ", "").replace("\u00a0", "")
    percent = s.endswith("%")
    if percent:
        s = s[:-1]
    if not _NUMBER.match(s):
        return math.nan
    value = float(s.replace(",", ".")) + 0.0  # + 0.0: −0 is 0
    return value / 100 if percent else value


def missing_text(q: Question, typed: str) -> str:
    """The warning after "Check" with nothing usable: nothing chosen, nothing typed, or a number past a double."""
    if q.kind != "numeric":
        return _("Choose an answer first (or **Show me**).")
    if math.isinf(_typed_value(typed)):
        return _("{typed} is beyond the largest double: type a smaller number (or choose **Show me**).").format(
            typed=typed.strip())
    return _("Type a number first (or choose **Show me**).")


def tolerance_text(q: Question) -> str:
    """The ± tolerance to 4 significant digits, rounded down, so that every guess it admits is graded right."""
    tol = float(q.tolerance)
    if not tol > 0:
        return number(tol)
    scale = 10.0 ** (math.floor(math.log10(tol)) - 3)
    return number(math.floor(tol / scale * (1 + 1e-12)) * scale)


def off_by_text(q: Question, guess: float) -> str:
    """(guess − exact) / |exact| as a whole percentage, unsigned where it rounds to 0."""
    text = "{pct:+.0%}".format(pct=(float(guess) - float(q.answer)) / abs(float(q.answer)))
    return "0%" if text in ("+0%", "-0%") else text


def check(q: Question, guess: float | str | None) -> Record:
    """The record of a guess (None: "Show me") for question ``q``."""
    if guess is None:
        result = "shown"
    else:
        result = "right" if grade(q, guess).correct else "wrong"
    return Record(q.lesson, q.step, q.variant, q.quantity, q.kind, guess, q.answer, q.tolerance, result)


def answer_text(q: Question) -> str:
    """The exact answer as shown: a number to 4 significant digits, or the right choice's label."""
    if q.kind == "choice":
        return message(q.correct_label)
    return number(float(q.answer))  # type: ignore[arg-type]


def guess_text(q: Question, guess: float | str | None) -> str:
    """The guess as shown: a number as typed (4 significant digits) or the chosen label; — for none."""
    if guess is None:
        return "—"
    if q.kind == "choice":
        return message(dict(q.choices).get(str(guess), str(guess)))
    return number(float(guess))


def verdict(q: Question, rec: Record) -> tuple[str, str]:
    """``(kind, text)`` of the box under the question: ``"success"``, ``"error"`` or ``"info"``."""
    exact = answer_text(q)
    if rec.result == "shown":
        return "info", _("The answer: **{exact}**.").format(exact=exact)
    if q.kind == "choice":
        if rec.result == "right":
            return "success", _("Right: **{exact}**.").format(exact=exact)
        return "error", _("Not quite. You chose {guess}; the answer is **{exact}**.").format(
            guess=guess_text(q, rec.guess), exact=exact)
    g: Grade = grade(q, rec.guess)
    if g.error == 0:
        off = _("exactly right")
    elif guess_text(q, rec.guess) == exact:  # a difference in digits the page does not show (2.8e-17)
        off = _("the same to the digits shown")
    elif g.error > 0:
        off = _("{diff} too high").format(diff=number(abs(g.error)))
    else:
        off = _("{diff} too low").format(diff=number(abs(g.error)))
    within = _("within ± {tol} counts as right").format(tol=tolerance_text(q))
    if rec.result == "right":
        return "success", _("Right. The exact value is **{exact}**; your {guess} is {off} ({within}).").format(
            exact=exact, guess=guess_text(q, rec.guess), off=off, within=within)
    return "error", _("Not quite. The exact value is **{exact}**; your {guess} is {off} ({within}).").format(
        exact=exact, guess=guess_text(q, rec.guess), off=off, within=within)


def point(q: Question) -> str:
    """The answer box of a step: its lesson's point (:data:`POINTS`), not the step's answer.

    A quiz step's answer is shown only once the reader has guessed (:func:`verdict`);
    the point beside the question says what the lesson shows without giving it away.
    """
    return _("**Lesson {n}'s point:** {point}").format(n=q.lesson, point=_(POINTS[q.lesson]))


def lesson_label(number_: int) -> str:
    """``"2. Bias and spread"`` in the run's language (for a list item or a table cell)."""
    return "{n}. {title}".format(n=number_, title=_(LESSONS[number_ - 1].title))


def lesson_caption(number_: int) -> str:
    """``"Lesson 2 of 7: Bias and spread — k2's bias, …"`` (no list marker for Markdown to read)."""
    les = LESSONS[number_ - 1]
    return _("Lesson {n} of {total}: {title} — {intro}").format(
        n=number_, total=len(LESSONS), title=_(les.title), intro=_(les.intro))


def step_heading(q: Question) -> str:
    """``"Step 2 of 5: One value of k1"``."""
    return _("Step {step} of {steps}: {title}").format(
        step=q.step, steps=len(LESSONS[q.lesson - 1].steps), title=message(q.title))


def progress_rows(records: Mapping[tuple[int, int, int], Record]) -> list[tuple[str, int, int, int]]:
    """Per lesson: its label, steps answered or shown (any variant), steps right (any variant), steps."""
    rows = []
    for les in LESSONS:
        mine = [r for r in records.values() if r.lesson == les.number]
        done = {r.step for r in mine}
        right = {r.step for r in mine if r.result == "right"}
        rows.append((lesson_label(les.number), len(done), len(right), len(les.steps)))
    return rows


def progress_line(records: Mapping[tuple[int, int, int], Record], lesson_no: int) -> str:
    """``"This lesson: 3 of 5 steps done, 2 right."``"""
    _label, done, right, steps = progress_rows(records)[lesson_no - 1]
    return _("This lesson: {done} of {steps} steps done, {right} right.").format(done=done, steps=steps, right=right)


def _cell(x: float | str | None) -> float | str:
    return "" if x is None else x


def answers_frame(records: Iterable[Record]) -> pd.DataFrame:
    """The session's answers, one row per step and variant, for "Download my answers"."""
    h = {
        "lesson": _("lesson"), "step": _("step"), "variant": _("variant"), "quantity": _("quantity"),
        "guess": _("guess"), "exact": _("exact value"), "tolerance": _("tolerance"), "result": _("result"),
    }
    rows = [
        {h["lesson"]: r.lesson, h["step"]: r.step, h["variant"]: r.variant, h["quantity"]: r.quantity,
         h["guess"]: _cell(r.guess), h["exact"]: r.exact, h["tolerance"]: _cell(r.tolerance),
         h["result"]: _(RESULTS[r.result])}
        for r in sorted(records, key=lambda r: (r.lesson, r.step, r.variant))
    ]
    return pd.DataFrame(rows, columns=list(h.values()))
