"""Shared test set-up.

* The app re-raises page errors under test (see ``app.py``).
* ``classroom``: two app processes behind nginx (``deploy.serve.Deployment``),
  one for the whole session, shared by ``tests/deploy`` and the browser test
  that goes through it.  Without nginx it skips, unless ``CI`` is set: then it
  fails, so CI cannot pass by skipping (``.ci/run`` installs nginx).
* The browser tests run first, in one pytest-xdist worker (see :data:`FIRST`).
"""

import os
from pathlib import Path

import pytest

os.environ["KL_LAB_STRICT"] = "1"


ROOT = Path(__file__).resolve().parents[1]

#: The browser tests run in one pytest-xdist worker while the second runs the other tests
#: (:func:`pytest_xdist_make_scheduler`).  Their order: the fresh servers of the first
#: requests first, the link round trips, which move widgets as fast as a run allows, last,
#: once the other worker is done and the machine is quiet.  Two workers both driving pages
#: took 18 minutes, not 25, but overloaded the 2-core machine: a click or a cell edit made,
#: or a metric read, while a run was still drawing failed 4 times in 3 runs.
FIRST = ("tests/browser/test_first_request.py",)
LAST = ("tests/browser/test_link_state.py",)
BROWSER = "tests/browser/"


def _path(item: pytest.Item) -> str:
    return Path(str(item.path)).resolve().relative_to(ROOT).as_posix()


def _rank(item: pytest.Item) -> int:
    path = _path(item)
    if not path.startswith(BROWSER):
        return 3
    return 0 if path in FIRST else 2 if path in LAST else 1


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
    """Browser tests first, in the order above; a stable sort keeps each file's tests
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
