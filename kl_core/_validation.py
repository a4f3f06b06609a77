"""Argument checks shared by the core modules.

Each check raises ``ValueError`` with a message that names the offending
parameter, so that a user who mistypes an argument is told which one.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["as_float_array", "check_finite", "check_positive", "check_positive_int"]


def as_float_array(x: ArrayLike, name: str) -> np.ndarray:
    """Return ``x`` as a float64 array, or raise ``ValueError`` naming ``name``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {x!r:.60}") from exc
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    return arr


def check_finite(value: float, name: str) -> float:
    """Return ``value`` as a float if it is finite, else raise ``ValueError``."""
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number, got {value!r}") from exc
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def check_positive(value: float, name: str) -> float:
    """Return ``value`` as a float if it is finite and > 0, else raise ``ValueError``."""
    v = check_finite(value, name)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def check_positive_int(value: int, name: str) -> int:
    """Return ``value`` as an int if it is a whole number >= 1, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value!r}")
    return int(value)
