"""How the pages write numbers: the formats of :mod:`charts.numbers`, one for every metric and caption."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from charts.numbers import from_log, lam_text, number, probability_text, share

__all__ = ["NUMBER_COLUMN_LIMIT", "PAST_DOUBLE_LOGS", "csv_frame", "from_log", "lam_text",
           "number", "past_number_columns", "printf_text_column", "printf_text_columns", "probability_text", "share", "text_column",
           "with_past_double_logs"]

#: Streamlit's number columns show an error cell, not the number, once its magnitude reaches
#: 2^53: every double that large is a whole number, and past 2^53 not a "safe integer" of
#: JavaScript (a stdev of 6.016e+192 in Estimator Lab's §4).
NUMBER_COLUMN_LIMIT = 2.0**53


#: ``DataFrame.attrs`` key: per column, the natural log of each cell that is finite but past the
#: largest double (the cell holds ``inf``), NaN for the other cells (:func:`with_past_double_logs`).
PAST_DOUBLE_LOGS = "past_double_logs"


def with_past_double_logs(df: pd.DataFrame, logs: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """``df`` carrying the logs of its cells past a double (a mean of 4.8e+343 is no ∞), for
    :func:`past_number_columns`, :func:`text_column` and :func:`csv_frame`; columns with none are left out."""
    kept = {col: [float(x) for x in v] for col, v in logs.items() if any(math.isfinite(x) for x in v)}
    if kept:
        df.attrs[PAST_DOUBLE_LOGS] = kept
    return df


def _logs(df: pd.DataFrame, col: str) -> list[float] | None:
    return df.attrs.get(PAST_DOUBLE_LOGS, {}).get(col)


def past_number_columns(df: pd.DataFrame) -> list[str]:
    """The float columns of ``df`` holding a finite value of magnitude ``>= 2^53``, or one past a double."""
    out = []
    for col in df.columns:
        if pd.api.types.is_float_dtype(df[col]):
            v = df[col].to_numpy()
            if _logs(df, col) or any(math.isfinite(x) and abs(x) >= NUMBER_COLUMN_LIMIT for x in v):
                out.append(col)
    return out


def printf_text_columns(df: pd.DataFrame, formats: Mapping[str, str]) -> list[str]:
    """The float columns of ``df`` given a format in ``formats`` that Streamlit would write misleadingly, so the
    table writes them as text (:func:`printf_text_column`): an infinity in a printf format ("Infinity", formatted
    in JavaScript); a value that is not zero but prints as zero in fixed point ("-0.0000" for -3.8e-5); any
    value of a ``"percent"`` column (Streamlit keeps two decimals: 3.2e-5 reads "0%", 0.99997 "100%")."""
    out = []
    for col, fmt in formats.items():
        if col not in df.columns or not pd.api.types.is_float_dtype(df[col]):
            continue
        values = df[col].to_numpy(dtype=float)
        if fmt == "percent" or (fmt.startswith("%") and any(math.isinf(x) or _zero_shown(x, fmt) for x in values)):
            out.append(col)
    return out


def _zero_shown(x: float, fmt: str) -> bool:
    return fmt.endswith("f") and math.isfinite(x) and x != 0 and float(fmt % x) == 0


def printf_text_column(values: pd.Series, fmt: str) -> list[str | None]:
    """A float column as text: in the printf format ``fmt`` (``"%.6g"``), with ``∞``/``−∞``, and a value that is
    not zero but would print as zero in :func:`number`'s 4 significant digits; ``"percent"`` as :func:`share`
    writes it (never 0% or 100% for a share that is not); missing values kept missing."""
    if fmt == "percent":
        return [None if math.isnan(x) else share(x) for x in values.to_numpy(dtype=float)]
    return [None if math.isnan(x) else number(x) if math.isinf(x) or _zero_shown(x, fmt) else fmt % x
            for x in values.to_numpy(dtype=float)]


def _cell(x: float, log_x: float, digits: int) -> str | None:
    if math.isinf(x) and math.isfinite(log_x):
        return ("-" if x < 0 else "") + from_log(log_x, digits, trim=True)
    return None if math.isnan(x) else number(x)


def text_column(values: pd.Series, logs: Sequence[float] | None = None) -> list[str | None]:
    """A float column as :func:`number` writes it (4 significant digits, ∞), missing values kept missing;
    a cell past a double (``inf`` with a finite log in ``logs``) from its log."""
    v = values.to_numpy(dtype=float)
    logs = [math.nan] * len(v) if logs is None else logs
    return [_cell(x, lx, 4) for x, lx in zip(v, logs, strict=True)]


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` for a CSV file: the numbers, and a cell past a double as text from its log, 12 significant
    digits (``"4.82544172055e+343"``), not ``inf``."""
    if not df.attrs.get(PAST_DOUBLE_LOGS):
        return df
    out = df.copy()
    for col in past_number_columns(df):
        if (logs := _logs(df, col)) is not None:
            out[col] = [x if (c := _cell(x, lx, 12)) is None or not math.isinf(x) else c
                        for x, lx in zip(df[col].to_numpy(dtype=float), logs, strict=True)]
    return out
