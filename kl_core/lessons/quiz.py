r"""The lessons' questions for a course's quiz system: Moodle XML, GIFT and JSON.

Every question is a :class:`kl_core.lessons.catalog.Question` (one variant of one
step), so its answer is the one the app checks against, computed by
``kl_core``.  Three formats:

* **Moodle XML** (:func:`to_moodle_xml`), as Moodle's question bank imports
  it (Moodle Docs, "Moodle XML format"; ``question/format/xml/format.php``):
  a ``<quiz>`` of ``<question>`` elements; a ``category`` pseudo-question per
  lesson (``$course$/top/KL Estimator Lab/…``); a numeric step is a
  ``numerical`` question with one ``<answer fraction="100">`` and its
  ``<tolerance>`` (absolute, "nominal" tolerance); a choice step is a
  ``multichoice`` question (``<single>true</single>``, shuffled), the right
  answer at ``fraction="100"``, the others at ``0``; the explanation is the
  ``<generalfeedback>``.  Texts are HTML inside CDATA sections, formulas as
  TeX between ``\(`` and ``\)``, which Moodle's MathJax filter renders.
* **GIFT** (:func:`to_gift`), Moodle's text format, written as Moodle's own
  exporter writes it (``question/format/gift/format.php``): ``::name::``,
  ``[html]`` text, ``{#`` ``=%100%answer:tolerance`` ``}`` for a numeric question,
  ``{ =right ~wrong … }`` for a choice, ``####`` general feedback, and the
  reserved characters ``\ # = ~ { } :`` escaped with a backslash.
* **JSON** (:func:`to_json`): one object per question with ``lesson``,
  ``step``, ``variant``, ``kind``, ``title``, ``prompt`` (Markdown with TeX
  between ``$``), ``params``, ``quantity`` (:mod:`kl_core.lessons.quantities`),
  ``answer``, ``tolerance``, ``choices`` (``key``, ``text``, ``correct``),
  ``explanation`` and ``link`` (the same variant in the app).

Translations: ``lang="zh"`` reads the app's gettext catalog
(``locale/zh/LC_MESSAGES/messages.mo``) with the standard library; the
templates are the lessons' own (``kl_core.lessons.catalog``), so the quiz and the app
say the same words.
"""

from __future__ import annotations

import gettext
import html
import json
import math
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from kl_core.lessons.catalog import Question
from kl_core.validation import Message

__all__ = [
    "FORMATS",
    "LANGUAGES",
    "LOCALE_DIR",
    "export",
    "gift_escape",
    "markdown_to_html",
    "number_text",
    "render",
    "to_gift",
    "to_json",
    "to_moodle_xml",
    "translator",
]

FORMATS = ("moodle", "gift", "json")
LANGUAGES = ("en", "zh")
#: The app's catalogs (the same as ``i18n.LOCALE_DIR``).
LOCALE_DIR = Path(__file__).resolve().parents[2] / "locale"
CATEGORY_ROOT = "$course$/top/KL Estimator Lab"

Translate = Callable[[str], str]


# --------------------------------------------------------------------------- #
# Words
# --------------------------------------------------------------------------- #
@lru_cache(maxsize=len(LANGUAGES))
def translator(lang: str) -> Translate:
    """The gettext of ``lang`` (identity for English).

    Parameters
    ----------
    lang : str
        ``"en"`` or ``"zh"``.

    Returns
    -------
    callable
        English template → translated template.

    Raises
    ------
    ValueError
        For another language, or when the catalog is missing.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    if lang == "en":
        return lambda text: text
    try:
        catalog = gettext.translation("messages", LOCALE_DIR, languages=[lang])
    except OSError as exc:
        raise ValueError(f"lang {lang!r}: no catalog under {LOCALE_DIR}") from exc
    return catalog.gettext


def render(text: Any, tr: Translate) -> str:
    """A :class:`Message` in the language of ``tr`` (its params that are messages too); else ``str``.

    Parameters
    ----------
    text : Message or object
        The text.
    tr : callable
        A :func:`translator`.

    Returns
    -------
    str
        The translated text; a translation whose placeholders do not fit
        falls back to the English text.
    """
    if not isinstance(text, Message):
        return str(text)
    params = {k: render(v, tr) if isinstance(v, Message) else v for k, v in text.params.items()}
    try:
        return tr(text.template).format(**params)
    except (KeyError, IndexError, ValueError, AttributeError):
        return str(text)


_TOKEN = re.compile(r"\x00(?P<block>\d+)\x00|`(?P<code>[^`]+)`|\$(?P<math>[^$\n]+)\$|\*\*(?P<bold>[^*]+)\*\*")
_BLOCK = re.compile(r"```[a-z]*\n(.*?)\n?```", re.S)


def markdown_to_html(text: str) -> str:
    r"""The lessons' small Markdown as HTML: paragraphs, code, bold, and TeX as ``\(…\)``.

    Parameters
    ----------
    text : str
        Markdown with ``$…$`` TeX, fenced code blocks, `` `code` `` and ``**bold**``.

    Returns
    -------
    str
        HTML; everything else is escaped (``&``, ``<``, ``>``), TeX included,
        which MathJax reads back from the text.  A ``$`` inside code is left alone.

    Examples
    --------
    >>> markdown_to_html("KL is $\\mu^2/2 < 1$.")
    '<p>KL is \\(\\mu^2/2 &lt; 1\\).</p>'
    """
    blocks: list[str] = []

    def stash(m: re.Match[str]) -> str:
        blocks.append(m.group(1))
        return f"\n\n\x00{len(blocks) - 1}\x00\n\n"

    paragraphs = []
    for para in re.split(r"\n\s*\n", _BLOCK.sub(stash, text.strip())):
        para = para.strip()
        if not para:
            continue
        out, pos = [], 0
        for m in _TOKEN.finditer(para):
            out.append(html.escape(para[pos:m.start()], quote=False))
            if m.group("block") is not None:
                out.append(f"<pre>{html.escape(blocks[int(m.group('block'))], quote=False)}</pre>")
            elif m.group("code") is not None:
                out.append(f"<code>{html.escape(m.group('code'), quote=False)}</code>")
            elif m.group("math") is not None:
                out.append(rf"\({html.escape(m.group('math'), quote=False)}\)")
            else:
                out.append(f"<strong>{html.escape(m.group('bold'), quote=False)}</strong>")
            pos = m.end()
        out.append(html.escape(para[pos:], quote=False))
        body = "".join(out)
        paragraphs.append(body if _BLOCK_ONLY.fullmatch(para) else f"<p>{body}</p>")
    return "".join(paragraphs)


_BLOCK_ONLY = re.compile(r"\x00\d+\x00")


def number_text(x: float) -> str:
    """A number as plain decimal digits (no exponent), exact to 12 significant digits.

    Parameters
    ----------
    x : float
        A finite number.

    Returns
    -------
    str
        Its digits, as Moodle's numerical answers and tolerances take them.

    Examples
    --------
    >>> number_text(7.8125e-06), number_text(0.245), number_text(2.0)
    ('0.0000078125', '0.245', '2')
    """
    if not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x!r}")
    d = Decimal(format(x, ".12g"))
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def tolerance_down(tol: float) -> float:
    """``tol`` to 3 significant digits, rounded down: every answer within the rounded value is graded right.

    Parameters
    ----------
    tol : float
        A question's ± tolerance, positive and finite.

    Returns
    -------
    float
        The rounded tolerance (``0.00625`` stays; ``0.06725`` becomes ``0.0672``).
    """
    if not (math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    scale = 10.0 ** (math.floor(math.log10(tol)) - 2)
    return float(Decimal(math.floor(tol / scale * (1 + 1e-12))) * Decimal(repr(scale)))


def _texts(q: Question, tr: Translate) -> dict[str, Any]:
    prompt = render(q.setup, tr) + "\n\n" + render(q.prompt, tr)
    if q.kind == "numeric" and q.tolerance:
        # a quiz system shows no tolerance before grading: say how precise an answer must be
        tol = float(q.tolerance)
        if tol <= 1e-9 * max(1.0, abs(float(q.answer))):
            prompt += " " + render(Message("(Only the exact value is graded right.)"), tr)
        else:
            prompt += " " + render(Message("(Answers within ± {tol} are graded right.)",
                                           tol=number_text(tolerance_down(tol))), tr)
    return {
        "title": render(q.title, tr),
        "prompt": prompt,
        "explanation": render(q.explanation, tr),
        "choices": [(key, render(label, tr)) for key, label in q.choices],
    }


def _name(q: Question, title: str) -> str:
    return f"L{q.lesson}.{q.step} v{q.variant} · {title}"


def _lesson_title(number: int, tr: Translate) -> str:
    from kl_core.lessons.catalog import lesson

    return f"{number}. {tr(lesson(number).title)}"


# --------------------------------------------------------------------------- #
# JSON
# --------------------------------------------------------------------------- #
def _json_params(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if isinstance(v, (str, int, float, list)) and not isinstance(v, Message)}


def to_json(questions: Iterable[Question], lang: str = "en") -> str:
    """The questions as a JSON array, one object per question (see the module docstring).

    Parameters
    ----------
    questions : iterable of Question
        From :func:`kl_core.lessons.catalog.question` or :func:`kl_core.lessons.catalog.all_questions`.
    lang : str, default "en"
        ``"en"`` or ``"zh"``.

    Returns
    -------
    str
        Strict JSON (UTF-8 text).
    """
    tr = translator(lang)
    out = []
    for q in questions:
        t = _texts(q, tr)
        out.append({
            "lesson": q.lesson,
            "step": q.step,
            "variant": q.variant,
            "kind": q.kind,
            "title": t["title"],
            "prompt": t["prompt"],
            "params": _json_params(q.params),
            "quantity": q.quantity,
            "answer": q.answer,
            "tolerance": q.tolerance,
            "choices": [{"key": k, "text": text, "correct": k == q.answer} for k, text in t["choices"]],
            "explanation": t["explanation"],
            "link": q.link(),
        })
    return json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False)


# --------------------------------------------------------------------------- #
# Moodle XML
# --------------------------------------------------------------------------- #
def _cdata(text: str) -> str:
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _xml_text(text: str) -> str:
    return html.escape(text, quote=False)


def _html_field(tag: str, body: str) -> str:
    return f'<{tag} format="html"><text>{_cdata(body)}</text></{tag}>'


def to_moodle_xml(questions: Iterable[Question], lang: str = "en") -> str:
    """The questions as Moodle XML, ready for the question bank's import (see the module docstring).

    Parameters
    ----------
    questions : iterable of Question
        The questions, in order; a category is opened for each lesson.
    lang : str, default "en"
        ``"en"`` or ``"zh"``.

    Returns
    -------
    str
        The XML document (UTF-8), ``<?xml …?>`` on its first line.
    """
    tr = translator(lang)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<quiz>"]
    current = None
    for q in questions:
        if q.lesson != current:
            current = q.lesson
            lines += [
                '  <question type="category">',
                f"    <category><text>{_xml_text(CATEGORY_ROOT + '/' + _lesson_title(q.lesson, tr).replace('/', '-'))}"
                "</text></category>",
                "  </question>",
            ]
        t = _texts(q, tr)
        qtype = "numerical" if q.kind == "numeric" else "multichoice"
        lines += [
            f'  <question type="{qtype}">',
            f"    <name><text>{_xml_text(_name(q, t['title']))}</text></name>",
            "    " + _html_field("questiontext", markdown_to_html(t["prompt"])),
            "    " + _html_field("generalfeedback", markdown_to_html(t["explanation"])),
            "    <defaultgrade>1</defaultgrade>",
            "    <penalty>0.3333333</penalty>",
            "    <hidden>0</hidden>",
            f"    <idnumber>kl-lab-L{q.lesson}-S{q.step}-v{q.variant}</idnumber>",
        ]
        if q.kind == "numeric":
            lines += [
                '    <answer fraction="100" format="moodle_auto_format">',
                f"      <text>{number_text(float(q.answer))}</text>",
                '      <feedback format="html"><text></text></feedback>',
                f"      <tolerance>{number_text(float(q.tolerance or 0.0))}</tolerance>",
                "    </answer>",
                "    <unitgradingtype>0</unitgradingtype>",
                "    <unitpenalty>0.1000000</unitpenalty>",
                "    <showunits>3</showunits>",
                "    <unitsleft>0</unitsleft>",
            ]
        else:
            lines += [
                "    <single>true</single>",
                "    <shuffleanswers>true</shuffleanswers>",
                "    <answernumbering>abc</answernumbering>",
                "    <showstandardinstruction>0</showstandardinstruction>",
                '    <correctfeedback format="html"><text></text></correctfeedback>',
                '    <partiallycorrectfeedback format="html"><text></text></partiallycorrectfeedback>',
                '    <incorrectfeedback format="html"><text></text></incorrectfeedback>',
            ]
            for key, text in t["choices"]:
                fraction = "100" if key == q.answer else "0"
                lines += [
                    f'    <answer fraction="{fraction}" format="html">',
                    f"      <text>{_cdata(markdown_to_html(text))}</text>",
                    '      <feedback format="html"><text></text></feedback>',
                    "    </answer>",
                ]
        lines.append("  </question>")
    lines.append("</quiz>")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- #
# GIFT
# --------------------------------------------------------------------------- #
_GIFT_RESERVED = {"\\": "\\\\", "#": "\\#", "=": "\\=", "~": "\\~", "{": "\\{", "}": "\\}", ":": "\\:",
                  "\n": "\\n", "\r": ""}


def gift_escape(text: str) -> str:
    r"""Escape GIFT's reserved characters as Moodle's exporter does (``repchar``): ``\ # = ~ { } :``, newlines as ``\n``.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str
        The escaped text.

    Examples
    --------
    >>> gift_escape(r"\(a = {b}\)")
    '\\\\(a \\= \\{b\\}\\\\)'
    """
    return "".join(_GIFT_RESERVED.get(ch, ch) for ch in text)


def to_gift(questions: Iterable[Question], lang: str = "en") -> str:
    """The questions in Moodle's GIFT format (see the module docstring).

    Parameters
    ----------
    questions : iterable of Question
        The questions, in order; a ``$CATEGORY:`` line opens each lesson.
    lang : str, default "en"
        ``"en"`` or ``"zh"``.

    Returns
    -------
    str
        The GIFT text (UTF-8).
    """
    tr = translator(lang)
    out: list[str] = []
    current = None
    for q in questions:
        if q.lesson != current:
            current = q.lesson
            out.append(f"$CATEGORY: {CATEGORY_ROOT}/{_lesson_title(q.lesson, tr).replace('/', '-')}\n")
        t = _texts(q, tr)
        head = f"// question: kl-lab-L{q.lesson}-S{q.step}-v{q.variant}\n"
        head += f"::{gift_escape(_name(q, t['title']))}::[html]{gift_escape(markdown_to_html(t['prompt']))}"
        feedback = f"\t####{gift_escape(markdown_to_html(t['explanation']))}\n"
        if q.kind == "numeric":
            body = (f"{{#\n\t=%100%{number_text(float(q.answer))}:{number_text(float(q.tolerance or 0.0))}#\n"
                    f"{feedback}}}\n")
        else:
            rows = "".join(
                f"\t{'=' if key == q.answer else '~'}{gift_escape(markdown_to_html(text))}\n"
                for key, text in t["choices"]
            )
            body = f"{{\n{rows}{feedback}}}\n"
        out.append(head + body)
    return "\n".join(out)


def export(questions: Iterable[Question], fmt: str, lang: str = "en") -> str:
    """The questions in one of the formats.

    Parameters
    ----------
    questions : iterable of Question
        The questions.
    fmt : str
        One of :data:`FORMATS`; ``ValueError`` naming ``fmt`` otherwise.
    lang : str, default "en"
        ``"en"`` or ``"zh"``.

    Returns
    -------
    str
        The document.

    Raises
    ------
    ValueError
        Naming ``fmt`` if it is not a format, or ``questions`` if one (lesson, step, variant)
        is given twice: its ID (Moodle's ``idnumber``, the JSON's link) would be repeated.
    """
    writers = {"moodle": to_moodle_xml, "gift": to_gift, "json": to_json}
    if fmt not in writers:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, got {fmt!r}")
    questions = list(questions)
    seen: set[tuple[int, int, int]] = set()
    for q in questions:
        key = (q.lesson, q.step, q.variant)
        if key in seen:
            raise ValueError(
                f"questions must be distinct, got lesson {q.lesson}, step {q.step}, variant {q.variant} twice"
            )
        seen.add(key)
    return writers[fmt](questions, lang)
