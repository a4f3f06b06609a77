"""The Estimator Lab in headless Chromium: a deep link shows the core's numbers, and a
shared link reproduces the same view and numbers in a new browser context."""

from __future__ import annotations

import re

from kl_core.distributions import parse
from kl_core.exact import kl
from kl_core.montecarlo import simulate

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


def lab_numbers(page) -> dict[str, object]:
    """What a reader sees: the metrics, the running-mean caption, the chart subtitles."""
    page.wait_for_function(
        """() => document.querySelectorAll("[data-testid='stVegaLiteChart'] svg text").length > 0"""
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


def open_lab(page, wait_for_app, url: str) -> dict[str, object]:
    page.goto(url)
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    return lab_numbers(page)


def test_deep_link_shows_the_core_numbers(app_url, new_page, wait_for_app):
    page = new_page()
    shown = open_lab(
        page, wait_for_app, app_url + "/estimator-lab?q=normal(0,1)&p=normal(1,1)&n=500&seed=3"
    )
    q, p = parse("normal(0,1)"), parse("normal(1,1)")
    assert shown["metrics"]["Exact KL[q, p]"] == fmt(kl(q, p)) == "0.5"
    assert shown["metrics"]["Draws, N · R"] == "100,000"
    assert shown["running"].endswith(expected_running_caption("normal(0,1)", "normal(1,1)", 500, 200, 3))
    assert page.locator("[data-testid='stNumberInput'] input").first.input_value() == "500"
    assert page.locator("[data-testid='stTextInput'] input").nth(1).input_value() == "normal(1,1)"


def test_shared_link_reproduces_the_view_in_a_new_browser(app_url, new_page, wait_for_app):
    page = new_page()
    before = open_lab(page, wait_for_app, app_url + "/estimator-lab")

    # a preset button sets q and p, and the URL follows
    page.get_by_role("button", name="Schulman μ = 1").click()
    page.wait_for_url(re.compile(r"[?&]p=normal%281%2C1%29"))
    wait_for_app(page)
    # N and the seed, typed as a user would
    for label, value in (("N, samples", "400"), ("Seed", "9")):
        box = page.locator("[data-testid='stNumberInput']", has_text=label).locator("input")
        box.fill(value)
        box.press("Enter")
        page.wait_for_url(re.compile(rf"[?&]{'n' if label.startswith('N') else 'seed'}={value}(&|$)"))
        wait_for_app(page)
    page.wait_for_function(
        """() => [...document.querySelectorAll("[data-testid='stMetricValue']")]
            .some(m => m.innerText.trim() === '80,000')"""
    )
    after = lab_numbers(page)
    assert after["metrics"]["Exact KL[q, p]"] == "0.5"
    assert after["metrics"]["Draws, N · R"] == "80,000"
    assert after["running"].endswith(expected_running_caption("normal(0,1)", "normal(1,1)", 400, 200, 9))
    assert after != before

    shared = page.url
    other = new_page()  # a new browser context: no cookies, no session state
    assert open_lab(other, wait_for_app, shared) == after
    assert other.url == shared
