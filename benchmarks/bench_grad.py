"""Benchmark of the ``grad`` command's computations (:mod:`kl_core.gradients.expected`, :mod:`kl_core.gradients.flow`).

Prints figures; asserts nothing.  Run from the repository root:

    uv run python benchmarks/bench_grad.py [--repeats N]

1. The whole ``grad`` table (:func:`kl_core.cli.grad.grad_report` without a
   reward: true gradients, both optimal λ, 6 basic rows and every crosswalk loss
   entry, with spreads and cosines) for K = 64 random logits, on-policy and with
   an older sampler, in-process (median of several runs; target < 50 ms).
   Also :func:`kl_core.gradients.expected.gradient_table` alone, at K = 6, 64 and 256.
2. The training picture for K = 6 (the page's default vocabulary) and K = 64:
   ``grad_report`` with ``--reward`` and ``--beta`` (every row's fixed point),
   and :func:`kl_core.gradients.flow.training_run` per option at K = 6 for the
   three options the page draws (k2, k3, k1).
3. ``python -m kl_core grad`` end to end in a subprocess (interpreter start and
   imports included).

Wall and CPU times are both printed: on a shared machine the CPU time is the
steadier figure.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository is not an installed package

from benchmarks._common import cpu_model, timed  # noqa: E402
from kl_core.cli.grad import grad_report  # noqa: E402
from kl_core.gradients.expected import gradient_table  # noqa: E402
from kl_core.gradients.flow import training_run  # noqa: E402


def _machine() -> None:
    print("== machine")
    print(f"cpu            {cpu_model()}")
    print(f"cores          {os.cpu_count()} (usable: {len(os.sched_getaffinity(0))})")
    print(f"python         {platform.python_version()}   numpy {np.__version__}")
    print(f"load average   {' '.join(f'{x:.2f}' for x in os.getloadavg())} (shared machines make timings noisy)")
    print()


def _timed(fn, repeats: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``repeats`` calls, after one warm-up call."""
    fn()
    walls, cpus = timed(fn, repeats)
    return 1e3 * statistics.median(walls), 1e3 * statistics.median(cpus)


def _spec(logits: np.ndarray) -> str:
    return "categorical(" + ",".join(f"{v:.6g}" for v in logits) + ")"


def _line(label: str, wall: float, cpu: float, target: str = "") -> None:
    print(f"{label:58s} {wall:9.1f} ms wall {cpu:9.1f} ms cpu  {target}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark of the grad command")
    ap.add_argument("--repeats", type=int, default=15, help="timed runs per figure (default 15)")
    args = ap.parse_args(argv)
    _machine()
    rng = np.random.default_rng(0)
    k = 64
    pol, ref, old = (rng.standard_normal(k) for _ in range(3))
    reward = rng.standard_normal(k)
    p, q, s = _spec(pol), _spec(ref), _spec(old)
    r_text = ",".join(f"{v:.6g}" for v in reward)

    print("== 1. the grad table, in-process (median)")
    _line("grad_report, K = 64, on-policy", *_timed(lambda: grad_report(p, q), args.repeats), "target < 50 ms")
    _line("grad_report, K = 64, --sampler π_old", *_timed(lambda: grad_report(p, q, s), args.repeats), "target < 50 ms")
    for kk in (6, 64, 256):
        a, b = rng.standard_normal(kk), rng.standard_normal(kk)
        _line(f"gradient_table, K = {kk}", *_timed(lambda a=a, b=b: gradient_table(a, b), args.repeats))
    print()

    print("== 2. the training picture (fixed points of every row)")
    p6, q6 = "categorical(1,0,-1,0.5,0,0)", "categorical(0,0,0,0,0,0)"
    r6 = "1,0.2,0.5,-0.3,0,0.8"
    few = max(3, args.repeats // 5)
    _line("grad_report --reward --beta 0.5, K = 6", *_timed(lambda: grad_report(p6, q6, reward=r6, beta=0.5), few))
    _line("grad_report --reward --beta 0.5, K = 64", *_timed(lambda: grad_report(p, q, reward=r_text, beta=0.5), 3))
    pol6, ref6 = np.array([1, 0, -1, 0.5, 0, 0.0]), np.zeros(6)
    rew6 = np.array([1, 0.2, 0.5, -0.3, 0, 0.8])
    for name in ("k2", "k3", "k1"):
        _line(f"training_run({name!r}), K = 6, 400 recorded steps",
              *_timed(lambda n=name: training_run(n, pol6, ref6, rew6, 0.5), args.repeats))
    print()

    print("== 3. end to end: python -m kl_core grad (subprocess, includes interpreter start)")
    cmd = [sys.executable, "-m", "kl_core", "grad", "--policy", p, "--ref", q, "--json"]
    walls = []
    for _ in range(max(3, args.repeats // 5)):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        walls.append(time.perf_counter() - t0)
    print(f"{'python -m kl_core grad --json, K = 64':58s} {1e3 * statistics.median(walls):9.1f} ms wall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
