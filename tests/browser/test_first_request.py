"""The first request to a fresh server lands on the right page, whatever link it follows.

Streamlit 1.67 runs a server's first session under its legacy ``pages/``
wrapper (see ``lab/navigation.py``).  So each URL below is the very first
request to its own server: canonical URLs, which are also their files' stems
(``/estimator-lab`` is ``pages/estimator-lab.py``), Home's stem ``/home``, and
old underscore stems (``/estimator_lab``), one of each kind (see :data:`SAMPLED`).  The servers start at once and
the pages load at once; the tests then check what each browser ended up
showing, and that the first slider move after a first load counts.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from lab.pages import PAGES

APP_NAME = "KL Estimator Lab"
FIRST_RUN_TIMEOUT_MS = 120_000  # the first runs share 2 cores
#: A stem link with query parameters, repeated keys included: they must survive the redirect.
STEM_QUERY = {"estimator_lab": "?n=500&keys=k1&keys=k3"}


def _canonical(info) -> str:
    return "/" + info.url_path


#: One fresh server per kind of URL, not per page: a server's first run costs a core for
#: seconds, and every page goes through the same code (lab.navigation.navigation makes every
#: page's old alias alike).  What lets the legacy wrapper find each page, its file named after
#: its URL, is checked for every page in tests/lab/test_pages.py.
SAMPLED = ("", "estimator-lab", "config-doctor", "audit")  # Home, two pages with an old alias, one without
#: The file stems: the sampled canonical URLs, and /home.
STEMS = [(f"/{p.url_path}", p) for p in PAGES if p.url_path in SAMPLED] + [
    (f"/{p.stem}", p) for p in PAGES if p.stem != p.url_path]
#: Old underscore stems (``/estimator_lab``), hidden aliases of the canonical URLs.  The
#: legacy wrapper knows no such file, so on a fresh server's first request Streamlit also shows
#: its "Page not found" notice before the alias sends the browser on.
OLD_STEMS = [
    (f"/{old}{STEM_QUERY.get(old, '')}", p)
    for p in PAGES
    if p.url_path in SAMPLED and (old := p.url_path.replace("-", "_")) != p.url_path
]
CASES = STEMS + OLD_STEMS


def _without_lang(url: str) -> tuple[str, list[str]]:
    """``url`` without its ``lang`` parameter, and that parameter's values."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    rest = urlencode([(k, v) for k, v in pairs if k != "lang"])
    return parts.path + (f"?{rest}" if rest else ""), [v for k, v in pairs if k == "lang"]


def _menu(page) -> list[str]:
    links = page.locator("[data-testid='stSidebarNav'] a[data-testid='stSidebarNavLink']")
    return [text.strip().split("\n")[-1].strip() for text in links.all_inner_texts()]


@pytest.fixture(scope="module")
def first_views(start_servers, chromium, wait_for_app):
    """For each case, what a fresh browser shows after its server's very first request."""
    with start_servers(len(CASES)) as urls:
        opened = []
        for (path, _), base in zip(CASES, urls, strict=True):
            context = chromium.new_context(viewport={"width": 1280, "height": 800})
            context.set_default_timeout(FIRST_RUN_TIMEOUT_MS)
            page = context.new_page()
            page.goto(base + path, wait_until="commit")
            opened.append((path, base, context, page))
        views = {}
        for path, base, context, page in opened:
            wait_for_app(page, timeout_ms=FIRST_RUN_TIMEOUT_MS)
            views[path] = {
                "tab": page.title(),
                "h1": page.locator("[data-testid='stMain'] h1").first.inner_text().strip(),
                "menu": _menu(page),
                "url": page.url.removeprefix(base),
                "exceptions": page.locator("[data-testid='stException']").count(),
                "dialogs": page.locator("[role='dialog']").all_inner_texts(),
                "n": (
                    page.locator("input[type='range'][aria-label='N, samples per estimate']")
                    .get_attribute("aria-valuetext")
                    if path.startswith("/estimator_lab")
                    else None
                ),
            }
            if path == "/estimator-lab":  # the first slider move after a first load counts
                thumb = page.locator("input[type='range'][aria-label='μ, the mean']").nth(1)
                thumb.focus()
                thumb.press("ArrowRight")
                page.wait_for_url(re.compile(r"[?&]p=normal%280\.15%2C1%29"), timeout=30_000)
                views[path]["moved"] = page.url.removeprefix(base)
            context.close()
        yield views


@pytest.mark.parametrize(("path", "info"), CASES, ids=[c[0] for c in CASES])
def test_a_first_request_shows_the_right_page_and_menu(first_views, path, info):
    view = first_views[path]
    assert view["exceptions"] == 0
    if (path, info) in STEMS:
        assert view["dialogs"] == []  # no "Page not found" from the legacy wrapper
    assert view["menu"] == [p.title for p in PAGES]  # titles, never file names
    assert view["h1"] == (APP_NAME if info is PAGES[0] else info.title)
    assert view["tab"] == (APP_NAME if info is PAGES[0] else f"{info.title} · {APP_NAME}")
    query = path.partition("?")[2]
    expected = _canonical(info) + (f"?{query}" if query else "")
    url, lang = _without_lang(view["url"])
    assert url.rstrip("/") == expected.rstrip("/")  # a stem link ends on the canonical URL
    # A link without a language gets the browser's (headless Chromium: en-US) written into it,
    # an old underscore link's redirect too (lab.state writes a bound widget's value into the
    # URL from the server where the browser's URL lacks it).
    assert lang == ["en"]


def test_the_stem_links_settings_reach_the_page(first_views):
    view = first_views["/estimator_lab" + STEM_QUERY["estimator_lab"]]
    assert view["n"] == "500"


def test_the_first_slider_move_after_a_first_load_counts(first_views):
    assert _without_lang(first_views["/estimator-lab"]["moved"]) == (
        "/estimator-lab?p=normal%280.15%2C1%29", ["en"]
    )
