"""Babel extractor for ``crosswalk.toml``: the templates of its prose fields, for the catalog.

Registered in pyproject.toml (``[[tool.babel.mappings]]``, method
``kl_core.libraries.babel_extractor:extract_messages``) and run by
``scripts/translations.py``; the English of those messages is the TOML itself.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from kl_core._docfill import docfill
from kl_core.libraries.loading import PROSE_FIELDS
from kl_core.libraries.snippets import prose
from kl_core.validation import Message

__all__ = ["EXTRACTOR_SECTIONS", "extract_messages", "line_of"]

#: The Parameters and Yields sections of every Babel extractor of a data file (this one and
#: :func:`kl_core.doctor.releases.extract_messages`), for :func:`kl_core._docfill.docfill`.
EXTRACTOR_SECTIONS = {
    "extractor_args": """\
Parameters
----------
fileobj : binary file
    The data file.
keywords, comment_tags, options
    Babel's extractor arguments (unused).

Yields
------
tuple""",
}


def line_of(text: str, fragment: str) -> int:
    """The line number, from 1, at which ``fragment`` first stands in ``text`` (1 if it does not).

    Parameters
    ----------
    text : str
        A data file's text.
    fragment : str
        The start of a message as the file writes it.

    Returns
    -------
    int
        The line number Babel records for the message.
    """
    return text[: max(text.find(fragment), 0)].count("\n") + 1


def _prose_texts(raw: dict[str, Any]) -> list[str]:
    """The raw text of every prose field of a parsed data file (see :data:`PROSE_FIELDS`), in file order."""
    out = []
    tables = {
        "entries": [*raw.get("templates", {}).values(), *raw.get("entries", [])],
        "profiles": raw.get("profiles", []),
        "profiles.off_policy": [r for p in raw.get("profiles", []) for r in p.get("off_policy", [])],
        "profiles.cautions": [c for p in raw.get("profiles", []) for c in p.get("cautions", [])],
        "profiles.uncovered": [u for p in raw.get("profiles", []) for u in p.get("uncovered", [])],
        "aggregations.modes": [m for a in raw.get("aggregations", []) for m in a.get("modes", [])],
    }
    for table, rows in tables.items():
        for row in rows:
            out += [row[f] for f in PROSE_FIELDS[table] if isinstance(row.get(f), str)]
    return out


def _templates(message: Message) -> list[str]:
    """A message's template and its params' templates, depth first."""
    out = [message.template]
    for value in message.params.values():
        out += _templates(value)
    return out


_PLAIN_WORD = re.compile(r"(?<![\w.∇/@\[-])[a-z]{3,}(?![\w.(/@\]-])")


def _reads_as_words(template: str) -> bool:
    """Whether a template has a word to translate (not only placeholders, settings, code or notation)."""
    words = _PLAIN_WORD.findall(re.sub(r"\{[^{}]*\}", " ", template))
    return any(w not in ("log", "exp", "sign", "min", "max") for w in words)


@docfill(**EXTRACTOR_SECTIONS)
def extract_messages(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Any:
    """Babel extractor for ``crosswalk.toml``: the templates of its prose fields and their snippets.

    Registered in pyproject.toml (``[[tool.babel.mappings]]``) and used by
    ``scripts/translations.py``: the catalog's English comes from the data
    file itself, the one source of truth.  A template that is only
    placeholders, settings or notation (``{verl_plus_fix}``, ``GRPOConfig.beta``)
    has no words to translate and is left out.

    %(extractor_args)s
        ``(lineno, None, template, comments)``, each template once, in file order.
    """
    text = fileobj.read().decode("utf-8")
    raw = tomllib.loads(text)
    snippets = raw.get("snippets", {})
    seen: set[str] = set()
    for field_text in _prose_texts(raw):
        for template in _templates(prose(field_text, snippets, "extract")):
            if template in seen or not _reads_as_words(template):
                continue
            seen.add(template)
            first = template.split("{")[0][:40] or template[:40]
            yield line_of(text, first), None, template, []
