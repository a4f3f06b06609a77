r"""How each library's configuration places a KL term: the doctor's tables of ``crosswalk.toml``.

The crosswalk (:mod:`kl_core.libraries.crosswalk`) says what one KL option computes.  The
config doctor (:mod:`kl_core.doctor.diagnosis`) also needs to know, for each trainer of
each release, which settings turn a KL term on, which one holds the option and
which the coefficient, how the term is aggregated over tokens, and when the
updates are off-policy.  Those facts live in the ``[[profiles]]`` and
``[[aggregations]]`` tables of :data:`kl_core.libraries.crosswalk.CROSSWALK_FILE`, each with
the file of the release it was read in; this module loads and checks them.
The settings every release accepts, with their defaults, come from
``kl_core/doctor/keys/<library>-<release>.json`` (``scripts/make_doctor_keys.py``
reads them out of the release wheels).

A *condition* is ``(setting, test)`` in the language of
:attr:`kl_core.libraries.crosswalk.CrosswalkEntry.config`; :func:`holds` evaluates it.

Source: the crosswalk's releases (verl 0.9.1, OpenRLHF 0.11.2, TRL 1.16.0); see
each table's ``source``.  Estimators after J. Schulman, "Approximating KL
Divergence" (2020), http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from kl_core.doctor.parse import as_double
from kl_core.libraries.loading import CROSSWALK_FILE
from kl_core.libraries.registry import CROSSWALK, canonical_library, libraries
from kl_core.libraries.schema import CrosswalkEntry
from kl_core.libraries.snippets import prose

__all__ = [
    "SYNTAXES",
    "Aggregation",
    "AggregationMode",
    "Caution",
    "KeySpec",
    "OffPolicyRule",
    "Placement",
    "Profile",
    "evaluate_expression",
    "holds",
    "profile",
    "profiles",
]

KEYS_DIR = Path(__file__).with_name("keys")
SYNTAXES = ("hydra", "argparse", "dataclass")
"""How a profile's settings are written: ``key=value``, ``--flag value``, or dataclass fields."""

Condition = tuple[str, str]
_COMPARE = re.compile(r"^(<=|>=|!=|==|<|>)\s*(.+)$")


@dataclass(frozen=True)
class KeySpec:
    """One setting a release accepts.

    Attributes
    ----------
    key : str
        As written in the release's input syntax (``"--algo.kl.estimator"``).
    default : Any
        The release's default, as a Python value (None also when not a literal).
    default_text : str or None
        The source of a default that is not a literal (e.g. ``"int(1e8)"``).
    action : str or None
        For argparse flags: ``"store"``, ``"store_true"`` or ``"store_false"``.
    nargs : int or str or None
        For argparse flags: how many values follow the flag.
    type : str or None
        The declared type, when the release declares one.
    choices : tuple or None
        The values argparse accepts, when it restricts them.
    """

    key: str
    default: Any
    default_text: str | None = None
    action: str | None = None
    nargs: int | str | None = None
    type: str | None = None
    choices: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class AggregationMode:
    """One way a library reduces per-token values to a number.

    Attributes
    ----------
    value : str
        The setting's value that selects it (empty for a fixed rule).
    name : str
        A few words, e.g. ``"token mean over the batch"``.
    formula : str
        The reduced term in LaTeX, with :math:`k_{i,t}` the per-token value.
    coefficient : str
        What the coefficient weighs under this reduction.
    """

    value: str
    name: str
    formula: str
    coefficient: str


@dataclass(frozen=True)
class Aggregation:
    """How one placement's per-token KL becomes the term the coefficient multiplies.

    Attributes
    ----------
    id : str
        Referenced by :attr:`Placement.aggregation`.
    setting : str
        The setting that selects the mode, or ``""`` for a fixed rule.
    modes : tuple of AggregationMode
    source : str
        Where the release does it.
    """

    id: str
    setting: str
    modes: tuple[AggregationMode, ...]
    source: str

    def mode(self, value: Any) -> AggregationMode | None:
        """The mode for ``value`` of :attr:`setting` (the only mode of a fixed rule); None if unknown.

        Parameters
        ----------
        value : Any
            The setting's value.

        Returns
        -------
        AggregationMode or None
        """
        if not self.setting:
            return self.modes[0]
        for m in self.modes:
            if m.value == str(value):
                return m
        return None


@dataclass(frozen=True)
class Placement:
    """One place a trainer can put a KL term (see the comments of ``crosswalk.toml``).

    Attributes
    ----------
    acts_on : str
        ``"reward"`` or ``"loss"``.
    entries : tuple of CrosswalkEntry
        The crosswalk entries that can appear here, in table order.
    switch : tuple of (str, str)
        Conditions that turn the placement on (all of them).
    option : str or None
        The setting whose value is a crosswalk option name.
    coef, coef_on : str
        The coefficient's setting and the test that makes it a live term.
    adaptive : tuple of (str, str)
        Conditions for the adaptive controller (empty: always fixed).
    target, horizon : str or None
        The adaptive controller's settings.
    aggregation : Aggregation
    toggles : tuple of (str, str)
        Other settings of the placement a fix may change, with the value to try.
    enable : tuple of (str, str)
        Settings that turn the placement on with a reverse-KL gradient.
    source : str
    """

    acts_on: str
    entries: tuple[CrosswalkEntry, ...]
    switch: tuple[Condition, ...]
    option: str | None
    coef: str
    coef_on: str
    adaptive: tuple[Condition, ...]
    target: str | None
    horizon: str | None
    aggregation: Aggregation
    toggles: tuple[Condition, ...]
    enable: tuple[Condition, ...]
    source: str

    @property
    def settings(self) -> tuple[str, ...]:
        """Every setting the placement reads, in a stable order."""
        keys = [k for k, _ in self.switch]
        keys += [k for k in (self.option, self.coef, self.target, self.horizon) if k]
        keys += [k for k, _ in (*self.adaptive, *self.toggles)]
        if self.aggregation.setting:
            keys.append(self.aggregation.setting)
        return tuple(dict.fromkeys(keys))


@dataclass(frozen=True)
class OffPolicyRule:
    """When a batch feeds more than one optimizer step, and the setting that stops it.

    Attributes
    ----------
    when : tuple of (str, str)
        The condition.
    fix : tuple of (str, str)
        ``(setting, value or expression)`` that makes every step on-policy.
    why : str
        What happens, in words.
    source : str
    also : tuple of (str, str)
        Further conditions, all of which must hold too (OpenRLHF's
        ``--train.async_queue_size`` beside ``--train.async_enable``); the card
        names their settings after the rule's.
    stale_old : bool
        π_old is the trainer's own log-probability, computed after the weights that generated the
        tokens changed (OpenRLHF's asynchronous trainer): an importance weight π_θ/π_old then does not
        reach the sampler, so it does not correct the gradient.
    """

    when: Condition
    fix: Condition
    why: str
    source: str
    also: tuple[Condition, ...] = ()
    stale_old: bool = False

    def holds(self, values: dict[str, Any]) -> bool:
        """Whether the rule applies to these settings (:attr:`when` and every :attr:`also`).

        Parameters
        ----------
        values : dict
            The settings' values.

        Returns
        -------
        bool
        """
        return all(holds(c, values.get(k), values) for k, c in (self.when, *self.also))

    @property
    def every_step(self) -> bool:
        """Whether the first optimizer step on each batch is off-policy too.

        A rule whose condition is a switch (``set``, ``True``: asynchronous
        generation, the batch sampled by weights one update old) makes every
        step off-policy; one that counts passes or splits (``> 1``,
        ``< data.train_batch_size``) leaves the first step on each batch on-policy.
        """
        return self.when[1].strip() in ("set", "True")


def _within(release: str, labels: tuple[str, ...]) -> bool:
    """Whether one release (``0.17.0``) lies in the range of an era label (``0.17.0–0.18.2``) of ``labels``."""
    one = release_key(release)
    if one is None:
        return False
    for label in labels:
        ends = [release_key(v) for v in label.split("–")]
        if len(ends) == 2 and None not in ends and ends[0] <= one <= ends[1]:
            return True
    return False


def release_key(text: str) -> tuple[int, ...] | None:
    """A release number as a sortable key (``0.3.0.post1`` after ``0.3.0``, ``0.2`` as ``0.2.0``); None if it is none.

    Parameters
    ----------
    text : str
        ``"0.17.0"``, ``"v0.3.0.post1"``.

    Returns
    -------
    tuple of int or None
    """
    m = re.fullmatch(r"v?(\d+(?:\.\d+){0,3})(?:\.?post(\d+))?", text.strip())
    if m is None:
        return None
    parts = [int(x) for x in m[1].split(".")]
    return (*parts, *[0] * (4 - len(parts)), int(m[2] or 0))


@dataclass(frozen=True)
class Caution:
    """A known trap the gradient classes cannot see (e.g. TRL's sequence-level weight).

    Attributes
    ----------
    when : tuple of (str, str)
        Conditions (all of them).
    code, message : str
        The warning.
    fix : tuple of (str, str)
        The setting and value that avoid it.
    source : str
    gradient : str or None
        Where the trap changes the expected gradient of the profile's KL terms, its class (``"mixed"``),
        which the card shows instead of the entry's.
    computes : dict
        Where the trap runs other code than the crosswalk entry of option ``computes["option"]`` shows: that
        code (``library_formula``) and its formula (``formula_latex``), which the card shows instead.
    cost : str
        What the fix costs or trades away (a sentence the app shows under it), or empty.
    note_in : tuple of str
        Labels of eras (:attr:`kl_core.doctor.releases.Era.label`) whose releases differ on the trap, some
        with it and some without: there the message is a note, not a warning.
    absent_in : tuple of str
        Labels of eras that do not have the trap at all, and the profile's own release where only older
        releases have it (OpenRLHF 0.6's packed KL loss): there nothing is said.
    """

    when: tuple[Condition, ...]
    code: str
    message: str
    fix: Condition
    source: str
    gradient: str | None = None
    computes: dict[str, str] = field(default_factory=dict)
    cost: str = ""
    note_in: tuple[str, ...] = ()
    absent_in: tuple[str, ...] = ()

    def said_in(self, release: str) -> str:
        """How the trap is said under ``release`` (a release or an era's label): ``"warning"``, ``"note"`` or ``""``.

        Parameters
        ----------
        release : str
            :attr:`Profile.release` of the profile being diagnosed.

        Returns
        -------
        str
        """
        if release in self.absent_in or _within(release, self.absent_in):
            return ""
        return "note" if release in self.note_in or _within(release, self.note_in) else "warning"


@dataclass(frozen=True)
class Profile:
    """One trainer of one release, as the doctor reads its configuration.

    Attributes
    ----------
    library, release, trainer : str
        E.g. ``"TRL"``, ``"1.16.0"``, ``"grpo"``.
    syntax : str
        One of :data:`SYNTAXES`.
    prefix : str
        What the crosswalk entries' ``config`` writes before a setting (``"GRPOConfig."``).
    names : tuple of str
        Strings that name this trainer in a command or in Python.
    placements : tuple of Placement
    off_policy : tuple of OffPolicyRule
    cautions : tuple of Caution
    keys : dict
        Every accepted setting (:class:`KeySpec`), from the release's files.
    key_files : tuple of str
        The files of the release the keys were read from.
    source : str
    legacy : str
        For a trainer the library no longer ships, what to tell the user (else empty).
    uncovered : tuple of (tuple of (str, str), str)
        KL terms the doctor does not describe: the conditions that add one, and the note to show.
    spelling : dict
        Today's setting → as an older era spelled it (:func:`kl_core.doctor.releases.era_profile`); empty
        for the current release.
    switches : dict
        Today's setting → (the older era's switch flag that set it, the value it set): OpenRLHF 0.5.9–0.6.0's
        ``--use_kl_estimator_k3`` sets ``--algo.kl.estimator`` to ``k3``; empty for the current release.
    unavailable : frozenset of str
        Today's settings an older era did not have: no fix may change them, and a
        config that writes one is told the era does not know it.
    derived : dict
        Today's setting → the rule an older era followed instead (``"not KEY"``,
        :func:`kl_core.doctor.releases.derive`); empty for the current release.
    groups : tuple of str
        Hydra config groups (``model_engine``, ``actor``, …): an override of one
        (``model_engine=megatron``, ``actor@actor_rollout_ref.actor=…``) chooses a config file, not a setting.
    group_note : str
        What choosing a group means for the card.
    accepts : dict
        An option setting → the only values the release accepts in it, where the
        release's settings file does not say (:attr:`KeySpec.choices`); set by an
        older era (:attr:`kl_core.doctor.releases.Era.accepts`).
    clamp_from : dict
        ``(acts_on, option)`` → the first release of an era whose row has the clamps
        the profile's entry describes (earlier releases of the era have none).
    own_keys : frozenset of str
        Of a dataclass profile, the settings its config class declares that transformers'
        ``TrainingArguments`` lacks (the keys file's ``own``): an older era's config class,
        listed in full, lacks those it does not list.
    addable : frozenset of str
        Of :attr:`unavailable`, the settings an older era's code reads though its config lacks them, so that a
        Hydra ``+key=value`` supplies them (verl 0.3.0.post1's ``algorithm.kl_ctrl.horizon``,
        :attr:`kl_core.doctor.releases.Era.addable`).
    """

    library: str
    release: str
    trainer: str
    syntax: str
    prefix: str
    names: tuple[str, ...]
    placements: tuple[Placement, ...]
    off_policy: tuple[OffPolicyRule, ...]
    cautions: tuple[Caution, ...]
    keys: dict[str, KeySpec]
    key_files: tuple[str, ...]
    source: str
    legacy: str = ""
    uncovered: tuple[tuple[tuple[Condition, ...], str], ...] = ()
    spelling: dict[str, str] = field(default_factory=dict)
    switches: dict[str, tuple[str, Any]] = field(default_factory=dict)
    unavailable: frozenset[str] = frozenset()
    derived: dict[str, str] = field(default_factory=dict)
    groups: tuple[str, ...] = ()
    group_note: str = ""
    accepts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    clamp_from: dict[tuple[str, str], str] = field(default_factory=dict)
    own_keys: frozenset[str] = frozenset()
    addable: frozenset[str] = frozenset()

    @property
    def label(self) -> str:
        """E.g. ``"TRL 1.16.0 (grpo)"``."""
        return f"{self.library} {self.release} ({self.trainer})"

    @cached_property
    def relevant(self) -> tuple[str, ...]:
        """Every setting the doctor's verdict depends on (computed once per profile: diagnose asks per setting)."""
        keys = [k for p in self.placements for k in p.settings]
        for rule in self.off_policy:
            keys += [rule.when[0], *_expression_keys(rule.when[1]), *_expression_keys(rule.fix[1])]
            keys += [k for k, _ in rule.also]
        keys += [k for c in self.cautions for k, _ in c.when]
        return tuple(k for k in dict.fromkeys(keys) if k in self.keys)

    def written(self, key: str, value: Any) -> str:
        """Setting ``key`` at ``value`` as the release writes it on a command line, where that is not
        ``spelled(key) value``: an older era's switch (:attr:`switches`) is its flag, or ``"flag not set"``.

        Parameters
        ----------
        key : str
            A setting of this profile.
        value : Any

        Returns
        -------
        str
            E.g. ``"--use_kl_estimator_k3"`` or ``"--use_kl_estimator_k3 not set"``; ``""`` for a setting
            without a switch.
        """
        if key not in self.switches:
            return ""
        flag, on = self.switches[key]
        return flag if str(value) == str(on) else f"{flag} not set"

    def spelled(self, key: str) -> str:
        """A setting as this release spells it: ``--init_kl_coef`` for today's
        ``--algo.kl.init_coef`` under OpenRLHF 0.6.0.post1–0.10.1 (:attr:`spelling`); today's name otherwise.

        Parameters
        ----------
        key : str
            Today's setting.

        Returns
        -------
        str
        """
        return self.spelling.get(key, key)

    def default(self, key: str) -> Any:
        """The release's default of ``key`` (``ValueError`` naming ``key`` if the release has no such setting).

        Parameters
        ----------
        key : str
            A setting of this profile.

        Returns
        -------
        Any
        """
        if key not in self.keys:
            raise ValueError(f"key {key!r} is not a setting of {self.label}")
        return self.keys[key].default

    def accepted(self, key: str) -> tuple[str, ...] | None:
        """The only values the release accepts in an option setting, or None where the doctor does not know a list.

        :attr:`accepts` first (an era's, read in its code), then the release's own
        argparse ``choices`` (OpenRLHF 0.11.2's ``--algo.kl.estimator``: k1, k2, k3).

        Parameters
        ----------
        key : str
            A setting of this profile.

        Returns
        -------
        tuple of str or None
        """
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        if key in self.accepts:
            return tuple(self.accepts[key])
        spec = self.keys.get(key)
        if spec is not None and spec.choices:
            return tuple(str(c) for c in spec.choices)
        return None


# --------------------------------------------------------------------------- #
# Conditions
# --------------------------------------------------------------------------- #
def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("", "false", "none", "null", "0", "0.0"):
            return False
        num = as_double(low)
        return num != 0.0 if num is not None else True
    return bool(value)


def _expression_keys(expr: str) -> list[str]:
    m = _COMPARE.match(expr.strip())
    body = m.group(2) if m else expr
    return [f.strip() for f in body.split("*") if f.strip() and as_double(f.strip()) is None
            and f.strip() not in ("True", "False", "set", "not set")]


def evaluate_expression(expr: str, settings: dict[str, Any]) -> float | None:
    """The value of a product of numbers and settings, e.g. ``"--rollout.batch_size * --rollout.n_samples_per_prompt"``.

    Parameters
    ----------
    expr : str
        Factors joined by ``*``; each a number or a setting in ``settings``.
    settings : dict
        Setting → value.

    Returns
    -------
    float or None
        None when a factor is missing or not a number.
    """
    total = 1.0
    for factor in (f.strip() for f in expr.split("*")):
        num = as_double(factor)
        if num is None:
            num = as_double(settings.get(factor))
        if num is None:
            return None
        total *= num
    return total


def holds(condition: str, value: Any, settings: dict[str, Any] | None = None,
          names: tuple[str, ...] = ()) -> bool:
    """Whether ``value`` passes ``condition`` (the crosswalk's ``config`` language).

    ``"True"``/``"False"`` compare booleans (``"true"`` spelled either way);
    ``"set"``/``"not set"`` test truthiness (None, False, 0 and ``""`` are not
    set); ``"> 0"``, ``"!= 0"``, ``"< data.train_batch_size"`` compare numbers,
    the right side a number or a product of settings (:func:`evaluate_expression`);
    ``"a number"`` accepts any number; ``"one of rloo, group_norm"`` any of the values listed;
    anything else is a value, matched against ``names`` when given (an option and its aliases).

    Parameters
    ----------
    condition : str
        The test.
    value : Any
        The setting's value.
    settings : dict, optional
        All settings, for comparisons with other settings.
    names : tuple of str, optional
        Accepted spellings, when ``condition`` is an option name.

    Returns
    -------
    bool
    """
    cond = condition.strip()
    if cond in ("True", "False"):
        want = cond == "True"
        if isinstance(value, bool):
            return value is want
        return isinstance(value, str) and value.strip().lower() == cond.lower()
    if cond == "set":
        return _truthy(value)
    if cond == "not set":
        return not _truthy(value)
    if cond == "a number":
        return as_double(value) is not None
    if cond.startswith("one of "):
        return ("" if value is None else str(value).strip()) in [v.strip() for v in cond[7:].split(",")]
    m = _COMPARE.match(cond)
    if m:
        op, rhs = m.groups()
        left = as_double(value)
        right = evaluate_expression(rhs, settings or {})
        if left is None or right is None or math.isnan(left):
            return False
        return {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right,
                "!=": left != right, "==": left == right}[op]
    text = "" if value is None else str(value).strip()
    return text in names if names else text == cond


# --------------------------------------------------------------------------- #
# Loading
# --------------------------------------------------------------------------- #
def _pairs(raw: Any, where: str) -> tuple[Condition, ...]:
    if not isinstance(raw, list) or any(not (isinstance(p, list) and len(p) == 2) for p in raw):
        raise ValueError(f"{where} must be a list of [setting, value] pairs, got {raw!r}")
    return tuple((str(a), str(b)) for a, b in raw)


def _pair(raw: Any, where: str) -> Condition:
    if not (isinstance(raw, list) and len(raw) == 2):
        raise ValueError(f"{where} must be one [setting, value] pair, got {raw!r}")
    return (str(raw[0]), str(raw[1]))


_COMPUTES_FIELDS = {"option", "library_formula", "formula_latex"}


def _computes(raw: Any, where: str) -> dict[str, str]:
    if not raw:
        return {}
    if not isinstance(raw, dict) or set(raw) != _COMPUTES_FIELDS:
        raise ValueError(f"{where} must have exactly the fields {sorted(_COMPUTES_FIELDS)}, got {raw!r}")
    if not any(e.option == raw["option"] for e in CROSSWALK):
        raise ValueError(f"{where}.option {raw['option']!r} is no crosswalk option")
    return {k: str(v) for k, v in raw.items()}


@cache
def _keys_doc(file: str) -> dict[str, Any]:
    """A keys file of ``kl_core/doctor/keys`` as read (each is read once; several tables use one)."""
    return json.loads((KEYS_DIR / file).read_text(encoding="utf-8"))


def _trainer_list(file: str, trainer: str, name: str) -> frozenset[str]:
    """A list ``name`` of ``trainer``'s table in keys file ``file`` (``own``, ``script_keys``; empty if none)."""
    return frozenset(_keys_doc(file)["trainers"].get(trainer, {}).get(name, ()))


def _keys(file: str, trainer: str) -> tuple[dict[str, KeySpec], tuple[str, ...]]:
    try:
        table = _keys_doc(file)["trainers"][trainer]
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"keys_file {file!r} has no trainer {trainer!r} ({exc})") from None
    specs = {}
    for key, raw in table["keys"].items():
        choices = raw.get("choices")
        specs[key] = KeySpec(
            key=key,
            default=raw.get("default"),
            default_text=raw.get("default_text"),
            action=raw.get("action"),
            nargs=raw.get("nargs"),
            type=raw.get("type"),
            choices=tuple(choices) if isinstance(choices, list) else None,
        )
    return specs, tuple(table.get("files", ()))


def _aggregations(raw: list[dict[str, Any]], snippets: dict[str, str]) -> dict[str, Aggregation]:
    out = {}
    for i, a in enumerate(raw):
        where = f"aggregations[{i}]"
        try:
            modes = tuple(AggregationMode(**{**m, "name": prose(m["name"], snippets, where),
                                                "coefficient": prose(m["coefficient"], snippets, where)})
                          for m in a["modes"])
            agg = Aggregation(id=a["id"], setting=a["setting"], modes=modes, source=a["source"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{where}: missing or unknown field ({exc})") from None
        if not modes or (not agg.setting and len(modes) != 1):
            raise ValueError(f"{where} ({agg.id}): a fixed rule has exactly one mode, a setting at least one")
        out[agg.id] = agg
    return out


def _placement(raw: dict[str, Any], library: str, release: str, aggs: dict[str, Aggregation],
               where: str) -> Placement:
    acts_on = raw.get("acts_on")
    pool = [e for e in CROSSWALK if e.library == library and e.release == release and e.acts_on == acts_on]
    entries = []
    for name in raw.get("entries", []):
        found = [e for e in pool if e.option == name]
        if len(found) != 1:
            raise ValueError(f"{where}: entries names {name!r}, which is not one {library} {release} {acts_on} entry")
        entries.append(found[0])
    if raw.get("aggregation") not in aggs:
        raise ValueError(f"{where}: aggregation {raw.get('aggregation')!r} is not an id of [[aggregations]]")
    try:
        return Placement(
            acts_on=acts_on,
            entries=tuple(entries),
            switch=_pairs(raw.get("switch", []), f"{where}.switch"),
            option=raw.get("option"),
            coef=raw["coef"],
            coef_on=raw["coef_on"],
            adaptive=_pairs(raw.get("adaptive", []), f"{where}.adaptive"),
            target=raw.get("target"),
            horizon=raw.get("horizon"),
            aggregation=aggs[raw["aggregation"]],
            toggles=_pairs(raw.get("toggles", []), f"{where}.toggles"),
            enable=_pairs(raw.get("enable", []), f"{where}.enable"),
            source=raw["source"],
        )
    except KeyError as exc:
        raise ValueError(f"{where}: missing field {exc}") from None


def _profile(raw: dict[str, Any], aggs: dict[str, Aggregation], i: int, snippets: dict[str, str]) -> Profile:
    where = f"profiles[{i}] ({raw.get('library', '?')} {raw.get('trainer', '?')})"
    try:
        library, release = raw["library"], raw["release"]
        if library not in libraries():
            raise ValueError(f"{where}: library {library!r} is not among the [[libraries]] {libraries()}")
        keys, files = _keys(raw["keys_file"], raw["trainer"])
        placements = tuple(
            _placement(p, library, release, aggs, f"{where}.placements[{j}]")
            for j, p in enumerate(raw.get("placements", []))
        )
        off = tuple(
            OffPolicyRule(when=_pair(r["when"], f"{where}.off_policy.when"),
                          fix=_pair(r["fix"], f"{where}.off_policy.fix"), why=prose(r["why"], snippets, where),
                          source=r["source"], also=_pairs(r.get("also", []), f"{where}.off_policy.also"),
                          stale_old=bool(r.get("stale_old", False)))
            for r in raw.get("off_policy", [])
        )
        cautions = tuple(
            Caution(when=_pairs(c["when"], f"{where}.cautions.when"), code=c["code"],
                    message=prose(c["message"], snippets, where),
                    fix=_pair(c["fix"], f"{where}.cautions.fix"), source=c["source"], gradient=c.get("gradient"),
                    computes=_computes(c.get("computes", {}), f"{where}.cautions.computes"),
                    cost=prose(c.get("cost", ""), snippets, where),
                    note_in=tuple(c.get("note_in", [])), absent_in=tuple(c.get("absent_in", [])))
            for c in raw.get("cautions", [])
        )
        prof = Profile(
            library=library, release=release, trainer=raw["trainer"], syntax=raw["syntax"],
            prefix=raw.get("prefix", ""), names=tuple(raw["names"]), placements=placements,
            off_policy=off, cautions=cautions, keys=keys, key_files=files, source=raw["source"],
            own_keys=_trainer_list(raw["keys_file"], raw["trainer"], "own"),
            legacy=prose(raw.get("legacy", ""), snippets, where),
            uncovered=tuple((_pairs(u["when"], f"{where}.uncovered.when"), prose(u["note"], snippets, where))
                            for u in raw.get("uncovered", [])),
            groups=tuple(raw.get("hydra_groups", [])),
            group_note=prose(raw.get("hydra_group_note", ""), snippets, where),
        )
    except KeyError as exc:
        raise ValueError(f"{where}: missing field {exc}") from None
    if prof.syntax not in SYNTAXES:
        raise ValueError(f"{where}: syntax must be one of {SYNTAXES}, got {prof.syntax!r}")
    named = [k for p in placements for k in p.settings]
    named += [k for p in placements for k, _ in p.enable]
    named += [r.when[0] for r in off] + [r.fix[0] for r in off] + [k for r in off for k, _ in r.also]
    named += [k for c in cautions for k, _ in c.when] + [c.fix[0] for c in cautions]
    named += [k for when, _ in prof.uncovered for k, _ in when]
    named += [k for r in off for k in _expression_keys(r.when[1]) + _expression_keys(r.fix[1])]
    missing = sorted({k for k in named if k not in keys})
    if missing:
        raise ValueError(f"{where}: settings {missing} are not keys of {raw['keys_file']}")
    for p in placements:
        for e in p.entries:
            for key, _ in e.config:
                if key.startswith(prof.prefix) and key[len(prof.prefix):] not in keys:
                    raise ValueError(f"{where}: entry {e.option!r} is selected by {key!r}, not a key of the release")
    return prof


@cache
def _load(path: str) -> tuple[Profile, ...]:
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    snippets = raw.get("snippets", {})
    aggs = _aggregations(raw.get("aggregations", []), snippets)
    return tuple(_profile(p, aggs, i, snippets) for i, p in enumerate(raw.get("profiles", [])))


def profiles(path: str | None = None) -> tuple[Profile, ...]:
    """Every profile of the crosswalk's data file, checked against the crosswalk and the key lists.

    Parameters
    ----------
    path : str, optional
        A TOML file in the format of :data:`kl_core.libraries.crosswalk.CROSSWALK_FILE` (the default).

    Returns
    -------
    tuple of Profile
        In file order.

    Raises
    ------
    ValueError
        If a table is malformed, names a crosswalk entry that does not exist,
        or names a setting the release does not accept; the message says which.
    """
    return _load(str(CROSSWALK_FILE if path is None else path))


def profile(library: str, trainer: str | None = None) -> Profile:
    """The profile of one library (and trainer, when the library has several).

    Parameters
    ----------
    library : str
        ``"verl"``, ``"OpenRLHF"`` or ``"TRL"`` (case-insensitive, or an alias of
        :data:`kl_core.libraries.registry.LIBRARIES`).
    trainer : str, optional
        E.g. ``"grpo"`` or ``"rloo"``; the library's first profile if omitted.

    Returns
    -------
    Profile

    Raises
    ------
    ValueError
        If there is no such profile (the message lists them).
    """
    try:
        name = canonical_library(str(library))
    except ValueError:
        name = None
    wanted = [p for p in profiles() if p.library == name]
    if trainer is not None:
        wanted = [p for p in wanted if p.trainer == trainer]
    if not wanted:
        have = [f"{p.library}/{p.trainer}" for p in profiles()]
        raise ValueError(f"library must be one of {have}, got {library!r} (trainer {trainer!r})")
    return wanted[0]
