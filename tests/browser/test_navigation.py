"""End-to-end checks in headless Chromium: deep links, the menu, charts, shared links."""

from __future__ import annotations

import re

import pytest

from lab.pages import PAGES
from tests.browser.checks import Preloads

APP_NAME = "KL Estimator Lab"


def page_path(info) -> str:
    return "/" + info.url_path  # Home (url_path "") is served at "/"


def menu_titles(page) -> list[str]:
    links = page.locator("[data-testid='stSidebarNav'] a[data-testid='stSidebarNavLink']")
    # Each link's text is "<material icon name>\n\n<title>": keep the title.
    return [text.strip().split("\n")[-1].strip() for text in links.all_inner_texts()]


def drawn_charts(page) -> int:
    """Number of Vega-Lite charts whose SVG or canvas has actually been drawn."""
    return page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
            .filter(el => el.querySelector('svg .mark-rect path, svg .mark-rect rect, canvas'))
            .length"""
    )


@pytest.fixture(scope="module")
def loads(chromium):
    """The deep links' pages, 1280×800: the next one loads while one is checked (``checks.Preloads``)."""
    pre = Preloads(chromium)
    yield pre
    pre.close()


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path or "home" for p in PAGES])
def test_every_page_opens_by_its_own_deep_link(app_url, loads, wait_for_app, info):
    page = loads.take(app_url + page_path(info))
    for ahead in PAGES[PAGES.index(info) + 1:][:1]:
        loads.start(app_url + page_path(ahead))
    wait_for_app(page)

    expected_title = APP_NAME if info is PAGES[0] else f"{info.title} · {APP_NAME}"
    assert page.title() == expected_title
    assert page.locator("[data-testid='stMain'] h1").first.inner_text().strip() == (
        APP_NAME if info is PAGES[0] else info.title
    )
    # The menu lists the page titles, never file names (the legacy pages/ mode).
    assert menu_titles(page) == [p.title for p in PAGES]
    assert page.locator("[data-testid='stException']").count() == 0
    # The deep link stays where it was opened, with the browser's language written into it.
    assert page.url == app_url + page_path(info) + "?lang=en"
    loads.done(page)


def test_home_draws_its_charts(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(app_url + "/")
    wait_for_app(page)
    page.wait_for_function(
        """() => document.querySelectorAll("[data-testid='stVegaLiteChart'] svg .mark-rect path").length > 0""",
    )
    assert drawn_charts(page) >= 1


def slider(page):
    """The μ slider's range input (Streamlit draws it as ``<input type="range">``)."""
    return page.locator("[data-testid='stSlider'] input[type='range']").first


def home_numbers(page) -> dict[str, object]:
    """What a reader of Home sees: μ, the exact KL and each histogram's subtitle."""
    page.wait_for_function(  # all three histograms drawn, each with its subtitle
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")]
            .filter(t => t.textContent.includes('sample mean')).length >= 3"""
    )
    subtitles = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")]
            .map(t => t.textContent).filter(s => s.includes('sample mean'))"""
    )
    return {
        "mu": slider(page).input_value(),
        "exact_kl": page.locator("[data-testid='stMetricValue']").first.inner_text().strip(),
        "subtitles": subtitles,
    }


def test_shared_link_reproduces_the_view_in_a_new_browser(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(app_url + "/")
    wait_for_app(page)
    before = home_numbers(page)
    assert before["mu"] == "0.5"

    thumb = slider(page)
    thumb.focus()
    for _ in range(10):  # 10 steps of 0.05: μ = 0.5 → 1.0
        thumb.press("ArrowRight")
    page.wait_for_url(re.compile(r"[?&]mu=1(\.0+)?(&|$)"))
    page.wait_for_function(
        """() => {
            const m = document.querySelector("[data-testid='stMetricValue']");
            return m && m.innerText.trim() === '0.5';
        }"""
    )
    wait_for_app(page)
    after = home_numbers(page)
    assert after["mu"] == "1"
    assert after["exact_kl"] == "0.5"  # KL[N(0,1), N(1,1)] = 1/2
    assert len(after["subtitles"]) == 3
    assert after["subtitles"] != before["subtitles"]

    shared = page.url
    other = new_page()  # a new browser context: no cookies, no session state
    other.goto(shared)
    wait_for_app(other)
    assert home_numbers(other) == after
    assert other.url == shared


def test_a_bad_link_value_shows_a_note_and_the_default(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(app_url + "/?mu=abc")
    wait_for_app(page)
    warning = page.locator("[data-testid='stAlertContentWarning']")
    assert "mu=abc" in warning.first.inner_text()
    assert slider(page).input_value() == "0.5"
    assert "mu=" not in page.url  # Streamlit dropped the unusable value from the URL
    assert page.locator("[data-testid='stException']").count() == 0
