"""Shared checks for the pages' own browser tests (issue 10 readability, issue 13 language).

Not a test module: ``test_<page>.py`` modules import it.  :func:`open_page` opens
a URL at one of :data:`SIZES` and waits until every chart is drawn;
:func:`defects` lists what a reader would find wrong there (sideways scroll,
narrow charts, cut metric labels, formulas that neither fit nor scroll, raw
notation in prose); :func:`prose` and :func:`numbers` read the main area's
words and numbers for the language checks.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from tests.browser.conftest import RUN_TIMEOUT_MS, wait_until_settled

#: The sizes of issue 10: a small laptop and a phone (and 150 % zoom of a 1280 px screen).
SIZES = {
    "1024x768": {"viewport": {"width": 1024, "height": 768}},
    "390x844": {"viewport": {"width": 390, "height": 844}},
    "853x533@1.5": {"viewport": {"width": 853, "height": 533}, "device_scale_factor": 1.5},
}
MIN_CHART_PX = 260

#: Lines of prose a reader sees in the main area: text nodes outside code, maths, icon names,
#: charts (their SVG text is data, checked by the chart tests), tables (headers are data) and
#: the file uploader's drop zone (Streamlit's own words, "Upload" and its size limit) and
#: what the user typed (text areas and inputs).
PROSE = """() => {
    const skip = "script, style, code, pre, .katex, svg, [data-testid='stCode'], [data-testid='stIconMaterial'], "
        + "[data-testid='stAlertDynamicIcon'], [data-testid='stDataFrame'], "
        + "[data-testid='stDataFrameResizable'], [data-testid='stTable'], "
        + "[data-testid='stFileUploaderDropzone'], textarea, input";
    // One line per block (paragraph, list item, heading, label, button, tab …): words of two
    // blocks never run together, words on either side of a formula in one block do.
    const block = "p, li, h1, h2, h3, h4, h5, h6, summary, button, label, td, th, "
        + "[data-testid='stCaptionContainer'], [data-baseweb='tab'], [data-testid='stMetricLabel']";
    const lines = [];
    let current = null;
    const root = document.querySelector("[data-testid='stMain']");
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        const el = n.parentElement;
        if (el.closest(skip) || getComputedStyle(el).fontFamily.includes("Material")) continue;
        const owner = el.closest(block) || el;
        if (owner === current) lines[lines.length - 1] += n.textContent;
        else { lines.push(n.textContent); current = owner; }
    }
    return lines.join("\\n。\\n");
}"""
_MEASURE = """(minChart) => {
    const out = [];
    const sw = document.documentElement.scrollWidth;
    if (sw > innerWidth) out.push(`page scrolls sideways: ${sw} > ${innerWidth}`);
    for (const el of document.querySelectorAll("[data-testid='stVegaLiteChart']")) {
        const w = el.getBoundingClientRect().width;
        if (w < minChart - 0.5) out.push(`chart ${Math.round(w)} px wide`);
    }
    for (const el of document.querySelectorAll("[data-testid='stMetricLabel']")) {
        if (el.scrollWidth > el.clientWidth + 1)
            out.push(`metric label cut: ${el.innerText} (${el.scrollWidth} > ${el.clientWidth})`);
    }
    for (const el of document.querySelectorAll(".katex-display")) {
        if (el.scrollWidth <= el.clientWidth + 1) continue;
        let box = el, scrolls = false;
        for (let i = 0; i < 3 && box; i++, box = box.parentElement) {
            const o = getComputedStyle(box).overflowX;
            if (o === "auto" || o === "scroll") { scrolls = true; break; }
        }
        if (!scrolls) out.push(`formula cut: ${el.innerText.slice(0, 40)}`);
    }
    return out;
}"""
#: Notation that should have been typeset: TeX markup, or π/p/D/E with a plain-text subscript.
RAW_NOTATION = re.compile(r"\^\{|_\{|\\frac|[πpDE]_(?:θ|ref|old|f|q|\{)|E_q\[")
_NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?")


@contextlib.contextmanager
def open_page(chromium, url: str, size: str = "1024x768", *, metrics: int = 0,
              dark: bool = False) -> Iterator[object]:
    """``with open_page(...) as page``: ``url`` in a new browser context at ``size``, every chart drawn.

    ``metrics``: wait until at least that many ``st.metric`` values are drawn (they can
    appear a moment after the page has otherwise settled).
    """
    context = chromium.new_context(**SIZES.get(size, {"viewport": {"width": 1280, "height": 800}}),
                                   color_scheme="dark" if dark else "light")
    try:
        context.set_default_timeout(RUN_TIMEOUT_MS)
        page = context.new_page()
        page.goto(url)
        scroll_through(page)
        wait_until_settled(page)
        if metrics:
            page.wait_for_function(
                """(n) => [...document.querySelectorAll("[data-testid='stMetricValue']")]
                    .filter(e => e.innerText.trim()).length >= n""", arg=metrics)
            wait_until_settled(page)
        yield page
    finally:
        context.close()


def scroll_through(page) -> None:
    """Scroll the main area to the bottom and back: charts draw once they have been in view."""
    page.wait_for_selector("[data-testid='stMain'] h1")
    for _ in range(40):
        at_end = page.evaluate("""() => { const m = document.querySelector("[data-testid='stMain']");
            m.scrollBy(0, 700); return m.scrollTop + m.clientHeight >= m.scrollHeight - 2; }""")
        page.wait_for_timeout(120)
        if at_end:
            break
    page.evaluate("""() => document.querySelector("[data-testid='stMain']").scrollTo(0, 0)""")


def defects(page) -> list[str]:
    """What breaks issue 10's criteria on the page as it is now drawn (empty: none)."""
    found = page.evaluate(_MEASURE, MIN_CHART_PX)
    found += [f"raw notation in prose: {m.group(0)!r} in {line.strip()[:60]!r}"
              for line in prose(page).splitlines() for m in RAW_NOTATION.finditer(line)]
    return found


def prose(page) -> str:
    """The main area's prose (see :data:`PROSE`)."""
    return page.evaluate(PROSE)


def numbers(page) -> list[str]:
    """Every number in the main area outside code and maths, chart text included, sorted.

    The "Code:" expanders are left out: they show the core's docstring in English only; so are
    the "Show the numbers" tables (``lab.ui.show_numbers``), the chart data already compared
    through the charts' own text.
    """
    text = page.evaluate("""() => {
        const skip = "script, style, code, pre, .katex, [data-testid='stCode'], [data-testid='stIconMaterial'], "
            + "[data-testid='stExpander']:has([data-testid='stCode']), [class*='st-key-klnum-']";
        const out = [];
        const walk = document.createTreeWalker(document.querySelector("[data-testid='stMain']"),
                                               NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            if (!n.parentElement.closest(skip)) out.push(n.textContent);
        }
        return out.join("\\n");
    }""")
    return sorted(n.replace("−", "-") for n in _NUMBER.findall(text))


def metric_values(page) -> list[str]:
    """The values of every st.metric, in page order."""
    return [v.strip() for v in page.locator("[data-testid='stMetricValue']").all_inner_texts()]
