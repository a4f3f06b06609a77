"""Tests for kl_core.libraries.registry: the one table of library names, and who reads it."""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

import pytest

from kl_core.libraries.registry import (
    CROSSWALK,
    LIBRARIES,
    RELEASES,
    canonical_library,
    libraries,
    library_packages,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_lists_the_libraries_in_entry_order():
    assert libraries() == list(dict.fromkeys(e.library for e in CROSSWALK))
    assert libraries() == ["TRL", "verl", "OpenRLHF", "CleanRL", "Stable-Baselines3"]


@pytest.mark.parametrize("lib", LIBRARIES, ids=lambda lib: lib.name)
def test_every_spelling_of_a_library_names_it_in_any_case(lib):
    for spelling in lib.names:
        assert canonical_library(spelling) == lib.name
        assert canonical_library(f"  {spelling.upper()} ") == lib.name


def test_known_aliases():
    assert canonical_library("sb3") == "Stable-Baselines3"
    assert canonical_library("huggingface/trl") == "TRL"
    assert canonical_library("verl-project/verl") == "verl"


@pytest.mark.parametrize("bad", ["rllib", "", "trl2", None, 3])
def test_an_unknown_library_is_refused_naming_the_parameter(bad):
    with pytest.raises(ValueError, match="library must be"):
        canonical_library(bad)


def test_every_library_named_anywhere_is_in_the_table():
    from kl_core.doctor.profiles import profiles

    named = {e.library for e in CROSSWALK} | {r.library for r in RELEASES} | {p.library for p in profiles()}
    assert named <= set(libraries())


def test_packages_are_unique_and_each_library_has_one():
    pk = library_packages()
    assert len(pk) == len(set(pk)) and all(lib.packages for lib in LIBRARIES)
    assert {"trl", "verl", "recipe", "openrlhf"} <= set(pk)


def test_the_doctor_reads_library_names_and_packages_from_the_registry():
    from kl_core.doctor import diagnosis

    assert diagnosis._canonical_library("huggingface/trl") == "TRL"
    assert diagnosis._canonical_library(" VERL") == "verl"
    with pytest.raises(ValueError, match=re.escape("library must be one of ['openrlhf', 'trl', 'verl']")):
        diagnosis._canonical_library("sb3")  # a library of the crosswalk the doctor has no profile for
    for p in library_packages():
        assert diagnosis._LIBRARY_CODE.search(f"x.{p}.cli.train").group(1) == f"{p}.cli.train"
    assert diagnosis._LIBRARY_CODE.search("mytrl.train") is None


def test_the_babel_mapping_names_an_importable_extractor():
    babel = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["babel"]
    methods = [m["method"] for m in babel["mappings"] if m["method"] != "python"]
    assert "kl_core.libraries.babel_extractor:extract_messages" in methods
    for method in methods:
        module, _, name = method.partition(":")
        assert callable(getattr(importlib.import_module(module), name))


def test_a_doctor_profile_is_found_by_any_spelling():
    from kl_core.doctor.profiles import profile

    assert profile("huggingface/trl").library == "TRL" and profile("OPENRLHF").library == "OpenRLHF"
    with pytest.raises(ValueError, match="library must be one of"):
        profile("cleanrl")
