"""Start, watch and stop the child processes of a deployment (Linux).

Each child runs in its own process group (``start_new_session``), so stopping
it stops everything it started and nothing else.  On Linux a child also gets
``SIGTERM`` if the process that started it dies (``PR_SET_PDEATHSIG``), so a
killed benchmark or test leaves no server behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = [
    "ProcessFailed",
    "answered_by",
    "children_of",
    "cpu_seconds",
    "free_port",
    "free_ports",
    "healthy",
    "port_is_free",
    "rss_bytes",
    "start",
    "stop",
    "tail",
    "wait_healthy",
]

_PR_SET_PDEATHSIG = 1


class ProcessFailed(RuntimeError):
    """A child did not start, or died; the message ends with the tail of its log."""


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: cleanup then relies on stop() alone


def start(
    cmd: Sequence[str], *, log: Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """Start ``cmd`` in a new process group, its output appended to ``log``."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )


def stop(proc: subprocess.Popen, *, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
    """Stop ``proc``'s process group: ``sig``, then ``SIGKILL`` after ``timeout`` s."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=timeout)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=timeout)
    else:
        # The leader is gone; a straggler in its group (e.g. an nginx worker) is not.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def tail(path: Path, chars: int = 2000) -> str:
    """The last ``chars`` characters of a log file ("" if it does not exist)."""
    try:
        return Path(path).read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    return free_ports(1, host)[0]


def free_ports(n: int, host: str = "127.0.0.1", *, exclude: Iterable[int] = ()) -> list[int]:
    """``n`` different TCP ports free on ``host`` right now, none of them in ``exclude``.

    The sockets stay bound until all ``n`` are chosen: one at a time, the system may hand
    out a port it has just handed out (two servers on one port; or, with ``exclude``
    left out, an app process on the port nginx is about to take, which the health check
    then finds answering in nginx's place).
    """
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    taken = set(exclude)
    with contextlib.ExitStack() as held:
        ports: list[int] = []
        while len(ports) < n:
            s = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            s.bind((host, 0))
            port = s.getsockname()[1]
            if port not in taken:  # an excluded port stays bound here, so it is not offered again
                taken.add(port)
                ports.append(port)
        return ports


def port_is_free(host: str, port: int) -> bool:
    """True when a server could listen on ``host:port`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def healthy(url: str, timeout: float = 2.0) -> bool:
    """True when ``GET url`` answers 200 (Streamlit's ``/_stcore/health``)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (OSError, urllib.error.URLError):
        return False


def wait_healthy(
    checks: Sequence[tuple[str, subprocess.Popen, Path]], *, timeout: float
) -> None:
    """Wait until every ``(health_url, process, log)`` answers, or raise ProcessFailed."""
    deadline = time.monotonic() + timeout
    pending = list(checks)
    while pending:
        for item in list(pending):
            url, proc, log = item
            if proc.poll() is not None:
                raise ProcessFailed(
                    f"{' '.join(map(str, proc.args[:4]))}… exited with code {proc.returncode} "
                    f"before {url} was healthy. Its log:\n{tail(log)}"
                )
            if healthy(url):
                pending.remove(item)
        if pending and time.monotonic() > deadline:
            url, _, log = pending[0]
            raise ProcessFailed(f"{url} not healthy after {timeout:.0f} s. Log:\n{tail(log)}")
        if pending:
            time.sleep(0.25)


def answered_by(url: str, server: str, timeout: float = 2.0) -> bool:
    """True when ``GET url`` answers with a ``Server`` header naming ``server`` (``"nginx"``).

    A health check alone cannot tell nginx from an app process that took its port."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.headers.get("Server", "").lower().startswith(server.lower())
    except (OSError, urllib.error.URLError):
        return False


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()  # the command name may contain spaces


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` (from ``/proc``; empty if unreadable)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_stat_fields(int(entry.name))[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far, in seconds (0.0 once it is gone)."""
    try:
        fields = _stat_fields(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` now (``VmRSS``), in bytes; 0 once it is gone."""
    return _proc_kib(f"/proc/{pid}/status", "VmRSS:") * 1024


def pss_bytes(pid: int) -> int:
    """Proportional set size of ``pid`` now, in bytes; 0 once it is gone or unreadable.

    Like RSS, but a page shared with other processes (the shared libraries of
    numpy, scipy, pyarrow, mapped by every app process) counts as its share, so
    the PSS of N processes adds up to the memory they use together.
    """
    return _proc_kib(f"/proc/{pid}/smaps_rollup", "Pss:") * 1024


def _proc_kib(path: str, field: str) -> int:
    """The number (kB) on the line of ``path`` that starts with ``field``; 0 if none or unreadable."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0
