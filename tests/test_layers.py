"""The import layers of issue 18, checked by import-linter (contracts in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_the_contracts_cover_the_layers_streamlit_and_private_modules():
    by_type = {c["type"] for c in _contracts()}
    assert {"layers", "forbidden"} <= by_type
    core = next(c for c in _contracts() if c["type"] == "layers" and c["layers"][0] == "kl_core.cli")
    assert core["layers"][-1] == "kl_core.validation | kl_core.numbers"
    app = [c["layers"] for c in _contracts() if c["type"] == "layers" and c["layers"][0] == "lab"]
    assert app == [["lab", "charts", "i18n"]], "charts must not import lab (no cycle)"
    forbidden = [m for c in _contracts() if c["type"] == "forbidden" for m in c["forbidden_modules"]]
    assert "streamlit" in forbidden and "kl_core.estimation._quadrature" in forbidden


def test_every_import_contract_is_kept():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "import-linter is a dev dependency (uv sync)"
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout
