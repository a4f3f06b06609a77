"""lab.notes.lessons: reading a guess, the verdict, the progress and the answers' CSV."""

from __future__ import annotations

import pytest

from kl_core.lessons import catalog as core
from lab.notes import lessons as notes


@pytest.mark.parametrize(("text", "value"), [("0.25", 0.25), ("0,25", 0.25), ("25%", 0.25), (" −0.1 ", -0.1),
                                             ("7.8e-6", 7.8e-6), (".5", 0.5), ("3", 3.0)])
def test_parse_guess_reads_numbers(text: str, value: float) -> None:
    assert notes.parse_guess(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "abc", "1/3", "nan", "inf", "0.2.3", "1e999"])
def test_parse_guess_refuses_the_rest(text: str) -> None:
    assert notes.parse_guess(text) is None


def test_verdicts_use_the_exact_numbers() -> None:
    q = core.question(1, 1, 0)  # KL = 0.245, tolerance 0.01225
    kind, text = notes.verdict(q, notes.check(q, 0.3))
    assert kind == "error" and "0.245" in text and "0.055 too high" in text and "± 0.01225" in text
    kind, text = notes.verdict(q, notes.check(q, 0.24))
    assert kind == "success" and "0.005 too low" in text
    kind, text = notes.verdict(q, notes.check(q, None))
    assert kind == "info" and "0.245" in text
    # the exact value as shown: KL is stored as 0.24499999999999997, and it said "2.776e-17 too high"
    kind, text = notes.verdict(q, notes.check(q, notes.parse_guess("0.245")))
    assert kind == "success" and "your 0.245 is the same to the digits shown" in text and "too" not in text
    assert notes.off_by_text(q, 0.245) == "0%" and notes.off_by_text(q, 0.3) == "+22%"
    c = core.question(2, 4, 0)
    wrong = next(k for k, _label in c.choices if k != c.answer)
    kind, text = notes.verdict(c, notes.check(c, wrong))
    assert kind == "error" and notes.answer_text(c) in text


def test_progress_counts_steps_not_variants() -> None:
    records = {}
    for q, guess in ((core.question(1, 1, 0), 0.245), (core.question(1, 1, 5), None), (core.question(1, 2, 0), 0.9)):
        rec = notes.check(q, guess)
        records[(rec.lesson, rec.step, rec.variant)] = rec
    rows = notes.progress_rows(records)
    assert rows[0][1:] == (2, 1, 4) and rows[1][1:] == (0, 0, 5)
    assert notes.progress_line(records, 1) == "This lesson: 2 of 4 steps done, 1 right."


def test_answers_frame() -> None:
    q = core.question(3, 3, 4)
    frame = notes.answers_frame([notes.check(q, 0.5), notes.check(core.question(5, 2, 0), "reverse_kl")])
    assert list(frame.columns) == ["lesson", "step", "variant", "quantity", "guess", "exact value", "tolerance",
                                   "result"]
    assert frame.iloc[0]["exact value"] == q.answer and frame.iloc[0]["variant"] == 4
    assert frame.iloc[1]["result"] == "right" and frame.iloc[1]["tolerance"] == ""
    assert notes.answers_frame([]).empty


def test_every_lesson_has_a_point_that_gives_no_answer_away() -> None:
    """The point above a step's chart is the lesson's, at every step: no step's exact answer in it."""
    from kl_core.lessons.catalog import LESSONS, question
    from lab.format import number
    from lab.notes.lessons import POINTS, point

    assert sorted(POINTS) == [les.number for les in LESSONS]
    for les in LESSONS:
        for step in range(1, len(les.steps) + 1):
            q = question(les.number, step, 0)
            bare = point(q)
            assert bare.startswith(f"**Lesson {les.number}'s point:**")
            if q.kind == "numeric":
                assert number(float(q.answer)) not in bare.split(":**")[1]
            else:
                assert str(q.correct_label) not in bare


def test_minus_zero_is_zero_and_a_number_past_a_double_is_named() -> None:
    assert str(notes.parse_guess("-0")) == "0.0" and str(notes.parse_guess("−0%")) == "0.0"
    q = core.question(1, 1, 0)
    assert notes.missing_text(q, " 1e999 ") == (
        "1e999 is beyond the largest double: type a smaller number (or choose **Show me**).")
    assert notes.missing_text(q, "abc") == "Type a number first (or choose **Show me**)."
    assert notes.missing_text(core.question(2, 4, 0), "") == "Choose an answer first (or **Show me**)."


def test_the_tolerance_shown_never_admits_a_guess_graded_wrong() -> None:
    """Lesson 6 step 1: the tolerance 1.5625e-06 was shown as ± 1.563e-06, larger than it is."""
    for lesson, step in ((6, 1), (1, 1), (3, 2), (2, 1)):
        for v in range(40):
            q = core.question(lesson, step, v)
            if q.kind != "numeric":
                continue
            shown = float(notes.tolerance_text(q))
            assert q.tolerance * (1 - 1e-3) <= shown <= q.tolerance * (1 + 1e-9)  # grade()'s own slack
            assert core.grade(q, float(q.answer) + shown).correct
    assert notes.tolerance_text(core.question(6, 1, 0)) == "1.562e-06"
