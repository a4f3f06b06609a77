"""Issue 10's readability checks for one page as a browser shows it (used by the page modules).

:func:`defects` measures what a reader would find cut off or unreadable:

* ``sideways`` – the page scrolls sideways (``scrollWidth`` > ``innerWidth``);
* ``narrow_charts`` – charts narrower than 260 px (their widths);
* ``cut_metrics`` – metric labels whose text is cut ("λ*, least va…");
* ``cut_formulas`` – display formulas wider than their box that do not scroll in it;
* ``cut_titles`` – chart title or subtitle lines that Vega cut with "…";
* ``raw_notation`` – LaTeX or plain-text subscripts in prose outside maths and code
  (``^{``, ``_{``, ``\\frac``, ``π_θ``, ``p_θ``, ``D_f``, ``E_q[``).

:func:`open_sized` opens a page at one of :data:`SIZES` in a fresh browser context.
"""

from __future__ import annotations

#: Milliseconds a page may take to run and draw (as conftest's RUN_TIMEOUT_MS).
RUN_TIMEOUT_MS = 30_000

#: The sizes every page is tested at: a small laptop and a phone (issue 10).
SIZES = {"1024x768": {"width": 1024, "height": 768}, "390x844": {"width": 390, "height": 844}}

_DEFECTS = r"""() => {
  const out = {};
  const doc = document.documentElement;
  out.sideways = doc.scrollWidth > window.innerWidth ? [doc.scrollWidth + ' > ' + window.innerWidth] : [];
  out.narrow_charts = [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
    .map(e => Math.round(e.getBoundingClientRect().width)).filter(w => w < 260);
  out.cut_metrics = [...document.querySelectorAll("[data-testid='stMetricLabel']")]
    .filter(e => [e, ...e.querySelectorAll('*')].some(x => x.scrollWidth > x.clientWidth + 1))
    .map(e => e.innerText);
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  out.cut_formulas = [...document.querySelectorAll('.katex-display')]
    .filter(e => e.scrollWidth > e.clientWidth + 1 && !scrolls(e) && !scrolls(e.parentElement))
    .map(e => e.innerText.slice(0, 40));
  out.cut_titles = [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg .role-title text")]
    .map(t => t.textContent).filter(s => s.includes('…'));
  const skip = "script, style, code, pre, .katex, [data-testid='stCode'], [data-testid='stIconMaterial']";
  const parts = [];
  const walk = document.createTreeWalker(document.querySelector("[data-testid='stMain']"), NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.parentElement.closest(skip)) parts.push(n.textContent);
  }
  const raw = /.{0,25}(\^\{|_\{|\\frac|\\mathrm|π_|[pqD]_[θfλ{]|E_q\[).{0,25}/g;
  out.raw_notation = parts.join('\n').match(raw) || [];
  return out;
}"""


def defects(page) -> dict[str, list]:
    """Every readability defect on the page now, by kind (all lists empty: none)."""
    return page.evaluate(_DEFECTS)


def found(page) -> dict[str, list]:
    """:func:`defects` without the empty kinds, for an assertion message."""
    return {kind: items for kind, items in defects(page).items() if items}


_CHARTS = """(n) => document.querySelectorAll("[data-testid='stVegaLiteChart']").length >= n"""


def goto(page, url: str, wait_for_app, charts: int = 0) -> None:
    """Open ``url`` in ``page`` and wait until its ``charts`` charts are drawn and it is still."""
    page.goto(url)
    wait_for_app(page)
    page.wait_for_function(_CHARTS, arg=charts)
    wait_for_app.settled(page)


def open_sized(chromium, url: str, size: str, wait_for_app, charts: int = 0):
    """Open ``url`` at ``SIZES[size]`` in a new browser context, as :func:`goto`.

    Close it with ``page.context.close()``.
    """
    context = chromium.new_context(viewport=SIZES[size])
    context.set_default_timeout(RUN_TIMEOUT_MS)
    page = context.new_page()
    goto(page, url, wait_for_app, charts)
    return page
