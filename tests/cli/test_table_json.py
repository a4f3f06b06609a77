"""``table --json`` carries everything the text table shows: the "± SE" column, every note, the
inputs and Schulman's printed figures; and a note says why every ratio is "—" when p = q."""

from __future__ import annotations

import json
import math

import pytest

from kl_core.cli import main as cli
from kl_core.cli.table import TABLE_JSON_FIELDS, TABLE_KEYS, table_notes


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _both(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, dict]:
    code, text, err = run(argv, capsys)
    assert code == 0, err
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    return text, json.loads(out)


def _note_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("note")]


def _json_note_lines(data: dict) -> list[str]:
    """The note lines the text prints, rebuilt from the JSON alone."""
    lines = [f"note: {n}" for n in data["notes"]]
    if data["optimal_lambda_note"]:
        lines.append(f"note (λ*): {data['optimal_lambda_note']}")
    for r in data["rows"]:
        lines += [f"note ({r['estimator']}): {n}" for n in r["notes"]]
    return lines


def test_every_note_of_the_text_is_in_the_json(capsys):
    """--lam 1e300: the text's second k_lambda note (log Var(kλ) = 1376.95089) was missing from the JSON."""
    argv = ["table", "--lam", "1e300", "--n", "1000"]
    text, data = _both(argv, capsys)
    assert _json_note_lines(data) == _note_lines(text)
    k_lambda = next(r for r in data["rows"] if r["estimator"] == "k_lambda")
    assert len(k_lambda["notes"]) == 2 and k_lambda["note"] == k_lambda["notes"][0]
    assert "log Var(kλ) = 1376.95089" in k_lambda["notes"][1]
    assert k_lambda["exact_log_var"] == pytest.approx(1376.95089, abs=1e-5)
    # the text's stdev/true 2.005e+301 is exp(exact_log_std_over_true)
    assert math.exp(k_lambda["exact_log_std_over_true"]) == pytest.approx(k_lambda["exact_std_over_true"], rel=1e-9)
    assert k_lambda["lam"] == pytest.approx(1e300) and k_lambda["name"] == "kλ"
    assert all(r["lam"] is None for r in data["rows"] if r["estimator"] != "k_lambda")


def test_the_se_column_and_the_inputs_are_in_the_json(capsys):
    argv = ["table", "--q", "normal(0,1)", "--p", "normal(1,1)", "--n", "4000", "--seed", "7", "--lam", "0.5"]
    text, data = _both(argv, capsys)
    assert data["q"] == "normal(0,1)" and data["p"] == "normal(1,1)"
    assert data["n"] == 4000 and data["seed"] == 7 and data["lam"] == pytest.approx(0.5)
    assert data["exact_only"] is False
    assert [r["estimator"] for r in data["rows"]] == list(TABLE_KEYS)
    assert all(list(r) == list(TABLE_JSON_FIELDS) for r in data["rows"])
    lines = text.splitlines()
    for r in data["rows"]:
        # ± SE = standard error of the MC mean / KL: the sample stdev/true over √n
        assert r["mc_se_over_true"] == pytest.approx(r["mc_std_over_true"] / math.sqrt(4000), rel=1e-3)
        label = r["name"] + (" (λ=0.5)" if r["estimator"] == "k_lambda" else "")
        (line,) = [ln for ln in lines if ln.startswith(label + " ") and r["target_name"] in ln]
        cells = line[len(label):].split()
        assert float(cells[2]) == pytest.approx(r["mc_se_over_true"], abs=5e-5)  # the "± SE" column
        assert cells[0] == r["target_name"]  # the "vs" column
    # Schulman's printed figures, as the text's Schulman column gives them
    assert data["published"]["true_kl"] == pytest.approx(0.5)
    assert data["published"]["rows"]["k2"] == {"bias_over_true": pytest.approx(0.25), "std_over_true": pytest.approx(1.73)}
    assert "(Schulman: 0.5)" in text


def test_exact_only_json_has_no_seed_and_no_published_figures_off_his_pairs(capsys):
    _, data = _both(["table", "--p", "normal(0,2)", "--n", "500", "--exact-only"], capsys)
    assert data["exact_only"] is True and data["seed"] is None and data["n"] == 500
    assert data["published"] is None
    assert all(r["mc_se_over_true"] is None for r in data["rows"])


@pytest.mark.parametrize("extra", [["--n", "1000"], ["--exact-only"]])
def test_p_equal_to_q_says_why_every_ratio_is_undefined(capsys, extra):
    """q = p: KL = 0, every bias/true, stdev/true and ± SE was "—" with no note saying why."""
    text, data = _both(["table", "--q", "normal(0,1)", "--p", "normal(0,1)", *extra], capsys)
    (line,) = [ln for ln in text.splitlines() if ln.startswith("note: KL[q,p] and KL[p,q] are 0")]
    assert "(p = q)" in line and "undefined" in line
    assert data["notes"] == [line.removeprefix("note: ")]
    assert _json_note_lines(data) == _note_lines(text)
    assert all(r["exact_bias_over_true"] is None and r["exact_std_over_true"] is None for r in data["rows"])


def test_table_notes():
    assert table_notes(0.5, 0.005) == []
    assert table_notes(0.0, 0.0, same=True)[0].startswith("KL[q,p] and KL[p,q] are 0 (p = q): ")
    # 0 in doubles though the specs differ (N(0,1) vs N(1e-170,1): KL = 5e-341)
    assert "(p = q to double precision)" in table_notes(0.0, 0.0)[0]
    (one,) = table_notes(0.0, 0.5)
    assert one.startswith("KL[q,p] is 0 ") and "divide by it," in one
    (tiny,) = table_notes(5e-323, 5e-323)
    assert tiny.startswith("KL[q,p] and KL[p,q] are below the smallest normal double")


def test_the_default_pair_has_no_notes(capsys):
    _, data = _both(["table", "--n", "2000"], capsys)
    assert data["notes"] == [] and all(r["notes"] == [] for r in data["rows"])
