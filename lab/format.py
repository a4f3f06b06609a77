"""How the pages write numbers: the formats of :mod:`charts.numbers`, one for every metric and caption."""

from __future__ import annotations

from charts.numbers import number, share

__all__ = ["number", "share"]
