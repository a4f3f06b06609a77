"""The sidebar's "Symbols on this page" glossary (issue 20 §5, ``lab.notation``): reachable and readable.

Two page loads: the projector (1280×800, English), where the glossary is
reached with Tab alone and opened with Enter; and a phone (390×844, Chinese,
dark), where every entry is in Chinese and fits the screen.
"""

from __future__ import annotations

import re

from lab import notation
from tests.browser.checks import wait_until_settled

MAX_TABS = 60
_CJK = re.compile(r"[\u4e00-\u9fff]")

_FOCUSED = """() => {
    const el = document.activeElement;
    return !!el && el.tagName === 'SUMMARY' && !!el.closest('.st-key-klglossary');
}"""

_ENTRIES = """() => {
    const box = document.querySelector('.st-key-klglossary');
    const side = document.querySelector("[data-testid='stSidebar']").getBoundingClientRect();
    return [...box.querySelectorAll('li')].map(li => {
        const r = li.getBoundingClientRect();
        return {text: li.innerText, katex: li.querySelectorAll('.katex').length,
                right: Math.max(r.right, ...[...li.querySelectorAll('.katex')].map(k => k.getBoundingClientRect().right)),
                sideRight: side.right, font: parseFloat(getComputedStyle(li).fontSize),
                visible: r.height > 0};
    });
}"""


def _check_entries(page, url: str, *, chinese: bool) -> None:
    entries = page.evaluate(_ENTRIES)
    assert len(entries) == len(notation.symbols_for(url))
    for e in entries:
        assert e["visible"] and e["katex"] >= 1, e
        assert e["right"] <= e["sideRight"] + 1, f"cut at the sidebar's edge: {e['text'][:40]!r}"
        assert e["font"] >= 12, e
        assert bool(_CJK.search(e["text"])) == chinese, e["text"]


def test_glossary_is_reached_by_keyboard_and_lists_the_pages_symbols(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(f"{app_url}/config-doctor?lang=en")
    wait_for_app(page)
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        if page.evaluate(_FOCUSED):
            break
    else:
        raise AssertionError(f"the glossary's summary was not reached in {MAX_TABS} Tab presses")
    page.keyboard.press("Enter")
    page.locator(".st-key-klglossary li").first.wait_for(state="visible")
    _check_entries(page, "config-doctor", chinese=False)
    text = page.locator(".st-key-klglossary").inner_text()
    assert "Symbols on this page" in text and "log-ratio" in text
    # the RL mapping sentence, once, near the page's top
    main = page.locator("[data-testid='stMain']").inner_text()
    assert main.count("the policy the tokens are sampled from") == 1


def test_glossary_reads_in_chinese_on_a_phone(app_url, new_page, wait_for_app):
    page = new_page("390x844", dark=True)
    page.goto(f"{app_url}/?lang=zh")
    wait_for_app(page)
    wait_until_settled(page)
    page.locator("[data-testid='stExpandSidebarButton']").first.click()
    summary = page.locator(".st-key-klglossary summary")
    summary.scroll_into_view_if_needed()
    assert "本页符号" in summary.inner_text()
    summary.click()
    page.locator(".st-key-klglossary li").first.wait_for(state="visible")
    _check_entries(page, "", chinese=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
