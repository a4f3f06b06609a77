"""The translation tools: extract, update and compile the catalogs; check them; find untranslated text.

One command keeps the catalogs in step with the source (run it from anywhere)::

    uv run python scripts/translations.py            # extract → update messages.po → compile messages.mo

It extracts every ``_()``, ``N_()``, ``Nn_()``, ``ngettext()``, ``pgettext()`` and
``npgettext()`` of the app (a ``pgettext`` message carries its context as the
``.po`` file's ``msgctxt``: one English word, two entries) and every
message template of the core (``Message``/``InputError``/``UnreadableInput``,
see ``kl_core/validation.py``) with Babel, as configured in pyproject.toml's
``[tool.babel.extract_messages]``; merges them into
``locale/<lang>/LC_MESSAGES/messages.po`` (a new message gets an empty
translation, a changed one keeps its old translation marked fuzzy, a removed
one is dropped); and compiles ``messages.mo`` from the translated, non-fuzzy
messages.  Then it prints what is left to translate.  Translate in the
``.po`` file (msgstr, remove the ``#, fuzzy`` line once checked) and run it
again.  The ``.mo`` files are committed, so the app needs only the standard
library's gettext (tests/lab/test_translations.py checks they are in step).

    uv run python scripts/translations.py check      # exit 1 unless every catalog is complete and in step
    uv run python scripts/translations.py report [FILE ...]   # user-visible text not wrapped in _()

``report`` is an AST scan of pages/, lab/ (notes included), charts/ and
app.py for string literals a user would read that no ``_()`` wraps: the text
arguments of Streamlit calls and of the lab's widget helpers, ``label=``,
``help=``, ``caption=``, ``title=`` …, chart titles in Vega-Lite dicts, table
headers, f-strings in those places, and any other constant that reads like
prose.  A line that must stay English says so with a ``# i18n: ok`` comment.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import string
import sys
import tomllib
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCALE_DIR = ROOT / "locale"
DOMAIN = "messages"
#: The languages with a catalog (English is the source language and has none).
TRANSLATED = ("zh",)
#: Where the coverage scan looks for text not wrapped in _().
SCANNED = ("app.py", "pages", "lab", "charts")
OK_MARK = "i18n: ok"
#: Files whose user-visible text is not yet wrapped in _() and translated: empty since part 2
#: of issue 13 converted every scanned file.  A listed file's messages could be missing from
#: the catalog or untranslated, and the coverage test would skip it; tests/lab/test_translations.py
#: fails once a listed file is clean, so the list only shrinks.
NOT_YET_TRANSLATED: frozenset[str] = frozenset()


# --------------------------------------------------------------------------- #
# Extraction, catalogs
# --------------------------------------------------------------------------- #


def config() -> dict:
    """pyproject.toml's ``[tool.babel.extract_messages]``."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["babel"]["extract_messages"]


def mappings() -> list[dict]:
    """pyproject.toml's ``[[tool.babel.mappings]]``: extraction methods other than Python's, by file pattern."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["babel"].get("mappings", [])


def _sources() -> Iterator[tuple[Path, str]]:
    """Each file to extract from, with its Babel method: the Python sources, then the mapped data files."""
    for name in config()["input_paths"]:
        path = ROOT / name
        if path.is_file():
            yield path, "python"
        else:
            yield from ((p, "python") for p in sorted(path.rglob("*.py")) if "__pycache__" not in p.parts)
    from babel.util import pathmatch

    others = [m for m in mappings() if m["method"] != "python"]  # kl_core/libraries/crosswalk.toml's prose fields
    for name in config()["input_paths"]:
        path = ROOT / name
        if not path.is_dir():
            continue
        for p in sorted(path.rglob("*")):  # matched as pybabel does: relative to the input folder
            method = next((m["method"] for m in others if pathmatch(m["pattern"], p.relative_to(path).as_posix())),
                          None)
            if method is not None and p.suffix != ".py" and "__pycache__" not in p.parts:
                yield p, method


def extract():  # -> babel.messages.catalog.Catalog
    """The template catalog: every message in the source, with its files and translator comments."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_file
    from babel.messages.frontend import parse_keywords

    cfg = config()
    keywords = parse_keywords(cfg["keywords"])
    tags = cfg.get("add_comments", [])
    template = Catalog(project="KL Estimator Lab", charset="utf-8", fuzzy=False)
    if str(ROOT) not in sys.path:  # a "module:function" method is imported from the repository
        sys.path.insert(0, str(ROOT))
    for path, method in _sources():
        rel = path.relative_to(ROOT).as_posix()
        for lineno, msg, comments, context in extract_from_file(
            method, path, keywords=keywords, comment_tags=tags, strip_comment_tags=True
        ):
            template.add(msg, None, [(rel, lineno)], auto_comments=comments, context=context)
    return template


def po_path(lang: str) -> Path:
    """``locale/<lang>/LC_MESSAGES/messages.po``."""
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def read_catalog(lang: str):  # -> babel.messages.catalog.Catalog
    """The ``.po`` catalog of ``lang`` as Babel reads it (obsolete messages in ``.obsolete``)."""
    from babel.messages.pofile import read_po

    with open(po_path(lang), "rb") as fh:
        return read_po(fh, locale=lang, domain=DOMAIN)


def _po_text(catalog) -> str:
    from babel.messages.pofile import write_po

    buf = io.BytesIO()
    cfg = config()
    write_po(buf, catalog, width=100, sort_by_file=cfg.get("sort_by_file", False),
             include_lineno=cfg.get("add_location") != "file", ignore_obsolete=True)
    return buf.getvalue().decode("utf-8")


def _without_dates(text: str) -> str:
    return re.sub(r'^"(POT-Creation-Date|PO-Revision-Date): .*\\n"$', "", text, flags=re.M)


def update(lang: str) -> tuple[int, bool]:
    """Merge the source's messages into ``lang``'s ``.po`` and compile its ``.mo``.

    Returns the number of messages and whether the ``.po`` file changed.  The
    file is rewritten only when more than its dates would change.
    """
    from babel.messages.catalog import Catalog
    from babel.messages.mofile import write_mo

    template = extract()
    path = po_path(lang)
    if path.exists():
        catalog = read_catalog(lang)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        catalog = Catalog(locale=lang, domain=DOMAIN, project="KL Estimator Lab", fuzzy=False)
    catalog.update(template, update_creation_date=False)
    text = _po_text(catalog)
    changed = not path.exists() or _without_dates(text) != _without_dates(path.read_text("utf-8"))
    if changed:
        path.write_text(text, "utf-8")
    buf = io.BytesIO()
    write_mo(buf, read_catalog(lang), use_fuzzy=False)
    mo = path.with_suffix(".mo")
    if not mo.exists() or mo.read_bytes() != buf.getvalue():
        mo.write_bytes(buf.getvalue())
    return len(template), changed


def _fields(text: str) -> list[str]:
    """The replacement fields of a ``str.format`` template, with conversion and spec: ``{v!r:.3}``."""
    out = []
    for _, name, spec, conv in string.Formatter().parse(text):
        if name is not None:
            out.append("{" + name + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}")
    return sorted(out)


def _pending(msg, exempt: frozenset[str]) -> bool:
    """True if every file the message comes from is still to be translated (in ``exempt``)."""
    files = {f for f, _ in msg.locations}
    return bool(files) and files <= exempt


def problems(lang: str, template=None, exempt: Iterable[str] = NOT_YET_TRANSLATED) -> list[str]:
    """What keeps ``lang``'s catalog from being complete and in step with the source, one line each.

    A message the source has and the catalog lacks; an empty translation; a
    fuzzy one; an obsolete message; a translation whose ``{placeholders}`` differ
    from the English (it would raise or drop a number); a translation with
    Chinese in ``*italics*`` (:func:`cjk_italics`); a ``.mo`` that does
    not hold exactly the ``.po``'s translations.  Messages found only in the
    ``exempt`` files (default :data:`NOT_YET_TRANSLATED`) may still be missing
    or untranslated: they show in English until those files are converted.
    """
    import gettext

    exempt = frozenset(exempt)
    template = extract() if template is None else template
    catalog = read_catalog(lang)
    out = []
    for msg in template:
        if msg.id and catalog.get(msg.id, context=msg.context) is None and not _pending(msg, exempt):
            out.append(f"missing from {lang}: {_named(msg)} ({_where(msg)})")
    for msg in catalog:
        if not msg.id:
            continue
        ids = msg.id if isinstance(msg.id, tuple) else (msg.id,)
        strs = msg.string if isinstance(msg.string, tuple) else (msg.string,)
        source = template.get(msg.id, context=msg.context)
        if source is None:
            out.append(f"stale in {lang} (no longer in the source): {_named(msg)}")
        elif _pending(source, exempt) and (msg.fuzzy or not all(s and s.strip() for s in strs)):
            continue  # a message of a file still to be translated: English for now
        if not all(s and s.strip() for s in strs):
            out.append(f"untranslated in {lang}: {_named(msg)} ({_where(msg)})")
            continue
        if msg.fuzzy:
            out.append(f"fuzzy in {lang} (check it, then remove the fuzzy flag): {_named(msg)}")
            continue
        for s in strs:
            try:
                fields_ok = _fields(s) == _fields(ids[-1] if len(strs) == 1 and len(ids) > 1 else ids[0])
            except ValueError as exc:
                out.append(f"translation in {lang} is not a valid template ({exc}): {s!r}")
                continue
            if not fields_ok and not (len(ids) > 1 and _fields(s) in (_fields(ids[0]), _fields(ids[1]))):
                out.append(f"placeholders differ in {lang}: {ids[0]!r} -> {s!r}")
        for s in strs:
            if slanted := cjk_italics(s):
                out.append(f"italics on Chinese text in {lang} (a fake slant: use **bold**): {slanted[0]!r} in {_named(msg)}")
            if stray := stray_bold(s):
                out.append(f"** that Markdown cannot pair in {lang} (shown as asterisks): {stray[0]!r} in {_named(msg)}")
    for msg in catalog.obsolete.values():
        out.append(f"obsolete in {lang}: {_named(msg)}")
    mo = po_path(lang).with_suffix(".mo")
    if not mo.exists():
        out.append(f"{_shown(mo)} is missing: run scripts/translations.py")
    else:
        with open(mo, "rb") as fh:
            compiled = {k: v for k, v in gettext.GNUTranslations(fh)._catalog.items() if k}
        compiled = {
            (k if isinstance(k, str) else k[0]): v for k, v in compiled.items()
            if isinstance(k, str) or k[1] == 0
        }
        if compiled != _compiled_from(catalog):
            out.append(f"{_shown(mo)} is not in step with the .po: run scripts/translations.py")
    return out


#: Maths, code spans and placeholders: their ``*`` and ``_`` are not Markdown emphasis.
_NOT_MARKDOWN = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|\{[^{}]*\}", re.S)
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def _punctuation(c: str) -> bool:
    return unicodedata.category(c)[0] in "PS"


def single_emphasis(text: str) -> list[str]:
    """The spans of ``text`` that Markdown sets in italics: ``*x*`` and ``_x_`` (not ``**x**``).

    Delimiters pair as CommonMark's flanking rules pair them, near enough: an
    opening ``*`` is not followed by a space (nor by punctuation unless a space
    or punctuation comes before it), a closing one mirrors that; ``_`` also
    cannot open or close inside a word (``π_old``).  Maths, code and
    placeholders are left out, so ``$a*b$``, ``λ\\*`` and ``{kl_fwd}`` are not emphasis.
    """
    t = _NOT_MARKDOWN.sub("X", text)
    spans, opener = [], None
    for m in re.finditer(r"(?<!\\)(\*+|_+)", t):
        if len(m.group(0)) != 1:  # ** (bold) and longer runs
            continue
        before = t[m.start() - 1] if m.start() else " "
        after = t[m.end()] if m.end() < len(t) else " "
        left = not after.isspace() and (not _punctuation(after) or before.isspace() or _punctuation(before))
        right = not before.isspace() and (not _punctuation(before) or after.isspace() or _punctuation(after))
        if m.group(0) == "_":
            left, right = left and (not right or _punctuation(before)), right and (not left or _punctuation(after))
        if opener is not None and right and t[opener] == m.group(0):
            spans.append(t[opener:m.end()])
            opener = None
        elif left:
            opener = m.start()
    return spans


def stray_bold(text: str) -> list[str]:
    """The ``**`` of ``text`` that Markdown cannot pair, shown with the text around them.

    CommonMark opens ``**`` only where it is left-flanking and closes it only where it is
    right-flanking: in Chinese, ``**答案：**按`` does not close (punctuation before, a letter
    after), so the reader sees the asterisks; write ``**答案**：按``.  Delimiters are
    taken in order, odd ones opening and even ones closing; maths, code and placeholders
    count as letters, as what they become does.
    """
    t = _NOT_MARKDOWN.sub("X", text)
    stray = []
    for k, m in enumerate(re.finditer(r"(?<![\\*])\*\*(?!\*)", t)):
        before = t[m.start() - 1] if m.start() else " "
        after = t[m.end()] if m.end() < len(t) else " "
        if k % 2 == 0:
            ok = not after.isspace() and (not _punctuation(after) or before.isspace() or _punctuation(before))
        else:
            ok = not before.isspace() and (not _punctuation(before) or after.isspace() or _punctuation(after))
        if not ok:
            stray.append(t[max(0, m.start() - 12):m.end() + 12])
    return stray


def cjk_italics(text: str) -> list[str]:
    """The italic spans of ``text`` holding Chinese: browsers slant CJK glyphs artificially (use bold)."""
    return [s for s in single_emphasis(text) if _CJK.search(s)]


#: A label inside TeX: ``\\text{…}`` and its relatives (``\\textrm``, ``\\textbf``, ``\\textit``, ``\\mbox``).
_TEX_LABEL = re.compile(r"\\(?:text|textrm|textbf|textit|textsf|mbox)\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
#: A word of a label: two or more letters with a lower-case one (KL, GRPO are names), not a TeX command.
_LABEL_WORD = re.compile(r"(?<![\\A-Za-z_])[A-Za-z]*[a-z][A-Za-z]*(?![A-Za-z_])")
#: Words that stay in Latin letters in Chinese too (``locale/GLOSSARY.md``: token, logit, rollout … kept).
LATIN_IN_TEX = frozenset({"token", "tokens", "logit", "logits", "rollout", "batch", "detach", "softmax", "verl",
                          "approx", "kl"})


def tex_label_words(label: str) -> list[str]:
    """The English words of a TeX label (two or more letters, one lower-case; kept words left out)."""
    return [w for w in _LABEL_WORD.findall(label) if len(w) > 1 and w.lower() not in LATIN_IN_TEX]


def english_tex_labels(msgid: str, msgstr: str) -> list[str]:
    """The ``\\text{…}`` labels of a translation left in English where the English's labels were words.

    A label of ``msgstr`` is flagged when it has English words (:func:`tex_label_words`) and no
    Chinese, while ``msgid`` has at least one label with words: ``\\text{KL loss}`` left as it is
    in a Chinese sentence is flagged, ``\\text{KL 损失}`` and a ``\\text{KL}`` label are not.
    """
    if not any(tex_label_words(label) for label in _TEX_LABEL.findall(msgid)):
        return []
    return [label for label in _TEX_LABEL.findall(msgstr) if tex_label_words(label) and not _CJK.search(label)]


def untranslated_messages(lang: str, path: str, template=None) -> list[str]:
    """The messages of file ``path`` (relative, e.g. ``pages/home.py``) that ``lang`` lacks.

    Missing from the catalog, with an empty translation, or fuzzy.  A file is
    translated when this is empty and :func:`untranslated` finds nothing in it.
    """
    template = extract() if template is None else template
    catalog = read_catalog(lang)
    out = []
    for msg in template:
        if not msg.id or path not in {f for f, _ in msg.locations}:
            continue
        have = catalog.get(msg.id, context=msg.context)
        strs = () if have is None else have.string if isinstance(have.string, tuple) else (have.string,)
        if have is None or have.fuzzy or not all(s and s.strip() for s in strs):
            out.append(msg.id if isinstance(msg.id, str) else msg.id[0])
    return out


def _compiled_from(catalog) -> dict[str, str]:
    """What ``write_mo`` puts in the ``.mo`` (first forms): translated, non-fuzzy messages.

    As Babel does, a plural message counts once any form is set, an empty form
    falling back to the English.  A message with a context is keyed as gettext
    stores it, ``"context\x04message"``.
    """
    out = {}
    for m in catalog:
        if not m.id or not m.string or m.fuzzy:
            continue
        first = m.id[0] if m.pluralizable else m.id
        key = first if m.context is None else f"{m.context}\x04{first}"
        out[key] = (m.string[0] or m.id[0]) if m.pluralizable else m.string
    return out


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _named(msg) -> str:
    """A message as the report names it: its English, and its context if it has one."""
    first = msg.id[0] if isinstance(msg.id, tuple) else msg.id
    return repr(first) + (f" [{msg.context}]" if msg.context else "")


def _where(msg) -> str:
    return ", ".join(sorted({f for f, _ in msg.locations})) or "?"


# --------------------------------------------------------------------------- #
# Coverage: user-visible literals not wrapped in _()
# --------------------------------------------------------------------------- #

#: Calls whose string arguments are translated, extracted or never shown to a user.
WRAPPERS = {"_", "N_", "Nn_", "ngettext", "pgettext", "npgettext", "Message", "InputError", "UnreadableInput", "worded"}
NOT_SHOWN = {
    "latex", "formula", "formulas", "code", "echo", "get", "get_all", "getattr", "setattr", "hasattr",
    "isinstance", "startswith", "endswith", "split", "replace", "join", "strip", "removeprefix",
    "compile", "match", "fullmatch", "search", "sub", "findall", "debug", "info_log", "warn_log",
    "setdefault", "pop", "strftime", "encode", "decode", "ValueError", "TypeError", "KeyError",
    "AssertionError", "RuntimeError", "NotImplementedError", "option_menu", "cache_data",
    "cache_resource", "query_params", "switch_page", "rerun", "Page", "vega_lite_chart",
    "parse", "lookup", "spec", "session_state", "dict", "tuple", "list", "set", "sorted",
    "grid",  # lab.ui.grid(items, name=...): the name keys the panels
}
#: Keyword arguments that never hold user-visible text.
CODE_KEYWORDS = {
    "key", "icon", "format", "language", "mime", "on_click", "type", "width", "height",
    "url_path", "path", "bind", "anchor", "kind", "color", "unsafe_allow_html", "page",
    "vertical_alignment", "gap", "border", "label_visibility", "num_rows", "disabled",
    "encoding", "orient", "align", "baseline", "field", "scale", "sort", "stack", "mark",
    "datum", "interpolate", "strokeDash", "shape", "aggregate", "timeUnit",
}
#: Keyword arguments and dict keys whose string value a user reads.
TEXT_KEYWORDS = {
    "label", "help", "caption", "title", "placeholder", "page_title", "subtitle", "text",
    "body", "blurb", "question", "answer", "value_label", "legend_title", "noun", "x_title",
    "y_title", "true_label", "file_name", "name",
}
#: Keys of dicts (Vega-Lite specs, rows) whose string value a user reads ("name" names a dataset there).
TEXT_KEYS = TEXT_KEYWORDS - {"name"}
#: Calls whose positional string arguments a user reads.
TEXT_CALLS = {
    # streamlit
    "title", "header", "subheader", "markdown", "caption", "write", "text", "info", "warning",
    "error", "success", "toast", "metric", "button", "download_button", "page_link", "expander",
    "popover", "tabs", "selectbox", "radio", "slider", "select_slider", "number_input",
    "text_input", "text_area", "checkbox", "toggle", "multiselect", "segmented_control",
    "pills", "file_uploader", "set_page_config", "status", "spinner", "form_submit_button",
    # lab helpers
    "fail", "note", "chart", "table", "count_slider", "distribution_picker", "distribution_pair",
    "number", "select", "segmented", "csv_download", "Note", "PageInfo",
}
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_CODE = re.compile(r"[a-z0-9_.\-/:]*")
_SKIP_SEGMENTS = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|:material/[a-z_]+:|https?://\S+", re.S)


@dataclass(frozen=True)
class Finding:
    """A string literal a user would read that no ``_()`` wraps."""

    path: str
    line: int
    text: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.why}: {self.text[:70]!r}"


def reads_as_text(s: str, *, codes: bool = True) -> bool:
    """True if ``s`` has words a user reads.

    LaTeX, code spans, icons, links and ``{placeholders}`` are not words, nor
    are bare codes like ``k1``; with ``codes`` (the default) neither is a
    lower-case token without spaces (a key, a path, a slug: ``seed``,
    ``pages/home.py``, ``.png``).
    """
    rest = _PLACEHOLDER.sub(" ", _SKIP_SEGMENTS.sub(" ", s))
    if codes and _CODE.fullmatch(rest.strip()):
        return False
    return bool(re.search(r"[A-Za-z]{3,}", rest) or re.search(r"[A-Za-z]{2,}\s+[A-Za-z]", rest))


def reads_as_prose(s: str) -> bool:
    """True if ``s`` reads like a phrase: three or more words of letters."""
    rest = _SKIP_SEGMENTS.sub(" ", s)
    return len(re.findall(r"(?<![\w./:-])[A-Za-z][a-z]+(?![\w(/:-])", rest)) >= 3 and " " in rest


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _literals(node: ast.AST) -> Iterator[ast.AST]:
    """String constants and f-strings directly in ``node`` (through ``.format()``, ``+``, ``if``/``else``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, ast.JoinedStr):
        yield node
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        yield from _literals(node.func.value)
    elif isinstance(node, ast.BinOp):
        yield from _literals(node.left)
        yield from _literals(node.right)
    elif isinstance(node, ast.IfExp):
        yield from _literals(node.body)
        yield from _literals(node.orelse)


def _fstring_text(node: ast.JoinedStr) -> str:
    return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))


class _Scan:
    """Three passes over a module: what is exempt, what sits where a user reads it, what reads like prose."""

    def __init__(self, path: str, source: str) -> None:
        self.path, self.lines = path, source.splitlines()
        self.tree = ast.parse(source)
        self.findings: list[Finding] = []
        self.judged: set[int] = set()  # literals already judged in a UI position
        self.exempt: set[int] = _docstrings(self.tree)  # docstrings, wrapped text, raises, code
        # A data frame's columns are headers a user reads, except in charts/ (data for Vega-Lite).
        self.tables = not path.startswith("charts/")

    def run(self) -> list[Finding]:
        nodes = list(ast.walk(self.tree))
        for node in nodes:
            if isinstance(node, (ast.Raise, ast.Compare)):  # developer errors; codes compared
                self._exempt(node)
            elif isinstance(node, ast.Subscript):
                self._exempt(node.slice)
            elif isinstance(node, ast.Call):
                if _name(node) in WRAPPERS or _name(node) in NOT_SHOWN:
                    self._exempt(node)
                for kw in node.keywords:
                    if kw.arg in CODE_KEYWORDS:
                        self._exempt(kw.value)
            elif isinstance(node, ast.JoinedStr):
                self.exempt.update(id(v) for v in node.values)  # judged as one string
        for node in nodes:
            if isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value in TEXT_KEYS:
                        self._ui(value, f'"{key.value}" in a dict', codes=False)
        for node in nodes:
            if id(node) in self.exempt or id(node) in self.judged:
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if reads_as_prose(node.value) and not self._ok(node):
                    self.findings.append(Finding(self.path, node.lineno, node.value, "reads like prose"))
            elif isinstance(node, ast.JoinedStr):
                text = _fstring_text(node)
                if reads_as_prose(text) and not self._ok(node):
                    self.findings.append(Finding(self.path, node.lineno, text, "f-string that reads like prose"))
        return sorted(self.findings, key=lambda f: f.line)

    def _call(self, node: ast.Call) -> None:
        name = _name(node)
        if name in TEXT_CALLS:
            for arg in node.args:
                self._ui(arg, f"text argument of {name}()")
        if name == "DataFrame" and node.args and isinstance(node.args[0], ast.Dict) and self.tables:
            for key in node.args[0].keys:
                if key is not None:
                    self._ui(key, "table header", codes=False)
        for kw in node.keywords:  # a title or a label is never a code, even one lower-case word
            if kw.arg in TEXT_KEYWORDS:
                self._ui(kw.value, f"{kw.arg}=", codes=kw.arg == "file_name")

    def _ok(self, node: ast.AST) -> bool:
        first, last = node.lineno, getattr(node, "end_lineno", None) or node.lineno
        return any(OK_MARK in self.lines[i - 1] for i in range(first, min(last, len(self.lines)) + 1))

    def _exempt(self, node: ast.AST) -> None:
        self.exempt.update(id(sub) for sub in ast.walk(node))

    def _ui(self, value: ast.AST, why: str, *, codes: bool = True) -> None:
        for lit in _literals(value):
            if id(lit) in self.exempt or id(lit) in self.judged:
                continue
            self.judged.add(id(lit))
            if isinstance(lit, ast.JoinedStr):
                text, why = _fstring_text(lit), why + " (an f-string cannot be translated)"
            else:
                text = lit.value
            if reads_as_text(text, codes=codes) and not self._ok(lit):
                self.findings.append(Finding(self.path, lit.lineno, text, why))


def untranslated(path: Path) -> list[Finding]:
    """The user-visible string literals in ``path`` that no ``_()`` wraps."""
    path = path.resolve()
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    return _Scan(rel, path.read_text("utf-8")).run()


def english_tex_in_source(path: Path) -> list[Finding]:
    """TeX labels with English words written in ``path`` outside ``_()``: shown in English in every language.

    A string literal (not a docstring, not inside ``_()``, ``N_()`` …) holding
    ``\\text{…}`` with words (:func:`tex_label_words`).  Build such TeX with the
    translated label formatted in: ``r"\\text{{{w}}}".format(w=_("tangent"))``.
    A line marked ``# i18n: ok`` is skipped.
    """
    path = path.resolve()
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    source = path.read_text("utf-8")
    tree, lines = ast.parse(source), source.splitlines()
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node) in WRAPPERS:
            skip.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip or not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if OK_MARK in lines[node.lineno - 1]:
            continue
        for label in _TEX_LABEL.findall(node.value.replace("{{", "{").replace("}}", "}")):
            if words := tex_label_words(label):
                found.append(Finding(rel, node.lineno, label, f"English TeX label ({' '.join(words)}) outside _()"))
    return sorted(found, key=lambda f: f.line)


#: Words a reader may meet in English in any language: names of libraries, people and methods.
ALLOWED_NAMES = ("KL Estimator Lab", "John Schulman", "Okabe–Ito", "Student t",
                 "Approximating KL Divergence")  # Schulman's post: a published title
_WORD = r"[A-Za-z]{2,}[A-Za-z0-9_'’]*"
_SEP = r"(?:[ \t\n,;:!?\"()\[\]/&*.-]|(?<![A-Za-z])[A-Za-z](?![A-Za-z0-9_]))+"
_RUN = re.compile(rf"{_WORD}(?:{_SEP}{_WORD})*")


def english_runs(text: str, *, at_least: int = 4, allowed: Iterable[str] = ALLOWED_NAMES) -> list[str]:
    """Runs of ``at_least`` or more English words in ``text`` (words: two or more letters).

    Chinese characters and punctuation, digits and ``=`` break a run; single
    letters (``q``, ``p``) neither count nor break one.  So ``"PPO, GRPO and
    RLHF training"`` is a run of five, ``"PPO、GRPO 和 RLHF"`` none.  ``allowed`` names are
    removed first.  Strip code and LaTeX before calling (the browser test reads
    the page's text without them).
    """
    for name in allowed:
        text = text.replace(name, " · ")
    runs = []
    for m in _RUN.finditer(text):
        if len(re.findall(_WORD, m.group(0))) >= at_least:
            runs.append(m.group(0))
    return runs


def scanned_files(paths: Iterable[str] = SCANNED) -> list[Path]:
    """The Python files under ``paths`` (relative to the repository), except the i18n machinery itself."""
    out = []
    for name in paths:
        path = ROOT / name
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        out += [p for p in files if "__pycache__" not in p.parts and p.name != "__init__.py"]
    return [p for p in out if p.relative_to(ROOT).as_posix() not in {"i18n/__init__.py"}]


# --------------------------------------------------------------------------- #
# Command line
# --------------------------------------------------------------------------- #


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("update", help="extract, update the .po files, compile the .mo files (default)")
    sub.add_parser("check", help="exit 1 unless every catalog is complete and in step with the source")
    rep = sub.add_parser("report", help="list user-visible text not wrapped in _()")
    rep.add_argument("files", nargs="*", help="files or folders (default: app.py pages lab charts)")
    args = parser.parse_args(argv)

    if args.command == "report":
        files = scanned_files(args.files or SCANNED)
        total = 0
        for path in files:
            found = untranslated(path)
            total += len(found)
            for f in found:
                print(f)
        print(f"{total} untranslated strings in {len(files)} files", file=sys.stderr)
        return 0
    if args.command in (None, "update"):
        for lang in TRANSLATED:
            n, changed = update(lang)
            print(f"{_shown(po_path(lang))}: {n} messages" + (", updated" if changed else ", unchanged"))
    template = extract()
    failed = False
    for lang in TRANSLATED:
        todo = problems(lang, template)
        for line in todo:
            print(line)
        print(f"{lang}: {len(todo)} to fix", file=sys.stderr)
        failed = failed or bool(todo)
    return 1 if failed and args.command == "check" else 0


if __name__ == "__main__":
    sys.exit(main())
