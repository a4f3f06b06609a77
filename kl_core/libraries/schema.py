r"""The crosswalk's record types: an entry (one library option), a release, a library.

:class:`CrosswalkEntry` is what one library computes for one KL option (the
conventions, the roles ``sampler``/``other``/``current`` and the gradient fields
are described in :mod:`kl_core.libraries.crosswalk`); each checks its own fields
when it is built.  :class:`Library` is one row of the library registry
(:mod:`kl_core.libraries.registry`), :class:`Release` one release read.
:mod:`kl_core.libraries.loading` builds all of them from ``crosswalk.toml``.

Sources: estimator definitions, J. Schulman, "Approximating KL Divergence"
(2020), http://joschu.net/blog/kl-approx.html.  Gradient caveats: Y. Tang and
R. Munos, "On a few pitfalls in KL divergence gradient estimation for RL",
arXiv:2506.09477.
"""

from __future__ import annotations

from dataclasses import dataclass

from kl_core.estimation import estimators
from kl_core.validation import N_

__all__ = [
    "ACTS_ON",
    "EXPECTED_GRADIENTS",
    "FULL",
    "GRADIENT_TARGETS",
    "GRAD_MODES",
    "ROLES",
    "ConfigDefault",
    "CrosswalkData",
    "CrosswalkEntry",
    "ExpectedGradient",
    "Library",
    "Release",
]

ACTS_ON = ("reward", "loss", "metric")
"""Where a library puts the value: a per-token reward, a loss term, or a log/early-stop metric."""

ROLES = ("sampler", "other", "current")
"""Roles a log-prob can play; see :mod:`kl_core.libraries.crosswalk`."""

GRAD_MODES = ("autograd", "k2", "k2_is", "score", "score_current", "none")
"""How an entry's gradient is formed (see :attr:`CrosswalkEntry.grad_mode`)."""

@dataclass(frozen=True)
class ExpectedGradient:
    """One value of :attr:`CrosswalkEntry.grad_target`, and its words on screen.

    Attributes
    ----------
    key : str
        The value, e.g. ``"reverse_kl"``.
    name : str
        A table cell, e.g. "reverse KL" (marked for translation).
    meaning : str
        What the gradient is, as a clause (marked for translation).
    """

    key: str
    name: str
    meaning: str


EXPECTED_GRADIENTS: dict[str, ExpectedGradient] = {
    g.key: g
    for g in (
        ExpectedGradient("reverse_kl", N_("reverse KL"), N_("∇KL[π_θ‖π_ref], the true gradient")),
        ExpectedGradient("forward_kl", N_("forward KL"), N_("∇KL[π_ref‖π_θ], the other direction")),
        ExpectedGradient("zero", N_("zero"), N_("0: no gradient at all")),
        ExpectedGradient("mixed", N_("mixed/biased"), N_("neither: a partial gradient")),
        ExpectedGradient("none", N_("no gradient"), N_("no gradient: a logged metric")),
    )
}
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

GRADIENT_TARGETS = tuple(EXPECTED_GRADIENTS)
"""The keys of :data:`EXPECTED_GRADIENTS`, in order."""

FULL = "full"
"""The estimator key of the exact full-vocabulary KL (not a Monte Carlo estimator)."""

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
        The release the entry was read in (see :data:`kl_core.libraries.registry.RELEASES`); for a
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
    since : str or None
        The first release in which the option runs, where releases people still use
        accept its spelling but stop on it or lack it (verl's ``'+'`` options: 0.8.0).
    since_why : str or None
        What those earlier releases do with it, one sentence (with ``since``).
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
    since: str | None = None
    since_why: str | None = None

    def __post_init__(self) -> None:
        if self.estimator != FULL and self.estimator not in estimators.ESTIMATORS:
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
        if self.estimator == FULL:
            return True
        return estimators.ESTIMATORS[self.estimator].unbiased

    @property
    def uses_current(self) -> bool:
        """True if the log-ratio is taken against the ``current`` role (see :mod:`kl_core.libraries.crosswalk`)."""
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
class Library:
    """One RL library the crosswalk covers: the one place its names are written.

    Attributes
    ----------
    name : str
        The name shown to users and used in every entry, release and profile,
        e.g. ``"Stable-Baselines3"``.
    aliases : tuple of str
        Other spellings accepted for it, in lower case (names are compared
        case-insensitively): repositories (``"huggingface/trl"``), package
        names, abbreviations (``"sb3"``).
    packages : tuple of str
        The top-level Python packages its trainers live in (``"verl"`` and
        ``"recipe"`` for verl): a module under one of them is this library's code.
    """

    name: str
    aliases: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        for a in self.aliases:
            if not isinstance(a, str) or a != a.strip().lower() or not a:
                raise ValueError(f"aliases must be non-empty lower-case strings ({self.name}), got {a!r}")
        for p in self.packages:
            if not isinstance(p, str) or not p.isidentifier():
                raise ValueError(f"packages must be Python package names ({self.name}), got {p!r}")

    @property
    def names(self) -> tuple[str, ...]:
        """Every spelling that names this library, in lower case: the name, then the aliases."""
        return (self.name.lower(), *self.aliases)


@dataclass(frozen=True)
class CrosswalkData:
    """What :func:`kl_core.libraries.loading.load_crosswalk` returns.

    Attributes
    ----------
    entries : tuple of CrosswalkEntry
        The rows, in file order.
    releases : tuple of Release
        The releases read.
    libraries : tuple of Library
        The libraries, from the file's ``[[libraries]]`` (in file order); a file
        without that table gets one :class:`Library` per entry library, without
        aliases.
    """

    entries: tuple[CrosswalkEntry, ...]
    releases: tuple[Release, ...]
    libraries: tuple[Library, ...] = ()
