"""kl / table / quiz: extreme specs give one error line; notes for inf and λ*; bounded divergences."""

from __future__ import annotations

import json

import pytest

from kl_core.cli import main as cli


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["table", "--q", "normal(0,1e-300)", "--exact-only"], "--q normal(0,1e-300): sigma"),
        (["kl", "--q", "normal(0,1e300)"], "--q normal(0,1e+300): sigma"),
        (["kl", "--p", "normal(1e300,1)"], "--p normal(1e+300,1): mu"),
        (["table", "--p", "mixture(0.5:0:1,0.5:1e300:1)", "--exact-only"], "--p mixture"),
        (["kl", "--q", "t(1e300,0,1)"], "df = 1e+300"),
        (["quiz", "--out", "/nonexistent/x.xml"], "--out /nonexistent/x.xml"),
    ],
)
def test_extreme_input_is_one_error_line(argv, names, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error:") and names in err
    assert "Traceback" not in err


def test_kl_notes_a_finite_chi2_past_a_double(capsys):
    code, out, _ = run(["kl", "--p", "normal(30,1)", "--json"], capsys)
    data = json.loads(out)
    assert code == 0
    assert "larger than the largest double" in data["notes"]["pearson"]
    assert data["f_divergences"]["hellinger"] <= 2.0 and data["f_divergences"]["tv"] <= 1.0
    _, text, _ = run(["kl", "--p", "normal(30,1)"], capsys)
    assert "note (pearson):" in text


@pytest.mark.parametrize(("p", "words"), [("normal(30,1)", "larger than the largest double"), ("normal(0,1)", "p = q")])
def test_table_prints_why_lambda_star_is_0_or_1(p, words, capsys):
    code, out, _ = run(["table", "--p", p, "--exact-only"], capsys)
    assert code == 0
    assert any(line.startswith("note (λ*):") and words in line for line in out.splitlines())


def test_an_infinite_exact_mean_is_an_infinite_bias_not_undefined(capsys):
    """t(3) against N(0, 1): E_q[½ log² r] ~ E[x⁴]/8 = ∞, so k2's exact bias/true is +∞; it printed "—"."""
    argv = ["table", "--q", "t(3,0,1)", "--p", "normal(0,1)", "--exact-only"]
    code, out, _ = run([*argv, "--json"], capsys)
    assert code == 0
    bias = {r["estimator"]: r["exact_bias_over_true"] for r in json.loads(out)["rows"]}
    assert bias["k2"] == "inf" and bias["k1"] == 0.0
    _, text, _ = run(argv, capsys)
    k2 = next(line for line in text.splitlines() if line.startswith("k2 "))
    assert k2.split()[2] == "inf" and "—" not in k2


def test_seq_k3s_summary_says_its_variance_can_grow():
    """With the tilt on the first token only, or no drift, seq_k3's variance stays flat: "grows" was false."""
    from kl_core.sequences.estimators import SEQUENCE_ESTIMATORS

    assert "can grow like e^{cT}" in SEQUENCE_ESTIMATORS["seq_k3"].summary
