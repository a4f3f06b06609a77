"""How the app writes numbers: one format for every metric, caption and chart label.

Here, below ``lab``, so that charts use the same formats (``lab.format`` re-exports them).
``share`` and ``from_log`` are the core's (:mod:`kl_core.numbers`): the CLI prints the same text.
"""

from __future__ import annotations

import math

from kl_core.numbers import from_log, lam_text, probability_text, share

__all__ = ["from_log", "lam_text", "number", "probability_text", "share"]


def number(x: float) -> str:
    """4 significant digits; ``∞``/``−∞`` for infinities and ``—`` for an undefined value (NaN)."""
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.4g}"
