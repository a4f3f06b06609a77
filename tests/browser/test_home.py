"""Home at a small laptop's and a phone's size, in English and Chinese (issue 10).

No sideways scroll, every chart at least 260 px wide, no cut metric label or
chart title, every display formula fits or scrolls, no raw notation in prose.
One page per size; the language is switched by reloading it with ``?lang=``.
"""

from __future__ import annotations

import pytest

from tests.browser.checks import PAGE_SIZES, defects, goto, open_page


@pytest.mark.parametrize("size", PAGE_SIZES)
def test_home_is_readable_at_every_size_in_both_languages(app_url, chromium, wait_for_app, size):
    with open_page(chromium, f"{app_url}/?lang=en", size, charts=3) as page:
        for lang in ("en", "zh"):
            if lang != "en":
                goto(page, f"{app_url}/?lang={lang}", charts=3)
            assert page.locator("[data-testid='stVegaLiteChart']").count() == 3
            assert defects(page) == [], f"lang={lang}, {size}"
