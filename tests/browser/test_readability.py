"""Readable on a small laptop and a phone, in both languages (issue 10, issue 13's tests).

Every page of ``lab.pages.PAGES`` at 390×844 with ``?lang=en`` and ``?lang=zh``, and at
1024×768 and 320×640 (WCAG 2.1 reflow, 1.4.10: issue 21) in one language each, alternating
from page to page (:data:`BOTH_LANGUAGES`, :data:`NARROWEST`), at its defaults:

* **sideways** – the page does not scroll sideways: neither the document nor
  Streamlit's main scroll box is wider than the screen; the failure names the
  elements that stick out;
* **charts** – every chart (``stVegaLiteChart``) is at least 260 px wide;
* **chart text** – no chart title, subtitle, axis title or legend label is cut
  short: shortened by Vega's ``limit`` (it ends in "…") or running off the
  screen;
* **metrics** – no metric label is cut (its scrollWidth, and every
  descendant's, is not larger than its clientWidth);
* **formulas** – every display formula (``.katex-display``) fits its box, or
  scrolls inside its own box: its nearest ancestor that scrolls sideways
  (overflow-x auto/scroll) lies within the screen;
* **notation** – no raw notation in prose outside maths and code: LaTeX
  (``^{``, ``_{``, ``\\frac`` or any ``\\command``, ``$\\``) or subscripts
  written with an underscore (``π_θ``, ``π_ref``, ``p_θ``, ``D_f``, ``E_q[``);
* **the page modules' checks** – ``checks.defects`` finds nothing (so the pages' own
  modules check their non-default states only);
* **tables** – a table wider than its box fades out at its cut right edge (a cut number is
  not read as all of it), and a table that fits does not;
* **theme** – every chart text has a contrast of at least 3 against what is
  behind it: the bar or cell it is written on, else the page's background.  The English pass runs in the light theme, the Chinese pass in
  the dark one (the other checks do not depend on the theme), so every page is
  checked in both themes without loading it more often.

One browser context per (size, language), its pages loading a little ahead of the one measured
(``checks.Preloads``); each page is measured once (one JavaScript pass, after ``wait_for_app.settled``) and the
five checks read that measurement, so a failure says which check failed on
which page, at which size and in which language, with the element and its numbers.
"""

from __future__ import annotations

import pytest

from lab.pages import PAGES
from lab.ui import TABLE_EDGE_PX
from tests.browser.checks import (
    CHART_MIN_PX,
    RAW_LATEX,
    RAW_NOTATION,
    READABILITY_SIZES,
    SIZES,
    Preloads,
    defects,
)

LANGS = ("en", "zh")
#: The checks above do not depend on the theme, so the Chinese pass runs in the dark
#: theme: every page is also checked dark (chart text contrast) at no extra page load.
THEMES = {"en": "light", "zh": "dark"}
#: A cut table's canvas mask at the start of its scroll: the gradient's fade lies inside the box.
FADED = "100% 100%"
#: A pixel of slack for sub-pixel layout.
SLACK = 1

#: One pass over the page: everything the checks need, as plain data.
MEASURE = r"""() => {
    const vw = window.innerWidth;
    const main = document.querySelector("[data-testid='stMain']");
    const describe = (el) => {
        const id = el.getAttribute('data-testid') || el.closest('[data-testid]')?.getAttribute('data-testid') || '';
        const text = (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60);
        return `<${el.tagName.toLowerCase()}${id ? ' in ' + id : ''}> "${text}"`;
    };
    const scrollsX = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    // Inside a box that clips or scrolls sideways (that box is checked itself), or drawn
    // by KaTeX/SVG internals (MathML is visually hidden; SVG paths are clipped by their svg).
    const contained = (el) => {
        if (el.closest('.katex-mathml') || (el.ownerSVGElement)) return true;
        for (let a = el.parentElement; a && a !== main; a = a.parentElement) {
            if (getComputedStyle(a).overflowX !== 'visible') return true;
        }
        return false;
    };

    // 1. sideways: the outermost elements, outside any clipping box, that reach past the screen
    const sticking = [];
    if (main) {
        for (const el of main.querySelectorAll('*')) {
            const r = el.getBoundingClientRect();
            if (r.width === 0 || r.right <= vw + 1 || contained(el)) continue;
            const parent = el.parentElement;
            if (parent && parent !== main && parent.getBoundingClientRect().right > vw + 1) continue;
            sticking.push(`${describe(el)} reaches x = ${Math.round(r.right)} px`);
            if (sticking.length >= 5) break;
        }
    }
    const sideways = {
        doc: document.documentElement.scrollWidth, vw,
        main: main ? main.scrollWidth : 0, mainClient: main ? main.clientWidth : 0, sticking,
    };

    // 2. charts, and their titles, subtitles, axis titles and legend labels cut short:
    // by Vega's "limit" (it ends the text with "…") or off the screen
    const charts = [...document.querySelectorAll("[data-testid='stVegaLiteChart']")].map((el, i) => {
        const title = [...el.querySelectorAll('.role-title-text text, .role-title-text')]
            .map(t => t.textContent).find(t => t && t.trim()) || '';
        const axis = [...el.querySelectorAll('.role-axis-title text, .role-axis-title')]
            .map(t => t.textContent).find(t => t && t.trim()) || '';
        const box = el.getBoundingClientRect();
        const cut = [];
        el.querySelectorAll('.role-title-text text, .role-title-subtitle text, .role-axis-title text, '
                            + '.role-legend-label text, .role-legend-title text').forEach((t) => {
            const text = t.textContent.trim(), r = t.getBoundingClientRect();
            if (!text || r.width === 0) return;
            if (text.endsWith('…')) cut.push(`"${text}" (shortened to fit)`);
            else if (r.left < -1 || r.right > vw + 1) {
                cut.push(`"${text.slice(0, 50)}" (off the screen: x = ${Math.round(r.left)}…${Math.round(r.right)} px)`);
            }
        });
        return {i: i + 1, width: box.width, title: title.trim().slice(0, 50),
                axis: axis.trim().slice(0, 40), cut};
    });

    // 3. metric labels
    const metrics = [];
    for (const el of document.querySelectorAll("[data-testid='stMetricLabel']")) {
        let worst = {sw: el.scrollWidth, cw: el.clientWidth};
        for (const d of el.querySelectorAll('*')) {
            if (d.closest('.katex-mathml')) continue;  // visually hidden MathML, clipped to 1 px
            if (d.clientWidth > 0 && d.scrollWidth - d.clientWidth > worst.sw - worst.cw) {
                worst = {sw: d.scrollWidth, cw: d.clientWidth};
            }
        }
        metrics.push({text: el.innerText.trim().replace(/\s+/g, ' '), ...worst});
    }

    // 4. display formulas
    const formulas = [];
    for (const el of document.querySelectorAll('.katex-display')) {
        const tex = el.querySelector("annotation[encoding='application/x-tex']")?.textContent || el.innerText;
        let box = null;
        for (let a = el; a && a !== document.body; a = a.parentElement) {
            if (scrollsX(a)) { box = a; break; }
        }
        const r = el.getBoundingClientRect();
        const b = box ? box.getBoundingClientRect() : null;
        formulas.push({
            tex: tex.trim().replace(/\s+/g, ' ').slice(0, 70), sw: el.scrollWidth, cw: el.clientWidth,
            right: r.right, width: r.width, visible: r.width > 0,
            box: b ? {left: b.left, right: b.right} : null,
        });
    }

    // 5. prose outside maths and code (the sidebar too; chart text included)
    const skip = "script, style, code, pre, .katex, [data-testid='stCode'], [data-testid='stIconMaterial'], style, script";
    const prose = [];
    for (const root of document.querySelectorAll("[data-testid='stSidebar'], [data-testid='stMain']")) {
        const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            if (n.parentElement.closest(skip) || !n.textContent.trim()) continue;
            const box = n.parentElement.closest("[data-testid^='st']");
            prose.push([n.textContent, box ? box.getAttribute('data-testid') : '',
                        !!n.parentElement.closest("[data-testid='stVegaLiteChart'], [data-testid^='stDataFrame'], [data-testid='stTable']")]);
        }
    }
    // 6. chart text against the page's background (both themes)
    const rgb = (c) => (c.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
    const lum = ([r, g, b]) => {
        const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const app = document.querySelector("[data-testid='stApp']");
    const bg = rgb(getComputedStyle(app).backgroundColor);
    const faint = [];
    document.querySelectorAll("[data-testid='stVegaLiteChart'] svg").forEach((svg) => {
      // a label written on a bar or a cell is read against that mark's colour, not the page's
      const cells = [...svg.querySelectorAll('.mark-rect path')].map((el) => {
          const r = el.getBoundingClientRect(), st = getComputedStyle(el);
          return {r, fill: st.fill, opacity: Number(st.fillOpacity) * Number(st.opacity)};
      }).filter((c) => c.fill.startsWith('rgb') && c.opacity >= 0.5 && c.r.width > 0);
      svg.querySelectorAll('text').forEach((t) => {
        const text = t.textContent.trim();
        const fill = getComputedStyle(t).fill, cs = getComputedStyle(t);
        if (!text || !fill.startsWith('rgb') || cs.opacity === '0') return;
        // a halo: a thick copy in one colour under the label it lets stand out
        if (cs.stroke === fill && parseFloat(cs.strokeWidth) >= 3) return;
        const box = t.getBoundingClientRect(), x = box.left + box.width / 2, y = box.top + box.height / 2;
        const under = cells.filter((c) => c.r.left <= x && x <= c.r.right && c.r.top <= y && y <= c.r.bottom).pop();
        const [a, b] = [lum(rgb(fill)), lum(under ? rgb(under.fill) : bg)].sort((x, y) => x - y);
        const ratio = (b + 0.05) / (a + 0.05);
        if (ratio < 3) faint.push({text: text.slice(0, 40), fill, ratio, on: under ? under.fill : 'page'});
      });
    });
    const theme = {bg: getComputedStyle(app).backgroundColor, faint};

    // 7. tables wider than their box: is the cut-off right edge faded (lab.ui._TABLE_FADE_CSS)?
    const tables = [...document.querySelectorAll("[data-testid='stDataFrame']")].map((el, i) => {
        const scroller = el.querySelector('.dvn-scroller'), canvas = el.querySelector('.dvn-underlay > canvas');
        const head = (el.innerText || '').trim().split(/\s+/).slice(0, 3).join(' ');
        return {i: i + 1, head, sw: scroller ? scroller.scrollWidth : 0, cw: scroller ? scroller.clientWidth : 0,
                left: scroller ? scroller.scrollLeft : 0, mask: canvas ? getComputedStyle(canvas).maskSize : ''};
    });

    return {sideways, charts, metrics, formulas, prose, theme, tables,
            exception: document.querySelectorAll("[data-testid='stException']").length};
}"""

def _where(name: str, size: str, lang: str) -> str:
    return f"page {name!r} at {size} ?lang={lang} ({THEMES[lang]} theme)"


def _context(size: str, lang: str) -> dict:
    return {**SIZES[size], "color_scheme": THEMES[lang]}


@pytest.fixture(scope="module")
def measured(app_url, chromium, wait_for_app):
    """``measured(size, lang, url_path)``: the page's measurement, taken once per module.

    The next two cases' pages (in :data:`CASES` order) load while this one is measured
    (``checks.Preloads``: one browser context per (size, language), as one reused page had)."""
    loads = Preloads(chromium, timeout_ms=60_000)
    done: dict[tuple[str, str, str], dict] = {}
    order = [tuple(c.values) for c in CASES]

    def url(url_path: str, lang: str) -> str:
        return f"{app_url}/{url_path}?lang={lang}"

    def measure(size: str, lang: str, url_path: str) -> dict:
        key = (size, lang, url_path)
        if key not in done:
            page = loads.take(url(url_path, lang), **_context(size, lang))
            at = order.index(key) if key in order else len(order)
            for s, la, path in order[at + 1:at + 3]:
                if (s, la, path) not in done:
                    loads.start(url(path, la), **_context(s, la))
            try:
                wait_for_app.settled(page, timeout_ms=60_000)
                done[key] = {**page.evaluate(MEASURE), "defects": defects(page)}
            finally:
                loads.done(page)
        return done[key]

    yield measure
    loads.close()


#: The phone, where text wraps most and a cut is likeliest, in both languages on every page.
#: WCAG reflow's 320×640 and the small laptop's 1024×768 in one language each, alternating
#: along ``PAGES`` and never the same one on a page (Home: 320 px in English, 1024 px in
#: Chinese; Lessons the other way round): every page meets both languages and both themes at
#: a desktop width and at a phone width, in four page loads (five before, six for every pair).
BOTH_LANGUAGES = "390x844"
NARROWEST = "320x640"


def _langs(size: str, index: int) -> tuple[str, ...]:
    if size == BOTH_LANGUAGES:
        return LANGS
    return (LANGS[(index + (size != NARROWEST)) % 2],)


CASES = [
    pytest.param(size, lang, info.url_path, id=f"{info.url_path or 'home'}-{size}-{lang}")
    for index, info in enumerate(PAGES) for size in READABILITY_SIZES for lang in _langs(size, index)
]


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_nothing_the_page_modules_check_is_wrong(measured, size, lang, url_path):
    """``checks.defects``, which the pages' own modules run on their non-default states, at
    every page's defaults: among others a Markdown table cut with no scroll box, any chart
    text cut with "…", raw LaTeX in chart text and table cells."""
    found = measured(size, lang, url_path)["defects"]
    assert found == [], f"{_where(url_path or 'home', size, lang)}: " + "; ".join(found)


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_no_sideways_scroll(measured, size, lang, url_path):
    m = measured(size, lang, url_path)["sideways"]
    where = _where(url_path or "home", size, lang)
    assert m["doc"] <= m["vw"] + SLACK and m["main"] <= m["mainClient"] + SLACK, (
        f"{where} scrolls sideways: document {m['doc']} px, main area {m['main']} px "
        f"for a {m['vw']} px screen ({m['mainClient']} px main area); sticking out: "
        + ("; ".join(m["sticking"]) or "(nothing found outside a scroll box)")
    )


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_every_chart_is_wide_enough(measured, size, lang, url_path):
    charts = measured(size, lang, url_path)["charts"]
    narrow = [c for c in charts if c["width"] < CHART_MIN_PX - 0.5]
    assert not narrow, (
        f"{_where(url_path or 'home', size, lang)}: {len(narrow)} of {len(charts)} charts narrower "
        f"than {CHART_MIN_PX} px: "
        + "; ".join(f"chart {c['i']} ({c['title'] or c['axis']!r}) {c['width']:.0f} px" for c in narrow)
    )


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_no_chart_title_or_legend_is_cut(measured, size, lang, url_path):
    charts = measured(size, lang, url_path)["charts"]
    bad = [f"chart {c['i']}: " + "; ".join(c["cut"]) for c in charts if c["cut"]]
    assert not bad, (
        f"{_where(url_path or 'home', size, lang)}: chart text cut short (wrap it, shorten it, "
        "or move the numbers into the caption): " + " | ".join(bad)
    )


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_no_metric_label_is_cut(measured, size, lang, url_path):
    metrics = measured(size, lang, url_path)["metrics"]
    cut = [m for m in metrics if m["sw"] > m["cw"] + SLACK]
    assert not cut, (
        f"{_where(url_path or 'home', size, lang)}: {len(cut)} metric label(s) cut: "
        + "; ".join(f"{m['text']!r} needs {m['sw']} px, has {m['cw']} px" for m in cut)
    )


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_every_display_formula_fits_or_scrolls_in_its_own_box(measured, size, lang, url_path):
    m = measured(size, lang, url_path)
    vw = m["sideways"]["vw"]
    bad = []
    for f in m["formulas"]:
        if not f["visible"]:
            continue  # in a closed expander: measured when it is open (another test's job)
        fits = f["sw"] <= f["cw"] + SLACK and f["right"] <= vw + SLACK
        box = f["box"]
        scrolls = box is not None and box["left"] >= -SLACK and box["right"] <= vw + SLACK
        if not (fits or scrolls):
            where = (f"its scroll box spans x = {box['left']:.0f}…{box['right']:.0f} px" if box
                     else "no scroll box around it")
            bad.append(f"{f['tex']!r} is {f['sw']} px wide in a {f['cw']} px box, "
                       f"right edge at x = {f['right']:.0f} px; {where}")
    assert not bad, (
        f"{_where(url_path or 'home', size, lang)} (screen {vw} px): display formula(s) cut: "
        + "; ".join(bad)
    )


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_no_raw_notation_in_prose(measured, size, lang, url_path):
    m = measured(size, lang, url_path)
    hits: list[str] = []
    for text, box, data in m["prose"]:
        match = (RAW_LATEX if data else RAW_NOTATION).search(text)
        if match:
            start = max(0, match.start() - 30)
            hit = f"{match.group()!r} in {box or 'text'}: …{text[start:match.end() + 30].strip()}…"
            if hit not in hits:
                hits.append(hit)
    assert not hits, (
        f"{_where(url_path or 'home', size, lang)}: raw notation outside maths and code: "
        + "; ".join(hits[:8])
    )
    assert m["exception"] == 0, f"{_where(url_path or 'home', size, lang)} shows an exception"


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_chart_text_stands_out_from_the_background(measured, size, lang, url_path):
    theme = measured(size, lang, url_path)["theme"]
    assert not theme["faint"], (
        f"{_where(url_path or 'home', size, lang)}: chart text with contrast < 3 against the "
        f"background {theme['bg']}: "
        + "; ".join(f"{f['text']!r} in {f['fill']} on {f['on']} ({f['ratio']:.2f})"
                    for f in theme["faint"][:8])
    )


@pytest.mark.parametrize(("size", "lang", "url_path"), CASES)
def test_a_table_cut_at_the_edge_fades_there(measured, size, lang, url_path):
    """A table wider than its box fades out at its right edge, so a cut number ("0.00" of
    0.0041) is not read as all of it; a table that fits is not faded."""
    tables = measured(size, lang, url_path)["tables"]
    bad = []
    for t in tables:
        cut = t["sw"] > t["cw"] + SLACK and t["left"] <= SLACK
        if cut != (t["mask"] == FADED):
            bad.append(f"table {t['i']} ({t['head']!r}): {t['sw']} px in a {t['cw']} px box, "
                       f"mask-size {t['mask']!r}")
    assert not bad, f"{_where(url_path or 'home', size, lang)}: " + "; ".join(bad)


def test_a_table_scrolled_to_its_end_is_not_faded(app_url, new_page, wait_for_app):
    """The fade follows the table's scroll: at the end of Home's table on a phone its last
    column is read whole."""
    page = new_page(BOTH_LANGUAGES)
    page.goto(f"{app_url}/?lang=en")
    wait_for_app.settled(page, timeout_ms=60_000)
    table = page.locator("[data-testid='stDataFrame']").first
    table.scroll_into_view_if_needed()
    mask = "() => getComputedStyle(document.querySelector(\"[data-testid='stDataFrame'] .dvn-underlay > canvas\")).maskSize"
    assert page.evaluate(mask) == FADED
    page.evaluate("() => { const s = document.querySelector(\"[data-testid='stDataFrame'] .dvn-scroller\");"
                  " s.scrollLeft = s.scrollWidth; }")
    page.wait_for_function(f"() => ({mask})() !== {FADED!r}", timeout=10_000)
    assert page.evaluate(mask) == f"calc(100% + {TABLE_EDGE_PX}px) 100%"


def test_the_notation_pattern_can_fail():
    for raw in ["as e^{μ²} does", r"\frac{p}{q}", "π_θ and π_ref", "p_θ(x)", "D_f(p‖q)", "E_q[r − 1]",
                r"$\pi_\theta$", r"\mathrm{KL}"]:
        assert RAW_NOTATION.search(raw), raw
    for fine in ["approx_kl", "low_var_kl", "k3_pq", "kl_penalty", "π and θ", "p = normal(0,1)",
                 "KL[q‖p] = E[k1]", "sampler_col"]:
        assert not RAW_NOTATION.search(fine), fine
