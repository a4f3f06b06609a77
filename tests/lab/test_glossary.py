"""locale/GLOSSARY.md: the Chinese terms are used consistently across the catalog.

For every glossary row marked ✓, each catalog message whose English has the
term (placeholders and code left out) has the Chinese term in its translation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from i18n import LOCALE_DIR

GLOSSARY = Path(LOCALE_DIR) / "GLOSSARY.md"
#: Placeholders, code spans, maths, dotted or snake_case names and paths (verl/trainer/ppo/…): not prose.
CODE = re.compile(r"\{[^{}]*\}|`[^`]*`|\$[^$]*\$|\b\w+[._]\w[\w.]*\b|[\w.@-]+(?:/[\w.@-]+)+")


def _pattern(term: str) -> re.Pattern:
    """``sample`` → samples too, ``tail(s)``, ``probability`` → probabilities; whole words."""
    term = re.sub(r"\s*\(.*?\)\s*$", "", term.strip())  # "drift (of a policy)" → "drift"
    words = re.escape(term).replace(r"\(s\)", "s?")
    if words.endswith("y"):
        words = words[:-1] + "(?:y|ies)"
    elif not words.endswith("s?"):
        words += "(?:s|es)?"
    return re.compile(rf"(?<![\w-]){words}(?![\w-])", re.IGNORECASE)


def _checked_rows() -> list[tuple[str, str]]:
    """(English variant, Chinese term) pairs of the rows marked ✓."""
    pairs = []
    for line in GLOSSARY.read_text("utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[4] != "✓":
            continue
        english, chinese = cells[0], cells[1]
        for en_part, zh_part in zip(english.split(" / "), chinese.split(" / "), strict=True):
            en_variants = [v.strip() for v in en_part.split(",")]
            zh_variants = [v.strip() for v in zh_part.split(",")]
            for i, en in enumerate(en_variants):
                pairs.append((en, zh_variants[i] if len(zh_variants) == len(en_variants) else zh_variants[0]))
    return pairs


ROWS = _checked_rows()


def test_the_glossary_has_checked_rows():
    assert len(ROWS) >= 20
    assert ("estimator", "估计器") in ROWS and ("bias", "偏差") in ROWS


@pytest.fixture(scope="module")
def catalog():
    with open(LOCALE_DIR / "zh" / "LC_MESSAGES" / "messages.po", "rb") as fh:
        # translated messages only: a file still on the list may leave some empty or fuzzy
        return [(m.id, m.string) for m in read_po(fh, locale="zh")
                if isinstance(m.id, str) and m.id and m.string and not m.fuzzy]


@pytest.mark.parametrize(("english", "chinese"), ROWS, ids=[e for e, _ in ROWS])
def test_every_translation_uses_the_glossary_term(catalog, english, chinese):
    pattern = _pattern(english)
    uses = [(en, zh) for en, zh in catalog if pattern.search(CODE.sub(" ", en))]
    wrong = [f"{en!r} → {zh!r}" for en, zh in uses if chinese not in zh]
    assert wrong == []
