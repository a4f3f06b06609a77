"""A class opens the link at once: simulated students over Streamlit's own protocol.

Starts the app on 127.0.0.1 — one plain ``streamlit run`` (``--processes 1``,
the default) or N processes behind nginx (``--processes N``, the deployment of
``python -m deploy.serve``) — then runs the classroom load and prints:

* latency from a widget change to the end of that run: p50, p95, max
  (and the same for opening the page);
* errors (timeouts, exceptions, ``st.error`` boxes, dropped connections, a
  session whose requests reached two processes);
* server CPU per run (utime + stime of every app process, from ``/proc``,
  over the load, divided by the runs) and how busy the cores were;
* peak RSS of the app processes (sum and largest single process, sampled from
  ``/proc/<pid>/status``), and nginx's; and the peak of the processes' summed
  PSS (``/proc/<pid>/smaps_rollup``), which counts the shared libraries every
  process maps (~90 MB: numpy, scipy, pyarrow) once instead of once per process.

The load: ``--sessions`` students, pages in rotation over ``lab.pages.PAGES``,
starting at random moments within ``--ramp`` seconds.  Each opens its page with
its own query string (``?seed=<student>``; ignored by pages without a seed),
then ``--actions`` times: waits ``--pause`` s and moves one widget (the key in
``ACTION_KEYS``, else ``seed``, else the page's first numeric URL-bound widget)
to a value not used before, through the real WebSocket (see
``streamlit_client.py``).  Each process first opens every page once, unmeasured
(``--no-warmup`` to measure a cold start).

Every loop is bounded by a count and by time (``--run-timeout`` per run,
``--max-seconds`` for the whole load), and everything started is stopped at
the end, on error and on Ctrl-C.  Only 127.0.0.1 is ever contacted.

Run from the repository root::

    uv run python benchmarks/bench_classroom.py                       # 30 students, 1 process
    uv run python benchmarks/bench_classroom.py --processes 2         # behind nginx
    uv run python benchmarks/bench_classroom.py --sessions 3 --actions 2 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import signal
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit_client import SessionLog, StreamlitSession, next_value  # noqa: E402

from deploy import nginx_conf  # noqa: E402
from deploy import processes as procs  # noqa: E402
from deploy.serve import Deployment, NginxMissing  # noqa: E402
from lab.pages import PAGES  # noqa: E402

#: Widget moved on each page, by URL path (a page not listed, or whose key is
#: gone, falls back to ``seed``, then to its first numeric URL-bound widget).
ACTION_KEYS = {
    "": "mu",
    "estimator-lab": "n",
    "control-variates": "lam",
    "bregman-gap": "draws",
    "f-divergences": "th_shift",
    "approx-kl": "th",
}
FALLBACK_KEY = "seed"
#: Largest value a session moves a select slider to, by URL path: the Estimator
#: Lab refuses N · R above 20,000,000 draws with a message (at its R = 200,
#: N = 100,000), which would count as an error here.
ACTION_MAX = {"estimator-lab": 100_000}
RSS_SAMPLE_SECONDS = 0.2


def choose_key(url_path: str, keys: list[str]) -> str | None:
    """The URL key a session moves on its page, from the page's changeable widgets."""
    for key in (ACTION_KEYS.get(url_path), FALLBACK_KEY):
        if key in keys:
            return key
    return keys[0] if keys else None


def limit_widget(url_path: str, widget) -> None:
    """Keep a select slider's moves at or below ``ACTION_MAX[url_path]`` (the page's own limit)."""
    cap = ACTION_MAX.get(url_path)
    if cap is None or not widget.options:
        return
    allowed = [i for i, text in enumerate(widget.options) if float(text) <= cap]
    if allowed:
        widget.hi = float(max(allowed))


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile (0 < q < 100), linear interpolation; None if empty."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 10) - 1]


class Sampler(threading.Thread):
    """Samples the RSS and PSS of the app processes (and nginx's RSS) until stopped."""

    def __init__(self, app_pids: list[int], nginx_pids: list[int]) -> None:
        super().__init__(daemon=True)
        self.app_pids, self.nginx_pids = app_pids, nginx_pids
        self.peak_sum = 0
        self.peak_pss_sum = 0
        self.peak_each = dict.fromkeys(app_pids, 0)
        self.peak_nginx = 0
        self._done = threading.Event()

    def sample(self) -> None:
        rss = {pid: procs.rss_bytes(pid) for pid in self.app_pids}
        self.peak_sum = max(self.peak_sum, sum(rss.values()))
        self.peak_pss_sum = max(self.peak_pss_sum, sum(procs.pss_bytes(p) for p in self.app_pids))
        for pid, value in rss.items():
            self.peak_each[pid] = max(self.peak_each[pid], value)
        self.peak_nginx = max(self.peak_nginx, sum(procs.rss_bytes(p) for p in self.nginx_pids))

    def run(self) -> None:
        while not self._done.wait(RSS_SAMPLE_SECONDS):
            self.sample()

    def stop(self) -> None:
        self._done.set()
        self.join(timeout=5)
        self.sample()


async def simulate_student(
    index: int, base_url: str, url_path: str, args: argparse.Namespace, delay: float,
    deadline: float, backend_header: str | None,
) -> SessionLog:
    """One student: open the page, then move a widget ``args.actions`` times."""
    log = SessionLog(index, url_path)
    loop = asyncio.get_running_loop()
    await asyncio.sleep(delay)
    session = StreamlitSession(base_url, run_timeout=args.run_timeout,
                               backend_header=backend_header)
    try:
        await session.connect(url_path, f"seed={index + 1}")
        run = await session.open_page()
        log.runs.append(run)
        if run.error == "timeout":
            return log
        log.key = choose_key(url_path, list(session.widgets))
        if log.key is not None:
            limit_widget(url_path, session.widgets[log.key])
        for j in range(args.actions):
            if loop.time() + args.pause > deadline:
                log.errors.append("time budget (--max-seconds) ran out")
                break
            await asyncio.sleep(args.pause)
            if log.key is None:  # nothing to move: rerun as the "R" key does
                run = await session.rerun()
            else:
                value = next_value(session.widgets[log.key], index * args.actions + j + 1)
                run = await session.change(log.key, value)
            log.runs.append(run)
            if run.error == "timeout":
                break
    except Exception as exc:  # a student's dropped connection is a result, not a crash
        log.errors.append(f"{type(exc).__name__}: {exc}"[:200])
    finally:
        log.backends = dict(session.backends)
        try:
            await asyncio.wait_for(session.close(), 10)
        except Exception:
            pass
    return log


async def run_load(base_url: str, args: argparse.Namespace, *, sessions: int, actions: int,
                   backend_header: str | None, seed: int = 0) -> list[SessionLog]:
    """All students, staggered over ``args.ramp`` seconds, bounded by ``args.max_seconds``."""
    rng = random.Random(seed)
    pages = [p.url_path for p in PAGES]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.max_seconds
    args = argparse.Namespace(**{**vars(args), "actions": actions})
    tasks = [
        asyncio.create_task(simulate_student(
            i, base_url, pages[i % len(pages)], args, rng.uniform(0, args.ramp), deadline,
            backend_header,
        ))
        for i in range(sessions)
    ]
    done, pending = await asyncio.wait(tasks, timeout=args.max_seconds + args.run_timeout)
    for task in pending:
        task.cancel()
    logs = [t.result() for t in done]
    for i, task in enumerate(tasks):
        if task in pending:
            logs.append(SessionLog(i, pages[i % len(pages)], errors=["cancelled at --max-seconds"]))
    return sorted(logs, key=lambda log: log.index)


async def warm_up(backend_urls: list[str], args: argparse.Namespace) -> int:
    """Open every page once on every process (imports, first runs); returns errors."""
    async def one(url: str) -> int:
        errors = 0
        for page in PAGES:
            session = StreamlitSession(url, run_timeout=args.run_timeout)
            try:
                await session.connect(page.url_path, "")
                errors += (await session.open_page()).error is not None
            except Exception:
                errors += 1
            finally:
                await session.close()
        return errors

    return sum(await asyncio.gather(*(one(u) for u in backend_urls)))


def summarise(logs: list[SessionLog], *, cpu: float, wall: float, sampler: Sampler,
              deployment: Deployment, args: argparse.Namespace, warmup_errors: int,
              load_before: tuple[float, ...], client_cpu: float, pids: dict) -> dict:
    changes = [r for log in logs for r in log.runs if r.kind == "change"]
    opens = [r for log in logs for r in log.runs if r.kind == "open"]
    finished = [r for log in logs for r in log.runs if r.seconds is not None]
    errors: dict[str, int] = {}

    def count(kind: str) -> None:
        errors[kind] = errors.get(kind, 0) + 1

    examples = []
    for log in logs:
        for r in log.runs:
            if r.error:
                count(r.error.split(":")[0])
                examples.append(f"/{log.page}: {r.error}")
        for e in log.errors:
            count(e.split(":")[0])
            examples.append(f"/{log.page}: {e}")
        if deployment.proxy and len(set(log.backends.values())) > 1:
            count("sticky")
            examples.append(f"/{log.page}: page from {log.backends.get('page')}, "
                            f"stream from {log.backends.get('stream')}")

    def stats(runs) -> dict:
        secs = [r.seconds for r in runs if r.seconds is not None and r.error is None]
        return {"n": len(secs), "p50": percentile(secs, 50), "p95": percentile(secs, 95),
                "max": max(secs) if secs else None}

    per_page = {}
    for page in PAGES:
        mine = [log for log in logs if log.page == page.url_path]
        per_page[page.url_path] = {
            "title": page.title, "sessions": len(mine),
            "keys": sorted({log.key or "-" for log in mine}),
            "change": stats([r for log in mine for r in log.runs if r.kind == "change"]),
            "errors": sum(1 for log in mine for r in log.runs if r.error) + sum(
                len(log.errors) for log in mine),
        }
    per_backend: dict[str, int] = {}
    for log in logs:
        b = log.backends.get("stream") or log.backends.get("page")
        if b:
            per_backend[b] = per_backend.get(b, 0) + 1
    ncpu = os.cpu_count() or 1
    return {
        "setup": {
            "processes": args.processes, "proxy": "nginx" if deployment.proxy else "none",
            "sessions": args.sessions, "actions": args.actions, "pause_s": args.pause,
            "ramp_s": args.ramp, "warmup": not args.no_warmup, "url": deployment.url,
        },
        "machine": {
            "cpus": ncpu, "python": platform.python_version(),
            "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        },
        "change": stats(changes),
        "open": stats(opens),
        "runs_finished": len(finished),
        "runs_expected": args.sessions * (1 + args.actions),
        "errors": sum(errors.values()) + warmup_errors,
        "errors_by_kind": errors | ({"warm-up": warmup_errors} if warmup_errors else {}),
        "error_examples": examples[:10],
        "cpu_s": cpu,
        "cpu_per_run_s": cpu / len(finished) if finished else None,
        "wall_s": wall,
        "cores_busy": cpu / wall if wall else None,
        "cores_busy_fraction": cpu / wall / ncpu if wall else None,
        "rss_peak_sum_mb": sampler.peak_sum / 2**20,
        "pss_peak_sum_mb": sampler.peak_pss_sum / 2**20,
        "rss_peak_max_process_mb": max(sampler.peak_each.values(), default=0) / 2**20,
        "rss_nginx_peak_mb": sampler.peak_nginx / 2**20,
        "client_cpu_s": client_cpu,
        "sessions_per_process": per_backend,
        "pages": per_page,
        "pids": pids,
        "sessions": [
            {"page": log.page, "key": log.key, "backends": log.backends, "errors": log.errors,
             "runs": [{"kind": r.kind, "seconds": r.seconds, "error": r.error} for r in log.runs]}
            for log in logs
        ],
    }


def _fmt(x: float | None, unit: str = " s", digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}{unit}"


def print_report(r: dict) -> None:
    s, m = r["setup"], r["machine"]
    where = (f"{s['processes']} processes behind nginx" if s["proxy"] == "nginx"
             else "one streamlit run process")
    print(f"Classroom load: {s['sessions']} sessions × {s['actions']} widget changes "
          f"({s['pause_s']} s pause), started within {s['ramp_s']} s; {where} at {s['url']}"
          f"{'' if s['warmup'] else ' (no warm-up)'}")
    print(f"Machine: {m['cpus']} CPUs, Python {m['python']}; load average before "
          f"{' '.join(f'{x:.2f}' for x in m['loadavg_before'])}, after "
          f"{' '.join(f'{x:.2f}' for x in m['loadavg_after'])}")
    print()
    print(f"{'page':<26}{'sessions':>9}  {'key':<10}{'changes':>8}{'p50':>9}{'p95':>9}"
          f"{'max':>9}{'errors':>8}")
    for p in r["pages"].values():
        c = p["change"]
        print(f"{p['title'][:25]:<26}{p['sessions']:>9}  {','.join(p['keys'])[:9]:<10}"
              f"{c['n']:>8}{_fmt(c['p50']):>9}{_fmt(c['p95']):>9}{_fmt(c['max']):>9}"
              f"{p['errors']:>8}")
    print()
    c, o = r["change"], r["open"]
    print(f"widget change → run finished: p50 {_fmt(c['p50'])}, p95 {_fmt(c['p95'])}, "
          f"max {_fmt(c['max'])}  (n = {c['n']})")
    print(f"opening a page:               p50 {_fmt(o['p50'])}, p95 {_fmt(o['p95'])}, "
          f"max {_fmt(o['max'])}  (n = {o['n']})")
    kinds = ", ".join(f"{k} {v}" for k, v in r["errors_by_kind"].items())
    print(f"errors: {r['errors']}" + (f" ({kinds})" if kinds else "")
          + f"; runs finished {r['runs_finished']} of {r['runs_expected']}")
    for e in r["error_examples"]:
        print(f"  {e}")
    print(f"server CPU: {r['cpu_s']:.1f} s over {r['runs_finished']} runs = "
          f"{_fmt(r['cpu_per_run_s'], ' s', 3)} per run; {_fmt(r['cores_busy'], '', 2)} of "
          f"{m['cpus']} cores busy over {r['wall_s']:.1f} s")
    print(f"server RSS peak: {r['rss_peak_sum_mb']:.0f} MB in all "
          f"(largest process {r['rss_peak_max_process_mb']:.0f} MB)"
          + (f"; nginx {r['rss_nginx_peak_mb']:.0f} MB" if s["proxy"] == "nginx" else ""))
    print(f"server PSS peak: {r['pss_peak_sum_mb']:.0f} MB in all (shared library pages counted once)")
    if r["sessions_per_process"]:
        print("sessions per process: " + ", ".join(
            f"{k} {v}" for k, v in sorted(r["sessions_per_process"].items())))
    print(f"load generator CPU: {r['client_cpu_s']:.1f} s (same machine)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=1,
                        help="app processes; 1 = one plain streamlit run, more = behind nginx")
    parser.add_argument("--nginx", action="store_true",
                        help="put nginx in front even of a single process")
    parser.add_argument("--sessions", type=int, default=30, help="simulated students (30)")
    parser.add_argument("--actions", type=int, default=5, help="widget changes each (5)")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between changes (1)")
    parser.add_argument("--ramp", type=float, default=3.0,
                        help="students start at random moments within this many seconds (3)")
    parser.add_argument("--run-timeout", type=float, default=60.0,
                        help="a run slower than this counts as an error (60 s)")
    parser.add_argument("--max-seconds", type=float, default=600.0,
                        help="the whole load stops after this long (600 s)")
    parser.add_argument("--no-warmup", action="store_true",
                        help="skip opening every page once per process before measuring")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for name in ("processes", "sessions"):
        if getattr(args, name) < 1:
            print(f"--{name} must be at least 1", file=sys.stderr)
            return 2
    if args.actions < 0 or args.pause < 0 or args.ramp < 0 or args.run_timeout <= 0 \
            or args.max_seconds <= 0:
        print("--actions, --pause and --ramp must be ≥ 0; the timeouts > 0", file=sys.stderr)
        return 2
    proxy = args.processes > 1 or args.nginx
    try:
        deployment = Deployment(args.processes, proxy=proxy, expose_backend=True)
    except NginxMissing as exc:
        print(f"bench_classroom: {exc}", file=sys.stderr)
        return 2
    backend_header = nginx_conf.BACKEND_HEADER if proxy else None

    def _terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    if not args.json:
        print(f"Starting {args.processes} app process(es)"
              f"{' behind nginx' if proxy else ''} …", flush=True)
    try:
        deployment.start()
        pids = {"app": deployment.app_pids, "nginx": deployment.nginx_pids}
        backends = [f"http://127.0.0.1:{p}" for p in deployment.backend_ports]
        warmup_errors = 0 if args.no_warmup else asyncio.run(warm_up(backends, args))
        sampler = Sampler(deployment.app_pids, deployment.nginx_pids)
        load_before = os.getloadavg()
        cpu0 = sum(procs.cpu_seconds(p) for p in deployment.app_pids)
        client0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        sampler.start()
        try:
            logs = asyncio.run(run_load(deployment.url, args, sessions=args.sessions,
                                        actions=args.actions, backend_header=backend_header))
        finally:
            sampler.stop()
        wall = time.perf_counter() - t0
        cpu = sum(procs.cpu_seconds(p) for p in deployment.app_pids) - cpu0
        client1 = resource.getrusage(resource.RUSAGE_SELF)
        client_cpu = (client1.ru_utime + client1.ru_stime) - (client0.ru_utime + client0.ru_stime)
        report = summarise(logs, cpu=cpu, wall=wall, sampler=sampler, deployment=deployment,
                           args=args, warmup_errors=warmup_errors, load_before=load_before,
                           client_cpu=client_cpu, pids=pids)
    except KeyboardInterrupt:
        print("\ninterrupted; stopping everything", file=sys.stderr)
        return 130
    except procs.ProcessFailed as exc:
        print(f"bench_classroom: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not stop the stopping
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        deployment.stop()
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
