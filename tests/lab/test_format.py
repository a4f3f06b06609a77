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


def test_columns_past_streamlits_number_columns_are_found_and_written_as_text():
    """Streamlit shows an error cell for a number of magnitude 2^53 or more (its "safe integer" limit):
    Estimator Lab's stdev (exact) of e^450 at q = N(0,1), p = N(30,1) was such a cell."""
    import pandas as pd

    from lab.format import NUMBER_COLUMN_LIMIT, past_number_columns, text_column

    df = pd.DataFrame({"small": [0.0667, 30.03, math.nan], "big": [0.0667, math.exp(450.0), math.nan],
                       "inf": [1.0, math.inf, 2.0], "edge": [NUMBER_COLUMN_LIMIT, 0.0, 1.0],
                       "name": ["k1", "k2", "k3"]})
    assert past_number_columns(df) == ["big", "edge"]  # ∞ is written as ∞ by Streamlit itself
    assert text_column(df["big"]) == ["0.0667", "2.707e+195", None]
    assert past_number_columns(df.drop(columns=["big", "edge"])) == []


def test_a_printf_column_with_an_infinity_is_written_with_the_infinity_sign():
    """Streamlit writes ∞ as "Infinity" in a printf-formatted number column (the f-divergences
    end table's exact D_f at θ = 3 on the scale path was such a cell)."""
    import pandas as pd

    from lab.format import printf_text_column, printf_text_columns

    df = pd.DataFrame({"d": [0.125, math.inf, -math.inf, math.nan], "r": [1.0, 2.0, 3.0, 4.0],
                       "name": ["a", "b", "c", "d"]})
    formats = {"d": "%.6g", "r": "%.5f", "name": "%s", "absent": "%g"}
    assert printf_text_columns(df, formats) == ["d"]
    assert printf_text_column(df["d"], "%.6g") == ["0.125", "∞", "−∞", None]


def test_a_nonzero_value_printed_as_zero_and_a_percent_column_are_written_as_text():
    """An audit: the Estimator Lab's MC bias/true of -3.8e-5 printed "-0.0000" (seed 45); Streamlit's percent
    format printed a share of 3.2e-5 as "0%" and 0.99997 as "100%"."""
    import pandas as pd

    from lab.format import printf_text_column, printf_text_columns

    df = pd.DataFrame({"bias": [-3.8e-5, 0.0, 0.1234], "plain": [0.5, 0.0, -0.25], "neg": [3.2e-5, 0.99997, 0.5]})
    formats = {"bias": "%.4f", "plain": "%.4f", "neg": "percent"}
    assert printf_text_columns(df, formats) == ["bias", "neg"]
    assert printf_text_column(df["bias"], "%.4f") == ["-3.8e-05", "0.0000", "0.1234"]
    assert printf_text_column(df["neg"], "percent") == ["0.0032%", "99.997%", "50.0%"]
