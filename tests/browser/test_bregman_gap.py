"""The Bregman gap page on a small laptop and a phone, in English and Chinese (issues 10 and 13).

One pair of pages (``?lang=en`` and ``?lang=zh``) per case: at 1024×768 at the
defaults, and at 390×844 at a non-default state (r at the slider's bottom,
where "your r" used to hide under the draws, and Pearson χ²).  Both languages
are readable (no sideways scroll, charts ≥ 260 px, no cut metric label,
formula or chart text, no raw notation in prose); the Chinese page has no
exception, no run of four English words outside code and maths, and the same
numbers as the English one.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from scripts.translations import english_runs
from tests.browser.checks import chart_numbers, defects, goto, main_text, numbers

CASES = [
    pytest.param("1024x768", "", id="1024-defaults"),
    pytest.param("390x844", "&r=0.05&f=" + quote("Pearson χ²"), id="390-r=0.05-pearson"),
]


@pytest.mark.parametrize(("size", "query"), CASES)
def test_readable_in_both_languages_with_the_same_numbers(
    app_url, new_page, size, query
):
    en = new_page(size)
    goto(en, f"{app_url}/bregman-gap?lang=en{query}", charts=2)
    zh = new_page(size)
    goto(zh, f"{app_url}/bregman-gap?lang=zh{query}", charts=2)
    for page in (en, zh):
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stVegaLiteChart']").count() == 2
        assert defects(page) == []
    assert zh.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "Bregman 差距"
    assert english_runs(main_text(zh)) == []
    assert english_runs(main_text(en))  # the check can fail: the English page has such runs
    assert chart_numbers(zh) == chart_numbers(en)
    assert numbers(zh, tables=False) == numbers(en, tables=False)
    # "your r" is labelled on both charts with its value
    label = "你的 r = 0.05" if "r=0.05" in query else "你的 r = 2.5"
    labelled = zh.locator("[data-testid='stVegaLiteChart']").filter(
        has=zh.locator("svg text", has_text=label))
    assert labelled.count() == 2
