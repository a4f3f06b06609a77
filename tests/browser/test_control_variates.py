"""Control variates in Chinese and at a small laptop's and a phone's size (issues 10 and 13).

* ``?lang=zh`` at the defaults and at a non-default state (p = N(0, 2²), where
  χ² is infinite; λ = 2; the scale path): no exception, no run of four or more
  English words outside code and maths, and the same numbers as ``?lang=en``;
* at 1024×768 and 390×844, in Chinese at that state (the defaults in both
  languages: ``test_readability.py``): no sideways scroll, every chart at least 260 px wide, no cut metric
  label or chart title, display formulas fit or scroll, no raw notation in prose.
"""

from __future__ import annotations

import pytest

from scripts.translations import english_runs
from tests.browser.checks import PAGE_SIZES, defects, goto, open_page
from tests.browser.test_language import MAIN, TEXT_OF, _chart_numbers, _numbers

#: χ²(p‖q) = ∞ (a warning with notation in it), λ off the defaults, another path.
WIDE_P = "&p=normal(0,2)&lam=2&path=Gaussian%20scale%20change"  # a link names the path
CHARTS = 6


#: Var(log r) = ∞ (a t₃ sampler): the core's reasons for it and for "no λ*", in the run's language.
HEAVY_Q = "&q=t(3,0,1)&p=normal(0,1)"


@pytest.mark.parametrize("query", ["", WIDE_P, HEAVY_Q], ids=["defaults", "wide-p", "heavy-q"])
def test_control_variates_in_chinese_has_no_english_and_the_same_numbers(
    app_url, new_page, wait_for_app, query
):
    zh, en = new_page(), new_page()
    for page, lang in ((zh, "zh"), (en, "en")):
        goto(page, f"{app_url}/control-variates?lang={lang}{query}", charts=CHARTS)
    assert zh.locator("[data-testid='stException']").count() == 0
    assert zh.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "控制变量"
    assert english_runs(zh.evaluate(TEXT_OF, MAIN)) == []
    assert english_runs(en.evaluate(TEXT_OF, MAIN))  # the check can fail
    if query == HEAVY_Q:  # the core's reasons, translated
        assert "q's tail is too heavy" in en.evaluate(TEXT_OF, MAIN)
        assert "λ* 无定义" in zh.evaluate(TEXT_OF, MAIN)
    assert _chart_numbers(zh) == _chart_numbers(en)
    assert _numbers(zh) == _numbers(en)


@pytest.mark.parametrize("size", PAGE_SIZES)
def test_control_variates_is_readable_at_every_size_in_both_languages(
    app_url, chromium, wait_for_app, size
):
    # (the defaults, in both languages: test_readability.py)
    with open_page(chromium, f"{app_url}/control-variates?lang=zh{WIDE_P}", size, charts=CHARTS) as page:
        assert page.locator("[data-testid='stAlertContentWarning']").count() == 1  # χ² = ∞
        assert defects(page) == [], f"zh, p = N(0, 2²), {size}"
