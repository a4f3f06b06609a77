"""Tests for ``python -m kl_core grad``: the JSON the issue specifies, the core's numbers, errors as one line."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kl_core.cli import main as cli
from kl_core.estimation.distributions import parse
from kl_core.gradients.expected import BASIC_OPTIONS, entry_name, gradient_table, loss_entries
from kl_core.gradients.flow import analytic_optima, training_run

ROOT = Path(__file__).resolve().parents[2]
POLICY = "categorical(1,0,-1,0.5,0,0)"
REF = "categorical(0,0,0,0,0,0)"
OLD = "categorical(0.6,0.2,-0.5,0.5,0,-0.3)"
REWARD = "1,0.2,0.5,-0.3,0,0.8"
ROW_KEYS = {"name", "library", "option", "expected_grad", "cos_reverse", "cos_forward", "grad_spread",
            "grad_norm", "target"}
#: The top-level keys without --reward: the figures, the λ used and the specs read.
TOP_KEYS = {"true_grad", "rows", "lambda_grad_opt", "lambda_value_opt", "lambda_used", "policy", "ref", "sampler",
            "on_policy"}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code, out, err = _run([*argv, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_json_keys_and_rows(capsys):
    data = _json(["grad", "--policy", POLICY, "--ref", REF], capsys)
    assert set(data) == TOP_KEYS
    assert set(data["true_grad"]) == {"reverse_kl", "forward_kl"}
    names = [r["name"] for r in data["rows"]]
    assert names == [*BASIC_OPTIONS, *(entry_name(e) for e in loss_entries())]
    for name in ("verl:low_var_kl", "verl:k3+", "OpenRLHF:k3", "TRL:beta"):
        assert name in names
    for r in data["rows"]:
        assert set(r) == ROW_KEYS and len(r["expected_grad"]) == 6
    lib = {r["name"]: r for r in data["rows"]}
    assert (lib["k2"]["library"], lib["k2"]["option"]) == (None, None)
    assert (lib["verl:k3+"]["library"], lib["verl:k3+"]["option"]) == ("verl", "k3+")


def test_json_has_every_column_of_the_text_the_lambda_used_and_the_specs(capsys):
    """The text's "expected gradient is" and ‖E g‖ columns, "k_lambda uses λ = 0.3" and the three specs
    were missing from --json."""
    argv = ["grad", "--policy", "categorical(1,0,-1)", "--ref", "categorical(0,0,0)", "--lam", "0.3",
            "--sampler", "categorical(0,0,1)"]
    code, text, err = _run(argv, capsys)
    assert code == 0, err
    data = _json(argv, capsys)
    assert data["lambda_used"] == pytest.approx(0.3) and "k_lambda uses λ = 0.3;" in text
    assert (data["policy"], data["ref"], data["sampler"]) == (
        "categorical(1,0,-1)", "categorical(0,0,0)", "categorical(0,0,1)")
    assert data["on_policy"] is False
    table = gradient_table(parse("categorical(1,0,-1)"), parse("categorical(0,0,0)"),
                           sampler=parse("categorical(0,0,1)"), lam=0.3)
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("---"))
    lines = lines[start + 1 : lines.index("", start)]  # the table's body
    for got, row in zip(data["rows"], table.rows, strict=True):
        assert got["target"] == row.target
        assert got["grad_norm"] == pytest.approx(float(np.linalg.norm(row.expected_grad)), rel=1e-12)
        (line,) = [ln for ln in lines if ln.split()[:1] == [got["name"]]]
        cells = line.split()
        assert cells[-1] == got["target"]  # the "expected gradient is" column
        assert float(cells[-2]) == pytest.approx(got["grad_norm"], rel=1e-3)  # ‖E g‖, to 4 digits
    assert {r["target"] for r in data["rows"]} <= {"reverse_kl", "forward_kl", "zero", "mixed"}
    on = _json(["grad", "--policy", POLICY, "--ref", REF], capsys)
    assert on["sampler"] is None and on["on_policy"] is True
    assert on["lambda_used"] == on["lambda_grad_opt"]  # no --lam: the gradient-optimal λ
    rows = {r["name"]: r for r in on["rows"]}
    assert rows["k1"]["grad_norm"] < 1e-12 and rows["k1"]["target"] == "zero"  # on-policy E∇k1 = 0 (to rounding)
    assert rows["k2"]["target"] == "reverse_kl" and rows["k3"]["target"] == "forward_kl"


def test_json_values_are_the_cores(capsys):
    data = _json(["grad", "--policy", POLICY, "--ref", REF, "--sampler", OLD, "--lam", "0.3"], capsys)
    table = gradient_table(parse(POLICY), parse(REF), sampler=parse(OLD), lam=0.3)
    np.testing.assert_allclose(data["true_grad"]["reverse_kl"], table.true_reverse, rtol=1e-15)
    np.testing.assert_allclose(data["true_grad"]["forward_kl"], table.true_forward, rtol=1e-15)
    assert data["lambda_grad_opt"] == pytest.approx(table.lam_grad_opt, rel=1e-15)
    assert data["lambda_value_opt"] == pytest.approx(table.lam_value_opt, rel=1e-15)
    for got, row in zip(data["rows"], table.rows, strict=True):
        assert got["name"] == row.name
        np.testing.assert_allclose(got["expected_grad"], row.expected_grad, rtol=1e-15, atol=1e-300)
        assert got["grad_spread"] == pytest.approx(row.grad_spread, rel=1e-15)


def test_lam_defaults_to_the_gradient_optimum(capsys):
    data = _json(["grad", "--policy", POLICY, "--ref", REF], capsys)
    table = gradient_table(parse(POLICY), parse(REF), lam=data["lambda_grad_opt"])
    k_lambda = next(r for r in data["rows"] if r["name"] == "k_lambda")
    assert k_lambda["grad_spread"] == pytest.approx(table.row("k_lambda").grad_spread, rel=1e-12)


def test_cosine_with_a_zero_vector_is_null(capsys):
    data = _json(["grad", "--policy", POLICY, "--ref", REF], capsys)
    rows = {r["name"]: r for r in data["rows"]}
    for name in ("k1", "verl:kl", "OpenRLHF:k1"):  # on-policy E∇k1 = 0
        assert rows[name]["cos_reverse"] is None and rows[name]["cos_forward"] is None
    assert rows["k2"]["cos_reverse"] == pytest.approx(1.0, abs=1e-12)
    assert rows["k3"]["cos_forward"] == pytest.approx(1.0, abs=1e-12)
    # π_θ = π_ref: every true gradient is zero, so every cosine is null
    same = _json(["grad", "--policy", REF, "--ref", REF], capsys)
    assert all(r["cos_reverse"] is None and r["cos_forward"] is None for r in same["rows"])


def test_reward_adds_optima_and_fixed_points(capsys):
    data = _json(["grad", "--policy", POLICY, "--ref", REF, "--reward", REWARD, "--beta", "0.5"], capsys)
    assert {"optimum", "fixed_points", "fixed_point_notes"} <= set(data)
    assert set(data) == TOP_KEYS | {"optimum", "fixed_points", "fixed_point_notes", "reward", "beta"}
    assert data["reward"] == pytest.approx([float(x) for x in REWARD.split(",")]) and data["beta"] == 0.5
    r = [float(x) for x in REWARD.split(",")]
    rev, fwd = analytic_optima(parse(REF), r, 0.5)
    np.testing.assert_allclose(data["optimum"]["reverse_kl"], rev, rtol=1e-15)
    np.testing.assert_allclose(data["optimum"]["forward_kl"], fwd, rtol=1e-15)
    fp, notes = data["fixed_points"], data["fixed_point_notes"]
    assert list(fp) == [row["name"] for row in data["rows"]]
    np.testing.assert_allclose(fp["k2"], rev, rtol=1e-8)
    np.testing.assert_allclose(fp["verl:k3+"], rev, rtol=1e-8)
    np.testing.assert_allclose(fp["k3"], fwd, rtol=1e-8)
    assert fp["k1"] is None and "no interior fixed point" in notes["k1"]
    assert set(notes) == {name for name, v in fp.items() if v is None}
    run = training_run("k3_pq", parse(POLICY), parse(REF), r, 0.5)
    np.testing.assert_allclose(fp["k3_pq"], run.fixed_point, rtol=1e-12)


def test_human_output(capsys):
    code, out, _ = _run(["grad", "--policy", POLICY, "--ref", REF, "--reward", REWARD, "--beta", "0.5"], capsys)
    assert code == 0
    assert "∇KL[π_θ‖π_ref] (reverse_kl)" in out and "value-optimal λ*" in out
    assert "verl:low_var_kl" in out and "forward_kl" in out
    assert "optimum for KL[π‖π_ref]" in out and "no interior fixed point" in out


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--policy", POLICY, "--ref", "categorical(0,0,0)"], "--ref has 3 tokens but --policy has 6; they must match"),
        (["--policy", POLICY, "--ref", REF, "--sampler", "categorical(0,0)"], "--sampler has 2 tokens but --policy has 6"),
        (["--policy", "normal(0,1)", "--ref", REF], "--policy must be a categorical"),
        (["--policy", "categorical(a,b)", "--ref", REF], "--policy:"),
        (["--policy", POLICY, "--ref", REF, "--reward", REWARD, "--beta", "0"], "--beta must be a finite number > 0"),
        (["--policy", POLICY, "--ref", REF, "--reward", REWARD, "--beta", "-1"], "--beta must be a finite number > 0"),
        (["--policy", POLICY, "--ref", REF, "--reward", "1,2", "--beta", "1"], "--reward must have one value per token"),
        (["--policy", POLICY, "--ref", REF, "--reward", "1,x,0,0,0,0", "--beta", "1"], "--reward must be"),
        (["--policy", POLICY, "--ref", REF, "--reward", REWARD], "--reward and --beta go together"),
        (["--policy", POLICY, "--ref", REF, "--lam", "nan"], "--lam must be finite"),
        # an empty value is not skipped: "1,,2" is not two numbers
        (["--policy", POLICY, "--ref", REF, "--reward", "1,0.2,,0.5,-0.3,0,0.8", "--beta", "1"],
         "--reward must be 6 comma-separated numbers, got '1,0.2,,0.5,-0.3,0,0.8': value 3 is empty"),
        (["--policy", POLICY, "--ref", REF, "--reward", REWARD + ",", "--beta", "1"], "value 7 is empty"),
        (["--policy", POLICY, "--ref", REF, "--reward", "1, ,0.2,0.5,-0.3,0,0.8", "--beta", "1"], "value 2 is empty"),
        # the training runs' refusal of a small β names the flag
        (["--policy", POLICY, "--ref", REF, "--reward", REWARD, "--beta", "1e-4"],
         "--beta must be at least (max R - min R)/500 = 0.0026 for this reward, got 0.0001"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, match, capsys):
    code, out, err = _run(["grad", *argv], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert match in err


def test_the_largest_rewards_are_accepted_without_warnings():
    # (max R − min R)/500 = 4e305 ≤ β = 1e307; max R − min R overflowed and the bound read "inf".
    res = subprocess.run(
        [sys.executable, "-m", "kl_core", "grad", "--policy", "categorical(1,0,-1)", "--ref", "categorical(0,0,0)",
         "--reward", "1e308,-1e308,0", "--beta", "1e307", "--json"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert res.returncode == 0 and res.stderr == ""
    data = json.loads(res.stdout)
    rev, fwd = analytic_optima(np.zeros(3), [10.0, -10.0, 0.0], 1.0)  # R/β is all that matters
    np.testing.assert_allclose(data["fixed_points"]["k2"], rev, rtol=1e-8)
    np.testing.assert_allclose(data["fixed_points"]["k3"], fwd, rtol=1e-8)


def test_the_beta_bound_is_given_as_a_number_at_the_largest_rewards(capsys):
    code, _, err = _run(["grad", "--policy", "categorical(1,0,-1)", "--ref", "categorical(0,0,0)",
                         "--reward", "1e308,-1e308,0", "--beta", "1e305"], capsys)
    assert code == 2
    assert err.startswith("error: --beta must be at least (max R - min R)/500 = 4e+305 for this reward, got 1e+305")


def test_a_common_scale_of_reward_and_beta_changes_nothing(capsys):
    # --reward 1e200,-1e200,0 --beta 1e198 is --reward 100,-100,0 --beta 1 times 1e198: k3_pq once
    # found no fixed point there.
    base = ["grad", "--policy", "categorical(1,0,-1)", "--ref", "categorical(0,0,0)"]
    small = _json([*base, "--reward", "100,-100,0", "--beta", "1"], capsys)
    huge = _json([*base, "--reward", "1e200,-1e200,0", "--beta", "1e198"], capsys)
    assert huge["fixed_point_notes"].keys() == small["fixed_point_notes"].keys()
    assert huge["fixed_points"]["k3_pq"] is not None
    for name, fp in small["fixed_points"].items():
        if fp is not None:
            np.testing.assert_allclose(huge["fixed_points"][name], fp, rtol=1e-8, err_msg=name)
    for key in ("reverse_kl", "forward_kl"):
        np.testing.assert_allclose(huge["optimum"][key], small["optimum"][key], rtol=1e-12)


def test_module_import_is_light():
    # `python -m kl_core --help` must stay fast: importing the command's module pulls in no scipy.
    code = "import sys, kl_core.cli.grad; print('scipy' in sys.modules, 'numpy' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert res.stdout.split() == ["False", "False"]


def test_subprocess_error_has_no_traceback():
    res = subprocess.run(
        [sys.executable, "-m", "kl_core", "grad", "--policy", POLICY, "--ref", "categorical(0,0)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().startswith("error: --ref has 2 tokens but --policy has 6")


# --------------------------------------------------------------------------- #
# A nearly one-hot policy: true numbers and words, checked against mpmath
# --------------------------------------------------------------------------- #
def _mp_sci(x) -> str:
    """x as Python's format(x, ".4g") writes it, also past a double (mpmath: the value is exact)."""
    import mpmath as mp

    with mp.workdps(50):
        e = int(mp.floor(mp.log10(abs(x))))
        mant = float(abs(x) / mp.mpf(10) ** e)
        if float(format(mant, ".4g")) >= 10.0:
            mant, e = mant / 10, e + 1
        return f"{'-' if x < 0 else ''}{format(mant, '.4g')}e{'+' if e >= 0 else '-'}{abs(e):02d}"


def _mp_one_hot(gap: float):
    """∇KL[π‖ρ] and λ* = (KL[ρ‖π] + KL[π‖ρ])/χ²(ρ‖π) for π = softmax(0, gap, 0), ρ uniform."""
    import mpmath as mp

    with mp.workdps(600):
        lse = gap + mp.log(1 + 2 * mp.e ** (-gap))
        lp = [-lse, gap - lse, -lse]
        lr = [-mp.log(3)] * 3
        pi = [mp.e**x for x in lp]
        k1 = [a - b for a, b in zip(lp, lr, strict=True)]
        ek1 = mp.fsum(p * k for p, k in zip(pi, k1, strict=True))
        rev = [p * (k - ek1) for p, k in zip(pi, k1, strict=True)]
        sym = mp.fsum((mp.mpf(1) / 3 - p) * (b - a) for p, a, b in zip(pi, lp, lr, strict=True))
        chi2 = mp.fsum((mp.mpf(1) / 3 - p) ** 2 / p for p in pi)
        return rev, sym / chi2


def _line(out: str, name: str) -> list[str]:
    return next(line for line in out.splitlines() if line.split() and line.split()[0] == name).split()


@pytest.mark.parametrize("gap", [400.0, 800.0])
def test_k2_row_at_a_nearly_one_hot_policy_says_reverse_kl_with_its_norm(gap, capsys):
    # was: "k2  —  —  1.104e-84  0  zero" (the squares of ~1e-171 underflowed in the CLI's norm)
    import mpmath as mp

    code, out, _ = _run(["grad", "--policy", f"categorical(0,{gap:g},0)", "--ref", "categorical(0,0,0)"], capsys)
    assert code == 0
    rev, lam_value = _mp_one_hot(gap)
    with mp.workdps(600):
        norm = mp.sqrt(mp.fsum(x * x for x in rev))
    cells = _line(out, "k2")
    assert cells[1:3] == ["+1.0000", "+1.0000"] and cells[-1] == "reverse_kl"
    assert cells[4] == _mp_sci(norm)
    reverse = next(line for line in out.splitlines() if line.startswith("∇KL[π_θ‖π_ref]"))
    assert reverse.endswith("[" + ", ".join(_mp_sci(x) for x in rev) + "]")
    # λ* ≈ 2.3e-171 at 400, 8.8e-345 at 800 (was printed 0), in 6 significant digits
    printed = out.split("value-optimal λ* = ")[1].split()[0]
    mantissa, exponent = printed.split("e")
    with mp.workdps(50):
        assert mp.mpf(mantissa) * mp.mpf(10) ** int(exponent) == pytest.approx(lam_value, rel=1e-5)


def test_a_spread_past_a_double_is_printed_from_its_log(capsys):
    # k3 at logit gap 2000: spread ≈ 2·e^{L/2 − log 3}/√… ≈ 1.3e+434, was printed "inf"
    code, out, _ = _run(["grad", "--policy", "categorical(0,2000,0)", "--ref", "categorical(0,0,0)"], capsys)
    assert code == 0
    table = gradient_table(parse("categorical(0,2000,0)"), parse("categorical(0,0,0)"))
    spread = _line(out, "k3")[3]
    assert spread != "inf" and spread.endswith("e+434")
    mantissa = float(spread.split("e")[0])
    assert math.log(mantissa) + 434 * math.log(10) == pytest.approx(table.row("k3").log_grad_spread, rel=1e-6)


def test_a_sampler_far_from_the_policy_is_not_an_error(capsys):
    # was: "error: grad contains NaN" (k3's s·c ≈ −e^{737.8}/… is past a double)
    code, out, err = _run(["grad", "--policy", "categorical(0,740,0)", "--ref", "categorical(0,0,0)",
                           "--sampler", "categorical(0,0,0)"], capsys)
    assert code == 0, err
    assert "inf" not in out and "OpenRLHF:k1+unbiased_gradient" in out


def test_json_gives_the_log_of_each_figure_a_double_cannot_hold(capsys):
    """Logits 800 apart: ∇KL[π_θ‖π_ref], k2's expected gradient and λ* are 0 in doubles, and the JSON said
    only that; each now has its log beside it.  The logs are the core's (checked against mpmath at 600
    digits in tests/gradients/test_underflow_gradients.py); the figures quoted are mpmath's."""
    assert cli.main(["grad", "--policy", "categorical(0,800,0)", "--ref", "categorical(0,0,0)", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    table = gradient_table(parse("categorical(0,800,0)"), parse("categorical(0,0,0)"))
    assert data["true_grad"]["reverse_kl"] == [0.0, 0.0, 0.0]  # the doubles, kept
    logs = data["true_grad_log"]["reverse_kl"]
    assert logs["sign"] == [-1, 1, -1] and data["true_grad_log"]["forward_kl"] is None
    np.testing.assert_allclose(logs["log_abs"], table.true_reverse_log.log_abs, rtol=1e-12)
    assert logs["log_abs"][1] == pytest.approx(-792.622, abs=1e-3)  # |∇| of the top token: 5.869e-345
    (k2,) = [r for r in data["rows"] if r["name"] == "k2"]
    assert k2["log_grad_norm"] == pytest.approx(-792.4195, abs=1e-3)  # ‖∇reverse‖ = e^-792.42 = 7.19e-345
    assert data["lambda_value_opt"] == 0.0 and data["log_lambda_value_opt"] == pytest.approx(
        math.log(8.8029) - 345 * math.log(10.0), abs=1e-4)  # λ* = 8.8029e-345
    assert cli.main(["grad", "--policy", "categorical(0,2000,0)", "--ref", "categorical(0,0,0)", "--json"]) == 0
    (k3,) = [r for r in json.loads(capsys.readouterr().out)["rows"] if r["name"] == "k3"]
    assert k3["grad_spread"].endswith("e+434") and k3["log_grad_spread"] == pytest.approx(999.5945, abs=1e-3)


def test_json_at_ordinary_logits_has_no_log_keys(capsys):
    assert cli.main(["grad", "--policy", "categorical(1,0,-1)", "--ref", "categorical(0,0,0)", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "true_grad_log" not in data and "log_lambda_value_opt" not in data
    assert not any(k.startswith("log_") for r in data["rows"] for k in r)
