r"""Release eras for the config doctor: which release a script was written for, and what changed since.

The doctor's profiles (:mod:`kl_core.doctor.profiles`) describe one release of
each library.  Scripts people copy were often written for an older one, whose
settings were spelled differently (OpenRLHF before 0.10.2), which lacked a
setting (OpenRLHF before 0.11.1: no ``--algo.kl.unbiased_gradient``), or whose
defaults put the KL elsewhere (verl before 0.4.0, TRL's GRPO up to 0.18).  The facts of
each older era live in ``kl_core/doctor/releases.toml`` beside the crosswalk,
read from the releases' own tagged code (each table's ``source``), with the
settings each era accepted in ``kl_core/doctor/keys/eras/`` (written by
``scripts/make_era_keys.py``).

:func:`era_profile` turns a profile and an era into the profile the era's
scripts are read with: the same placements and crosswalk rows (what each
estimator computes did not change), with the era's settings renamed to today's,
its defaults, and settings that followed another one derived from it.
:func:`infer` says which era a script's own settings point to, and why.

Source: the ``source`` field of each era; J. Schulman, "Approximating KL
Divergence" (2020), http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kl_core._docfill import docfill
from kl_core.doctor.profiles import (
    AggregationMode,
    KeySpec,
    OffPolicyRule,
    Profile,
    _keys,
    _keys_doc,
    _pair,
    _pairs,
    _trainer_list,
    _truthy,
    release_key,
)
from kl_core.libraries.babel_extractor import EXTRACTOR_SECTIONS, line_of
from kl_core.libraries.loading import CROSSWALK_FILE
from kl_core.libraries.schema import CrosswalkEntry
from kl_core.libraries.snippets import prose
from kl_core.validation import Message

__all__ = ["ERAS_FILE", "PROSE_FIELDS", "Era", "EraEntry", "Fork", "Inference", "ReleaseMismatch", "UnreadFork",
           "era_profile", "eras", "eras_for", "extract_messages", "infer", "unread_fork"]

PROSE_FIELDS = ("changed", "note", "code_note")
"""The fields of an era the user reads as sentences (translated in the app)."""

ERAS_FILE = Path(__file__).with_name("releases.toml")


class ReleaseMismatch(ValueError):
    """A release named for a text that is not one of its trainer's: another library's, or another trainer's.

    Attributes
    ----------
    release : str
        The release as it was named.
    library, trainer : str
        The text's library and trainer (its profile's).
    """

    def __init__(self, text: str, release: str, library: str, trainer: str) -> None:
        super().__init__(text)
        self.release, self.library, self.trainer = release, library, trainer


@dataclass(frozen=True)
class Fork:
    """A project that vendors or pins an era's code.

    Attributes
    ----------
    name, repo : str
    keys : tuple of str
        Settings only the project has: a script using one was written for it.
    when : tuple of (str, str)
        ``(setting, value)`` pairs that name the project.
    pins : str
        The pinned release, when the project pins one.
    pinned_since : str
        The project's first commit with that pin, where earlier commits pinned other releases.
    """

    name: str
    repo: str
    keys: tuple[str, ...] = ()
    when: tuple[tuple[str, str], ...] = ()
    pins: str = ""
    pinned_since: str = ""


@dataclass(frozen=True)
class UnreadFork:
    """A project that runs its own copy of a library, with settings and KL code the doctor does not describe.

    Attributes
    ----------
    name, repo, library : str
        E.g. ``"EasyR1"``, ``"hiyouga/EasyR1"``, ``"verl"``.
    markers : tuple of str
        Settings only the project has; one ending in ``.`` marks every setting under it.
    source : str
        Where the markers were read.
    """

    name: str
    repo: str
    library: str
    markers: tuple[str, ...]
    source: str

    def marked(self, keys: Iterable[str]) -> list[str]:
        """The settings among ``keys`` that only this project has.

        Parameters
        ----------
        keys : iterable of str
            Dotted settings (a YAML's nested keys joined with ``.``).

        Returns
        -------
        list of str
        """
        return [k for k in keys if any(k == m or (m.endswith(".") and k.startswith(m)) for m in self.markers)]


@dataclass(frozen=True)
class EraEntry:
    """What some options computed in an era where it differs from today's crosswalk rows.

    Attributes
    ----------
    options : tuple of str
        The rows' option names (``"low_var_kl"``, ``"k3"``).
    acts_on : str
        ``"reward"`` or ``"loss"``; empty for both.
    changes : dict
        The row fields the era replaces: ``logr_clamp``, ``value_clamp`` (None for no clamp),
        ``library_formula``, ``formula_latex``, ``caveat``.
    clamp_from : str
        The first release of the era with the row's clamps (earlier ones have none); empty when every
        release of the era has them.
    """

    options: tuple[str, ...]
    acts_on: str = ""
    changes: dict[str, Any] = dataclasses.field(default_factory=dict)
    clamp_from: str = ""

    def applies(self, entry: CrosswalkEntry) -> bool:
        """Whether the override is about ``entry``'s row.

        Parameters
        ----------
        entry : CrosswalkEntry

        Returns
        -------
        bool
        """
        return entry.option in self.options and self.acts_on in ("", entry.acts_on)


@dataclass(frozen=True)
class Era:
    """An older era of one profile (see ``doctor/releases.toml`` for each field).

    ``later`` holds the settings of the first release after the era: a setting
    only the era had points to it, one that outlived it does not.  ``off_policy``
    (None: today's rules) replaces the profile's off-policy rules, written with
    today's setting names (the card spells them as the era did) and the era's
    words; ``aggregations`` holds ``(aggregation id, mode value, changes)``: the
    mode's ``name``, ``formula`` and ``coefficient`` in the era, where they differ from today's, or
    ``{"absent": True}`` for a mode the era did not have (verl 0.4.0–0.7.1's ``token-sum``); where today's rule is
    fixed and a setting of the era chose among modes (OpenRLHF 0.8.6–0.10.1's ``--use_dynamic_batch``), the
    changes also name that ``setting``, and each mode is given whole.
    ``fork``: a project's own copy of the library, not a release: only its own settings point to it, it is
    never offered as another release the script could be, and the releases' history does not pass through it.
    ``code_note``: about the code the card shows for a KL term (which release's it is, and how the era's others
    differ): said only where the card shows a KL term.  ``addable``: today's settings the era's config lacks but
    its code reads, which a Hydra ``+key=value`` supplies (verl 0.3.0.post1's ``algorithm.kl_ctrl.horizon``).  ``strict_scripts``: the library's scripts (``trl/scripts/grpo.py``) that refuse, in every release of the
    era, a flag none of their dataclasses declares; ``script_keys``: the flags they take besides the config's
    (the keys file's ``script_keys``: ModelConfig's ``trust_remote_code`` before TRL moved it into GRPOConfig).
    ``releases``: every release of the era, oldest first, and ``partial``: the settings only some of them have,
    with those releases (the keys file's, read at every tag by ``scripts/make_era_keys.py``; TRL's
    ``steps_per_generation`` from 0.18.0 in 0.17.0–0.18.2): a script using one was written for those releases.
    """

    id: str
    library: str
    trainer: str
    label: str
    keys: dict[str, KeySpec]
    renames: tuple[tuple[str, str], ...]
    rewrites: tuple[tuple[str, str, Any], ...]
    derive: tuple[tuple[str, str], ...]
    defaults: tuple[tuple[str, Any], ...]
    absent: tuple[str, ...]
    changed: str
    note: str
    forks: tuple[Fork, ...]
    source: str
    later: frozenset[str] = frozenset()
    accepts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    entries: tuple[EraEntry, ...] = ()
    off_policy: tuple[OffPolicyRule, ...] | None = None
    aggregations: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    fork: bool = False
    strict_scripts: tuple[str, ...] = ()
    script_keys: frozenset[str] = frozenset()
    code_note: str = ""
    addable: tuple[str, ...] = ()
    releases: tuple[str, ...] = ()
    partial: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def only_in(self, keys: Iterable[str]) -> tuple[str, ...]:
        """The releases of the era that have every one of ``keys`` (all of them where none is partial).

        Parameters
        ----------
        keys : iterable of str
            Settings as the era spells them.

        Returns
        -------
        tuple of str
            Oldest first; empty where no release has them all.
        """
        have = [r for r in self.releases if all(r in self.partial[k] for k in keys if k in self.partial)]
        return tuple(have)

    def at(self, release: str) -> Era:
        """The era as one of its releases read it: the settings that release lacks dropped (``--release 0.17.0``
        in 0.17.0–0.18.2 has no steps_per_generation).

        Parameters
        ----------
        release : str
            One of :attr:`releases` (a release number; ``0.17`` is ``0.17.0``).

        Returns
        -------
        Era
            The same era (its id, notes and rules) labelled with that release, with the settings it lacks
            dropped; itself where the release is not listed.  A caution said by era label still finds it
            (:meth:`kl_core.doctor.profiles.Caution.said_in` reads a release inside a label's range).
        """
        key = release_key(release)
        match = next((r for r in self.releases if release_key(r) == key), None)
        if match is None:
            return self
        lacks = [k for k in self.keys if k in self.partial and match not in self.partial[k]]
        # absent: a setting of the era's own config class this release lacks is certainly not one of its fields
        return dataclasses.replace(self, label=match, keys={k: v for k, v in self.keys.items() if k not in lacks},
                                   absent=(*self.absent, *lacks))

    @property
    def renamed(self) -> dict[str, str]:
        """Era setting → today's setting."""
        return dict(self.renames)


@cache
def _snippets() -> dict[str, str]:
    with open(CROSSWALK_FILE, "rb") as fh:
        return tomllib.load(fh).get("snippets", {})


def _clamp(value: Any) -> tuple[float, float] | None:
    if value == "none":
        return None
    lo, hi = value
    return float(lo), float(hi)


def _era_entry(raw: dict[str, Any], where: str) -> EraEntry:
    changes: dict[str, Any] = {}
    for name in ("logr_clamp", "value_clamp"):
        if name in raw:
            changes[name] = _clamp(raw[name])
    for name in ("library_formula", "formula_latex", "setting"):
        if name in raw:
            changes[name] = raw[name]
    if "caveat" in raw:
        changes["caveat"] = prose(raw["caveat"], _snippets(), f"{where}.caveat")
    acts_on = raw.get("acts_on", "")
    if acts_on not in ("", "reward", "loss"):
        raise ValueError(f"{where}: acts_on must be 'reward' or 'loss', got {acts_on!r}")
    return EraEntry(options=tuple(raw["options"]), acts_on=acts_on, changes=changes,
                    clamp_from=raw.get("clamp_from", ""))


def _mode_changes(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """An era's aggregation mode fields (``name``, ``formula``, ``coefficient``), prose as messages; or
    ``{"absent": True}``, a mode the era did not have."""
    if raw.get("absent"):
        if set(raw) - {"id", "value", "absent"}:
            raise ValueError(f"{where}: an absent mode has no name, formula or coefficient")
        return {"absent": True}
    changes: dict[str, Any] = {}
    if "setting" in raw:  # the era chose the mode by a setting where today's rule is fixed: a whole mode
        missing = [f for f in ("value", "name", "formula", "coefficient") if f not in raw]
        if missing:
            raise ValueError(f"{where}: a mode chosen by the era's setting {raw['setting']!r} needs {missing}")
        changes["setting"] = raw["setting"]
    for name in ("name", "coefficient"):
        if name in raw:
            changes[name] = prose(raw[name], _snippets(), f"{where}.{name}")
    if "formula" in raw:
        changes["formula"] = raw["formula"]
    if not changes:
        raise ValueError(f"{where}: an aggregation needs name, formula or coefficient")
    return changes


def _later(file: str, trainer: str) -> frozenset[str]:
    doc = _keys_doc(file)
    return frozenset(doc["next_release"]["keys"]) if trainer in doc["trainers"] else frozenset()


@cache
def eras() -> tuple[Era, ...]:
    """Every era of ``doctor/releases.toml``, in file order.

    Returns
    -------
    tuple of Era

    Raises
    ------
    ValueError
        If a table misses a field or its keys file has no such trainer.
    """
    with open(ERAS_FILE, "rb") as fh:
        raw = tomllib.load(fh)
    out = []
    for i, e in enumerate(raw.get("eras", [])):
        try:
            library, trainer = e["profile"]
            keys, _ = _keys(e["keys_file"], trainer)
            later = _later(e["keys_file"], trainer)
            out.append(Era(
                id=e["id"], library=library, trainer=trainer, label=e["label"], keys=keys,
                renames=tuple((a, b) for a, b in e.get("renames", [])),
                rewrites=tuple((a, b, v) for a, b, v in e.get("rewrites", [])),
                derive=tuple((a, b) for a, b in e.get("derive", [])),
                defaults=tuple((a, v) for a, v in e.get("defaults", [])),
                absent=tuple(e.get("absent", [])),
                changed=prose(e["changed"], {}, f"eras[{i}]"), note=prose(e.get("note", ""), {}, f"eras[{i}]"),
                code_note=prose(e.get("code_note", ""), {}, f"eras[{i}]"),
                forks=tuple(Fork(name=f["name"], repo=f["repo"], keys=tuple(f.get("keys", [])),
                                 when=tuple((a, b) for a, b in f.get("when", [])), pins=f.get("pins", ""),
                                 pinned_since=f.get("pinned_since", ""))
                            for f in e.get("forks", [])),
                source=e["source"], later=later,
                accepts=tuple((k, tuple(v)) for k, v in e.get("accepts", [])),
                entries=tuple(_era_entry(x, f"eras[{i}].entries[{j}]") for j, x in enumerate(e.get("entries", []))),
                off_policy=None if "off_policy" not in e else tuple(
                    OffPolicyRule(when=_pair(r["when"], f"eras[{i}].off_policy.when"),
                                  fix=_pair(r["fix"], f"eras[{i}].off_policy.fix"),
                                  why=prose(r["why"], _snippets(), f"eras[{i}].off_policy"), source=r["source"],
                                  also=_pairs(r.get("also", []), f"eras[{i}].off_policy.also"))
                    for r in e["off_policy"]),
                aggregations=tuple((a["id"], a.get("value", ""), _mode_changes(a, f"eras[{i}].aggregations"))
                                   for a in e.get("aggregations", [])),
                fork=bool(e.get("fork", False)),
                strict_scripts=tuple(e.get("strict_scripts", [])),
                script_keys=_trainer_list(e["keys_file"], trainer, "script_keys"),
                addable=tuple(e.get("addable", [])),
                releases=tuple(_keys_doc(e["keys_file"])["trainers"].get(trainer, {}).get("releases", ())),
                partial={k: tuple(v) for k, v in
                         _keys_doc(e["keys_file"])["trainers"].get(trainer, {}).get("partial", {}).items()},
            ))
            if out[-1].strict_scripts and not out[-1].script_keys:
                raise ValueError(f"strict_scripts needs the keys file's script_keys ({e['keys_file']})")
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"eras[{i}]: missing or malformed field ({exc})") from None
    return tuple(out)


@cache
def _unread_forks() -> tuple[UnreadFork, ...]:
    with open(ERAS_FILE, "rb") as fh:
        raw = tomllib.load(fh)
    try:
        return tuple(UnreadFork(name=f["name"], repo=f["repo"], library=f["library"], markers=tuple(f["markers"]),
                                source=f["source"]) for f in raw.get("unread_forks", []))
    except KeyError as exc:
        raise ValueError(f"unread_forks: missing field {exc}") from None


def unread_fork(library: str, keys: Iterable[str]) -> tuple[UnreadFork, list[str]] | None:
    """The project of ``[[unread_forks]]`` whose own settings ``keys`` uses, with those settings; else None.

    Parameters
    ----------
    library : str
        The library the text was read as (``"verl"``).
    keys : iterable of str
        The text's settings.

    Returns
    -------
    (UnreadFork, list of str) or None
    """
    keys = list(keys)
    for fork in _unread_forks():
        if fork.library == library and (found := fork.marked(keys)):
            return fork, found
    return None


def eras_for(prof: Profile) -> tuple[Era, ...]:
    """The older eras of one profile (its library and trainer).

    Parameters
    ----------
    prof : Profile

    Returns
    -------
    tuple of Era
    """
    return tuple(e for e in eras() if e.library == prof.library and e.trainer == prof.trainer)


def parsing_keys(prof: Profile) -> dict[str, KeySpec]:
    """Every setting of the profile and of its eras, so a script of any era is parsed with its own flags' specs.

    Parameters
    ----------
    prof : Profile

    Returns
    -------
    dict
    """
    out: dict[str, KeySpec] = {}
    for e in eras_for(prof):
        out.update(e.keys)
    out.update(prof.keys)
    return out


def era_profile(prof: Profile, era: Era) -> Profile:
    """The profile scripts of ``era`` are read with.

    Today's placements, crosswalk rows and off-policy rules, except where the
    era says otherwise: its own off-policy rules (:attr:`Era.off_policy`) and
    aggregation words (:attr:`Era.aggregations`); only the option values it accepted (:attr:`Era.accepts`:
    rows and spellings outside them are dropped), and what an option computed
    then (:attr:`Era.entries`: clamps, code, caveat); the release label of the
    era; every setting the era accepted known; the era's defaults; today's
    settings spelled as the era spelled them (:attr:`Profile.spelling`).

    Parameters
    ----------
    prof : Profile
        The current profile.
    era : Era
        One of :func:`eras_for` ``(prof)``.

    Returns
    -------
    Profile
    """
    keys = {**{k: v for k, v in era.keys.items() if k not in era.renamed}, **prof.keys}
    for k, v in era.defaults:
        if k in keys:
            keys[k] = dataclasses.replace(keys[k], default=v)
    for old, new in era.renames:  # today's setting with the era's default
        if new in keys and old in era.keys:
            keys[new] = dataclasses.replace(keys[new], default=era.keys[old].default)
    unavailable = set(era.absent) | {k for k, _ in era.derive}
    targets = set(era.renamed.values()) | {k for _, k, _ in era.rewrites}
    if prof.syntax != "dataclass":  # the era's keys file is complete: everything else of today's is new
        unavailable |= {k for k in prof.keys if k not in era.keys and k not in targets}
    else:  # it lists the era's config class in full: today's own settings it lacks are new
        unavailable |= {k for k in prof.own_keys if k not in era.keys and k not in targets}
    accepts = {**prof.accepts, **{k: v for k, v in era.accepts}}
    clamp_from: dict[tuple[str, str], str] = {}
    placements = []
    for pl in prof.placements:
        allowed = accepts.get(pl.option) if pl.option else None
        entries = []
        for e in pl.entries:
            if allowed is not None:
                if not any(n in allowed for n in e.names):
                    continue  # an option of a later release (verl's 'k3+' before 0.6)
                e = dataclasses.replace(e, aliases=tuple(a for a in e.aliases if a in allowed))
            for over in era.entries:
                if over.applies(e):
                    e = dataclasses.replace(e, **over.changes)
                    if over.clamp_from:
                        clamp_from[(e.acts_on, e.option)] = over.clamp_from
            entries.append(e)
        agg = pl.aggregation
        words = {value: changes for aid, value, changes in era.aggregations if aid == agg.id}
        chosen_by = {c["setting"] for c in words.values() if "setting" in c}
        if chosen_by:  # a setting of the era chose among modes where today's rule is fixed (OpenRLHF's dynamic batch)
            (setting,) = chosen_by
            agg = dataclasses.replace(agg, setting=setting, modes=tuple(
                AggregationMode(value=v, **{f: x for f, x in c.items() if f != "setting"}) for v, c in words.items()))
        elif agg.setting and "" in words:  # the era had no such setting: one fixed rule (verl before 0.4.0)
            agg = dataclasses.replace(agg, setting="", modes=(AggregationMode(value="", **words[""]),))
        elif words:  # what the coefficient weighed in the era, in its words (OpenRLHF 0.10.1's --gamma)
            agg = dataclasses.replace(agg, modes=tuple(dataclasses.replace(m, **words[m.value])
                                                       if m.value in words else m for m in agg.modes
                                                       if not words.get(m.value, {}).get("absent")))
        placements.append(dataclasses.replace(pl, entries=tuple(entries), aggregation=agg))
    off_policy = prof.off_policy if era.off_policy is None else era.off_policy
    return dataclasses.replace(prof, release=era.label, keys=keys, unavailable=frozenset(unavailable),
                               spelling={new: old for old, new in era.renames}, derived=dict(era.derive),
                               switches={new: (flag, v) for flag, new, v in era.rewrites},
                               placements=tuple(placements), accepts=accepts, clamp_from=clamp_from,
                               off_policy=off_policy, addable=frozenset(era.addable) & frozenset(unavailable))


def translate(era: Era, key: str, value: Any) -> tuple[str, Any]:
    """An era's setting as today's: renamed, or a switch rewritten to the setting it set.

    Parameters
    ----------
    era : Era
    key : str
    value : Any

    Returns
    -------
    tuple of (str, Any)
    """
    for flag, new, v in era.rewrites:
        if key == flag:
            return new, v
    return era.renamed.get(key, key), value


def derive(era: Era, values: dict[str, Any], given: Iterable[str]) -> list[tuple[str, Any, str]]:
    """Today's settings the era did not have, set from the setting they followed.

    Parameters
    ----------
    era : Era
    values : dict
        The settings' values (changed in place).
    given : iterable of str
        The settings the script wrote (never overridden).

    Returns
    -------
    list of (setting, value, rule)
    """
    done = []
    given = set(given)
    for target, expr in era.derive:
        if target in given:
            continue
        words = expr.split()
        if len(words) == 2 and words[0] == "not":
            v = not _truthy(values.get(words[1]))
        else:
            raise ValueError(f"era {era.id}: derive expression must be 'not KEY', got {expr!r}")
        values[target] = v
        done.append((target, v, expr))
    return done


@dataclass(frozen=True)
class Inference:
    """Which release a script's settings point to.

    Attributes
    ----------
    era : Era or None
        The era the card describes; None for the current release.
    decided : bool
        False when nothing in the text points either way (the card then
        describes the current release and shows the era where its KL differs).
    why : str
        A sentence saying what in the text decided it.
    candidates : tuple of Era
        The other eras the settings allow (none ruled out), to compare with.
    """

    era: Era | None
    decided: bool
    why: str
    candidates: tuple[Era, ...] = ()


def _bare(key: str) -> str:
    return key.lstrip("+~")


def _listing(keys: list[str], n: int = 3) -> str:
    keys = list(dict.fromkeys(keys))
    more = len(keys) - n
    return ", ".join(keys[:n]) + (f" (+{more})" if more > 0 else "")


def infer(prof: Profile, settings: Iterable[tuple[str, Any]], release: str | None = None) -> Inference:
    """Which release a script was written for, from the settings it uses.

    A setting the era had and the current release does not, or a setting or
    value that names a project vendoring or pinning the era, points to the era;
    a KL setting of the current release the era lacked points to today.

    Parameters
    ----------
    prof : Profile
        The current profile.
    settings : iterable of (str, Any)
        The script's settings as written (before any renaming, with Hydra's ``+``, ``++`` or ``~``) and their
        values.
    release : str, optional
        The release the user named: an era id, an era label, or the current
        release (``"latest"`` or its number); decides without inference.

    Returns
    -------
    Inference

    Raises
    ------
    ReleaseMismatch
        A ``ValueError``: if ``release`` names neither the current release nor an era of this profile.
    """
    candidates = eras_for(prof)
    if release is not None:
        r = release.strip()
        if r.lower() in ("latest", "current", prof.release):
            return Inference(None, True, Message("the release was given: {lib} {rel}", lib=prof.library, rel=prof.release))
        for e in candidates:
            if r in (e.id, e.label) or r.lower() == e.id.lower():
                return Inference(e, True, Message("the release was given: {lib} {rel}", lib=prof.library, rel=e.label))
        if (key := release_key(r)) is not None:  # a release number: the era whose range holds it
            for e in candidates:
                ends = [release_key(v) for v in e.label.split("–")]
                if not e.fork and None not in ends and ends[0] <= key <= ends[-1]:
                    return Inference(e.at(r), True, Message("the release was given: {lib} {given}, in the era {rel}",
                                                            lib=prof.library, given=r, rel=e.label))
        ranges = ", ".join(e.label for e in candidates if not e.fork)
        have = ["latest", prof.release, *(e.id for e in candidates)]
        ends = [release_key(e.label.split("–")[-1]) for e in candidates if not e.fork]
        newest = max((e for e in ends if e is not None), default=None)
        now = release_key(prof.release)
        if key is not None and newest is not None and now is not None and newest < key < now:
            # a real release the doctor has no reading of its own for (verl 0.8.0, TRL 1.14.0)
            raise ReleaseMismatch(
                f"release {release!r} of {prof.library} {prof.trainer} lies between the releases the doctor reads "
                f"({ranges}) and the current {prof.release}, and the doctor has no reading of it: use --release "
                f"latest for {prof.release}'s (the card's 'What changed' lists what changed in between), got "
                f"{release!r}", release, prof.library, prof.trainer)
        raise ReleaseMismatch(f"release must be one of {have} or a release number in {ranges} for {prof.library} "
                              f"{prof.trainer}, got {release!r}", release, prof.library, prof.trainer)
    written = list(settings)
    pairs = [(_bare(k), v) for k, v in written]
    keys = [k for k, _ in pairs]
    # Hydra's +key adds a key and refuses one the config sets: no sign that a release had the key, or lacked it
    added = {_bare(k) for k, _ in written if k.startswith("+") and not k.startswith("++")}
    ruled_out: list[tuple[Era, list[str]]] = []
    pointed: list[tuple[Era, Message]] = []  # by settings only it had: the newest such era is taken
    relevant = set(prof.relevant)  # a property that builds its tuple: once, not once per key
    for e in candidates:
        era_only = [k for k in keys if k in e.keys and k not in prof.keys and k not in e.later and k not in added]
        era_only.sort(key=lambda k: (k not in e.renamed and not any(k == r[0] for r in e.rewrites)))  # KL flags first
        # a KL setting of today's the era lacked, a setting only another older era had, or (argparse) any flag of
        # today's the era's parser does not declare: it would refuse it (a typo is in no release and decides
        # nothing).  A dataclass era's keys are the config class's own fields, not those it inherits
        # (TrainingArguments'): there only `absent` counts.
        siblings = {k for o in candidates if o.id != e.id for k in o.keys}
        complete = prof.syntax != "dataclass"
        switches = {flag for flag, _, _ in e.rewrites}
        today = [k for k in keys if (k in relevant and ((complete and k not in e.keys) or k in e.absent))
                 or (k in siblings and k not in e.keys and k not in prof.keys and k not in switches
                     and k not in added)
                 or (prof.syntax == "argparse" and k in prof.keys and k not in e.keys  # argparse refuses it
                     and k not in e.renamed.values() and k not in switches)]
        fork = None
        for f in e.forks:
            if any(k in f.keys and k not in prof.keys for k in keys) or any(
                    str(v).strip("'\"") == want for k, v in pairs for key, want in f.when if k == key):
                fork = f
                break
        if today:
            ruled_out.append((e, today))
        elif fork is not None:
            used = [k for k in keys if k in fork.keys]
            why = (Message("it uses settings of {fork} ({repo}), which pins {pins} from its commit {since} on "
                           "(earlier commits pin other releases)", fork=fork.name, repo=fork.repo, pins=fork.pins,
                           since=fork.pinned_since) if fork.pins and fork.pinned_since else
                   Message("it uses settings of {fork} ({repo}), which pins {pins}", fork=fork.name, repo=fork.repo,
                           pins=fork.pins) if fork.pins else
                   Message("it uses {keys}, settings of {fork}'s own copy of {lib} ({repo})", keys=_listing(used),
                           fork=fork.name, lib=prof.library, repo=fork.repo) if e.fork and used else
                   Message("it is a {fork} script ({repo}), whose vendored copy of {lib} has the code of {label}", fork=fork.name,
                           repo=fork.repo, lib=prof.library, label=e.label))
            return Inference(e, True, why)
        elif era_only:
            pointed.append((e, era_only))
    if pointed:  # eras are in release order (releases.toml): the newest era the settings point to
        e, era_only = pointed[-1]
        out = {r.id for r, _ in ruled_out} | {e.id}
        # a key older eras had too (TRL's max_prompt_length, 0.14.0 to 1.9.2) does not choose among them: say so
        alike = [o for o in candidates if o.id not in out and not o.fork and all(k in o.keys for k in era_only)]
        why = (Message("it uses {keys}, settings that later releases do not have and that {lib} {labels} all had: "
                       "the card reads the newest of those eras", keys=_listing(era_only), lib=prof.library,
                       labels=Message("{first} and {last}", first=", ".join(o.label for o in alike), last=e.label))
               if alike else
               Message("it uses {keys}, settings of {lib} {label} that later releases do not have",
                       keys=_listing(era_only), lib=prof.library, label=e.label) if len(set(era_only)) > 1 else
               Message("it uses {keys}, a setting of {lib} {label} that later releases do not have",
                       keys=_listing(era_only), lib=prof.library, label=e.label))
        narrow = [k for k in keys if k in e.partial and k in e.keys]
        if narrow and set(have := e.only_in(narrow)) != set(e.releases):
            why = Message("{why}; {only}", why=why, only=Message(
                "of its releases only {lib} {range} have {keys}", lib=prof.library, range=_range(e, have),
                keys=_listing(narrow)) if len(have) > 1 else Message(
                "of its releases only {lib} {range} has {keys}", lib=prof.library, range=_range(e, have),
                keys=_listing(narrow)) if have else Message(
                "no one release of it has all of {keys}", keys=_listing(narrow)))
        return Inference(e, True, why, tuple(o for o in candidates if o.id not in out and not o.fork))
    releases = [e for e in candidates if not e.fork]  # a fork is read only where its own settings point to it
    ruled_out = [(e, today) for e, today in ruled_out if not e.fork]
    if not releases:
        return Inference(None, True, "")
    if len(ruled_out) == len(releases):  # every older era lacked a KL setting the script uses
        return Inference(None, True, _lacking(prof, ruled_out))
    out = {r.id for r, _ in ruled_out}
    left = tuple(e for e in releases if e.id not in out)
    return Inference(None, False, Message("nothing in the text says which release it was written for"), left)


def _range(era: Era, have: tuple[str, ...]) -> str:
    """Releases of ``era`` as written: ``0.18.0–0.18.2`` where they follow one another, else listed."""
    at = [era.releases.index(r) for r in have]
    if at == list(range(at[0], at[-1] + 1)):
        return have[0] if len(have) == 1 else f"{have[0]}–{have[-1]}"
    return ", ".join(have)


def _lacking(prof: Profile, ruled_out: list[tuple[Era, list[str]]]) -> Message:
    """Why the current release: the KL settings each older era lacked (one clause where they lacked the same)."""
    common = [k for k in ruled_out[0][1] if all(k in today for _, today in ruled_out)]
    if common:
        return Message("it uses {keys}, which {lib} {label} did not have", keys=_listing(common), lib=prof.library,
                       label=", ".join(e.label for e, _ in ruled_out))
    return Message("{first}; {rest}", first=Message("it uses {keys}, which {lib} {label} did not have",
                                                    keys=_listing(ruled_out[0][1]), lib=prof.library,
                                                    label=ruled_out[0][0].label),
                   rest=_lacking(prof, ruled_out[1:]))


@docfill(**EXTRACTOR_SECTIONS)
def extract_messages(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Any:
    """Babel extractor for ``doctor/releases.toml``: the text of each era's prose fields.

    Registered in pyproject.toml (``[[tool.babel.mappings]]``) beside the
    crosswalk's, so the catalog's English is the data file's own.

    %(extractor_args)s
        ``(lineno, None, template, comments)`` for each prose field, in file order.
    """
    text = fileobj.read().decode("utf-8")
    for e in tomllib.loads(text).get("eras", []):
        for name in PROSE_FIELDS:
            if e.get(name):
                template = prose(e[name], {}, "extract").template
                yield line_of(text, e[name][:40]), None, template, []
        for x in e.get("entries", []):
            if x.get("caveat"):
                template = prose(x["caveat"], _snippets(), "extract").template
                yield line_of(text, x["caveat"][:40]), None, template, []
        for fields, rows in ((("why",), e.get("off_policy", [])), (("name", "coefficient"), e.get("aggregations", []))):
            for x in rows:
                for field in fields:
                    if x.get(field):
                        template = prose(x[field], _snippets(), "extract").template
                        yield line_of(text, x[field][:40]), None, template, []
