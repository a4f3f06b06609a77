"""A real browser through the classroom deployment (nginx + two app processes, ``classroom``).

The page renders, a slider move reruns it, and a file upload works: the
upload (``/_stcore/upload_file``) must reach the process that holds the
browser's WebSocket session, which the affinity cookie guarantees.
"""

from __future__ import annotations

import re
from pathlib import Path

from deploy import nginx_conf

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CSV = ROOT / "data" / "example_audit.csv"
UPLOAD_INPUT = "[data-testid='stFileUploaderDropzoneInput']"


def test_a_student_uploads_and_moves_a_slider_through_nginx(classroom, new_page, wait_for_app):
    page = new_page()
    answered_by: dict[str, set[str]] = {"upload": set(), "other": set()}
    upload_statuses: list[int] = []

    def record(response) -> None:
        backend = response.headers.get(nginx_conf.BACKEND_HEADER.lower())
        if backend:
            kind = "upload" if "/_stcore/upload_file/" in response.url else "other"
            answered_by[kind].add(backend)
            if kind == "upload":
                upload_statuses.append(response.status)

    page.on("response", record)
    page.goto(classroom.url + "/audit")
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert "No file uploaded" in page.inner_text("body")

    page.set_input_files(UPLOAD_INPUT, str(EXAMPLE_CSV))
    page.wait_for_function("() => !document.body.innerText.includes('No file uploaded')")
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0

    page.goto(classroom.url + "/")
    wait_for_app(page)
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").first
    thumb.focus()
    for _ in range(10):  # μ = 0.5 → 1.0 in steps of 0.05
        thumb.press("ArrowRight")
    page.wait_for_url(re.compile(r"[?&]mu=1(\.0+)?(&|$)"))
    page.wait_for_function(  # the exact KL[N(0,1), N(1,1)] = 1/2, recomputed by the server
        """() => document.querySelector("[data-testid='stMetricValue']")?.innerText.trim() === '0.5'"""
    )

    assert upload_statuses and all(s < 300 for s in upload_statuses), upload_statuses
    assert len(answered_by["upload"] | answered_by["other"]) == 1  # one process served it all
