"""The command line says what is true: whole sample counts, flags in errors, shares that are not
zero, caps on --n and --lam, "1 row", no negative zero.

Each test failed on the code before its fix (the audit's findings 1-8).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from kl_core.cli import _common, table
from kl_core.cli import main as cli

FAR = ["--q", "normal(0,1)", "--p", "normal(30,1)"]  # E_q[r²] = e^{900}, past a double


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _audit_row(out: str, key: str) -> list[str]:
    """The cells of estimator ``key``'s row in the per-token table of ``audit``."""
    return next(cells for line in out.splitlines() if (cells := line.split())[:1] == [key] and len(cells) == 8)


# ------------------------------------------------------------ 2. the N an error bar needs is whole (from the core)


def test_the_n_an_error_bar_needs_is_a_whole_number(capsys):
    from kl_core.estimation.distributions import Gaussian
    from kl_core.estimation.reliability import error_bar_check

    kappa = error_bar_check("k2", Gaussian(0, 1), Gaussian(30, 1), 2).kurtosis
    assert not float(2 * (kappa - 1)).is_integer()
    code, out, _ = run(["table", *FAR, "--n", "2"], capsys)
    assert code == 0
    needs = re.findall(r"it needs N ≥ ([^)]*)\)", out)
    assert needs and all(re.fullmatch(r"[\d,]+|\d\.\d+e\+\d+", n) for n in needs), needs
    assert f"it needs N ≥ {math.ceil(2 * (kappa - 1))})" in out


# ------------------------------------------------------------ 3. error lines name the flags


AUDIT = ["audit", "data/example_audit.csv", "--sampler-col", "logp_policy", "--other-col", "logp_ref"]
GRAD = ["grad", "--policy", "categorical(1,0)", "--ref", "categorical(0,0)"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["table", "--lam", "nan"], "--lam must be finite"),
        (["table", "--lam", "inf", "--exact-only"], "--lam must be finite"),
        (["table", "--seed", "-1", "--n", "10"], "--seed must be"),
        (["table", "--q", "foo"], "--q: spec 'foo'"),
        (["kl", "--p", "normal(0,-1)"], "--p: spec 'normal(0,-1)'"),
        (["kl", "--p", "categorical(1,2)"], "--q normal(0,1) and --p categorical(1,2) must both"),
        ([*AUDIT[:4], "--other-col", "nope"], "--other-col 'nope' is not a column"),
        ([*AUDIT, "--mask-col", "logp_ref"], "--mask-col 'logp_ref' is the same column as --other-col"),
        ([*AUDIT, "--rollout-col", "logp_policy"], "--rollout-col 'logp_policy' is the same column as --sampler-col"),
        (["audit", "no_such_file.csv", "--sampler-col", "a", "--other-col", "b"], "file 'no_such_file.csv' is not a file"),
        (["sequence", "--T", "5000"], "--T must be at most 4,096"),
        (["sequence", "--K", "1"], "--K must be in 2"),
        (["sequence", "--drift", "nan"], "--drift must be finite"),
        (["sequence", "--n", "2e6"], "--n must be at most 1,000,000"),
        (["sequence", "--n", "1e6", "--T", "4000"], "--n × --T = 4,000,000,000 tokens"),
        (["sequence", "--policy", "markov(0,0; 0,1; 1,0)", "--ref", "markov(0; 0)"], "--policy has K = 2 tokens but --ref"),
        (["sequence", "--policy", "bad", "--ref", "bad"], "--policy: spec 'bad'"),
        ([*GRAD, "--lam", "nan"], "--lam must be finite"),
        ([*GRAD, "--reward", "1,2", "--beta", "nan"], "--beta must be a finite number > 0"),
        (["grad", "--policy", "categorical(1)", "--ref", "categorical(0)"], "--policy must have between 2 and"),
        ([*GRAD[:3], "--ref", "categorical(0,0,0)"], "--ref has 3 tokens but --policy has 2"),
        ([*GRAD, "--sampler", "categorical(1)"], "--sampler has 1 token but --policy has 2"),
    ],
)
def test_errors_name_the_flags_the_user_typed(argv, says, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err
    assert says in err, err
    # no core parameter names or module constants
    bare = re.sub(r"--[a-zA-Z][\w-]*", "", err)  # the flags taken out, no core name may be left
    assert not re.search(r"\b(?:[a-z]+_col|path_or_buffer|MAX_[A-Z_]+|lam|length|k|beta|seed)\b", bare), err


def test_a_mask_that_keeps_nothing_names_the_flag(tmp_path, capsys):
    path = tmp_path / "masked.csv"
    path.write_text("a,b,m\n-1,-1,0\n-2,-2,0\n")
    code, _, err = run(["audit", str(path), "--sampler-col", "a", "--other-col", "b", "--mask-col", "m"], capsys)
    assert code == 2 and err.startswith("error: --mask-col keeps none of the 2 tokens")


def test_a_drift_word_in_prose_is_not_a_flag(capsys):
    code, _, err = run(["sequence", "--policy", "markov(0,0; 0,1; 1,0)"], capsys)
    assert code == 2 and "for the drift family" in err


# ------------------------------------------------------------ 4. audit: shares that are not zero


def test_share_never_prints_a_non_zero_share_as_zero():
    share = _common.share
    assert share(0.0) == "0.0%" and share(0.5) == "50.0%" and share(1.2e-5) == "0.0012%"
    assert share(3e-5, 2) == "0.003%" and share(0.0123, 2) == "1.23%"


def test_audit_ess_share_that_is_tiny_is_not_zero(tmp_path, capsys):
    n = 4000
    rng = np.random.default_rng(0)
    sampler = -1.0 - rng.random(n)
    rollout = sampler.copy()
    rollout[0] = -60.0  # one token the rollout policy almost never drew: its weight dwarfs the rest
    path = tmp_path / "ess.csv"
    path.write_text("s,o,r\n" + "\n".join(f"{a},{a - 0.1},{c}" for a, c in zip(sampler, rollout, strict=True)))
    code, out, _ = run(["audit", str(path), "--sampler-col", "s", "--other-col", "o", "--rollout-col", "r"], capsys)
    assert code == 0
    line = next(x for x in out.splitlines() if "ESS =" in x)
    pct = re.search(r"\(([^ ]+) of n\)", line).group(1)
    assert pct != "0.0%" and 0 < float(pct.rstrip("%")) < 0.05, line


def test_audit_neg_fraction_that_is_tiny_is_not_zero(tmp_path, capsys):
    n = 40_000
    path = tmp_path / "neg.csv"
    rows = ["-1,-1.5"] * (n - 1) + ["-1.5,-1"]  # one token with log r > 0: one negative k1
    path.write_text("s,o\n" + "\n".join(rows))
    code, out, _ = run(["audit", str(path), "--sampler-col", "s", "--other-col", "o"], capsys)
    k1 = _audit_row(out, "k1")
    assert k1[4] == "0.0025%", k1


# ------------------------------------------------------------ 5. grad: huge --lam


def test_grad_huge_lam_is_a_clear_error(capsys):
    code, out, err = run(["grad", "--policy", "categorical(1,0,-1)", "--ref", "categorical(0,0,0)", "--lam", "1e308"], capsys)
    assert code == 2 and out == "" and err.startswith("error: --lam must be finite and within ±1,000,000")
    code, out, _ = run(["grad", "--policy", "categorical(1,0,-1)", "--ref", "categorical(0,0,0)", "--lam", "1e6"], capsys)
    assert code == 0 and re.search(r"^k_lambda .* reverse_kl$", out, re.M)


# ------------------------------------------------------------ 6. table --n has a cap


def test_table_n_is_capped_and_ten_million_still_parses(capsys):
    with pytest.raises(SystemExit):  # refused by the parser: nothing is sampled
        cli.build_parser().parse_args(["table", "--n", "1e18"])
    capsys.readouterr()
    code, out, err = run(["table", "--n", "1e18"], capsys)  # it ran for minutes, then ran out of memory
    assert code == 2 and out == "" and "--n" in err and "at most 1,000,000,000" in err
    args = cli.build_parser().parse_args(["table", "--n", "1e7"])
    assert args.n == 10_000_000 and table.MAX_N >= 10_000_000
    assert cli.build_parser().parse_args(["table", "--n", str(table.MAX_N)]).n == table.MAX_N


# ------------------------------------------------------------ 7, 8. "1 row", no negative zero


def test_one_row_is_singular_and_no_percentile_is_negative_zero(tmp_path: Path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("a,b\n-1.0,-1.0\n")  # log r = 0: k1 = −0.0
    code, out, _ = run(["audit", str(path), "--sampler-col", "a", "--other-col", "b"], capsys)
    assert code == 0
    assert "(1 row, all counted)" in out and "1 rows" not in out
    k1 = _audit_row(out, "k1")
    # one token: no SE, std, p95 or p99 (—), and the max is 0, not -0
    assert "-0" not in k1 and k1[2:4] == ["—", "—"] and k1[-3:] == ["—", "—", "0"]


def test_fmt_never_prints_negative_zero():
    fmt = _common.fmt
    assert fmt(-0.0) == "0" and fmt(-0.0, "+.4f") == "+0.0000" and fmt(-1e-300) == "-1e-300"


# ------------------------------------------------------------ a stdev whose square is past a double


def _exact_stdev_cell(out: str, label: str) -> str:
    """The "stdev/true exact" cell of the row starting with ``label`` (--exact-only: after vs and bias)."""
    line = next(line for line in out.splitlines() if line.startswith(label + " "))
    return line[len(label):].split()[2]


@pytest.mark.parametrize(("key", "label", "log_var"), [
    ("k3", "k3", "900"),                       # log(e^{μ²} − 1 − μ²), μ = 30
    ("k_lambda", "kλ (λ=1)", "900"),
    ("k3_pq", "k3 (KL[p‖q])", None),           # e^{μ²}((3μ²/2 − 1)² + μ²) − (μ²/2 − 1)²
])
def test_a_stdev_whose_variance_is_past_a_double_is_printed_not_inf(key, label, log_var, capsys):
    """q = N(0,1), p = N(30,1): Var(k3) = e^{900} − 901 is past a double but σ ≈ e^{450} is not, so
    stdev/true = e^{450}/450 ≈ 6.1e192: it printed "inf", and in fixed point would be 193 digits."""
    import mpmath

    s = mpmath.mpf(900)
    var = {"k3": mpmath.e**s - 1 - s, "k_lambda": mpmath.e**s - 1 - s,
           "k3_pq": mpmath.e**s * ((3 * s / 2 - 1) ** 2 + s) - (s / 2 - 1) ** 2}[key]
    want = float(mpmath.sqrt(var) / 450)
    code, out, _ = run(["table", *FAR, "--exact-only"], capsys)
    assert code == 0
    assert _exact_stdev_cell(out, label) == f"{want:.3e}"  # 4 significant digits, not fixed point
    note = next(line for line in out.splitlines() if line.startswith(f"note ({key}): Var("))
    assert "is past the largest double; the exact stdev/true is worked out in logs" in note
    assert log_var is None or f"= {log_var}" in note
    # the core's note is kept, and stays true: it speaks of the variance
    assert any(line.startswith(f"note ({key}): no error bar") and "is reported as inf" in line
               for line in out.splitlines())
    _, text, _ = run(["table", *FAR, "--exact-only", "--json"], capsys)
    row = next(r for r in json.loads(text)["rows"] if r["estimator"] == key)
    assert row["exact_std_over_true"] == pytest.approx(want, rel=1e-10)


def test_a_stdev_over_true_past_a_double_too_is_printed_from_its_log(capsys):
    """μ = 40: σ/KL = e^{800}/800 ≈ 3.4e344 does not fit a double either: the text prints it from its
    log, --json says inf (a double can't hold it)."""
    import mpmath

    argv = ["table", "--q", "normal(0,1)", "--p", "normal(40,1)", "--exact-only"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    want = mpmath.sqrt(mpmath.e**1600 - 1601) / 800
    exponent = int(mpmath.floor(mpmath.log10(want)))
    assert _exact_stdev_cell(out, "k3") == f"{float(want / mpmath.mpf(10) ** exponent):.3f}e+{exponent}"
    assert any(line.startswith("note (k3): Var(k3) is past") and "printed from its log" in line
               for line in out.splitlines())
    _, text, _ = run([*argv, "--json"], capsys)
    row = next(r for r in json.loads(text)["rows"] if r["estimator"] == "k3")
    assert row["exact_std_over_true"] == "inf"


def test_a_figure_from_1e15_on_prints_4_significant_digits():
    fixed = table._fixed
    assert fixed(0.06666, ".4f") == "0.0667" and fixed(-0.5, "+.4f") == "-0.5000"
    assert fixed(999_999_999_999_999.0, ".4f") == "999999999999999.0000"  # just below the limit
    assert table.FIXED_POINT_LIMIT == 1e15
    assert fixed(2.5e15, "+.4f") == "+2.500e+15" and fixed(-6.0733e192, ".4f") == "-6.073e+192"
    assert fixed(math.inf, ".4f") == "inf" and fixed(None, ".4f") == "—"
    assert fixed(math.inf, ".4f", math.log(10.0) * 344.5) == "3.162e+344"  # from its log, past a double
    near_ten = math.log(9.9999) + 400 * math.log(10.0)  # 9.9999e400: 4 digits round up to the next power
    assert fixed(math.inf, ".4f", near_ten) == "1.000e+401"
