"""``python -m kl_core quiz``: Moodle XML, GIFT and JSON, their structure and their answers."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kl_core.cli import main as cli
from kl_core.lessons import catalog as L
from kl_core.lessons.quantities import compute
from kl_core.lessons.quiz import (
    gift_escape,
    markdown_to_html,
    number_text,
    to_gift,
    to_json,
    to_moodle_xml,
    tolerance_down,
)

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = L.all_questions(2, seed=5)
REQUIRED_VOCABULARY = {"kl_qp", "kl_pq", "bias_k2", "sd_k1", "sd_k2", "sd_k3", "neg_share_k1", "lambda_star", "mean_k3"}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_vocabulary_has_the_documented_quantities() -> None:
    assert REQUIRED_VOCABULARY <= set(L.vocabulary())
    used = {q.quantity for q in QUESTIONS}
    assert {"kl_qp", "kl_pq", "bias_k2", "sd_k1", "sd_k2", "sd_k3", "neg_share_k1", "lambda_star", "mean_k3"} <= used


# ------------------------------------------------------------ Moodle XML


def test_moodle_xml_structure() -> None:
    text = to_moodle_xml(QUESTIONS)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<quiz>')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "quiz"
    real = [q for q in root.findall("question") if q.get("type") != "category"]
    cats = [q for q in root.findall("question") if q.get("type") == "category"]
    assert len(real) == len(QUESTIONS) and len(cats) == len(L.LESSONS)
    assert all(c.find("category/text").text.startswith("$course$/top/KL Estimator Lab/") for c in cats)
    for el, q in zip(real, QUESTIONS, strict=True):
        assert el.find("name/text").text.startswith(f"L{q.lesson}.{q.step} v{q.variant}")
        qt = el.find("questiontext")
        assert qt.get("format") == "html" and qt.find("text").text.startswith("<p>")
        feedback = el.find("generalfeedback/text").text
        assert feedback and feedback.startswith("<p>")
        assert el.find("idnumber").text == f"kl-lab-L{q.lesson}-S{q.step}-v{q.variant}"
        answers = el.findall("answer")
        if q.kind == "numeric":
            assert el.get("type") == "numerical"
            assert len(answers) == 1 and answers[0].get("fraction") == "100"
            assert float(answers[0].find("text").text) == pytest.approx(q.answer, rel=1e-11, abs=1e-15)
            assert float(answers[0].find("tolerance").text) == pytest.approx(q.tolerance, rel=1e-11)
            assert el.find("showunits").text == "3"
        else:
            assert el.get("type") == "multichoice"
            assert el.find("single").text == "true"
            fractions = [a.get("fraction") for a in answers]
            assert fractions.count("100") == 1 and set(fractions) <= {"100", "0"}
            right = next(a for a in answers if a.get("fraction") == "100").find("text").text
            assert right == markdown_to_html(str(q.correct_label))


def test_moodle_xml_keeps_tex_and_html_in_cdata() -> None:
    text = to_moodle_xml(QUESTIONS)
    assert text.count("<questiontext format=\"html\"><text><![CDATA[") == len(QUESTIONS)
    root = ET.fromstring(text.encode("utf-8"))
    for el in root.iter("questiontext"):
        body = el.find("text").text
        outside_code = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", body, flags=re.S)
        assert "$" not in outside_code  # TeX is \( … \) for Moodle's MathJax filter
        assert outside_code.count(r"\(") == outside_code.count(r"\)")
    # TeX's own "<" is escaped inside the HTML, so MathJax reads it back from the text
    assert r"\(k_1 &lt; 0\)" in text


def test_cdata_end_marker_is_split() -> None:
    from kl_core.lessons.quiz import _cdata

    wrapped = "<t>" + _cdata("a ]]> b") + "</t>"
    assert ET.fromstring(wrapped).text == "a ]]> b"


def test_number_text_is_plain_decimal() -> None:
    for x in (7.8125e-06, 0.245, 1234.5, 1e-12, 3.0, 0.1 + 0.2):
        s = number_text(x)
        assert "e" not in s.lower() and float(s) == pytest.approx(x, rel=1e-11)
    with pytest.raises(ValueError, match="x"):
        number_text(math.inf)


# ------------------------------------------------------------ GIFT

_RESERVED = set("#=~{}:")


def _gift_unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            nxt = text[i + 1]
            out.append("\n" if nxt == "n" else nxt)
            i += 2
            continue
        assert ch not in _RESERVED, f"unescaped {ch!r} in {text[max(0, i - 30):i + 30]!r}"
        out.append(ch)
        i += 1
    return "".join(out)


def _note(q) -> str:
    """A numeric question's precision note (none on a choice)."""
    if q.kind != "numeric":
        return ""
    if q.tolerance <= 1e-9 * max(1.0, abs(q.answer)):
        return " (Only the exact value is graded right.)"
    return f" (Answers within ± {number_text(tolerance_down(q.tolerance))} are graded right.)"


@pytest.mark.parametrize(("tol", "shown"), [(0.00625, 0.00625), (0.06725, 0.0672), (0.0452260877, 0.0452),
                                             (0.008201250000000005, 0.0082), (1e-5, 1e-5), (0.27894, 0.278)])
def test_the_stated_tolerance_never_exceeds_the_graded_one(tol, shown) -> None:
    """Moodle and GIFT show no tolerance before grading (an audit: no prompt said how precise to be); the
    prompt states it, rounded down to 3 digits, so every answer within the stated value is graded right."""
    assert tolerance_down(tol) == pytest.approx(shown, rel=1e-12)
    assert tolerance_down(tol) <= tol and tolerance_down(tol) > 0.99 * tol
    with pytest.raises(ValueError, match="tol"):
        tolerance_down(0.0)


def test_gift_structure_and_escaping() -> None:
    text = to_gift(QUESTIONS)
    blocks = [b for b in text.split("\n\n") if b.strip() and not b.startswith("$CATEGORY")]
    assert len(blocks) == len(QUESTIONS)
    head = re.compile(r"// question: (?P<id>\S+)\n::(?P<name>(?:[^:\\]|\\.)+)::\[html\](?P<text>.*?)\{(?P<body>#?\n.*)\}\n?$",
                      re.S)
    for block, q in zip(blocks, QUESTIONS, strict=True):
        m = head.match(block)
        assert m, block[:300]
        assert m.group("id") == f"kl-lab-L{q.lesson}-S{q.step}-v{q.variant}"
        assert _gift_unescape(m.group("text")) == markdown_to_html(str(q.setup) + "\n\n" + str(q.prompt) + _note(q))
        lines = m.group("body").splitlines()
        assert lines[-1].startswith("\t####")
        assert _gift_unescape(lines[-1][len("\t####"):]) == markdown_to_html(str(q.explanation))
        if q.kind == "numeric":
            assert lines[0] == "#"
            ans = re.fullmatch(r"\t=%100%([-0-9.]+):([0-9.]+)#", lines[1])
            assert ans and float(ans.group(1)) == pytest.approx(q.answer, rel=1e-11, abs=1e-15)
            assert float(ans.group(2)) == pytest.approx(q.tolerance, rel=1e-11)
        else:
            rows = lines[1:-1]
            assert len(rows) == len(q.choices)
            assert sum(r.startswith("\t=") for r in rows) == 1
            right = next(r for r in rows if r.startswith("\t="))
            assert _gift_unescape(right[2:]) == markdown_to_html(str(q.correct_label))


def test_gift_escape_matches_moodles_repchar() -> None:
    assert gift_escape("a\\b#c=d~e{f}g:h\ni\r") == "a\\\\b\\#c\\=d\\~e\\{f\\}g\\:h\\ni"


# ------------------------------------------------------------ JSON


def test_json_fields_and_answers_from_kl_core() -> None:
    rows = json.loads(to_json(QUESTIONS))
    assert len(rows) == len(QUESTIONS)
    for row in rows:
        assert set(row) >= {"lesson", "step", "variant", "kind", "prompt", "params", "quantity", "answer",
                            "tolerance", "choices", "explanation", "link"}
        assert row["kind"] in ("numeric", "choice")
        assert row["quantity"] in L.vocabulary()
        again = compute(row["quantity"], row["params"])  # the params reproduce the answer
        if row["kind"] == "numeric":
            assert row["answer"] == pytest.approx(again, rel=1e-12, abs=1e-15)
            assert row["tolerance"] > 0 and row["choices"] == []
        else:
            assert row["answer"] == again and row["tolerance"] is None
            assert [c["key"] for c in row["choices"] if c["correct"]] == [row["answer"]]
    first = next(r for r in rows if r["quantity"] == "kl_qp")
    assert first["params"]["q"] == "normal(0,1)" and first["params"]["p"].startswith("normal(")


# ------------------------------------------------------------ the command


def test_cli_writes_each_format(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(["quiz", "--lesson", "2", "--variants", "3", "--seed", "17", "--format", "json"], capsys)
    rows = json.loads(out)
    assert code == 0 and len(rows) == 3 * len(L.lesson(2).steps)
    assert {r["variant"] for r in rows} == {17, 18, 19}
    assert rows[0]["link"] == "/lessons?lesson=2&step=1&v=17"
    code, out, _ = run(["quiz", "--lesson", "1,3", "--format", "gift"], capsys)
    assert code == 0 and out.count("$CATEGORY:") == 2
    target = tmp_path / "bank.xml"
    code, _, err = run(["quiz", "--lesson", "all", "--variants", "1", "--out", str(target)], capsys)
    assert code == 0 and "questions written" in err
    assert ET.parse(target).getroot().tag == "quiz"


@pytest.mark.parametrize("argv", [["--lesson", "9"], ["--lesson", "x"], ["--variants", "0"], ["--format", "pdf"],
                                  ["--lang", "fr"]])
def test_cli_refuses_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["quiz", *argv], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_refuses_a_seed_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["quiz", "--seed", "-1"], capsys)
    assert code == 2 and "--seed" in err


def test_quiz_help_imports_no_app_module() -> None:
    code = (
        "import runpy, sys\n"
        "sys.argv = ['kl_core', 'quiz', '--help']\n"
        "import os\n"
        "os._exit = lambda c: (_ for _ in ()).throw(SystemExit(c))\n"
        "try:\n    runpy.run_module('kl_core', run_name='__main__', alter_sys=True)\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas', 'streamlit', 'lab', 'altair')),"
        " file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "--variants" in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "[]"


def test_chinese_uses_the_apps_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["quiz", "--lesson", "2", "--format", "json", "--lang", "zh"], capsys)
    rows = json.loads(out)
    en = json.loads(to_json(L.all_questions(1, 0, (2,))))
    assert code == 0 and len(rows) == len(en)
    assert rows[0]["title"] == "k2 的偏差" and "样本来自" in rows[0]["prompt"]
    for zh_row, en_row in zip(rows, en, strict=True):  # the same numbers, the same answers
        assert zh_row["answer"] == en_row["answer"] and zh_row["params"] == en_row["params"]
        assert re.findall(r"\d+\.\d+", zh_row["explanation"]) == re.findall(r"\d+\.\d+", en_row["explanation"])
    root = ET.fromstring(to_moodle_xml(L.all_questions(1, 0, (7,)), lang="zh").encode("utf-8"))
    assert "你的库" in root.find("question/category/text").text


def test_cli_refuses_more_variants_than_there_are(capsys: pytest.CaptureFixture[str]) -> None:
    """--variants 10001 repeated variant 0 (the variants wrap); the help now says they wrap."""
    code, _, err = run(["quiz", "--variants", "10001"], capsys)
    assert code == 2 and "--variants must be at most 10,000" in err


@pytest.mark.parametrize(("lessons", "want"), [("1,1", (1,)), ("3,1,3", (3, 1)), ("2", (2,))])
def test_a_lesson_given_twice_counts_once_in_order(capsys: pytest.CaptureFixture[str], lessons, want) -> None:
    """--lesson 1,1 wrote every question of lesson 1 twice, with the same IDs."""
    code, out, err = run(["quiz", "--lesson", lessons, "--format", "json"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == sum(len(L.lesson(n).steps) for n in want)
    assert list(dict.fromkeys(r["lesson"] for r in rows)) == list(want)
    links = [r["link"] for r in rows]
    assert len(set(links)) == len(links)
    code, out, _ = run(["quiz", "--lesson", lessons], capsys)
    ids = re.findall(r"<idnumber>([^<]+)</idnumber>", out)
    assert code == 0 and len(ids) == len(rows) == len(set(ids))


def test_export_refuses_a_question_given_twice() -> None:
    from kl_core.lessons.quiz import export

    twice = [*L.all_questions(1, 0, (1,)), L.question(1, 2, 0)]
    for fmt in ("moodle", "gift", "json"):
        with pytest.raises(ValueError, match=r"^questions must be distinct, got lesson 1, step 2, variant 0 twice$"):
            export(twice, fmt)
    assert export(L.all_questions(1, 0, (1,)), "json")  # distinct: written


def test_help_gives_the_range_of_seed_and_variants(capsys: pytest.CaptureFixture[str]) -> None:
    from kl_core.cli import quiz

    assert quiz.MAX_SEED == L.MAX_VARIANT
    code, out, _ = run(["quiz", "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0
    assert f"the first variant, 0 to {L.MAX_VARIANT} (default 0)" in text
    assert f"variants per step, 1 to {L.MAX_VARIANT + 1} (default 1)" in text
    code, _, err = run(["quiz", "--seed", str(L.MAX_VARIANT + 1)], capsys)
    assert code == 2 and f"--seed must be from 0 to {L.MAX_VARIANT}" in err
