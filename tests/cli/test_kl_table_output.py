"""kl / table / quiz: extreme specs give one error line; notes for inf and λ*; bounded divergences."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

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


def test_table_leaves_out_what_divides_subnormal_kls(capsys):
    """N(1e-161, 1) vs N(0, 1): both KLs (5e-323) are subnormal.  The table printed k2's bias/true
    as -0.2, k1's stdev/true as 1.909e+161 (it is 2e161) and λ* = 1.11111 (it is 1)."""
    code, out, _ = run(["table", "--q", "normal(1e-161,1)", "--p", "normal(0,1)", "--n", "2000"], capsys)
    assert code == 0
    assert "KL[q,p] < 2.225e-308   KL[p,q] < 2.225e-308   optimal λ* = not resolved" in out
    assert "1.909e+161" not in out and "-0.2000" not in out and "1.11111" not in out
    assert "every figure divided by them is left out (—)" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("k1 ", "k2 ")) and "KL[q‖p]" in line]
    assert len(rows) == 2 and all(cell == "—" for row in rows for cell in row[2:7])
    code, out, _ = run(["table", "--q", "normal(1e-161,1)", "--p", "normal(0,1)", "--exact-only", "--json"], capsys)
    data = json.loads(out)
    assert data["optimal_lambda"] is None and "not resolved" in data["optimal_lambda_note"]


def test_table_works_out_an_exact_standard_deviation_whose_squares_underflow_from_its_log(capsys):
    """N(1e-100, 1) vs N(0, 1): the KL, 5e-201, is a normal double, but k2's exact variance (~1e-400)
    is 0 in doubles: stdev/true printed 0.0000 where it is √2, then — (left out).  Its log is a
    modest number (−921.7), so the exact stdev/true is √2 again.  Its sample std is summed on a
    power-of-two scale, so the MC stdev/true is shown, and it is about √2."""
    code, out, _ = run(["table", "--q", "normal(1e-100,1)", "--p", "normal(0,1)", "--n", "2000"], capsys)
    assert code == 0
    assert "KL[q,p] = 5e-201" in out and "optimal λ* = 1" in out
    (k2,) = [line.split() for line in out.splitlines() if line.startswith("k2 ") and "KL[q‖p]" in line]
    assert float(k2[6]) == pytest.approx(math.sqrt(2), rel=1e-4)  # the exact stdev/true, to its 4 places
    # the sample sd of χ²₁/2 over 2,000 draws: its relative SE is √((15 − 1)/(4·2000)) ≈ 0.042
    assert float(k2[5]) == pytest.approx(math.sqrt(2), rel=4 * 0.042)
    assert float(k2[3]) == pytest.approx(float(k2[5]) / math.sqrt(2000), abs=1e-4)  # ± SE = stdev/√n, to 4 places
    assert "not resolved" not in out and " !" not in out  # κ = 15 from the moments' logs: N = 2000 is enough
    # the README quotes this run's figure
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"print stdev/true (\S+) \(the exact one is √2", " ".join(readme.split()))
    assert quoted and float(quoted.group(1)) == pytest.approx(float(k2[5]), abs=1e-4)
    assert "Monte Carlo standard deviation" not in out
    (k1,) = [line.split() for line in out.splitlines() if line.startswith("k1 ") and "KL[q‖p]" in line]
    assert float(k1[6]) == pytest.approx(2e100, rel=1e-3)  # σ(k1)/KL = μ/(μ²/2) = 2/μ, resolved
    assert "note (k1)" not in out


def test_the_monte_carlo_stdev_of_values_whose_squares_are_subnormal_keeps_its_digits(capsys):
    """q = N(0,1), p = N(3e-81,1): k2's values (~1e-161) have squares below the smallest normal double;
    the MC stdev/true printed 1.3971, where the same draws at p = N(1e-60,1) give 1.4043 (it is √2)."""
    def mc_stdev(mu: str) -> str:
        code, out, _ = run(["table", "--q", "normal(0,1)", "--p", f"normal({mu},1)", "--n", "20000"], capsys)
        assert code == 0 and "Monte Carlo standard deviation" not in out
        (k2,) = [line.split() for line in out.splitlines() if line.startswith("k2 ") and "KL[q‖p]" in line]
        return k2[5]

    assert float(mc_stdev("3e-81")) == pytest.approx(float(mc_stdev("1e-60")), rel=1e-3)


def test_the_lambda_star_note_names_the_figure_that_is_subnormal(capsys):
    """N(0,1) vs N(1.75e-154,1): the KLs (1.53e-308) are subnormal, χ² (3.06e-308) is not, and the note
    blamed χ²."""
    code, out, _ = run(["table", "--q", "normal(0,1)", "--p", "normal(1.75e-154,1)", "--exact-only"], capsys)
    (note,) = [line for line in out.splitlines() if line.startswith("note (λ*)")]
    assert "it divides figures below the smallest normal double" in note
    assert note.endswith("(KL[p‖q] = 1.53e-308, KL[q‖p] = 1.53e-308)")
    assert "χ²(p‖q) = 3.06e-308" not in note
