"""Benchmark of the config doctor (:mod:`kl_core.doctor.diagnosis`).

Prints figures; asserts nothing.  Run from the repository root:

    uv run python benchmarks/bench_doctor.py [--repeats N]

1. :func:`kl_core.doctor.diagnosis.diagnose` on every real config in ``data/doctor_examples``
   (read, detect, resolve defaults, classify gradients, search and check every
   fix), in-process after one warm-up call: median CPU and wall time.
2. The worst inputs the size limit allows (256 KiB): a script of 20,000 Hydra
   overrides with shell defaults, 30,000 flags, a YAML of 20,000 keys, a Python
   call with 30,000 keyword arguments, 65,000 quoted words.  One run each.
3. ``python -m kl_core doctor`` end to end in a subprocess (interpreter start and
   imports included), on one fixture.

Wall and CPU times are both printed: on a shared machine the CPU time is the
steadier figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository is not an installed package

from benchmarks._common import timed  # noqa: E402
from kl_core.doctor.diagnosis import UnreadableInput, diagnose  # noqa: E402
from kl_core.doctor.parse import MAX_BYTES  # noqa: E402

DATA = ROOT / "data" / "doctor_examples"


def _time(fn, repeats: int) -> tuple[float, float]:
    """Median CPU and wall seconds of ``repeats`` calls."""
    wall, cpu = timed(fn, repeats)
    return statistics.median(cpu), statistics.median(wall)


def _worst_inputs() -> dict[str, str]:
    n = MAX_BYTES - 100
    return {
        "20,000 Hydra overrides": ("python3 -m verl.trainer.main_ppo " + " \\\n ".join(
            f"actor_rollout_ref.actor.x{i}=${{V{i}:-{i}}}" for i in range(20000)))[:n],
        "30,000 flags": ("python3 -m openrlhf.cli.train_ppo_ray " + " ".join(
            f"--algo.kl.x{i} {i}" for i in range(30000)))[:n],
        "YAML of 20,000 keys": ("actor_rollout_ref:\n  actor:\n" + "\n".join(
            f"    k{i}: {i}" for i in range(20000)))[:n],
        "30,000 keyword arguments": ("GRPOConfig(" + ", ".join(f"k{i}={i}" for i in range(30000)))[: n - 2] + ")",
        "65,000 quoted words": "'a' " * (n // 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")

    c0, w0 = time.process_time(), time.perf_counter()
    diagnose((DATA / "verl_grpo_qwen3_8b.sh").read_bytes())
    print(f"first call (imports numpy/scipy and the gradients core): {time.process_time() - c0:.2f} s CPU, "
          f"{time.perf_counter() - w0:.2f} s wall\n")

    print(f"1. diagnose() on the real configs, median of {args.repeats}:")
    for path in sorted(DATA.iterdir()):
        data = path.read_bytes()
        cpu, wall = _time(lambda data=data, name=path.name: diagnose(data, filename=name), args.repeats)
        d = diagnose(data, filename=path.name)
        print(f"   {path.name:34s} {1e3 * cpu:7.1f} ms CPU {1e3 * wall:7.1f} ms wall"
              f"   ({len(d.kl_uses)} KL terms, {len(d.warnings)} warnings)")

    print("\n2. 256 KiB inputs, one run each:")
    for name, text in _worst_inputs().items():
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            d = diagnose(text)
            what = f"{len(d.unrecognised)} unknown keys"
        except UnreadableInput as exc:
            what = f"unreadable: {str(exc)[:50]}"
        print(f"   {name:26s} {len(text.encode()) / 1024:4.0f} KiB {time.process_time() - c0:6.2f} s CPU "
              f"{time.perf_counter() - w0:6.2f} s wall   {what}")

    print("\n3. python -m kl_core doctor, whole process:")
    cmd = [sys.executable, "-m", "kl_core", "doctor", str(DATA / "verl_grpo_qwen3_8b.sh"), "--json"]
    walls = []
    for _ in range(3):
        w0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        walls.append(time.perf_counter() - w0)
    print(f"   median of 3: {statistics.median(walls):.2f} s wall")


if __name__ == "__main__":
    main()
