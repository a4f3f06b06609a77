"""kl_core.numbers: one way to write a share and a figure past a double, for the CLI and the app."""

from __future__ import annotations

import math

import pytest

import charts.numbers
import kl_core.cli._common
from kl_core.numbers import from_log, share

LN10 = math.log(10.0)


@pytest.mark.parametrize(
    ("x", "decimals", "text"),
    [
        (0.25, 1, "25.0%"),
        (0.0, 1, "0.0%"),
        (-0.0, 1, "0.0%"),
        (0.00037, 1, "0.037%"),  # below 0.1 %: 2 significant digits, never 0.0%
        (0.001, 1, "0.1%"),
        (0.00025, 2, "0.03%"),  # 2 places show 0.01 % and up
        (0.000025, 2, "0.0025%"),
        (-0.00037, 1, "-0.037%"),
        (math.inf, 1, "inf%"),
        (None, 1, "—"),
        (math.nan, 1, "—"),
    ],
)
def test_share(x, decimals, text):
    assert share(x, decimals) == text


def test_a_share_that_is_not_zero_never_prints_as_zero():
    for k in range(1, 40):
        x = 10.0 ** -k
        assert share(x) not in {"0.0%", "0%"}, x
        assert share(x, 2) != "0.00%", x


def test_the_app_and_the_cli_write_shares_with_one_function():
    assert charts.numbers.share is share
    assert kl_core.cli._common.share is share


@pytest.mark.parametrize(
    ("x", "digits", "trim"),
    [(1.5e300, 4, False), (2.5e-300, 4, False), (123456.0, 3, True), (9.87654e-5, 2, False), (1.0, 4, False)],
)
def test_from_log_agrees_with_python_inside_a_double(x, digits, trim):
    spec = f".{digits - 1}e"
    expected = format(x, spec)
    if trim:
        mantissa, exp = expected.split("e")
        expected = f"{float(mantissa):.{digits}g}e{exp}"
    assert from_log(math.log(x), digits, trim=trim) == expected


def test_from_log_past_a_double():
    assert from_log(math.log(1.234) + 310 * LN10) == "1.234e+310"
    assert from_log(math.log(6.5) - 400 * LN10, 3, trim=True) == "6.5e-400"
    assert from_log(450.0) == "2.707e+195"  # e^450 = 2.70718e195 (mpmath)
    assert from_log(math.log(1.5) + 400 * LN10, sign="+") == "+1.500e+400"


def test_from_log_carries_a_mantissa_that_rounds_to_ten():
    assert from_log(math.log(9.99996) + 500 * LN10) == "1.000e+501"
    assert from_log(math.log(9.996) + 500 * LN10, 3, trim=True) == "1e+501"


@pytest.mark.parametrize(("kwargs", "name"), [({"log_x": math.inf}, "log_x"), ({"log_x": 1.0, "digits": 0}, "digits")])
def test_from_log_names_a_bad_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        from_log(**kwargs)


def test_share_names_a_bad_argument():
    with pytest.raises(ValueError, match="decimals"):
        share(0.5, -1)


def test_unresolved_is_below_the_smallest_normal_double():
    from kl_core.numbers import SMALLEST_NORMAL, unresolved

    assert unresolved(5e-324) and unresolved(-1e-310) and unresolved(SMALLEST_NORMAL / 2)
    assert not any(unresolved(x) for x in (0.0, -0.0, SMALLEST_NORMAL, 1e-300, math.inf, math.nan))


@pytest.mark.parametrize(("x", "decimals", "text"), [
    (0.9996, 1, "99.96%"), (0.99996, 1, "99.996%"), (0.9996, 0, "99.96%"), (0.99949, 1, "99.9%"),
    (1.0, 1, "100.0%"), (1.5, 1, "150.0%"), (1 - 1e-12, 1, "99.999999999%"),
])
def test_a_share_below_one_is_never_written_as_all(x, decimals, text):
    """An audit: 9,996 negative tokens of 10,000 were "100.0%" negative on the audit page."""
    assert share(x, decimals) == text
    assert float(text[:-1]) < 100 or x >= 1
