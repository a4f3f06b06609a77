"""The f-divergences page in headless Chromium: a deep link with every widget set, and a round trip.

The page's widgets put Unicode labels in the URL (``f=½ log² (the f of k2)``,
``f=Jensen–Shannon``, ``view=D_f ÷ parabola``) and a range slider as a repeated
key (``th_logit=-2.8&th_logit=3``); these tests check that such links survive a
real browser and reproduce the same view in a fresh context.
"""

from __future__ import annotations

import re
from urllib.parse import quote

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
    assert state["checked"] == ["Gaussian scale change", "D_f ÷ parabola"]
    assert state["chips"] == ["½ log² (the f of k2)", "Jensen–Shannon"]
    assert state["range"] == ["-0.2", "0.5"]
    assert state["tangent"] is True
    assert charts_drawn(page) == 4
    texts = state["chart_texts"]
    assert "f(u) − f′(1)·(u − 1)" in texts  # the tangent-removed f curves
    assert "D_f ÷ ½ f″(1) F θ²" in texts  # the ratio view
    assert any(t.startswith("θ = log σ") for t in texts)


def test_a_changed_view_round_trips_through_its_url(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(app_url + PATH)
    wait_for_app(page)
    before = settled_view_state(page)
    assert before["checked"] == ["Gaussian mean shift", "D_f and parabola"]

    page.locator("[role='radio']", has_text="Categorical logit direction").click()
    page.wait_for_url(re.compile(r"[?&]path=Categorical"))
    wait_for_app(page)
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").first
    thumb.focus()
    for _ in range(4):  # 4 steps of 0.05: θ from −3 to −2.8
        thumb.press("ArrowRight")
    page.wait_for_url(re.compile(r"[?&]th_logit=-2\.8(&|$)"))
    wait_for_app(page)
    after = settled_view_state(page)
    assert after["checked"] == ["Categorical logit direction", "D_f and parabola"]
    assert after["range"] == ["-2.8", "3"]
    assert after["chart_texts"] != before["chart_texts"]

    shared = page.url
    other = new_page()  # a fresh browser context
    other.goto(shared)
    wait_for_app(other)
    assert settled_view_state(other) == after
    assert other.url == shared
