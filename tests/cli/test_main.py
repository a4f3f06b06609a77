"""Tests for ``python -m kl_core``: JSON shapes, exact-only runs, errors as one line.

Most tests call :func:`kl_core.cli.main.main` in-process; two run the module in a
subprocess to check what a user sees (exit code, stderr, no traceback).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import types
from pathlib import Path

import pytest

from kl_core.cli import main as cli
from kl_core.cli._common import Command
from kl_core.cli.table import TABLE_KEYS
from kl_core.estimation.distributions import parse
from kl_core.estimation.divergences import DIVERGENCES
from kl_core.estimation.exact import estimator_moments, kl, lambda_star, optimal_lambda
from kl_core.estimation.published import SCHULMAN_2020
from kl_core.estimation.reliability import error_bar_check

ROOT = Path(__file__).resolve().parents[2]
ROW_KEYS = {
    "estimator",
    "mc_mean",
    "mc_bias_over_true",
    "mc_std_over_true",
    "exact_mean",
    "exact_bias_over_true",
    "exact_std_over_true",
    "neg_fraction",
    "se_reliable",
    "note",
}
#: The row keys added so that the JSON carries every column and note of the text table.
TEXT_ROW_KEYS = {"name", "lam", "target_name", "mc_se_over_true", "exact_log_var", "exact_log_std_over_true", "notes"}
MC_KEYS = {"mc_mean", "mc_bias_over_true", "mc_std_over_true", "neg_fraction"}
#: The top-level keys of ``table --json``: the figures, then the inputs, the notes and Schulman's figures.
TABLE_KEYS_JSON = {"true_kl", "true_kl_pq", "rows", "optimal_lambda", "optimal_lambda_note",
                   "q", "p", "n", "seed", "lam", "exact_only", "notes", "published"}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    return json.loads(out)


# ------------------------------------------------------------ table


def test_table_json_keys_and_values(capsys: pytest.CaptureFixture[str]) -> None:
    n = 20_000
    data = _json(["table", "--n", str(n), "--seed", "3", "--json"], capsys)
    assert set(data) == TABLE_KEYS_JSON
    assert [r["estimator"] for r in data["rows"]] == list(TABLE_KEYS)
    q, p = SCHULMAN_2020[0].q, SCHULMAN_2020[0].p  # the defaults are his first experiment
    assert data["true_kl"] == kl(q, p)
    assert data["optimal_lambda"] == optimal_lambda(q, p)
    for r in data["rows"]:
        assert set(r) == ROW_KEYS | TEXT_ROW_KEYS
        assert all(isinstance(r[k], float) for k in ROW_KEYS - {"estimator", "se_reliable", "note"})
        # Schulman's first table: every error bar is reliable, nothing to note
        assert r["se_reliable"] is True and r["note"] == ""
        m = estimator_moments(
            r["estimator"], q, p, lam=1.0 if r["estimator"] == "k_lambda" else None
        )
        assert r["exact_mean"] == m.mean
        # the MC mean is within 4 standard errors of the exact mean
        assert abs(r["mc_mean"] - m.mean) <= 4 * m.std / math.sqrt(n)
        assert r["mc_bias_over_true"] == pytest.approx(
            (r["mc_mean"] - data["true_kl"]) / data["true_kl"]
        )
    k1 = data["rows"][0]
    assert 0.3 < k1["neg_fraction"] < 0.7  # k1 is negative about half the time when p ≈ q


def test_table_exact_only_does_not_sample(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import kl_core.estimation.montecarlo

    def no_sampling(*args: object, **kwargs: object) -> None:
        raise AssertionError("--exact-only must not sample")

    monkeypatch.setattr(kl_core.estimation.montecarlo, "simulate", no_sampling)
    data = _json(
        ["table", "--q", "normal(0,1)", "--p", "normal(1,1)", "--exact-only", "--json"], capsys
    )
    assert data["true_kl"] == 0.5
    assert data["optimal_lambda"] == pytest.approx(1 / (math.e - 1), rel=1e-10)
    for r in data["rows"]:
        assert set(r) == ROW_KEYS | TEXT_ROW_KEYS
        assert all(r[k] is None for k in MC_KEYS | {"mc_se_over_true"})
        assert isinstance(r["exact_mean"], float)
    k2 = next(r for r in data["rows"] if r["estimator"] == "k2")
    assert k2["exact_bias_over_true"] == pytest.approx(0.25, rel=1e-10)


def test_table_json_writes_inf_as_a_string_and_nan_as_null(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # q = N(0,1), p = N(0,2²): E_q[r²] = ∞, so Var(k3) = ∞
    data = _json(["table", "--p", "normal(0,2)", "--exact-only", "--json"], capsys)
    k3 = next(r for r in data["rows"] if r["estimator"] == "k3")
    assert k3["exact_std_over_true"] == "inf"
    # p == q: the true KL is 0 and no ratio to it exists
    data = _json(["table", "--p", "normal(0,1)", "--exact-only", "--json"], capsys)
    assert data["true_kl"] == 0.0
    assert all(r["exact_bias_over_true"] is None for r in data["rows"])


def test_table_lam_reaches_k_lambda(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        [
            "table",
            "--q",
            "normal(0,1)",
            "--p",
            "normal(1,1)",
            "--lam",
            "0",
            "--exact-only",
            "--json",
        ],
        capsys,
    )
    rows = {r["estimator"]: r for r in data["rows"]}
    assert rows["k_lambda"]["exact_std_over_true"] == pytest.approx(
        rows["k1"]["exact_std_over_true"]
    )


@pytest.mark.parametrize("exp", SCHULMAN_2020, ids=lambda e: f"mu={e.p.mu:g}")
def test_table_shows_schulmans_numbers_for_his_experiments(
    exp, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(["table", "--q", exp.q.spec, "--p", exp.p.spec, "--exact-only"], capsys)
    assert code == 0
    assert "Schulman" in out
    lines = out.splitlines()
    for row in exp.rows:
        line = next(ln for ln in lines if ln.startswith(row.estimator + " "))
        assert row.bias.text in line.split() and row.std.text in line.split()
    # the table is aligned: every row of it has the header's width or less
    header = next(ln for ln in lines if ln.startswith("estimator"))
    rule = lines[lines.index(header) + 1]
    assert set(rule.replace(" ", "")) == {"-"}


@pytest.mark.parametrize("exp", SCHULMAN_2020, ids=lambda e: f"mu={e.p.mu:g}")
@pytest.mark.parametrize("n", ["1000", "1e7"])
def test_schulmans_tables_are_not_flagged_at_his_n_and_the_apps(
    exp, n: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(["table", "--q", exp.q.spec, "--p", exp.p.spec, "--n", n, "--exact-only", "--json"], capsys)
    for r in data["rows"]:
        if r["estimator"] in ("k1", "k2", "k3"):
            assert r["se_reliable"] is True, r
            assert r["note"] == ""


def test_unreliable_error_bars_are_flagged_with_a_note(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 11, part 4: N(0,1) against N(3,1), n = 10,000: k3's band held the KL in 76.5% of runs."""
    argv = ["table", "--p", "normal(3,1)", "--n", "10000", "--json"]
    rows = {r["estimator"]: r for r in _json(argv, capsys)["rows"]}
    assert rows["k1"]["se_reliable"] is True and rows["k2"]["se_reliable"] is True
    for key in ("k3", "k_lambda", "k3_pq"):
        assert rows[key]["se_reliable"] is False
        assert rows[key]["note"].startswith("unreliable error bar")
        check = error_bar_check(key, parse("normal(0,1)"), parse("normal(3,1)"), 10_000, lam=1.0)
        assert rows[key]["note"] == check.note
    assert "the exact SD is 89.96" in rows["k3"]["note"]
    # the text table marks the ±SE and prints the note
    code, out, _ = _run(argv[:-1], capsys)
    assert code == 0
    k3_line = next(ln for ln in out.splitlines() if ln.startswith("k3 "))
    assert " !" in k3_line
    assert "note (k3): unreliable error bar for k3 at N = 10,000" in out
    assert "! = that ± SE cannot be trusted" in out


def test_infinite_fourth_moment_is_flagged(capsys: pytest.CaptureFixture[str]) -> None:
    # k3_pq for N(0,1) against N(0,1.4): E_q[r⁴] = ∞ (1.4 > 2/√3), though Var is finite
    data = _json(["table", "--p", "normal(0,1.4)", "--n", "1000", "--exact-only", "--json"], capsys)
    k3_pq = next(r for r in data["rows"] if r["estimator"] == "k3_pq")
    assert isinstance(k3_pq["exact_std_over_true"], float)
    assert k3_pq["se_reliable"] is False
    assert "fourth moment is infinite" in k3_pq["note"]


def test_undefined_optimal_lambda_is_null_in_json_and_undefined_in_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 11, part 5: t(3) against N(0,1) has Var(log r) = ∞, so no λ helps."""
    argv = ["table", "--q", "t(3,0,1)", "--p", "normal(0,1)", "--exact-only"]
    data = _json([*argv, "--json"], capsys)
    assert data["optimal_lambda"] is None
    code, out, _ = _run(argv, capsys)
    assert code == 0
    assert "optimal λ* = undefined" in out
    note = lambda_star(parse("t(3,0,1)"), parse("normal(0,1)")).note
    assert f"note (λ*): {note}" in out
    assert "Var(log r) is infinite" in note


def test_small_df_student_t_table(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 11, part 1: this table used to stop with 'quadrature did not converge'."""
    data = _json(["table", "--exact-only", "--q", "t(0.3,0,1)", "--p", "t(1,0,1)", "--json"], capsys)
    rows = {r["estimator"]: r for r in data["rows"]}
    # Var(k1) = 4.2394489 and Var(k3) = 2.5423721 (mpmath, tests/reference/make_edge_refs.py)
    true = data["true_kl"]
    assert (rows["k1"]["exact_std_over_true"] * true) ** 2 == pytest.approx(4.2394489, rel=1e-7)
    assert (rows["k3"]["exact_std_over_true"] * true) ** 2 == pytest.approx(2.5423721, rel=1e-7)


def test_kl_of_small_df_t(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(["kl", "--q", "t(0.2,0,1)", "--p", "t(1,0,1)", "--json"], capsys)
    assert data["kl_qp"] == pytest.approx(1.80673538187916, rel=1e-12)


def test_table_human_output_with_monte_carlo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["table", "--n", "5000"], capsys)
    assert code == 0
    assert "n = 5,000" in out and "bias/true MC" in out and "P(k<0) MC" in out
    assert "cannot be trusted" not in out and "note (" not in out  # Schulman's first table


def test_table_without_a_published_experiment_has_no_schulman_column(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(
        ["table", "--q", "laplace(0,1)", "--p", "laplace(1,1)", "--exact-only"], capsys
    )
    assert code == 0
    header = next(ln for ln in out.splitlines() if ln.startswith("estimator"))
    assert "Schulman" not in header
    assert "(Schulman:" not in out


# ------------------------------------------------------------ kl


def test_kl_json(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(["kl", "--q", "normal(0,1)", "--p", "normal(1,1)", "--json"], capsys)
    assert set(data) == {"kl_qp", "kl_pq", "f_divergences", "notes"}
    assert data["kl_qp"] == 0.5 and data["kl_pq"] == 0.5
    assert set(data["f_divergences"]) == set(DIVERGENCES)
    assert data["f_divergences"]["pearson"] == pytest.approx(math.e - 1, rel=1e-9)


def test_kl_json_writes_inf_as_a_string(capsys: pytest.CaptureFixture[str]) -> None:
    # KL[Cauchy ‖ N(0,1)] = ∞ because the Cauchy has no variance
    data = _json(["kl", "--q", "normal(0,1)", "--p", "t(1,0,1)", "--json"], capsys)
    assert data["kl_pq"] == "inf"
    assert isinstance(data["kl_qp"], float)


def test_kl_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["kl", "--q", "categorical(0,1,2)", "--p", "categorical(2,1,0)"], capsys)
    assert code == 0
    assert "KL[q‖p]" in out and "KL[p‖q]" in out
    for key in DIVERGENCES:
        assert any(ln.strip().startswith(key + " ") for ln in out.splitlines())


# ------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["table", "--q", "normal(0,-1)", "--exact-only"],
            "spec 'normal(0,-1)': sigma must be > 0",
        ),
        (["table", "--p", "nonsense", "--exact-only"], "spec 'nonsense'"),
        (["kl", "--p", "categorical(0,1)"], "both be continuous or both be categorical"),
        (["table", "--n", "0"], "--n"),
        (["table", "--n", "many"], "--n"),
        (["table", "--seed", "x"], "--seed"),
        (["table", "--seed", "-1", "--n", "10"], "seed"),
        (["table", "--lam", "nan", "--n", "10"], "lam"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(argv, capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err
    assert "Traceback" not in err


def test_bad_spec_in_a_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kl_core", "table", "--q", "normal(0,-1)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip() == "error: --q: spec 'normal(0,-1)': sigma must be > 0, got -1.0"


def test_json_in_a_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kl_core", "kl", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"kl_qp", "kl_pq", "f_divergences", "notes"}
    assert data["kl_qp"] == pytest.approx(0.005)


# ------------------------------------------------------------ start-up


HEAVY = ("scipy", "pandas", "pyarrow", "streamlit", "altair", "hydra", "omegaconf", "antlr4")


# Runs the package as `python -m kl_core ARGS` does, then lists sys.modules.
# (-X importtime cannot: it does not see modules loaded by importlib.import_module.)
# kl_core/__main__.py ends with os._exit, which here must come back to the probe.
_PROBE = """
import json, os, runpy, sys


def back_to_the_probe(code):
    raise SystemExit(code)


os._exit = back_to_the_probe
sys.argv = ["kl_core", *json.loads(sys.argv[1])]
code = 0
try:
    runpy.run_module("kl_core", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
print("MODULES", json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def _imported_modules(argv: list[str]) -> set[str]:
    """Every module a ``python -m kl_core ARGV`` process has imported when it ends."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("MODULES ")
    return set(json.loads(last.removeprefix("MODULES ")))


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["table", "--n", "3000"], ["table", "--exact-only", "--json"], ["kl"]],
    ids=["help", "table", "table-exact", "kl"],
)
def test_gaussian_commands_import_no_heavy_module(argv: list[str]) -> None:
    modules = _imported_modules(argv)
    assert {"numpy", "kl_core.cli.main", "kl_core.cli.audit"} <= modules  # the listing is real
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


def test_registration_imports_no_heavy_module() -> None:
    code = (
        "import sys\n"
        "from kl_core.cli import main as cli\n"
        "cli.build_parser()\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# ------------------------------------------------------------ extending


def test_a_command_is_added_with_one_registration_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    mod = types.ModuleType("kl_fake_command")

    def register(subparsers) -> None:
        sp = subparsers.add_parser("hello", help="say hello")
        cli.add_pair_arguments(sp, "normal(0,1)", "normal(1,1)")
        sp.set_defaults(handler=lambda args: print(cli.parse_pair(args)[1].spec) or 0)

    mod.register = register
    monkeypatch.setitem(sys.modules, "kl_fake_command", mod)
    monkeypatch.setattr(cli, "SUBCOMMANDS", (*cli.SUBCOMMANDS, "kl_fake_command:register"))
    code, out, _ = _run(["hello"], capsys)
    assert (code, out.strip()) == (0, "normal(1,1)")
    code, _, err = _run(["hello", "--p", "normal(0,0)"], capsys)
    assert code == 2 and err.startswith("error: --p: spec 'normal(0,0)'")


def test_a_command_module_is_one_register_helper_call(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def arguments(sp) -> None:
        cli.add_pair_arguments(sp, "normal(0,1)", "normal(2,1)")

    mod = types.ModuleType("kl_fake_command2")
    mod.register = Command(
        name="hello2",
        help="say hello",
        description="Say the target's spec.",
        arguments=arguments,
        handler=lambda args: print(cli.parse_pair(args)[1].spec) or 0,
    )
    monkeypatch.setitem(sys.modules, "kl_fake_command2", mod)
    monkeypatch.setattr(cli, "SUBCOMMANDS", (*cli.SUBCOMMANDS, "kl_fake_command2:register"))
    code, out, _ = _run(["hello2"], capsys)
    assert (code, out.strip()) == (0, "normal(2,1)")
    code, out, _ = _run(["hello2", "--help"], capsys)
    assert code == 0 and "Say the target's spec." in out and "--q SPEC" in out


def test_every_command_registers_through_the_one_helper() -> None:
    import importlib

    names = []
    for entry in cli.SUBCOMMANDS:
        module, _, attr = entry.partition(":")
        register = getattr(importlib.import_module(module), attr)
        assert isinstance(register, Command), entry
        names.append(register.name)
    assert names == ["table", "kl", "audit", "sequence", "grad", "doctor", "quiz"]


def test_json_value() -> None:
    assert cli.json_value({"a": [math.inf, -math.inf, math.nan, 1.5, "x", None]}) == {
        "a": ["inf", "-inf", None, 1.5, "x", None]
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["table", "--lam", "-1e14", "--exact-only"],  # argparse took "-1e14" for an option
        ["grad", "--policy", "categorical(0,0,0)", "--ref", "categorical(0,1,0)", "--reward", "-1,0,1",
         "--beta", "0.1"],  # a negative first reward, likewise
        ["table", "--lam", "-.5", "--exact-only"],
    ],
)
def test_a_negative_value_in_scientific_or_list_form_is_a_value(argv, capsys):
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert "expected one argument" not in capsys.readouterr().err


def test_negative_values_are_attached_only_to_long_options():
    attach = cli._negative_values_attached
    assert attach(["table", "--lam", "-1e14"]) == ["table", "--lam=-1e14"]
    assert attach(["grad", "--reward", "-1,0,1", "--beta", "0.1"]) == ["grad", "--reward=-1,0,1", "--beta", "0.1"]
    assert attach(["table", "--lam=-2", "-3"]) == ["table", "--lam=-2", "-3"]  # already given a value
    assert attach(["doctor", "--", "-1.sh"]) == ["doctor", "--", "-1.sh"]  # after --: a file name
    assert attach(["table", "--q", "normal(0,1)"]) == ["table", "--q", "normal(0,1)"]
