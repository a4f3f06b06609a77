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
