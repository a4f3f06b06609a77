"""The Estimator Lab in headless Chromium: a deep link shows the core's numbers, and a
shared link reproduces the same view and numbers in a new browser context; it reads
in Chinese with the same numbers (issue 13) and is readable on a small laptop and a
phone with every estimator shown, in Chinese (issue 10; the defaults: test_readability.py)."""

from __future__ import annotations

import re

import pytest

from kl_core.estimation.distributions import parse
from kl_core.estimation.exact import kl
from kl_core.estimation.montecarlo import simulate
from scripts.translations import english_runs
from tests.browser.checks import PAGE_SIZES, defects, goto_all, open_page
from tests.browser.test_language import MAIN, TEXT_OF, _chart_numbers, _numbers

KEYS = ("k1", "k2", "k3")


def fmt(x: float) -> str:
    return f"{x:.4g}"


def expected_running_caption(q: str, p: str, n: int, repeats: int, seed: int) -> str:
    """The caption under the running-mean chart, as kl_core computes it."""
    sim = simulate(q, p, n, repeats=repeats, seed=seed, keys=KEYS)
    finals = " · ".join(
        f"{k} {fmt(sim[k].running_mean[-1])} (SE {fmt(sim[k].running_se[-1])})" for k in KEYS
    )
    return f"At n = {n:,}: {finals}."


def lab_numbers(page, wait_for_app) -> dict[str, object]:
    """What a reader sees: the metrics, the running-mean caption, the chart subtitles."""
    wait_for_app.settled(page)
    page.wait_for_function(  # all four metrics drawn, labels and values
        """() => ['stMetricLabel', 'stMetricValue'].every(
            id => document.querySelectorAll(`[data-testid='${id}']`).length >= 4)"""
    )
    labels = page.locator("[data-testid='stMetricLabel']").all_inner_texts()
    values = page.locator("[data-testid='stMetricValue']").all_inner_texts()
    caption = page.locator("[data-testid='stMarkdownContainer']", has_text="At n = ").last
    subtitles = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text")]
            .map(t => t.textContent).filter(s => s.startsWith('mean ') || s.startsWith('sd '))"""
    )
    return {
        "metrics": dict(zip((s.strip() for s in labels), (v.strip() for v in values), strict=True)),
        "running": caption.inner_text().strip(),
        "subtitles": subtitles,
    }


def slider(page, label: str, nth: int = 0):
    """The thumb (``input[type=range]``) of the ``nth`` slider called ``label``."""
    return page.locator(f"input[type='range'][aria-label='{label}']").nth(nth)


def test_dragging_p_moves_the_spec_the_url_and_the_numbers(app_url, new_page, wait_for_app):
    page = new_page()
    open_lab(page, wait_for_app, app_url + "/estimator-lab")
    thumb = slider(page, "μ, the mean", 1)  # p's μ, 0.1 at the defaults
    thumb.focus()
    thumb.press("ArrowRight")  # one step of 0.05 first: the page answers
    page.wait_for_url(re.compile(r"[?&]p=normal%280\.15%2C1%29(&|$)"))
    for _ in range(7):  # 7 more: μ = 0.15 → 0.5
        thumb.press("ArrowRight")
    page.wait_for_url(re.compile(r"[?&]p=normal%280\.5%2C1%29(&|$)"))
    wait_for_app(page)
    page.wait_for_function(
        """() => [...document.querySelectorAll("[data-testid='stMetricValue']")]
            .some(m => m.innerText.trim() === '0.125')"""
    )
    shown = lab_numbers(page, wait_for_app)
    assert shown["metrics"]["Exact KL[q‖p]"] == "0.125"  # μ²/2
    assert expected_running_caption("normal(0,1)", "normal(0.5,1)", 1000, 200, 0) in shown["running"]
    assert page.locator("[data-testid='stTextInput'] input").nth(1).input_value() == "normal(0.5,1)"
    # the preset that is exactly this pair lights up
    assert page.get_by_role("button", name="Notes μ = 0.5").get_attribute("kind") == "primary"


def open_lab(page, wait_for_app, url: str) -> dict[str, object]:
    page.goto(url)
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    return lab_numbers(page, wait_for_app)


def test_deep_link_shows_the_core_numbers(app_url, new_page, wait_for_app):
    page = new_page()
    shown = open_lab(
        page, wait_for_app, app_url + "/estimator-lab?q=normal(0,1)&p=normal(1,1)&n=500&seed=3"
    )
    q, p = parse("normal(0,1)"), parse("normal(1,1)")
    assert shown["metrics"]["Exact KL[q‖p]"] == fmt(kl(q, p)) == "0.5"
    assert shown["metrics"]["Draws, N · R"] == "100,000"
    assert expected_running_caption("normal(0,1)", "normal(1,1)", 500, 200, 3) in shown["running"]
    assert slider(page, "N, samples per estimate").get_attribute("aria-valuetext") == "500"
    assert slider(page, "μ, the mean", 1).get_attribute("aria-valuetext") == "1"  # p's μ
    assert page.locator("[data-testid='stTextInput'] input").nth(1).input_value() == "normal(1,1)"


def test_shared_link_reproduces_the_view_in_a_new_browser(app_url, new_page, wait_for_app):
    page = new_page()
    before = open_lab(page, wait_for_app, app_url + "/estimator-lab")

    # a preset button sets q and p, and the URL follows
    page.get_by_role("button", name="Schulman μ = 1").click()
    page.wait_for_url(re.compile(r"[?&]p=normal%281%2C1%29"))
    wait_for_app(page)
    # N dragged two 1-2-5 steps down (1000 → 500 → 200) and the seed typed, as a user would
    thumb = slider(page, "N, samples per estimate")
    thumb.focus()
    for expected in ("500", "200"):
        thumb.press("ArrowLeft")
        page.wait_for_url(re.compile(rf"[?&]n={expected}(&|$)"))
        wait_for_app(page)
    box = page.locator("[data-testid='stNumberInput']", has_text="Seed").locator("input")
    box.fill("9")
    box.press("Enter")
    page.wait_for_url(re.compile(r"[?&]seed=9(&|$)"))
    # the URL changes as the value does, before the rerun: wait for the rerun's caption
    caption = expected_running_caption("normal(0,1)", "normal(1,1)", 200, 200, 9)
    page.wait_for_function(
        """(caption) => [...document.querySelectorAll("[data-testid='stMarkdownContainer']")]
            .some(m => m.innerText.includes(caption))""",
        arg=caption,
    )
    wait_for_app(page)
    after = lab_numbers(page, wait_for_app)
    assert after["metrics"]["Exact KL[q‖p]"] == "0.5"
    assert after["metrics"]["Draws, N · R"] == "40,000"
    assert caption in after["running"]
    assert after != before

    shared = page.url
    other = new_page()  # a new browser context: no cookies, no session state
    assert open_lab(other, wait_for_app, shared) == after
    assert other.url == shared


#: A state far from the defaults: every estimator (five panels a row), λ set, another pair.
EVERYTHING = "&p=normal(1,1)&n=500&keys=k1&keys=k2&keys=k3&keys=k_lambda&keys=k3_pq&lam=0.3"


#: The core's notes (kl_core.estimation.exact, kl_core.estimation.tails), shown in the run's language: Var(k1) and
#: Var(k3) infinite for a t₃ sampler (q's tail), Var(k3) infinite for a wide p (the r² factor).
HEAVY_Q = "&q=t(3,0,1)&p=normal(0,1)"
WIDE_P = "&p=normal(0,1.5)"


@pytest.mark.parametrize("query", ["", EVERYTHING, HEAVY_Q, WIDE_P],
                         ids=["defaults", "every-estimator", "heavy-q", "wide-p"])
def test_the_lab_in_chinese_has_no_english_and_the_same_numbers(app_url, new_page, wait_for_app,
                                                                query):
    zh, en = new_page(), new_page()
    charts = 11 if query == EVERYTHING else 7
    goto_all([(page, f"{app_url}/estimator-lab?lang={lang}{query}") for page, lang in ((zh, "zh"), (en, "en"))],
             charts=charts)
    assert zh.locator("[data-testid='stException']").count() == 0
    assert zh.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "估计器实验"
    text = zh.evaluate(TEXT_OF, MAIN)
    assert english_runs(text) == []
    assert english_runs(en.evaluate(TEXT_OF, MAIN))  # the check can fail
    if query in (HEAVY_Q, WIDE_P):  # the core's reason, translated
        assert "the integral diverges as x → +∞" in en.evaluate(TEXT_OF, MAIN)
        assert "积分在 x → +∞ 时发散" in text
    assert _chart_numbers(zh) == _chart_numbers(en)
    assert _numbers(zh) == _numbers(en)


@pytest.mark.parametrize("size", PAGE_SIZES)
def test_the_lab_is_readable_at_every_size_in_both_languages(app_url, chromium, wait_for_app, size):
    # (the defaults, in both languages: test_readability.py)
    with open_page(chromium, f"{app_url}/estimator-lab?lang=zh{EVERYTHING}", size, charts=11) as page:
        assert page.locator("[data-testid='stVegaLiteChart']").count() == 11
        assert defects(page) == [], f"zh, every estimator, {size}"
