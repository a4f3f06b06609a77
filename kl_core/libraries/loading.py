"""Reading ``crosswalk.toml``: its entries, releases and libraries, checked.

:func:`load_crosswalk` resolves each entry's ``template`` chain and its ``@{name}``
snippets (:mod:`kl_core.libraries.snippets`), turns the prose fields
(:data:`PROSE_FIELDS`) into messages, and builds the records of
:mod:`kl_core.libraries.schema`, whose own checks then apply.  The loaded data
lives in :mod:`kl_core.libraries.registry`.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from kl_core.libraries.schema import ConfigDefault, CrosswalkData, CrosswalkEntry, Library, Release
from kl_core.libraries.snippets import _expand, prose

__all__ = ["CROSSWALK_FILE", "PROSE_FIELDS", "load_crosswalk"]

CROSSWALK_FILE = Path(__file__).with_name("crosswalk.toml")
"""The data file behind :data:`kl_core.libraries.registry.CROSSWALK`, its releases and libraries."""

PROSE_FIELDS: dict[str, tuple[str, ...]] = {
    "entries": ("component", "sampler", "other", "direction", "weight", "early_stop", "verified_in", "caveat",
                "grad_expected", "grad_fix", "since_why"),
    "profiles": ("legacy", "hydra_group_note"),
    "profiles.off_policy": ("why",),
    "profiles.cautions": ("message", "cost"),
    "profiles.uncovered": ("note",),
    "aggregations.modes": ("name", "coefficient"),
}
"""The data file's fields a user reads as sentences, by table (``[templates.*]`` count as entries).

They are loaded as :class:`kl_core.validation.Message` (the English text, with the
template and params the app translates; a ``@{snippet}`` is a param, itself a
message), and :func:`kl_core.libraries.babel_extractor.extract_messages` gives their templates to the translation
tools.  Every other field (names, settings, code, formulas, sources) stays as written.
"""

_ENTRY_FIELDS = {f.name: f for f in fields(CrosswalkEntry)}
# Fields that may be left out of the data file, and the value they then take.
_OPTIONAL = {
    "weight": None,
    "early_stop": None,
    "logged_as": None,
    "logr_clamp": None,
    "value_clamp": None,
    "release": None,
    "legacy": False,
    "grad_is_clip": None,
    "grad_target_off_policy": None,
    "grad_fix": None,
    "grad_expected": "",
    "since": None,
    "since_why": None,
}
_TUPLE_FIELDS = ("aliases", "kl_roles")
_PAIR_FIELDS = ("variables", "config")
_FLOAT_PAIR_FIELDS = ("logr_clamp", "value_clamp")


def _resolve_template(
    raw: dict[str, Any], templates: dict[str, dict[str, Any]], where: str
) -> dict[str, Any]:
    """The entry's own keys over its template chain's."""
    chain: list[dict[str, Any]] = [raw]
    name = raw.get("template")
    while name is not None:
        if name not in templates:
            raise ValueError(f"{where}: unknown template {name!r}")
        if any(t is templates[name] for t in chain):
            raise ValueError(f"{where}: template {name!r} refers to itself")
        chain.append(templates[name])
        name = templates[name].get("template")
    merged: dict[str, Any] = {}
    for table in reversed(chain):
        merged.update(table)
    merged.pop("template", None)
    return merged



def _convert(key: str, value: Any, snippets: dict[str, str], where: str) -> Any:
    """One field from TOML types to the dataclass's."""
    if isinstance(value, str):
        if key in PROSE_FIELDS["entries"]:
            return prose(value, snippets, f"{where}.{key}")
        return _expand(value, snippets, f"{where}.{key}")
    if key in _TUPLE_FIELDS:
        return tuple(value)
    if key in _PAIR_FIELDS:
        if any(not (isinstance(p, list) and len(p) == 2) for p in value):
            raise ValueError(f"{where}.{key} must be a list of [name, value] pairs")
        return tuple((str(a), _expand(str(b), snippets, where)) for a, b in value)
    if key in _FLOAT_PAIR_FIELDS:
        return tuple(float(v) for v in value)
    if key == "grad_is_clip":
        return float(value)
    return value


def _entry(raw: dict[str, Any], templates: dict[str, dict[str, Any]], snippets: dict[str, str], i: int) -> CrosswalkEntry:
    where = f"entries[{i}] ({raw.get('library', '?')} {raw.get('option', '?')})"
    merged = _resolve_template(raw, templates, where)
    unknown = sorted(set(merged) - set(_ENTRY_FIELDS))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}")
    values = {k: _convert(k, v, snippets, where) for k, v in merged.items()}
    for name in _ENTRY_FIELDS:
        if name not in values:
            if name in _OPTIONAL:
                values[name] = _OPTIONAL[name]
            elif _ENTRY_FIELDS[name].default is not MISSING:
                values[name] = _ENTRY_FIELDS[name].default
            else:
                raise ValueError(f"{where}: missing field {name!r}")
    try:
        return CrosswalkEntry(**values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def _release(raw: dict[str, Any], i: int) -> Release:
    where = f"releases[{i}]"
    try:
        defaults = tuple(ConfigDefault(**d) for d in raw.get("defaults", ()))
        return Release(
            library=raw["library"],
            version=raw["version"],
            current=bool(raw["current"]),
            source=raw["source"],
            sha256=raw.get("sha256"),
            commit=raw.get("commit"),
            read_on=raw["read_on"],
            note=raw.get("note", ""),
            defaults=defaults,
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{where}: missing or unknown field ({exc})") from None



def _library(raw: dict[str, Any], i: int) -> Library:
    where = f"libraries[{i}] ({raw.get('name', '?')})"
    unknown = sorted(set(raw) - {"name", "aliases", "packages"})
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}")
    try:
        return Library(name=raw["name"], aliases=tuple(raw.get("aliases", ())),
                       packages=tuple(raw.get("packages", ())))
    except KeyError as exc:
        raise ValueError(f"{where}: missing field {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def _libraries(raw: list[dict[str, Any]], entries: tuple[CrosswalkEntry, ...],
               rels: tuple[Release, ...]) -> tuple[Library, ...]:
    """The ``[[libraries]]`` table, checked against the entries and releases (one per entry library if absent)."""
    if not raw:
        return tuple(Library(name) for name in dict.fromkeys(e.library for e in entries))
    libs = tuple(_library(r, i) for i, r in enumerate(raw))
    spellings: dict[str, str] = {}
    for lib in libs:
        for n in lib.names:
            if spellings.setdefault(n, lib.name) != lib.name:
                raise ValueError(f"libraries: {n!r} names both {spellings[n]} and {lib.name}")
    names = {lib.name for lib in libs}
    for what, rows in (("entries", entries), ("releases", rels)):
        for row in rows:
            if row.library not in names:
                raise ValueError(f"{what}: library {row.library!r} is not among the [[libraries]] {sorted(names)}")
    return libs


def load_crosswalk(path: str | os.PathLike[str] | None = None) -> CrosswalkData:
    """Read the crosswalk data file into checked entries, releases and libraries.

    String fields may contain ``@{name}`` references to the file's ``[snippets]``
    table; an entry with ``template = "name"`` starts from ``[templates.name]``.
    Every entry is built as a :class:`CrosswalkEntry`, so every field check of
    that class applies.

    Parameters
    ----------
    path : str or path, optional
        A TOML file in the format of :data:`CROSSWALK_FILE` (the default).

    Returns
    -------
    CrosswalkData
        ``entries``, ``releases`` and ``libraries``, in file order.

    Raises
    ------
    ValueError
        If the file cannot be parsed, or an entry, release or library is malformed; the
        message names the entry (by index, library and option) and the field.

    Examples
    --------
    >>> data = load_crosswalk()
    >>> from kl_core.libraries.registry import CROSSWALK
    >>> data.entries == CROSSWALK
    True
    """
    p = CROSSWALK_FILE if path is None else Path(path)
    try:
        with open(p, "rb") as fh:
            raw = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"path {str(p)!r} is not valid TOML: {exc}") from None
    snippets = raw.get("snippets", {})
    templates = raw.get("templates", {})
    entries = tuple(_entry(e, templates, snippets, i) for i, e in enumerate(raw.get("entries", [])))
    if not entries:
        raise ValueError(f"path {str(p)!r} has no [[entries]]")
    rels = tuple(_release(r, i) for i, r in enumerate(raw.get("releases", [])))
    known = {(r.library, r.version) for r in rels}
    for e in entries:
        if e.release is not None and (e.library, e.release) not in known:
            raise ValueError(
                f"{e.library} {e.option}: release {e.release!r} is not among the [[releases]] read"
            )
    return CrosswalkData(entries=entries, releases=rels,
                         libraries=_libraries(raw.get("libraries", []), entries, rels))

