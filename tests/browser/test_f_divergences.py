"""The f-divergences page in headless Chromium: a deep link with every widget set, a round trip,
and (issues 10 and 13) readable on a small laptop and a phone in English and Chinese.

The page's widgets put Unicode labels in the URL (``f=½ log² (the f of k2)``,
``f=Jensen–Shannon``, ``view=D_f ÷ parabola``) and a range slider as a repeated
key (``th_logit=-2.8&th_logit=3``); these tests check that such links survive a
real browser and reproduce the same view in a fresh context.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from scripts.translations import english_runs
from tests.browser.checks import chart_numbers, defects, goto, main_text, numbers

PATH = "/f-divergences"


def charts_drawn(page) -> int:
    return page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
            .filter(el => el.querySelector('svg .mark-line path')).length"""
    )


def wait_for_charts(page, n: int = 4) -> None:
    page.wait_for_function(
        f"""() => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
            .filter(el => el.querySelector('svg .mark-line path')).length >= {n}"""
    )


def view_state(page) -> dict[str, object]:
    """What a reader sees: the chosen options, the θ range and the charts' texts."""
    wait_for_charts(page)
    # both segmented controls (path, view) have their choice drawn
    # (in the main area: the sidebar's language switch is a segmented control too)
    page.wait_for_function(
        """() => document.querySelectorAll("[data-testid='stMain'] [role='radio'][aria-checked='true']")
            .length >= 2"""
    )
    checked = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stMain'] [role='radio'][aria-checked='true']")]
            .map(b => b.innerText.trim())"""
    )
    chips = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stMultiSelect'] [aria-label^='Remove ']")]
            .map(t => t.getAttribute('aria-label').slice('Remove '.length))"""
    )
    thumbs = page.locator("[data-testid='stSlider'] input[type='range']")
    texts = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")]
            .map(t => t.textContent)"""
    )
    return {
        "checked": checked,
        "chips": chips,
        "range": [thumbs.nth(i).input_value() for i in range(thumbs.count())],
        "tangent": page.locator("input[role='switch']").first.is_checked(),
        "chart_texts": texts,
    }


def settled_view_state(page, tries: int = 20) -> dict[str, object]:
    """:func:`view_state` once two reads half a second apart agree (Vega redraws lag the run)."""
    state = view_state(page)
    for _ in range(tries):
        page.wait_for_timeout(500)
        again = view_state(page)
        if again == state:
            return state
        state = again
    return state


def test_a_deep_link_sets_every_widget(app_url, new_page, wait_for_app):
    query = "&".join(
        [
            "tan=true",
            "path=" + quote("Gaussian scale change"),
            "f=" + quote("½ log² (the f of k2)"),
            "f=" + quote("Jensen–Shannon"),
            "th_scale=-0.2",
            "th_scale=0.5",
            "view=" + quote("D_f ÷ parabola"),
        ]
    )
    page = new_page()
    page.goto(f"{app_url}{PATH}?{query}")
    wait_for_app(page)
    state = settled_view_state(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentWarning']").count() == 0
    # a link from before the views were reworded still opens the ratio view
    assert state["checked"] == ["Gaussian scale change", "f-divergence ÷ parabola"]
    assert state["chips"] == ["½ log² (the f of k2)", "Jensen–Shannon"]
    assert state["range"] == ["-0.2", "0.5"]
    assert state["tangent"] is True
    assert charts_drawn(page) == 4
    texts = state["chart_texts"]
    assert "f(u) − f′(1)·(u − 1)" in texts  # the tangent-removed f curves
    assert "f-divergence ÷ ½ f″(1) F θ²" in texts  # the ratio view
    assert any(t.startswith("θ = log σ") for t in texts)


def test_a_changed_view_round_trips_through_its_url(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(app_url + PATH)
    wait_for_app(page)
    before = settled_view_state(page)
    assert before["checked"] == ["Gaussian mean shift", "f-divergence and parabola"]

    page.locator("[role='radio']", has_text="Categorical logit direction").click()
    page.wait_for_url(re.compile(r"[?&]path=Categorical"))
    wait_for_app.settled(page)  # the new path's range slider is drawn and still: keys reach it
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").first
    thumb.focus()
    for _ in range(4):  # 4 steps of 0.05: θ from −3 to −2.8
        thumb.press("ArrowRight")
    page.wait_for_url(re.compile(r"[?&]th_logit=-2\.8(&|$)"))
    wait_for_app(page)
    after = settled_view_state(page)
    assert after["checked"] == ["Categorical logit direction", "f-divergence and parabola"]
    assert after["range"] == ["-2.8", "3"]
    assert after["chart_texts"] != before["chart_texts"]

    shared = page.url
    other = new_page()  # a fresh browser context
    other.goto(shared)
    wait_for_app(other)
    assert settled_view_state(other) == after
    assert other.url == shared


CASES = [
    pytest.param("1024x768", "", id="1024-defaults"),
    pytest.param("390x844", "&tan=true&path=" + quote("Gaussian scale change") + "&view=ratio",
                 id="390-scale-ratio-tangent"),
]


@pytest.mark.parametrize(("size", "query"), CASES)
def test_readable_in_both_languages_with_the_same_numbers(
    app_url, new_page, size, query
):
    """No sideways scroll (the registry table scrolls in its own box), charts ≥ 260 px, nothing
    cut, no raw notation; in Chinese no English run and the same numbers as in English."""
    query = query.replace("view=ratio", "view=" + quote("f-divergence ÷ parabola"))
    en = new_page(size)
    goto(en, f"{app_url}{PATH}?lang=en{query}", charts=4)
    zh = new_page(size)
    goto(zh, f"{app_url}{PATH}?lang=zh{query}", charts=4)
    for page in (en, zh):
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stVegaLiteChart']").count() == 4
        assert defects(page) == []
    assert zh.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "f-散度与 Fisher信息"
    assert english_runs(main_text(zh)) == []
    assert english_runs(main_text(en))  # the check can fail: the English page has such runs
    assert chart_numbers(zh) == chart_numbers(en)
    assert numbers(zh, tables=False) == numbers(en, tables=False)


def test_a_chinese_link_keeps_its_choices_in_english_words(app_url, new_page, wait_for_app):
    """The URL names options by their English text in both languages (issue 13): a link that
    names an option in English keeps it on a Chinese page, a choice made in Chinese is written
    in English, and the zh link opens the same view with ``?lang=en``."""
    from urllib.parse import parse_qs, urlsplit

    import i18n

    with i18n.using("zh"):
        logit_zh, pearson_zh = i18n._("Categorical logit direction"), i18n._("Pearson χ²")
    # The path's label is translated; Pearson's name is kept in Latin letters in Chinese too.
    assert logit_zh != "Categorical logit direction" and "Pearson" in pearson_zh

    def params(page) -> dict[str, list[str]]:
        return parse_qs(urlsplit(page.url).query)

    zh = new_page()
    zh.goto(f"{app_url}{PATH}?lang=zh&f=" + quote("Pearson χ²"))
    wait_for_app(zh)
    state = settled_view_state(zh)
    assert state["chips"] == [pearson_zh]
    assert params(zh)["f"] == ["Pearson χ²"]  # kept, in English

    zh.locator("[role='radio']", has_text=logit_zh).click()
    zh.wait_for_url(re.compile(r"[?&]path=Categorical"))  # chosen in Chinese, written in English
    wait_for_app.settled(zh)
    zh_state = settled_view_state(zh)
    assert zh_state["checked"][0] == logit_zh
    assert params(zh)["f"] == ["Pearson χ²"] and params(zh)["lang"] == ["zh"]

    en = new_page()
    en.goto(zh.url.replace("lang=zh", "lang=en"))
    wait_for_app(en)
    en_state = settled_view_state(en)
    assert en_state["checked"] == ["Categorical logit direction", "f-divergence and parabola"]
    assert en_state["chips"] == ["Pearson χ²"]
    assert en_state["range"] == zh_state["range"]
    assert {k: v for k, v in params(en).items() if k != "lang"} == {
        k: v for k, v in params(zh).items() if k != "lang"}
    assert en.locator("[data-testid='stAlertContentWarning']").count() == 0
