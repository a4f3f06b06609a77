r"""The config doctor: what a training config's KL term is, what it estimates, and where its gradient pushes.

:func:`diagnose` reads a verl launch script or YAML, an OpenRLHF
``train_ppo_ray`` command, or a TRL GRPO/RLOO config (YAML, JSON, a ``trl``
command or Python), never running any of it (:mod:`kl_core.doctor.parse`), and
returns a :class:`Diagnosis`:

* one :class:`KLUse` per place the config puts a KL term: the reward or the
  loss; the library's option and the estimator it computes, with its formula;
  the coefficient and its controller; the KL the value estimates; the
  *gradient target*, the exact expected gradient classified by
  :func:`kl_core.gradients.expected.classify` (clamps, straight-through tricks and
  importance weights included; a KL in the reward through its score-function
  term), on-policy and, when the config trains on a batch for more than one
  step, off-policy; and how the library aggregates it over tokens, with what
  that makes the coefficient mean;
* warnings with stable codes (:data:`WARNING_CODES`), each with a fix: the
  setting and value to change, in the input's own syntax, *checked* by
  diagnosing the changed config again;
* the keys the release does not know, with the nearest known key (an older
  release's name points to today's); where the input's syntax makes it certain
  that the release refuses them at startup (an argparse flag, a Hydra override
  or flag, a config dataclass's keyword, a ``trl`` command's flag; a Hydra
  ``+key=value`` on a key the config sets), the first warning,
  ``SETTING_REJECTED``, says the run stops before training, and the card
  describes the run without them;
* the release whose defaults filled in the rest: the current one, or an older
  era the script's own settings point to (:mod:`kl_core.doctor.releases`),
  with why; and, where the script's era and the current release differ for
  the KL, what the other release makes of it (:class:`OtherRelease`).

The launch line is found wherever it is (``srun``, ``ray job submit --``,
``accelerate launch``, ``torchrun``, ``deepspeed``, ``bash -c "…"``, a YAML
``run:`` block); an entry point without a profile is named and refused.

Library facts come from one place: the crosswalk entries
(:data:`kl_core.libraries.crosswalk.CROSSWALK`) say what each option computes and its
gradient mode; the doctor's tables in the same data file
(:mod:`kl_core.doctor.profiles`) say which settings select them; the release
defaults come from the release's own config files (``kl_core/doctor/keys``).

The gradient classes are computed, not copied: each entry's expected gradient
is evaluated exactly at :data:`PROBE` (a categorical policy, a reference and an
older sampler, moderately apart, so no clamp is active) and classified.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; Y. Tang and R. Munos, "On a few pitfalls
in KL divergence gradient estimation for RL", arXiv:2506.09477.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import math
import os
import re
import shlex
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from kl_core._docfill import docfill
from kl_core.doctor import parse as doctor_parse
from kl_core.doctor.parse import ParsedInput, RawSetting, UnreadableInput, as_double, joined
from kl_core.doctor.profiles import (
    AggregationMode,
    Caution,
    Placement,
    Profile,
    _expression_keys,
    evaluate_expression,
    holds,
    profiles,
)
from kl_core.doctor.releases import (
    Era,
    derive,
    era_profile,
    infer,
    parsing_keys,
    translate,
    unread_fork,
)
from kl_core.gradients._docstrings import SECTIONS
from kl_core.libraries.registry import canonical_library, library_packages
from kl_core.libraries.schema import CrosswalkEntry
from kl_core.libraries.snippets import marked_message
from kl_core.validation import N_, Message

__all__ = [
    "CLAMP_WARN_RATIO",
    "GRADIENT_WORDS",
    "PROBE",
    "STOP_CODES",
    "WARNING_CODES",
    "flag_left_off",
    "Diagnosis",
    "DoctorWarning",
    "KLUse",
    "OtherRelease",
    "PullCurve",
    "UnknownKey",
    "UnreadableInput",
    "PULL_T_MAX",
    "REJECTIONS",
    "clamp_bite",
    "clamp_sides",
    "option_values",
    "diagnose",
    "gradient_targets",
    "lacking_settings",
    "no_fix_words",
    "other_release_words",
    "pull_curve",
    "render_changes",
]

PROBE: dict[str, tuple[float, ...]] = {
    "policy": (0.6, -0.2, 0.9, -0.7, 0.1, -0.4),
    "ref": (0.1, 0.4, -0.3, 0.2, -0.5, 0.3),
    "old": (0.45, -0.05, 0.6, -0.5, 0.3, -0.2),
}
"""Logits of π_θ, π_ref and an older sampler π_old at which the gradient classes are computed.

Moderately apart: every per-token log-ratio is below 1.3 in size, so no clamp of
any library is active, and π_θ/π_old stays far below OpenRLHF's weight clip."""

PULL_T_MAX = 6.0
"""Half-width of the log-ratio axis of :func:`pull_curve` (the card's pull chart) by default."""

CLAMP_WARN_RATIO = 100.0
"""A clamp is reported when it starts to bite at a per-token probability ratio within this factor.

Single tokens drifting by a factor of 100 between two policies happen in real
runs; a clamp that only bites beyond e^10 ≈ 22,000 (OpenRLHF's k1) rarely matters."""

WARNING_CODES: dict[str, str] = {
    "SETTING_REJECTED": "settings the release refuses at startup (a key or flag it does not have, a Hydra +key=value on "
                        "a key the config already sets), so the run stops before training",
    "KL_OFF": "no KL term at all, or a KL term whose coefficient turns it off",
    "KL_SETTING_UNUSED": "a KL setting that has no effect because its term is switched off",
    "ZERO_GRAD_LOSS": "a KL loss whose expected gradient is zero",
    "ZERO_GRAD_REWARD": "a KL reward whose score-function gradient is zero",
    "FORWARD_KL_GRAD": "a KL term whose gradient is that of KL[π_ref‖π_θ], not the penalty's KL[π_θ‖π_ref]",
    "MIXED_GRAD": "a KL term whose gradient is neither KL's",
    "KL_TWICE": "a KL term in the reward and another in the loss",
    "CLAMP_HIDES_DRIFT": "a clamp that zeroes or caps the penalty where single tokens drift by less than CLAMP_WARN_RATIO",
    "OFF_POLICY_UNCORRECTED": "optimizer steps train on samples of an older policy (the later steps on each batch, or "
                              "every step), and the KL gradient is then biased",
    "NEGATIVE_COEF": "a negative KL coefficient, which rewards drifting away",
    "NONFINITE_COEF": "a KL coefficient that is not a finite number (nan, inf, -inf), which makes the loss or the "
                      "rewards NaN or infinite",
    "UNKNOWN_OPTION": "a KL option the release does not have",
    "NOT_LITERAL": "a setting that matters here whose value the doctor cannot read",
    "LEGACY_TRAINER": "a trainer the library's current release no longer ships",
    "SEQUENCE_LEVEL_KL_WEIGHT": "TRL's bias-corrected KL with a sequence-level importance weight",
    "STARTUP_CHECK_FAILS": "settings a start-up check of the release refuses together (a train batch smaller than "
                           "the mini-batch), so the run stops before training",
}
"""Every warning code, with what it means (codes are stable: scripts may match on them)."""

STOP_CODES: frozenset[str] = frozenset({"SETTING_REJECTED", "STARTUP_CHECK_FAILS"})
"""The codes of warnings that stop the run before training: they lead the warnings and the card."""

GRADIENT_WORDS: dict[str, str] = {
    "reverse_kl": N_("∇KL[π_θ‖π_ref]: pulls π_θ back toward π_ref where π_θ puts mass, the gradient of the KL "
                     "penalty RLHF means"),
    "forward_kl": N_("∇KL[π_ref‖π_θ]: the other direction, which pushes π_θ to cover everything π_ref covers; "
                     "not the penalty its value estimates"),
    "zero": N_("zero on average: the term does not pull π_θ anywhere"),
    "mixed": N_("neither KL's gradient: a mixture of terms, or biased by samples from an older policy"),
}
"""What each gradient target means for training, one sentence each (marked for the app's catalog)."""

_GRAD_CODES = {"ZERO_GRAD_LOSS", "ZERO_GRAD_REWARD", "FORWARD_KL_GRAD", "MIXED_GRAD",
               "CLAMP_HIDES_DRIFT", "OFF_POLICY_UNCORRECTED"}
_MAX_SUGGESTIONS = 50  # each suggestion compares the key with every known one: cap the work on junk input
_SUGGEST_CUTOFF = 0.84  # difflib ratio above which a known key is offered for a typo (long shared prefixes alone reach ~0.77)


@dataclass(frozen=True)
class DoctorWarning:
    """One finding, with the change that removes it.

    Attributes
    ----------
    code : str
        A key of :data:`WARNING_CODES`.
    message : str
        What is wrong and why it matters, in a few sentences.
    fix : str or None
        The change, written as the input writes settings (``kl_loss_type=k3+``,
        ``--algo.kl.unbiased_gradient``, ``use_bias_correction_kl: true``);
        None when the doctor keeps none of the changes it tried (``tried``
        says why each was rejected).
    changes : tuple of (str, Any)
        The same change as ``(setting, value)`` pairs.
    kl_use : int or None
        Index of the :class:`KLUse` it is about.
    tried : tuple of (str, str, tuple of str)
        When ``fix`` is None: each change the doctor diagnosed and rejected, as
        ``(change, why, raised)``: the change written as ``fix`` would be, a key
        of :data:`REJECTIONS`, and for ``"raises"`` the codes it raised.
    needs : tuple of str
        When ``fix`` is None: settings of the doctor's other changes that the
        release does not have (:attr:`Profile.unavailable`), so they were not tried.
    requires : str
        Where ``fix`` selects an option that runs only from some release on
        (:attr:`CrosswalkEntry.since`): which release, and what earlier ones do with it; else empty.
    """

    code: str
    message: str
    fix: str | None = None
    changes: tuple[tuple[str, Any], ...] = ()
    kl_use: int | None = None
    tried: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    needs: tuple[str, ...] = ()
    requires: str = ""


@dataclass(frozen=True)
class KLUse:
    r"""One KL term of the config.

    Attributes
    ----------
    where : str
        ``"reward"`` or ``"loss"``.
    entry : CrosswalkEntry
        The crosswalk row: what the option computes.
    setting : str or None
        The setting holding the option, if the library has one.
    written : str or None
        The option as the config spells it (or the release default).
    coef : float or None
        The coefficient (its initial value under an adaptive controller).
    coef_setting : str
    controller : str
        ``"fixed"`` or ``"adaptive"``.
    target_kl, horizon : float or None
        The adaptive controller's target and horizon.
    gradient_target : str
        The expected gradient on-policy, one of :data:`GRADIENT_WORDS`.
    gradient_target_off_policy : str or None
        The same in the off-policy optimizer steps of an off-policy config (the
        later steps on each batch, or every step: :attr:`Diagnosis.off_policy_every_step`);
        None when every step is on-policy.
    aggregation : AggregationMode or None
        How the per-token values are reduced (None for a value the release
        does not define).
    aggregation_setting : str
        The setting choosing it (empty for a fixed rule).
    aggregation_value : Any
    defaults_used : tuple of str
        The placement's settings that took the release default.
    alternatives : tuple of (str, str, str, str or None)
        Every option of this placement as ``(option, estimator, on-policy
        target, off-policy target)``.
    clamp_from : str
        For an era whose releases differ in the row's clamps, the first release
        with them (:attr:`kl_core.doctor.profiles.Profile.clamp_from`); else empty.
    computes : tuple of (str, str)
        ``(library_formula, formula_latex)`` where a caution of the profile runs other code than the
        entry's (:attr:`kl_core.doctor.profiles.Caution.computes`); else empty.
    """

    where: str
    entry: CrosswalkEntry
    setting: str | None
    written: str | None
    coef: float | None
    coef_setting: str
    controller: str
    target_kl: float | None
    horizon: float | None
    gradient_target: str
    gradient_target_off_policy: str | None
    aggregation: AggregationMode | None
    aggregation_setting: str
    aggregation_value: Any
    defaults_used: tuple[str, ...] = ()
    alternatives: tuple[tuple[str, str, str, str | None], ...] = ()
    clamp_from: str = ""
    computes: tuple[str, str] | tuple[()] = ()

    @property
    def option(self) -> str:
        """The crosswalk option."""
        return self.entry.option

    @property
    def library_formula(self) -> str:
        """The code the library runs for this term."""
        return self.computes[0] if self.computes else self.entry.library_formula

    @property
    def formula_latex(self) -> str:
        """That code's per-token value in LaTeX."""
        return self.computes[1] if self.computes else self.entry.formula_latex

    @property
    def estimator(self) -> str:
        """The estimator key (``"k1"``, ``"k2"``, ``"k3"``, ``"abs"``)."""
        return self.entry.estimator

    @property
    def crosswalk_name(self) -> str:
        """The row name shared with the Gradients views, e.g. ``"verl:low_var_kl"``."""
        from kl_core.gradients.expected import entry_name

        return entry_name(self.entry)


@dataclass(frozen=True)
class UnknownKey:
    """A key the release does not know.

    Attributes
    ----------
    key : str
    suggestion : str or None
        The nearest known key, when one is close.
    """

    key: str
    suggestion: str | None


@dataclass(frozen=True)
class OtherRelease:
    """What another release makes of the same script.

    Attributes
    ----------
    release : str
        E.g. ``"OpenRLHF 0.11.2"``.
    kl_uses : tuple of KLUse
        Its KL terms.
    fails : tuple of str
        Settings that release rejects, so the run stops before training (empty if none).
    changed : str
        What changed between it and the current release (for an older era).
    diagnosis : Diagnosis
        The full diagnosis under that release.
    stops : tuple of str
        Why that release stops the run over a value it rejects (its UNKNOWN_OPTION messages; empty if none).
    lacks : tuple of str
        Settings the card's own fixes write that this release does not have (empty if none).
    refuses : tuple of (str, str)
        Values the card's own fixes write that this release refuses in their setting, as (setting, value).
    aggregated : bool
        Whether its terms reduce the per-token KL otherwise than the card's (their aggregation is then said).
    fixes_there : tuple of (str, tuple of str)
        Where a fix of the card writes a setting or value this release lacks or refuses: the fixes the
        doctor finds under this release for the same warnings, each with the codes it fixes (verl
        0.4.0–0.7.1: ``kl_loss_type=k2`` for FORWARD_KL_GRAD, where the card writes ``low_var_kl+``);
        empty otherwise.
    """

    release: str
    kl_uses: tuple[KLUse, ...]
    fails: tuple[str, ...]
    changed: str
    diagnosis: Diagnosis
    stops: tuple[str, ...] = ()
    lacks: tuple[str, ...] = ()
    refuses: tuple[tuple[str, str], ...] = ()
    aggregated: bool = False
    fixes_there: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    """Everything the doctor found (see the module docstring).

    Attributes
    ----------
    profile : Profile
        The trainer and release whose defaults were assumed.
    kind : str
        The input's form: ``"command"``, ``"yaml"``, ``"json"`` or ``"python"``.
    command : str or None
        The start of the command (or the config call) that was read.
    kl_uses : tuple of KLUse
    warnings : tuple of DoctorWarning
    unrecognised : tuple of UnknownKey
    off_policy : tuple of str
        Why optimizer steps are off-policy (empty if they are not).
    settings : dict
        The value the doctor used for every setting it reads.
    given : tuple of str
        The settings among them that the config wrote.
    notes : tuple of str
        What was skipped while reading, and why.
    release_why : str
        Why the card describes this release (empty when only one release is known).
    also : tuple of OtherRelease
        What another release makes of the same script: the current release
        when the card describes an older era, an older era when the text does
        not say which it was written for and that era's KL differs.
    changed : str
        What changed between the releases, when ``also`` is not empty.
    off_policy_every_step : bool
        Whether the first optimizer step on each batch is off-policy too
        (:attr:`kl_core.doctor.profiles.OffPolicyRule.every_step`), not only the later ones.
    rejected : tuple of str
        Settings the release refuses at startup, so the run stops before training (the
        ``SETTING_REJECTED`` warning says why and how to write them): the key as written, with Hydra's
        ``+``/``~`` (``critic.model.fsdp_config.param_offload``, ``--init_kl_coef``,
        ``+actor_rollout_ref.actor.kl_loss_coef``).  The card describes the run without them.  Only where
        the input's syntax makes it certain (:func:`_rejected`); empty otherwise.
    """

    profile: Profile
    kind: str
    command: str | None
    kl_uses: tuple[KLUse, ...]
    warnings: tuple[DoctorWarning, ...]
    unrecognised: tuple[UnknownKey, ...]
    off_policy: tuple[str, ...]
    settings: dict[str, Any]
    given: tuple[str, ...]
    notes: tuple[str, ...] = ()
    release_why: str = ""
    also: tuple[OtherRelease, ...] = ()
    changed: str = ""
    off_policy_every_step: bool = False
    rejected: tuple[str, ...] = ()

    @property
    def library(self) -> str:
        """``"verl"``, ``"OpenRLHF"`` or ``"TRL"``."""
        return self.profile.library

    @property
    def release(self) -> str:
        """The release whose defaults were assumed."""
        return self.profile.release

    @property
    def codes(self) -> list[str]:
        """The warning codes, in order."""
        return [w.code for w in self.warnings]

    def to_json(self) -> dict[str, Any]:
        """The diagnosis as plain JSON types (the ``doctor --json`` output).

        Returns
        -------
        dict
            ``library``, ``release``, ``trainer``, ``input``, ``kl_uses``,
            ``warnings``, ``unrecognised`` (keys), ``suggestions``, ``rejected``,
            ``off_policy``, ``defaults_assumed``, ``notes``, ``release_why``,
            ``also`` (each other release with ``release``, ``fails`` and its
            ``kl_uses``) and ``changed``.
        """
        uses = []
        for u in self.kl_uses:
            agg = u.aggregation
            uses.append({
                "where": u.where,
                "option": u.option,
                "setting": u.setting,
                "written": u.written,
                "estimator": u.estimator,
                "formula": u.formula_latex,
                "coef": _plain(u.coef),
                "coef_setting": u.coef_setting,
                "controller": u.controller,
                "target_kl": _plain(u.target_kl),
                "horizon": _plain(u.horizon),
                "value_estimates": u.entry.direction,
                "gradient_target": u.gradient_target,
                "gradient_target_off_policy": u.gradient_target_off_policy,
                "gradient_expected": u.entry.grad_expected,
                "caveat": u.entry.caveat,
                "aggregation": None if agg is None else {
                    "setting": u.aggregation_setting or None,
                    "value": _plain(u.aggregation_value) if u.aggregation_setting else None,
                    "name": agg.name,
                    "formula": agg.formula,
                    "coefficient": agg.coefficient,
                },
                "crosswalk": u.crosswalk_name,
                "defaults_used": list(u.defaults_used),
            })
        return {
            "library": self.library,
            "release": self.release,
            "trainer": self.profile.trainer,
            "input": self.kind,
            "kl_uses": uses,
            "warnings": [
                {"code": w.code, "message": w.message, "fix": w.fix,
                 "changes": [[k, _plain(v)] for k, v in w.changes], "kl_use": w.kl_use,
                 "tried": [{"change": c, "why": why, "raised": list(raised)} for c, why, raised in w.tried],
                 "needs": list(w.needs), "requires": w.requires}
                for w in self.warnings
            ],
            "unrecognised": [u.key for u in self.unrecognised],
            "suggestions": {u.key: u.suggestion for u in self.unrecognised if u.suggestion},
            "rejected": list(self.rejected),
            "off_policy": list(self.off_policy),
            "defaults_assumed": {k: _plain(self.settings.get(k)) for k in self.profile.relevant
                                 if k not in self.given},
            "notes": list(self.notes),
            "release_why": self.release_why,
            "also": [
                {"release": o.release, "fails": list(o.fails), "stops": list(o.stops), "lacks": list(o.lacks),
                 "refuses": [list(r) for r in o.refuses], "fixes_there": [{"fix": f, "codes": list(c)} for f, c in o.fixes_there],
                 "words": other_release_words(o),
                 "kl_uses": [{"where": u.where, "option": u.option, "estimator": u.estimator, "coef": _plain(u.coef),
                              "gradient_target": u.gradient_target,
                              "aggregation": None if u.aggregation is None else u.aggregation.name}
                             for u in o.kl_uses]}
                for o in self.also
            ],
            "changed": self.changed,
        }


def _plain(value: Any) -> Any:
    """A value as JSON: numbers, text, bools, None, lists (a number that is not finite as ``"nan"``, ``"inf"``, ``"-inf"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return json.loads(json.dumps(value, default=str))


# --------------------------------------------------------------------------- #
# Gradient classes, from the gradients core
# --------------------------------------------------------------------------- #
@cache
@docfill(**SECTIONS)
def gradient_targets(entry: CrosswalkEntry) -> tuple[str, str]:
    r"""The exact on- and off-policy gradient class of a crosswalk entry, at :data:`PROBE`.

    The expected gradient :math:`\mathbb{E}_s[c(x)\,\nabla_\theta\log\pi_\theta(x)]`
    of the entry's per-token value (for a reward, of its score-function term),
    from :func:`kl_core.gradients.expected.gradient_row`, classified against
    :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` and
    :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]` by
    :func:`kl_core.gradients.expected.classify`, with tokens from :math:`\pi_\theta`
    and then from the older :math:`\pi_{\mathrm{old}}`.

    Parameters
    ----------
    entry : CrosswalkEntry
        A reward or loss entry.

    Returns
    -------
    tuple of str
        ``(on_policy, off_policy)``, each one of ``reverse_kl``, ``forward_kl``,
        ``zero``, ``mixed``.

    %(tang_munos_references)s
    """
    from kl_core.gradients.expected import gradient_row

    on = gradient_row(entry, PROBE["policy"], PROBE["ref"]).target
    off = gradient_row(entry, PROBE["policy"], PROBE["ref"], sampler=PROBE["old"]).target
    return on, off


@dataclass(frozen=True)
class PullCurve:
    r"""The per-token pull of one KL term, against the two KL gradients', by log-ratio.

    Attributes
    ----------
    t : numpy.ndarray
        :math:`t = \log\pi_{\mathrm{ref}}(x) - \log\pi_\theta(x)` of a sampled token.
    option : numpy.ndarray
        :math:`c(x)` of the term, with :math:`g(x) = c(x)\,\nabla_\theta\log\pi_\theta(x)`
        (a descent step lowers :math:`\log\pi_\theta(x)` where :math:`c > 0`).
    reverse, forward : numpy.ndarray
        :math:`c(x)` of :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]`
        (:math:`-t`, the score form ``k1_score``) and of
        :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]` (:math:`1 - e^t`, k3 as a loss).
    unclamped : numpy.ndarray or None
        :math:`c(x)` of the same term without its clamps (releases before the clamp came in);
        None for a term with no clamp.
    """

    t: Any
    option: Any
    reverse: Any
    forward: Any
    unclamped: Any = None


@docfill(**SECTIONS)
def pull_curve(entry: CrosswalkEntry, t_max: float = PULL_T_MAX, n: int = 241) -> PullCurve:
    r"""How hard one KL term pulls on a sampled token, by how far the token has drifted.

    Every option's per-sample gradient is :math:`c(x)\,\nabla_\theta\log\pi_\theta(x)`
    with :math:`c` a function of :math:`t = \log\pi_{\mathrm{ref}}(x) - \log\pi_\theta(x)`
    on-policy (:func:`kl_core.gradients.expected.gradient_coefficients`).  Its values are
    read off a categorical pair whose tokens span :math:`t \in [-t_{\max}, t_{\max}]`:
    :math:`\pi_\theta \propto e^{-t/2}`, :math:`\pi_{\mathrm{ref}} \propto e^{t/2}` over
    a symmetric grid, so the two normalisers cancel and each token's log-ratio
    is its grid value.  The same for the reverse-KL gradient (``k1_score``,
    :math:`c = -t`) and the forward-KL one (k3 as a loss, :math:`c = 1 - e^t`).

    Parameters
    ----------
    entry : CrosswalkEntry
        A reward or loss entry.
    t_max : float, default 6.0
        Half-width of the grid (> 0).
    n : int, default 241
        Grid points (3 to :data:`kl_core.gradients.expected.MAX_TOKENS`, odd so 0 is on it).

    Returns
    -------
    PullCurve

    %(tang_munos_references)s
    """
    import numpy as np

    from kl_core.gradients.expected import MAX_TOKENS, gradient_coefficients

    if not (isinstance(t_max, (int, float)) and math.isfinite(t_max) and t_max > 0):
        raise ValueError(f"t_max must be a finite number > 0, got {t_max!r}")
    if not (isinstance(n, int) and 3 <= n <= MAX_TOKENS and n % 2 == 1):
        raise ValueError(f"n must be an odd whole number from 3 to {MAX_TOKENS}, got {n!r}")
    t = np.linspace(-t_max, t_max, n)
    policy, ref = -t / 2, t / 2
    bare = dataclasses.replace(entry, logr_clamp=None, value_clamp=None) if entry.clamped else None
    return PullCurve(
        t=t,
        option=gradient_coefficients(entry, policy, ref),
        reverse=gradient_coefficients("k1_score", policy, ref),
        forward=gradient_coefficients("k3", policy, ref),
        unclamped=None if bare is None else gradient_coefficients(bare, policy, ref),
    )


def _invert(estimator: str, level: float, sign: int) -> float | None:
    """The log-ratio t, on the side ``sign`` of 0, where the estimator's value first reaches ``level``."""
    from kl_core.estimation.estimators import evaluate

    def f(t: float) -> float:
        return float(evaluate(estimator, t)) - level

    lo, hi = 0.0, float(sign)
    f_lo = f(lo)
    if f_lo == 0.0:
        return 0.0
    while (f(hi) > 0) == (f_lo > 0):
        hi *= 2.0
        if abs(hi) > 1e3:
            return None
    for _ in range(100):  # bisection to float precision
        mid = 0.5 * (lo + hi)
        if (f(mid) > 0) == (f_lo > 0):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@cache
def clamp_sides(entry: CrosswalkEntry) -> tuple[float | None, float | None]:
    r"""Where the entry's clamps first change its value on each side of :math:`t = 0`.

    With :math:`t = \log r` in the entry's convention (:math:`\log` other :math:`-`
    :math:`\log` sampler: on the doctor's card :math:`t = \log\pi_{\mathrm{ref}} - \log\pi_\theta`),
    a log-ratio clamp :math:`[a, b]` bites at :math:`a` and :math:`b`; a value
    clamp :math:`[\ell, h]` bites where the estimator :math:`k(t)` first leaves
    :math:`[\ell, h]` on that side (found by bisection on
    :func:`kl_core.estimation.estimators.evaluate`).  A value clamp can be one-sided: for
    k3, :math:`e^t - 1 - t = 10` at :math:`t \approx 2.61` and at
    :math:`t \approx -11.0`, where :math:`e^t` has all but vanished.

    Parameters
    ----------
    entry : CrosswalkEntry

    Returns
    -------
    tuple of (float or None, float or None)
        ``(below, above)``: the largest :math:`t < 0` and the smallest
        :math:`t > 0` at which a clamp bites; None on a side where none does.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html
    """
    below: list[float] = []
    above: list[float] = []
    if entry.logr_clamp is not None:
        lo, hi = entry.logr_clamp
        below += [lo] if math.isfinite(lo) and lo < 0 else []
        above += [hi] if math.isfinite(hi) and hi > 0 else []
    if entry.value_clamp is not None and entry.estimator != "full":
        for level in entry.value_clamp:
            for sign, side in ((1, above), (-1, below)):
                t = _invert(entry.estimator, level, sign)
                if t is not None and t != 0.0:
                    side.append(t)
    return (max(below) if below else None, min(above) if above else None)


@cache
def clamp_bite(entry: CrosswalkEntry) -> float | None:
    r"""The smallest per-token :math:`|\log r|` at which one of the entry's clamps changes its value.

    The nearer of the two sides of :func:`clamp_sides`: e.g. :math:`e^t - 1 - t = 10`
    at :math:`t \approx 2.61` for k3 (on the other side k3's clamp at 10 bites only
    near :math:`t = -11`).

    Parameters
    ----------
    entry : CrosswalkEntry

    Returns
    -------
    float or None
        None when the entry has no clamp.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html
    """
    bites = [abs(t) for t in clamp_sides(entry) if t is not None]
    return min(bites) if bites else None


# --------------------------------------------------------------------------- #
# Reading: which profile, which settings
# --------------------------------------------------------------------------- #
def _names(library: str | None) -> tuple[str, ...]:
    chosen = [p for p in profiles() if library is None or p.library.lower() == library.lower()]
    return tuple(n for p in chosen for n in p.names)


def _canonical_library(library: str | None) -> str | None:
    """The library the user named (any case or alias of the registry), if the doctor has a profile for it."""
    if library is None:
        return None
    covered = {p.library for p in profiles()}
    try:
        name = canonical_library(library)
    except ValueError:
        name = None
    if name not in covered:
        raise ValueError(f"library must be one of {sorted(n.lower() for n in covered)}, got {library!r}")
    return name


#: A dotted module under one of the libraries' packages (``openrlhf.cli.train_dpo``, ``recipe.dapo.main_dapo``).
_LIBRARY_CODE = re.compile(r"(?:^|\.)((?:" + "|".join(map(re.escape, library_packages())) + r")\.[\w.]+)$")


def _settings_for(parsed: ParsedInput, prof: Profile) -> tuple[list[RawSetting], list[str]]:
    """The parsed input's settings in the profile's spelling (flags of any era parsed with their own specs), bool
    settings read as the library reads them (:func:`_bools_read`)."""
    got, notes = _settings_read(parsed, prof)
    return _bools_read(got, parsing_keys(prof), prof.syntax, parsed.kind), notes


def _settings_read(parsed: ParsedInput, prof: Profile) -> tuple[list[RawSetting], list[str]]:
    notes: list[str] = []
    keys = parsing_keys(prof)
    if parsed.kind in ("yaml", "json"):
        settings = list(parsed.settings)
        if prof.syntax == "hydra":  # a Hydra config's own sections; to TRL's reader `defaults:` is a key like any
            for skip in ("defaults", "hydra"):
                if any(s.key == skip or s.key.startswith(skip + ".") for s in settings):
                    notes.append(Message("{skip}: Hydra's own section, not a setting of the trainer", skip=skip))
                    settings = [s for s in settings if not (s.key == skip or s.key.startswith(skip + "."))]
        return _numbers_read(tuple(settings), keys), notes
    if parsed.kind != "command":
        return list(parsed.settings), notes
    if prof.syntax == "hydra":
        got, n = doctor_parse.parse_overrides(parsed.arguments)
        return list(got), list(n)
    if prof.syntax == "argparse":
        got, n = doctor_parse.parse_flags(parsed.arguments, keys)
        return list(got), list(n)
    flags = {f"--{k}": spec for k, spec in keys.items()}
    got, n = doctor_parse.parse_flags(parsed.arguments, flags, dashes=True, negate=True)
    out = []
    for s in got:
        if s.key == "--config":
            notes.append(Message("--config {text}: the YAML file itself is not read here; give it to the doctor to read "
                                 "its settings", text=s.text))
            continue
        out.append(RawSetting(s.key[2:], s.value, s.text, s.literal, s.op, s.origin))
    return out, list(n)


#: transformers' string_to_bool (hf_argparser.py lines 36-46): the texts HfArgumentParser reads as a bool.
_HF_BOOLS = {"yes": True, "true": True, "t": True, "y": True, "1": True,
             "no": False, "false": False, "f": False, "n": False, "0": False}


def _bools_read(settings: list[RawSetting], keys: dict[str, Any], syntax: str, kind: str) -> list[RawSetting]:
    """Literal values of bool settings as the library reads them, as bools.

    verl tests its switches for truth (0.9.1 workers/utils/losses.py line 132 ``if config.use_kl_loss:``;
    ``omega_conf_to_dataclass`` checks no types), so Hydra's ``1`` or ``yes`` is on and ``0`` or ``null`` off.
    TRL's parser turns the texts of ``string_to_bool`` into bools, on the command line and from a YAML
    (argparse converts a text default with the field's type), and keeps a number as written, tested for
    truth (grpo_trainer.py ``if self.use_bias_correction_kl``); a Python call keeps any value as written.
    A text ``string_to_bool`` refuses stays text.
    """
    out = []
    for s in settings:
        spec = keys.get(s.key)
        if s.literal and spec is not None and isinstance(spec.default, bool) and not isinstance(s.value, bool):
            value = s.value
            if syntax == "hydra" or kind == "python" or isinstance(value, int | float) or value is None:
                value = bool(value)
            elif isinstance(value, str) and value.strip().lower() in _HF_BOOLS:
                value = _HF_BOOLS[value.strip().lower()]
            s = dataclasses.replace(s, value=value)
        out.append(s)
    return out


def _numbers_read(settings: tuple[RawSetting, ...], keys: dict[str, Any]) -> list[RawSetting]:
    """A YAML or JSON file's text values of numeric settings, as the library reads them.

    Where the release's default is a float, the library reads the value as a float: verl through its
    typed configs (OmegaConf converts "inf" to a float, and refuses "abc" with a ValidationError), TRL
    through the field's argparse ``type=float`` (``float("inf")``; "abc" exits with "invalid float
    value").  A text ``float()`` accepts becomes that number; one it refuses stays text, and
    :func:`_not_a_number` finds it (the run stops there).
    """
    out = []
    for s in settings:
        if _float_setting(s, keys):
            with contextlib.suppress(ValueError):
                s = dataclasses.replace(s, value=float(s.value))
        out.append(s)
    return out


def _float_setting(s: RawSetting, keys: dict[str, Any]) -> bool:
    """Whether ``s`` is literal text for a setting whose default is a float."""
    spec = keys.get(s.key)
    return isinstance(s.value, str) and s.literal and spec is not None and isinstance(spec.default, float)


def _not_a_number(p: Profile, kind: str, s: RawSetting) -> str | None:
    """Why a float setting's value stops the run, as a key of :data:`_REFUSALS`, or None.

    * A YAML or JSON file's text ``float()`` refuses (:func:`_numbers_read`): ``not_a_number``.
    * A command-line flag read with ``type=float`` (OpenRLHF's argparse, TRL's HfArgumentParser) whose text
      ``float()`` refuses (``--beta None``): the parser exits, ``argparse_float``.
    * A KL coefficient that reaches the code as None or text (Hydra's ``kl_loss_coef=null`` or ``=abc``, a
      YAML ``beta: null``, ``GRPOConfig(beta=None)``): ``kl_loss * None`` raises TypeError at the first update
      (verl 0.9.1 workers/utils/losses.py line 140; TRL 1.16.0 grpo_trainer.py ``self.beta * per_token_kl``),
      ``coef_not_number``.
    """
    spec = p.keys.get(s.key)
    if spec is None or not s.literal or not isinstance(spec.default, float):
        return None
    if kind in ("yaml", "json") and _float_setting(s, p.keys):
        return "not_a_number"
    if kind == "command" and p.syntax in ("argparse", "dataclass") and as_double(s.text) is None:
        return "argparse_float"
    coefs = {pl.coef for pl in p.placements if pl.coef}
    if s.key in coefs and (s.value is None or (isinstance(s.value, str) and as_double(s.value) is None)):
        return "coef_not_number"
    return None


def _not_a_mode(p: Profile, s: RawSetting) -> str | None:
    """``"agg_mode"`` where a verl aggregation setting names a mode the release does not define: its start-up check
    stops the run (``loss_agg_mode=token-sum`` before 0.8: verl v0.4.0 ray_trainer.py line 498 asserts it is one of
    four modes, v0.6.0 to v0.7.0 workers/config/actor.py ``ActorConfig.__post_init__`` raises "Invalid
    loss_agg_mode"; 0.9.1 actor.py line 219 with five)."""
    if p.syntax != "hydra" or not s.literal:
        return None
    for pl in p.placements:
        if pl.aggregation.setting == s.key and pl.aggregation.mode(s.value) is None:
            return "agg_mode"
    return None


def _known(prof: Profile, key: str, op: str, keys: Any = None) -> bool:
    if key in (prof.keys if keys is None else keys) or (prof.syntax == "hydra" and key.startswith("hydra.")):
        return True
    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:i])
        spec = prof.keys.get(parent)
        if spec is not None:  # under a dict-valued setting (Hydra's engine_kwargs, TRL's model_init_kwargs)
            return isinstance(spec.default, dict) or "dict" in (spec.type or "") or op in ("+", "++")
        if op in ("+", "++") and i == len(parts) - 1:  # Hydra adds a key to a section that exists
            return any(k.startswith(parent + ".") for k in prof.keys)
    return False




def _resolve_references(prof: Profile, values: dict[str, Any], given: dict[str, RawSetting]) -> None:
    """Give a setting written as ``${other.key}`` (an OmegaConf reference) the value of that key.

    verl's configs tie keys together this way (``kl_coef: ${actor_rollout_ref.actor.kl_loss_coef}``).
    The referenced key's value is the one given in the same input, else the
    release default; a chain is followed.  ``${oc.env:NAME,default}`` takes its
    default, and the setting's origin says the environment may override it.  A
    cycle or anything else (``${oc.env:X}`` without a default, arithmetic,
    other resolvers, a relative ``${.x}``) stays not literal: no resolver is run.
    Each is read with OmegaConf's own grammar (:func:`_interpolation`).
    """
    for key, s in list(given.items()):  # ${oc.env:NAME,default}: the default, said to be one
        got = None if s.literal else _interpolation(s.text.strip().strip("'\""))
        if got is None or got[0] != "env" or got[2] is None:
            continue
        default = doctor_parse.scalar(got[2].strip().strip("'\""))
        given[key] = RawSetting(key, default, s.text, True, s.op, Message(
            "{text}: the default of the environment variable {name}; if {name} is set when the job starts, "
            "its value is used instead", text=s.text, name=got[1]))
        values[key] = default
    for _ in range(len(given) + 1):  # each pass resolves at least one link of a chain, or stops
        changed = False
        for key, s in list(given.items()):
            got = None if s.literal else _interpolation(s.text.strip().strip("'\""))
            if got is None or got[0] != "ref" or got[1] == key or got[1] not in prof.keys:
                continue
            target = got[1]
            ref = given.get(target)
            if ref is not None and not ref.literal:
                continue  # resolve that one first (or it stays unreadable)
            origin = (Message("{text} is {key}", text=s.text, key=target) if ref is not None else
                      Message("{text} is {key}, the release default", text=s.text, key=target))
            given[key] = RawSetting(key, values[target], s.text, True, s.op, origin)
            values[key] = values[target]
            changed = True
        if not changed:
            return


def _interpolation(text: str) -> tuple[str, str, str | None] | None:
    """An OmegaConf interpolation read with OmegaConf's own grammar, never resolved.

    ``("ref", "a.b", None)`` for ``${a.b}``; ``("env", NAME, default or None)``
    for ``${oc.env:NAME,default}``; None for anything else (text, a relative
    ``${.x}``, a concatenation ``${a}+1``, any other resolver), which then stays
    not literal.  Only the parse tree is looked at: no resolver is registered or run.
    """
    if "${" not in text:
        return None
    try:
        from omegaconf import grammar_parser  # lazy: loads antlr

        tree = grammar_parser.parse(text, parser_rule="singleElement", lexer_mode="VALUE_MODE")
    except Exception:  # noqa: BLE001 - any parse failure means "not an interpolation the doctor reads"
        return None
    element = tree.element()
    prim = element.primitive() if element is not None else None
    if prim is None or prim.getChildCount() != 1 or len(prim.interpolation()) != 1:
        return None
    interp = prim.interpolation(0)
    node = interp.interpolationNode()
    if node is not None:
        ref = node.getText()[2:-1]
        return None if ref.startswith(".") or "$" in ref else ("ref", ref, None)
    res = interp.interpolationResolver()
    if res is None or res.resolverName().getText() != "oc.env" or res.sequence() is None:
        return None
    items = [e.getText() for e in res.sequence().element()]
    return ("env", items[0], items[1] if len(items) == 2 else None) if len(items) in (1, 2) else None


def _refuse_unread_fork(prof: Profile, raw: list[RawSetting]) -> None:
    """Refuse a text of a project that runs its own copy of the library (:func:`kl_core.doctor.releases.unread_fork`):
    read against a release, its own settings would be "refused" and its KL misread (EasyR1's KL loss read as
    verl's reward KL, off)."""
    found = unread_fork(prof.library, (s.key for s in raw))
    if found is None:
        return
    fork, keys = found
    raise UnreadableInput(
        "this is a config of {name} ({repo}): it sets {keys}, settings of {name}'s own copy of {lib}, whose "
        "settings and KL code differ from {lib}'s releases; the doctor describes {lib}'s releases, not that copy, "
        "so it gives no card rather than a wrong one",
        name=fork.name, repo=fork.repo, lib=prof.library,
        keys=", ".join(keys[:3]) + (" …" if len(keys) > 3 else ""))


def _refuse_uncovered(text: str) -> ParsedInput | None:
    """Refuse a script whose trainer the doctor has no profile for, or read a user script's command line.

    The entry point is found past ``srun``, ``ray job submit --``, ``accelerate
    launch``, ``torchrun``, ``deepspeed`` and ``bash -c "…"``
    (:func:`kl_core.doctor.parse.entry_points`).  A trainer of no profile
    (``recipe.dapo.main_dapo``, ``openrlhf.cli.train_dpo``, ``trl dpo``) is named
    and refused: scored against the covered trainers, its flags would give a
    confident card for a loss it does not have.  A script of the user's own
    (``train_grpo.py``) is read from its command line when that line gives
    settings of TRL's configs (such scripts parse them with ``TrlParser``);
    otherwise the refusal says the settings come from elsewhere.  Returns the
    user script's command line to read, or None.
    """
    entries = [e for e in doctor_parse.entry_points(text) if e.trainer]
    if not entries:
        return None
    e = entries[0]
    dotted = e.name.removesuffix(".py").replace("/", ".")
    covered = {n.removesuffix(".py").replace("/", ".") for n in _names(None)}
    if dotted in covered or any(dotted.endswith("." + c) for c in covered):
        return None
    listing = ", ".join(dict.fromkeys(n for n in _names(None) if "/" not in n and not n[:1].isupper()))
    library_code = _LIBRARY_CODE.search(dotted)
    if library_code or e.kind != "script":
        raise UnreadableInput(
            "this runs {trainer}, a trainer the doctor does not cover; it reads the launch commands "
            "of {covered}", trainer=library_code.group(1) if library_code else e.name, covered=listing)
    args = e.command.words[e.start:]
    flags = [w.text.split("=", 1)[0] for w in args if w.text.startswith("--")]
    trl = [p for p in profiles() if p.library == "TRL" and not p.legacy]
    known = [f for f in flags if any(f[2:] in p.keys for p in trl)]
    hydra = [p for p in profiles() if p.syntax == "hydra" and not p.legacy]
    overrides = [w.text.split("=", 1)[0].lstrip("+~") for w in args if "=" in w.text and not w.text.startswith("-")]
    verl = [k for k in overrides if any(k in p.keys for p in hydra)]
    if not known and verl:
        # verl v0.2.0.post2 examples/split_placement: main_ppo_split.py composes ppo_trainer_split.yaml and patches
        # RayPPOTrainer.fit, so its overrides are not main_ppo's to read
        raise UnreadableInput(
            "this runs {script}, a script of its own: its command line gives {n} Hydra overrides of {lib}'s keys "
            "({keys}), but the script composes its own config and training loop, which the doctor does not read; "
            "to see what {lib}'s own trainer makes of them, give the doctor the same overrides after "
            "python3 -m verl.trainer.main_ppo", script=e.name, n=len(verl), lib=hydra[0].library,
            keys=", ".join(verl[:3]) + (" …" if len(verl) > 3 else ""))
    if not known:
        raise UnreadableInput(
            "this runs {script}, a script of its own, and its command line gives no setting the doctor "
            "knows ({flags}): its settings come from the script itself or a config it reads; give the "
            "doctor that file", script=e.name, flags=", ".join(flags) or Message("none"))
    head = " ".join(w.text for w in e.command.words[:e.start])
    note = Message("{script} is a script of its own; its command-line flags ({flags}) are read as TRL's "
                   "GRPOConfig/RLOOConfig settings, as a script built on TrlParser or HfArgumentParser reads "
                   "them; settings the script sets in its own code are not seen here",
                   script=e.name, flags=", ".join(known[:4]) + (" …" if len(known) > 4 else ""))
    return ParsedInput("command", arguments=args, command=head, notes=(note,))


def _choose(parsed: ParsedInput, library: str | None, text: str, filename: str | None) -> Profile:
    candidates = [p for p in profiles() if library is None or p.library == library]
    if parsed.names:
        named = [p for p in candidates if parsed.names[0] in p.names]
        if len(named) == 1:
            return named[0]
        candidates = named or candidates  # e.g. two releases' PPOConfig: their keys decide
    if library is not None and len({p.trainer for p in candidates}) == 1:
        return candidates[0]
    rloo = re.search(r"rloo", filename or "", re.I) or re.search(r"\brloo\b", text, re.I)
    scored = []
    for i, p in enumerate(candidates):
        got, _ = _settings_for(parsed, p)
        every = parsing_keys(p)
        hits = sum(1 for s in got if _known(p, s.key, s.op, every))
        bonus = 1000.0 if p.trainer == "rloo" and rloo else 0.0  # a config that names RLOO is RLOO's
        scored.append((hits + bonus if hits else 0.0, -i, p))
    best = max(scored, key=lambda s: (s[0], s[1]))
    if best[0] <= 0 and library is not None:
        return candidates[0]  # the library the user named, its current trainer: every key will be listed as unknown
    if best[0] <= 0:
        raise UnreadableInput(
            "the doctor cannot tell which library this is for: no setting of "
            "{libraries} was found; pass --library verl, openrlhf or trl",
            libraries=", ".join(sorted({p.library for p in candidates})),
        )
    return best[2]


# --------------------------------------------------------------------------- #
# Analysis
# --------------------------------------------------------------------------- #
@dataclass
class _State:
    profile: Profile
    values: dict[str, Any]
    given: dict[str, RawSetting]
    kind: str
    uses: list[KLUse] = field(default_factory=list)
    warnings: list[DoctorWarning] = field(default_factory=list)
    placements: list[Placement | None] = field(default_factory=list)  # the placement of each warning
    off: list[str] = field(default_factory=list)
    every_step: bool = False  # the first optimizer step on each batch is off-policy too
    era: Era | None = None  # whose derived settings a fix's change must derive again


def _bare(prof: Profile, key: str) -> str:
    return key[len(prof.prefix):] if prof.prefix and key.startswith(prof.prefix) else key


def _entry_for(prof: Profile, pl: Placement, values: dict[str, Any]) -> CrosswalkEntry | None:
    for e in pl.entries:
        ok = True
        for key, cond in e.config:
            k = _bare(prof, key)
            if k == pl.coef:
                continue
            names = e.names if (k == pl.option and cond == e.option) else ()
            if not holds(cond, values.get(k), values, names):
                ok = False
                break
        if ok:
            return e
    return None


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _say(prof: Profile, key: str, value: Any, kind: str = "command") -> str:
    """A setting and its value as the user would write it, for messages."""
    return render_changes(prof, kind, ((key, value),))


#: The sentences that can open a message, and the same with a capital (written out for the catalog).
_CAPITALS = {
    "the KL {where} is off ({settings})": N_("The KL {where} is off ({settings})"),
    "the KL {where} is on, but {said} turns it off": N_("The KL {where} is on, but {said} turns it off"),
    "the KL {where} ({said})": N_("The KL {where} ({said})"),
}


def _cap(text: str) -> str:
    if isinstance(text, Message) and text.template in _CAPITALS:
        return marked_message(_CAPITALS[text.template], **text.params)
    return text[:1].upper() + text[1:] if text.startswith(("the ", "each ", "one ")) else text


def _say_state(prof: Profile, key: str, values: dict[str, Any], given: dict[str, RawSetting], kind: str) -> str:
    """A setting and its value as the card states it: tagged "(release default)" where the config did not write
    it, and an argparse switch the config did not set as "--flag not set" (``remove --flag`` is a change, and
    the config has nothing to remove)."""
    value = values.get(key)
    if key in given:
        return _say(prof, key, value, kind)
    if (flag := flag_left_off(prof, key, value)) is not None:
        return Message("{flag} not set", flag=flag)
    return Message("{said} (release default)", said=_say(prof, key, value, kind))


def _say_switch(prof: Profile, key: str, values: dict[str, Any], given: dict[str, RawSetting], kind: str) -> str:
    """A switch and its value (:func:`_say_state`); for a setting an older era did not have, the setting its
    value was read from."""
    rule = prof.derived.get(key)
    if rule is None and key in prof.unavailable and key not in given:
        # no setting to show a default of (rllm's copy of verl has no algorithm.use_kl_in_reward)
        return Message("{lib} {release} has no {key}: it never adds this KL", lib=prof.library,
                       release=prof.release, key=prof.spelled(key))
    if rule is None or key in given:
        return _say_state(prof, key, values, given, kind)
    said = _say(prof, key, values.get(key), kind)
    other = rule.removeprefix("not ")
    return Message("{said}, read from {other}", said=said, other=_say(prof, other, values.get(other), kind))


def _where_words(pl: Placement) -> Message:
    return Message("in the reward") if pl.acts_on == "reward" else Message("in the loss")


def _signed(t: float) -> str:
    """A log-ratio with two decimals and a real minus sign."""
    return format(t, ".2f").replace("-", "−")


def _times(x: float) -> str:
    """A probability ratio to 3 significant digits, in full with thousands separators (59,900, not 5.99e+04)."""
    rounded = float(format(x, ".3g"))
    return format(rounded, ",.0f") if rounded >= 1000 else format(rounded, "g")


def _ratio_words(t: float) -> str:
    """What a log-ratio t = log π_ref − log π_θ means for the two probabilities of a token."""
    if t > 0:
        return "π_θ(x) < π_ref(x)/{ratio}".format(ratio=_times(math.exp(t)))
    return "π_θ(x) > {ratio}·π_ref(x)".format(ratio=_times(math.exp(-t)))


def _clamp_words(prof: Profile, e: CrosswalkEntry, first: str = "") -> str:
    """The CLAMP_HIDES_DRIFT message: the entry's clamps as the profile's release has them.

    ``first`` is the first release of an era with those clamps (OpenRLHF 0.8.6 in
    0.6.0.post1–0.10.1: compute_approx_kl has no clamp up to v0.8.5); the message then says so.
    """
    parts = []
    if e.value_clamp is not None:
        parts.append(Message("the per-token value to [{lo}, {hi}]", lo=_fmt(e.value_clamp[0]), hi=_fmt(e.value_clamp[1])))
    if e.logr_clamp is not None:
        parts.append(Message("the log-ratio to [{lo}, {hi}]", lo=_fmt(e.logr_clamp[0]), hi=_fmt(e.logr_clamp[1])))
    clamps = parts[0] if len(parts) == 1 else Message("{a} and {b}", a=parts[0], b=parts[1])
    below, above = clamp_sides(e)
    sides = [t for t in (below, above) if t is not None]
    near = min(sides, key=abs)
    far = max(sides, key=abs) if len(sides) == 2 else None
    if far is not None and math.isclose(abs(far), abs(near), rel_tol=1e-9):
        clause = Message(
            "{lib}'s {option} clamps {clamps}, which bites once a token's probability ratio between the two "
            "policies passes {ratio} (|log r| > {bite}).",
            lib=prof.library, option=e.option, clamps=clamps, ratio=_times(math.exp(abs(near))),
            bite=format(abs(near), ".2f"))
    elif far is not None:
        clause = Message(
            "{lib}'s {option} clamps {clamps}, which bites once a token's log-ratio log r = log π_ref(x) − "
            "log π_θ(x) passes {near} ({near_words}), but the other way only past log r = {far} ({far_words}).",
            lib=prof.library, option=e.option, clamps=clamps, near=_signed(near), near_words=_ratio_words(near),
            far=_signed(far), far_words=_ratio_words(far))
    else:
        clause = Message(
            "{lib}'s {option} clamps {clamps}, which bites once a token's log-ratio log r = log π_ref(x) − "
            "log π_θ(x) passes {near} ({near_words}), and never the other way.",
            lib=prof.library, option=e.option, clamps=clamps, near=_signed(near), near_words=_ratio_words(near))
    if e.grad_mode == "autograd":
        then = Message("torch.clamp passes no gradient there, so the KL stops pulling exactly on the tokens that "
                       "drifted furthest, and the logged value under-reports the drift.")
    else:
        then = Message("Past that point each token's penalty stops growing, so larger drifts cost no more, and "
                       "the logged value under-reports them.")
    if first:
        return Message("From {lib} {first} on: {clause} {then} Releases before {first} clamp nothing.",
                       lib=prof.library, first=first, clause=clause, then=then)
    return marked_message("{clause} {then}", clause=clause, then=then)


def option_values(prof: Profile, pl: Placement) -> tuple[str, ...]:
    """The values a placement's option setting accepts, as the user writes them.

    The release's own list where the doctor has one (:meth:`Profile.accepted`:
    OpenRLHF's argparse ``choices``, an era's ``accepts``); else every spelling of
    the placement's crosswalk rows that the setting selects alone (not
    OpenRLHF's ``k1+unbiased_gradient``, a row that needs a second flag).

    Parameters
    ----------
    prof : Profile
    pl : Placement
        One of ``prof.placements``, with an option setting.

    Returns
    -------
    tuple of str
        Sorted.
    """
    if pl.option is None:
        raise ValueError(f"pl must be a placement with an option setting, got one with coefficient {pl.coef!r}")
    known = prof.accepted(pl.option)
    if known is not None:
        return tuple(sorted(known))
    defaults = {k: spec.default for k, spec in prof.keys.items()}
    return tuple(sorted({n for e in pl.entries for n in e.names if _selected_by(prof, pl, e, n, defaults)}))


def _unknown_option_words(prof: Profile, pl: Placement, written: Any, kind: str) -> str:
    """UNKNOWN_OPTION: a value the option setting does not accept stops the run (read in each release's code)."""
    said = _say(prof, pl.option or pl.coef, written, kind)
    names = ", ".join(option_values(prof, pl)) if pl.option else ""
    if prof.syntax == "argparse" and pl.option and prof.accepted(pl.option) is not None:
        # OpenRLHF 0.11.2 openrlhf/cli/train_ppo_ray.py: --algo.kl.estimator choices=["k1", "k2", "k3"]
        # (v0.7.5 to v0.10.1: --kl_estimator, the same choices): argparse exits before training.
        return Message("{said} is not a value {lib} {rel} accepts {where}: its argument parser accepts only "
                       "{names}, so the run stops at startup, before training.", said=said, lib=prof.library,
                       rel=prof.release, where=_where_words(pl), names=names)
    if prof.library == "verl":
        # verl 0.9.1 verl/trainer/ppo/core_algos.py kl_penalty_forward, v0.3.0.post1 kl_penalty: any other value
        # ends in `raise NotImplementedError`; nothing checks the setting earlier.
        return Message("{said} is not a value {lib} {rel} accepts {where}: its kl_penalty raises "
                       "NotImplementedError for anything but {names}, so the run stops at the first training step "
                       "that computes the KL.", said=said, lib=prof.library, rel=prof.release,
                       where=_where_words(pl), names=names)
    return Message("{said} is not a KL option {lib} {rel} has {where}; it knows {names}.", said=said,
                   lib=prof.library, rel=prof.release, where=_where_words(pl), names=names)


def _nonfinite(value: Any) -> bool:
    """Whether a setting's value is a number that is not finite (nan, inf, -inf)."""
    return isinstance(value, float) and not math.isfinite(value)


def _coef_on(pl: Placement, coef: Any, values: dict[str, Any]) -> bool:
    """Whether the placement's coefficient turns its KL term on, as the library's own comparison decides.

    :func:`holds` calls every comparison with NaN false; the libraries compare with Python's operators,
    where ``nan != 0`` is true: TRL 1.16.0's ``if self.beta != 0.0`` computes the KL for beta = NaN, and
    verl multiplies the KL loss by any ``kl_loss_coef``.  ``nan > 0`` is false, as :func:`holds` has it.
    """
    if isinstance(coef, float) and math.isnan(coef):
        return pl.coef_on.strip().startswith("!=")
    return holds(pl.coef_on, coef, values)


def _multiplied_anyway(pl: Placement, coef: float) -> bool:
    """Whether a coefficient that is not finite, and fails the placement's test, still reaches the loss or rewards.

    Only OpenRLHF's placements test ``> 0`` (NaN and −inf fail it).  OpenRLHF 0.11.2 (and v0.7.5 to v0.10.1
    alike) then loads no reference model and computes no KL, but openrlhf/trainer/ray/ppo_actor.py
    training_step still adds ``kl_loss * kl_ctl`` with a zero ``kl_loss`` when --algo.kl.use_loss is set:
    0 × NaN and 0 × −inf are NaN (v0.6.0 to v0.7.4 drop the reference model only for a coefficient == 0, so
    they compute the KL and the product is NaN or infinite).  openrlhf/models/utils.py compute_reward sets a
    coefficient ``<= 0`` to 0, which turns −inf into 0 but lets NaN through (``nan <= 0`` is false), so
    ``-kl_coef * kl`` makes every reward NaN.
    """
    return math.isnan(coef) or pl.acts_on == "loss"


def _nonfinite_words(
    prof: Profile, pl: Placement, coef: float, kind: str, *, computed: bool, written: Any = None
) -> str:
    """NONFINITE_COEF: the coefficient is not a finite number, so the loss or the rewards become NaN or infinite.

    ``computed``: the library computes the KL term and multiplies it by the coefficient; else it computes no KL
    but still multiplies a zero by the coefficient (:func:`_multiplied_anyway`).  ``written``: the value as
    written, where it is an integer past the largest double that the trainer reads as ``coef`` = ±inf.
    """
    said = _say(prof, pl.coef, coef, kind)
    if isinstance(written, int) and not isinstance(written, bool) and as_double(written) == coef:
        digits = len(str(abs(written)))
        said = Message("{said} (an integer of {digits:,} digits as written, past the largest double)",
                       said=said, digits=digits)
    if computed and pl.acts_on == "loss":
        return Message("{said} is not a finite number, and {lib} multiplies the KL term in the loss by it: the "
                       "loss becomes NaN or infinite, and so do its gradients, so the run cannot train. Set the "
                       "coefficient to a finite number.", said=said, lib=prof.library)
    if computed:
        return Message("{said} is not a finite number, and {lib} multiplies the KL penalty in the reward by it: "
                       "the rewards become NaN or infinite, and so do the advantages and the loss computed from "
                       "them, so the run cannot train. Set the coefficient to a finite number.",
                       said=said, lib=prof.library)
    if pl.acts_on == "loss":
        return Message("{said} is not a finite number. {lib} still adds the KL loss times this coefficient to the "
                       "loss, even where it skips computing the KL for it and the KL loss is zero, and zero times "
                       "{value} is NaN: the loss becomes NaN or infinite, and so do its gradients, so the run "
                       "cannot train. Set the coefficient to a finite number.",
                       said=said, lib=prof.library, value=_fmt(coef))
    return Message("{said} is not a finite number. {lib} still subtracts this coefficient times the KL from the "
                   "rewards, even where it skips computing the KL for it and the KL is zero (its check that counts "
                   "a coefficient ≤ 0 as 0 lets NaN through), and zero times NaN is NaN: the rewards become NaN, "
                   "and so do the advantages and the loss computed from them, so the run cannot train. Set the "
                   "coefficient to a finite number.", said=said, lib=prof.library)


def _analyse(prof: Profile, values: dict[str, Any], given: dict[str, RawSetting], kind: str) -> _State:
    st = _State(prof, values, given, kind)
    if prof.legacy:
        _warn(st, None, "LEGACY_TRAINER", prof.legacy)
    off_rules = [r for r in prof.off_policy if r.holds(values)]
    st.off = [Message("{why}: {setting}{rhs}", why=r.why,
                      setting=joined(", ", (_say_state(prof, k, values, given, kind) for k, _ in (r.when, *r.also))),
                      rhs=_rhs_words(prof, r.when[1], values))
              for r in off_rules]
    st.every_step = any(r.every_step for r in off_rules)
    live_keys: set[str] = set()
    dead: list[tuple[Placement, str]] = []
    # an option the release rejects (the run stops), or a coefficient that is not a finite number (the loss or
    # the rewards become NaN): "no KL term" would not be the story
    stopped = False
    for pl in prof.placements:
        on = all(holds(c, values.get(k), values) for k, c in pl.switch)
        coef = values.get(pl.coef)
        live = on and _coef_on(pl, coef, values)
        if on:
            live_keys.update(pl.settings)
        if not on:
            dead.append((pl, Message("the KL {where} is off ({settings})", where=_where_words(pl),
                                     settings=joined(", ", (_say_switch(prof, k, values, given, kind)
                                                            for k, _ in pl.switch)))))
            continue
        read = as_double(coef) if isinstance(coef, int) and not isinstance(coef, bool) else coef
        if not live and _nonfinite(read) and _multiplied_anyway(pl, read):
            _warn(st, pl, "NONFINITE_COEF", _nonfinite_words(prof, pl, read, kind, computed=False, written=coef))
            stopped = True
            continue
        if not live:
            said = _say_state(prof, pl.coef, values, given, kind)
            dead.append((pl, Message("the KL {where} is on, but {said} turns it off", where=_where_words(pl), said=said)
                         if pl.switch else Message("{said} turns the KL {where} off", said=said, where=_where_words(pl))))
            continue
        entry = _entry_for(prof, pl, values)
        if entry is None:
            written = values.get(pl.option) if pl.option else None
            _warn(st, pl, "UNKNOWN_OPTION", _unknown_option_words(prof, pl, written, kind))
            stopped = True
            continue
        st.uses.append(_use(prof, pl, entry, values, given, bool(off_rules),
                            stale=any(r.stale_old for r in off_rules)))
    for pl, why in dead:
        unused = [k for k in pl.settings if k in given and k not in live_keys and k != pl.aggregation.setting
                  and k not in [s for s, _ in pl.switch]]
        on = all(holds(c, values.get(k), values) for k, c in pl.switch)
        if unused and not on:
            said = ", ".join(_say(prof, k, values.get(k), kind) for k in unused)
            _warn(st, pl, "KL_SETTING_UNUSED",
                  Message("{settings} has no effect: {why}.", settings=said, why=why) if len(unused) == 1 else
                  Message("{settings} have no effect: {why}.", settings=said, why=why))
        if on and st.uses:
            _warn(st, pl, "KL_OFF", Message("{why}: it adds nothing.", why=_cap(why)))
    if not st.uses and not stopped:
        reasons = joined("; ", (why for _, why in dead))
        _warn(st, None, "KL_OFF",
              Message("No KL term: nothing ties the policy to the reference model ({reasons}). "
                      "That can be deliberate (recent GRPO recipes drop the KL), but then no approx_kl you log "
                      "is a penalty.", reasons=reasons))
    traps = [c for c in prof.cautions if c.said_in(prof.release) == "warning" and _all_read(c.when, given)
             and _trap_holds(prof, c, values, given)]
    if (trap := next((c.gradient for c in traps if c.gradient), None)) is not None:
        # the caution says why; the entry's own gradient words would contradict it
        st.uses = [dataclasses.replace(u, gradient_target=trap, gradient_target_off_policy=trap
                                       if u.gradient_target_off_policy is not None else None) for u in st.uses]
    for c in traps:
        if c.computes:
            # the trap runs other code than the entry shows (TRL's sequence-level weight): show that code
            code = (c.computes["library_formula"], c.computes["formula_latex"])
            st.uses = [dataclasses.replace(u, computes=code) if u.option == c.computes["option"] else u
                       for u in st.uses]
    for i, u in enumerate(st.uses):
        pl = _placement_of(prof, u)
        _use_warnings(st, pl, u, i, off_rules, trapped=trap is not None)
    if len(st.uses) > 1:
        wheres = [Message("{where} ({option}, coefficient {coef})", where=marked_message(_PLACES[u.where]), option=u.option,
                          coef=_fmt(u.coef)) for u in st.uses]
        wheres = Message("{a} and {b}", a=wheres[0], b=wheres[1]) if len(wheres) == 2 else joined(" and ", wheres)
        _warn(st, None, "KL_TWICE",
              Message("The config puts a KL term in the {wheres}: the policy pays the penalty twice, with two "
                      "coefficients and two gradients, and the two logged KLs measure different things.",
                      wheres=wheres))
    for c in traps:
        _warn(st, None, c.code, c.message, changes=((c.fix[0], _value_of(prof, c.fix[0], c.fix[1], values)),))
    for key, s in given.items():
        if not s.literal and (key in prof.relevant or key.startswith("**")):
            assumed = "" if key.startswith("**") else Message(
                "; the card assumes {setting}", setting=_say(prof, key, values.get(key), kind))
            why = s.origin or Message("it is computed, or set outside the config")
            _warn(st, None, "NOT_LITERAL",
                  Message("{key} is `{text}`, which the doctor cannot evaluate ({why}){assumed}. "
                          "Write the value itself to check it.", key=key, text=s.text, why=why, assumed=assumed))
    return st


#: Where a term acts and its off-policy gradient target, as words in a message.
_PLACES = {"reward": N_("reward"), "loss": N_("loss")}
# TRANSLATORS: the kind of an expected gradient, in "{name} has a {target} expected gradient instead of ∇KL[π_θ‖π_ref]"
_TARGETS = {"mixed": N_("mixed"), "zero": N_("zero"), "forward_kl": N_("forward_kl")}


def _rhs_words(prof: Profile, cond: str, values: dict[str, Any]) -> str:
    """`` < EXPR = value`` of a condition against other settings, the settings spelled as the release spells them."""
    m = re.match(r"^\s*(<=|>=|<|>)\s*(.+)$", cond)
    if not m or re.fullmatch(r"[-+0-9.eE]+", m.group(2).strip()):
        return ""
    expr = m.group(2).strip()
    for key in sorted(_expression_keys(expr), key=len, reverse=True):
        if key in prof.spelling:  # an older era's name for it (--rollout_batch_size under OpenRLHF 0.10.1)
            expr = re.sub(rf"(?<![\w.-]){re.escape(key)}(?![\w.-])", prof.spelling[key], expr)
    return f" {m.group(1)} {expr} = {_fmt(evaluate_expression(m.group(2), values))}"


def _placement_of(prof: Profile, u: KLUse) -> Placement:
    for pl in prof.placements:
        if u.entry in pl.entries and pl.acts_on == u.where and pl.coef == u.coef_setting:
            return pl
    raise AssertionError(f"no placement holds {u.entry.option}")  # unreachable: uses come from placements


def _warn(st: _State, pl: Placement | None, code: str, message: str, *, use: int | None = None,
          changes: tuple[tuple[str, Any], ...] = ()) -> None:
    st.warnings.append(DoctorWarning(code, message, None, changes, use))
    st.placements.append(pl)


def _stale_targets(e: CrosswalkEntry, stale: bool) -> tuple[str, str]:
    """:func:`gradient_targets`, where the tokens may come from weights older than π_old (``stale``): an
    importance weight π_θ/π_old does not reach them, so its off-policy gradient is neither KL's."""
    on_t, off_t = gradient_targets(e)
    return on_t, "mixed" if stale and "current" in e.kl_roles else off_t  # the entries weighted by π_θ/π_old


def _use(prof: Profile, pl: Placement, e: CrosswalkEntry, values: dict[str, Any],
         given: dict[str, RawSetting], off: bool, stale: bool = False) -> KLUse:
    on_t, off_t = _stale_targets(e, stale)
    adaptive = bool(pl.adaptive) and all(holds(c, values.get(k), values) for k, c in pl.adaptive)
    agg_value = values.get(pl.aggregation.setting) if pl.aggregation.setting else None
    alts = []
    for a in pl.entries:
        if not _selectable(prof, a):
            continue  # an option of a later release: the era cannot select it
        a_on, a_off = _stale_targets(a, stale)
        alts.append((a.option, a.estimator, a_on, a_off if off else None))
    written = values.get(pl.option) if pl.option else None
    coef = values.get(pl.coef)
    return KLUse(
        where=pl.acts_on,
        entry=e,
        setting=pl.option,
        written=None if written is None else str(written),
        coef=as_double(coef) if isinstance(coef, (int, float)) else None,
        coef_setting=pl.coef,
        controller="adaptive" if adaptive else "fixed",
        target_kl=as_double(values.get(pl.target)) if adaptive and pl.target else None,
        horizon=as_double(values.get(pl.horizon)) if adaptive and pl.horizon else None,
        gradient_target=on_t,
        gradient_target_off_policy=off_t if off else None,
        aggregation=pl.aggregation.mode(agg_value),
        aggregation_setting=pl.aggregation.setting,
        aggregation_value=agg_value,
        defaults_used=tuple(k for k in pl.settings if k not in given),
        alternatives=tuple(alts),
        clamp_from=prof.clamp_from.get((e.acts_on, e.option), ""),
    )


def lacking_settings(prof: Profile, entry: CrosswalkEntry) -> tuple[str, ...]:
    """The settings an entry's row depends on that the profile's release does not have.

    An older era lacks some of today's settings (:attr:`Profile.unavailable`, less
    those it derives from another one, :attr:`Profile.derived`): OpenRLHF's
    ``--algo.kl.unbiased_gradient`` before 0.10.2, TRL's ``use_bias_correction_kl``
    before 0.26.  Empty for the current release.

    Parameters
    ----------
    prof : Profile
    entry : CrosswalkEntry

    Returns
    -------
    tuple of str
        The settings, as the profile writes them (without its prefix).
    """
    keys = (_bare(prof, k) for k, _ in entry.config)
    return tuple(k for k in dict.fromkeys(keys) if k in prof.unavailable and k not in prof.derived)


def _selectable(prof: Profile, entry: CrosswalkEntry) -> bool:
    """Whether the release can select the entry's row: what it needs of a setting the release lacks is that
    setting's default there (``--algo.kl.unbiased_gradient`` not set, ``use_bias_correction_kl=False``)."""
    lacking = lacking_settings(prof, entry)
    if not lacking:
        return True
    defaults = {k: spec.default for k, spec in prof.keys.items()}
    return all(holds(c, defaults.get(_bare(prof, k)), defaults) for k, c in entry.config if _bare(prof, k) in lacking)


def _use_name(st: _State, pl: Placement, u: KLUse) -> str:
    """How messages name a KL term: its option, or its settings when the library has no option."""
    if pl.option:
        return Message("{written} {where}", written=u.written, where=_where_words(pl))
    lacking = set(lacking_settings(st.profile, u.entry))  # an older release's name for it leaves these out
    keys = [pl.coef] + [_bare(st.profile, k) for k, _ in u.entry.config
                        if _bare(st.profile, k) != pl.coef and _bare(st.profile, k) not in lacking]
    said = ", ".join(_say(st.profile, k, st.values.get(k), st.kind) for k in dict.fromkeys(keys))
    return Message("the KL {where} ({said})", where=_where_words(pl), said=said)


def _use_warnings(st: _State, pl: Placement, u: KLUse, i: int, off_rules: list[Any], trapped: bool = False) -> None:
    """The warnings of one KL term; ``trapped``: a caution of the profile sets its gradient and says why."""
    prof, e = st.profile, u.entry
    name = _use_name(st, pl, u)
    is_k = "" if u.written == e.estimator else f" ({e.estimator})"
    t = u.gradient_target
    if u.coef is not None and not math.isfinite(u.coef):
        _warn(st, pl, "NONFINITE_COEF", _nonfinite_words(prof, pl, u.coef, st.kind, computed=True,
                                                          written=st.values.get(pl.coef)), use=i)
    if t == "zero" and not trapped:
        _warn(st, pl, "ZERO_GRAD_LOSS" if u.where == "loss" else "ZERO_GRAD_REWARD",
              Message("{name}{is_k}: its expected gradient is zero, so on average it does not pull the policy "
                      "anywhere, whatever its coefficient, although its logged value looks like a KL. {expected}.",
                      name=_cap(name), is_k=is_k, expected=e.grad_expected),
              use=i)
    elif t == "forward_kl":
        _warn(st, pl, "FORWARD_KL_GRAD",
              Message("{name}{is_k}: its value estimates {direction}, but its expected gradient is "
                      "{expected}: it pushes π_θ to cover everything the reference covers instead of pulling it "
                      "back where it drifted.", name=_cap(name), is_k=is_k, direction=e.direction,
                      expected=e.grad_expected), use=i)
    elif t == "mixed" and not trapped:
        _warn(st, pl, "MIXED_GRAD",
              Message("{name}{is_k}: its expected gradient is neither KL's, but {expected}.",
                      name=_cap(name), is_k=is_k, expected=e.grad_expected), use=i)
    # a term a caution cuts from the gradient (OpenRLHF 0.6's packed KL loss) has none to bias
    if u.gradient_target_off_policy not in (None, "reverse_kl") and not (trapped and t == "zero"):
        why = joined("; ", st.off)
        target = u.gradient_target_off_policy
        target = marked_message(_TARGETS[target]) if target in _TARGETS else target
        if any(r.stale_old for r in off_rules) and "current" in u.entry.kl_roles:
            text = Message("Training is off-policy from the first optimizer step on each batch ({why}). The tokens "
                           "come from the generator's older weights, while π_old, the trainer's own log-probability "
                           "of them, is computed after those weights changed: the weight π_θ/π_old does not reach "
                           "the generator, and {name} has a {target} expected gradient instead of ∇KL[π_θ‖π_ref].",
                           why=why, name=name, target=target)
        elif st.every_step:
            text = Message("Training is off-policy from the first optimizer step on each batch ({why}). In every "
                           "step the tokens come from π_old, and {name} has a {target} expected gradient instead of "
                           "∇KL[π_θ‖π_ref].", why=why, name=name, target=target)
        else:
            text = Message("Training is off-policy after the first optimizer step on each batch ({why}). In those "
                           "steps the tokens come from π_old, and {name} has a {target} expected gradient instead of "
                           "∇KL[π_θ‖π_ref].", why=why, name=name, target=target)
        _warn(st, pl, "OFF_POLICY_UNCORRECTED", text, use=i)
    bite = clamp_bite(e)
    if bite is not None and e.grad_mode in ("autograd", "score", "score_current") and math.exp(bite) <= CLAMP_WARN_RATIO:
        _warn(st, pl, "CLAMP_HIDES_DRIFT", _clamp_words(prof, e, u.clamp_from), use=i)
    if u.coef is not None and math.isfinite(u.coef) and u.coef < 0:  # −inf: NONFINITE_COEF
        _warn(st, pl, "NEGATIVE_COEF",
              Message("{said} is negative: the term rewards moving away from the reference.",
                      said=_say(prof, pl.coef, u.coef, st.kind)), use=i)


# --------------------------------------------------------------------------- #
# Fixes, checked by diagnosing the changed config
# --------------------------------------------------------------------------- #
def _value_of(prof: Profile, key: str, text: str, values: dict[str, Any]) -> Any:
    """A condition-language value (``"set"``, ``"True"``, ``"k3+"``, ``"data.train_batch_size"``) as a setting's value."""
    spec = prof.keys.get(key)
    default = spec.default if spec is not None else None
    if text == "set":
        return True
    if text == "not set":
        return False if isinstance(default, bool) else None
    if text in ("True", "False"):
        return text == "True"
    parsed = doctor_parse.scalar(text)
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
        return parsed
    total = evaluate_expression(text, values)
    if total is not None and any(f.strip() in values for f in text.split("*")):
        return int(total) if float(total).is_integer() else total
    return text


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _spelling(e: CrosswalkEntry, written: str | None, accepted: tuple[str, ...] | None = None) -> str:
    """The entry's name closest to how the user spells options (``low_var_kl`` → ``low_var_kl+``), among the
    values the release accepts when it has a list."""
    names = [n for n in e.names if accepted is None or n in accepted] or list(e.names)
    if not written:
        return e.option if e.option in names else names[0]
    return max(names, key=lambda n: (_common(n, written), -len(n)))


def _selected_by(prof: Profile, pl: Placement, e: CrosswalkEntry, value: str, values: dict[str, Any]) -> bool:
    """Whether writing ``value`` in the placement's option setting is what the entry's row asks of that setting.

    OpenRLHF's ``k3+unbiased_gradient`` row asks ``--algo.kl.estimator k3`` and ``--algo.kl.unbiased_gradient``:
    ``--algo.kl.estimator k3+unbiased_gradient`` is no value of that flag.
    """
    for key, cond in e.config:
        if _bare(prof, key) == pl.option:
            return holds(cond, value, values, e.names if cond == e.option else ())
    return True


def _candidates(st: _State, w: DoctorWarning, pl: Placement | None) -> list[tuple[tuple[str, Any], ...]]:
    prof, values = st.profile, st.values
    out: list[tuple[tuple[str, Any], ...]] = []

    def val(key: str, text: str) -> Any:
        return _value_of(prof, key, text, values)

    if w.code in _GRAD_CODES and pl is not None and w.kl_use is not None:
        u = st.uses[w.kl_use]
        for key, text in pl.toggles:
            out.append(((key, val(key, text)),))
        if pl.option:
            same = [e for e in pl.entries if e.estimator == u.estimator and e is not u.entry]
            rest = [e for e in pl.entries if e.estimator != u.estimator]
            accepted = prof.accepted(pl.option)
            for e in same + rest:
                spelled = _spelling(e, u.written, accepted)
                if accepted is not None and spelled not in accepted:
                    continue  # not a value of this release (verl's 'k3+' before 0.6)
                if _selected_by(prof, pl, e, spelled, values):  # not a row that needs another setting too
                    out.append(((pl.option, spelled),))
        rules = [r for r in prof.off_policy if r.holds(values)]
        if rules:
            out.append(tuple((r.fix[0], val(r.fix[0], r.fix[1])) for r in rules))
    elif w.code == "KL_OFF":
        # Placements the config already switched on, or wrote settings for, first: that is the KL it meant.
        def meant(p: Placement) -> tuple[bool, bool]:
            on = all(holds(c, values.get(k), values) for k, c in p.switch)
            return (not on, not any(k in st.given for k in p.settings))

        for p in ([pl] if pl is not None else sorted(prof.placements, key=meant)):
            changes = [(k, val(k, t)) for k, t in p.enable]
            default = prof.default(p.coef)
            if p.coef not in [k for k, _ in changes] and not holds(p.coef_on, values.get(p.coef), values) \
                    and holds(p.coef_on, default, values):
                changes.append((p.coef, default))
            out.append(tuple(changes))
    elif w.code == "KL_SETTING_UNUSED" and pl is not None:
        out.append(tuple((k, val(k, c)) for k, c in pl.switch))
    elif w.code == "KL_TWICE":
        order = sorted(st.uses, key=lambda u: (u.gradient_target == "reverse_kl", u.where != "reward"))
        for u in order:
            p = _placement_of(prof, u)
            flipped = tuple((k, val(k, {"True": "False", "set": "not set"}.get(c, c))) for k, c in p.switch)
            if flipped:
                out.append(flipped)
    elif w.code == "UNKNOWN_OPTION" and pl is not None and pl.option:
        written = str(values.get(pl.option))
        names = list(option_values(prof, pl))
        for n in difflib.get_close_matches(written, names, n=3, cutoff=0.3):
            out.append(((pl.option, n),))
    elif w.code == "NEGATIVE_COEF" and pl is not None:
        out.append(((pl.coef, abs(values[pl.coef])),))
    elif w.code == "NONFINITE_COEF" and pl is not None:
        # a finite coefficient that keeps the term on: the release default, else the one that turns it on
        enable = [(k, val(k, t)) for k, t in pl.enable]
        for v in (prof.default(pl.coef), dict(enable).get(pl.coef)):
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
                    and holds(pl.coef_on, v, values):
                out.append(((pl.coef, v),))
        if w.kl_use is None:  # no KL term is computed: the settings that turn it on with a reverse-KL gradient
            out.append(tuple(enable))
    elif w.changes:
        out.append(w.changes)
    return out


#: Why the doctor rejected a change it tried (:attr:`DoctorWarning.tried`).
REJECTIONS: dict[str, str] = {
    "stays": "the warning is still there",
    "raises": "the warning is gone, but the change raises warnings the config did not have",
    "no_term": "the warning is gone, but no KL term acts where it did",
    "no_reverse_kl": "the warning is gone, but no KL term with the reverse-KL gradient is switched on",
}


def _rejection(before: _State, after: _State, w: DoctorWarning,
               pl: Placement | None) -> tuple[str, tuple[str, ...]] | None:
    """Why a changed config does not fix ``w`` (a key of :data:`REJECTIONS`, and the new warning codes), or None."""
    new = tuple(dict.fromkeys(x.code for x in after.warnings if x.code not in {y.code for y in before.warnings}))
    here = [u for u in after.uses if pl is None or _placement_of(after.profile, u) is pl]
    if any(x.code == w.code and p is pl for x, p in zip(after.warnings, after.placements, strict=True)):
        return "stays", ()
    if w.code == "KL_SETTING_UNUSED" and "KL_TWICE" in new:
        return "raises", ("KL_TWICE",)  # a second KL term beside the one the config has: not what an unused setting asks
    if w.code in ("KL_SETTING_UNUSED", "UNKNOWN_OPTION"):
        return None if here else ("no_term", ())  # the term now exists; what it does is the next diagnosis's business
    if w.code == "KL_OFF" or (w.code == "NONFINITE_COEF" and w.kl_use is None):
        # Turning a KL term on may expose the config's off-policy steps: that has its own warning and fix.
        raised = tuple(c for c in new if c != "OFF_POLICY_UNCORRECTED")
        if raised:
            return "raises", raised
        return None if any(u.gradient_target == "reverse_kl" for u in here) else ("no_reverse_kl", ())
    if new:
        return "raises", new
    return ("no_term", ()) if w.code in _GRAD_CODES and not here else None


def _with_fixes(st: _State) -> list[DoctorWarning]:
    out = []
    for w, pl in zip(st.warnings, st.placements, strict=True):
        found: tuple[tuple[str, Any], ...] = ()
        tried: list[tuple[str, str, tuple[str, ...]]] = []
        needs: list[str] = []
        for candidate in _candidates(st, w, pl):
            changes = tuple((k, v) for k, v in candidate if not _same(st.values.get(k), v))
            missing = [k for k, _ in changes if k in st.profile.unavailable]
            if missing:  # a setting the era did not have: try the rest alone (TRL 0.18's beta without
                needs += [st.profile.spelled(k) for k in missing]  # use_bias_correction_kl)
                changes = tuple((k, v) for k, v in changes if k not in st.profile.unavailable)
            if not changes or render_changes(st.profile, st.kind, changes) in [t[0] for t in tried]:
                continue  # nothing to change, or already tried
            values = {**st.values, **dict(changes)}
            if st.era is not None:  # TinyZero's use_kl_loss=False puts the KL back in the reward
                derive(st.era, values, st.given)
            given = {**st.given, **{k: RawSetting(k, v, str(v)) for k, v in changes}}
            rejected = _rejection(st, _analyse(st.profile, values, given, st.kind), w, pl)
            if rejected is None:
                found = changes
                break
            tried.append((render_changes(st.profile, st.kind, changes), *rejected))
        if found:
            out.append(DoctorWarning(w.code, w.message, render_changes(st.profile, st.kind, found), found, w.kl_use))
        else:
            out.append(DoctorWarning(w.code, w.message, None, (), w.kl_use, tuple(dict.fromkeys(tried)),
                                     tuple(dict.fromkeys(needs))))
    return out


def _same(a: Any, b: Any) -> bool:
    """Whether a change would leave a setting as it is (1 == 1.0, "True" == True)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return str(a).lower() == str(b).lower()
    x, y = as_double(a), as_double(b)
    return x == y if x is not None and y is not None else a == b


def render_changes(prof: Profile, kind: str, changes: tuple[tuple[str, Any], ...]) -> str:
    """Settings written as the input writes them.

    Parameters
    ----------
    prof : Profile
        The trainer (its :attr:`Profile.syntax`).
    kind : str
        The input's form (``"command"``, ``"yaml"``, ``"json"``, ``"python"``),
        which decides how a TRL setting is written.
    changes : tuple of (str, Any)
        ``(setting, value)`` pairs.

    Returns
    -------
    str
        ``key=value`` (Hydra), ``--flag value`` / ``--flag`` / ``remove --flag``
        (argparse), or ``key: value`` / ``"key": value`` / ``key=value`` /
        ``--key value`` for TRL's YAML, JSON, Python and command line.
    """
    parts = []
    for today, value in changes:
        key = prof.spelled(today)  # an older era's name for it (TRL 0.10.1–0.21.0's kl_coef for beta)
        if prof.syntax == "hydra":
            parts.append(f"{key}={_hydra(value)}")
        elif prof.syntax == "argparse":
            action = prof.keys[today].action if today in prof.keys else None
            flag = key
            if today in prof.switches:  # an older era's switch: its flag, or removing it for the default
                switch = prof.written(today, value)
                parts.append(switch if not switch.endswith(" not set") else f"remove {prof.switches[today][0]}")
            elif action == "store_true" and isinstance(value, bool):
                parts.append(flag if value else f"remove {flag}")
            elif value is None:
                parts.append(f"remove {flag}")
            else:
                parts.append(f"{flag} {_hydra(value)}")
        elif kind == "yaml":
            parts.append(f"{key}: {_yaml(value)}")
        elif kind == "json":
            parts.append(f'"{key}": {json.dumps(value)}')  # NaN, Infinity: what Python's json (TRL's reader) takes
        elif kind == "python":
            parts.append(f"{key}={_python(value)}")
        elif value is None:  # TRL's command line has no spelling of None: leave the flag out
            parts.append(f"remove --{key}")
        else:
            parts.append(f"--{key} {_hydra(value)}")
    sep = "\n" if kind == "yaml" and prof.syntax == "dataclass" else (", " if kind in ("json", "python") and prof.syntax == "dataclass" else " ")
    return sep.join(parts)


def flag_left_off(prof: Profile, key: str, value: Any) -> str | None:
    """The flag, where ``key`` is an argparse ``store_true`` flag that ``value`` leaves off; else None.

    A setting in effect, not a change: the card says "without --use_dynamic_batch" where
    :func:`render_changes` would write the change "remove --use_dynamic_batch".

    Parameters
    ----------
    prof : Profile
        The profile (its syntax and key list decide).
    key : str
        A setting of ``prof``.
    value : Any
        Its value in the run.

    Returns
    -------
    str or None
        The flag as the release spells it, or None.
    """
    spec = prof.keys.get(key)
    if prof.syntax == "argparse" and spec is not None and spec.action == "store_true" and value is False:
        return prof.spelled(key)
    return None


def _yaml(value: Any) -> str:
    """A value as YAML writes it (a number that is not finite as ``.nan``, ``.inf``, ``-.inf``)."""
    if isinstance(value, str):
        return value
    if _nonfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    return json.dumps(value)


def _python(value: Any) -> str:
    """A value as Python source writes it (a number that is not finite as ``float('nan')``, ``float('inf')``)."""
    return f"float({str(value)!r})" if _nonfinite(value) else repr(value)


def _hydra(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return f"{value:g}" if value == value else "nan"
    return str(value)


# --------------------------------------------------------------------------- #
# Entry point
# --------------------------------------------------------------------------- #
def diagnose(data: bytes | str, library: str | None = None, *, filename: str | None = None,
             release: str | None = None) -> Diagnosis:
    """Read a training config and say what its KL terms are, estimate and do to the gradient.

    Parameters
    ----------
    data : bytes or str
        A launch script or command, a YAML or JSON config, or Python source
        (at most :data:`kl_core.doctor.parse.MAX_BYTES`).
    library : str, optional
        ``"verl"``, ``"openrlhf"`` or ``"trl"`` (any case); detected from the
        text when omitted.
    filename : str, optional
        The file's name, a hint for TRL's GRPO vs RLOO.
    release : str, optional
        The release to describe: ``"latest"`` or an era id or label of
        :mod:`kl_core.doctor.releases` (``"openrlhf-0.6.0"``, ``"openrlhf-0.10.1"``, ``"openrlhf-0.11.1"``,
        ``"verl-0.3"``, ``"trl-grpo-0.16"``, ``"trl-grpo-0.18"``, ``"trl-grpo-0.25"``, ``"trl-grpo-1.9"``).  Inferred from the settings the text uses when
        omitted (:func:`kl_core.doctor.releases.infer`).

    Returns
    -------
    Diagnosis

    Raises
    ------
    UnreadableInput
        If the input is too large, binary, not valid YAML/JSON/Python, uses a
        YAML tag, or belongs to no library the doctor knows (one sentence).
    ValueError
        If ``library`` is not one of the three, or ``release`` is not a release of its trainer.

    Examples
    --------
    >>> d = diagnose("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_kl_loss=True")
    >>> d.kl_uses[0].option, d.kl_uses[0].gradient_target, d.codes[0]
    ('low_var_kl', 'forward_kl', 'FORWARD_KL_GRAD')
    """
    lib = _canonical_library(library)
    try:
        text = doctor_parse.decode(data)
        parsed = doctor_parse.read(text, _names(lib))
        if parsed.kind == "command" and not parsed.names:
            own = _refuse_uncovered(text)
            if own is not None:  # a user script's command line: TRL's settings
                parsed, lib = own, lib or "TRL"
                filename = own.command
        prof = _choose(parsed, lib, text, filename)
        raw, notes = _settings_for(parsed, prof)
        _refuse_unread_fork(prof, raw)
    except UnreadableInput as exc:
        if filename:  # say which file: the app shows exc.user
            exc.worded("“{file}”: {why}", file=os.path.basename(filename), why=exc.message)
        raise
    inf = infer(prof, [(s.op + s.key, s.text) for s in raw], release)
    main = _under(prof, inf.era, parsed, raw, notes)
    also: list[OtherRelease] = []
    if inf.era is not None:
        now = _under(prof, None, parsed, raw, notes)
        also.append(dataclasses.replace(_other(now), aggregated=_aggregations(now) != _aggregations(main)))
    if inf.era is not None or not inf.decided:  # the other eras the settings allow, where they differ
        for e in inf.candidates:
            other = _under(prof, e, parsed, raw, notes)
            lacks, refuses = _fixes_lacking(main, other)
            aggregated = _aggregations(other) != _aggregations(main)
            stops = set(other.rejected) - set(main.rejected)  # the run stops there, not here
            if _kl_facts(other) != _kl_facts(main) or lacks or refuses or aggregated or stops:
                also.append(dataclasses.replace(_other(other), lacks=lacks, refuses=refuses, aggregated=aggregated,
                                                fixes_there=_fixes_there(main, other, lacks, refuses)))
    if not inf.decided and not also and inf.candidates:
        named = ", ".join(f"{prof.library} {e.label}" for e in inf.candidates)
        inf = dataclasses.replace(inf, why=Message(
            "nothing in the text says which release it was written for; {eras} gives the same KL terms", eras=named)
            if len(inf.candidates) == 1 else Message(
            "nothing in the text says which release it was written for; {eras} give the same KL terms", eras=named))
    # what changed since the oldest era on the card (the one read, or another shown), release by release: each
    # era's text says what its next release changed
    shown = {o.release for o in also}
    trainer_eras = _eras_of(prof)
    oldest = next((i for i, e in enumerate(trainer_eras)
                   if e is inf.era or f"{prof.library} {e.label}" in shown), len(trainer_eras))
    changed: str = inf.era.changed if inf.era is not None and inf.era.fork else ""  # a fork: how it differs
    for e in () if inf.era is not None and inf.era.fork else trainer_eras[oldest:]:
        if e.fork:
            continue  # a project's own copy: no release's history passes through it
        if e.changed:
            changed = Message("{earlier}. {later}", earlier=changed, later=e.changed) if changed else e.changed
    era_notes = [inf.era.note] if inf.era is not None and inf.era.note else []
    if inf.era is not None and inf.era.code_note and main.kl_uses:  # no KL term: no code to speak of
        era_notes.append(inf.era.code_note)
    return dataclasses.replace(main, release_why=inf.why, also=tuple(also), changed=changed,
                               notes=tuple(dict.fromkeys([*main.notes, *era_notes])))


def no_fix_words(d: Diagnosis, w: DoctorWarning) -> str:
    """Why a warning has no fix (for the CLI card): the changes tried and why each was rejected, and the settings
    the release lacks.

    Parameters
    ----------
    d : Diagnosis
    w : DoctorWarning
        One of ``d.warnings``, with ``fix`` None.

    Returns
    -------
    str
        One or two sentences, e.g. "Tried `beta: 0.001`: the warning is gone, but the change raises warnings the
        config did not have (FORWARD_KL_GRAD). TRL 0.17.0–0.18.2 does not have use_bias_correction_kl, so no change
        set it."
    """
    if w.code == "NOT_LITERAL":
        return "Write the value itself where the config sets it, and the doctor can check it."
    if w.code == "LEGACY_TRAINER":
        return f"Move to a trainer {d.library} still ships; the card above describes the old one."
    parts = []
    for change, why, raised in w.tried:
        said = REJECTIONS[why] + (f" ({', '.join(raised)})" if raised else "")
        parts.append(f"Tried `{' '.join(change.split())}`: {said}.")
    if w.needs:
        parts.append(f"{d.library} {d.release} does not have {', '.join(w.needs)}, so no change set "
                     f"{'it' if len(w.needs) == 1 else 'them'}.")
    return " ".join(parts) or f"No change to try in {d.library} {d.release}."


def other_release_words(o: OtherRelease) -> str:
    """One sentence on what another release makes of the script (for the card and the app).

    Parameters
    ----------
    o : OtherRelease

    Returns
    -------
    str
        A :class:`~kl_core.validation.Message`.
    """
    terms = [Message("{est} in the {where}, coefficient {coef}, gradient {grad}", est=u.estimator,
                     where=Message("reward") if u.where == "reward" else Message("loss"),
                     coef="?" if u.coef is None else _fmt(u.coef), grad=u.gradient_target)
             for u in o.kl_uses]
    if o.aggregated:  # the same terms, reduced otherwise: say how
        terms = [Message("{term}, aggregated as {how}", term=t, how=u.aggregation.name) if u.aggregation else t
                 for t, u in zip(terms, o.kl_uses, strict=True)]
    kl = joined("; ", terms) if terms else Message("no KL term")
    shown = ", ".join(o.fails[:4]) + (f" (+{len(o.fails) - 4})" if len(o.fails) > 4 else "")
    if o.stops and o.fails and len(o.fails) == 1:
        return Message("Under {release} the run stops before training: {release} does not accept {keys}. "
                       "With that setting removed, the run would still stop: {why}", release=o.release, keys=shown,
                       why=joined(" ", o.stops))
    if o.stops and o.fails:
        return Message("Under {release} the run stops before training: {release} does not accept {keys}. "
                       "With those settings removed, the run would still stop: {why}", release=o.release, keys=shown, why=joined(" ", o.stops))
    if o.stops:
        return Message("Under {release} the run stops: {why}", release=o.release, why=joined(" ", o.stops))
    if o.fails and len(o.fails) == 1:
        words = Message("Under {release} the run stops before training: {release} does not accept {keys}. "
                        "With that setting removed, the KL would be: {kl}.", release=o.release, keys=shown, kl=kl)
    elif o.fails:
        words = Message("Under {release} the run stops before training: {release} does not accept {keys}. "
                        "With those settings removed, the KL would be: {kl}.", release=o.release, keys=shown, kl=kl)
    else:
        words = Message("Under {release} the KL is: {kl}.", release=o.release, kl=kl)
    more = [Message("{release} does not have {keys}, which this card's fixes write.", release=o.release,
                    keys=", ".join(o.lacks))] if o.lacks else []
    more += [Message("{release} does not accept {value} in {key}, which this card's fixes write.", release=o.release,
                     value=v, key=k) for k, v in o.refuses]
    more += [Message("There the doctor's fix for {codes} is {fix}.", codes=joined(", ", codes), fix=fix)
             for fix, codes in o.fixes_there]
    return joined(" ", [words, *more]) if more else words


def _kl_facts(d: Diagnosis) -> tuple[tuple[Any, ...], ...]:
    return tuple((u.where, u.estimator, u.coef, u.gradient_target) for u in d.kl_uses)


def _aggregations(d: Diagnosis) -> tuple[str | None, ...]:
    """How each term reduces its per-token KL, by the mode's name (None where the card cannot say)."""
    return tuple(None if u.aggregation is None else str(u.aggregation.name) for u in d.kl_uses)


def _fixes_lacking(main: Diagnosis, other: Diagnosis) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """What ``main``'s fixes write that ``other``'s release lacks: settings it does not have, values it refuses."""
    written = dict.fromkeys((k, str(v)) for w in main.warnings for k, v in w.changes)
    prof = other.profile
    lacks = tuple(dict.fromkeys(k for k, _ in written if k in prof.unavailable))
    refuses = tuple((k, v) for k, v in written if k not in prof.unavailable and k in prof.keys
                    and (allowed := prof.accepted(k)) is not None and v not in allowed)
    return lacks, refuses


def _fixes_there(main: Diagnosis, other: Diagnosis, lacks: tuple[str, ...],
                 refuses: tuple[tuple[str, str], ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``other``'s own fixes for the warnings whose fix on ``main``'s card it cannot take, with their codes."""
    blocked = set(lacks) | {k for k, _ in refuses}
    codes = {w.code for w in main.warnings if any(k in blocked for k, _ in w.changes)}
    by_fix: dict[str, list[str]] = {}
    for w in other.warnings:
        if w.code in codes and w.fix:
            by_fix.setdefault(w.fix, []).append(w.code)
    return tuple((fix, tuple(found)) for fix, found in by_fix.items())


def _other(d: Diagnosis) -> OtherRelease:
    fails = d.rejected  # an older release's names first (_under)
    era = next((e for e in _eras_of(d.profile) if e.label == d.profile.release), None)
    stops = tuple(w.message for w in d.warnings if w.code == "UNKNOWN_OPTION")
    return OtherRelease(release=f"{d.library} {d.release}", kl_uses=d.kl_uses, fails=fails,
                        changed=era.changed if era is not None else "", diagnosis=d, stops=stops)


# --------------------------------------------------------------------------- #
# Settings the release refuses at startup: the run stops before training
# --------------------------------------------------------------------------- #
_NAME = re.compile(r"[A-Za-z_]\w*")  # a config field's name (not what is left of a short flag such as -q)

#: verl's main_ppo configs a command may name with ``--config-name`` (verl/trainer/config/*.yaml, 0.2 to 0.9.1):
#: the doctor's keys are theirs.  Any other config, or a ``--config-path``/``--config-dir``, may have other keys.
_STOCK_HYDRA_CONFIGS = frozenset({"ppo_trainer", "ppo_megatron_trainer"})
#: ``--config-path`` values that name verl's own config folder: Hydra reads a relative path from the folder of the
#: script declaring ``@hydra.main`` (hydra-core 1.3.8 hydra/_internal/utils.py lines 321-337 pass --config-path to
#: compute_search_path_dir, lines 118-137, which joins it to the calling file's folder), and
#: verl/trainer/main_ppo.py declares ``config_path="config"`` (verl's examples pass ``--config-path=config``).
_STOCK_CONFIG_PATHS = frozenset({"config", "./config"})

#: The flags of ``accelerate launch`` (accelerate 1.16.0 accelerate/commands/launch.py launch_command_parser, with
#: their ``-`` spellings, accelerate/commands/utils.py _StoreAction), and TRL's own ``--accelerate_config``
#: (trl 1.16.0 trl/cli/accelerate_config.py).  ``trl grpo`` hands every flag its configs do not have to
#: ``accelerate launch`` (trl/cli/commands/training.py lines 61-64), which takes these and exits on any other.
_ACCELERATE_FLAGS = frozenset((
    "accelerate_config config_file quiet cpu multi_gpu tpu mixed_precision num_processes num_machines "
    "num_cpu_threads_per_process enable_cpu_affinity dynamo_backend dynamo_mode dynamo_use_fullgraph "
    "dynamo_use_dynamic dynamo_use_regional_compilation use_deepspeed use_fsdp use_parallelism_config "
    "use_megatron_lm gpu_ids same_network machine_rank main_process_ip main_process_port tee log_dir role "
    "rdzv_backend rdzv_conf max_restarts monitor_interval module no_python tpu_cluster no_tpu_cluster "
    "tpu_use_sudo vm env main_training_function downcast_bf16 deepspeed_config_file zero_stage "
    "offload_optimizer_device offload_param_device offload_optimizer_nvme_path offload_param_nvme_path "
    "gradient_accumulation_steps gradient_clipping zero3_init_flag zero3_save_16bit_model deepspeed_hostfile "
    "deepspeed_exclusion_filter deepspeed_inclusion_filter deepspeed_multinode_launcher "
    "deepspeed_moe_layer_cls_names fsdp_version fsdp_offload_params fsdp_min_num_params fsdp_sharding_strategy "
    "fsdp_reshard_after_forward fsdp_auto_wrap_policy fsdp_transformer_layer_cls_to_wrap fsdp_backward_prefetch "
    "fsdp_state_dict_type fsdp_forward_prefetch fsdp_use_orig_params fsdp_cpu_ram_efficient_loading "
    "fsdp_sync_module_states fsdp_activation_checkpointing fsdp_activation_checkpointing_offload "
    "megatron_lm_tp_degree megatron_lm_use_custom_fsdp megatron_lm_no_load_optim megatron_lm_eod_mask_loss "
    "megatron_lm_overlap_cpu_optimizer_d2h_h2d megatron_lm_no_save_optim megatron_lm_optimizer_cpu_offload "
    "megatron_lm_use_precision_aware_optimizer megatron_lm_decoder_last_pipeline_num_layers megatron_lm_pp_degree "
    "megatron_lm_num_micro_batches megatron_lm_sequence_parallelism megatron_lm_recompute_activations "
    "megatron_lm_use_distributed_optimizer megatron_lm_gradient_clipping megatron_lm_recompute_granularity "
    "megatron_lm_recompute_method megatron_lm_recompute_num_layers megatron_lm_attention_backend "
    "megatron_lm_expert_model_parallel_size megatron_lm_context_parallel_size megatron_lm_attention_dropout "
    "megatron_lm_hidden_dropout megatron_lm_attention_softmax_in_fp32 megatron_lm_expert_tensor_parallel_size "
    "megatron_lm_calculate_per_token_loss megatron_lm_use_rotary_position_embeddings fp8_backend "
    "fp8_use_autocast_during_eval fp8_margin fp8_interval fp8_format fp8_amax_history_len fp8_amax_compute_algo "
    "fp8_override_linear_precision fp8_enable_fsdp_float8_all_gather fp8_pad_inner_dim aws_access_key_id "
    "aws_secret_access_key debug mpirun_hostfile parallelism_config_dp_replicate_size "
    "parallelism_config_dp_shard_size parallelism_config_tp_size parallelism_config_cp_size "
    "parallelism_config_cp_backend parallelism_config_cp_comm_strategy parallelism_config_sp_size "
    "parallelism_config_sp_backend parallelism_config_sp_seq_length parallelism_config_sp_seq_length_is_variable "
    "parallelism_config_sp_attn_implementation"
).split())

#: Why a release refuses a setting, by how the input is read: one clause each (``{call}``, ``{script}``: the
#: config class or script).  Each is what the library's own code does, cited where :func:`_rejected` decides.
_REFUSALS = {
    "argparse": N_("its argument parser exits with “unrecognized arguments”"),
    "hydra_key": N_("Hydra refuses an override of a key its config does not have (“Could not override …”)"),
    "hydra_delete": N_("Hydra refuses ~key for a key its config does not have (“Could not delete from config”)"),
    "hydra_flag": N_("Hydra's argument parser, which reads the command line before any override, has no such "
                     "flag and exits with “unrecognized arguments”"),
    "hydra_parse": N_("Hydra's override grammar reads only key=value, +key=value and ~key, and raises "
                      "OverrideParseException on any other word"),
    "hydra_space": N_("a backslash followed by a space passes a lone space, on which Hydra's override grammar "
                      "raises OverrideParseException (where a comment follows, the command also ends there, and the "
                      "settings on the lines after it never reach the trainer)"),
    "hydra_append": N_("Hydra's + adds a key, and refuses one the config already sets (“Could not append to "
                       "config. An item is already at …”); key=value overrides it"),
    "dataclass": N_("{call}(...) is a dataclass, and Python raises TypeError for a keyword argument it does not "
                    "declare"),
    "trl_cli": N_("the trl command hands flags its configs do not have to accelerate launch, whose argument "
                  "parser exits with “unrecognized arguments”"),
    "not_a_number": N_("the setting is a number, and the library's config reader stops on text that is not one"),
    "agg_mode": N_("a start-up check compares it with the modes the release defines and stops the run on any other "
                   "(“Invalid loss_agg_mode”)"),
    "argparse_float": N_("its argument parser reads the setting with type=float and exits on text that is not a "
                         "number (“invalid float value”)"),
    "coef_not_number": N_("the coefficient multiplies the KL, and Python raises TypeError on a value that is not a "
                          "number at the first update, before any step of training"),
    "trl_script": N_("{script} reads its command line with HfArgumentParser, which raises ValueError (“Some "
                     "specified arguments are not used by the HfArgumentParser”)"),
}


@dataclass(frozen=True)
class _Rejected:
    """One setting the release refuses: as written, why (a key of :data:`_REFUSALS`), and the fix."""

    setting: RawSetting
    why: str
    shown_key: str  # the key as written, with Hydra's + or ~
    written: str  # the whole setting as written
    suggestion: str | None
    fix: str
    change: tuple[str, Any] | None  # the fix as (setting, value); None for a removal


def _stock_config(parsed: ParsedInput) -> bool:
    """Whether a Hydra command composes one of verl's own configs (no ``--config-dir``, no ``--config-path`` but
    :data:`_STOCK_CONFIG_PATHS`, no ``--config-name`` but :data:`_STOCK_HYDRA_CONFIGS`): only then are the
    doctor's keys its keys."""
    words = parsed.arguments
    for k, w in enumerate(words):
        if not w.text.startswith("-"):
            continue
        flag, _, inline = w.text.partition("=")
        action = doctor_parse.hydra_flag(flag)
        names = set(action.option_strings) if action is not None else set()
        value = w if "=" in w.text else (words[k + 1] if k + 1 < len(words) else None)
        text = inline if "=" in w.text else (value.text if value is not None else "")
        if "--config-dir" in names:
            return False
        if "--config-path" in names and (value is None or not value.literal or text.strip("'\"").rstrip("/")
                                         not in _STOCK_CONFIG_PATHS):
            return False
        if "--config-name" in names:
            if value is None or not value.literal or text.removesuffix(".yaml") not in _STOCK_HYDRA_CONFIGS:
                return False
    return True


def _set_in_config(p: Profile, key: str) -> bool:
    """Whether the release's config gives ``key`` a value that is not None (following ``${other.key}``
    references); False where that is not certain (a resolver, a relative reference, ``???``)."""
    default: Any = p.keys[key].default if key in p.keys and p.keys[key].default_text is None else None
    for _ in range(len(p.keys)):
        if not (isinstance(default, str) and "${" in default):
            break
        got = _interpolation(default.strip())
        if got is None or got[0] != "ref" or got[1] not in p.keys or p.keys[got[1]].default_text is not None:
            return False
        default = p.keys[got[1]].default
    return default is not None and default != "???" and not (isinstance(default, str) and "${" in default)


def _append_refused(p: Profile, s: RawSetting) -> bool:
    """Whether Hydra refuses ``+key=value``: hydra-core 1.3.2 hydra/_internal/config_loader_impl.py lines
    371-384 add the key only when ``OmegaConf.select(cfg, key, throw_on_missing=False)`` is None (no such
    key, a null, ``???``, or a reference to one) or the value is a dict or a list, and raise "Could not append
    to config. An item is already at …" otherwise.

    Only for the settings the card depends on (:attr:`Profile.relevant`): they are in every one of verl's
    generated configs (the doctor's keys merge verl 0.9.1's four, and an engine's own keys, such as
    ``critic.megatron.*``, are in one only), so whether the run's config sets them is certain.
    """
    text = s.text.strip()
    return (s.key in p.relevant and s.key not in p.unavailable and s.key not in p.derived
            and not isinstance(s.value, (dict, list)) and not text.startswith(("{", "["))
            and _set_in_config(p, s.key))


def _bare_flag(s: RawSetting, flag: str) -> bool:
    """Whether a flag was given without a value (``--flag``)."""
    return s.value is True and s.text == flag


def _rejected(p: Profile, era: Era | None, parsed: ParsedInput,
              unknown: dict[str, tuple[RawSetting, str | None]], appended: list[RawSetting],
              not_numbers: list[tuple[RawSetting, str]]) -> list[_Rejected]:
    """The settings the release refuses at startup, where the input's syntax makes that certain.

    * argparse (OpenRLHF): every flag the release does not have; ``parse_args()`` exits with "unrecognized
      arguments" (OpenRLHF 0.11.2 openrlhf/cli/train_ppo_ray.py line 627; v0.5.9 to v0.10.1 alike).
    * Hydra (verl), a command composing one of verl's own configs (:func:`_stock_config`): Hydra makes the
      config strict (hydra-core 1.3.2 hydra/_internal/config_loader_impl.py line 270) before the overrides,
      so ``key=value`` on a key it does not have raises "Could not override" (lines 386-393) and ``~key``
      "Could not delete" (lines 348-353); ``+key``/``++key`` add keys and are fine.  A word that is not a flag of
      Hydra's parser (:func:`kl_core.doctor.parse.hydra_flag`) makes ``parse_args()`` exit (hydra/main.py line
      86).  ``+key=value`` on a key the config sets: :func:`_append_refused`.
    * A Python ``GRPOConfig(...)`` call: a dataclass's ``__init__`` raises TypeError on a keyword it does not
      declare.
    * A TRL 1.16.0 command: ``trl grpo`` passes the flags its configs do not have (TrlParser
      parse_args_and_config with return_remaining_strings=True, trl/cli/commands/training.py lines 61-64) to
      ``accelerate launch``, whose parser exits on any that is not its own (trl/cli/accelerate_launcher.py line
      46; :data:`_ACCELERATE_FLAGS`); ``trl/scripts/grpo.py`` calls parse_args_and_config (line 181), whose
      HfArgumentParser.parse_args_into_dataclasses raises ValueError on any left over (transformers
      hf_argparser.py, "Some specified arguments are not used by the HfArgumentParser").  Under an older era,
      only a script of :attr:`Era.strict_scripts` and a setting the era certainly lacks (today's own config
      setting its config class does not list); not ``trl grpo`` then, nor a YAML (:func:`_trl_yaml_note`) or a
      script of the user's own, whose fate depends on how it is read.
    * A YAML or JSON file's text for a float setting that ``float()`` refuses (:func:`_numbers_read`).
    """
    out: list[_Rejected] = []
    command = parsed.kind == "command"
    entry = parsed.names[0] if parsed.names else ""
    strict_hydra = p.syntax == "hydra" and command and _stock_config(parsed)
    for key, (s, suggestion) in unknown.items():
        if p.syntax == "argparse" and command:
            why = "argparse"
        elif p.syntax == "hydra" and command and key.startswith("-"):
            why = "hydra_flag"
        elif strict_hydra and s.op in ("", "~"):
            why = "hydra_key" if s.op == "" else "hydra_delete"
        elif p.syntax == "dataclass" and parsed.kind == "python" and not key.startswith("**"):
            why = "dataclass"
        elif p.syntax == "dataclass" and command and era is None and _NAME.fullmatch(key) \
                and entry.startswith("trl ") and key not in _ACCELERATE_FLAGS:
            why = "trl_cli"
        elif p.syntax == "dataclass" and command and _NAME.fullmatch(key) and entry.startswith("trl/scripts/") \
                and (era is None or (entry in era.strict_scripts and key in p.unavailable
                                     and key not in era.script_keys)):
            why = "trl_script"
        else:
            continue
        out.append(_refused(p, parsed.kind, s, why, suggestion))
    out += [_refused(p, parsed.kind, s, "hydra_append", None) for s in appended]
    out += [_refused(p, parsed.kind, s, why, None) for s, why in not_numbers]
    if p.syntax == "hydra" and command:
        unreadable: list[str] = []
        doctor_parse.parse_overrides(parsed.arguments, unreadable)
        for text in dict.fromkeys(unreadable):
            written = shlex.quote(text)  # a lone space shows as ' '
            space = not text.strip()
            fix = ("end the line with its backslash (a comment goes on a line of its own)" if space  # i18n: ok (fix)
                   else f"remove {written}")
            out.append(_Rejected(RawSetting(text, None, text), "hydra_space" if space else "hydra_parse", written,
                                 written, None, fix, None))
    return out


def _refused(p: Profile, kind: str, s: RawSetting, why: str, suggestion: str | None) -> _Rejected:
    """One refused setting: how it was written, and the change that removes it (the suggested key with the
    same value where that value fits it, else removing the setting)."""
    flag = s.key if p.syntax != "dataclass" or kind != "command" else f"--{s.key}"
    bare = _bare_flag(s, flag)
    if kind in ("yaml", "json"):
        written = f"{s.key}: {s.text}"
    elif p.syntax == "hydra" and not s.key.startswith("-"):
        written = f"~{s.key}" if s.op == "~" else f"{s.op}{s.key}={s.text}"
    elif kind == "python":
        written = f"{s.key}={s.text}"
    else:
        written = flag if bare else f"{flag} {s.text}"
    shown = f"{s.op}{s.key}" if s.op in ("+", "~") else s.key
    value = s.value if s.literal else s.text
    if why == "hydra_append":
        return _Rejected(s, why, shown, written, None, render_changes(p, kind, ((s.key, value),)), (s.key, value))
    target = suggestion if suggestion is None or suggestion in p.keys else next(
        (k for k in p.keys if p.spelled(k) == suggestion), None)
    if target is not None and s.op != "~" and _fits(p, kind, target, s, bare):
        if bare:
            fix = target if p.syntax == "argparse" else f"--{target}"
            change = (target, True)
        else:
            fix, change = render_changes(p, kind, ((target, value),)), (target, value)
        return _Rejected(s, why, shown, written, suggestion, fix, change)
    return _Rejected(s, why, shown, written, suggestion, f"remove {written}", None)


def _fits(p: Profile, kind: str, key: str, s: RawSetting, bare: bool) -> bool:
    """Whether the value written for a refused setting is one the suggested setting ``key`` takes."""
    spec = p.keys[key]
    if p.syntax == "argparse":
        if spec.action in ("store_true", "store_false"):
            return bare
        if bare:
            return False  # a flag that needs a value, and none was written
        if isinstance(spec.nargs, int) and spec.nargs > 1:
            return isinstance(s.value, list) and len(s.value) == spec.nargs
        choices = p.accepted(key)
        return choices is None or not s.literal or str(s.value) in {str(c) for c in choices}
    if p.syntax == "dataclass" and kind == "command" and bare:
        return "bool" in (spec.type or "")  # HfArgumentParser: a bool field's value is optional
    return _value_fits(p, key, s)


def _value_fits(p: Profile, key: str, s: RawSetting) -> bool:
    """Whether a written value is of the kind setting ``key`` takes (one of its choices, a bool, a number): a
    guessed key with a value of another kind is no fix (``kl_loss_coef=seq-mean-token-sum``, an audit)."""
    spec = p.keys.get(key) or next((v for k, v in p.keys.items() if p.spelled(k) == key), None)
    if spec is None or not s.literal:
        return True
    choices = p.accepted(spec.key)
    if choices is not None:
        return str(s.value) in {str(c) for c in choices}
    if isinstance(spec.default, bool):
        return isinstance(s.value, bool) or str(s.value).strip().lower() in ("true", "false")
    if isinstance(spec.default, int | float):
        return as_double(s.value) is not None and not isinstance(s.value, bool)
    return True


def _rejected_warning(p: Profile, parsed: ParsedInput, rejected: list[_Rejected]) -> DoctorWarning:
    """SETTING_REJECTED: the run stops before training, why, and the change for each refused setting."""
    groups: dict[str, list[_Rejected]] = {}
    for r in rejected:
        groups.setdefault(r.why, []).append(r)
    call = parsed.names[0] if parsed.names else p.trainer
    items = []
    for why, rs in groups.items():
        settings = ", ".join(Message("{setting} (did you mean {suggestion}?)", setting=r.written,
                                     suggestion=r.suggestion) if r.suggestion else r.written for r in rs)
        items.append(Message("{lib} {rel} does not accept {settings}: {why}.", lib=p.library, rel=p.release,
                             settings=settings, why=marked_message(_REFUSALS[why], call=call, script=call)))
    message = Message("The run stops before training. {items} The rest of this card describes the run without "
                      "the settings it does not accept.", items=joined(" ", items))
    changes = tuple(r.change for r in rejected if r.change is not None)
    return DoctorWarning("SETTING_REJECTED", message, "\n".join(dict.fromkeys(r.fix for r in rejected)), changes)


def _trl_yaml_note(p: Profile, keys: list[str]) -> str:
    """What TRL does with keys of a YAML its configs do not have: it depends on what reads the YAML."""
    # trl 1.16.0: `trl grpo --config` passes them to accelerate launch (trl/cli/commands/training.py lines 61-64),
    # trl/scripts/grpo.py ignores them (parse_args_and_config(fail_with_unknown_args=False), line 181), and
    # parse_args_and_config's default raises ValueError "Unknown arguments from config file" (trl/scripts/utils.py
    # lines 353-357).
    shown = ", ".join(keys[:4]) + (" …" if len(keys) > 4 else "")
    return Message("{keys}: what {lib} {rel} does with a key its configs do not have depends on what reads the "
                   "YAML: trl {trainer} --config hands it to accelerate launch, which stops on any that is not one "
                   "of its own flags; trl/scripts/{trainer}.py ignores it; a script of your own that calls "
                   "TrlParser's parse_args_and_config() with its defaults raises ValueError.",
                   keys=shown, lib=p.library, rel=p.release, trainer=p.trainer)


def _trap_holds(prof: Profile, c: Caution, values: dict[str, Any], given: dict[str, RawSetting]) -> bool:
    """Whether a caution's conditions hold; a setting the release does not have is not set unless the script adds
    it (verl 0.3.0.post1 has no algorithm.kl_ctrl.horizon, whatever today's default, until +… adds one)."""
    return all(holds(cond, None if k in prof.unavailable and k not in given else values.get(k), values)
               for k, cond in c.when)


def _all_read(when: tuple[tuple[str, str], ...], given: dict[str, RawSetting]) -> bool:
    """Whether every setting a rule names, on either side of a comparison, is one the doctor read or a default:
    a value it could not read (``$((...))``) is assumed to be the default, which decides nothing."""
    named = {k for k, _ in when} | {w for _, c in when for w in re.findall(r"[A-Za-z_][\w.]*", c)}
    return all(given[k].literal for k in named if k in given)


def _eras_of(prof: Profile) -> tuple[Era, ...]:
    from kl_core.doctor.releases import eras

    return tuple(e for e in eras() if e.library == prof.library and e.trainer == prof.trainer)


def _with_requires(prof: Profile, w: DoctorWarning) -> DoctorWarning:
    """``w`` with :attr:`DoctorWarning.requires` where its fix selects an option that runs only from a later release."""
    for key, value in w.changes:
        for pl in prof.placements:
            if pl.option == key:  # an option's value: that row
                entry, what = next((e for e in pl.entries if str(value) in e.names and e.since), None), str(value)
            elif key in [t for t, _ in pl.toggles]:  # a toggle: the rows it selects
                entry = next((e for e in pl.entries if e.since and any(k == key for k, _ in e.config)), None)
                what = prof.spelled(key)
            else:
                continue
            if entry is not None:
                words = Message("{value} runs from {lib} {since} on: {why}", value=what, lib=prof.library,
                                since=entry.since, why=entry.since_why)
                return dataclasses.replace(w, requires=words)
    return w


def _under(prof: Profile, era: Era | None, parsed: ParsedInput, raw: list[RawSetting],
           notes: list[str]) -> Diagnosis:
    """The diagnosis of the settings under the current release (``era`` None) or an older era."""
    notes = list(notes)
    p = prof if era is None else era_profile(prof, era)
    renamed: dict[str, str] = {}
    for e in _eras_of(prof):
        renamed.update(e.renamed)
    values = {k: spec.default for k, spec in p.keys.items()}
    given: dict[str, RawSetting] = {}
    unknown: dict[str, str | None] = {}
    unknown_raw: dict[str, RawSetting] = {}  # each unknown key's first setting, as written
    appended: list[RawSetting] = []  # Hydra +key=value on a key the config sets: Hydra refuses it
    not_numbers: list[tuple[RawSetting, str]] = []  # a float setting's value the release stops on, and why
    strict_hydra = p.syntax == "hydra" and parsed.kind == "command" and _stock_config(parsed)
    known = [k for k in p.keys if k not in p.unavailable]
    for s in raw:
        # today's name for an era's setting (--algo.kl.use_loss under OpenRLHF 0.10.1, whose parser knows only
        # --use_kl_loss: OpenRLHF v0.10.1 openrlhf/cli/train_ppo_ray.py) is not a setting of the era
        later_name = era is not None and s.key in p.spelling and s.key not in era.keys
        if era is not None:
            key, value = translate(era, s.key, s.value)
            if key != s.key:
                s = RawSetting(key, value, s.text, s.literal, s.op, s.origin)
        if s.key.startswith("**"):
            given[s.key] = s
            continue
        group = s.key.split("@", 1)[0]
        if p.syntax == "hydra" and group in p.groups:
            notes.append(Message("{key}={value} chooses the Hydra config group {group}, not a setting: {why}",
                                 key=s.key, value=s.text, group=group, why=p.group_note))
            continue
        if s.op == "+" and s.key in p.addable:  # +key adds a setting the era's config lacked and its code reads
            given[s.key] = s
            if s.literal:
                values[s.key] = s.value
            continue
        if not _known(p, s.key, s.op) or s.key in p.unavailable or later_name:
            if s.key not in unknown:
                unknown_raw[s.key] = s
                if later_name:
                    unknown[s.key] = p.spelling[s.key]  # the era's own spelling
                elif s.key in renamed and renamed[s.key] in p.keys:
                    unknown[s.key] = renamed[s.key]  # an older release's name: today's spelling
                else:
                    match = [m for m in (difflib.get_close_matches(s.key, known, n=3, cutoff=_SUGGEST_CUTOFF)
                                         if len(unknown) < _MAX_SUGGESTIONS else [])
                             if isinstance(s.value, bool) or _value_fits(p, m, s)]  # a bare flag: a name hint
                    unknown[s.key] = match[0] if match else None
            continue
        if s.op == "~":
            notes.append(Message("~{key} deletes the setting; the doctor uses the release default", key=s.key))
            continue
        if strict_hydra and s.op == "+" and _append_refused(p, s):
            appended.append(s)  # the run stops there: the card describes the run without it
            continue
        if (why := _not_a_number(p, parsed.kind, s) or _not_a_mode(p, s)) is not None:
            not_numbers.append((s, why))  # likewise
            continue
        given[s.key] = s
        if s.literal:
            values[s.key] = s.value
    _resolve_references(p, values, given)
    if era is not None:
        for key, value, rule in derive(era, values, given):
            notes.append(Message("{key} did not exist in {lib} {label}: the KL went in the reward whenever "
                                 "{other} was False, which the card reads as {key}={value}",
                                 key=key, lib=p.library, label=p.release, other=rule.removeprefix("not "),
                                 value=_hydra(value)))
    unchecked = [k for k in unknown if k not in p.unavailable]
    if era is not None and p.syntax == "dataclass" and unchecked:
        # the era's keys file holds the config class's own fields only: the rest is not checked, not unknown;
        # a later release's setting the era is known not to have stays unknown
        notes.append(Message("{lib} {label}: the doctor has this era's {trainer} config fields only, so other "
                             "keys ({keys}) are not checked against it", lib=p.library, label=p.release,
                             trainer=p.trainer, keys=", ".join(unchecked[:4]) + (" …" if len(unchecked) > 4 else "")))
        unknown = {k: v for k, v in unknown.items() if k in p.unavailable}
    notes += [Message("{key} = {value}: {origin}", key=p.spelled(k), value=_fmt(given[k].value), origin=given[k].origin)
              for k in p.relevant if k in given and given[k].literal and given[k].origin]
    st = _analyse(p, values, given, parsed.kind)
    st.era = era
    notes += [note for when, note in p.uncovered if all(holds(c, values.get(k), values) for k, c in when)
              and _all_read(when, given)]
    notes += [c.message for c in p.cautions if c.said_in(p.release) == "note" and _all_read(c.when, given)
              and _trap_holds(p, c, values, given)]
    rejected = _rejected(p, era, parsed, {k: (unknown_raw[k], v) for k, v in unknown.items()}, appended,
                         not_numbers)
    rejected.sort(key=lambda r: r.setting.key not in renamed)  # an older release's names first: they name the KL
    warnings = [_with_requires(p, w) for w in _with_fixes(st)]
    warnings.sort(key=lambda w: w.code not in STOP_CODES)  # what stops the run leads: nothing else runs
    if rejected:
        warnings.insert(0, _rejected_warning(p, parsed, rejected))
    elif parsed.kind == "yaml" and era is None and unknown and f"trl {p.trainer}" in p.names:
        notes.append(_trl_yaml_note(p, list(unknown)))
    return Diagnosis(
        profile=p,
        kind=parsed.kind,
        command=parsed.command,
        kl_uses=tuple(st.uses),
        warnings=tuple(warnings),
        rejected=tuple(r.shown_key for r in rejected),
        unrecognised=tuple(UnknownKey(k, v) for k, v in unknown.items()),
        off_policy=tuple(st.off),
        off_policy_every_step=st.every_step,
        settings={k: values.get(k) for k in p.relevant},
        given=tuple(k for k in p.relevant if k in given),
        notes=tuple(dict.fromkeys([*parsed.notes, *notes])),
    )
