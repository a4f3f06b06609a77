"""The first request to a fresh server lands on the right page, whatever link it follows.

Streamlit 1.67 decides on a server's first session whether ``pages/`` is a
legacy page folder (see ``lab/navigation.py``).  So each URL below is the very
first request to its own server: every canonical URL (``/estimator-lab``) and
every file-stem variant (``/estimator_lab``, which the legacy wrapper would
serve with a file-name menu).  The servers start at once and the pages load at
once; the tests then check what each browser ended up showing.
"""

from __future__ import annotations

import pytest

from lab.pages import PAGES

APP_NAME = "KL Estimator Lab"
FIRST_RUN_TIMEOUT_MS = 120_000  # 13 first runs share 2 cores
#: A stem link with query parameters, repeated keys included: they must survive the redirect.
STEM_QUERY = {"estimator_lab": "?n=500&keys=k1&keys=k3"}


def _canonical(info) -> str:
    return "/" + info.url_path


CASES = [(f"/{p.url_path}", p) for p in PAGES] + [
    (f"/{p.stem}{STEM_QUERY.get(p.stem, '')}", p) for p in PAGES if p.stem != p.url_path
]


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
                "n": (
                    page.locator("input[type='range'][aria-label='N, samples per estimate']")
                    .get_attribute("aria-valuetext")
                    if path.startswith("/estimator_lab")
                    else None
                ),
            }
            context.close()
        yield views


@pytest.mark.parametrize(("path", "info"), CASES, ids=[c[0] for c in CASES])
def test_a_first_request_shows_the_right_page_and_menu(first_views, path, info):
    view = first_views[path]
    assert view["exceptions"] == 0
    assert view["menu"] == [p.title for p in PAGES]  # titles, never file names
    assert view["h1"] == (APP_NAME if info is PAGES[0] else info.title)
    assert view["tab"] == (APP_NAME if info is PAGES[0] else f"{info.title} · {APP_NAME}")
    query = path.partition("?")[2]
    expected = _canonical(info) + (f"?{query}" if query else "")
    assert view["url"].rstrip("/") == expected.rstrip("/")  # a stem link ends on the canonical URL


def test_the_stem_links_settings_reach_the_page(first_views):
    view = first_views["/estimator_lab" + STEM_QUERY["estimator_lab"]]
    assert view["n"] == "500"
