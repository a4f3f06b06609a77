"""Full-page screenshots of every page, at every size, in both themes and languages, to look at.

Usage::

    uv run python scripts/screenshots.py [--out DIR] [--pages home estimator-lab ...]
        [--paths "estimator-lab?n=100" ...] [--sizes 1280x800 1024x768 390x844 150%]
        [--lang en zh] [--dark | --light] [--screens] [--url http://localhost:8501]

Without ``--url`` it starts the app on a free port of 127.0.0.1 (the browser
tests' ``streamlit_servers``) and stops it at the end.  For each page, size,
theme and language it opens ``/<page>?lang=<lang>`` in headless Chromium
(``color_scheme`` light or dark: Streamlit follows it as it follows the
operating system), waits until the run is over and every chart is drawn
(the browser tests' ``wait_until_settled``), stretches the window to the
page's full height (Streamlit's main area is the scroll box, so Playwright's
``full_page`` alone would stop at the first screen) and saves
``<DIR>/<page>-<size>-<theme>-<lang>.png`` (``home-390x844-dark-zh.png``).
Sizes: the projector 1280×800, a small laptop 1024×768, a phone 390×844 and
``150%``, 150 % browser zoom on a 1280×800 screen (853×533 CSS px, device
scale factor 1.5).  ``--dark`` takes only the dark theme, ``--light`` only the
light one; both by default.  ``--paths`` shoots pages at other settings (a
path with its query, as in a shared link) instead of ``--pages`` at their
defaults; the file stem is the path with every run of other characters than
letters and digits made ``_``.  ``--screens`` scrolls Streamlit's main area a
screen at a time instead of stretching the window, and saves one PNG per screen
(``…-<lang>-<nn>.png``, at most 15), as a reader on that screen sees the page.

It prints one line per screenshot, with the page's height and, if the page is
wider than the screen, ``SIDEWAYS``.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.pages import PAGES  # noqa: E402
from tests.browser.conftest import CHROMIUM_ARGS, streamlit_servers, wait_until_settled  # noqa: E402

#: name -> (width, height, device scale factor)
SIZES: dict[str, tuple[int, int, float]] = {
    "1280x800": (1280, 800, 1.0),
    "1024x768": (1024, 768, 1.0),
    "390x844": (390, 844, 1.0),
    "150%": (853, 533, 1.5),
}
#: File-name form of a size ("150%" is "zoom150").
SIZE_NAMES = {"150%": "zoom150"}
#: How long a page may take to run and draw (ms) before it is shot as it is.
TIMEOUT_MS = 60_000
#: Tallest window a screenshot stretches to (px).
MAX_HEIGHT = 16_000
HEIGHT = """() => {
    const main = document.querySelector("[data-testid='stMain']");
    const side = document.querySelector("[data-testid='stSidebarContent']");
    return Math.max(main ? main.scrollHeight : 0, side ? side.scrollHeight : 0, window.innerHeight);
}"""
MAIN = "document.querySelector('[data-testid=\"stMain\"]')"
#: Most screens ``--screens`` saves of one page.
MAX_SCREENS = 15
WIDE = """() => Math.max(document.documentElement.scrollWidth,
    document.querySelector("[data-testid='stMain']")?.scrollWidth || 0)"""


def page_name(url_path: str) -> str:
    """The file-name stem of a page: its URL path, ``home`` for ``/``."""
    return url_path or "home"


def target_name(path: str) -> str:
    """The file-name stem of a page name (itself) or of a ``--paths`` entry
    (``"estimator-lab?n=100"`` → ``estimator_lab_n_100``)."""
    if re.fullmatch(r"[a-z0-9-]+", path):
        return path
    return re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_") or "home"


def _url(base: str, path: str, lang: str) -> str:
    path = "" if path == "home" else path
    return f"{base}/{path}{'&' if '?' in path else '?'}lang={lang}"


def _screens(page, stem: str, height: int) -> tuple[list[Path], int]:
    """Scroll the main area a screen at a time, one PNG per screen; returns them and the height."""
    total = page.evaluate(f"{MAIN}.scrollHeight")
    paths: list[Path] = []
    y = 0
    while y < total and len(paths) < MAX_SCREENS:
        page.evaluate(f"{MAIN}.scrollTo(0, {y})")
        wait_until_settled(page, timeout_ms=TIMEOUT_MS)  # charts draw once they are on screen
        path = Path(f"{stem}-{len(paths):02d}.png")
        page.screenshot(path=str(path))
        paths.append(path)
        # charts drawn on screen make the page taller: measure again
        total = max(total, page.evaluate(f"{MAIN}.scrollHeight"))
        y += height - 60
    return paths, total


def shoot(base: str, out: Path, pages: list[str], sizes: list[str], themes: list[str],
          langs: list[str], *, screens: bool = False) -> list[Path]:
    """Save the screenshots; returns their paths.

    ``pages`` are page names (``home``, ``estimator-lab``) or paths with a query.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    saved = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        for size in sizes:
            width, height, scale = SIZES[size]
            for theme in themes:
                for lang in langs:
                    # one browser context per (size, theme, language), reused across pages
                    context = browser.new_context(viewport={"width": width, "height": height},
                                                  device_scale_factor=scale, color_scheme=theme)
                    context.set_default_timeout(90_000)
                    page = context.new_page()
                    for name in pages:
                        started = time.monotonic()
                        page.set_viewport_size({"width": width, "height": height})
                        note = ""
                        stem = out / f"{target_name(name)}-{SIZE_NAMES.get(size, size)}-{theme}-{lang}"
                        try:
                            page.goto(_url(base, name, lang))
                            wait_until_settled(page, timeout_ms=TIMEOUT_MS)
                            if screens:
                                paths, full = _screens(page, str(stem), height)
                            else:
                                full = min(page.evaluate(HEIGHT), MAX_HEIGHT)
                                if full > height:
                                    page.set_viewport_size({"width": width, "height": full})
                                    wait_until_settled(page, timeout_ms=TIMEOUT_MS)
                        except PlaywrightTimeout:
                            # shoot it as it is: the picture shows what never finished
                            full, note, screens_done = page.evaluate(HEIGHT), ", NOT SETTLED (timed out)", False
                        else:
                            screens_done = screens
                        if not screens_done:
                            paths = [Path(f"{stem}.png")]
                            page.screenshot(path=str(paths[0]))
                        wide = page.evaluate(WIDE)
                        saved += paths
                        print(f"{paths[0].name}: {full} px tall, {time.monotonic() - started:.1f} s"
                              + (f", {len(paths)} screens" if screens_done else "")
                              + (f", SIDEWAYS ({wide} px wide)" if wide > width + 1 else "") + note,
                              flush=True)
                    context.close()
        browser.close()
    return saved


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"), help="folder for the PNGs")
    parser.add_argument("--pages", nargs="+", metavar="PAGE",
                        choices=[page_name(p.url_path) for p in PAGES],
                        default=[page_name(p.url_path) for p in PAGES])
    parser.add_argument("--paths", nargs="+", metavar="PATH?QUERY",
                        help="pages at other settings (as in a shared link), instead of --pages")
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES))
    parser.add_argument("--lang", nargs="+", choices=["en", "zh"], default=["en", "zh"])
    theme = parser.add_mutually_exclusive_group()
    theme.add_argument("--dark", action="store_true", help="only the dark theme")
    theme.add_argument("--light", action="store_true", help="only the light theme")
    parser.add_argument("--screens", action="store_true",
                        help="one PNG per screen, scrolling, instead of one stretched window")
    parser.add_argument("--url", help="a running app (else one is started on a free port)")
    args = parser.parse_args(argv)
    if shutil.which("chromium") is None:
        parser.error("chromium is not installed (Debian: apt-get install chromium)")
    themes = ["dark"] if args.dark else ["light"] if args.light else ["light", "dark"]
    args.out.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        base = args.url.rstrip("/") if args.url else stack.enter_context(streamlit_servers(1))[0]
        saved = shoot(base, args.out, args.paths or args.pages, args.sizes, themes, args.lang,
                      screens=args.screens)
    print(f"{len(saved)} screenshots in {args.out}")


if __name__ == "__main__":
    main()
