"""The browser tests' one helper module: screen sizes, waiting, and what a reader sees (issues 10, 13, 18).

Not a test module: ``conftest.py`` and the ``test_<page>.py`` modules import it.

* :data:`SIZES` – every screen the tests use, by name; :data:`PAGE_SIZES` are issue 10's
  (a small laptop, a phone), :data:`READABILITY_SIZES` add WCAG reflow's 320×640;
* :data:`CHART_MIN_PX` – the narrowest a chart may be;
* :data:`RAW_LATEX`, :data:`PLAIN_SUBSCRIPT`, :data:`RAW_NOTATION` – notation a reader should
  never see untypeset;
* :func:`wait_for_app_run`, :func:`wait_until_settled` – a page's script run has ended, and
  every chart is drawn and the page is still; :func:`wait_for_a11y` – lab.a11y's deferred pass is done;
* :func:`open_page` / :func:`goto` / :func:`goto_all` – a page in a new browser context at one of :data:`SIZES`,
  its charts and metrics drawn; :class:`Preloads` – pages that load ahead while a test reads another;
* :func:`defects` – what a reader would find cut off or unreadable (one line each);
* :func:`prose`, :func:`main_text`, :func:`numbers`, :func:`chart_numbers`,
  :func:`metric_values` – the main area's words and numbers, for the language checks.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

#: Milliseconds Playwright waits for a page's script run to finish.
RUN_TIMEOUT_MS = 30_000

#: Every screen the browser tests use: the teacher's projector, a small laptop, a phone, WCAG
#: reflow's 320 CSS px (1.4.10), and 150 % browser zoom on a 1280 px screen.
SIZES: dict[str, dict] = {
    "1280x800": {"viewport": {"width": 1280, "height": 800}},
    "1024x768": {"viewport": {"width": 1024, "height": 768}},
    "390x844": {"viewport": {"width": 390, "height": 844}},
    "320x640": {"viewport": {"width": 320, "height": 640}},
    "853x533@1.5": {"viewport": {"width": 853, "height": 533}, "device_scale_factor": 1.5},
}
#: The sizes every page's own module checks (issue 10).
PAGE_SIZES = ("1024x768", "390x844")
#: The sizes of the readability grid (``test_readability.py``).
READABILITY_SIZES = ("1024x768", "390x844", "320x640")
#: No chart may be narrower (CSS px).
CHART_MIN_PX = 260

#: Raw LaTeX a reader should never see outside maths and code, wherever it is.
RAW_LATEX = re.compile(
    r"\^\{|_\{|\\frac|\$\\|\\(?:mathrm|mathbb|pi|theta|mu|sigma|lambda|log|left|right|cdot|sum|hat)\b"
)
#: Subscripts written with "_" (π_θ, p_θ, D_f, E_q[ …): typeset them in prose.  Table cells
#: and chart text cannot hold maths, and there "π_θ" is the plain-text convention, so only
#: :data:`RAW_LATEX` is refused there.
PLAIN_SUBSCRIPT = re.compile(r"π_|[pqDE]_(?:θ|λ|ref|old|f|q|\{)|\bp_\w|\bD_f\b|\bE_q\b|E_q\[")
#: Everything refused in prose.
RAW_NOTATION = re.compile(f"{RAW_LATEX.pattern}|{PLAIN_SUBSCRIPT.pattern}")

MAIN = "[data-testid='stMain']"
NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?")


# ----------------------------------------------------------------------------------- waiting

def wait_for_app_run(page, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Wait until Streamlit has connected and finished running the page script."""
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout_ms)
    page.wait_for_function(
        """() => {
            const app = document.querySelector("[data-testid='stApp']");
            return app && app.getAttribute('data-test-script-state') === 'notRunning'
                && !document.querySelector("[data-testid='stStatusWidget']")
                && document.querySelector("[data-testid='stMain'] h1");
        }""",
        timeout=timeout_ms,
    )


# Every chart drawn (an svg with text inside each vega-lite element) and the main
# area unchanged for ``quiet`` ms: vega-embed draws after the script run ends, so
# a reader of chart text or a late element must wait for this, not only the run.
_SETTLED = """([quiet]) => {
    const charts = [...document.querySelectorAll("[data-testid='stVegaLiteChart']")];
    if (!charts.every(el => el.querySelector('svg text'))) { window.__klSig = null; return false; }
    // a page (re)loading shows grey skeletons for what it will draw: no chart yet, so none undrawn
    if (document.querySelector("[data-testid='stSkeleton']")) { window.__klSig = null; return false; }
    const main = document.querySelector("[data-testid='stMain']");
    const sig = (main ? main.innerText : '') + '|' + charts.map(
        el => [...el.querySelectorAll('svg text')].map(t => t.textContent).join('/')).join('|');
    const now = performance.now();
    if (window.__klSig !== sig) { window.__klSig = sig; window.__klSince = now; return false; }
    return now - window.__klSince >= quiet;
}"""


def wait_until_settled(page, quiet_ms: int = 600, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Wait for the script run, then until every chart is drawn and the page has stopped changing."""
    wait_for_app_run(page, timeout_ms)
    page.wait_for_function(_SETTLED, arg=[quiet_ms], polling=150, timeout=timeout_ms)


#: lab.a11y's script has run on this document and its deferred pass (``fix``: the tabindex of
#: boxes that scroll, 200 ms after the page last changed) is not pending.
_A11Y_DONE = "() => !!window.__klA11y && !window.__klA11y.timer"


def wait_for_a11y(page, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Wait until lab.a11y's script has run and its deferred pass is done (not a fixed delay)."""
    page.wait_for_function(_A11Y_DONE, polling=50, timeout=timeout_ms)


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


_CHARTS_DRAWN = """(n) => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
    .filter(el => el.querySelector('svg text')).length >= n"""
_METRICS_DRAWN = """(n) => [...document.querySelectorAll("[data-testid='stMetricValue']")]
    .filter(e => e.innerText.trim()).length >= n"""


def goto(page, url: str, *, charts: int = 0, metrics: int = 0) -> None:
    """Open ``url`` in ``page``; wait until at least ``charts`` charts and ``metrics`` metric
    values are drawn (they can appear a moment after the run), every chart is drawn, and the
    page is still."""
    goto_all([(page, url)], charts=charts, metrics=metrics)


def goto_all(pages_urls, *, charts: int = 0, metrics: int = 0) -> None:
    """:func:`goto` for several ``(page, url)`` at once: every navigation starts first (the pages
    load side by side), then each page gets all of :func:`goto`'s waits in turn."""
    for page, url in pages_urls:
        page.goto(url, wait_until="commit")
    for page, _ in pages_urls:
        page.wait_for_load_state("load")
        _drawn(page, charts, metrics)


def _drawn(page, charts: int, metrics: int) -> None:
    scroll_through(page)
    wait_until_settled(page)
    drawn = page.evaluate(_CHARTS_DRAWN, charts) and page.evaluate(_METRICS_DRAWN, metrics)
    if not drawn:  # a late chart or metric: wait for it, and for the page to be still again
        page.wait_for_function(_CHARTS_DRAWN, arg=charts)
        page.wait_for_function(_METRICS_DRAWN, arg=metrics)
        wait_until_settled(page)


@contextlib.contextmanager
def open_page(chromium, url: str, size: str = "1024x768", *, charts: int = 0, metrics: int = 0,
              dark: bool = False) -> Iterator[object]:
    """``with open_page(...) as page``: ``url`` in a new browser context at ``SIZES[size]``
    (light or ``dark`` theme), as :func:`goto`; the context is closed after the block."""
    context = chromium.new_context(**SIZES[size], color_scheme="dark" if dark else "light")
    try:
        context.set_default_timeout(RUN_TIMEOUT_MS)
        page = context.new_page()
        goto(page, url, charts=charts, metrics=metrics)
        yield page
    finally:
        context.close()


class Preloads:
    """Pages that load ahead while a test reads another.

    ``start(url, **context)`` opens ``url`` in a new page and returns at once (the navigation
    is committed, the page goes on loading in the browser); ``take(url, **context)`` returns that
    page, started now if it was not, for the caller to wait on as after a ``page.goto``;
    ``done(page)`` closes it, and ``close()`` everything left.  ``context`` holds
    ``new_context``'s keywords (default: the 1280×800 projector, light theme); the pages of one
    set of keywords share one browser context, so they share its cache of the app's scripts as
    one page reused for each load would (a new context fetches and compiles them anew).
    The server runs one page's script while the browser draws or scans another, so the quiet
    windows of :func:`wait_until_settled` overlap instead of adding up; each page still gets
    every wait a page of its own would.
    """

    def __init__(self, chromium, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
        self._chromium = chromium
        self._timeout_ms = timeout_ms
        self._contexts: dict[str, object] = {}
        self._loading: dict[tuple[str, str], object] = {}

    def _context(self, context: dict):
        key = repr(sorted((context or {**SIZES["1280x800"], "color_scheme": "light"}).items()))
        if key not in self._contexts:
            ctx = self._chromium.new_context(**(context or {**SIZES["1280x800"], "color_scheme": "light"}))
            ctx.set_default_timeout(self._timeout_ms)
            self._contexts[key] = ctx
        return key, self._contexts[key]

    def start(self, url: str, **context) -> None:
        key, ctx = self._context(context)
        if (url, key) not in self._loading:
            page = ctx.new_page()
            self._loading[url, key] = page
            page.goto(url, wait_until="commit")

    def take(self, url: str, **context):
        self.start(url, **context)
        return self._loading.pop((url, self._context(context)[0]))

    @staticmethod
    def done(page) -> None:
        page.close()

    def close(self) -> None:
        for ctx in self._contexts.values():
            with contextlib.suppress(Exception):  # a context the browser has already closed
                ctx.close()
        self._contexts.clear()
        self._loading.clear()


# ----------------------------------------------------------------------------- readability

#: Lines of prose a reader sees in the main area: text nodes outside code, maths, icon names,
#: charts and tables (their text is data: :data:`RAW_LATEX` only, see :data:`_MEASURE`), the file
#: uploader's drop zone (Streamlit's own words, "Upload" and its size limit) and what the user
#: typed (text areas and inputs).
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

#: One pass over the page: every measurement :func:`defects` judges.
_MEASURE = """(minChart) => {
    const out = [];
    const cut = el => el.scrollWidth > el.clientWidth + 1;
    const styled = el => el && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    const scrolls = el => {  // an ancestor (or itself) that scrolls sideways and has something to scroll
        for (let p = el; p; p = p.parentElement) {
            if (styled(p) && p.scrollWidth > p.clientWidth) return true;
        }
        return false;
    };
    const sw = document.documentElement.scrollWidth;
    if (sw > innerWidth) out.push(`the page scrolls sideways: ${sw} px wide in ${innerWidth} px`);
    for (const el of document.querySelectorAll("[data-testid='stVegaLiteChart']")) {
        const w = el.getBoundingClientRect().width;
        if (w < minChart - 0.5) out.push(`a chart is ${Math.round(w)} px wide (< ${minChart})`);
        for (const t of el.querySelectorAll('svg text')) {
            if (t.textContent.includes('…')) out.push(`chart text cut: ${JSON.stringify(t.textContent)}`);
        }
    }
    for (const el of document.querySelectorAll("[data-testid='stMetricLabel']")) {
        // the visually hidden MathML of a formula is clipped to 1 px on purpose
        const bad = [el, ...el.querySelectorAll('*')].filter(x => !x.closest('.katex-mathml') && cut(x));
        if (bad.length) out.push(`metric label cut: ${el.innerText} (${bad[0].scrollWidth} > ${bad[0].clientWidth})`);
    }
    for (const el of document.querySelectorAll('.katex-display')) {
        // fits, or scrolls in its own box (itself or its parent) and that box does scroll
        if (cut(el) && (!(styled(el) || styled(el.parentElement)) || !scrolls(el))) {
            out.push(`display formula cut: ${el.innerText.slice(0, 40)}`);
        }
    }
    // a row of option buttons (segmented control, pills) that shows only some of its options
    for (const g of document.querySelectorAll("[data-testid='stMain'] [data-testid='stButtonGroup'] > div:has(> button)")) {
        const box = g.getBoundingClientRect();
        const hidden = [...g.querySelectorAll(':scope > button')].filter(b => {
            const r = b.getBoundingClientRect();
            return r.right > box.right + 1 || r.left < box.left - 1;
        });
        if (hidden.length) out.push(`options past the edge of their row: ${hidden.map(b => b.innerText.trim()).join(', ')}`);
    }
    for (const t of document.querySelectorAll("[data-testid='stMarkdownContainer'] table")) {
        const box = t.closest("[data-testid='stMarkdownContainer']").getBoundingClientRect();
        if (t.scrollWidth > box.width + 1 && !scrolls(t)) {
            out.push(`a table is cut, with no scroll box: ${t.innerText.slice(0, 40)}`);
        }
    }
    // chart text and table cells, outside their maths and code (KaTeX keeps its TeX source there)
    const shown = (el) => {
        const parts = [];
        const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            if (!n.parentElement.closest('script, style, code, pre, .katex')) parts.push(n.textContent);
        }
        return parts.join('');
    };
    const data = [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stVegaLiteChart'] svg text, "
        + "[data-testid='stMain'] [data-testid='stTable'] td, [data-testid='stMain'] [data-testid='stTable'] th, "
        + "[data-testid='stMain'] [data-testid='stMarkdownContainer'] td, "
        + "[data-testid='stMain'] [data-testid='stMarkdownContainer'] th")].map(shown);
    return {out, data};
}"""


def defects(page) -> list[str]:
    """What a reader would find cut off or unreadable on ``page`` now, one line each (empty: none).

    The page scrolls sideways; a chart is narrower than :data:`CHART_MIN_PX`; a chart text is
    cut with "…"; a metric label (or a part of it) is cut; a row of option buttons runs past its
    box (Streamlit scrolls it with no scrollbar: the options there look absent); a display
    formula neither fits nor scrolls in its own box; a Markdown table is wider than its box and does not scroll; raw
    notation (:data:`RAW_NOTATION`) in prose, or raw LaTeX (:data:`RAW_LATEX`) in chart text
    and table cells.
    """
    m = page.evaluate(_MEASURE, CHART_MIN_PX)
    found = list(m["out"])
    found += [f"raw notation in prose: {hit.group(0)!r} in {line.strip()[:60]!r}"
              for line in prose(page).splitlines() for hit in RAW_NOTATION.finditer(line)]
    found += [f"raw LaTeX in chart or table text: {hit.group(0)!r} in {text.strip()[:60]!r}"
              for text in m["data"] for hit in RAW_LATEX.finditer(text)]
    return found


# ------------------------------------------------------------------------- words and numbers

def prose(page) -> str:
    """The main area's prose (see :data:`PROSE`)."""
    return page.evaluate(PROSE)


#: The main area's words as a reader sees them, without code and maths (and icon names), nor
#: the cells of data tables (st.dataframe: data such as library option names; its headers are
#: checked by the coverage test of tests/lab/test_translations.py); chart text included.
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


def main_text(page, skip: str = "") -> str:
    """The main area's text outside code, maths and data tables, one text node a line (and
    outside ``skip``, a CSS selector)."""
    return page.evaluate(TEXT_OF, [MAIN, skip])


#: Left out of the numbers: the "Code: …" expanders of ``lab.ui.show_source`` (they show the
#: core's docstring in English only) and the "Show the numbers" tables of ``lab.ui.show_numbers``
#: (the chart data, compared through the charts' own text).
_NUMBERS_OF = """([tables]) => {
    const skip = "script, style, code, pre, .katex, [data-testid='stCode'], [data-testid='stIconMaterial'], "
        + "[data-testid='stExpander']:has([data-testid='stCode']), [data-testid='stExpander']:has(summary code), "
        + "[class*='st-key-klnum-']" + (tables ? "" : ", [data-testid='stDataFrame']");
    const out = [];
    const walk = document.createTreeWalker(document.querySelector("[data-testid='stMain']"), NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        if (!n.parentElement.closest(skip)) out.push(n.textContent);
    }
    return out.join("\\n");
}"""


def numbers(page, *, tables: bool = True) -> list[str]:
    """Every number in the main area outside code and maths, chart text included, sorted
    (word order differs between languages); see :data:`_NUMBERS_OF` for what is left out.

    ``tables=False`` leaves out the cells of ``st.dataframe`` tables too, for a comparison of
    two languages: the grid puts in the page only the cells in its scrolled view, rows and
    columns, so which cells are there depends on the column widths, that is on the language of
    the headers (on /sequences the gradient table's sixth column, "‖g‖ / ‖∇KL‖", is in view in
    English and scrolled off in Chinese).  The tables' data come from the same code in both
    languages; their headers are checked by the translation tests.
    """
    text = page.evaluate(_NUMBERS_OF, [tables])
    return sorted(n.replace("−", "-") for n in NUMBER.findall(text))


def chart_numbers(page) -> list[str]:
    """Every number in the charts' texts (titles, axes, labels), sorted."""
    texts = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")]
            .map(t => t.textContent)"""
    )
    return sorted(n.replace("−", "-") for t in texts for n in NUMBER.findall(t))


def metric_values(page) -> list[str]:
    """The values of every st.metric, in page order."""
    return [v.strip() for v in page.locator("[data-testid='stMetricValue']").all_inner_texts()]
