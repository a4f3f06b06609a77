"""How the pages write numbers: the formats of :mod:`charts.numbers`, one for every metric and caption."""

from __future__ import annotations

import math

import pandas as pd

from charts.numbers import from_log, number, share

__all__ = ["NUMBER_COLUMN_LIMIT", "from_log", "number", "past_number_columns", "share", "text_column"]

#: Streamlit's number columns show an error cell, not the number, once its magnitude reaches
#: 2^53: every double that large is a whole number, and past 2^53 not a "safe integer" of
#: JavaScript (a stdev of 6.016e+192 in Estimator Lab's §4).
NUMBER_COLUMN_LIMIT = 2.0**53


def past_number_columns(df: pd.DataFrame) -> list[str]:
    """The float columns of ``df`` holding a finite value of magnitude ``>= 2^53``."""
    out = []
    for col in df.columns:
        if pd.api.types.is_float_dtype(df[col]):
            v = df[col].to_numpy()
            if any(math.isfinite(x) and abs(x) >= NUMBER_COLUMN_LIMIT for x in v):
                out.append(col)
    return out


def text_column(values: pd.Series) -> list[str | None]:
    """A float column as :func:`number` writes it (4 significant digits, ∞), missing values kept missing."""
    return [None if math.isnan(x) else number(x) for x in values.to_numpy(dtype=float)]
