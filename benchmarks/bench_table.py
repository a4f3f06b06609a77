"""Benchmark of the ``table`` command and of :func:`kl_core.montecarlo.simulate`.

Prints figures; asserts nothing.  Run from the repository root:

    uv run python benchmarks/bench_table.py [--quick]

1. Time of the 10M-sample ``table`` computation for q = N(0,1), p = N(0.1,1)
   (Monte Carlo of k1, k2, k3, k_lambda, k3_pq plus the exact columns) against
   ``np.random.default_rng(0).standard_normal(10_000_000)`` timed in the same
   process, and their ratio (target ≤ 2).
2. Peak memory of that table: ``python -m kl_core table`` in a subprocess,
   read with ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``; its output (the
   full 10M reproduction of Schulman's first table) is printed.  Also the
   tracemalloc peak of the numpy allocations of the same computation in-process.
3. Time of ``table --exact-only`` for the Gaussian pair (median of several runs),
   in-process and end to end.
4. Peak memory of ``simulate`` at n·repeats = 1e8 (n = 1e6, repeats = 100), in a
   fresh subprocess (target < 300 MB).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository is not an installed package

from kl_core import cli  # noqa: E402
from kl_core.distributions import Gaussian  # noqa: E402
from kl_core.montecarlo import simulate  # noqa: E402
from kl_core.published import SCHULMAN_2020  # noqa: E402

N_TABLE = 10_000_000


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _machine() -> None:
    print("== machine")
    print(f"cpu            {_cpu_model()}")
    print(f"cores          {os.cpu_count()} (usable: {len(os.sched_getaffinity(0))})")
    print(f"python         {platform.python_version()}   numpy {np.__version__}")
    print(
        f"load average   {' '.join(f'{x:.2f}' for x in os.getloadavg())} (shared machines make timings noisy)"
    )
    print()


def _timed(fn, repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of ``repeats`` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return walls, cpus


def _child_maxrss_mb(argv: list[str]) -> tuple[float, str, float]:
    """Run a child to completion; its ru_maxrss (RUSAGE_CHILDREN), stdout, wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far (kB on Linux),
    # so this is exact for the first child and a lower bound afterwards.
    return max(after, before) / 1024.0, proc.stdout, wall


def _draw_1e7() -> None:
    np.random.default_rng(0).standard_normal(N_TABLE)


def bench_table_time(repeats: int, cold: float) -> None:
    q, p = Gaussian(0, 1), Gaussian(0.1, 1)
    cli.table_rows(q, p, 1000)  # warm imports and caches
    base_w, _ = _timed(_draw_1e7, repeats)
    table_w, table_c = _timed(lambda: cli.table_rows(q, p, N_TABLE), repeats)
    one_w, one_c = _timed(lambda: simulate(q, p, N_TABLE, workers=1), repeats)
    warm, table, one = (statistics.median(x) for x in (base_w, table_w, one_w))
    runs = lambda xs: ", ".join(f"{x:.3f}" for x in xs)  # noqa: E731
    print(f"== 1. time of the 10M table (median of {repeats} runs)")
    print(
        f"standard_normal(1e7), first call in this process   {cold:.3f} s  (fresh pages, as in a CLI run)"
    )
    print(
        f"standard_normal(1e7), later calls                  {warm:.3f} s  (runs: {runs(base_w)})"
    )
    print(
        f"table computation, 1e7 samples, default threads    {table:.3f} s  (runs: {runs(table_w)};"
        f" CPU {statistics.median(table_c):.3f} s)"
    )
    print(
        f"  ratio to the first call {table / cold:.2f}, to later calls {table / warm:.2f}   (target ≤ 2)"
    )
    print(
        f"simulate alone, one thread                         {one:.3f} s  (CPU {statistics.median(one_c):.3f} s;"
        f" ratios {one / cold:.2f} / {one / warm:.2f})"
    )
    print()


def bench_table_memory() -> None:
    print("== 2. the full 10M reproduction of Schulman's first table, and its peak memory")
    rss, out, wall = _child_maxrss_mb([sys.executable, "-m", "kl_core", "table"])
    print(textwrap.indent(out.rstrip(), "    "))
    print(
        f"subprocess `python -m kl_core table`: ru_maxrss {rss:.0f} MB, wall {wall:.2f} s (imports included)"
    )
    q, p = SCHULMAN_2020[0].q, SCHULMAN_2020[0].p
    tracemalloc.start()
    cli.table_rows(q, p, N_TABLE)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"tracemalloc peak of the same computation in-process: {peak / 1e6:.1f} MB")
    print()


def bench_exact_only(repeats: int) -> None:
    q, p = Gaussian(0, 1), Gaussian(0.1, 1)
    walls, _ = _timed(lambda: cli.table_rows(q, p, N_TABLE, exact_only=True), repeats)
    ends = [
        _child_maxrss_mb([sys.executable, "-m", "kl_core", "table", "--exact-only", "--json"])[2]
        for _ in range(3)
    ]
    print("== 3. table --exact-only, q = N(0,1), p = N(0.1,1)")
    print(f"in-process, median of {repeats}: {1000 * statistics.median(walls):.1f} ms")
    print(
        f"end to end `python -m kl_core table --exact-only`, median of 3: {1000 * statistics.median(ends):.0f} ms"
    )
    print()


_CHILD_1E8 = """
import sys, time, tracemalloc
sys.path.insert(0, {root!r})
from kl_core.montecarlo import simulate
from kl_core.distributions import Gaussian


def hwm_mb():
    # VmHWM is this process's own peak RSS; ru_maxrss would also count the
    # parent's RSS at the moment it spawned us.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024


q, p = Gaussian(0, 1), Gaussian(0.1, 1)
simulate(q, p, 1000)
base = hwm_mb()
if {traced}:
    tracemalloc.start()
t0 = time.perf_counter()
sim = simulate(q, p, n={n}, repeats={repeats})
wall = time.perf_counter() - t0
peak = tracemalloc.get_traced_memory()[1] / 1e6 if {traced} else float("nan")
s = sim["k3"]
print(f"{{hwm_mb():.0f}} {{base:.0f}} {{peak:.1f}} {{wall:.1f}} {{s.bias_over_true:+.5f}} {{s.std_over_true:.4f}}")
"""


def bench_1e8(n: int, repeats: int) -> None:
    print(
        f"== 4. simulate() at n·repeats = {n * repeats:.0e} (n = {n:.0e}, repeats = {repeats}), five estimators"
    )
    for traced in (False, True):
        code = _CHILD_1E8.format(root=str(ROOT), n=n, repeats=repeats, traced=traced)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        rss, base, peak, wall, bias, std = out.split()
        if not traced:
            print(
                f"peak RSS (VmHWM) {rss} MB, of which {base} MB is the interpreter with numpy and scipy;"
            )
            print(f"  wall {wall} s   (target < 300 MB)")
            print(f"  k3 over all {n * repeats:.0e} samples: bias/true {bias}, stdev/true {std}")
        else:
            print(
                f"tracemalloc peak of the numpy allocations: {peak} MB (separate run, wall {wall} s)"
            )
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="fewer repeats, 1e7 instead of 1e8 in part 4"
    )
    args = ap.parse_args()
    reps = 3 if args.quick else 5
    # The first 80 MB draw of a process pays for fresh pages, as a CLI run does;
    # later ones reuse the allocator's memory.  Time it before anything else.
    cold = _timed(_draw_1e7, 1)[0][0]
    _machine()
    bench_table_memory()  # first child: RUSAGE_CHILDREN's maximum is exactly its own
    bench_table_time(reps, cold)
    bench_exact_only(9)
    bench_1e8(1_000_000, 10 if args.quick else 100)


if __name__ == "__main__":
    main()
