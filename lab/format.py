"""How the pages write numbers: one format for every metric and caption."""

from __future__ import annotations

import math

__all__ = ["number"]


def number(x: float) -> str:
    """4 significant digits; ``∞``/``−∞`` for infinities and ``—`` for an undefined value (NaN)."""
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.4g}"
