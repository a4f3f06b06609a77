"""Start fresh Streamlit servers for ``app.py`` from one warm interpreter (used by conftest.py).

Usage: ``python tests/browser/fresh_servers.py PORT [PORT ...]`` from the
repository root.  It imports Streamlit and every module of ``kl_core``,
``charts`` and ``lab`` once, then forks one server per port, each in its own
session (process group), and prints their process ids on one line.  On
SIGTERM it stops them and exits.

Each server is fresh in everything Streamlit decides per process: no session
has run, so its first request still meets Streamlit's ``pages/`` check
(``PagesManager.uses_pages_directory``).  Only the imports are shared, which
is most of a server's start and first run (measured: 13 servers and their
first page cost ~21 s of CPU this way against ~71 s started one by one).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import signal
import sys

# A BLAS thread pool does not survive fork; one thread per server is plenty here.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

ROOT = os.getcwd()
sys.path.insert(0, ROOT)

import streamlit.web.cli as cli  # noqa: E402


def _warm() -> None:
    """Import every module the pages may need (never app.py or a page: no session yet)."""
    for package in ("kl_core", "charts", "lab"):
        pkg = importlib.import_module(package)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)


def _serve(port: str) -> None:
    os.setsid()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    sys.argv = [
        "streamlit",
        "run",
        "app.py",
        "--server.headless=true",
        f"--server.port={port}",
        "--server.address=127.0.0.1",
        "--server.fileWatcherType=none",
        "--browser.gatherUsageStats=false",
    ]
    try:
        cli.main()
    finally:
        os._exit(0)


def main(ports: list[str]) -> None:
    _warm()
    children = []
    for port in ports:
        pid = os.fork()
        if pid == 0:
            _serve(port)
        children.append(pid)
    print(" ".join(str(pid) for pid in children), flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    for pid in children:
        try:
            os.killpg(pid, signal.SIGTERM)  # each child leads its own process group
        except ProcessLookupError:
            pass
    for pid in children:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main(sys.argv[1:])
