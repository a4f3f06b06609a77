"""Fixtures for the classroom deployment: nginx in front of two app processes.

Without nginx (or chromium, for the browser test) these tests skip, but only
when the environment variable ``CI`` is unset; under ``CI=true`` they fail,
so CI cannot pass by skipping them (``.ci/run`` installs both).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from deploy.serve import Deployment, NginxMissing, find_nginx

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def in_ci() -> bool:
    """True when the environment variable ``CI`` is set to a true-ish value."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"{reason}; CI is set, so the deployment tests must run (see .ci/run)")
    pytest.skip(f"{reason} (skipped outside CI; with CI=true this fails)")


@pytest.fixture(scope="session")
def nginx_path() -> str:
    try:
        return find_nginx()
    except NginxMissing as exc:
        unavailable(str(exc).splitlines()[0])


@pytest.fixture(scope="session")
def classroom(nginx_path: str) -> Iterator[Deployment]:
    """Two app processes behind nginx on 127.0.0.1, answering with ``X-KL-Backend``."""
    with Deployment(2, expose_backend=True) as deployment:
        yield deployment


@pytest.fixture(scope="session")
def chromium_browser():
    """Headless Debian chromium through playwright (skip/fail rule as above)."""
    path = shutil.which("chromium")
    if path is None:
        unavailable("chromium is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
