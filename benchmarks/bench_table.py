"""Benchmark of the ``table`` command, whole process and in-process.

Prints figures; asserts nothing.  Run from the repository root:

    uv run python benchmarks/bench_table.py [--quick] [--runs N] [--keep-env]

Every child process is started with this script's own interpreter
(``sys.executable``, the project's ``.venv/bin/python`` under ``uv run``), not
through ``uv run``, so uv's own start-up is not in any figure.

1. The full 10M reproduction of Schulman's first table, as printed by
   ``python -m kl_core table``.
2. Whole process: ``python -m kl_core table`` (q = N(0,1), p = N(0.1,1),
   10 million samples, five estimators, Monte Carlo beside exact) against a
   plain numpy transcription of the blog's torch script (one pair, 10 million
   samples, k1/k2/k3 mean and std; float64, numpy's default), run as a whole
   process in the same benchmark.  The two alternate, run after run, so both
   see the same load; the ratio is taken run by run, and its median is
   reported with the range (target ≤ 0.6).  Peak memory is each child's own
   ``ru_maxrss`` (from ``os.wait4``; target < 150 MB for the table).
3. Whole process: ``python -m kl_core --help`` against
   ``python -c "import numpy"``, paired the same way (target ≤ 1.5).
4. In-process: the 10M ``table`` computation (``kl_core.cli.table.table_rows``)
   against ``np.random.default_rng(0).standard_normal(10_000_000)``, and
   ``simulate`` on one thread.
5. ``table --exact-only`` for the Gaussian pair, in-process and end to end.
6. Peak memory of ``simulate`` at n·repeats = 1e8 (n = 1e6, repeats = 100),
   in a fresh subprocess (target < 300 MB).

Bytecode: a normal install compiles each module once and reuses the ``.pyc``.
With ``PYTHONDONTWRITEBYTECODE`` set and no ``.pyc`` on disk, every run
compiles numpy from source, which about doubles its import time.  So the
children run without that variable, as a user's shell has it; ``--keep-env``
measures with the caller's environment as it is.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository is not an installed package

from benchmarks._common import cpu_model, timed  # noqa: E402
from kl_core.cli import table as cli  # noqa: E402
from kl_core.estimation.distributions import Gaussian  # noqa: E402
from kl_core.estimation.montecarlo import simulate  # noqa: E402

N_TABLE = 10_000_000

# The blog's script (torch.distributions), transcribed to plain numpy:
#   p = dis.Normal(loc=0, scale=1); q = dis.Normal(loc=0.1, scale=1)
#   x = q.sample(sample_shape=(10_000_000,)); truekl = dis.kl_divergence(p, q)
#   logr = p.log_prob(x) - q.log_prob(x)
#   k1 = -logr; k2 = logr ** 2 / 2; k3 = (logr.exp() - 1) - logr
#   for k in (k1, k2, k3): print((k.mean() - truekl) / truekl, k.std() / truekl)
BLOG_NUMPY = '''
import math
import numpy as np


def log_prob(x, loc, scale):  # torch.distributions.Normal.log_prob
    return -((x - loc) ** 2) / (2 * scale**2) - math.log(scale) - math.log(math.sqrt(2 * math.pi))


p_loc, p_scale, q_loc, q_scale = 0.0, 1.0, 0.1, 1.0
x = np.random.default_rng(0).normal(q_loc, q_scale, size=10_000_000)
var_ratio = (p_scale / q_scale) ** 2  # torch's kl_divergence(Normal, Normal)
truekl = 0.5 * (var_ratio + ((p_loc - q_loc) / q_scale) ** 2 - 1 - math.log(var_ratio))
print("true", truekl)
logr = log_prob(x, p_loc, p_scale) - log_prob(x, q_loc, q_scale)
k1 = -logr
k2 = logr**2 / 2
k3 = (np.exp(logr) - 1) - logr
for k in (k1, k2, k3):
    print((k.mean() - truekl) / truekl, k.std(ddof=1) / truekl)
'''

TABLE = [sys.executable, "-m", "kl_core", "table"]
BLOG = [sys.executable, "-c", BLOG_NUMPY]
HELP = [sys.executable, "-m", "kl_core", "--help"]
IMPORT_NUMPY = [sys.executable, "-c", "import numpy"]


# ------------------------------------------------------------ helpers


def _child_env(keep: bool) -> dict[str, str]:
    env = dict(os.environ)
    if not keep:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# A small launcher forks and execs each timed command and reports its wall
# time and the child's own resource usage.  Spawned straight from this (large)
# process, a child's ru_maxrss would start at this process's peak RSS: Linux
# carries the peak of the memory image a process execs from into its ru_maxrss.
_LAUNCHER = """
import json, os, sys, time
argv = json.loads(sys.argv[1])
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
report = [wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)]
print("LAUNCHER", json.dumps(report), file=sys.stderr)
"""


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """Run a command to completion: its wall time, CPU time (user + sys), own peak RSS (MB), stdout."""
    proc = subprocess.run(
        [sys.executable, "-S", "-c", _LAUNCHER, json.dumps(argv)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    *err, last = proc.stderr.splitlines() or [""]
    if not last.startswith("LAUNCHER "):
        raise RuntimeError(f"launcher failed: {proc.stderr.strip()[-500:]}")
    wall, cpu, rss, code = json.loads(last.removeprefix("LAUNCHER "))
    if code != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} exited {code}: {' '.join(err)[-500:]}")
    return wall, cpu, rss, proc.stdout


def _spread(xs: list[float], scale: float = 1.0, fmt: str = ".3f") -> str:
    xs = [x * scale for x in xs]
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}–{max(xs):{fmt}})"


def _paired(
    argv_a: list[str], argv_b: list[str], runs: int, env: dict[str, str]
) -> tuple[list[tuple[float, float, float]], list[tuple[float, float, float]]]:
    """Alternate two commands ``runs`` times after one untimed run each (caches, .pyc)."""
    _run(argv_a, env)
    _run(argv_b, env)
    a, b = [], []
    for i in range(runs):
        # alternate which goes first, so neither always follows the other
        order = ((a, argv_a), (b, argv_b)) if i % 2 == 0 else ((b, argv_b), (a, argv_a))
        for store, argv in order:
            store.append(_run(argv, env)[:3])
    return a, b


def _report_pair(
    title: str,
    name_a: str,
    a: list[tuple[float, float, float]],
    name_b: str,
    b: list[tuple[float, float, float]],
    target: str,
) -> None:
    width = max(len(name_a), len(name_b))
    print(f"{'':{width}}  wall s, median (min–max)   CPU s, median        peak RSS MB")
    for name, rows in ((name_a, a), (name_b, b)):
        walls, cpus, rss = zip(*rows, strict=True)
        print(
            f"{name:{width}}  {_spread(list(walls)):26}  {statistics.median(cpus):.3f}"
            f"{'':12}{max(rss):.0f}"
        )
    ratios = [ra[0] / rb[0] for ra, rb in zip(a, b, strict=True)]
    cpu_ratio = statistics.median(ra[1] for ra in a) / statistics.median(rb[1] for rb in b)
    print(
        f"{title}: wall ratio run by run, median {_spread(ratios, fmt='.2f')};"
        f" ratio of the medians {statistics.median(r[0] for r in a) / statistics.median(r[0] for r in b):.2f};"
        f" CPU ratio {cpu_ratio:.2f}   (target {target})"
    )


# ------------------------------------------------------------ sections


def machine(env: dict[str, str]) -> None:
    cached = "PYTHONDONTWRITEBYTECODE" not in env
    print("== machine")
    print(f"date           {datetime.date.today().isoformat()}")
    print(f"cpu            {cpu_model()}")
    print(f"cores          {os.cpu_count()} (usable: {len(os.sched_getaffinity(0))})")
    print(f"python         {platform.python_version()} ({sys.executable})   numpy {np.__version__}")
    print(
        f"bytecode       {'cached (.pyc written and reused)' if cached else 'PYTHONDONTWRITEBYTECODE is set: children may compile every module'}"
    )
    print(
        f"load average   {' '.join(f'{x:.2f}' for x in os.getloadavg())} (shared machines make timings noisy)"
    )
    print()


def full_table(env: dict[str, str]) -> None:
    print("== 1. the full 10M reproduction of Schulman's first table")
    wall, _, rss, out = _run(TABLE, env)
    print(textwrap.indent(out.rstrip(), "    "))
    print(f"(`python -m kl_core table`: {wall:.2f} s, peak RSS {rss:.0f} MB)")
    print()


def whole_process(runs: int, env: dict[str, str], parts: set[int]) -> None:
    if 2 in parts:
        print(f"== 2. whole process, {runs} alternating runs each")
        print("table = python -m kl_core table; blog = the blog's script in plain numpy")
        a, b = _paired(TABLE, BLOG, runs, env)
        _report_pair("table / blog", "table", a, "blog", b, "≤ 0.6")
        print(f"peak RSS of the table: {max(r[2] for r in a):.0f} MB (target < 150 MB)")
        print()
    if 3 in parts:
        print(f"== 3. start-up, whole process, {2 * runs} alternating runs each")
        a, b = _paired(HELP, IMPORT_NUMPY, 2 * runs, env)
        _report_pair("--help / import numpy", "kl_core --help", a, "import numpy", b, "≤ 1.5")
        print()


def in_process(repeats: int, cold: float) -> None:
    q, p = Gaussian(0, 1), Gaussian(0.1, 1)
    cli.table_rows(q, p, 1000)  # warm imports and caches
    draw = lambda: np.random.default_rng(0).standard_normal(N_TABLE)  # noqa: E731
    base_w, _ = timed(draw, repeats)
    table_w, table_c = timed(lambda: cli.table_rows(q, p, N_TABLE), repeats)
    one_w, one_c = timed(
        lambda: simulate(q, p, N_TABLE, keys=cli.TABLE_KEYS, workers=1, percentiles=False),
        repeats,
    )
    warm, table, one = (statistics.median(x) for x in (base_w, table_w, one_w))
    print(f"== 4. in-process: the 10M table computation (median of {repeats} runs)")
    print(f"standard_normal(1e7), first call in this process   {cold:.3f} s")
    print(f"standard_normal(1e7), later calls                  {_spread(base_w)} s")
    print(
        f"table_rows, 1e7 samples, default threads          {_spread(table_w)} s"
        f"  (CPU {statistics.median(table_c):.3f} s)"
    )
    print(f"  ratio to the first draw {table / cold:.2f}, to later draws {table / warm:.2f}")
    print(
        f"simulate for the table, one thread               {_spread(one_w)} s"
        f"  (CPU {statistics.median(one_c):.3f} s)"
    )
    tracemalloc.start()
    cli.table_rows(q, p, N_TABLE)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"tracemalloc peak of table_rows: {peak / 1e6:.1f} MB")
    print()


def exact_only(repeats: int, env: dict[str, str]) -> None:
    q, p = Gaussian(0, 1), Gaussian(0.1, 1)
    walls, _ = timed(lambda: cli.table_rows(q, p, N_TABLE, exact_only=True), repeats)
    ends = [_run([*TABLE, "--exact-only", "--json"], env)[0] for _ in range(5)]
    print("== 5. table --exact-only, q = N(0,1), p = N(0.1,1)")
    print(f"in-process, median of {repeats}: {1000 * statistics.median(walls):.1f} ms")
    print(f"whole process, median of 5: {_spread(ends, 1000, '.0f')} ms")
    print()


_CHILD_1E8 = """
import sys, time, tracemalloc
sys.path.insert(0, {root!r})
from kl_core.estimation.montecarlo import simulate
from kl_core.estimation.distributions import Gaussian


def hwm_mb():
    # VmHWM is this process's own peak RSS.
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


def bench_1e8(n: int, repeats: int, env: dict[str, str]) -> None:
    print(
        f"== 6. simulate() at n·repeats = {n * repeats:.0e} (n = {n:.0e}, repeats = {repeats}),"
        " five estimators, percentiles on"
    )
    for traced in (False, True):
        code = _CHILD_1E8.format(root=str(ROOT), n=n, repeats=repeats, traced=traced)
        out = _run([sys.executable, "-c", code], env)[3]
        rss, base, peak, wall, bias, std = out.split()
        if not traced:
            print(f"peak RSS (VmHWM) {rss} MB, of which {base} MB is the interpreter with numpy;")
            print(f"  wall {wall} s   (target < 300 MB)")
            print(f"  k3 over all {n * repeats:.0e} samples: bias/true {bias}, stdev/true {std}")
        else:
            print(
                f"tracemalloc peak of the numpy allocations: {peak} MB (separate run, wall {wall} s)"
            )
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs; 1e7 instead of 1e8 in part 6")
    ap.add_argument("--runs", type=int, default=None, help="alternating runs in parts 2-3")
    ap.add_argument(
        "--keep-env", action="store_true", help="children keep PYTHONDONTWRITEBYTECODE if set"
    )
    ap.add_argument(
        "--parts", default="1,2,3,4,5,6", help="which parts to run, e.g. 2 (default: all)"
    )
    args = ap.parse_args()
    parts = {int(x) for x in args.parts.split(",")}
    runs = args.runs or (5 if args.quick else 11)
    reps = 3 if args.quick else 5
    env = _child_env(args.keep_env)
    # The first 80 MB draw of a process pays for fresh pages, as a CLI run does;
    # later ones reuse the allocator's memory.  Time it before anything else.
    cold = timed(lambda: np.random.default_rng(0).standard_normal(N_TABLE), 1)[0][0]
    machine(env)
    if 1 in parts:
        full_table(env)
    if 2 in parts or 3 in parts:
        whole_process(runs, env, parts)
    if 4 in parts:
        in_process(reps, cold)
    if 5 in parts:
        exact_only(9, env)
    if 6 in parts:
        bench_1e8(1_000_000, 10 if args.quick else 100, env)


if __name__ == "__main__":
    main()
