"""Shared checks of a page as a reader sees it (issue 10 readability, issue 13 language).

Used by the pages' own browser modules (``test_bregman_gap.py``,
``test_f_divergences.py``, ``test_approx_kl.py``):

* :func:`open_at` opens a page in a fresh context at a screen size and waits
  until every chart is drawn and the page is still;
* :func:`readability_problems` lists what a reader would find cut off or
  unreadable: a sideways scroll, a chart under 260 px, a metric label cut
  short, a display formula that neither fits nor scrolls in its own box, a
  chart text cut with "…", a Markdown table wider than its box that does not
  scroll, and raw notation (``^{``, ``_{``, ``\\frac``,
  ``π_θ``-style subscripts) in prose outside maths and code;
* :func:`main_text`, :func:`numbers`, :func:`chart_numbers` read the main
  area's words and numbers, as ``test_language.py`` does for Home.
"""

from __future__ import annotations

import re

#: The sizes of issue 10: a small laptop and a phone.
LAPTOP = {"width": 1024, "height": 768}
PHONE = {"width": 390, "height": 844}
MIN_CHART_PX = 260

#: The main area's words as a reader sees them, without code and maths (and icon names), nor
#: the cells of data tables (st.dataframe: data such as library option names; its headers are
#: checked by the coverage test of tests/lab/test_translations.py).
TEXT_OF = """([selector, more]) => {
    const skip = "script, style, code, pre, .katex, [data-testid='stCode'], [data-testid='stIconMaterial'], "
        + "[data-testid='stDataFrame']" + (more ? ", " + more : "");
    const out = [];
    for (const root of document.querySelectorAll(selector)) {
        const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            if (!n.parentElement.closest(skip)) out.push(n.textContent);
        }
    }
    return out.join("\\n");
}"""
MAIN = "[data-testid='stMain']"
NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?")
#: Notation that should be typeset: TeX braces and commands, plain-text subscripts.
RAW_NOTATION = re.compile(r"\^\{|_\{|\\frac|\b[πp]_(?:θ|ref|old|\w)|\bD_f\b|\bE_q\b")

_MEASURE = """() => {
    const cut = el => el.scrollWidth > el.clientWidth + 1;
    const scrolls = el => {
        for (let p = el; p; p = p.parentElement) {
            const s = getComputedStyle(p);
            if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && p.scrollWidth > p.clientWidth) {
                return true;
            }
        }
        return false;
    };
    return {
        scroll: [document.documentElement.scrollWidth, window.innerWidth],
        charts: [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
            .map(e => Math.round(e.getBoundingClientRect().width)),
        metrics: [...document.querySelectorAll("[data-testid='stMetricLabel']")]
            .filter(e => cut(e) || [...e.querySelectorAll('*')].some(cut)).map(e => e.innerText),
        formulas: [...document.querySelectorAll('.katex-display')]
            .filter(e => cut(e) && !scrolls(e)).map(e => e.innerText.slice(0, 40)),
        chart_text: [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")]
            .map(t => t.textContent).filter(t => t.endsWith('…')),
        tables: [...document.querySelectorAll("[data-testid='stMarkdownContainer'] table")]
            .filter(t => {
                const box = t.closest("[data-testid='stMarkdownContainer']").getBoundingClientRect();
                return t.scrollWidth > box.width + 1 && !scrolls(t);
            }).map(t => t.innerText.slice(0, 40)),
    };
}"""


def open_at(new_page, url: str, wait_for_app, viewport: dict[str, int], charts: int = 0):
    """A fresh page at ``viewport`` showing ``url``: its ``charts`` charts (at least) drawn,
    and the page still."""
    page = new_page()
    page.set_viewport_size(viewport)
    page.goto(url)
    wait_for_app(page)
    page.wait_for_function(
        """(n) => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
            .filter(el => el.querySelector('svg text')).length >= n""",
        arg=charts,
    )
    wait_for_app.settled(page)
    return page


def readability_problems(page) -> list[str]:
    """What a reader would find cut off or unreadable on ``page``, one line each."""
    m = page.evaluate(_MEASURE)
    out = []
    width, inner = m["scroll"]
    if width > inner:
        out.append(f"the page scrolls sideways: {width} px wide in {inner} px")
    out += [f"a chart is {w} px wide (< {MIN_CHART_PX})" for w in m["charts"] if w < MIN_CHART_PX]
    out += [f"metric label cut: {t!r}" for t in m["metrics"]]
    out += [f"display formula cut: {t!r}" for t in m["formulas"]]
    out += [f"chart text cut: {t!r}" for t in m["chart_text"]]
    out += [f"a table is cut, with no scroll box: {t!r}" for t in m["tables"]]
    out += [f"raw notation in prose: {line!r}" for line in main_text(page).splitlines()
            if RAW_NOTATION.search(line)]
    return out


def main_text(page, skip: str = "") -> str:
    """The main area's text outside code and maths, one text node a line (and outside ``skip``,
    a CSS selector)."""
    return page.evaluate(TEXT_OF, [MAIN, skip])


#: The "Code: …" expanders of ``lab.ui.show_source``: their docstring line is shown in English
#: only (the core's docstrings are English), so its numbers are not compared across languages.
SOURCE = "[data-testid='stExpander']:has(summary code)"


def numbers(page) -> list[str]:
    """Every number in the main area outside code, maths and the source expanders, sorted
    (word order differs between languages)."""
    return sorted(n.replace("−", "-") for n in NUMBER.findall(main_text(page, skip=SOURCE)))


def chart_numbers(page) -> list[str]:
    """Every number in the charts' texts (titles, axes, labels), sorted."""
    texts = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")]
            .map(t => t.textContent)"""
    )
    return sorted(n.replace("−", "-") for t in texts for n in NUMBER.findall(t))
