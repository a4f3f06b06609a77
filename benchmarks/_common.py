"""What the benchmarks share: the CPU they ran on, and timing a call.

Imported by the ``bench_*.py`` scripts, which put the repository on ``sys.path``
(it is not an installed package) before importing ``benchmarks._common``.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["cpu_model", "timed"]


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo``, else what :mod:`platform` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def timed(fn: Callable[[], object], repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of ``repeats`` calls of ``fn``, call by call."""
    walls, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return walls, cpus
