"""The "Audit your log-probs" page in headless Chromium: upload, report numbers, bad files, old links.

Uploads go through the real file input (``page.set_input_files``), so the
browser → server upload path of ``st.file_uploader`` is exercised end to end.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

import pytest

from kl_core.audit import statistics as audit
from scripts.translations import english_runs
from tests.browser.checks import metric_values as values_in_order
from tests.browser.checks import numbers, open_page, prose, wait_until_settled

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CSV = ROOT / "data" / "example_audit.csv"
UPLOAD_INPUT = "[data-testid='stFileUploaderDropzoneInput']"


@pytest.fixture(scope="module")
def example_report() -> audit.AuditReport:
    table = audit.load_table(
        EXAMPLE_CSV,
        "logp_policy",
        "logp_ref",
        mask_col="mask",
        position_col="position",
        sequence_col="sequence_id",
    )
    return audit.audit(**table.as_kwargs())


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


def wait_for_text(page, text: str, present: bool = True) -> None:
    page.wait_for_function(
        "([t, present]) => document.body.innerText.includes(t) === present", arg=[text, present]
    )


def test_uploading_the_example_shows_the_core_report(
    app_url, new_page, wait_for_app, example_report, tmp_path
):
    page = new_page()
    page.goto(app_url + "/audit")
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    wait_for_text(page, "No file uploaded, so this is the bundled example")
    wait_for_metric(page, "k3 mean")
    before = metric_values(page)
    assert before["k3 mean"][0] == f"{example_report.k3.mean:.5f}"
    assert before["Exact KL"][0].startswith("0.0353")

    page.set_input_files(UPLOAD_INPUT, str(EXAMPLE_CSV))
    wait_for_text(page, "a link can't carry it")
    wait_for_text(page, "No file uploaded", present=False)
    wait_for_app(page)
    wait_for_metric(page, "Tokens counted")
    wait_for_metric(page, "k3 mean")
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0

    m = metric_values(page)
    assert m["Tokens counted"][0] == f"{example_report.n:,}" == "5,045"
    for k in ("k1", "k2", "k3"):
        s = example_report.summaries[k]
        value, delta = m[f"{k} mean"]
        assert value == f"{s.mean:.5f}"
        assert delta == f"± {f'{s.se:#.2g}'.rstrip('.')} (SE)"
    assert "Exact KL" not in m  # an uploaded file has no known exact KL
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "example_audit.csv: 5,045 of 5,650 tokens" in body
    assert f"{example_report.k1.neg_fraction:.1%} of tokens below 0" in body
    # histograms and the per-position chart are drawn
    page.wait_for_function(
        """() => document.querySelectorAll("[data-testid='stVegaLiteChart'] svg .mark-rect path").length > 0"""
    )


def test_a_text_file_gets_an_error_and_the_page_keeps_working(
    app_url, new_page, wait_for_app, tmp_path
):
    bad = tmp_path / "notes.txt"
    bad.write_text("not a table\n")
    page = new_page()
    page.goto(app_url + "/audit")
    wait_for_app(page)
    page.set_input_files(UPLOAD_INPUT, str(bad))
    wait_for_text(page, "This file can't be audited")
    wait_for_app(page)
    error = page.locator("[data-testid='stAlertContentError']").first.inner_text()
    assert "“notes.txt” is not a CSV or Parquet file" in error
    assert page.locator("[data-testid='stException']").count() == 0
    # the page keeps working: a good file replaces the bad one
    page.set_input_files(UPLOAD_INPUT, str(EXAMPLE_CSV))
    wait_for_text(page, "This file can't be audited", present=False)
    wait_for_app(page)
    wait_for_metric(page, "k3 mean")


def test_an_old_approx_kl_link_with_audit_settings_leads_to_the_audit(app_url, new_page, wait_for_app):
    query = urlencode({"dir": "KL[other‖sampler]", "qc": "(none)", "lib": "TRL"})
    page = new_page()
    page.goto(f"{app_url}/approx-kl?{query}")
    wait_for_app(page)
    wait_for_text(page, "now has its own page")
    page.locator("[data-testid='stPageLink'] a", has_text="with this link's settings").click()
    page.wait_for_url(re.compile(r"/audit\?"))
    wait_for_app(page)
    wait_for_metric(page, "k3 mean")
    assert "dir=" in page.url and "qc=" in page.url and "lib=" not in page.url
    m = metric_values(page)
    assert "Exact KL" in m
    assert "estimating KL[other‖sampler]" in page.locator("[data-testid='stMain']").inner_text()  # the direction came along
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "Sequence sums" not in body  # and so did "no sequence column"


# ------------------------------------------------------------ issue 10 and issue 13
# Readable at the defaults, in both languages at every size: test_readability.py (checks.defects too).


@pytest.mark.parametrize("query", ["", "&dir=KL%5Bother%E2%80%96sampler%5D&kc=(none)&qc=(none)"],
                         ids=["defaults", "other-direction"])
def test_in_chinese_no_english_and_the_same_numbers(app_url, chromium, query):
    with open_page(chromium, f"{app_url}/audit?lang=zh{query}", "1280x800", metrics=5) as zh, \
            open_page(chromium, f"{app_url}/audit?lang=en{query}", "1280x800", metrics=5) as en:
        assert zh.locator("[data-testid='stException']").count() == 0
        assert zh.locator("[data-testid='stMain'] h1").first.inner_text().strip() == "审计你的对数概率"
        assert english_runs(prose(zh)) == []
        assert english_runs(prose(en))  # the check can fail: the English page has such runs
        assert values_in_order(zh) == values_in_order(en)
        got, want = Counter(numbers(zh)), Counter(numbers(en))
        assert got == want, (got - want, want - got)


@pytest.mark.parametrize(("lang", "verdict_text"), [("en", "of k1's per-token values are negative"),
                                                     ("zh", "k1 的逐 token 值中有")])
def test_the_verdict_and_its_chart_are_on_the_first_screen(app_url, new_page, wait_for_app, lang, verdict_text):
    """Issue 20: at 1280×800 the verdict is read first, then its chart, whose top edge is in the first viewport."""
    page = new_page()  # the 1280×800 projector
    page.goto(f"{app_url}/audit?lang={lang}")
    wait_for_app(page)
    wait_for_text(page, verdict_text)
    # every chart drawn and nothing moving: one drawn chart is not yet the page's layout
    wait_until_settled(page)
    main = page.locator("[data-testid='stMain']")
    assert main.evaluate("m => m.scrollTop") == 0
    main_box = main.bounding_box()
    chart = page.locator("[data-testid='stVegaLiteChart']").first.bounding_box()
    verdict = page.locator("[data-testid='stMarkdownContainer']", has_text=verdict_text).last.bounding_box()
    viewport = page.viewport_size
    assert viewport == {"width": 1280, "height": 800}
    assert main_box["y"] <= chart["y"] < min(viewport["height"], main_box["y"] + main_box["height"])
    assert verdict["y"] + verdict["height"] <= chart["y"]  # the verdict precedes its chart
    assert page.locator("[data-testid='stException']").count() == 0
