"""charts.vega: the helpers every chart builder shares."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(("lo", "hi"), [(-1.0, 3.0), (-3.0, 3.0), (-0.5, 2.5), (-1e-3, 4e-3), (-2.4, 2.4),
                                         (-0.97, 3.13), (-250.0, 17.0)])
def test_ticks_through_zero_hold_zero_and_stay_few(lo, hi):
    """A review: Vega's 0.2-apart ticks, thinned to every other label, left out the 0 of the Control variates λ axis
    (λ = 0 is k1) and the f-divergences θ axes at 1280 px."""
    from charts.vega import ticks_through_zero

    ticks = ticks_through_zero(lo, hi)
    assert 0.0 in ticks and 2 <= len(ticks) <= 7
    assert all(lo - 1e-12 <= t <= hi + 1e-12 for t in ticks)
    steps = {round(b - a, 12) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1


def test_ticks_through_zero_on_a_point_and_refusals():
    from charts.vega import ticks_through_zero

    assert ticks_through_zero(0.5, 0.5) == [0.5]
    with pytest.raises(ValueError, match="lo, hi must be finite"):
        ticks_through_zero(1.0, 0.0)
    with pytest.raises(ValueError, match="lo, hi must be finite"):
        ticks_through_zero(float("nan"), 1.0)
