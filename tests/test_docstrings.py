"""The core's house rules, checked: typed public functions with numpydoc docstrings.

Every public function of ``kl_core`` (the names in each module's ``__all__``)
must annotate all its parameters and its return type and carry a numpydoc
docstring with a Parameters section (when it takes any) and a Returns
section.  Functions that compute a formula must also show it in LaTeX and
name its source (a References section or a "Source" line in the module).
(That ``kl_core`` never imports streamlit is an import contract: tests/test_layers.py.)
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import kl_core

#: Every public module, subpackages' included, relative to ``kl_core`` ("estimation.exact").
MODULES = sorted(
    m.name.removeprefix("kl_core.") for m in pkgutil.walk_packages(kl_core.__path__, prefix="kl_core.")
    if not m.ispkg and not any(part.startswith("_") for part in m.name.split("."))
)
# Modules whose public functions compute a formula: each must show it in LaTeX.
FORMULA_MODULES = {
    "estimation.estimators", "estimation.exact", "estimation.fisher", "estimation.control_variates",
    "estimation.montecarlo", "estimation.bregman", "estimation.sampling_distributions", "estimation.tails",
    "estimation.reliability", "libraries.clamps", "libraries.loss_aggregation", "sequences.markov",
    "sequences.estimators", "sequences.montecarlo", "sequences.gradients", "gradients.expected",
    "gradients.flow",
}

# Public functions of formula modules that look things up rather than compute a formula.
LOOKUPS = {"gradients.expected.entry_name", "gradients.expected.loss_entries",
           "gradients.expected.gradient_entries"}


def _public_functions():
    for name in MODULES:
        mod = importlib.import_module(f"kl_core.{name}")
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr)
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                yield name, attr, obj


FUNCTIONS = list(_public_functions())


def test_every_module_declares_all():
    for name in MODULES:
        if name == "__main__":
            continue
        mod = importlib.import_module(f"kl_core.{name}")
        assert hasattr(mod, "__all__"), f"kl_core.{name} has no __all__"


@pytest.mark.parametrize(("module", "name", "func"), FUNCTIONS, ids=[f"{m}.{n}" for m, n, _ in FUNCTIONS])
def test_public_function_is_typed_and_documented(module, name, func):
    sig = inspect.signature(func)
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        assert param.annotation is not inspect.Parameter.empty, f"{module}.{name}: {pname} untyped"
    assert sig.return_annotation is not inspect.Signature.empty, f"{module}.{name}: return untyped"
    doc = inspect.getdoc(func) or ""
    assert doc, f"{module}.{name} has no docstring"
    if [p for p in sig.parameters if p not in ("self", "cls")]:
        assert "Parameters\n----------" in doc, f"{module}.{name}: no Parameters section"
    assert "Returns\n-------" in doc or "Yields\n------" in doc, f"{module}.{name}: no Returns section"
    if module in FORMULA_MODULES and f"{module}.{name}" not in LOOKUPS:
        assert ":math:" in doc or ".. math::" in doc, f"{module}.{name}: no LaTeX formula"
        mod_doc = inspect.getdoc(importlib.import_module(f"kl_core.{module}")) or ""
        assert "References\n----------" in doc or "Source" in mod_doc, f"{module}.{name}: no source"
