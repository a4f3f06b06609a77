"""charts.bregman: the reader's "your r" label stands where no line runs through it."""

from __future__ import annotations

import numpy as np
import pytest

from charts.bregman import _LABEL_WIDTH, _label_place, tangent_gap_chart
from kl_core.estimation.bregman import tangent_picture

GRID = np.linspace(0.01, 5.0, 400)


def _lines_in(place, r, grid):
    """The lines' values across the label's width on its side of r."""
    side, way, _ = place
    width = _LABEL_WIDTH * (grid.u.max() - grid.u.min())
    a, b = (r - width, r) if way == "left" else (r, r + width)
    inside = (grid.u >= a) & (grid.u <= b)
    return np.concatenate([grid.curve[inside], grid.tangent[inside]])


@pytest.mark.parametrize("name", ["kl_qp", "kl_pq", "pearson", "hellinger", "js"])
@pytest.mark.parametrize("r", [0.05, 0.3, 0.8, 1.0, 1.7, 2.5, 4.0, 4.99])
def test_the_label_is_over_both_lines_or_under_both_across_its_width(name, r):
    """At the default r = 2.5 the label sat on the segment's middle, and the tangent r − 1 struck it through."""
    grid, hand = tangent_picture(name, u=GRID), tangent_picture(name, u=[r])
    place = _label_place(grid, hand, float(GRID[0]), float(GRID[-1]))
    if place is None:
        return  # beside the segment's middle (nowhere free)
    side, _, y = place
    ends = [float(hand.curve[0]), float(hand.tangent[0])]
    values = _lines_in(place, r, grid)
    if side == "above":
        assert y == max(ends) and np.all(values <= y + 1e-9)
    else:
        assert y == min(ends) and np.all(values >= y - 1e-9)


def test_the_default_picture_puts_the_label_over_the_tangent_to_the_left_and_leaves_it_room():
    grid, hand = tangent_picture("kl_qp", u=GRID), tangent_picture("kl_qp", u=[2.5])
    assert _label_place(grid, hand, float(GRID[0]), float(GRID[-1]))[:2] == ("above", "left")
    spec = tangent_gap_chart(grid, hand=hand, curve_label="log r", tangent_label="r − 1", gap_label="gap").to_dict()
    label = spec["layer"][-1]["mark"]
    assert label["align"] == "right" and label["baseline"] == "bottom" and label["dy"] < -10  # two lines over it
    top = max(layer["encoding"]["y"]["scale"]["domain"][1] for layer in spec["layer"]
              if "scale" in layer.get("encoding", {}).get("y", {}))
    assert top >= 1.5 + 0.3 * (4.0 - np.log(0.01))  # room over the tangent's 1.5 at r = 2.5
    low = tangent_picture("kl_qp", u=[0.3])
    assert _label_place(grid, low, float(GRID[0]), float(GRID[-1]))[:2] == ("below", "right")
