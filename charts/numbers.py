"""How the app writes numbers: one format for every metric, caption and chart label.

Here, below ``lab``, so that charts use the same formats (``lab.format`` re-exports them).
"""

from __future__ import annotations

import math

__all__ = ["number", "share"]


def number(x: float) -> str:
    """4 significant digits; ``∞``/``−∞`` for infinities and ``—`` for an undefined value (NaN)."""
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.4g}"


def share(x: float) -> str:
    """A share as a percentage: ``12.3%``; under 0.1 % with 2 significant digits (``0.037%``), so a
    share that is not zero never prints as ``0.0%``."""
    return f"{x:.1%}" if x == 0.0 or not math.isfinite(x) or abs(x) >= 0.001 else f"{100 * x:.2g}%"
