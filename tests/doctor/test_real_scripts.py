"""The config doctor on real launch scripts and configs from public repositories, across releases.

Each file under ``tests/doctor/real_scripts/<library>/`` was copied from a public
repository at a recorded commit (``tests/doctor/collect_real_scripts.py``); its
``.expected.toml`` holds the facts of its card, written from the library's own
code at that release (the ``why`` of each names the code), not from the doctor's
output.  A card is right when it names the library and the release it describes,
and every KL term's placement, estimator, coefficient and gradient target; where
the script's era and the assumed release differ, the card must also say what
the other release does.  A refusal is right when the expected outcome is a
refusal and the message names what the doctor does not cover.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from pathlib import Path

import pytest

from kl_core.doctor.card import card_lines
from kl_core.doctor.diagnosis import UnreadableInput, diagnose

ROOT = Path(__file__).resolve().parent / "real_scripts"
FILES = sorted(p for p in ROOT.glob("*/*") if not p.name.endswith(".expected.toml"))


def _uses(uses):
    return [(u.where, u.estimator, u.coef, u.gradient_target) for u in uses]


def _match(uses, expected) -> bool:
    got = _uses(uses)
    if len(got) != len(expected):
        return False
    for (where, est, coef, grad), e in zip(got, expected, strict=True):
        if (where, est, grad) != (e["where"], e["estimator"], e["gradient"]):
            return False
        if coef is None or not math.isclose(coef, e["coef"], rel_tol=1e-9):
            return False
    return True


def verdict(path: Path) -> tuple[str, str]:
    """``("right" | "wrong" | "refused" | "crash", why)`` for one real script."""
    exp = tomllib.loads(path.with_name(path.name + ".expected.toml").read_text())["expected"]
    try:
        d = diagnose(path.read_bytes(), filename=path.name)
    except UnreadableInput as exc:
        msg = str(exc.message if hasattr(exc, "message") else exc)
        if exp["outcome"] == "refuse" and all(m in msg for m in exp.get("mentions", [])):
            return "right", msg
        return "refused", msg
    except Exception as exc:  # noqa: BLE001 - a crash is a result to count
        return "crash", repr(exc)
    text = "\n".join(card_lines(d))
    if exp["outcome"] == "refuse":
        return "wrong", "a card where a refusal was expected:\n" + text
    if d.library != exp["library"] or exp["release"] not in d.release:
        return "wrong", f"{d.library} {d.release}, expected {exp['library']} {exp['release']}"
    if not _match(d.kl_uses, exp["kl"]):
        return "wrong", f"KL {_uses(d.kl_uses)}, expected {exp['kl']}"
    missing = [m for m in exp.get("mentions", []) if m not in text]
    if missing:
        return "wrong", f"the card does not mention {missing}"
    # what the release's code does not do or accept, said anywhere but the history of later releases ("What changed")
    offered = "\n".join(card_lines(dataclasses.replace(d, changed="")))
    false = [m for m in exp.get("absent", []) if m in offered]
    if false:
        return "wrong", f"the card says {false}, which the release does not have"
    cur = exp.get("current")
    if cur is not None:
        alts = d.also
        if cur == "unknown flags":
            ok = any(a.fails for a in alts)
        elif cur == "no KL":
            ok = any(not a.kl_uses for a in alts)
        else:
            ok = any(a.kl_uses and a.kl_uses[0].gradient_target == cur for a in alts)
        if not ok:
            return "wrong", f"the card does not say what the other release does ({cur}): {alts}"
    if "also" in exp:
        want = exp["also"]
        if not any(want["release"] in a.release and _match(a.kl_uses, want["kl"]) for a in d.also):
            return "wrong", f"no card for release {want['release']} with {want['kl']}: {d.also}"
    return "right", text


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_real_script(path):
    result, why = verdict(path)
    assert result == "right", why


def test_enough_real_scripts():
    libs = {p.parent.name for p in FILES}
    assert len(FILES) >= 20 and libs == {"openrlhf", "verl", "trl"}
    for p in FILES:
        src = tomllib.loads(p.with_name(p.name + ".expected.toml").read_text())["source"]
        assert len(src["commit"]) == 40 and src["repo"] and src["path"]
