"""Server CPU of one run of every page, and where it goes (issue 14, part 1).

Starts one ``streamlit run app.py`` on 127.0.0.1 and, for every page in
``lab.pages.PAGES``, opens it over Streamlit's own WebSocket protocol
(``streamlit_client.py``) as a student does, then moves the widget that
``bench_classroom.py`` moves:

* **warm**: back and forth between two values already computed (every
  ``st.cache_data`` call hits) — the cost of the page itself: building the
  elements and charts, serialising and sending them, the post-run GC;
* **new**: a value not asked for before each time (the classroom load's
  pattern) — the same plus the core computations;
* **open**: a new session opening the page (server warm).

CPU is the app process's utime + stime from ``/proc`` around each run (read
after the run has finished and the process is idle again, so the post-run
garbage collection is counted), less the idle process's own rate: the mean
of ``--runs`` runs (``/proc`` counts in 10 ms ticks), in milliseconds, and
the median wall time; the mean over pages at the end.

``--profile`` runs the server under cProfile instead (every script thread and
the event loop; ``_profiled_server.py``) and prints, per page, the functions
with the most own time and the project's functions with the most cumulative
time over the warm runs, in ms per run.  Profiling slows everything down: read
its figures as shares, and the CPU figures from a run without ``--profile``.

Run from the repository root::

    uv run python benchmarks/profile_pages.py                  # CPU per run per page
    uv run python benchmarks/profile_pages.py --profile --top 12
    uv run python benchmarks/profile_pages.py --pages estimator-lab,gradients --runs 9
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import pstats
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_classroom import choose_key, limit_widget  # noqa: E402
from streamlit_client import StreamlitSession, next_value  # noqa: E402

from deploy import processes as procs  # noqa: E402
from deploy.serve import streamlit_command  # noqa: E402
from lab.pages import PAGES  # noqa: E402

#: Seconds to wait after a run for the post-run work (GC, cleanup) to end before reading CPU.
SETTLE_S = 0.25


class Server:
    """One app process on a free port of 127.0.0.1 (profiled or not)."""

    def __init__(self, profile_out: Path | None, work: Path, extra: list[str]) -> None:
        port = procs.free_port()
        cmd = streamlit_command(port) + extra
        env = dict(os.environ)
        if profile_out is not None:
            cmd = [sys.executable, str(ROOT / "benchmarks" / "_profiled_server.py"), *cmd[3:]]
            env["KL_PROFILE_OUT"] = str(profile_out)
        self.url = f"http://127.0.0.1:{port}"
        self.log = work / "app.log"
        self.proc = procs.start(cmd, log=self.log, cwd=ROOT, env=env)
        procs.wait_healthy([(f"{self.url}/_stcore/health", self.proc, self.log)], timeout=120)
        self.profile_out = profile_out

    def cpu(self) -> float:
        return procs.cpu_seconds(self.proc.pid)

    def dump(self) -> pstats.Stats | None:
        """The profile since the last dump (``--profile`` only)."""
        if self.profile_out is None:
            return None
        self.profile_out.unlink(missing_ok=True)
        os.kill(self.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(0.1)
            try:
                return pstats.Stats(str(self.profile_out))
            except (OSError, EOFError, ValueError, TypeError):
                continue
        raise RuntimeError("the profiled server wrote no statistics")

    def stop(self) -> None:
        procs.stop(self.proc)


def idle_rate(server: Server, seconds: float = 2.0) -> float:
    """CPU seconds per second of the idle server (subtracted from each run's figure)."""
    c0, t0 = server.cpu(), time.perf_counter()
    time.sleep(seconds)
    return (server.cpu() - c0) / (time.perf_counter() - t0)


async def measure(server: Server, coro_factory, idle: float) -> tuple[float, float, str | None]:
    """(cpu s, wall s, error) of one run; CPU read once the process is idle again."""
    c0, t0 = server.cpu(), time.perf_counter()
    run = await coro_factory()
    await asyncio.sleep(SETTLE_S)
    elapsed = time.perf_counter() - t0
    return max(0.0, server.cpu() - c0 - idle * elapsed), run.seconds or float("nan"), run.error


async def profile_page(server: Server, url_path: str, runs: int, idle: float) -> dict:
    out: dict = {"page": url_path, "errors": []}
    # A session that opens the page once first (imports, first run); then a fresh one is measured.
    warm = StreamlitSession(server.url, run_timeout=120)
    await warm.connect(url_path, "seed=1")
    await warm.open_page()
    await warm.close()
    opens = []
    for i in range(max(3, runs // 2)):
        s = StreamlitSession(server.url, run_timeout=120)
        await s.connect(url_path, "seed=1")
        cpu, wall, err = await measure(server, s.open_page, idle)
        opens.append(cpu)
        if err:
            out["errors"].append(err)
        if i < max(3, runs // 2) - 1:
            await s.close()
    session = s
    key = choose_key(url_path, list(session.widgets))
    out["key"] = key or "(rerun)"
    if key is None:
        values = [None, None]
    else:
        widget = session.widgets[key]
        limit_widget(url_path, widget)
        values = [next_value(widget, 1), widget.initial]

    def change(value):
        if key is None:
            return session.rerun
        return lambda: session.change(key, value)

    for v in values:  # compute both values once
        await change(v)()
    server.dump()  # the profile starts here
    warm_cpu, warm_wall = [], []
    for i in range(runs):
        cpu, wall, err = await measure(server, change(values[i % 2]), idle)
        warm_cpu.append(cpu)
        warm_wall.append(wall)
        if err:
            out["errors"].append(err)
    out["stats"] = server.dump()
    new_cpu, new_wall = [], []
    for t in range(runs):
        value = None if key is None else next_value(session.widgets[key], t + 2)
        cpu, wall, err = await measure(server, change(value), idle)
        new_cpu.append(cpu)
        new_wall.append(wall)
        if err:
            out["errors"].append(err)
    await session.close()
    out |= {
        "open_cpu": statistics.fmean(opens),
        "warm_cpu": statistics.fmean(warm_cpu),
        "warm_wall": statistics.median(warm_wall),
        "new_cpu": statistics.fmean(new_cpu),
        "new_wall": statistics.median(new_wall),
    }
    return out


def _where(func: tuple[str, int, str]) -> str:
    path, line, name = func
    if path == "~":
        return name
    p = Path(path)
    try:
        rel = p.relative_to(ROOT)
        if rel.parts[0] == ".venv":
            rel = Path(*rel.parts[rel.parts.index("site-packages") + 1 :])
    except (ValueError, IndexError):
        rel = Path(*p.parts[-2:])
    return f"{rel}:{line}({name})"


def print_profile(stats: pstats.Stats, runs: int, top: int) -> None:
    raw = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for (_, _, tt, _, _) in raw.values())
    print(f"    profiled time {1000 * total / runs:.0f} ms per run (with profiling overhead)")
    own = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    print("    most own time:")
    for func, (_, nc, tt, _, _) in own:
        print(f"      {1000 * tt / runs:7.1f} ms {100 * tt / total:5.1f}%  {nc / runs:7.0f}×  {_where(func)}")
    ours = [
        (func, v) for func, v in raw.items()
        if func[0].startswith(str(ROOT)) and "/.venv/" not in func[0] and "/benchmarks/" not in func[0]
    ]
    ours.sort(key=lambda kv: kv[1][3], reverse=True)
    print("    project functions, cumulative:")
    for func, (_, nc, _, ct, _) in ours[:top]:
        print(f"      {1000 * ct / runs:7.1f} ms {100 * ct / total:5.1f}%  {nc / runs:7.0f}×  {_where(func)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="measured runs of each kind (7)")
    parser.add_argument("--pages", default="", help="comma-separated URL paths (default: all; Home is 'home')")
    parser.add_argument("--profile", action="store_true", help="run under cProfile and print the top costs")
    parser.add_argument("--server-arg", action="append", default=[], metavar="OPTION",
                        help="extra option for streamlit run, e.g. --server-arg=--runner.postScriptGC=false")
    parser.add_argument("--save", type=Path, metavar="DIR",
                        help="with --profile: also write each page's statistics to DIR/<page>.pstats")
    parser.add_argument("--top", type=int, default=10, help="functions listed per page with --profile")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("--runs must be at least 2")
    wanted = {("" if p == "home" else p) for p in args.pages.split(",") if p} or None
    pages = [p for p in PAGES if wanted is None or p.url_path in wanted]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="kllab-profile-") as tmp:
        work = Path(tmp)
        server = Server(work / "profile.out" if args.profile else None, work, args.server_arg)
        try:
            idle = idle_rate(server)
            results = []
            for page in pages:
                r = asyncio.run(profile_page(server, page.url_path, args.runs, idle))
                results.append(r)
                if args.profile:
                    print(f"/{page.url_path}  ({r['key']}, {args.runs} warm runs)")
                    print_profile(r["stats"], args.runs, args.top)
                    if args.save:
                        args.save.mkdir(parents=True, exist_ok=True)
                        r["stats"].dump_stats(str(args.save / f"{page.url_path or 'home'}.pstats"))
        finally:
            server.stop()
    if args.server_arg:
        print("\nstreamlit run " + " ".join(args.server_arg))
    print(f"\nserver CPU per run, ms (mean of {args.runs}; wall: median; idle {1000 * idle:.1f} ms/s subtracted)"
          + ("  [under cProfile]" if args.profile else ""))
    print(f"{'page':<20}{'key':<10}{'warm':>8}{'new':>8}{'open':>8}{'wall warm':>11}{'wall new':>10}  errors")
    for r in results:
        print(f"/{r['page']:<19}{r['key'][:9]:<10}{1000 * r['warm_cpu']:8.0f}{1000 * r['new_cpu']:8.0f}"
              f"{1000 * r['open_cpu']:8.0f}{1000 * r['warm_wall']:11.0f}{1000 * r['new_wall']:10.0f}"
              f"  {len(r['errors'])}{(': ' + r['errors'][0][:60]) if r['errors'] else ''}")
    mean = {k: statistics.fmean(r[k] for r in results) for k in ("warm_cpu", "new_cpu", "open_cpu")}
    # The classroom load: each student opens once and changes 5 times, to new values.
    classroom = (mean["open_cpu"] + 5 * mean["new_cpu"]) / 6
    print(f"{'mean over pages':<30}{1000 * mean['warm_cpu']:8.0f}{1000 * mean['new_cpu']:8.0f}"
          f"{1000 * mean['open_cpu']:8.0f}")
    print(f"classroom mix (1 open + 5 new values): {1000 * classroom:.0f} ms per run; "
          f"load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
