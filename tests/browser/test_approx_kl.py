"""The "approx_kl in practice" page in headless Chromium (issues 10 and 13).

* a link reproduces the clamp view;
* on a small laptop (1024×768, defaults) and a phone (390×844, OpenRLHF k1 at
  θ = 25 on the rare-token path), in English
  and in Chinese: no sideways scroll, both clamp charts ≥ 260 px (they wrap),
  no cut metric label, formula or chart text, no raw notation (π_θ …) in
  prose; the Chinese page has no exception, no run of four English words
  outside code, maths and data tables (the crosswalk entry's sampler,
  caveat … included: kl_core/libraries/crosswalk.toml's prose fields are in the
  catalog), and the same numbers as the English one.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest

from kl_core.libraries import clamps
from scripts.translations import english_runs
from tests.browser.checks import chart_numbers, defects, goto, main_text, numbers


def metric_values(page) -> dict[str, tuple[str, str]]:
    """Every st.metric on the page: label → (value, delta text)."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll("[data-testid='stMetric']")].map(m => {
            const t = s => (m.querySelector(s)?.innerText || '').trim();
            return [t("[data-testid='stMetricLabel']"), [t("[data-testid='stMetricValue']"),
                    t("[data-testid='stMetricDelta']")]];
        }))"""
    )


def wait_for_metric(page, label: str) -> None:
    """Wait until a metric with ``label`` is drawn (metrics render a moment after the run ends)."""
    page.wait_for_function(
        """(label) => [...document.querySelectorAll("[data-testid='stMetricLabel']")]
                .some(l => l.innerText.trim() === label)""",
        arg=label,
    )


def test_a_link_reproduces_the_clamp_view(app_url, new_page, wait_for_app):
    query = urlencode({"th": "25", "ce": "OpenRLHF k1 (reward)"})
    page = new_page()
    page.goto(f"{app_url}/approx-kl?{query}")
    wait_for_app(page)
    wait_for_metric(page, "Library's mean")
    wait_for_metric(page, "Exact KL")  # metrics can arrive one by one under load
    pt = clamps.clamp_point("OpenRLHF:k1:reward", "peaked", 25.0)
    m = metric_values(page)
    assert m["Library's mean"][0] == f"{pt.mean:.4g}"
    assert m["Exact KL"][0] == f"{pt.kl:.4g}"
    assert "th=25" in page.url


CASES = [
    pytest.param("1024x768", "", id="1024-defaults"),
    pytest.param("390x844", "&th=25&ce=" + quote("OpenRLHF k1 (reward)"), id="390-openrlhf-k1"),
    # crosswalk prose with snippets, code, a legacy note and an early-stopping rule (issue 13)
    pytest.param("1024x768", "&lib=TRL&opt=" + quote("full (reward)"), id="1024-trl-full"),
    pytest.param("1024x768", "&lib=verl&opt=" + quote("distillation/k1 (reward)"), id="1024-verl-distillation"),
]


@pytest.mark.parametrize(("size", "query"), CASES)
def test_readable_in_both_languages_with_the_same_numbers(
    app_url, new_page, size, query
):
    en = new_page(size)
    goto(en, f"{app_url}/approx-kl?lang=en{query}", charts=2)
    zh = new_page(size)
    goto(zh, f"{app_url}/approx-kl?lang=zh{query}", charts=2)
    for page in (en, zh):
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stVegaLiteChart']").count() == 2
        assert defects(page) == []
    assert zh.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "实践中的 approx_kl"
    # the crosswalk entry's own words (kl_core/libraries/crosswalk.toml's prose fields) are translated too
    assert english_runs(main_text(zh)) == []
    if "opt=" in query:  # the option the link names is shown, its component in Chinese
        assert {"TRL": "PPOTrainer（旧版 step() 接口）", "verl": "蒸馏损失（策略梯度）"}[
            query.split("lib=")[1].split("&")[0]] in main_text(zh)
    assert english_runs(main_text(en))  # the check can fail: the English page has such runs
    assert chart_numbers(zh) == chart_numbers(en)
    assert numbers(zh, tables=False) == numbers(en, tables=False)
