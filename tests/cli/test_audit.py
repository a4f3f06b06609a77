"""Tests for ``python -m kl_core audit``: the summary, JSON keys, and bad files as one line, exit 2.

Most tests call :func:`kl_core.cli.main.main` in-process; a few run the module in a
subprocess to check what a user sees (exit code, stderr, no traceback).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kl_core.audit import statistics as audit
from kl_core.cli import main as cli
from kl_core.cli.audit import table_columns

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_audit.csv"
EXAMPLE_META = json.loads((ROOT / "data" / "example_audit.json").read_text())
BASE = ["audit", str(EXAMPLE), "--sampler-col", "logp_policy", "--other-col", "logp_ref"]
SUMMARY_KEYS = {"mean", "std", "se", "neg_fraction", "p95", "p99", "max"}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def example(direction: str = "sampler-other", **cols: str | None) -> audit.AuditReport:
    t = audit.load_table(EXAMPLE, "logp_policy", "logp_ref", **cols)
    return audit.audit(**t.as_kwargs(), direction=direction)


# ------------------------------------------------------------ JSON


def test_json_keys_and_values_match_the_core(capsys):
    code, out, err = run([*BASE, "--mask-col", "mask", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert {"n", "direction", "k1", "k2", "k3"} <= set(data)
    rep = example(mask_col="mask")
    assert data["n"] == rep.n == EXAMPLE_META["n_counted"]
    assert data["direction"] == "sampler-other"
    for k in ("k1", "k2", "k3"):
        assert set(data[k]) == SUMMARY_KEYS
        assert data[k] == rep.summaries[k].to_dict()
    assert data["columns"] == {
        "logp_sampler": "logp_policy",
        "logp_other": "logp_ref",
        "mask": "mask",
    }
    # k3 is within 2 SE of the exact KL of the generator
    exact = EXAMPLE_META["exact"]["kl_sampler_other_per_token"]
    assert abs(data["k3"]["mean"] - exact) < 2 * data["k3"]["se"]


def test_json_other_direction_positions_sequences(capsys):
    argv = [
        *BASE,
        "--direction",
        "other-sampler",
        "--mask-col",
        "mask",
        "--position-col",
        "position",
        "--sequence-col",
        "sequence_id",
        "--json",
    ]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    data = json.loads(out)
    rep = example(
        "other-sampler", mask_col="mask", position_col="position", sequence_col="sequence_id"
    )
    assert data["direction"] == "other-sampler"
    assert data["k3"]["mean"] == rep.k3.mean
    assert data["positions"] == [b.to_dict() for b in rep.positions]
    assert data["sequences"]["n"] == 64
    assert data["sequences"]["k3"]["mean"] == rep.sequences.stats["k3"].mean


def test_rollout_column_gives_the_ess(tmp_path, capsys):
    df = pd.read_csv(EXAMPLE)
    rng = np.random.default_rng(1)
    df["logp_rollout"] = np.minimum(df["logp_policy"] + rng.normal(0, 0.3, len(df)), 0.0)
    path = tmp_path / "with_rollout.parquet"
    df.to_parquet(path)
    code, out, err = run(
        [
            "audit",
            str(path),
            "--sampler-col",
            "logp_policy",
            "--other-col",
            "logp_ref",
            "--rollout-col",
            "logp_rollout",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    rep = audit.audit(df["logp_policy"], df["logp_ref"], logp_rollout=df["logp_rollout"])
    assert data["weighted"] is True
    assert data["ess"] == rep.ess
    assert 0 < data["ess_fraction"] < 1
    code, out, _ = run(
        [
            "audit",
            str(path),
            "--sampler-col",
            "logp_policy",
            "--other-col",
            "logp_ref",
            "--rollout-col",
            "logp_rollout",
        ],
        capsys,
    )
    assert f"ESS = {rep.ess:,.1f} tokens" in out


# ------------------------------------------------------------ text


def test_text_summary_has_every_figure(capsys):
    argv = [
        *BASE,
        "--mask-col",
        "mask",
        "--position-col",
        "position",
        "--sequence-col",
        "sequence_id",
    ]
    code, out, err = run(argv, capsys)
    assert code == 0 and err == ""
    rep = example(mask_col="mask", position_col="position", sequence_col="sequence_id")
    assert "5,045 of 5,650 tokens counted by the mask" in out
    assert "estimating KL[sampler||other]" in out
    for k in ("k1", "k2", "k3"):
        s = rep.summaries[k]
        # the first table whose row starts with the key is the per-token summary
        row = [
            line.split()
            for line in out.splitlines()
            if line.strip().startswith(f"{k} ") and "%" in line
        ][0]
        assert row[1] == format(s.mean, ".6g")
        assert row[2] == format(s.std, ".6g")
        assert row[3] == format(s.se, ".3g")
        assert row[4] == f"{s.neg_fraction:.2%}"
        assert row[5:8] == [format(s.p95, ".6g"), format(s.p99, ".6g"), format(s.max, ".6g")]
    assert "per position (log2 buckets)" in out and "64-127" in out
    assert "per-sequence sums (n = 64 sequences)" in out


def test_list_columns(capsys):
    code, out, _ = run(["audit", str(EXAMPLE), "--list-columns"], capsys)
    assert code == 0
    assert out.split() == [
        "sequence_id",
        "position",
        "token",
        "logp_policy",
        "logp_ref",
        "mask",
        "kl_policy_ref",
        "kl_ref_policy",
    ]
    assert table_columns(EXAMPLE) == out.split()


# ------------------------------------------------------------ the exact-KL column


def test_kl_column_adds_rb_to_json_and_text(capsys):
    cols = ["--mask-col", "mask", "--sequence-col", "sequence_id", "--position-col", "position"]
    argv = [*BASE, *cols, "--kl-col", "kl_policy_ref"]
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    rep = example(
        mask_col="mask",
        sequence_col="sequence_id",
        position_col="position",
        kl_col="kl_policy_ref",
    )
    assert data["rb"] == rep.rb.to_dict()
    assert data["variance_ratio"] == rep.variance_ratio
    assert data["columns"]["exact_kl"] == "kl_policy_ref"
    # 64 sequences: p99 of the sums is withheld (null), as the app leaves it out
    assert data["sequences"]["rb"] == rep.shown().sequences.stats["rb"].to_dict()
    assert data["sequences"]["rb"]["p99"] is None and data["notes"] == [str(n) for n in rep.withheld_notes()]
    assert data["rb"]["mean"] == pytest.approx(
        EXAMPLE_META["exact"]["kl_sampler_other_per_token"], rel=1e-9
    )
    code, out, err = run(argv, capsys)
    assert code == 0 and err == ""
    row = next(ln.split() for ln in out.splitlines() if ln.strip().startswith("rb ") and "%" in ln)
    assert row[1:4] == [
        format(rep.rb.mean, ".6g"),
        format(rep.rb.std, ".6g"),
        format(rep.rb.se, ".3g"),
    ]
    assert f"Var(k1)/Var(rb) = {rep.variance_ratio['k1']:.4g}" in out
    assert f"Var(k1)/Var(rb) = {rep.sequences.variance_ratio['k1']:.4g}" in out
    assert "rb mean ± SE" in out and "rb = KL[sampler(.|prefix) || other(.|prefix)]" in out


def test_without_kl_column_json_has_null_rb(capsys):
    code, out, _ = run([*BASE, "--json"], capsys)
    data = json.loads(out)
    assert data["rb"] is None and data["variance_ratio"] is None
    code, out, _ = run(BASE, capsys)
    assert "rb" not in out.split()


def test_bad_kl_column_names_its_rows(tmp_path, capsys):
    df = pd.read_csv(EXAMPLE).head(20)
    df.loc[[4, 11], "kl_policy_ref"] = -0.25
    path = tmp_path / "neg.csv"
    df.to_csv(path, index=False)
    code, out, err = run(
        [
            "audit",
            str(path),
            "--sampler-col",
            "logp_policy",
            "--other-col",
            "logp_ref",
            "--kl-col",
            "kl_policy_ref",
        ],
        capsys,
    )
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--kl-col 'kl_policy_ref' has 2 negative values (data rows 5, 12" in err  # df rows 4, 11


# ------------------------------------------------------------ bad input


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


BAD = [
    ("notes.txt", "logp_policy,logp_ref\n-1,-2\n", "must be a .csv or .parquet file"),
    ("nan.csv", "logp_policy,logp_ref\n-1,-2\n,-1\n", "column has a NaN/missing value (data row 2)"),
    ("positive.csv", "logp_policy,logp_ref\n0.5,-2\n-1,-1\n", "has a value > 0 at data row 1: 0.5"),
    ("missing.csv", "a,b\n-1,-2\n", "--sampler-col 'logp_policy' is not a column"),
    ("empty.csv", "logp_policy,logp_ref\n", "has no data rows"),
    ("broken.parquet", "not parquet", "could not be parsed as PARQUET"),
]


#: One file per problem, each in data row 3 (counted from 1 under the header, as the app counts them).
ROW_3 = [
    ("text.csv", "a,b\n-1,-2\n-1,-1\n-1,x\n", [],
     "--other-col 'b': column is not numeric (dtype str); first non-numeric value at data row 3: 'x'"),
    ("nan.csv", "a,b\n-1,-2\n-1,-1\n-1,\n", [], "--other-col 'b': column has a NaN/missing value (data row 3)"),
    ("inf.csv", "a,b\n-1,-2\n-1,-1\n-1,-inf\n", [], "--other-col 'b' has a NaN or infinite value at data row 3: -inf"),
    ("positive.csv", "a,b\n-1,-2\n-1,-1\n0.5,-1\n", [], "--sampler-col 'a' has a value > 0 at data row 3: 0.5;"),
    ("mask.csv", "a,b,m\n-1,-2,1\n-1,-1,0\n-1,-1,3\n", ["--mask-col", "m"],
     "--mask-col 'm' must be boolean or 0/1, got 3.0 at data row 3"),
    ("pos.csv", "a,b,t\n-1,-2,0\n-1,-1,1\n-1,-1,-2\n", ["--position-col", "t"],
     "--position-col 't' must be integers >= 0, got -2.0 at data row 3"),
    ("kl.csv", "a,b,k\n-1,-2,0.1\n-1,-1,0.2\n-1,-1,-0.5\n", ["--kl-col", "k"],
     "--kl-col 'k' has a negative value (data row 3: -0.5)"),
    ("klinf.csv", "a,b,k\n-1,-2,0.1\n-1,-1,0.2\n-1,-1,inf\n", ["--kl-col", "k"],
     "--kl-col 'k' has a NaN or infinite value (data row 3)"),
]


@pytest.mark.parametrize(("name", "text", "extra", "message"), ROW_3, ids=[r[0] for r in ROW_3])
def test_every_bad_cell_is_named_by_its_data_row_counted_from_1(tmp_path, capsys, name, text, extra, message):
    """A non-numeric cell was quoted as the column's first value ('-2', a valid number), a NaN was in
    "data row 0" and a -inf at "index 1": every message now quotes the bad cell at its data row, from 1."""
    path = _write(tmp_path, name, text)
    code, out, err = run(["audit", str(path), "--sampler-col", "a", "--other-col", "b", *extra], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: {message}")
    assert "index" not in err and "np." not in err


@pytest.mark.parametrize(("name", "text", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_files_give_one_line_and_exit_2(tmp_path, capsys, name, text, message):
    path = _write(tmp_path, name, text)
    code, out, err = run(
        ["audit", str(path), "--sampler-col", "logp_policy", "--other-col", "logp_ref"], capsys
    )
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert message in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--other-col", "nope"], "--other-col 'nope' is not a column; available columns:"),
        (["--mask-col", "logp_ref"], "--mask-col 'logp_ref' is the same column as --other-col"),
        (["--mask-col", "logp_policy"], "is the same column as"),
        (["--position-col", "logp_ref"], "same column"),
    ],
)
def test_bad_columns_give_one_line_and_exit_2(capsys, extra, message):
    argv = [*BASE]
    if extra[0] == "--other-col":
        argv = ["audit", str(EXAMPLE), "--sampler-col", "logp_policy", *extra]
    else:
        argv += extra
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_missing_required_columns_and_bad_direction(capsys):
    code, _, err = run(["audit", str(EXAMPLE)], capsys)
    assert code == 2 and "--sampler-col and --other-col required" in err
    code, _, err = run([*BASE, "--direction", "sideways"], capsys)
    assert code == 2 and err.count("\n") == 1 and "invalid choice: 'sideways'" in err
    code, _, err = run(
        ["audit", str(EXAMPLE / "nope.csv"), "--sampler-col", "a", "--other-col", "b"], capsys
    )
    assert code == 2 and "is not a file" in err


def test_over_the_size_limit(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(audit, "MAX_FILE_BYTES", 100)
    path = _write(tmp_path, "big.csv", "logp_policy,logp_ref\n" + "-1.0,-2.0\n" * 50)
    code, _, err = run(
        ["audit", str(path), "--sampler-col", "logp_policy", "--other-col", "logp_ref"], capsys
    )
    assert code == 2 and "larger than the 100-byte limit" in err
    code, _, err = run(["audit", str(path), "--list-columns"], capsys)
    assert code == 2 and "larger than the 100-byte limit" in err


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("notes.txt", "hello\n", "must be a .csv or .parquet file"),
        ("positive.csv", "logp_policy,logp_ref\n0.5,-2\n", "has a value > 0 at data row 1"),
    ],
)
def test_subprocess_shows_one_line_and_no_traceback(tmp_path, name, text, message):
    path = _write(tmp_path, name, text)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kl_core",
            "audit",
            str(path),
            "--sampler-col",
            "logp_policy",
            "--other-col",
            "logp_ref",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and message in proc.stderr


def test_subprocess_json_of_the_example():
    proc = subprocess.run(
        [sys.executable, "-m", "kl_core", *BASE, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["n"] == 5650 and data["direction"] == "sampler-other"
    assert all(set(data[k]) == SUMMARY_KEYS for k in ("k1", "k2", "k3"))


# ------------------------------------------------------------ table_columns


def test_table_columns_checks_like_load_table(tmp_path):
    import io

    assert table_columns(io.BytesIO(b"a,b\n1,2\n"), fmt="csv") == ["a", "b"]
    pq_path = tmp_path / "t.parquet"
    pd.DataFrame({"x": [-1.0], "y": [-2.0]}).to_parquet(pq_path)
    assert table_columns(pq_path) == ["x", "y"]
    with pytest.raises(ValueError, match="unnamed buffer"):
        table_columns(io.BytesIO(b"a\n1\n"))
    with pytest.raises(ValueError, match="fmt must be 'csv' or 'parquet'"):
        table_columns(io.BytesIO(b"a\n1\n"), fmt="xlsx")
    with pytest.raises(ValueError, match="max_bytes must be a positive integer"):
        table_columns(pq_path, max_bytes=0)
    with pytest.raises(ValueError, match="larger than the 10-byte limit"):
        table_columns(pq_path, max_bytes=10)
    with pytest.raises(ValueError, match="'the buffer' is empty"):
        table_columns(io.BytesIO(b""), fmt="csv")


def test_the_cli_reads_a_semicolon_file_with_decimal_commas(tmp_path, capsys):
    semi = tmp_path / "semi.csv"
    semi.write_text("lp;lq\n-1,0;-1,5\n-2,0;-1,0\n-0,5;-0,7\n")
    assert table_columns(semi) == ["lp", "lq"]
    code, out, _err = run(["audit", str(semi), "--sampler-col", "lp", "--other-col", "lq", "--json"], capsys)
    assert code == 0
    expected = audit.audit([-1.0, -2.0, -0.5], [-1.5, -1.0, -0.7])
    assert json.loads(out)["k1"]["mean"] == pytest.approx(expected.k1.mean, rel=1e-12)


# ------------------------------------------------------------ figures past a double


def _past_a_double_file(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    """400 ordinary tokens and one with log r = 800: k3 = e^800 - 801 is past a double."""
    rng = np.random.default_rng(7)
    ls = -rng.exponential(2.0, 400)
    lo = np.minimum(ls + rng.normal(0.0, 0.3, 400), 0.0)
    ls[5], lo[5] = -801.0, -1.0
    path = tmp_path / "big.csv"
    pd.DataFrame({"s": ls, "o": lo, "pos": np.arange(400) % 50, "seq": np.arange(400) // 50}).to_csv(
        path, index=False)
    return path, ls, lo


def _mp_k3_mean_log(ls: np.ndarray, lo: np.ndarray) -> float:
    mpmath = pytest.importorskip("mpmath")
    with mpmath.mp.workdps(50):
        t = [mpmath.mpf(float(x)) for x in lo - ls]
        return float(mpmath.log(mpmath.fsum(mpmath.expm1(x) - x for x in t) / len(t)))


def test_text_prints_a_figure_past_a_double_from_its_log_not_inf(tmp_path, capsys):
    from kl_core.numbers import from_log

    path, ls, lo = _past_a_double_file(tmp_path)
    code, out, err = run(["audit", str(path), "--sampler-col", "s", "--other-col", "o",
                          "--position-col", "pos", "--sequence-col", "seq"], capsys)
    assert code == 0, err
    log_mean = _mp_k3_mean_log(ls, lo)
    assert log_mean == pytest.approx(800.0 - math.log(400.0), rel=1e-6)  # e^800 / 400, past a double
    table = out.split("per token")[1].splitlines()
    k3_row = next(line for line in table if line.split()[:1] == ["k3"])
    assert from_log(log_mean, 6, trim=True) in k3_row and "inf" not in out
    assert from_log(800.0, 6, trim=True) in k3_row  # the max, e^800 - 801
    assert "past the largest double" in out


def test_json_writes_a_figure_past_a_double_as_a_string_and_its_log(tmp_path, capsys):
    path, ls, lo = _past_a_double_file(tmp_path)
    code, out, err = run(["audit", str(path), "--sampler-col", "s", "--other-col", "o",
                          "--position-col", "pos", "--sequence-col", "seq", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    k3 = data["k3"]
    assert k3["log_mean"] == pytest.approx(_mp_k3_mean_log(ls, lo), rel=1e-12)
    assert isinstance(k3["mean"], str) and float(k3["mean"]) == math.inf  # not a JSON number
    assert float(k3["mean"].split("e+")[0]) * 10.0 ** (int(k3["mean"].split("e+")[1]) - 340) == pytest.approx(
        math.exp(k3["log_mean"] - 340 * math.log(10.0)), rel=1e-10)
    assert {"log_mean", "log_std", "log_se", "log_max"} <= set(k3) and "log_mean" not in data["k1"]
    assert set(data["k1"]) == SUMMARY_KEYS  # a figure that fits keeps its number and gets no log_ key
    assert '"inf"' not in out.replace('"hi": "inf"', "")


# ------------------------------------------------------------ what the counts allow, as the app shows it


def test_statistics_that_mean_nothing_at_the_count_are_withheld_with_a_note(tmp_path, capsys):
    """2 tokens printed an SE, std, p95 and p99 (0.75, 1.06, 0.5, 0.5); 64 sequences a p99 equal to the max;
    the app withholds them (AuditReport.sample_size), and now so does the CLI, text and JSON."""
    path = tmp_path / "two.csv"
    path.write_text("a,b\n-1.0,-0.5\n-1.0,-2.0\n")
    code, out, _ = run(["audit", str(path), "--sampler-col", "a", "--other-col", "b"], capsys)
    assert code == 0
    k1 = next(line.split() for line in out.splitlines() if line.split()[:1] == ["k1"] and "=" not in line)
    assert k1[2:4] == ["—", "—"] and k1[5:7] == ["—", "—"]  # std, SE; p95, p99
    assert "note: Only 2 tokens: too few for a standard error (it needs at least 30)" in out
    code, out, _ = run(["audit", str(path), "--sampler-col", "a", "--other-col", "b", "--json"], capsys)
    data = json.loads(out)
    assert data["k1"]["se"] is None and data["k1"]["p99"] is None and data["k1"]["mean"] == pytest.approx(0.25)
    assert data["notes"][0].startswith("Only 2 tokens")
    code, out, _ = run([*BASE, "--mask-col", "mask", "--sequence-col", "sequence_id"], capsys)
    seq = out[out.index("per-sequence sums"):]
    k1 = next(line.split() for line in seq.splitlines() if line.split()[:1] == ["k1"] and "=" not in line)
    assert k1[-2] == "—" and k1[-1] != "—"  # p99 withheld below 100 sequences, the max shown
    assert "p99 of the sequence sums needs at least 100" in out


def test_the_ratio_line_never_calls_a_ratio_below_one_a_reduction(tmp_path, capsys):
    """A KL column that varies more than k1 and k3 printed "variance reduction of rb: …" with ratios below 1
    (an audit found Var(k3)/Var(rb) = 0.0001505 on 40 of the example's tokens)."""
    path = tmp_path / "rb.csv"
    path.write_text("a,b,kl\n" + "".join(f"-1.0,{-1.0 - 0.01 * (i % 3)},{5.0 * (i % 2)}\n" for i in range(40)))
    code, out, _ = run(["audit", str(path), "--sampler-col", "a", "--other-col", "b", "--kl-col", "kl"], capsys)
    assert code == 0 and "variance reduction" not in out
    rep = audit.audit(**audit.load_table(path, "a", "b", kl_col="kl").as_kwargs())
    assert rep.variance_ratio["k1"] < 1 and rep.variance_ratio["k3"] < 1
    assert "variance ratios of rb: Var(k1)/Var(rb) = " in out
    assert "for this file rb varies more per token than k1 and k3" in out
