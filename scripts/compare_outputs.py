"""Record the command line's outputs, and later check that a change left them as they were.

For a change that must not change behaviour (a refactor, a move into subpackages)::

    uv run python scripts/compare_outputs.py record /tmp/before     # before the change
    ...                                                              # change the code
    uv run python scripts/compare_outputs.py compare /tmp/before    # exit 1 on any difference

It runs every command the README shows (text and ``--json``) and the config
doctor on each of ``data/doctor_examples/*`` (text and ``--json``), keeping
stdout, stderr and the exit code.  ``compare`` runs them again and compares:
numbers with a relative tolerance of 1e-12 (absolute 1e-300 near zero), since
another BLAS or CPU may change a last digit; everything else, text exactly.
A JSON output is compared as a structure, a text output token by token (the
numbers in it as numbers, the words between them as they are).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RTOL = 1e-12
ATOL = 1e-300

_GRAD = ["grad", "--policy", "categorical(1,0,-1,0.5,0,0)", "--ref", "categorical(0,0,0,0,0,0)"]
_AUDIT = ["audit", "data/example_audit.csv", "--sampler-col", "logp_policy", "--other-col", "logp_ref"]
#: name -> arguments of ``python -m kl_core`` (the README's "same numbers without the app").
COMMANDS: dict[str, list[str]] = {
    "table": ["table"],
    "table_p1": ["table", "--p", "normal(1,1)"],
    "table_scale_exact": ["table", "--q", "normal(0,1)", "--p", "normal(0,1.5)", "--exact-only"],
    "table_far_n1e4": ["table", "--p", "normal(3,1)", "--n", "10000"],
    "table_t3_exact": ["table", "--q", "t(3,0,1)", "--p", "normal(0,1)", "--exact-only"],
    "kl_t3": ["kl", "--q", "t(3,0,1)", "--p", "normal(0,1)"],
    "kl_small_df": ["kl", "--q", "t(0.2,0,1)", "--p", "t(1,0,1)"],
    "audit_mask": [*_AUDIT, "--mask-col", "mask"],
    "audit_rb": [*_AUDIT, "--kl-col", "kl_policy_ref"],
    "sequence_T64": ["sequence", "--T", "64"],
    "sequence_markov": ["sequence", "--policy", "markov(0,0; 0,1; 1,0)",
                        "--ref", "markov(0,0; 0,0; 0,0)", "--T", "16"],
    "grad": _GRAD,
    "grad_training": [*_GRAD, "--reward", "1,0.2,0.5,-0.3,0,0.8", "--beta", "0.5"],
}


def _runs() -> dict[str, list[str]]:
    runs: dict[str, list[str]] = {}
    for name, args in COMMANDS.items():
        runs[name] = args
        runs[name + ".json"] = [*args, "--json"]
    for path in sorted((ROOT / "data" / "doctor_examples").iterdir()):
        rel = path.relative_to(ROOT).as_posix()
        runs["doctor_" + path.name] = ["doctor", rel]
        runs["doctor_" + path.name + ".json"] = ["doctor", rel, "--json"]
    return runs


def _run(args: list[str]) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-m", "kl_core", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    return {"args": args, "code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def _tokens(text: str) -> list[object]:
    """Text as alternating words and numbers (numbers as floats, thousands commas dropped)."""
    out: list[object] = []
    pos = 0
    for m in _NUMBER.finditer(text):
        out.append(text[pos:m.start()])
        try:
            out.append(float(m.group().replace(",", "")))
        except ValueError:
            out.append(m.group())
        pos = m.end()
    out.append(text[pos:])
    return out


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(ATOL, RTOL * max(abs(a), abs(b)))


def _same(a: object, b: object, where: str, diffs: list[str]) -> None:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        if a != b:
            diffs.append(f"{where}: {a!r} != {b!r}")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if not _close(float(a), float(b)):
            diffs.append(f"{where}: {a!r} != {b!r}")
    elif isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            diffs.append(f"{where}: keys {sorted(set(a) ^ set(b))} differ")
        for k in a.keys() & b.keys():
            _same(a[k], b[k], f"{where}.{k}", diffs)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{where}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _same(x, y, f"{where}[{i}]", diffs)
    elif isinstance(a, str) and isinstance(b, str):
        if a != b:
            ta, tb = _tokens(a), _tokens(b)
            if len(ta) != len(tb):
                diffs.append(f"{where}: text differs: {a[:200]!r} != {b[:200]!r}")
            else:
                for x, y in zip(ta, tb, strict=True):
                    if isinstance(x, float) and isinstance(y, float):
                        ok = _close(x, y)
                    else:
                        ok = x == y
                    if not ok:
                        diffs.append(f"{where}: {x!r} != {y!r}")
                        break
    elif a != b:
        diffs.append(f"{where}: {a!r} != {b!r}")


def _parsed(out: str) -> object:
    try:
        return json.loads(out)
    except ValueError:
        return out


def record(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    for name, args in _runs().items():
        (folder / f"{name}.out.json").write_text(json.dumps(_run(args), indent=1), "utf-8")
        print("recorded", name)
    return 0


def compare(folder: Path) -> int:
    failed = 0
    for name, args in _runs().items():
        path = folder / f"{name}.out.json"
        if not path.exists():
            print(f"NEW   {name}: not recorded before")
            failed += 1
            continue
        before = json.loads(path.read_text("utf-8"))
        now = _run(args)
        diffs: list[str] = []
        _same(before["code"], now["code"], "exit code", diffs)
        _same(_parsed(before["stdout"]), _parsed(now["stdout"]), "stdout", diffs)
        _same(before["stderr"], now["stderr"], "stderr", diffs)
        print(("same  " if not diffs else "DIFF  ") + name)
        for d in diffs[:10]:
            print("      " + d)
        failed += bool(diffs)
    print(f"{failed} of {len(_runs())} outputs differ")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["record", "compare"])
    parser.add_argument("folder", type=Path)
    ns = parser.parse_args(argv)
    return record(ns.folder) if ns.action == "record" else compare(ns.folder)


if __name__ == "__main__":
    raise SystemExit(main())
