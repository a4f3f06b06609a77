"""Slider grids: the 1–2–5 steps of a sample size and rounded log-scale steps of a scale.

Pure functions (no streamlit), used by :mod:`lab.widgets` and :mod:`lab.spec_params`.
A value that a link or a typed spec brings from off the grid is added to it
(:func:`with_value`), so the slider shows that value exactly instead of
moving it to the nearest step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["LOG_MANTISSAS", "log_grid", "one_two_five", "with_value"]

#: Steps per decade of a log-scale parameter slider (σ, scale, df): about 26% apart,
#: with the values a teacher types (1.5, 2, 2.5, 3, 5) on the grid.
LOG_MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def _decades(lo: float, hi: float) -> range:
    return range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)


def _within(values: list[float], lo: float, hi: float) -> list[float]:
    # Rounded to 12 digits: 10**-1 * 1.2 is 0.12000000000000001 otherwise.
    out = sorted({round(float(v), 12) for v in values})
    return [v for v in out if lo * (1 - 1e-12) <= v <= hi * (1 + 1e-12)]


def one_two_five(lo: int, hi: int) -> list[int]:
    """The 1–2–5 sequence from ``lo`` to ``hi``: 10, 20, 50, 100, 200, … (both ends included).

    ``lo`` and ``hi`` are added if they are not themselves 1–2–5 numbers, so the
    slider always reaches the page's limits.
    """
    if not 1 <= lo <= hi:
        raise ValueError(f"need 1 <= lo <= hi, got lo={lo!r}, hi={hi!r}")
    steps = [m * 10**d for d in _decades(lo, hi) for m in (1, 2, 5)]
    return sorted({int(lo), int(hi), *(int(s) for s in steps if lo <= s <= hi)})


def log_grid(lo: float, hi: float) -> list[float]:
    """Rounded log-scale steps from ``lo`` to ``hi`` (:data:`LOG_MANTISSAS` per decade, ends included)."""
    if not 0 < lo < hi:
        raise ValueError(f"need 0 < lo < hi, got lo={lo!r}, hi={hi!r}")
    steps = [m * 10.0**d for d in _decades(lo, hi) for m in LOG_MANTISSAS]
    return _within([lo, hi, *steps], lo, hi)


def with_value(grid: Sequence[float], value: float | None) -> list[float]:
    """``grid`` with ``value`` among its steps, exactly (a step within 1e-12 of it is replaced).

    An off-grid value from a link (``n=1234``) or a typed spec (σ = 1e-5) keeps
    its exact value: it becomes one more step, or a new end of the slider.
    """
    if value is None:
        return list(grid)
    return sorted([v for v in grid if not math.isclose(v, value, rel_tol=1e-12)] + [value])
