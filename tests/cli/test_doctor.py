"""Tests for ``python -m kl_core doctor``: the card, the JSON the issue specifies, stdin, errors as one line."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from kl_core.cli import main as cli
from kl_core.doctor.diagnosis import diagnose

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "doctor_examples"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_the_diagnosis(capsys):
    path = DATA / "verl_grpo_qwen3_8b.sh"
    code, out, err = _run(["doctor", str(path), "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data == json.loads(json.dumps(diagnose(path.read_bytes(), filename=path.name).to_json()))
    assert {"library", "release", "kl_uses", "warnings", "unrecognised"} <= set(data)
    assert (data["library"], data["release"]) == ("verl", "0.9.1")
    use = data["kl_uses"][0]
    assert (use["where"], use["option"], use["estimator"], use["coef"], use["controller"], use["target_kl"],
            use["gradient_target"]) == ("loss", "low_var_kl", "k3", 0.001, "fixed", None, "forward_kl")
    assert [w["code"] for w in data["warnings"]][:3] == ["FORWARD_KL_GRAD", "OFF_POLICY_UNCORRECTED", "CLAMP_HIDES_DRIFT"]
    assert data["warnings"][0]["fix"] == "actor_rollout_ref.actor.kl_loss_type=low_var_kl+"


def test_card_text(capsys):
    code, out, _ = _run(["doctor", str(DATA / "openrlhf_dapo_hybrid.sh")], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "OpenRLHF 0.11.2 (train_ppo_ray): settings not given take this release's defaults"
    assert "  option       --algo.kl.estimator k3  ->  k3 (crosswalk row OpenRLHF:k3)" in lines
    assert any(ln.startswith("  gradient     forward_kl: ∇KL[π_ref‖π_θ]") for ln in lines)
    assert "    fix: --algo.kl.unbiased_gradient" in lines
    assert "  coefficient  --algo.kl.init_coef = 0.001 (fixed)" in lines


def test_stdin_library_override_and_no_kl(capsys, monkeypatch):
    text = (DATA / "trl_grpo_config.yaml").read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = _run(["doctor", "-", "--library", "TRL", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["kl_uses"] == [] and data["warnings"][0]["code"] == "KL_OFF"
    assert data["warnings"][0]["fix"] == "beta: 0.001" and data["defaults_assumed"]["beta"] == 0.0


def test_unrecognised_keys_and_suggestions_in_the_card(capsys):
    code, out, _ = _run(["doctor", str(DATA / "openrlhf_reinforce_baseline.sh"), "--release", "latest"], capsys)
    assert code == 0
    assert "  --algo.advantage.is_correction_enable  (did you mean --algo.advantage.is_correction_level?)" in out


@pytest.mark.parametrize(
    ("content", "argv", "start"),
    [(b"\x00\x01\x02binary", [], "error: the input looks like a binary file"),
     (b"beta: !!python/object/apply:os.system ['echo pwned']\n", [], "error: YAML tag !!python/object/apply:os.system"),
     (b"x" * (256 * 1024 + 1), [], "error: the input is 256 KiB"),
     (b"echo hello\n", [], "error: the doctor cannot tell which library"),
     (b"beta: 0.1\n", ["--library", "cleanrl"], "python -m kl_core doctor: error: argument --library: invalid choice")],
)
def test_unreadable_input_is_one_line_and_exit_2(tmp_path, capsys, content, argv, start):
    path = tmp_path / "config"
    path.write_bytes(content)
    code, out, err = _run(["doctor", str(path), *argv], capsys)
    assert code == 2 and out == ""
    assert err.startswith(start) and err.count("\n") == 1, err


def test_missing_file(capsys):
    code, _, err = _run(["doctor", "no/such/file.sh"], capsys)
    assert code == 2 and err == "error: file 'no/such/file.sh' cannot be read: No such file or directory\n"


def test_import_loads_neither_numpy_nor_scipy():
    code = "import sys, kl_core.cli.doctor; print('numpy' in sys.modules, 'scipy' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert res.stdout.split() == ["False", "False"]


def test_subprocess_error_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("beta: [1, 2\n", encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "kl_core", "doctor", str(bad)], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith("error: the input is not valid YAML")


def test_library_choices_come_from_the_profiles_and_help_reads_none():
    """``--library`` takes the libraries the doctor has a profile for (not CleanRL, which the
    crosswalk knows but the doctor does not cover), and the top-level help reads no profile."""
    from kl_core.cli.doctor import _LIBRARIES
    from kl_core.doctor.profiles import profiles

    assert {p.library.lower() for p in profiles()} == set(_LIBRARIES)
    assert "cleanrl" not in _LIBRARIES
    code = ("import sys\nfrom kl_core.cli.main import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\nprint('kl_core.doctor.profiles' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert res.stdout.strip().endswith("False")


def test_the_card_says_when_off_policy_steps_happen(capsys, tmp_path):
    """Asynchronous generation trains on an older policy's tokens from the first step, not 'later' ones."""
    script = tmp_path / "async.sh"
    script.write_text("python3 -m openrlhf.cli.train_ppo_ray --algo.kl.init_coef 0.01 --train.async_enable "
                      "--train.batch_size 1024 --rollout.batch_size 128 --rollout.n_samples_per_prompt 8\n")
    code, out, _ = _run(["doctor", str(script)], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "in every optimizer step (the tokens come from an older policy)" in text
    assert "in later optimizer steps" not in text
    code, out, _ = _run(["doctor", str(DATA / "openrlhf_dapo_hybrid.sh")], capsys)
    assert "in every optimizer step" not in " ".join(out.split())


def test_a_warning_without_a_fix_says_what_was_tried_and_what_the_release_lacks(capsys, tmp_path):
    """TRL 0.14–0.18 with beta: 0.0: turning the KL on there gives k3's forward-KL gradient, and the setting that
    would correct it (use_bias_correction_kl) came in 0.26; the card says both instead of nothing."""
    path = tmp_path / "grpo.yaml"
    path.write_text("beta: 0.0\n")
    argv = ["doctor", str(path), "--library", "trl", "--release", "trl-grpo-0.18"]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    said = " ".join(out.split())
    assert ("no fix: Tried `beta: 0.001`: the warning is gone, but the change raises warnings the config did not "
            "have (FORWARD_KL_GRAD). TRL 0.17.0–0.18.2 does not have use_bias_correction_kl, so no change set it.") in said
    _, md, _ = _run([*argv, "--format", "md"], capsys)
    assert "No fix: Tried `beta: 0.001`" in md
    _, js, _ = _run([*argv, "--json"], capsys)
    (w,) = json.loads(js)["warnings"]
    assert (w["fix"], w["tried"], w["needs"]) == (
        None, [{"change": "beta: 0.001", "why": "raises", "raised": ["FORWARD_KL_GRAD"]}], ["use_bias_correction_kl"])


def _strict(text: str):
    """JSON as a strict parser reads it: NaN, Infinity and -Infinity are not JSON."""

    def refuse(name: str):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


NON_FINITE = [
    ("vinf.sh", "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                "actor_rollout_ref.actor.kl_loss_coef=inf actor_rollout_ref.actor.kl_loss_type=k3\n", "inf"),
    ("vbig.sh", "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                "actor_rollout_ref.actor.kl_loss_coef=1e400\n", "inf"),
    ("vninf.sh", "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                 "actor_rollout_ref.actor.kl_loss_coef=-inf\n", "-inf"),
    ("tinf.yaml", "beta: .inf\n", "inf"),
    ("tnan.json", '{"beta": NaN}\n', "nan"),
]


@pytest.mark.parametrize(("name", "text", "coef"), NON_FINITE, ids=[n for n, _, _ in NON_FINITE])
def test_json_with_a_coefficient_that_is_not_finite_is_strict_json(capsys, tmp_path, name, text, coef):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code, out, err = _run(["doctor", str(path), "--json"], capsys)
    assert code == 0, err
    data = _strict(out)
    assert data["kl_uses"][0]["coef"] == coef and data["warnings"][0]["code"] == "NONFINITE_COEF"
    assert all(u["coef"] == coef for o in data["also"] for u in o["kl_uses"])


def test_json_of_several_files_with_non_finite_coefficients_is_strict_json(capsys, tmp_path):
    paths = []
    for name, text, _ in NON_FINITE:
        paths.append(tmp_path / name)
        paths[-1].write_text(text, encoding="utf-8")
    code, out, err = _run(["doctor", *map(str, paths), "--json"], capsys)
    assert code == 0, err
    data = _strict(out)
    assert [d["file"] for d in data] == list(map(str, paths))
    assert [d["kl_uses"][0]["coef"] for d in data] == [coef for _, _, coef in NON_FINITE]


def test_a_nan_coefficient_is_not_reported_as_turning_the_kl_off(capsys, tmp_path):
    verl = tmp_path / "vnan.sh"
    verl.write_text("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True "
                    "actor_rollout_ref.actor.kl_loss_coef=nan\n")
    trl = tmp_path / "tnan.json"
    trl.write_text('{"beta": NaN}\n')
    for path, said in ((verl, "actor_rollout_ref.actor.kl_loss_coef=nan"), (trl, '"beta": NaN')):
        code, out, _ = _run(["doctor", str(path)], capsys)
        text = " ".join(out.split())
        assert code == 0 and "KL_OFF" not in text and "turns it off" not in text and "turns the KL" not in text
        assert f"NONFINITE_COEF: {said} is not a finite number" in text
        assert "the loss becomes NaN or infinite" in text
    code, _, _ = _run(["doctor", str(verl), "--fail-on", "NONFINITE_COEF"], capsys)
    assert code == 1


def test_json_goes_through_json_value_whatever_the_diagnosis_holds(capsys, tmp_path, monkeypatch):
    """run_doctor writes strict JSON itself (kl_core.cli.main.json_value, allow_nan=False), one file or several."""
    from kl_core.doctor.diagnosis import Diagnosis

    monkeypatch.setattr(Diagnosis, "to_json", lambda self: {"a": math.inf, "b": [-math.inf, 0.5], "c": math.nan})
    path = tmp_path / "v.sh"
    path.write_text("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True\n")
    _, out, _ = _run(["doctor", str(path), "--json"], capsys)
    assert _strict(out) == {"a": "inf", "b": ["-inf", 0.5], "c": None}
    _, out, _ = _run(["doctor", str(path), str(path), "--json"], capsys)
    assert _strict(out) == [{"file": str(path), "a": "inf", "b": ["-inf", 0.5], "c": None}] * 2


def test_the_release_help_names_every_era(capsys):
    from kl_core.doctor.releases import eras

    code, out, _ = _run(["doctor", "--help"], capsys)
    help_text = " ".join(out.split())
    assert code == 0 and "--release RELEASE" in help_text
    assert [e.id for e in eras() if e.id not in help_text] == []
