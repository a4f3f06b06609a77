"""Real-browser fixtures: one Streamlit server per test session, headless Chromium.

* ``app_url`` starts ``python -m streamlit run app.py`` on a free port, waits
  for ``/_stcore/health`` and yields the base URL; the server is stopped at
  the end of the session.  ``streamlit_servers(n)`` starts n fresh servers at
  once, for tests that need a server's very first request.
* ``chromium`` launches Debian's ``chromium`` (``shutil.which("chromium")``)
  through ``playwright.sync_api``; ``new_page()`` opens a page in a fresh
  browser context (fresh cookies and storage: a "new browser" for a link);
  ``wait_for_app(page)`` waits until the page's script run has finished.

Skip rule: without a ``chromium`` executable (or the playwright package) the
browser tests are skipped, but only when the environment variable ``CI`` is
unset (or ``0``/``false``/``no``).  Under ``CI=true`` they fail instead, so CI
can never pass by silently skipping them; ``.ci/run`` installs chromium.

The fixtures use their own names (``chromium``, ``new_page``) so they do not
collide with pytest-playwright's ``browser``/``page`` fixtures.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from deploy.processes import free_ports
from tests.browser.checks import (  # noqa: F401 (RUN_TIMEOUT_MS, wait_until_settled: imported from here too)
    RUN_TIMEOUT_MS,
    SIZES,
    wait_for_app_run,
    wait_until_settled,
)

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 800}  # the teacher's projector
SERVER_START_TIMEOUT = 60.0


def in_ci() -> bool:
    """True when the environment variable ``CI`` is set to a true-ish value."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"{reason}; CI is set, so the browser tests must run (see .ci/run)")
    pytest.skip(f"{reason} (browser tests skip outside CI; with CI=true this fails)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test in this folder with the ``browser`` marker."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of the system chromium; skip (outside CI) or fail (in CI) without it."""
    path = shutil.which("chromium")
    if path is None:
        _unavailable("chromium is not installed")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("the playwright package is not installed")
    return path


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def streamlit_servers(count: int) -> Iterator[list[str]]:
    """Start ``count`` fresh Streamlit servers running ``app.py`` at once; yield their base URLs.

    ``fresh_servers.py`` imports the app's modules once and forks the servers
    from it, so they start in parallel at a fraction of the CPU (a shared
    2-core CI machine).  Each server is stopped by its own process id (its
    process group) when the block ends, and so is the forking process.
    """
    ports = free_ports(count)  # all different (one at a time, the system may repeat one)
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    log = tempfile.NamedTemporaryFile(prefix="streamlit-", suffix=".log", delete=False)
    farm = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("fresh_servers.py")), *map(str, ports)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
    )
    children: list[int] = []
    try:
        children = [int(pid) for pid in farm.stdout.readline().split()]
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        for url in urls:
            while not _healthy(url):
                if len(children) != count or farm.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    output = Path(log.name).read_text(errors="replace")[-3000:]
                    pytest.fail(f"streamlit did not become healthy at {url}:\n{output}")
                time.sleep(0.25)
        yield urls
    finally:
        for pid in children:  # all at once: each takes a moment to shut down
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)  # the server's own process group only
        if farm.poll() is None:
            os.killpg(farm.pid, signal.SIGTERM)
        try:
            farm.wait(timeout=15)
        except subprocess.TimeoutExpired:
            for pid in [*children, farm.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
            farm.wait(timeout=10)
        log.close()
        Path(log.name).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def app_url(chromium_path: str) -> Iterator[str]:
    """Base URL of a Streamlit server running ``app.py`` for the whole session."""
    with streamlit_servers(1) as (url,):
        yield url


@pytest.fixture(scope="session")
def chromium(chromium_path: str):
    """A headless Chromium browser for the session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def new_page(chromium) -> Iterator[Callable[..., object]]:
    """Factory: each call opens a page in a NEW browser context (no shared state).

    ``new_page()`` is the 1280×800 projector in the light theme;
    ``new_page("390x844", dark=True)`` a screen of ``checks.SIZES`` in the
    dark theme (Streamlit follows the browser's ``prefers-color-scheme``).
    """
    contexts = []

    def _open(size: str = "1280x800", *, dark: bool = False):
        context = chromium.new_context(**SIZES[size], color_scheme="dark" if dark else "light")
        context.set_default_timeout(RUN_TIMEOUT_MS)
        contexts.append(context)
        return context.new_page()

    yield _open
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def wait_for_app() -> Callable[..., None]:
    """``wait_for_app(page)``: block until the page's script run has finished.

    Checks Streamlit's own signals: the app's ``data-test-script-state`` is
    ``notRunning``, the running indicator (``stStatusWidget``) is gone, and
    the page's ``st.title`` (an ``h1``) has been drawn.  ``wait_for_app.settled(page)``
    also waits until every chart is drawn and the page has stopped changing.
    """
    wait_for_app_run.settled = wait_until_settled
    return wait_for_app_run


@pytest.fixture(scope="session")
def start_servers(chromium_path: str) -> Callable[[int], contextlib.AbstractContextManager[list[str]]]:
    """``with start_servers(n) as urls:`` n fresh servers, started at once (see :func:`streamlit_servers`)."""
    return streamlit_servers
