"""Tests for ``python -m kl_core sequence``: JSON keys and values equal the core's,
inf written as "inf", the text table, and bad input as one line with exit code 2.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kl_core.cli import main as cli
from kl_core.cli import sequence
from kl_core.sequences import markov
from kl_core.sequences.estimators import SEQUENCE_KEYS, sequence_report
from kl_core.sequences.markov import drift_pair

ROOT = Path(__file__).resolve().parents[2]
ROW_KEYS = {"name", "exact_mean", "exact_std", "mc_mean", "mc_std", "mc_se"}
POLICY = "markov(0,0.5,-1; 0,1,0; 1,0,-0.5; 0.2,0.2,0)"
REF = "markov(0,0,0; 0,0,0; 0.5,0,0; 0,0,1)"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_holds_the_core_report(capsys) -> None:
    argv = ["sequence", "--policy", POLICY, "--ref", REF, "--T", "6", "--n", "300", "--seed", "4"]
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    rep = sequence_report(POLICY, REF, 6, n=300, seed=4)
    assert data["true_kl"] == rep.exact.true_kl
    assert data["true_kl_reverse"] == rep.exact.true_kl_reverse
    assert data["per_position_kl"] == rep.exact.per_position_kl.tolist()
    assert len(data["per_position_kl"]) == 6
    assert [r["name"] for r in data["rows"]] == list(SEQUENCE_KEYS)
    for got, want in zip(data["rows"], rep.rows, strict=True):
        assert set(got) == ROW_KEYS
        assert got == want.as_dict()
    assert data["T"] == 6 and data["K"] == 3 and data["n"] == 300 and data["seed"] == 4
    assert markov.parse_markov(data["policy"]) == markov.parse_markov(POLICY)


def test_defaults_use_the_drift_family(capsys) -> None:
    code, out, err = run(["sequence", "--exact-only", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    policy, ref = drift_pair()
    assert data["policy"] == policy.spec and data["ref"] == ref.spec
    assert data["T"] == 16 and data["n"] is None
    assert all(r["mc_mean"] is None and r["mc_se"] is None for r in data["rows"])
    code, out, _ = run(
        [
            "sequence",
            "--K",
            "3",
            "--drift",
            "1.5",
            "--placement",
            "first",
            "--exact-only",
            "--json",
        ],
        capsys,
    )
    assert json.loads(out)["policy"] == drift_pair(3, 1.5, "first")[0].spec


def test_help_names_the_family_defaults(capsys) -> None:
    code, out, _ = run(["sequence", "--help"], capsys)
    assert code == 0
    assert f"(default {markov.DEFAULT_K})" in out
    assert sequence.MAX_K == markov.MAX_TOKENS and f"number of tokens, 2 to {markov.MAX_TOKENS}" in out
    assert f"(default {markov.DEFAULT_DRIFT:g})" in out
    assert "drift in every transition (default)" in out and markov.DEFAULT_PLACEMENT == "every"


def test_infinite_variance_is_written_as_the_string_inf(capsys) -> None:
    code, out, err = run(
        ["sequence", "--policy", "markov(0,-30; 0,-30; 0,-30)", "--ref", "markov(0,0; 0,0; 0,0)",
         "--T", "256", "--exact-only", "--json"], capsys
    )  # E[R^2] = e^7325: even its square root, seq_k3's std, exceeds a double
    assert code == 0, err
    data = json.loads(out)
    row = {r["name"]: r for r in data["rows"]}
    assert row["seq_k3"]["exact_std"] == "inf"
    assert isinstance(row["rb"]["exact_std"], float)
    assert any("inf" in n for n in data["notes"])


def test_text_table_shows_every_estimator(capsys) -> None:
    code, out, err = run(["sequence", "--policy", POLICY, "--ref", REF, "--T", "5"], capsys)
    assert code == 0 and err == ""
    rep = sequence_report(POLICY, REF, 5, n=2000, seed=0)
    assert f"KL[policy||ref] = {rep.exact.true_kl:.6g}" in out
    for r in rep.rows:
        line = next(ln for ln in out.splitlines() if ln.startswith(r.name + " "))
        cells = line.split()
        assert cells[2:7] == [
            format(r.exact_mean, ".6g"),
            format(r.exact_std, ".6g"),
            format(r.mc_mean, ".6g"),
            format(r.mc_se, ".3g"),
            format(r.mc_std, ".6g"),
        ]
    assert "t=5:" in out and "Var(sum_k1)/Var(rb)" in out
    code, out, _ = run(["sequence", "--T", "100", "--exact-only"], capsys)
    assert "t=64:" in out and "t=100:" in out and "t=3:" not in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "markov(0,0; 0,0)", "--ref", REF], "policy: spec 'markov(0,0; 0,0)'"),
        (
            ["--policy", POLICY, "--ref", "markov(0,0; 0,0; 0,0)"],
            "--policy has K = 3 tokens but --ref has K = 2",
        ),
        (["--policy", POLICY], "--policy needs --ref too"),
        (["--ref", REF], "--ref needs --policy too"),
        (["--policy", POLICY, "--ref", REF, "--K", "4"], "--K applies to the drift family, not to"),
        (["--policy", POLICY, "--ref", REF, "--K", "4", "--drift", "1"], "--K and --drift apply to the drift family"),
        (["--policy", "normal(0,1)", "--ref", REF], "is not of the form markov("),
        (["--policy", "markov(0,inf; 0,0; 0,0)", "--ref", REF], "'inf' is not a finite number"),
        (["--T", "5000"], "--T must be at most 4,096, got 5,000"),
        (["--n", "2e6"], "--n must be at most 1,000,000"),
        (["--seed", "-1"], "--seed must be >= 0"),
        (["--K", "1"], "--K must be in 2"),
        # --K 0 said "a whole number >= 1", though 1 is refused too: every count out of range gets the range
        (["--K", "0"], "--K must be in 2 … 256, got 0"),
        (["--K", "-3"], "--K must be in 2 … 256, got -3"),
        (["--K", "300"], "--K must be in 2 … 256, got 300"),
        (["--K", "x"], "argument --K: expected a whole number from 2 to 256, got 'x'"),
        (["--K", "2.5"], "argument --K: expected a whole number from 2 to 256, got '2.5'"),
        (["--drift", "nan"], "drift must be finite"),
        (["--T", "0"], "expected a whole number >= 1"),
        (["--n", "abc"], "expected a whole number such as 2000"),
        (["--placement", "last"], "invalid choice: 'last'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(["sequence", *argv], capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err


def test_subprocess_bad_spec_shows_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kl_core", "sequence", "--policy", "markov(1,2; 3)", "--ref", REF],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert "K + 1 = 3 rows are needed" in proc.stderr


def test_subprocess_json_is_strict() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kl_core", "sequence", "--T", "4", "--n", "50", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert len(data["rows"]) == 6 and len(data["per_position_kl"]) == 4


def test_registering_the_command_loads_neither_numpy_nor_scipy() -> None:
    code = (
        "import argparse, sys; import kl_core.cli.sequence as m; "
        "m.register(argparse.ArgumentParser().add_subparsers()); "
        "print('numpy' in sys.modules, 'scipy' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.split() == ["False", "False"], proc.stderr


def test_too_many_sampled_tokens_names_the_flags_and_is_checked_before_the_exact_figures(capsys):
    """The core's limits, one definition (kl_core.sequences.montecarlo.check_sample_size), worded
    with the flags the user typed; checked before the exact figures, which take a while at T = 4096."""
    from kl_core.cli import main as cli

    assert cli.main(["sequence", "--n", "1000000", "--T", "200"]) == 2
    err = capsys.readouterr().err
    assert "--n × --T = 200,000,000 tokens is more than 100,000,000; lower --n or --T" in err
    assert cli.main(["sequence", "--n", "1000000", "--T", "200", "--exact-only"]) == 0  # n unused
