"""``kl_core``'s public API: every name resolves to the object its module defines, lazily."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import kl_core

ROOT = Path(__file__).resolve().parents[1]


def test_importing_kl_core_pulls_in_no_scipy_and_no_numpy():
    code = "import sys, kl_core; print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'numpy')))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("name", kl_core.__all__)
def test_each_public_name_is_its_modules_object(name):
    module = importlib.import_module(f"kl_core.{kl_core._WHERE[name]}")
    assert getattr(kl_core, name) is getattr(module, name)
    assert name in dir(kl_core)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        kl_core.no_such_name  # noqa: B018


def test_no_public_name_shadows_a_subpackage():
    subpackages = {p.name for p in Path(kl_core.__file__).parent.iterdir() if (p / "__init__.py").exists()}
    assert not subpackages & set(kl_core.__all__)


def test_the_example_in_the_docstring():
    q, p = kl_core.parse("normal(0,1)"), kl_core.parse("normal(1,1)")
    assert kl_core.kl(q, p) == pytest.approx(0.5, rel=1e-12)
