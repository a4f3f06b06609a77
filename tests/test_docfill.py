"""kl_core._docfill: shared docstring sections filled into ``%(name)s`` lines."""

from __future__ import annotations

import inspect

import pytest

from kl_core._docfill import docfill, fill, lookup_sections


def test_fill_indents_the_section_like_its_placeholder():
    doc = "Summary.\n\n    Parameters\n    ----------\n    %(x)s\n    y : int\n        Other.\n"
    out = fill(doc, {"x": "x : float\n    The value."})
    assert out == (
        "Summary.\n\n    Parameters\n    ----------\n    x : float\n        The value.\n"
        "    y : int\n        Other.\n"
    )


def test_fill_leaves_a_placeholder_inside_a_line_alone():
    doc = "Use %(x)s here.\n"
    assert fill(doc, {"x": "X"}) == doc


def test_fill_names_a_missing_section():
    with pytest.raises(KeyError, match="nope"):
        fill("    %(nope)s\n", {})


def test_docfill_fills_a_function_and_keeps_it():
    @docfill(sec="Returns\n-------\nint\n    One.")
    def one() -> int:
        """One.

        %(sec)s
        """
        return 1

    assert one() == 1
    assert inspect.getdoc(one) == "One.\n\nReturns\n-------\nint\n    One."


def test_docfill_accepts_no_docstring():
    @docfill(sec="S")
    def bare() -> None:
        pass

    assert bare.__doc__ is None


def test_lookup_sections_name_the_registry_and_the_parameter():
    text = lookup_sections("key", "PATHS", "DistributionPath")
    assert "key : str\n    A key of :data:`PATHS`." in text
    assert "DistributionPath\n    The entry." in text
    assert "If ``key`` is not a key of :data:`PATHS`." in text


def test_no_docstring_in_the_core_keeps_a_placeholder():
    """Every ``%(name)s`` line of a function's docstring is filled (a forgotten @docfill shows here)."""
    import importlib
    import pkgutil
    import re

    import kl_core

    placeholder = re.compile(r"^\s*%\(\w+\)s\s*$", re.MULTILINE)
    for m in pkgutil.walk_packages(kl_core.__path__, prefix="kl_core."):
        mod = importlib.import_module(m.name)
        for name, obj in vars(mod).items():
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != m.name:
                continue
            docs = [obj.__doc__] + [f.__doc__ for f in vars(obj).values() if inspect.isfunction(f)] \
                if inspect.isclass(obj) else [obj.__doc__]
            for doc in docs:
                assert not (doc and placeholder.search(doc)), f"{m.name}.{name} has an unfilled %(...)s line"
