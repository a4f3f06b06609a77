"""Docstring sections the gradient modules and those above them share, written once.

Filled into a docstring's ``%(name)s`` line by :func:`kl_core._docfill.docfill`.
"""

from __future__ import annotations

__all__ = ["SECTIONS", "TANG_MUNOS"]

#: The source of the gradient pitfalls: which gradient each estimator gives as a loss or a reward.
TANG_MUNOS = "Y. Tang and R. Munos, arXiv:2506.09477 (2025)."

SECTIONS = {
    "tang_munos_references": f"References\n----------\n{TANG_MUNOS}",
}
