"""Serve a class: N app processes behind nginx, with sticky sessions.

One command::

    uv run python -m deploy.serve --processes 2 --port 8080

starts ``--processes`` copies of ``streamlit run app.py`` on free ports of
127.0.0.1, then nginx (Debian's package) on ``--address:--port`` with the
configuration of :mod:`deploy.nginx_conf`: WebSocket upgrade on
``/_stcore/stream`` and cookie affinity, so each browser stays with one
process.  It prints the URL to share and runs until Ctrl-C (or SIGTERM),
which stops everything it started.  An app process that dies is restarted.

Why processes: one Streamlit process runs Python on one core at a time, so a
class of thirty waits in one queue; N processes use N cores.  Memory grows by
roughly one process's RSS per process (see README, "Serving a class").

:class:`Deployment` is the same thing as a context manager, for the classroom
benchmark and the tests.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deploy import nginx_conf
from deploy import processes as procs

__all__ = ["Deployment", "NginxMissing", "find_nginx", "main", "streamlit_command"]

ROOT = Path(__file__).resolve().parents[1]
NGINX_INSTALL_HINT = "sudo apt-get install -y nginx   (Debian/Ubuntu; the package is 'nginx')"
MAX_RESTARTS = 5
#: Set for every app process unless already set in the environment.
PROCESS_ENV = {"MALLOC_ARENA_MAX": "2", "OPENBLAS_NUM_THREADS": "1"}


class NginxMissing(RuntimeError):
    """nginx is not installed."""


def find_nginx(search_path: str | None = None) -> str:
    """Path of the nginx binary, or NginxMissing naming the install command.

    Looks in ``search_path`` (default: ``$PATH``, then /usr/sbin and
    /usr/local/sbin, which a non-root user's PATH often lacks).
    """
    if search_path is None:
        search_path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    found = shutil.which("nginx", path=search_path)
    if found is None:
        raise NginxMissing(f"nginx is not installed. Install it with:\n    {NGINX_INSTALL_HINT}")
    return found


def streamlit_command(port: int, *, address: str = "127.0.0.1", base_path: str = "") -> list[str]:
    """The ``streamlit run app.py`` command line of one app process."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless=true",
        f"--server.address={address}",
        f"--server.port={port}",
        f"--server.baseUrlPath={base_path}",
        "--server.fileWatcherType=none",
        "--server.runOnSave=false",
        "--browser.gatherUsageStats=false",
    ]


class Deployment:
    """N app processes, behind nginx unless ``proxy=False`` (then N must be 1).

    Parameters
    ----------
    processes : int
        Number of ``streamlit run app.py`` processes.
    port : int
        Port of the public address (nginx's, or the single app's with
        ``proxy=False``); 0 picks a free one.
    address : str
        Interface to listen on: ``127.0.0.1`` for this machine only,
        ``0.0.0.0`` for every interface (a classroom network).
    proxy : bool
        Put nginx in front (the default).  ``False`` runs one plain
        ``streamlit run`` on ``address:port``, for comparison.
    expose_backend : bool
        nginx adds an ``X-KL-Backend`` header naming the answering process.
    base_path : str
        Serve under ``/<base_path>/`` (Streamlit's ``server.baseUrlPath``).
    static : bool
        nginx serves Streamlit's front-end bundles (``/static/``) itself;
        ``False`` proxies them to the app processes like everything else.
    work_dir : Path, optional
        Where logs and nginx's files go; default a temporary directory that
        :meth:`stop` removes.
    startup_timeout : float
        Seconds to wait for every process to answer ``/_stcore/health``.
    """

    def __init__(
        self,
        processes: int = 2,
        *,
        port: int = 0,
        address: str = "127.0.0.1",
        proxy: bool = True,
        expose_backend: bool = False,
        base_path: str = "",
        static: bool = True,
        work_dir: Path | None = None,
        startup_timeout: float = 120.0,
    ) -> None:
        if processes < 1:
            raise ValueError(f"processes must be at least 1, got {processes}")
        if not proxy and processes != 1:
            raise ValueError("proxy=False serves one process; use nginx for processes > 1")
        if not 0 <= port < 65536:
            raise ValueError(f"port must be in 0..65535, got {port}")
        self.n = processes
        self.proxy = proxy
        self.address = address
        self.expose_backend = expose_backend
        self.base_path = base_path.strip("/")
        self.static = static
        self.startup_timeout = startup_timeout
        self._nginx_bin = find_nginx() if proxy else None
        host = "127.0.0.1" if address in ("0.0.0.0", "") else address
        if port == 0:
            port = procs.free_port(address or "0.0.0.0")
        elif not procs.port_is_free(address, port):
            raise OSError(f"port {port} on {address} is in use; choose another with --port")
        self.port = port
        self._host = host
        self.url = f"http://{host}:{port}" + (f"/{self.base_path}" if self.base_path else "")
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="kllab-serve-"))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        # nginx's workers may run as another user (nobody) and must reach their temp dirs.
        self.work_dir.chmod(0o755)
        self.backend_ports: list[int] = []
        self.apps: list[subprocess.Popen] = []
        self.nginx: subprocess.Popen | None = None
        self.restarts = 0
        self._env = dict(os.environ)
        # One cookie secret for all processes, so cookies one process signed
        # (Streamlit's session middleware, st.login) stay valid in another, e.g.
        # for a browser moved while its own process restarts.
        self._env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
        # Memory and cores: glibc gives each thread that allocates its own malloc
        # arena (Streamlit runs every script run in a new thread), which
        # fragments the heap; two arenas keep a process's RSS lower under a
        # class's load.  One BLAS thread per process: the processes already
        # share out the cores.  (Not for proxy=False: that is a plain ``streamlit run``.)
        for name, value in PROCESS_ENV.items() if proxy else ():
            self._env.setdefault(name, value)

    # -- life cycle -----------------------------------------------------------------
    def start(self) -> Deployment:
        """Start the app processes, wait until healthy, then nginx; return self."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _health(self, port: int, host: str = "127.0.0.1") -> str:
        base = f"/{self.base_path}" if self.base_path else ""
        return f"http://{host}:{port}{base}/_stcore/health"

    def _app_health(self, i: int) -> str:
        return self._health(self.backend_ports[i], "127.0.0.1" if self.proxy else self._host)

    def _app_log(self, i: int) -> Path:
        return self.work_dir / f"app-{i}.log"

    def _start_app(self, i: int) -> subprocess.Popen:
        address = "127.0.0.1" if self.proxy else self.address
        cmd = streamlit_command(self.backend_ports[i], address=address, base_path=self.base_path)
        return procs.start(cmd, log=self._app_log(i), cwd=ROOT, env=self._env)

    def _start(self) -> None:
        if self.proxy:
            self.backend_ports = procs.free_ports(self.n, exclude=(self.port,))  # not nginx's
        else:
            self.backend_ports = [self.port]
        for i in range(self.n):
            self.apps.append(self._start_app(i))
        procs.wait_healthy(
            [(self._app_health(i), app, self._app_log(i)) for i, app in enumerate(self.apps)],
            timeout=self.startup_timeout,
        )
        if not self.proxy:
            return
        conf = self.work_dir / "nginx.conf"
        conf.write_text(
            nginx_conf.render(
                [("127.0.0.1", p) for p in self.backend_ports],
                listen=(self.address or "0.0.0.0", self.port),
                prefix=self.work_dir,
                expose_backend=self.expose_backend,
                base_path=self.base_path,
                static_dir=_static_dir_for_nginx() if self.static else None,
            )
        )
        nginx_log = self.work_dir / "nginx-error.log"
        cmd = [self._nginx_bin, "-p", str(self.work_dir), "-c", str(conf), "-g", "daemon off;"]
        self.nginx = procs.start(cmd, log=nginx_log, cwd=self.work_dir)
        procs.wait_healthy(
            [(self._health(self.port, self._host), self.nginx, nginx_log)], timeout=30.0
        )
        if not procs.answered_by(self._health(self.port, self._host), "nginx"):
            raise procs.ProcessFailed(
                f"{self.url} answers, but not through nginx: another server holds port "
                f"{self.port}. nginx's log:\n{procs.tail(nginx_log)}"
            )

    def stop(self) -> None:
        """Stop nginx and every app process (idempotent); remove the temporary dir."""
        if self.nginx is not None:
            procs.stop(self.nginx, sig=signal.SIGTERM)  # nginx: TERM = fast shutdown
        for app in self.apps:
            procs.stop(app)
        if self._own_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> Deployment:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- while serving ----------------------------------------------------------------
    @property
    def app_pids(self) -> list[int]:
        """Process ids of the app processes."""
        return [a.pid for a in self.apps]

    @property
    def nginx_pids(self) -> list[int]:
        """nginx's master and worker process ids (empty without the proxy)."""
        if self.nginx is None or self.nginx.poll() is not None:
            return []
        return [self.nginx.pid, *procs.children_of(self.nginx.pid)]

    def supervise(self) -> str | None:
        """Restart app processes that died; return a message if something changed.

        Raises ProcessFailed when nginx died or a process keeps dying.
        """
        if self.nginx is not None and self.nginx.poll() is not None:
            raise procs.ProcessFailed(
                f"nginx exited with code {self.nginx.returncode}:\n"
                + procs.tail(self.work_dir / "nginx-error.log")
            )
        notes = []
        for i, app in enumerate(self.apps):
            if app.poll() is None:
                continue
            if self.restarts >= MAX_RESTARTS:
                raise procs.ProcessFailed(
                    f"app process {i} died again (code {app.returncode}) after {self.restarts} "
                    f"restarts. Its log:\n{procs.tail(self._app_log(i))}"
                )
            self.restarts += 1
            self.apps[i] = self._start_app(i)
            procs.wait_healthy(
                [(self._app_health(i), self.apps[i], self._app_log(i))],
                timeout=self.startup_timeout,
            )
            notes.append(f"app process {i} had exited (code {app.returncode}); restarted it")
        return "; ".join(notes) or None


def _static_dir_for_nginx() -> Path | None:
    """Streamlit's bundle folder, if nginx's workers can read it.

    Started as root, nginx runs its workers as ``nobody``: a folder they cannot
    reach (a checkout under /root, say) stays served by the app processes.
    """
    folder = nginx_conf.streamlit_static_dir()
    if folder is None or os.geteuid() != 0:
        return folder
    for part in [folder, *folder.parents]:
        if not part.stat().st_mode & 0o001:  # others may not enter it
            return None
    return folder if folder.stat().st_mode & 0o004 else None


def _network_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses, from its host name (no traffic sent)."""
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        return []
    return sorted({info[4][0] for info in infos if not info[4][0].startswith("127.")})


def _default_processes() -> int:
    """One process per CPU this process may run on (a container's cpuset), at most 8."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m deploy.serve",
        description="Serve the KL Estimator Lab to a class: N app processes behind nginx "
        "with sticky sessions. Ctrl-C stops everything.",
    )
    parser.add_argument(
        "--processes", type=int, default=_default_processes(),
        help="app processes, about one per CPU core (default: %(default)s, the CPUs here, at most 8)",
    )
    parser.add_argument("--port", type=int, default=8080, help="public port (default 8080)")
    parser.add_argument(
        "--address", default="0.0.0.0",
        help="interface to listen on: 0.0.0.0 = every network (default), 127.0.0.1 = this machine only",
    )
    parser.add_argument(
        "--base-path", default="", help="serve under http://host:port/<base-path>/ (default: the root)"
    )
    parser.add_argument(
        "--print-config", action="store_true",
        help="print an nginx snippet for an existing nginx (backends on ports 8501, 8502, …) and exit",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.processes < 1:
        print("--processes must be at least 1", file=sys.stderr)
        return 2
    if not 0 < args.port < 65536:
        print(f"--port must be in 1..65535, got {args.port}", file=sys.stderr)
        return 2
    if args.print_config:
        print(nginx_conf.render(
            [("127.0.0.1", 8501 + i) for i in range(args.processes)],
            listen=(args.address, args.port), base_path=args.base_path,
            static_dir=nginx_conf.streamlit_static_dir(),
        ))
        return 0
    try:
        deployment = Deployment(
            args.processes, port=args.port, address=args.address, base_path=args.base_path
        )
    except (NginxMissing, OSError, ValueError) as exc:
        print(f"deploy.serve: {exc}", file=sys.stderr)
        return 2

    def _terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    print(f"Starting {args.processes} app process(es) and nginx … (logs in {deployment.work_dir})",
          flush=True)
    try:
        deployment.start()
        base = f"/{deployment.base_path}" if deployment.base_path else ""
        print(f"\nKL Estimator Lab: {args.processes} app process(es) behind nginx, sticky sessions.")
        print(f"  This machine:  http://127.0.0.1:{deployment.port}{base}")
        if args.address in ("0.0.0.0", ""):
            for ip in _network_addresses():
                print(f"  The class:     http://{ip}:{deployment.port}{base}")
            if Path("/.dockerenv").exists():
                print("  (in a container: the class uses the host's address and published port)")
        print("Ctrl-C stops everything.", flush=True)
        while True:
            time.sleep(1.0)
            note = deployment.supervise()
            if note:
                print(note, flush=True)
    except KeyboardInterrupt:
        print("\nStopping …", flush=True)
        return 0
    except procs.ProcessFailed as exc:
        print(f"deploy.serve: {exc}", file=sys.stderr)
        return 1
    finally:
        # `uv run` forwards the terminal's Ctrl-C, so a second one may follow: finish stopping.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        deployment.stop()


if __name__ == "__main__":
    sys.exit(main())
