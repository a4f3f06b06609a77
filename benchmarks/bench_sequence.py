"""Benchmark of the sequence tools: exact dynamic programmes and Monte Carlo of the six estimators.

Prints figures; asserts nothing.  Run from the repository root:

    uv run python benchmarks/bench_sequence.py [--quick]

1. Exact rows (:func:`kl_core.sequences.estimators.exact_moments`: all six estimators'
   means and standard deviations, both KL directions, per-position KL) for the
   drift family at K = 50, T = 256 (target < 100 ms), median of several runs;
   also :func:`exact_curves` (every T at once), and larger K and T for scale.
2. Monte Carlo (:func:`kl_core.sequences.montecarlo.simulate_sequences`) of
   10^5 sequences of length 256 at K = 50 (target < 2 s), with the tracemalloc
   peak of its numpy allocations.
3. The whole command ``python -m kl_core sequence --K 50 --T 256 --n 100000
   --json`` in a subprocess: wall time and peak RSS of the process, read with
   ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` (target < 300 MB), beside
   the start-up time of ``python -m kl_core --help``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository is not an installed package

from benchmarks._common import cpu_model, timed  # noqa: E402
from kl_core.sequences.estimators import exact_curves, exact_moments  # noqa: E402
from kl_core.sequences.markov import drift_pair  # noqa: E402
from kl_core.sequences.montecarlo import simulate_sequences  # noqa: E402


def _median_ms(fn, repeats: int) -> tuple[float, float]:
    times, _ = timed(fn, repeats)
    return 1e3 * statistics.median(times), 1e3 * min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    reps = 3 if args.quick else 15

    print("== machine")
    print(f"cpu            {cpu_model()}")
    print(f"cores          {os.cpu_count()}")
    print(f"python, numpy  {platform.python_version()}, {np.__version__}")
    print(f"load average   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    print("\n== 1. exact rows (drift family, drift 0.5, every transition)")
    for k, t in ((50, 256), (8, 256), (256, 256), (50, 4096)):
        pol, ref = drift_pair(k, 0.5)
        med, best = _median_ms(lambda p=pol, r=ref, t=t: exact_moments(p, r, t), reps)
        target = "   (target < 100 ms)" if (k, t) == (50, 256) else ""
        print(
            f"exact_moments  K = {k:3d}, T = {t:4d}: median {med:7.1f} ms, best {best:7.1f} ms{target}"
        )
    pol, ref = drift_pair(50, 0.5)
    med, best = _median_ms(lambda: exact_curves(pol, ref, 256), reps)
    print(f"exact_curves   K =  50, every T <= 256: median {med:7.1f} ms (one pass for all T)")
    t0 = time.perf_counter()
    drift_pair(50, 0.5)
    print(f"drift_pair(50) build: {1e3 * (time.perf_counter() - t0):.1f} ms")

    print("\n== 2. Monte Carlo, K = 50, T = 256, n = 1e5 sequences (2.56e7 tokens)")
    runs = []
    for _ in range(1 if args.quick else 3):
        t0 = time.perf_counter()
        simulate_sequences(pol, ref, 256, 100_000, seed=0)
        runs.append(time.perf_counter() - t0)
    print(
        f"simulate_sequences: median {statistics.median(runs):.2f} s, best {min(runs):.2f} s "
        "(target < 2 s)"
    )
    tracemalloc.start()
    simulate_sequences(pol, ref, 256, 100_000, seed=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"tracemalloc peak of its allocations: {peak / 2**20:.1f} MB")

    print("\n== 3. the whole command in a subprocess")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kl_core", "--help"], cwd=ROOT, capture_output=True)
    print(f"startup alone (python -m kl_core --help): {time.perf_counter() - t0:.2f} s")
    cmd = [sys.executable, "-m", "kl_core", "sequence", "--K", "50", "--T", "256"]
    cmd += ["--n", "100000", "--json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(" ".join(cmd[1:]))
    print(
        f"wall {wall:.2f} s, peak RSS {rss:.0f} MB (target < 300 MB), {len(proc.stdout):,} bytes of JSON"
    )


if __name__ == "__main__":
    main()
