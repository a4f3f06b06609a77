"""lab.grids: 1–2–5 steps, rounded log steps, and off-grid values kept exactly."""

from __future__ import annotations

import math

import pytest

from lab.grids import LOG_MANTISSAS, log_grid, one_two_five, with_value


def test_one_two_five_from_ten_to_the_limit():
    assert one_two_five(10, 10_000_000) == [
        10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000,
        100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000,
    ]


def test_one_two_five_keeps_limits_that_are_not_steps():
    assert one_two_five(3, 700) == [3, 5, 10, 20, 50, 100, 200, 500, 700]
    assert all(isinstance(v, int) for v in one_two_five(3, 700))


@pytest.mark.parametrize(("lo", "hi"), [(0, 10), (10, 5), (-1, 3)])
def test_one_two_five_refuses_bad_limits(lo, hi):
    with pytest.raises(ValueError, match="lo"):
        one_two_five(lo, hi)


def test_log_grid_is_rounded_sorted_and_evenly_spaced_in_log():
    grid = log_grid(0.1, 10)
    assert grid[0] == 0.1 and grid[-1] == 10.0 and grid == sorted(grid)
    assert len(grid) == 2 * len(LOG_MANTISSAS) + 1
    assert 1.5 in grid and 0.12 in grid  # exact decimals, not 0.12000000000000001
    ratios = [b / a for a, b in zip(grid, grid[1:], strict=False)]
    assert max(ratios) <= 1.34 and min(ratios) >= 1.2  # about a quarter-decade-per-step grid


def test_log_grid_refuses_bad_limits():
    with pytest.raises(ValueError, match="lo"):
        log_grid(0.0, 1.0)


def test_with_value_adds_an_off_grid_value_exactly_and_in_order():
    grid = one_two_five(10, 1000)
    assert with_value(grid, 1234) == [*grid, 1234]
    assert with_value(grid, 15) == [10, 15, 20, 50, 100, 200, 500, 1000]
    assert with_value(log_grid(0.1, 10), 1e-5)[0] == 1e-5  # a new end
    assert with_value(grid, None) == grid


def test_with_value_replaces_a_step_equal_up_to_rounding():
    grid = [0.1, 0.12, 0.15]
    value = 0.12 * (1 + 1e-13)  # what a float computation may give for 0.12
    out = with_value(grid, value)
    assert out == [0.1, value, 0.15]  # the value itself, so the slider shows exactly it
    assert value != 0.12 and math.isclose(value, 0.12)
