"""The "approx_kl in practice" page in headless Chromium: a link reproduces the clamp view."""

from __future__ import annotations

from urllib.parse import urlencode

from kl_core import clamps


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
    wait_for_metric(page, "Exact KL[π_old‖π_ref]")  # metrics can arrive one by one under load
    pt = clamps.clamp_point("OpenRLHF:k1:reward", "peaked", 25.0)
    m = metric_values(page)
    assert m["Library's mean"][0] == f"{pt.mean:.4g}"
    assert m["Exact KL[π_old‖π_ref]"][0] == f"{pt.kl:.4g}"
    assert "th=25" in page.url
