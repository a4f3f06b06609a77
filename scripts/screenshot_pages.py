"""Screenshot every page of a running app in headless Chromium, for a human to look at.

Usage (with the app running, e.g. ``uv run streamlit run app.py --server.port 8599``)::

    uv run python scripts/screenshot_pages.py http://localhost:8599 /tmp/shots [path?query ...]
        [--sizes 1280x800,1024x768,390x844]

With no paths it takes every page at its defaults.  For each page and size it
scrolls Streamlit's main container a screen at a time and saves one PNG per
screen (``<page>_<width>_<nn>.png``): charts only draw once they are on
screen, so one very tall viewport would show empty boxes.  It prints each
page's height and whether anything is wider than the screen (sideways scroll).
"""

from __future__ import annotations

import argparse
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
RUN_DONE = """() => {
    const app = document.querySelector("[data-testid='stApp']");
    return app && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector("[data-testid='stStatusWidget']")
        && document.querySelector("[data-testid='stMain'] h1");
}"""
MAIN = "document.querySelector('[data-testid=\"stMain\"]')"
MAX_SCREENS = 15


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("out", type=Path)
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--sizes", default="1280x800,1024x768,390x844")
    args = parser.parse_args()
    base = args.base.rstrip("/")
    targets = args.paths or [p.url_path for p in PAGES]
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        for target in targets:
            for width, height in sizes:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(f"{base}/{target}")
                page.wait_for_function(RUN_DONE, timeout=120_000)
                page.wait_for_timeout(2000)
                name = (re.sub(r"[^A-Za-z0-9]+", "_", target).strip("_") or "home") + f"_{width}"
                total = page.evaluate(f"{MAIN}.scrollHeight")
                y, n = 0, 0
                while y < total and n < MAX_SCREENS:
                    page.evaluate(f"{MAIN}.scrollTo(0, {y})")
                    page.wait_for_timeout(1200)
                    page.screenshot(path=str(args.out / f"{name}_{n:02d}.png"))
                    # Charts drawn on screen make the page taller: measure again.
                    total = max(total, page.evaluate(f"{MAIN}.scrollHeight"))
                    y, n = y + height - 60, n + 1
                wide = page.evaluate(
                    f"Math.max(document.documentElement.scrollWidth, {MAIN}.scrollWidth)"
                )
                print(f"{name}: {total} px tall, {n} screens"
                      + (f", SIDEWAYS SCROLL ({wide} px wide)" if wide > width else ""))
                page.close()
        browser.close()


if __name__ == "__main__":
    main()
