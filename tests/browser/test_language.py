"""Home and the app shell in Chinese, in headless Chromium (issue 13).

* ``?lang=zh`` at Home's defaults and at a non-default state: no exception, no
  run of four or more English words outside code and maths
  (``scripts.translations.english_runs``), and the same numbers as ``?lang=en``;
* the sidebar switch changes the language and keeps the page's state;
* the language survives the menu and Home's links to other pages;
* a link without a language opens in the browser's (a zh-CN browser: Chinese)
  and gets it written into the URL.
"""

from __future__ import annotations

import re

import pytest

from scripts.translations import english_runs

#: An element's words as a reader sees them, without code and maths (and icon names):
#: its text nodes, one per line (so a chart's axis labels do not run together).
TEXT_OF = """(selector) => {
    const skip = "script, style, code, pre, .katex, [data-testid='stCode'], [data-testid='stIconMaterial']";
    const out = [];
    for (const root of document.querySelectorAll(selector)) {
        const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            if (!n.parentElement.closest(skip)) out.push(n.textContent);
        }
    }
    return out.join("\\n");
}"""
PAGE = "[data-testid='stSidebar'], [data-testid='stMain']"
MAIN = "[data-testid='stMain']"
#: Every number on the page outside code: metrics, captions, chart titles and axes.
NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?")
H1_IS = """(text) => document.querySelector("[data-testid='stMain'] h1")?.innerText.trim() === text"""
CHARTS_DRAWN = """(n) => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
    .filter(el => el.querySelector('svg .mark-rect path')).length >= n"""


def _open(page, url, wait_for_app):
    """Open ``url`` (None: the page's navigation has already started) and wait for its charts."""
    if url is not None:
        page.goto(url)
    wait_for_app(page)
    page.wait_for_function(CHARTS_DRAWN, arg=3)
    wait_for_app.settled(page)


def _numbers(page) -> list[str]:
    """Every number in the main area outside code and maths, sorted (word order differs)."""
    return sorted(n.replace("−", "-") for n in NUMBER.findall(page.evaluate(TEXT_OF, MAIN)))


def _chart_numbers(page) -> list[str]:
    texts = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")]
            .map(t => t.textContent)"""
    )
    return sorted(n for t in texts for n in NUMBER.findall(t))


@pytest.mark.parametrize("query", ["", "&mu=1.5"], ids=["defaults", "mu=1.5"])
def test_home_in_chinese_has_no_english_and_the_same_numbers(app_url, new_page, wait_for_app, query):
    zh, en = new_page(), new_page()
    en.goto(f"{app_url}/?lang=en{query}", wait_until="commit")  # it loads while zh is opened
    _open(zh, f"{app_url}/?lang=zh{query}", wait_for_app)
    _open(en, None, wait_for_app)

    assert zh.locator("[data-testid='stException']").count() == 0
    assert zh.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "KL 估计器实验室"
    assert zh.title() == "KL 估计器实验室"
    text = zh.evaluate(TEXT_OF, PAGE)
    assert re.search(r"[\u4e00-\u9fff]", text)
    assert english_runs(text) == []
    assert english_runs(en.evaluate(TEXT_OF, PAGE))  # the check can fail: English has such runs

    assert zh.locator("[data-testid='stMetricValue']").first.inner_text() == (
        en.locator("[data-testid='stMetricValue']").first.inner_text()
    )
    assert _chart_numbers(zh) == _chart_numbers(en)
    sidebar_zh = zh.locator("[data-testid='stSidebar']").inner_text()
    sidebar_en = en.locator("[data-testid='stSidebar']").inner_text()
    assert NUMBER.findall(sidebar_zh) == NUMBER.findall(sidebar_en)
    assert _numbers(zh) == _numbers(en)


def test_the_switch_changes_the_language_and_keeps_the_state(app_url, new_page, wait_for_app):
    page = new_page()
    _open(page, f"{app_url}/?lang=en&mu=1.5", wait_for_app)
    kl = page.locator("[data-testid='stMetricValue']").first.inner_text()
    page.locator("[data-testid='stSidebar'] button", has_text=re.compile(r"^zh$")).click()
    page.wait_for_url(re.compile(r"[?&]lang=zh(&|$)"))
    page.wait_for_function(H1_IS, arg="KL 估计器实验室")
    wait_for_app(page)
    assert "mu=1.5" in page.url
    assert page.locator("[data-testid='stSlider'] input[type='range']").first.input_value() == "1.5"
    assert page.locator("[data-testid='stMetricValue']").first.inner_text() == kl


def test_the_language_follows_the_menu_and_homes_links(app_url, new_page, wait_for_app):
    page = new_page()
    _open(page, f"{app_url}/?lang=zh", wait_for_app)
    # Home's own link to the Estimator Lab (st.page_link)
    page.locator("[data-testid='stMain'] [data-testid='stPageLink'] a", has_text="估计器实验").click()
    page.wait_for_url(re.compile(r"/estimator-lab\?(.*&)?lang=zh(&|$)"))
    wait_for_app(page)
    page.wait_for_function("() => document.title === '估计器实验 · KL 估计器实验室'")
    # the sidebar menu, back to Home
    page.locator("[data-testid='stSidebarNav'] a", has_text="首页").click()
    page.wait_for_url(re.compile(r"/\?(.*&)?lang=zh(&|$)"))
    page.wait_for_function(H1_IS, arg="KL 估计器实验室")


def test_a_link_without_a_language_opens_in_the_browsers(app_url, chromium, wait_for_app):
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(f"{app_url}/?mu=1")
        wait_for_app(page)
        page.wait_for_url(re.compile(r"[?&]lang=zh(&|$)"))  # written in, so a shared link keeps it
        assert "mu=1" in page.url
        assert page.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "KL 估计器实验室"
    finally:
        context.close()


def test_the_switch_relabels_the_pickers_menus_and_keeps_their_values(app_url, new_page, wait_for_app):
    """The distribution picker is shared by every page: its family menu follows the language."""
    page = new_page()
    page.goto(f"{app_url}/estimator-lab?q=laplace(0,1)&n=500&lang=en")
    wait_for_app(page)
    shown = """() => [...document.querySelectorAll("[data-testid='stSelectbox'] input")].map(e => e.value)"""
    page.wait_for_function(f"() => ({shown})().join() === 'Laplace,Normal'")  # q's and p's families
    page.locator("[data-testid='stSidebar'] button", has_text=re.compile(r"^zh$")).click()
    page.wait_for_url(re.compile(r"[?&]lang=zh(&|$)"))
    page.wait_for_function(f"() => ({shown})().join() === '拉普拉斯分布,正态分布'")
    wait_for_app(page)
    assert "q=laplace%280%2C1%29" in page.url and "n=500" in page.url
    assert page.locator("[data-testid='stSelectbox']", has_text="分布族").count() == 2
    assert page.locator("[data-testid='stException']").count() == 0
