r"""Library crosswalk: how each RL library's KL option maps onto Schulman's estimators.

Every row of :data:`CROSSWALK` records, as data, what one library computes when a
user sets one KL option (or reads one KL value in a log): the exact code it runs,
which log-prob it subtracts from which, the clamps it applies, where the value
goes (reward, loss or a logged metric), which of the estimators in
:mod:`kl_core.estimation.estimators` it is, the settings that select it, and what gradient
it produces.  The rows live in ``kl_core/libraries/crosswalk.toml`` (read by
:func:`load_crosswalk`); this module defines their type, checks them and looks
them up.

Conventions
-----------
Two roles name the log-probabilities of the **sampled** tokens:

``logp_sampler``
    log-prob under the policy that generated the samples (``q`` in the core).
``logp_other``
    log-prob under the other policy (``p`` in the core).

Then ``logr = logp_other - logp_sampler`` and, for ``x ~ sampler``,
``E[k1] = E[k3] = KL[sampler‖other]`` and ``E[k3_pq] = KL[other‖sampler]``.
A third role, ``current``, appears where the samples come from ``π_old`` but
the value is about ``π_θ``: TRL's ``use_bias_correction_kl`` (the value is
importance-weighted) and OpenRLHF's ``unbiased_gradient`` (only the gradient
is).  There the log-ratio is ``logp_other - logp_current``.

:func:`evaluate` reproduces the per-token value a library produces (before the
library averages it over tokens): clamp ``logr``, call the estimator from
:mod:`kl_core.estimation.estimators` (the single implementation of every formula), clamp
the value, and apply the importance weight where the library does.

Gradients
---------
Each entry also records how its gradient is formed (:attr:`CrosswalkEntry.grad_mode`)
and what that gradient is on average (:attr:`CrosswalkEntry.grad_target`, one of
:data:`GRADIENT_TARGETS`): a per-token value in a loss is differentiated with
the samples held fixed, as autograd does; a value in the reward is detached and
enters through the score function :math:`\mathrm{sg}(k)\,\nabla\log\pi_\theta`.
:mod:`kl_core.gradients.expected` computes these expected gradients exactly and the tests
check every recorded claim against it.

Releases
--------
Entries for verl, OpenRLHF and TRL were read in the releases on PyPI listed in
:data:`RELEASES` (the wheel, its sha256, and the release's defaults for the
settings that select an entry); ``release`` on an entry names the version, and
``legacy`` marks code the current release no longer ships (``release`` is then
the last release that had it).  ``verified_in`` says which files were read.

Sources: estimator definitions, J. Schulman, "Approximating KL Divergence"
(2020), http://joschu.net/blog/kl-approx.html.  Gradient caveats: Y. Tang and
R. Munos, "On a few pitfalls in KL divergence gradient estimation for RL",
arXiv:2506.09477.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation import estimators
from kl_core.validation import Message, as_float_array

__all__ = [
    "ACTS_ON",
    "CROSSWALK",
    "CROSSWALK_FILE",
    "GRADIENT_TARGETS",
    "GRAD_MODES",
    "RELEASES",
    "ROLES",
    "ConfigDefault",
    "CrosswalkData",
    "CrosswalkEntry",
    "Release",
    "PROSE_FIELDS",
    "evaluate",
    "extract_messages",
    "libraries",
    "load_crosswalk",
    "lookup",
    "marked_message",
    "options",
    "prose",
    "releases",
]

ACTS_ON = ("reward", "loss", "metric")
"""Where a library puts the value: a per-token reward, a loss term, or a log/early-stop metric."""

ROLES = ("sampler", "other", "current")
"""Roles a log-prob can play; see the module docstring."""

GRAD_MODES = ("autograd", "k2", "k2_is", "score", "score_current", "none")
"""How an entry's gradient is formed (see :attr:`CrosswalkEntry.grad_mode`)."""

GRADIENT_TARGETS = ("reverse_kl", "forward_kl", "zero", "mixed", "none")
r"""What an entry's expected gradient is, with :math:`\pi_\theta` the policy trained:

``reverse_kl``
    :math:`\nabla_\theta \mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]`, the gradient of the KL penalty RLHF means;
``forward_kl``
    :math:`\nabla_\theta \mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`, the other direction;
``zero``
    nothing on average;
``mixed``
    neither (a combination, or biased by off-policy samples);
``none``
    no gradient: a logged metric.
"""

CROSSWALK_FILE = Path(__file__).with_name("crosswalk.toml")
"""The data file behind :data:`CROSSWALK` and :data:`RELEASES`."""

PROSE_FIELDS: dict[str, tuple[str, ...]] = {
    "entries": ("component", "sampler", "other", "direction", "weight", "early_stop", "verified_in", "caveat",
                "grad_expected", "grad_fix"),
    "profiles": ("legacy", "hydra_group_note"),
    "profiles.off_policy": ("why",),
    "profiles.cautions": ("message",),
    "profiles.uncovered": ("note",),
    "aggregations.modes": ("name", "coefficient"),
}
"""The data file's fields a user reads as sentences, by table (``[templates.*]`` count as entries).

They are loaded as :class:`kl_core.validation.Message` (the English text, with the
template and params the app translates; a ``@{snippet}`` is a param, itself a
message), and :func:`extract_messages` gives their templates to the translation
tools.  Every other field (names, settings, code, formulas, sources) stays as written.
"""

_FULL = "full"
_LOSS_MODES = ("autograd", "k2", "k2_is")
_REWARD_MODES = ("score", "score_current")


@dataclass(frozen=True)
class CrosswalkEntry:
    r"""One library option and the Schulman estimator it computes.

    Attributes
    ----------
    library : str
        Library name as shown to users, e.g. ``"verl"``.
    component : str
        The trainer or module inside the library, e.g. ``"GRPOTrainer"``.
    option : str
        The value a user sets or the name they see in a log, e.g. ``"low_var_kl"``.
    aliases : tuple of str
        Other spellings the library accepts for the same computation.
    setting : str
        Where the option is set or shown, e.g. ``"actor_rollout_ref.actor.kl_loss_type"``.
    estimator : str
        Key of :data:`kl_core.estimation.estimators.ESTIMATORS` (``"k1"``, ``"k2"``, ``"k3"``,
        ``"k3_pq"``, ``"abs"``), or ``"full"`` for the exact full-vocabulary KL.
    library_formula : str
        The code the library runs, with its own variable names.
    formula_latex : str
        The same per-token value in LaTeX, in terms of the log-probs.
    sampler : str
        The policy that generated the tokens the value is computed on.
    other : str
        The policy the sampler is compared with.
    variables : tuple of (str, str)
        The library's names for the log-prob tensors in :attr:`library_formula`
        and the role each plays, e.g. ``(("logprob", "sampler"), ("ref_logprob", "other"))``.
    direction : str
        The KL the value targets, e.g. ``"KL[π_θ‖π_ref]"``.
    kl_roles : tuple of str
        The same KL as two roles from :data:`ROLES`: ``("sampler", "other")``
        means :math:`\mathrm{KL}[\text{sampler}\,\|\,\text{other}]`.  Exact for
        unbiased estimators; for ``k2`` and ``abs`` it is the KL the library
        means to approximate.
    sign : int
        ``+1`` if the log-ratio the library writes equals ``logr``, ``-1`` if it
        equals ``-logr``.
    logr_clamp : tuple of float or None
        ``(lo, hi)`` applied to ``logr`` (expressed in ``logr``, whatever the
        library's sign) before the estimator, or None; an end may be infinite.
    value_clamp : tuple of float or None
        ``(lo, hi)`` applied to the per-token value, or None.
    straight_through : bool
        True when the forward value is the base estimator's but the backward
        pass uses ``k2``'s gradient (verl's ``"+"`` options, OpenRLHF's
        ``unbiased_gradient``).
    importance_weighted : bool
        True if the value is multiplied by :math:`\pi_\theta/\pi_{\mathrm{old}}`
        (TRL ``use_bias_correction_kl``).
    acts_on : str
        ``"reward"``, ``"loss"`` or ``"metric"``.
    weight : str or None
        The coefficient that scales the value, e.g. ``"beta"``.
    early_stop : str or None
        The early-stopping rule the value drives, if any.
    logged_as : str or None
        Log key under which the (token-averaged) value appears, if any.
    source : str
        ``path::function`` in the library's repository.
    verified_in : str
        Which source this entry was checked against, and what could not be.
    caveat : str
        One or two sentences on what to watch for.
    release : str or None
        The release the entry was read in (see :data:`RELEASES`); for a
        ``legacy`` entry, the last release that had the code.  None where only
        a commit was read (CleanRL, Stable-Baselines3).
    legacy : bool
        True if the library's current release no longer ships this code.
    config : tuple of (str, str)
        The settings that select this entry, as the library spells them, and
        their values, e.g. ``(("actor_rollout_ref.actor.use_kl_loss", "True"), ...)``.
    grad_mode : str
        How the gradient is formed, one of :data:`GRAD_MODES`: ``"autograd"``
        (the per-token value, clamps and importance weight included, is
        differentiated with the samples fixed); ``"k2"`` (straight-through:
        the backward pass is :math:`\nabla\tfrac12\log^2 r`); ``"k2_is"`` (the
        same times the detached weight :math:`\min(\pi_\theta/\pi_{\mathrm{old}}, c)`,
        :attr:`grad_is_clip` :math:`= c`); ``"score"`` (a detached reward computed
        by the rollout policy, through the policy-gradient term
        :math:`\mathrm{sg}(k)\,\nabla\log\pi_\theta` and the PPO ratio);
        ``"score_current"`` (the same, but the value uses the updated policy's
        log-probs); ``"none"`` (a metric).
    grad_is_clip : float or None
        The clip of the detached importance weight in ``"k2_is"`` mode.
    grad_target : str
        The expected gradient on-policy with every clamp inactive, one of
        :data:`GRADIENT_TARGETS`.
    grad_target_off_policy : str or None
        The same when the tokens come from :math:`\pi_{\mathrm{old}} \ne \pi_\theta`
        (a later PPO epoch or mini-batch); None for metrics.
    grad_expected : str
        The exact on-policy expected gradient, in words and symbols.
    grad_fix : str or None
        The library's own setting that gives the reverse-KL gradient, where this
        entry does not and the library has one.
    """

    library: str
    component: str
    option: str
    aliases: tuple[str, ...]
    setting: str
    estimator: str
    library_formula: str
    formula_latex: str
    sampler: str
    other: str
    variables: tuple[tuple[str, str], ...]
    direction: str
    kl_roles: tuple[str, str]
    sign: int
    logr_clamp: tuple[float, float] | None
    value_clamp: tuple[float, float] | None
    straight_through: bool
    importance_weighted: bool
    acts_on: str
    weight: str | None
    early_stop: str | None
    logged_as: str | None
    source: str
    verified_in: str
    caveat: str
    release: str | None = None
    legacy: bool = False
    config: tuple[tuple[str, str], ...] = ()
    grad_mode: str = ""
    grad_is_clip: float | None = None
    grad_target: str = ""
    grad_target_off_policy: str | None = None
    grad_expected: str = ""
    grad_fix: str | None = None

    def __post_init__(self) -> None:
        if self.estimator != _FULL and self.estimator not in estimators.ESTIMATORS:
            raise ValueError(
                f"estimator must be 'full' or one of {sorted(estimators.ESTIMATORS)}, "
                f"got {self.estimator!r} ({self.library} {self.option})"
            )
        if self.acts_on not in ACTS_ON:
            raise ValueError(f"acts_on must be one of {ACTS_ON}, got {self.acts_on!r}")
        if self.sign not in (1, -1):
            raise ValueError(f"sign must be +1 or -1, got {self.sign!r}")
        self._check_gradient_fields()
        if len(self.kl_roles) != 2 or any(r not in ROLES for r in self.kl_roles):
            raise ValueError(f"kl_roles must be two of {ROLES}, got {self.kl_roles!r}")
        needs_current = self.importance_weighted or self.grad_mode == "k2_is"
        if ("current" in self.kl_roles) != needs_current:
            raise ValueError(
                "kl_roles uses 'current' exactly when the entry is importance_weighted or its "
                f"grad_mode is 'k2_is' ({self.library} {self.option})"
            )
        var_roles = sorted(role for _, role in self.variables)
        want = ["current", "other", "sampler"] if needs_current else ["other", "sampler"]
        if var_roles != want:
            raise ValueError(
                f"variables must give one name for each of the roles {want}, got {self.variables!r}"
            )
        for name in ("logr_clamp", "value_clamp"):
            bounds = getattr(self, name)
            if bounds is not None and not (len(bounds) == 2 and bounds[0] < bounds[1]):
                raise ValueError(f"{name} must be None or (lo, hi) with lo < hi, got {bounds!r}")
        for name in ("library", "option", "source", "direction", "caveat", "library_formula"):
            if not getattr(self, name):
                raise ValueError(f"{name} must be non-empty ({self.library} {self.option})")
        if self.legacy and not self.release:
            raise ValueError(f"release must name the last release of legacy entry {self.option!r}")

    def _check_gradient_fields(self) -> None:
        """Fill the derivable gradient fields and check they agree with the placement."""
        if not self.grad_mode:
            derived = {"metric": "none", "reward": "score"}.get(
                self.acts_on, "k2" if self.straight_through else "autograd"
            )
            object.__setattr__(self, "grad_mode", derived)
        if not self.grad_target and self.acts_on == "metric":
            object.__setattr__(self, "grad_target", "none")
        where = f"({self.library} {self.option}, {self.acts_on})"
        if self.grad_mode not in GRAD_MODES:
            raise ValueError(f"grad_mode must be one of {GRAD_MODES}, got {self.grad_mode!r} {where}")
        allowed = {"metric": ("none",), "reward": _REWARD_MODES, "loss": _LOSS_MODES}[self.acts_on]
        if self.grad_mode not in allowed:
            raise ValueError(f"grad_mode must be one of {allowed} for acts_on={self.acts_on!r} {where}")
        if self.straight_through != (self.grad_mode in ("k2", "k2_is")):
            raise ValueError(f"straight_through must be True exactly for grad_mode 'k2' or 'k2_is' {where}")
        if (self.grad_mode == "k2_is") != (self.grad_is_clip is not None):
            raise ValueError(f"grad_is_clip is required exactly for grad_mode 'k2_is' {where}")
        if self.grad_is_clip is not None and not self.grad_is_clip > 0:
            raise ValueError(f"grad_is_clip must be > 0, got {self.grad_is_clip!r} {where}")
        if self.grad_target not in GRADIENT_TARGETS:
            raise ValueError(
                f"grad_target must be one of {GRADIENT_TARGETS}, got {self.grad_target!r} {where}"
            )
        if (self.grad_target == "none") != (self.grad_mode == "none"):
            raise ValueError(f"grad_target is 'none' exactly for metrics (grad_mode 'none') {where}")
        off = self.grad_target_off_policy
        if off is not None and off not in GRADIENT_TARGETS[:4]:
            raise ValueError(
                f"grad_target_off_policy must be None or one of {GRADIENT_TARGETS[:4]}, got {off!r} {where}"
            )

    @property
    def names(self) -> tuple[str, ...]:
        """The option followed by its aliases."""
        return (self.option, *self.aliases)

    @property
    def unbiased(self) -> bool:
        """True if the mean of the value under the sampler equals the KL in :attr:`kl_roles`.

        Ignores clamps, which are inactive for moderate log-ratios.  ``"full"``
        is exact, so it counts as unbiased.
        """
        if self.estimator == _FULL:
            return True
        return estimators.ESTIMATORS[self.estimator].unbiased

    @property
    def uses_current(self) -> bool:
        """True if the log-ratio is taken against the ``current`` role (see the module docstring)."""
        return "current" in self.kl_roles

    @property
    def clamped(self) -> bool:
        """True if the entry clamps the log-ratio or the value."""
        return self.logr_clamp is not None or self.value_clamp is not None


@dataclass(frozen=True)
class ConfigDefault:
    """A release's default for one setting, and the file it comes from.

    Attributes
    ----------
    key : str
        The setting as the library spells it, e.g. ``"algorithm.kl_penalty"``.
    value : str
        Its default, as text.
    file : str
        Where the default is set, in the release.
    """

    key: str
    value: str
    file: str


@dataclass(frozen=True)
class Release:
    """One release of a library that the crosswalk was read in.

    Attributes
    ----------
    library : str
        As in :attr:`CrosswalkEntry.library`.
    version : str
        E.g. ``"0.9.1"``.
    current : bool
        True for the release the current entries describe; False for one that
        only ``legacy`` entries point to.
    source : str
        What was read: a PyPI wheel (by file name) or a tagged commit.
    sha256 : str or None
        The wheel's SHA-256, when a wheel was read.
    commit : str or None
        The commit, when it is known (wheels do not record it).
    read_on : str
        The date it was read (ISO format).
    note : str
        What else to know about it.
    defaults : tuple of ConfigDefault
        The release's defaults for the settings that select crosswalk entries.
    """

    library: str
    version: str
    current: bool
    source: str
    sha256: str | None
    commit: str | None
    read_on: str
    note: str
    defaults: tuple[ConfigDefault, ...]

    def default(self, key: str) -> str:
        """The default of ``key`` in this release (``ValueError`` naming ``key`` if not recorded).

        Parameters
        ----------
        key : str
            A setting, as in :attr:`ConfigDefault.key`.

        Returns
        -------
        str
            Its default value, as text.
        """
        for d in self.defaults:
            if d.key == key:
                return d.value
        raise ValueError(
            f"key must be one of {[d.key for d in self.defaults]} for {self.library} {self.version}, got {key!r}"
        )


@dataclass(frozen=True)
class CrosswalkData:
    """What :func:`load_crosswalk` returns.

    Attributes
    ----------
    entries : tuple of CrosswalkEntry
        The rows, in file order.
    releases : tuple of Release
        The releases read.
    """

    entries: tuple[CrosswalkEntry, ...]
    releases: tuple[Release, ...]


# --------------------------------------------------------------------------- #
# Loading the data file
# --------------------------------------------------------------------------- #
_SNIPPET = re.compile(r"@\{(\w+)\}")
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
}
_TUPLE_FIELDS = ("aliases", "kl_roles")
_PAIR_FIELDS = ("variables", "config")
_FLOAT_PAIR_FIELDS = ("logr_clamp", "value_clamp")


def _expand(text: str, snippets: dict[str, str], where: str, seen: tuple[str, ...] = ()) -> str:
    """Replace every ``@{name}`` in ``text`` by its snippet, recursively."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in snippets:
            raise ValueError(f"{where}: unknown snippet @{{{name}}}")
        if name in seen:
            raise ValueError(f"{where}: snippet @{{{name}}} refers to itself")
        return _expand(snippets[name], snippets, where, (*seen, name))

    return _SNIPPET.sub(one, text)


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


def marked_message(template: str, /, **params: Any) -> Message:
    """A :class:`Message` whose template is not a literal here: the catalog gets it elsewhere.

    From :func:`extract_messages` (a prose field of the data file), from an
    ``N_("...")`` literal (a word chosen from a table), or it is only
    placeholders and separators (a list of messages, nothing to translate).
    Babel extracts ``Message("...")`` calls only when the template is a literal;
    everything else goes through here so that the rule stays checkable.

    Parameters
    ----------
    template : str
        The English template, with ``{named}`` placeholders.
    **params
        Its values; a :class:`Message` among them is translated too.

    Returns
    -------
    Message
    """
    return Message.__new__(Message, template, **params)


def prose(text: str, snippets: dict[str, str], where: str = "", seen: tuple[str, ...] = ()) -> Message:
    """A prose field as a :class:`Message`: its English text is :func:`_expand`'s.

    The template is the field with its braces escaped and each ``@{name}`` as a
    ``{name}`` placeholder, whose param is the snippet's own message; so the app
    translates the sentence and each snippet once (``lab.i18n.message``).

    Parameters
    ----------
    text : str
        The field as written in the data file.
    snippets : dict of str to str
        The file's ``[snippets]``.
    where, seen : str, tuple of str
        For error messages, and the snippets being expanded (a cycle is refused).

    Returns
    -------
    Message
        ``str(result)`` is the expanded English text.

    Raises
    ------
    ValueError
        If a snippet is unknown or refers to itself.
    """
    parts = _SNIPPET.split(text)  # text, name, text, name, ..., text
    template, params = "", {}
    for i, part in enumerate(parts):
        if i % 2 == 0:
            template += part.replace("{", "{{").replace("}", "}}")
            continue
        if part not in snippets:
            raise ValueError(f"{where}: unknown snippet @{{{part}}}")
        if part in seen:
            raise ValueError(f"{where}: snippet @{{{part}}} refers to itself")
        template += "{" + part + "}"
        params[part] = prose(snippets[part], snippets, where, (*seen, part))
    return marked_message(template, **params)


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


def load_crosswalk(path: str | os.PathLike[str] | None = None) -> CrosswalkData:
    """Read the crosswalk data file into checked entries and releases.

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
        ``entries`` and ``releases``, in file order.

    Raises
    ------
    ValueError
        If the file cannot be parsed, or an entry or release is malformed; the
        message names the entry (by index, library and option) and the field.

    Examples
    --------
    >>> data = load_crosswalk()
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
    return CrosswalkData(entries=entries, releases=rels)


def _prose_texts(raw: dict[str, Any]) -> list[str]:
    """The raw text of every prose field of a parsed data file (see :data:`PROSE_FIELDS`), in file order."""
    out = []
    tables = {
        "entries": [*raw.get("templates", {}).values(), *raw.get("entries", [])],
        "profiles": raw.get("profiles", []),
        "profiles.off_policy": [r for p in raw.get("profiles", []) for r in p.get("off_policy", [])],
        "profiles.cautions": [c for p in raw.get("profiles", []) for c in p.get("cautions", [])],
        "profiles.uncovered": [u for p in raw.get("profiles", []) for u in p.get("uncovered", [])],
        "aggregations.modes": [m for a in raw.get("aggregations", []) for m in a.get("modes", [])],
    }
    for table, rows in tables.items():
        for row in rows:
            out += [row[f] for f in PROSE_FIELDS[table] if isinstance(row.get(f), str)]
    return out


def _templates(message: Message) -> list[str]:
    """A message's template and its params' templates, depth first."""
    out = [message.template]
    for value in message.params.values():
        out += _templates(value)
    return out


_PLAIN_WORD = re.compile(r"(?<![\w.∇/@\[-])[a-z]{3,}(?![\w.(/@\]-])")


def _reads_as_words(template: str) -> bool:
    """Whether a template has a word to translate (not only placeholders, settings, code or notation)."""
    words = _PLAIN_WORD.findall(re.sub(r"\{[^{}]*\}", " ", template))
    return any(w not in ("log", "exp", "sign", "min", "max") for w in words)


def extract_messages(fileobj: Any, keywords: Any, comment_tags: Any, options: Any) -> Any:
    """Babel extractor for ``crosswalk.toml``: the templates of its prose fields and their snippets.

    Registered in pyproject.toml (``[[tool.babel.mappings]]``) and used by
    ``scripts/translations.py``: the catalog's English comes from the data
    file itself, the one source of truth.  A template that is only
    placeholders, settings or notation (``{verl_plus_fix}``, ``GRPOConfig.beta``)
    has no words to translate and is left out.

    Parameters
    ----------
    fileobj : binary file
        The data file.
    keywords, comment_tags, options
        Babel's extractor arguments (unused).

    Yields
    ------
    tuple
        ``(lineno, None, template, comments)``, each template once, in file order.
    """
    text = fileobj.read().decode("utf-8")
    raw = tomllib.loads(text)
    snippets = raw.get("snippets", {})
    seen: set[str] = set()
    for field_text in _prose_texts(raw):
        for template in _templates(prose(field_text, snippets, "extract")):
            if template in seen or not _reads_as_words(template):
                continue
            seen.add(template)
            first = template.split("{")[0][:40] or template[:40]
            lineno = text[: max(text.find(first), 0)].count("\n") + 1
            yield lineno, None, template, []


_DATA = load_crosswalk()

CROSSWALK: tuple[CrosswalkEntry, ...] = _DATA.entries
"""Every library option, in table order (from :data:`CROSSWALK_FILE`)."""

RELEASES: tuple[Release, ...] = _DATA.releases
"""The releases the entries were read in, with their defaults."""


_LIBRARY_ALIASES = {
    "sb3": "Stable-Baselines3",
    "stable_baselines3": "Stable-Baselines3",
    "stable-baselines3": "Stable-Baselines3",
    "stablebaselines3": "Stable-Baselines3",
    "huggingface/trl": "TRL",
    "volcengine/verl": "verl",
    "verl-project/verl": "verl",
    "openrlhf/openrlhf": "OpenRLHF",
    "vwxyzjn/cleanrl": "CleanRL",
    "dlr-rm/stable-baselines3": "Stable-Baselines3",
}


def libraries() -> list[str]:
    """Return the library names in :data:`CROSSWALK`, in table order.

    Returns
    -------
    list of str
        E.g. ``["TRL", "verl", "OpenRLHF", "CleanRL", "Stable-Baselines3"]``.

    Examples
    --------
    >>> libraries()[:2]
    ['TRL', 'verl']
    """
    return list(dict.fromkeys(e.library for e in CROSSWALK))


def _canonical_library(library: str) -> str:
    if not isinstance(library, str):
        raise ValueError(f"library must be a string, one of {libraries()}, got {library!r}")
    key = library.strip().lower()
    for name in libraries():
        if name.lower() == key:
            return name
    if key in _LIBRARY_ALIASES:
        return _LIBRARY_ALIASES[key]
    raise ValueError(f"library must be one of {libraries()} (case-insensitive), got {library!r}")


def options(library: str) -> list[CrosswalkEntry]:
    """Return every entry of one library, in table order.

    Parameters
    ----------
    library : str
        A name from :func:`libraries` (case-insensitive), or an alias such as
        ``"sb3"`` or ``"huggingface/trl"``.

    Returns
    -------
    list of CrosswalkEntry
        The library's entries.

    Raises
    ------
    ValueError
        If ``library`` is unknown; the message lists the valid names.

    Examples
    --------
    >>> [e.option for e in options("cleanrl")]
    ['old_approx_kl', 'approx_kl']
    """
    name = _canonical_library(library)
    return [e for e in CROSSWALK if e.library == name]


def lookup(library: str, option: str, *, acts_on: str | None = None) -> CrosswalkEntry:
    """Find the entry for one library option, accepting aliases.

    Parameters
    ----------
    library : str
        A name from :func:`libraries` (case-insensitive) or a known alias.
    option : str
        The option or one of its aliases, exactly as the library spells it
        (e.g. ``"low_var_kl"``, ``"k3"``, ``"k3+"``).
    acts_on : {"reward", "loss", "metric"}, optional
        Needed when the same option name exists in two placements, as in verl
        (``algorithm.kl_penalty`` for the reward, ``actor.kl_loss_type`` for the
        loss) and OpenRLHF (``--algo.kl.use_loss``).

    Returns
    -------
    CrosswalkEntry
        The matching entry.

    Raises
    ------
    ValueError
        If the library or option is unknown (the message lists the valid
        choices), or if the option is ambiguous and ``acts_on`` is not given.

    Examples
    --------
    >>> lookup("verl", "k3", acts_on="loss").option
    'low_var_kl'
    >>> lookup("sb3", "approx_kl").estimator
    'k3'
    """
    name = _canonical_library(library)
    if acts_on is not None and acts_on not in ACTS_ON:
        raise ValueError(f"acts_on must be None or one of {ACTS_ON}, got {acts_on!r}")
    entries = options(name)
    matches = [e for e in entries if option in e.names]
    if not matches:
        valid = sorted({n for e in entries for n in e.names})
        raise ValueError(f"option must be one of {valid} for library {name!r}, got {option!r}")
    if acts_on is not None:
        placed = [e for e in matches if e.acts_on == acts_on]
        if not placed:
            valid_places = sorted({e.acts_on for e in matches})
            raise ValueError(
                f"acts_on must be one of {valid_places} for {name} option {option!r}, got {acts_on!r}"
            )
        matches = placed
    if len(matches) > 1:
        places = {e.acts_on: e.setting for e in matches}
        raise ValueError(
            f"{name} option {option!r} exists in several placements; pass acts_on as one of "
            f"{sorted(places)} ({'; '.join(f'{k}: {v}' for k, v in sorted(places.items()))})"
        )
    return matches[0]


def releases(library: str | None = None) -> list[Release]:
    """Return the releases the crosswalk was read in, the current one of each library first.

    Parameters
    ----------
    library : str, optional
        A name from :func:`libraries` (case-insensitive) or an alias; all
        libraries if omitted.

    Returns
    -------
    list of Release
        In file order, which lists each library's current release first.

    Raises
    ------
    ValueError
        If ``library`` is unknown.

    Examples
    --------
    >>> [(r.version, r.current) for r in releases("trl")]
    [('1.16.0', True), ('1.12.0', False), ('0.11.4', False)]
    """
    if library is None:
        return list(RELEASES)
    name = _canonical_library(library)
    return [r for r in RELEASES if r.library == name]


def _logp(x: ArrayLike, name: str) -> np.ndarray:
    """Validate one array of log-probabilities: numeric, non-empty, finite, ≤ 0."""
    arr = np.atleast_1d(as_float_array(x, name))
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (log-probabilities of sampled tokens)")
    if (arr > 0).any():
        raise ValueError(f"{name} must be <= 0 (log-probabilities), got max {arr.max():.6g}")
    return arr


def evaluate(
    entry: CrosswalkEntry,
    logp_sampler: ArrayLike,
    logp_other: ArrayLike,
    *,
    logp_current: ArrayLike | None = None,
    check: bool = True,
) -> np.ndarray:
    r"""Compute the per-token value the library produces for ``entry``.

    Steps, in the library's order: ``logr = logp_other - logp_sampler`` (for
    entries with a ``current`` role ``logp_other - logp_current``), clamp ``logr``
    to :attr:`CrosswalkEntry.logr_clamp`, apply the estimator from
    :mod:`kl_core.estimation.estimators`, clamp to :attr:`CrosswalkEntry.value_clamp`, and
    multiply by :math:`\pi_\theta/\pi_{\mathrm{old}} = e^{\text{logp\_current} - \text{logp\_sampler}}`
    where the library does.  The result is per token, before the library's
    (masked) mean over tokens.

    For straight-through entries (verl ``"k3+"``, OpenRLHF ``unbiased_gradient``)
    the value equals the base estimator's: only the gradient the library
    back-propagates differs (:mod:`kl_core.gradients.expected`).

    Parameters
    ----------
    entry : CrosswalkEntry
        A row of :data:`CROSSWALK`, e.g. from :func:`lookup`.
    logp_sampler : array_like
        Log-probs of the sampled tokens under the policy that generated them.
    logp_other : array_like
        Log-probs of the same tokens under the other policy (same shape).
    logp_current : array_like, optional
        Only for entries with a ``current`` role (importance-weighted TRL, OpenRLHF
        ``unbiased_gradient``): log-probs under the policy being updated,
        :math:`\pi_\theta`.  Defaults to ``logp_sampler`` (on-policy, weight 1),
        which is what TRL uses when no old log-probs are stored.
    check : bool, default True
        Validate the arrays.  :mod:`kl_core.gradients.expected` passes False from its
        inner loops, on float arrays it has already checked.

    Returns
    -------
    numpy.ndarray
        Per-token values, same shape as the inputs (at least 1-D).

    Raises
    ------
    ValueError
        If an array is non-numeric, empty, non-finite, has a log-prob > 0, or
        the shapes differ (the message names the parameter); if ``entry`` is the
        exact ``"full"`` KL, which needs full distributions; or if
        ``logp_current`` is given for an entry that does not use it.
    TypeError
        If ``entry`` is not a :class:`CrosswalkEntry`.

    Examples
    --------
    >>> e = lookup("verl", "low_var_kl", acts_on="loss")
    >>> evaluate(e, [-50.0], [0.0]).tolist()  # logr = 50 -> clamped to 20 -> k3 clamped to 10
    [10.0]
    """
    if not isinstance(entry, CrosswalkEntry):
        raise TypeError(f"entry must be a CrosswalkEntry, got {type(entry).__name__}")
    if entry.estimator == _FULL:
        raise ValueError(
            f"{entry.library} option {entry.option!r} is the exact 'full' KL: it needs the full "
            "distributions over the vocabulary, not log-probs of sampled tokens"
        )
    if not check:
        ls, lo = np.asarray(logp_sampler), np.asarray(logp_other)
        lc = ls if logp_current is None or not entry.uses_current else np.asarray(logp_current)
        return _value(entry, ls, lo, lc)
    ls = _logp(logp_sampler, "logp_sampler")
    lo = _logp(logp_other, "logp_other")
    if lo.shape != ls.shape:
        raise ValueError(
            f"logp_other must have the shape of logp_sampler {ls.shape}, got {lo.shape}"
        )
    if entry.uses_current:
        lc = ls if logp_current is None else _logp(logp_current, "logp_current")
        if lc.shape != ls.shape:
            raise ValueError(
                f"logp_current must have the shape of logp_sampler {ls.shape}, got {lc.shape}"
            )
    else:
        if logp_current is not None:
            raise ValueError(
                f"logp_current applies only to entries with a 'current' role, not {entry.library} "
                f"option {entry.option!r}"
            )
        lc = ls
    return _value(entry, ls, lo, lc)


def _value(entry: CrosswalkEntry, ls: np.ndarray, lo: np.ndarray, lc: np.ndarray) -> np.ndarray:
    """The steps of :func:`evaluate` on arrays it has checked (``lc`` is ``ls`` without a current role)."""
    logr = lo - (lc if entry.uses_current else ls)
    if entry.logr_clamp is not None:
        logr = np.clip(logr, *entry.logr_clamp)
    value = estimators.evaluate(entry.estimator, logr)
    if entry.value_clamp is not None:
        value = np.clip(value, *entry.value_clamp)
    if entry.importance_weighted:
        value = value * np.exp(lc - ls)
    return value
