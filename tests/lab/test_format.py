"""lab.format.number: the one way the pages write a number."""

import math

import pytest

from lab.format import number


@pytest.mark.parametrize(
    ("x", "text"),
    [(0.005, "0.005"), (1 / 3, "0.3333"), (12345.678, "1.235e+04"), (0.0, "0"),
     (math.inf, "∞"), (-math.inf, "−∞"), (math.nan, "—")],
)
def test_four_significant_digits_and_the_special_values(x, text):
    assert number(x) == text
