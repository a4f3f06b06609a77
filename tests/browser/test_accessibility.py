"""WCAG 2.1 AA on every page, checked by axe-core in Chromium (issue 21).

Every page of ``lab.pages.PAGES``, with ``?lang=en`` and ``?lang=zh``, is loaded
at its defaults, and in one of the two languages (:data:`STATE_LANG`, alternating)
also in a non-default state (:data:`STATES`, with its first "Show the numbers" table open).  On the loaded page axe-core (bundled by
``axe-playwright-python``; no npm) runs the WCAG 2.0/2.1 A and AA rules
(:data:`TAGS`) in both themes (``prefers-color-scheme`` switched live: Streamlit
follows it) and at both screen sizes (1280×800, 390×844; the window resized), so
a page costs two loads per language.  By default the (theme, size) pairs follow
:func:`_combos` (each page sees all four pairs, and each language all four over the
pages); ``KL_AXE_FULL=1`` runs every pair everywhere.  A failure names the rule, the element, the
page, the language, the theme and the size.

It also checks ``<html lang>`` (``zh-Hans`` on Chinese pages, ``en`` on English
ones), also after the language switch is used, and that every chart has an
accessible name.

:data:`KNOWN` lists violations inside Streamlit's own markup that the app cannot
fix, each with its upstream issue; the test skips exactly that rule on exactly
those elements.  It is empty: none is left.
"""

from __future__ import annotations

import os

import pytest

from lab.pages import PAGES
from tests.browser.checks import SIZES, Preloads, wait_for_a11y

#: axe-core's tags for WCAG 2.0 and 2.1, levels A and AA.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]}
#: The screens scanned (of ``checks.SIZES``): the projector and a phone.
SCAN_SIZES = ("1280x800", "390x844")
THEMES = ("light", "dark")
LANGS = ("en", "zh")
HTML_LANG = {"en": "en", "zh": "zh-Hans"}
#: The "Show the numbers" expander's label in each language.
NUMBERS = {"en": "Show the numbers", "zh": "显示数据"}
#: The lessons' "Show me" button (reveals the answer and the step's chart).
SHOW_ME = {"en": "Show me", "zh": "显示答案"}

#: One non-default state per page (a link's query), besides the defaults.
STATES = {
    "": "mu=1.5",
    "lessons": "lesson=2&step=4&v=17",
    "estimator-lab": "keys=k1&keys=k2&keys=k3&keys=k_lambda&keys=k3_pq",
    "control-variates": "lam=0.8",
    "bregman-gap": "p=normal(0,2)",
    "f-divergences": "tan=true",
    "gradients": "k=9&t=2.5&smp=old&option=OpenRLHF:k3:reward",
    "sequences": "src=drift&K=40&first=true&T=256",
    "approx-kl": "cpath=logit",
    "audit": "dir=other-sampler",
    "config-doctor": "ex=trl",
}

#: Violations in Streamlit's own markup that neither CSS nor ARIA can soundly fix:
#: rule id -> [(CSS selector of the elements, upstream issue)].  Empty: none left.
KNOWN: dict[str, list[tuple[str, str]]] = {}

_MATCHES = """([target, selectors]) => {
    const el = document.querySelector(target);
    return !!el && selectors.some((s) => el.matches(s) || !!el.closest(s));
}"""


def test_every_page_has_a_non_default_state():
    assert set(STATES) == {info.url_path for info in PAGES}


def _settle(page, wait_for_app) -> None:
    page.evaluate("window.__klSig = null")  # a redraw after a resize or theme change
    wait_for_app.settled(page, timeout_ms=60_000)
    wait_for_a11y(page, timeout_ms=60_000)  # lab.a11y's script runs 200 ms after the last change


def _violations(page, where: str) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = []
    for v in Axe().run(page, options=AXE_OPTIONS).response["violations"]:
        known = KNOWN.get(v["id"], [])
        for node in v["nodes"]:
            target = " ".join(map(str, node["target"]))
            if known and page.evaluate(_MATCHES, [node["target"][0], [s for s, _ in known]]):
                continue
            summary = " ".join((node.get("failureSummary") or "").split())[:220]
            found.append(f"{v['id']} ({v['impact']}) on {where}: {target[-160:]} "
                         f"{node['html'][:120]!r}: {summary}")
    return found


#: Every (theme, size) with ``KL_AXE_FULL=1``.  By default a covering design that keeps CI
#: inside its time (a page load and an axe run each take seconds): every (theme, size) pair
#: meets every page once, the English defaults two of them, the non-default state a third
#: and the Chinese defaults the fourth (:func:`_combos`); each language meets all four pairs
#: over the pages.
FULL = os.environ.get("KL_AXE_FULL", "").strip() not in ("", "0")
#: The language whose pass also loads the page's non-default state, alternating along ``PAGES``.
STATE_LANG = {info.url_path: LANGS[i % 2] for i, info in enumerate(PAGES)}

#: The four (theme, size) pairs as two halves: the English defaults scan one half (alternating
#: along ``PAGES``), the Chinese defaults and the state one pair each of the other half.
HALVES = ([("light", "1280x800"), ("dark", "390x844")], [("dark", "1280x800"), ("light", "390x844")])
PAGE_INDEX = {info.url_path: i for i, info in enumerate(PAGES)}


#: Notes whether the page's elements change from now on (axe itself adds none).
_WATCH = """() => {
    if (window.__klWatch) window.__klWatch.disconnect();
    window.__klMoved = false;
    window.__klWatch = new MutationObserver(() => { window.__klMoved = true; });
    window.__klWatch.observe(document.body, {childList: true, subtree: true});
}"""
_MOVED = "() => window.__klMoved || !!(window.__klA11y && window.__klA11y.timer)"


def _scan(page, wait_for_app, where: str, tries: int = 3) -> list[str]:
    """axe's violations on the settled page.  Streamlit can redraw a part a second after a
    resize (seen: an expander's content, a formula in it new and not yet given its tabindex by
    lab.a11y's pass 200 ms later); a scan that such a change overlapped is read again once the
    page is still, so what is reported is what stays."""
    for _ in range(tries):
        page.evaluate(_WATCH)
        found = _violations(page, where)
        if not found or not page.evaluate(_MOVED):
            return found
        _settle(page, wait_for_app)
    return found


def _scan_all(page, wait_for_app, where: str, combos) -> list[str]:
    found = []
    for theme, size in combos:
        page.emulate_media(color_scheme=theme)
        page.set_viewport_size(SIZES[size]["viewport"])
        _settle(page, wait_for_app)
        found += _scan(page, wait_for_app, f"{where}, {theme} theme, {size}")
    page.emulate_media(color_scheme="light")
    page.set_viewport_size(SIZES["1280x800"]["viewport"])
    return found


def _combos(lang: str, which: str, url_path: str) -> list[tuple[str, str]]:
    """The (theme, size) pairs scanned for one load: ``which`` is ``"default"`` or ``"state"``."""
    if FULL:
        return [(t, s) for t in THEMES for s in SCAN_SIZES]
    i = PAGE_INDEX[url_path]
    if (lang, which) == ("en", "default"):
        return HALVES[i % 2]
    rest = HALVES[1 - i % 2]
    zh_pair = rest[(i // 2) % 2]
    return [zh_pair] if which == "default" else [c for c in rest if c != zh_pair]


def test_every_page_meets_every_theme_and_size_and_each_language_all_of_them():
    pairs = {(t, s) for t in THEMES for s in SCAN_SIZES}
    by_lang = {lang: set() for lang in LANGS}
    for info in PAGES:
        url = info.url_path
        loads = [(lang, _combos(lang, "default", url)) for lang in LANGS]
        loads.append((STATE_LANG[url], _combos(STATE_LANG[url], "state", url)))
        seen = [c for _, combos in loads for c in combos]
        assert sorted(seen) == sorted(pairs), (url, seen)  # each pair once
        for lang, combos in loads:
            by_lang[lang].update(combos)
    assert all(found == pairs for found in by_lang.values()), by_lang


@pytest.fixture(scope="module")
def loads(chromium):
    """The module's page loads, 1280×800 pages of one context (as the reused page per language
    had): the next case's page, and this case's state, load while one is scanned
    (``checks.Preloads``)."""
    pre = Preloads(chromium, timeout_ms=60_000)
    yield pre
    pre.close()


CASES = [pytest.param(info.url_path, lang, id=f"{info.url_path or 'home'}-{lang}")
         for info in PAGES for lang in LANGS]


def _urls(app_url: str, url_path: str, lang: str) -> tuple[str, str | None]:
    """The case's default URL, and its non-default state's (None: the state is not loaded)."""
    default = f"{app_url}/{url_path}?lang={lang}"
    state = f"{default}&{STATES[url_path]}" if FULL or lang == STATE_LANG[url_path] else None
    return default, state


@pytest.mark.parametrize(("url_path", "lang"), CASES)
def test_no_axe_violations(app_url, loads, wait_for_app, url_path, lang):
    default, state = _urls(app_url, url_path, lang)
    page = loads.take(default)
    if state:
        loads.start(state)  # it loads while the defaults are scanned
    at = [c.values for c in CASES].index((url_path, lang))
    if at + 1 < len(CASES):
        loads.start(_urls(app_url, *CASES[at + 1].values)[0])  # and so does the next case's page
    name = url_path or "home"
    found = []
    _settle(page, wait_for_app)
    page.wait_for_function("([want]) => document.documentElement.lang === want", arg=[HTML_LANG[lang]],
                           timeout=10_000)  # <html lang> (fails with a timeout)
    found += _scan_all(page, wait_for_app, f"page {name!r} ?lang={lang} at its defaults",
                       _combos(lang, "default", url_path))
    loads.done(page)

    if state is None:
        assert not found, f"{len(found)} axe violation(s):\n" + "\n".join(found[:25])
        return
    page = loads.take(state)
    _settle(page, wait_for_app)
    if url_path == "lessons":  # a step shows its chart once the answer is revealed
        page.get_by_role("button", name=SHOW_ME[lang]).click()
        _settle(page, wait_for_app)
    summary = page.locator("[data-testid='stExpander'] summary", has_text=NUMBERS[lang]).first
    summary.click()
    page.locator("[data-testid='stExpander'] table").first.wait_for()
    _settle(page, wait_for_app)
    found += _scan_all(page, wait_for_app, f"page {name!r} ?lang={lang}&{STATES[url_path]}",
                       _combos(lang, "state", url_path))
    loads.done(page)
    assert not found, f"{len(found)} axe violation(s):\n" + "\n".join(found[:25])


def test_html_lang_follows_the_language_switch(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(f"{app_url}/control-variates?lang=en")
    wait_for_app(page)
    assert page.evaluate("document.documentElement.lang") == "en"
    page.locator("[data-testid='stSidebar'] [data-testid='stButtonGroup'] button", has_text="zh").click()
    page.wait_for_function("document.documentElement.lang === 'zh-Hans'")
    assert "lang=zh" in page.url
    page.locator("[data-testid='stSidebar'] [data-testid='stButtonGroup'] button", has_text="en").click()
    page.wait_for_function("document.documentElement.lang === 'en'")


def test_every_chart_has_a_name(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(f"{app_url}/gradients?lang=zh")
    wait_for_app(page)
    page.wait_for_function("""() => document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")
        .length > 0""")
    wait_for_app.settled(page)
    charts = page.evaluate("""() => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
        .map((el) => [el.getAttribute('role'), el.getAttribute('aria-label') || '',
                      el.querySelector('svg')?.getAttribute('aria-hidden')])""")
    assert charts
    for role, label, hidden in charts:
        assert role == "graphics-document" and label.startswith("图表") and len(label) > 8, (role, label)
        assert hidden == "true"


def test_200_percent_zoom_loses_nothing(app_url, chromium, wait_for_app):
    """WCAG 1.4.4: the 1280×800 projector at 200 % zoom (640×400 CSS px, 2 device px each).

    Every page: nothing scrolls sideways except inside its own box, and the
    navigation (the collapsed sidebar's button) is still on screen.
    """
    zoomed = {"viewport": {"width": 640, "height": 400}, "device_scale_factor": 2}
    urls = [f"{app_url}/{info.url_path}?lang=en" for info in PAGES]
    loads = Preloads(chromium, timeout_ms=60_000)  # two pages load ahead of the one measured
    bad = []
    try:
        for i, info in enumerate(PAGES):
            page = loads.take(urls[i], **zoomed)
            for ahead in urls[i + 1:i + 3]:
                loads.start(ahead, **zoomed)
            _settle(page, wait_for_app)
            m = page.evaluate("""() => {
                const main = document.querySelector("[data-testid='stMain']");
                const nav = document.querySelector("[data-testid='stExpandSidebarButton']")
                    || document.querySelector("[data-testid='stSidebarNav']");
                const r = nav ? nav.getBoundingClientRect() : null;
                return {doc: document.documentElement.scrollWidth, vw: window.innerWidth,
                        main: main.scrollWidth, mainClient: main.clientWidth,
                        nav: !!r && r.width > 0 && r.right <= window.innerWidth && r.bottom <= window.innerHeight};
            }""")
            where = info.url_path or "home"
            if m["doc"] > m["vw"] + 1 or m["main"] > m["mainClient"] + 1:
                bad.append(f"{where} scrolls sideways at 200 %: {m}")
            if not m["nav"]:
                bad.append(f"{where}: no navigation on screen at 200 %")
            loads.done(page)
    finally:
        loads.close()
    assert not bad, "\n".join(bad)


def test_reduced_motion_turns_transitions_off(app_url, chromium, wait_for_app):
    """``prefers-reduced-motion: reduce``: no animated transition in Streamlit's CSS or ours."""
    durations = """() => [...document.querySelectorAll("[data-testid='stSidebar'], [data-testid='stSidebar'] *,"
        + " [data-testid='stMain'] button, [data-testid='stExpander'] *")]
        .flatMap((el) => {
            const cs = getComputedStyle(el);
            return [...cs.transitionDuration.split(','), ...cs.animationDuration.split(',')]
                .map((d) => parseFloat(d) * (d.trim().endsWith('ms') ? 1 : 1000));
        }).reduce((a, b) => Math.max(a, b), 0)"""
    longest = {}
    for motion in ("no-preference", "reduce"):
        context = chromium.new_context(viewport={"width": 1280, "height": 800}, reduced_motion=motion)
        context.set_default_timeout(60_000)
        try:
            page = context.new_page()
            page.goto(f"{app_url}/control-variates?lang=en")
            wait_for_app(page)
            page.wait_for_function("""() => [...document.querySelectorAll('style')]
                .some((s) => s.textContent.includes('prefers-reduced-motion'))""")  # the page CSS
            longest[motion] = page.evaluate(durations)
        finally:
            context.close()
    assert longest["no-preference"] > 50, longest  # the check can see a transition
    assert longest["reduce"] <= 1, longest
