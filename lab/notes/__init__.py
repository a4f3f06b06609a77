"""What each page says about its numbers: one module per page (no streamlit).

Warnings built from the core's notes, captions chosen by the numbers, and the
rows of the pages' tables are functions here, with tests in ``tests/lab/``, so
that a page file reads as its story: the question, the widgets, the core
calls, the charts and the prose.  Every user-visible sentence is whole, with
named placeholders (``"{n} draws".format(n=n)``), ready for translation.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Note"]


@dataclass(frozen=True)
class Note:
    """A message box above the charts: ``kind`` is ``"warning"`` or ``"info"``; ``icon`` a Material icon."""

    kind: str
    text: str
    icon: str
