"""The "Tokens & sequences" page in headless Chromium: a deep link, and a moved slider's link.

A link with a non-default state must show the numbers ``kl_core`` computes for
that state, in a fresh browser context; moving T with the keyboard must give a
URL that reproduces the same numbers in another fresh context.
"""

from __future__ import annotations

from urllib.parse import urlencode

from kl_core.markov import drift_pair
from kl_core.sequence_montecarlo import simulate_sequences
from kl_core.sequences import exact_curves
from lab.format import number
from lab.notes import sequences as notes

CHARTS = 5


def metric_values(page) -> dict[str, str]:
    """Every st.metric on the page: label → value."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll("[data-testid='stMetric']")].map(m => {
            const t = s => (m.querySelector(s)?.innerText || '').trim();
            return [t("[data-testid='stMetricLabel']"), t("[data-testid='stMetricValue']")];
        }))"""
    )


def wait_for_charts(page, count: int) -> None:
    page.wait_for_function(
        """(n) => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
            .filter(el => el.querySelector('svg g.mark-line path, svg g.mark-rect path, '
                                          + 'svg g.mark-symbol path, canvas')).length >= n""",
        arg=count,
    )


def expected(k: int, drift: float, length: int, n: int, seed: int) -> dict[str, str]:
    policy, ref = drift_pair(k, drift)
    curves = exact_curves(policy, ref, length)
    sample = simulate_sequences(policy, ref, length, n, seed=seed)
    return {
        f"KL[π_θ‖π_ref] of sequences of length T = {length}": number(float(curves.true_kl[-1])),
        f"rb from {n:,} sequences": number(sample.summary("rb").mean),
        "Σk3, mean over sequences": number(sample.summary("sum_k3").mean),
    }


def check(page, want: dict[str, str]) -> None:
    page.wait_for_function(
        "(label) => document.body.innerText.includes(label)", arg=next(iter(want))
    )
    got = metric_values(page)
    for label, value in want.items():
        assert got.get(label) == value, (label, got)


def test_a_deep_link_reproduces_its_numbers(app_url, new_page, wait_for_app):
    query = {"K": 5, "drift": 1.2, "T": 32, "n": 2000, "seed": 3, "beta": 0.1}
    page = new_page()
    page.goto(app_url + "/sequences?" + urlencode(query))
    wait_for_app(page)
    assert page.title() == "Tokens & sequences · KL Estimator Lab"
    assert page.locator("[data-testid='stException']").count() == 0
    check(page, expected(5, 1.2, 32, 2000, 3))
    wait_for_charts(page, CHARTS)


def test_moving_t_gives_a_link_that_reproduces_the_view(app_url, new_page, wait_for_app):
    page = new_page()
    page.goto(app_url + "/sequences?seed=2")
    wait_for_app(page)
    thumb = page.locator("[data-testid='stSlider']").filter(has_text="T, tokens per sequence")
    thumb = thumb.locator("input[type='range']").first
    thumb.focus()
    thumb.press("ArrowLeft")  # 64 → 48, the step below on the slider
    page.wait_for_url("**T=48**")
    wait_for_app(page)
    want = expected(notes.DEFAULT_K, 0.5, 48, 1000, 2)
    check(page, want)
    shared = new_page()
    shared.goto(page.url)
    wait_for_app(shared)
    check(shared, want)
    wait_for_charts(shared, CHARTS)
