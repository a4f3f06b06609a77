"""Shared test set-up.

* The app re-raises page errors under test (see ``app.py``).
* ``classroom``: two app processes behind nginx (``deploy.serve.Deployment``),
  one for the whole session, shared by ``tests/deploy`` and the browser test
  that goes through it.  Without nginx it skips, unless ``CI`` is set: then it
  fails, so CI cannot pass by skipping (``.ci/run`` installs nginx).
"""

import os

import pytest

os.environ["KL_LAB_STRICT"] = "1"


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
