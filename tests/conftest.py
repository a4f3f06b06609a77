"""Shared test set-up.

* The app re-raises page errors under test (see ``app.py``).
* ``classroom``: two app processes behind nginx (``deploy.serve.Deployment``),
  one for the whole session, shared by ``tests/deploy`` and the browser test
  that goes through it.  Without nginx it skips, unless ``CI`` is set: then it
  fails, so CI cannot pass by skipping (``.ci/run`` installs nginx).
* The browser tests run first, in one pytest-xdist worker (see :data:`LONGEST_FIRST`).
"""

import os
from pathlib import Path

import pytest

os.environ["KL_LAB_STRICT"] = "1"


ROOT = Path(__file__).resolve().parents[1]

#: The browser test files that take longest (``--durations``: a fresh server per first
#: request, the axe scans, the link round trips), first; the other browser tests after them.
#: pytest-xdist runs every browser test in one worker, in this order, and the other tests
#: in the second worker meanwhile (:func:`pytest_xdist_make_scheduler`).  Two workers both
#: driving pages took 18 minutes, not 25, but overloaded the 2-core machine: a click or a
#: cell edit made, or a metric read, while a run was still drawing failed 4 times in 3 runs.
LONGEST_FIRST = (
    "tests/browser/test_first_request.py",
    "tests/browser/test_accessibility.py",
    "tests/browser/test_link_state.py",
)
BROWSER = "tests/browser/"


def _path(item: pytest.Item) -> str:
    return Path(str(item.path)).resolve().relative_to(ROOT).as_posix()


def _rank(item: pytest.Item) -> tuple[int, int]:
    path = _path(item)
    if path in LONGEST_FIRST:
        return 0, LONGEST_FIRST.index(path)
    return (1, 0) if path.startswith(BROWSER) else (2, 0)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """pytest-xdist's ``loadfile`` scheduling, with every browser test in one unit of work.

    (Its own ``--dist loadgroup`` cannot do this here: it renames the tests through an
    attribute that pytest 9.2 no longer reads, so the groups are ignored.)
    """
    from xdist.scheduler import LoadScopeScheduling

    class BrowserTestsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return BROWSER if nodeid.startswith(BROWSER) else nodeid.split("::", 1)[0]

    return BrowserTestsTogether(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests first, longest files first; a stable sort keeps each file's tests
    together and in order."""
    items.sort(key=_rank)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def nginx_path() -> str:
    """Path of nginx; skip (outside CI) or fail (in CI) without it."""
    from deploy.serve import NginxMissing, find_nginx

    try:
        return find_nginx()
    except NginxMissing as exc:
        reason = str(exc).splitlines()[0]
        if _in_ci():
            pytest.fail(f"{reason}; CI is set, so the deployment tests must run (see .ci/run)")
        pytest.skip(f"{reason} (skipped outside CI; with CI=true this fails)")


@pytest.fixture(scope="session")
def classroom(nginx_path: str):
    """Two app processes behind nginx on 127.0.0.1, answering with ``X-KL-Backend``."""
    from deploy.serve import Deployment

    with Deployment(2, expose_backend=True) as deployment:
        yield deployment


