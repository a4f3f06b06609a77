"""Every symbol the sidebar's "Symbols on this page" lists (``lab.notation``) is used on that page.

Each page is run (``AppTest``) at its defaults, and at the settings that bring out the rest of its
text (every step of every lesson; the audit with a rollout column, which adds the ESS); the text of
the main area (markdown, captions, labels and help, chart specs, tables; not the sidebar, whose
glossary lists the symbols themselves) must show each listed symbol, written as the pages write it.
An audit finding: the f-divergences page listed rb, k3^pq and N (the number of samples), though
there N only ever names the normal distribution, N(θ, 1).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

from kl_core.lessons import catalog
from lab import notation
from lab.pages import PAGES

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")

#: How each symbol shows on a page: plain text, the page's TeX, or its words.  Letters that are also
#: ordinary names (N of N(0, 1)) must not match those.
USED: dict[str, str] = {
    "q": r"\bq\b", "p": r"\bp\b", "x": r"x \\sim q|x ~ q|\bx\b", "r": r"\br\b",
    "logr": r"log r|\\log r", "kl": r"KL\[|\\mathrm\{KL\}", "E": r"\\mathbb\{E\}|\bE_q|\bE\[",
    "k1": r"k1|k_1", "k2": r"k2|k_2", "k3": r"k3|k_3",
    "k3pq": r"k3_pq|k_3\^\{?pq|k3 \(KL\[p‖q\]\)|r log r − \(r − 1\)|r\\log r - \(r - 1\)",
    "klambda": r"kλ|k_\\lambda", "lambda": r"λ|\\lambda", "lambda_star": r"λ\*|λ\\\*|\\lambda\^\*",
    "rb": r"\brb\b|\\mathrm\{rb\}|Rao–Blackwell", "pi_theta": r"π_θ|\\pi_\\theta",
    "pi_ref": r"π_ref|\\pi_\{?\\mathrm\{ref", "pi_old": r"π_old|\\pi_\{?\\mathrm\{old",
    "beta": r"β|\\beta", "pull": r"c\(x\)|\bc > 0", "t": r"\bt\b|\$t\$", "T": r"\bT\b|\$T\$",
    "s": r"\bs\b", "N": r"\bN\b(?! ?\()", "R": r"\bR\b", "f": r"\bf\b|\bf\(", "Df": r"D_f",
    "chi2": r"χ²|\\chi\^2", "theta": r"θ|\\theta", "F": r"\bF\b", "Var": r"Var",
    "SD": r"\bSD\b|\\mathrm\{SD\}|\bstd\b|standard deviation", "SE": r"\bSE\b|\\mathrm\{SE\}|standard error",
    "ESS": r"\bESS\b|\\mathrm\{ESS\}",
}

#: The settings each page is run at, beyond its defaults.
VIEWS: dict[str, list[dict[str, str]]] = {
    "lessons": [{"lesson": str(les.number), "step": str(s)}
                for les in catalog.LESSONS for s in range(1, len(les.steps) + 1)],
}
#: Symbols a page shows only for input a test run cannot give it, and the page file whose strings
#: show them: the audit's ESS metrics need an uploaded file with a rollout column (the example has none).
SOURCE_ONLY: dict[tuple[str, str], str] = {("audit", "ESS"): "pages/audit.py"}


def _strings(msg: Message, out: list[str]) -> None:
    """Every string of a proto (labels, help, markdown, chart specs), and its Arrow tables as text."""
    for field, value in msg.ListFields():
        values = list(value) if type(value).__name__.startswith("Repeated") else [value]
        for v in values:
            if isinstance(v, Message):
                _strings(v, out)
            elif isinstance(v, str):
                out.append(v)
            elif isinstance(v, bytes) and field.name == "data":
                try:
                    out.append(pa.ipc.open_stream(v).read_pandas().to_string())
                except (pa.ArrowInvalid, OSError):
                    pass


def _main_text(at: AppTest) -> str:
    out: list[str] = []

    def walk(node) -> None:
        if isinstance(getattr(node, "proto", None), Message):
            _strings(node.proto, out)
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at.main)
    return "\n".join(out)


def _page_text(url: str) -> str:
    page = next(p for p in PAGES if p.url_path == url)
    texts = []
    for query in [{}, *VIEWS.get(url, [])]:
        at = AppTest.from_file(APP, default_timeout=300)
        at.run()
        at.switch_page(page.path)
        at.query_params.update(query)
        at.run()
        assert not at.exception, (url, query, [e.value for e in at.exception])
        texts.append(_main_text(at))
    return "\n".join(texts)


def test_every_symbol_has_a_pattern():
    assert set(USED) == {s.key for s in notation.SYMBOLS}


@pytest.mark.parametrize("url", notation.ALL_PAGES)
def test_every_listed_symbol_is_used_on_its_page(url):
    text = _page_text(url)

    def shown(key: str) -> str:
        path = SOURCE_ONLY.get((url, key))
        return text if path is None else (ROOT / path).read_text()

    unused = [s.key for s in notation.symbols_for(url) if not re.search(USED[s.key], shown(s.key))]
    assert unused == [], f"/{url} lists symbols it never shows: {unused}"


def test_the_n_of_a_normal_is_not_the_number_of_samples():
    assert not re.search(USED["N"], "p = N(θ, 1) against $\\mathcal N(0, 1)$")
    assert re.search(USED["N"], "N = 200 samples") and re.search(USED["N"], "SD/√N")
