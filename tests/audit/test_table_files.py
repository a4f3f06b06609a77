"""kl_core.audit.table_files and load_table's refusals: every error names the parameter for code
(``str(exc)``) and, in ``exc.user``, the file, the column and what to do, in words."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kl_core.audit import statistics as audit
from kl_core.audit import table_files
from kl_core.audit.statistics import load_table, sample_size_check
from kl_core.audit.table_files import sniff_csv
from kl_core.cli.audit import table_columns
from kl_core.validation import InputError

ROOT = Path(__file__).resolve().parents[2]
CODE_WORDS = ("path_or_buffer", "sampler_col", "other_col", "mask_col", "codec", "MAX_FILE_BYTES", "dtype")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256))


class Upload(io.BytesIO):
    """Like Streamlit's UploadedFile: a binary buffer with a name and a size."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name, self.size = name, len(data)


def refusal(data: bytes, name: str, sc: str = "lp", oc: str = "lq", **kw) -> InputError:
    with pytest.raises(InputError) as info:
        load_table(Upload(data, name), sc, oc, **kw)
    exc = info.value
    assert "path_or_buffer" in str(exc) or "_col=" in str(exc)  # code keeps naming the parameter
    user = str(exc.user)
    assert not any(w in user for w in CODE_WORDS), user
    return exc


def test_the_uploader_limit_is_the_core_limit():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == table_files.MAX_FILE_BYTES == audit.MAX_FILE_BYTES


def test_a_file_over_the_limit_names_its_size_and_what_to_do():
    size = 84 * 2**20

    class Huge(Upload):  # an 84 MB upload, refused from its size before reading
        def read(self, n: int = -1) -> bytes:
            raise AssertionError("read before the size check")

    huge = Huge(b"", "big.csv")
    huge.size = size
    with pytest.raises(InputError) as info:
        load_table(huge, "lp", "lq")
    assert "52,428,800-byte limit" in str(info.value)
    assert str(info.value.user).startswith("“big.csv” is 84 MB, over the limit of 50 MB.")
    assert "Parquet" in str(info.value.user)


def test_an_empty_file_and_a_header_without_rows():
    exc = refusal(b"", "empty.csv")
    assert str(exc.user).startswith("“empty.csv” is empty. Upload a CSV file")
    exc = refusal(b"  \n", "blank.csv")
    assert "is empty" in str(exc.user)
    exc = refusal(b"lp,lq\n", "header.csv")
    assert str(exc.user) == "“header.csv” has a header row (lp, lq) but no rows of data: add one row per token."


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (PNG, "a PNG image"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "a PDF document"),
        (b"PK\x03\x04\x14\x00\x06\x00" + bytes(64), "an Excel workbook (.xlsx)"),
    ],
)
def test_a_binary_file_renamed_csv_is_named_for_what_it_is(data, what):
    exc = refusal(data, "logps.csv")
    assert str(exc.user).startswith("“logps.csv” is not a CSV: it looks like ")
    assert what in str(exc.user) and "Upload a CSV file" in str(exc.user)
    assert "utf-8" not in str(exc.user).lower()
    exc = refusal(bytes([0, 1, 2, 3, 200, 201]) * 50, "noise.csv")
    assert str(exc.user).startswith("“noise.csv” is not a text file")


def test_a_parquet_file_named_csv_is_read_as_parquet():
    buf = io.BytesIO()
    pd.DataFrame({"lp": [-1.0, -2.0], "lq": [-1.5, -1.0]}).to_parquet(buf)
    t = load_table(Upload(buf.getvalue(), "actually_parquet.csv"), "lp", "lq")
    assert t.logp_other.tolist() == [-1.5, -1.0]


@pytest.mark.parametrize(
    ("text", "sep", "decimal"),
    [
        ("lp,lq\n-1.5,-2.25\n-0.5,-1\n", ",", "."),
        ("lp;lq\n-1.5;-2.25\n-0.5;-1\n", ";", "."),
        ("lp;lq\n-1,5;-2,25\n-0,5;-1\n", ";", ","),
        ("lp\tlq\n-1.5\t-2.25\n-0.5\t-1\n", "\t", "."),
        ("lp|lq\n-1.5|-2.25\n-0.5|-1\n", "|", "."),
        ('name,lp,lq\n"a, b",-1.5,-2.25\n"c",-0.5,-1\n', ",", "."),
        ("lp\n-1.5\n-0.5\n", ",", "."),
    ],
)
def test_the_separator_and_decimal_mark_are_detected_and_read(text, sep, decimal):
    assert sniff_csv(text) == (sep, decimal)
    df = table_files.read_frame(text.encode(), "t.csv", "csv")
    assert df["lp"].tolist() == [-1.5, -0.5]


def test_table_columns_reads_semicolon_and_tab_files_too():
    assert table_columns(Upload(b"a;b;c\n-1;-2;-3\n", "x.csv")) == ["a", "b", "c"]
    assert table_columns(Upload(b"\xef\xbb\xbfa\tb\n-1\t-2\n", "x.csv")) == ["a", "b"]
    assert table_columns(Upload("caf\xe9;b\n-1;-2\n".encode("cp1252"), "x.csv")) == ["café", "b"]


def test_a_missing_column_lists_the_file_s_columns_in_words():
    exc = refusal(b"x;y\n-1;-2\n", "semi.csv", sc="a")
    assert str(exc).startswith("sampler_col='a' is not a column; available columns: 'x', 'y'")
    assert str(exc.user) == (
        "“semi.csv” has no column “a” (chosen for the sampler's log-probs). Its columns are: x, y. "
        "Choose one of those."
    )
    exc = refusal(b"lp,lq\n-1,-2\n", "t.csv", sc="lp", oc="lp")
    assert str(exc.user).startswith("Column “lp” is chosen for both the sampler's log-probs and the other")


def test_bad_column_contents_name_file_column_row_and_fix():
    exc = refusal(b"lp,lq\n-1,-2\n-1,oops\n", "t.csv")
    assert str(exc.user).startswith("“t.csv”, column “lq” (the other policy's log-probs): it holds text")
    assert "data row 2: 'oops'" in str(exc.user)  # rows counted from 1 under the header, as in a spreadsheet
    exc = refusal(b"lp,lq\n-1,-2\n-1,\n", "t.csv")
    assert "column “lq”" in str(exc.user) and "there are empty or non-numeric cells at data row 2:" in str(exc.user)
    exc = refusal(b"lp,lq\n-1,-2\n0.3,-1\n0.1,-1\n", "t.csv")
    assert str(exc.user) == (
        "“t.csv”, column “lp” (the sampler's log-probs): there are values above 0 at data rows 2, 3 "
        "(e.g. 0.3), but a log-probability is ≤ 0. Is this a logit, a probability or a negated log-prob column?"
    )
    assert str(exc).startswith("sampler_col='lp' has 2 values > 0 (first at data row 2: 0.3)")  # code's text, same row
    exc = refusal(b"lp,lq,kl\n-1,-2,0.1\n-1,-1,-0.5\n", "t.csv", kl_col="kl")
    assert "column “kl” (the exact next-token KL): there are values below 0 at data row 2" in str(exc.user)
    exc = refusal(b"lp,lq\n-1,-2\n-inf,-1\n", "t.csv")
    assert "there are infinite or non-numeric values at data row 2: fix or drop" in str(exc.user)
    exc = refusal(b"lp,lq,m\n-1,-2,1\n-1,-1,7\n", "t.csv", mask_col="m")
    assert str(exc.user).startswith("“t.csv”, column “m” (the mask): the column must be boolean or 0/1")


def test_an_unparseable_csv_says_what_to_check():
    exc = refusal(b"lp,lq\n-1,-2\n-1,-2,-3,-4\n", "ragged.csv")
    assert str(exc.user).startswith("“ragged.csv” could not be read as a table (")
    assert "separators as the header row" in str(exc.user)


def test_wrong_extension_is_worded_for_the_user():
    with pytest.raises(InputError) as info:
        load_table(Upload(b"lp,lq\n-1,-2\n", "t.xlsx"), "lp", "lq")
    assert "path_or_buffer must be a .csv or .parquet file" in str(info.value)
    assert str(info.value.user).startswith("“t.xlsx” is not a CSV or Parquet file")


def test_errors_pickle_with_their_user_sentence():
    import pickle

    exc = refusal(b"", "empty.csv")
    back = pickle.loads(pickle.dumps(exc))
    assert str(back) == str(exc) and str(back.user) == str(exc.user)
    assert back.user.template == exc.user.template


# ---------------------------------------------------------------- too few tokens


def test_sample_size_check_thresholds():
    c = sample_size_check(4)
    assert (c.se, c.p95, c.p99) == (False, False, False)
    assert "Only 4 tokens" in c.note and "SE, std, p95 and p99 are not shown" in c.note
    assert (sample_size_check(29).se, sample_size_check(30).se) == (False, True)
    c = sample_size_check(99)
    assert (c.se, c.p95, c.p99) == (True, True, False) and "p99 needs at least 100" in c.note
    c = sample_size_check(100)
    assert c.all_meaningful and not c.note
    assert "effective tokens" in sample_size_check(12.4, "effective tokens").note
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="n must be"):
            sample_size_check(bad)
    with pytest.raises(ValueError, match="what must be"):
        sample_size_check(10, "rows")


def test_the_p99_of_fewer_than_100_values_is_the_maximum():
    """Why p99 needs 100 values: with fewer, the inverse-CDF percentile is the largest value."""
    v = np.random.default_rng(0).exponential(size=99)
    assert np.quantile(v, 0.99, method="inverted_cdf") == v.max()
    v = np.random.default_rng(0).exponential(size=100)
    assert np.quantile(v, 0.99, method="inverted_cdf") < v.max()


def test_a_four_token_audit_withholds_se_and_percentiles():
    t = load_table(Upload(b"lp,lq\n-1,-2\n-2,-1\n-0.5,-0.7\n-3,-2\n", "four.csv"), "lp", "lq")
    report = audit.audit(**t.as_kwargs())
    check = report.sample_size()
    assert check.n == 4 and not check.se and check.note
    masked = check.masked_all(report.all_summaries)
    for k, s in masked.items():
        assert np.isnan(s.se) and np.isnan(s.std) and np.isnan(s.p95) and np.isnan(s.p99)
        assert s.mean == report.all_summaries[k].mean and s.max == report.all_summaries[k].max
    big = audit.audit(*np.log(np.random.default_rng(1).dirichlet(np.ones(2), size=500)).T)
    assert big.sample_size().all_meaningful
    assert big.sample_size().masked(big.k1) == big.k1


# ------------------------------------------------------------ one reader: read_table
def test_read_table_is_the_reader_load_table_and_the_column_listing_share(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b"lp;lq\n-1,5;-2,25\n-0,5;-1,0\n")
    df, name = table_files.read_table(p)
    assert name == str(p) and list(df.columns) == ["lp", "lq"]
    np.testing.assert_allclose(df["lq"].to_numpy(), load_table(p, "lp", "lq").logp_other, rtol=1e-15)
    head, _ = table_files.read_table(Upload(p.read_bytes(), "t.csv"), nrows=0)
    assert list(head.columns) == table_columns(p) and len(head) == 0


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_read_table_refuses_a_bad_limit_naming_it(bad):
    with pytest.raises(ValueError, match="max_bytes must be a positive integer"):
        table_files.read_table(io.BytesIO(b"a\n1\n"), fmt="csv", max_bytes=bad)


def test_read_table_refuses_a_file_over_the_limit_before_reading_it():
    with pytest.raises(InputError, match="path_or_buffer"):
        table_files.read_table(Upload(b"lp,lq\n" + b"-1.0,-1.0\n" * 20, "t.csv"), max_bytes=64)


def test_a_file_s_bad_cells_are_named_by_data_row_in_the_code_text_and_the_sentence():
    """The code's text said "first value '-1'" for a text cell, "data row 0" for the first row's NaN and
    "index 1" for the second row's -inf; the user's sentence counted from 1. Both count from 1 now."""
    exc = refusal(b"lp,lq\n-1,-2\n-1,-1\n-1,x\n", "t.csv")
    assert str(exc).endswith("first non-numeric value at data row 3: 'x'") and "data row 3: 'x'" in str(exc.user)
    exc = refusal(b"lp,lq\n-1,\n-1,-1\n", "t.csv")
    assert str(exc).endswith("(data row 1)") and "at data row 1:" in str(exc.user)
    exc = refusal(b"lp,lq\n-1,-2\n-1,-inf\n", "t.csv")
    assert str(exc) == "other_col='lq' has a NaN or infinite value at data row 2: -inf"
    assert "at data row 2:" in str(exc.user)
    exc = refusal(b"lp,lq,m\n-1,-2,1\n-1,-1,7\n", "t.csv", mask_col="m")
    assert str(exc) == "mask_col='m' must be boolean or 0/1, got 7.0 at data row 2"
    assert str(exc.user).endswith("the column must be boolean or 0/1, got 7.0 at data row 2")
    exc = refusal(b"lp,lq,t\n-1,-2,0\n-1,-1,0.5\n", "t.csv", position_col="t")
    assert str(exc) == "position_col='t' must be integers >= 0, got 0.5 at data row 2"
    exc = refusal(b"lp,lq,k\n-1,-2,-0.5\n-1,-1,0.1\n", "t.csv", kl_col="k")
    assert str(exc).startswith("kl_col='k' has a negative value (data row 1: -0.5)")
