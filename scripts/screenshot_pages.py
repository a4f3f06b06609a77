"""Screenshot every page of a running app in headless Chromium, for a human to look at.

Usage (with the app running, e.g. ``uv run streamlit run app.py --server.port 8599``)::

    uv run python scripts/screenshot_pages.py http://localhost:8599 /tmp/shots [path?query ...]

With no paths it takes every page at its defaults.  Each PNG is a full-page
screenshot at 1280×800, the size of a lecture projector.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lab.pages import PAGES  # noqa: E402

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def main() -> None:
    base, out = sys.argv[1].rstrip("/"), Path(sys.argv[2])
    targets = sys.argv[3:] or [p.url_path for p in PAGES]
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for target in targets:
            page.goto(f"{base}/{target}")
            page.wait_for_selector("[data-testid='stApp']")
            page.wait_for_timeout(1500)
            page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=60_000)
            page.wait_for_timeout(1500)
            name = re.sub(r"[^A-Za-z0-9]+", "_", target).strip("_") or "home"
            page.screenshot(path=str(out / f"{name}.png"))
            # Streamlit scrolls inside its own container, so a "full page" shot
            # needs a viewport as tall as that container's content.
            height = page.evaluate(
                "document.querySelector('[data-testid=\"stMain\"]').scrollHeight"
            )
            page.set_viewport_size({"width": 1280, "height": min(int(height) + 50, 12000)})
            page.wait_for_timeout(2500)
            page.screenshot(path=str(out / f"{name}_full.png"))
            page.set_viewport_size({"width": 1280, "height": 800})
            print(out / f"{name}.png", out / f"{name}_full.png")
        browser.close()


if __name__ == "__main__":
    main()
