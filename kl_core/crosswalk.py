r"""Library crosswalk: how each RL library's KL option maps onto Schulman's estimators.

Every row of :data:`CROSSWALK` records, as data, what one library computes when a
user sets one KL option (or reads one KL value in a log): the exact code it runs,
which log-prob it subtracts from which, the clamps it applies, where the value
goes (reward, loss or a logged metric) and which of the estimators in
:mod:`kl_core.estimators` it is.

Conventions
-----------
Two roles name the log-probabilities of the **sampled** tokens:

``logp_sampler``
    log-prob under the policy that generated the samples (``q`` in the core).
``logp_other``
    log-prob under the other policy (``p`` in the core).

Then ``logr = logp_other - logp_sampler`` and, for ``x ~ sampler``,
``E[k1] = E[k3] = KL[sampler‖other]`` and ``E[k3_pq] = KL[other‖sampler]``.
A third role, ``current``, appears only in importance-weighted entries (TRL's
``use_bias_correction_kl``): the samples come from ``π_old``, the KL is about
``π_θ``, and the log-ratio is ``logp_other - logp_current``.

:func:`evaluate` reproduces the per-token value a library produces (before the
library averages it over tokens): clamp ``logr``, call the estimator from
:mod:`kl_core.estimators` (the single implementation of every formula), clamp
the value, and apply the importance weight where the library does.

Sources were read in the stored public copies of each library; the
``verified_in`` field of each entry says which file and commit, and says so
where a detail could not be confirmed there.  Estimator definitions: J. Schulman,
"Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
Gradient caveats: Y. Tang and R. Munos, "On a few pitfalls in KL divergence
gradient estimation for RL", arXiv:2506.09477.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core import estimators
from kl_core._validation import as_float_array

__all__ = [
    "ACTS_ON",
    "CROSSWALK",
    "ROLES",
    "CrosswalkEntry",
    "evaluate",
    "libraries",
    "lookup",
    "options",
]

ACTS_ON = ("reward", "loss", "metric")
"""Where a library puts the value: a per-token reward, a loss term, or a log/early-stop metric."""

ROLES = ("sampler", "other", "current")
"""Roles a log-prob can play; see the module docstring."""

_FULL = "full"
_TANG_MUNOS = "Tang & Munos, arXiv:2506.09477"


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
        Key of :data:`kl_core.estimators.ESTIMATORS` (``"k1"``, ``"k2"``, ``"k3"``,
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
        library's sign) before the estimator, or None.
    value_clamp : tuple of float or None
        ``(lo, hi)`` applied to the per-token value, or None.
    straight_through : bool
        True for verl's ``"+"`` options: the forward value is the base
        estimator's, only the backward pass uses ``k2``'s gradient.
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
        Which stored source this entry was checked against, and what could not be.
    caveat : str
        One or two sentences on what to watch for.
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
        if len(self.kl_roles) != 2 or any(r not in ROLES for r in self.kl_roles):
            raise ValueError(f"kl_roles must be two of {ROLES}, got {self.kl_roles!r}")
        if ("current" in self.kl_roles) != self.importance_weighted:
            raise ValueError("kl_roles uses 'current' exactly when importance_weighted is True")
        var_roles = sorted(role for _, role in self.variables)
        want = ["current", "other", "sampler"] if self.importance_weighted else ["other", "sampler"]
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


# --------------------------------------------------------------------------- #
# LaTeX building blocks (log-probs of the sampled token)
# --------------------------------------------------------------------------- #
_TH = r"\log\pi_\theta"
_REF = r"\log\pi_{\mathrm{ref}}"
_OLD = r"\log\pi_{\mathrm{old}}"


def _k1_tex(a: str, b: str) -> str:
    return rf"{a} - {b}"


def _k3_tex(num: str, den: str) -> str:
    return rf"e^{{{num} - {den}}} - ({num} - {den}) - 1"


# --------------------------------------------------------------------------- #
# Shared sentences
# --------------------------------------------------------------------------- #
_CAV_K1_REWARD = (
    "Unbiased for the KL but single tokens go negative; as a detached reward its "
    "score-function gradient is the usual KL-penalty gradient."
)
_CAV_K3_REWARD = (
    "Unbiased and never negative, but as a detached reward its score-function gradient is "
    f"not the KL gradient, because the control variate r − 1 correlates with the score ({_TANG_MUNOS})."
)
_CAV_K2 = (
    "Biased: its mean is E[½ log² r], which matches the KL only to second order in the "
    "policy difference."
)
_CAV_ABS = (
    "Not a divergence estimate: its mean E|log r| is at least the KL (triangle inequality) "
    "and has no f-divergence form."
)
_CAV_FULL = (
    "Exact per position, but needs full-vocabulary log-probs, not sampled-token log-probs, "
    "so it cannot be evaluated from two log-prob columns."
)
_CAV_K1_LOSS = (
    "Differentiating a KL value estimator does not in general give the KL gradient "
    f"({_TANG_MUNOS}): on-policy, E[∇k1] = E[∇log π_θ] = 0, so as a loss term k1 does nothing on average."
)
_CAV_K2_LOSS = (
    "Value biased (E[½ log² r]), but on-policy E[∇k2] = ∇KL[π_θ‖π_ref] — the reason verl's '+' "
    f"options borrow k2's gradient ({_TANG_MUNOS})."
)
_CAV_K3_LOSS = (
    "Differentiating a KL value estimator does not in general give the KL gradient "
    f"({_TANG_MUNOS}): on-policy, E[∇k3] = ∇KL[π_ref‖π_θ], the reverse of the direction its value estimates."
)
_CAV_ABS_LOSS = (
    "Not a divergence (E|log r| ≥ KL), and its gradient sign(log π_θ − log π_ref)·∇log π_θ is not a "
    f"KL gradient either ({_TANG_MUNOS})."
)
_CAV_ST = (
    "Straight-through: the forward value is the base estimator's (so evaluate() returns exactly that), "
    f"while the backward pass uses k2's gradient, whose on-policy mean is ∇KL[π_θ‖π_ref] ({_TANG_MUNOS})."
)
_CAV_DRIFT_K1 = (
    "Measures how far the update has moved from the policy that sampled the batch; k1, so a "
    "minibatch average can be negative."
)
_CAV_DRIFT_K3 = (
    "Measures how far the update has moved from the policy that sampled the batch; k3, so it is "
    "unbiased for KL[π_old‖π_θ] and never negative."
)

_VERL_CORE = (
    "verl-project/verl@018f23b5 verl/trainer/ppo/core_algos.py (kl_penalty, kl_penalty_forward)"
)
_VERL_REWARD_SRC = "verl/trainer/ppo/ray_trainer.py::apply_kl_penalty -> core_algos.kl_penalty"
_VERL_LOSS_SRC = (
    "verl/workers/actor/dp_actor.py::DataParallelPPOActor.update_policy -> core_algos.kl_penalty"
)
_VERL_REWARD_VER = (
    f"{_VERL_CORE}; verl-project/verl@0094eb20 verl/trainer/ppo/ray_trainer.py (apply_kl_penalty)"
)
_VERL_LOSS_VER = (
    f"{_VERL_CORE}; verl-project/verl@03b0081c verl/workers/actor/dp_actor.py (update_policy)"
)
_VERL_REWARD_SAMPLER = "rollout policy π_old (old_log_probs of the actor that generated the batch)"
_VERL_LOSS_SAMPLER = (
    "policy being updated π_θ (log_prob); the batch was sampled by π_old, equal to π_θ "
    "only on the first mini-batch"
)
_VERL_REWARD_WEIGHT = "algorithm.kl_ctrl.kl_coef (β; fixed or adaptive controller)"
_VERL_LOSS_WEIGHT = "actor_rollout_ref.actor.kl_loss_coef"
_VERL_REWARD_SETTING = "algorithm.kl_penalty (with algorithm.use_kl_in_reward=True)"
_VERL_LOSS_SETTING = "actor_rollout_ref.actor.kl_loss_type (with actor.use_kl_loss=True)"

_TRL_LEGACY_SRC = "trl/trainer/ppo_trainer.py::PPOTrainer._kl_penalty (called from compute_rewards)"
_TRL_LEGACY_VER = (
    "Read in stored copies of the legacy trl/trainer/ppo_trainer.py and of the PPOConfig.kl_penalty "
    "docstring (options 'kl', 'abs', 'mse', 'full'); the file index does not name those copies' "
    "repository. The huggingface/trl ppo_trainer.py versions stored here do not contain it "
    "(00667e8c predates the option and hard-codes logprob - ref_logprob; be8a0874 uses kl_estimator)."
)
_TRL_LEGACY_SETTING = "PPOConfig.kl_penalty (legacy step()-based PPOTrainer)"
_TRL_LEGACY_COMPONENT = "PPOTrainer (legacy step() API)"
_TRL_LEGACY_SAMPLER = "policy π_θ at rollout (the model that generated the responses)"
_TRL_LEGACY_WEIGHT = "kl_ctl.value (init_kl_coef; adaptive when adap_kl_ctrl=True)"
_TRL_PPO_SRC = "trl/trainer/ppo_trainer.py::PPOTrainer.train"
_TRL_PPO_VER = "huggingface/trl@be8a0874 trl/trainer/ppo_trainer.py (PPOTrainer.train)"

_OPENRLHF_FN = "openrlhf/models/utils.py::compute_approx_kl"
_OPENRLHF_VER = (
    "OpenRLHF/OpenRLHF@473f61bd openrlhf/models/utils.py (compute_approx_kl, with the final "
    "clamp to [-10, 10]); the stored version @02a26057 has no clamp, so the clamp is version-dependent "
    "(OpenRLHF PR #1160, Dec 2025, still refers to 'the final clamp'). Call sites read in stored copies "
    "of experience_maker.py and ppo_actor.py (repository not named by the index)."
)
_OPENRLHF_CLAMP_NOTE = (
    " The final clamp to [-10, 10] is present in some OpenRLHF versions and absent in others."
)


def _verl_base(
    option: str, aliases: tuple[str, ...], estimator: str, acts_on: str
) -> CrosswalkEntry:
    """Build a verl entry for one kl_penalty_forward branch, in reward or loss placement."""
    reward = acts_on == "reward"
    sampler = _VERL_REWARD_SAMPLER if reward else _VERL_LOSS_SAMPLER
    pol = "π_old" if reward else "π_θ"
    tex_pol = _OLD if reward else _TH
    if estimator == "k3":
        formula = (
            "kl = ref_logprob - logprob\n"
            "kl = torch.clamp(kl, min=-20, max=20)\n"
            "ratio = torch.exp(kl)\n"
            "kld = (ratio - kl - 1).contiguous()\n"
            "return torch.clamp(kld, min=-10, max=10)"
        )
        latex = (
            rf"\operatorname{{clip}}_{{[-10,10]}}\!\left(e^{{\ell}} - \ell - 1\right),\quad "
            rf"\ell = \operatorname{{clip}}_{{[-20,20]}}({_REF} - {tex_pol})"
        )
        sign, logr_clamp, value_clamp = 1, (-20.0, 20.0), (-10.0, 10.0)
        caveat = _CAV_K3_REWARD if reward else _CAV_K3_LOSS
    elif estimator == "k1":
        formula = "return logprob - ref_logprob"
        latex = _k1_tex(tex_pol, _REF)
        sign, logr_clamp, value_clamp = -1, None, None
        caveat = _CAV_K1_REWARD if reward else _CAV_K1_LOSS
    elif estimator == "k2":
        formula = "return 0.5 * (logprob - ref_logprob).square()"
        latex = rf"\tfrac12\left({tex_pol} - {_REF}\right)^2"
        sign, logr_clamp, value_clamp = -1, None, None
        caveat = _CAV_K2 if reward else _CAV_K2_LOSS
    else:  # abs
        formula = "return (logprob - ref_logprob).abs()"
        latex = rf"\left|{tex_pol} - {_REF}\right|"
        sign, logr_clamp, value_clamp = -1, None, None
        caveat = _CAV_ABS if reward else _CAV_ABS_LOSS
    return CrosswalkEntry(
        library="verl",
        component="core_algos.kl_penalty (KL in reward)"
        if reward
        else "core_algos.kl_penalty (KL loss)",
        option=option,
        aliases=aliases,
        setting=_VERL_REWARD_SETTING if reward else _VERL_LOSS_SETTING,
        estimator=estimator,
        library_formula=formula,
        formula_latex=latex,
        sampler=sampler,
        other="reference π_ref (ref_log_prob)",
        variables=(("logprob", "sampler"), ("ref_logprob", "other")),
        direction=f"KL[{pol}‖π_ref]",
        kl_roles=("sampler", "other"),
        sign=sign,
        logr_clamp=logr_clamp,
        value_clamp=value_clamp,
        straight_through=False,
        importance_weighted=False,
        acts_on=acts_on,
        weight=_VERL_REWARD_WEIGHT if reward else _VERL_LOSS_WEIGHT,
        early_stop=None,
        logged_as="actor/reward_kl_penalty" if reward else "actor/kl_loss",
        source=_VERL_REWARD_SRC if reward else _VERL_LOSS_SRC,
        verified_in=_VERL_REWARD_VER if reward else _VERL_LOSS_VER,
        caveat=caveat,
    )


def _verl_straight_through(
    base: CrosswalkEntry, option: str, aliases: tuple[str, ...]
) -> CrosswalkEntry:
    """The ``"+"`` variant of a verl KL-loss entry: same forward value, k2 gradient."""
    formula = (
        'base_kl_penalty = kl_penalty[:-1] if kl_penalty.endswith("+") else kl_penalty\n'
        "forward_score = kl_penalty_forward(logprob, ref_logprob, base_kl_penalty)\n"
        "backward_score = 0.5 * (logprob - ref_logprob).square()\n"
        "return backward_score - backward_score.detach() + forward_score.detach()"
    )
    return CrosswalkEntry(
        library=base.library,
        component=base.component,
        option=option,
        aliases=aliases,
        setting=base.setting,
        estimator=base.estimator,
        library_formula=formula,
        formula_latex=base.formula_latex,
        sampler=base.sampler,
        other=base.other,
        variables=base.variables,
        direction=base.direction,
        kl_roles=base.kl_roles,
        sign=base.sign,
        logr_clamp=base.logr_clamp,
        value_clamp=base.value_clamp,
        straight_through=True,
        importance_weighted=False,
        acts_on="loss",
        weight=base.weight,
        early_stop=None,
        logged_as=base.logged_as,
        source="verl/trainer/ppo/core_algos.py::kl_penalty (straight-through branch)",
        verified_in=(
            f"{_VERL_CORE}. Older verl versions passed e.g. 'k3+' unstripped to kl_penalty_forward, "
            "which raises NotImplementedError; the '+' suffix is stripped in the stored version."
        ),
        caveat=_CAV_ST,
    )


def _openrlhf(estimator: str, acts_on: str) -> CrosswalkEntry:
    reward = acts_on == "reward"
    pre = "log_ratio = log_probs.float() - log_probs_base.float()\n"
    post = "\nlog_ratio = log_ratio.clamp(min=-10, max=10)"
    if estimator == "k1":
        formula = pre.rstrip("\n") + post
        latex = rf"\operatorname{{clip}}_{{[-10,10]}}({_TH} - {_REF})"
        cav = _CAV_K1_REWARD if reward else _CAV_K1_LOSS
    elif estimator == "k2":
        formula = pre + "log_ratio = log_ratio**2 / 2.0" + post
        latex = rf"\operatorname{{clip}}_{{[-10,10]}}\!\left(\tfrac12({_TH} - {_REF})^2\right)"
        cav = _CAV_K2 if reward else _CAV_K2_LOSS
    else:
        formula = pre + "log_ratio = -log_ratio\nlog_ratio = log_ratio.exp() - 1 - log_ratio" + post
        latex = rf"\operatorname{{clip}}_{{[-10,10]}}\!\left({_k3_tex(_REF, _TH)}\right)"
        cav = _CAV_K3_REWARD if reward else _CAV_K3_LOSS
    if reward:
        source = (
            f"{_OPENRLHF_FN}, called in openrlhf/trainer/ppo_utils/experience_maker.py with the "
            "actor's and the reference's log-probs, then openrlhf/models/utils.py::compute_reward"
        )
    else:
        source = (
            f"{_OPENRLHF_FN}, called in openrlhf/trainer/ray/ppo_actor.py (training step) when "
            "--use_kl_loss is set"
        )
    return CrosswalkEntry(
        library="OpenRLHF",
        component="compute_approx_kl (KL in reward)" if reward else "compute_approx_kl (KL loss)",
        option=estimator,
        aliases=(),
        setting="--kl_estimator" + ("" if reward else " (with --use_kl_loss)"),
        estimator=estimator,
        library_formula=formula,
        formula_latex=latex,
        sampler=(
            "rollout policy π_old (action_log_probs at experience making)"
            if reward
            else "policy being updated π_θ (action_log_probs); the batch was sampled by π_old"
        ),
        other="reference π_ref (base_action_log_probs)",
        variables=(("log_probs", "sampler"), ("log_probs_base", "other")),
        direction="KL[π_old‖π_ref]" if reward else "KL[π_θ‖π_ref]",
        kl_roles=("sampler", "other"),
        sign=-1,
        logr_clamp=None,
        value_clamp=(-10.0, 10.0),
        straight_through=False,
        importance_weighted=False,
        acts_on=acts_on,
        weight="--init_kl_coef (kl_ctl.value)",
        early_stop=None,
        logged_as="kl",
        source=source,
        verified_in=_OPENRLHF_VER,
        caveat=cav + _OPENRLHF_CLAMP_NOTE,
    )


CROSSWALK: tuple[CrosswalkEntry, ...] = (
    # ------------------------------------------------------------------ TRL
    CrosswalkEntry(
        library="TRL",
        component=_TRL_LEGACY_COMPONENT,
        option="kl",
        aliases=(),
        setting=_TRL_LEGACY_SETTING,
        estimator="k1",
        library_formula="return logprob - ref_logprob",
        formula_latex=_k1_tex(_TH, _REF),
        sampler=_TRL_LEGACY_SAMPLER,
        other="reference π_ref",
        variables=(("logprob", "sampler"), ("ref_logprob", "other")),
        direction="KL[π_θ‖π_ref]",
        kl_roles=("sampler", "other"),
        sign=-1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="reward",
        weight=_TRL_LEGACY_WEIGHT,
        early_stop=None,
        logged_as="objective/kl (summed over tokens)",
        source=_TRL_LEGACY_SRC,
        verified_in=_TRL_LEGACY_VER,
        caveat=_CAV_K1_REWARD,
    ),
    CrosswalkEntry(
        library="TRL",
        component=_TRL_LEGACY_COMPONENT,
        option="abs",
        aliases=(),
        setting=_TRL_LEGACY_SETTING,
        estimator="abs",
        library_formula="return (logprob - ref_logprob).abs()",
        formula_latex=rf"\left|{_TH} - {_REF}\right|",
        sampler=_TRL_LEGACY_SAMPLER,
        other="reference π_ref",
        variables=(("logprob", "sampler"), ("ref_logprob", "other")),
        direction="KL[π_θ‖π_ref] (intended; E|log r| is not a KL)",
        kl_roles=("sampler", "other"),
        sign=-1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="reward",
        weight=_TRL_LEGACY_WEIGHT,
        early_stop=None,
        logged_as=None,
        source=_TRL_LEGACY_SRC,
        verified_in=_TRL_LEGACY_VER,
        caveat=_CAV_ABS,
    ),
    CrosswalkEntry(
        library="TRL",
        component=_TRL_LEGACY_COMPONENT,
        option="mse",
        aliases=(),
        setting=_TRL_LEGACY_SETTING,
        estimator="k2",
        library_formula="return 0.5 * (logprob - ref_logprob).square()",
        formula_latex=rf"\tfrac12\left({_TH} - {_REF}\right)^2",
        sampler=_TRL_LEGACY_SAMPLER,
        other="reference π_ref",
        variables=(("logprob", "sampler"), ("ref_logprob", "other")),
        direction="KL[π_θ‖π_ref] (to second order)",
        kl_roles=("sampler", "other"),
        sign=-1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="reward",
        weight=_TRL_LEGACY_WEIGHT,
        early_stop=None,
        logged_as=None,
        source=_TRL_LEGACY_SRC,
        verified_in=_TRL_LEGACY_VER,
        caveat=_CAV_K2,
    ),
    CrosswalkEntry(
        library="TRL",
        component=_TRL_LEGACY_COMPONENT,
        option="full",
        aliases=(),
        setting=_TRL_LEGACY_SETTING,
        estimator=_FULL,
        library_formula=(
            'return F.kl_div(ref_logprob, logprob, log_target=True, reduction="none").sum(-1)'
        ),
        formula_latex=(
            r"\sum_{v}\pi_\theta(v)\left(\log\pi_\theta(v) - \log\pi_{\mathrm{ref}}(v)\right)"
        ),
        sampler=_TRL_LEGACY_SAMPLER + "; here logprob is its full log-softmax over the vocabulary",
        other="reference π_ref (full log-softmax over the vocabulary)",
        variables=(("logprob", "sampler"), ("ref_logprob", "other")),
        direction="KL[π_θ‖π_ref] (exact at each position)",
        kl_roles=("sampler", "other"),
        sign=-1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="reward",
        weight=_TRL_LEGACY_WEIGHT,
        early_stop=None,
        logged_as=None,
        source=_TRL_LEGACY_SRC,
        verified_in=_TRL_LEGACY_VER,
        caveat=(
            _CAV_FULL
            + " F.kl_div(input, target, log_target=True) sums exp(target)·(target − input), "
            "so the argument order (ref first) gives KL[π_θ‖π_ref]."
        ),
    ),
    CrosswalkEntry(
        library="TRL",
        component=_TRL_LEGACY_COMPONENT,
        option="policy/policykl",
        aliases=("policykl",),
        setting="logged stat; drives PPOConfig.early_stopping with PPOConfig.target_kl",
        estimator="k1",
        library_formula="policykl = masked_mean(old_logprobs - logprobs, mask)",
        formula_latex=_k1_tex(_OLD, _TH),
        sampler="rollout policy π_old (old_logprobs)",
        other="policy being updated π_θ (logprobs)",
        variables=(("old_logprobs", "sampler"), ("logprobs", "other")),
        direction="KL[π_old‖π_θ]",
        kl_roles=("sampler", "other"),
        sign=-1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="metric",
        weight=None,
        early_stop=(
            "with early_stopping=True: zero the gradients and stop the PPO epochs when a "
            "minibatch's policykl > 1.5·target_kl (PPOTrainer._early_stop)"
        ),
        logged_as="policy/policykl",
        source="trl/trainer/ppo_trainer.py::PPOTrainer.loss (policykl), ::step and ::_early_stop",
        verified_in="huggingface/trl@00667e8c trl/trainer/ppo_trainer.py (PPOTrainer.loss, step, _early_stop)",
        caveat=_CAV_DRIFT_K1,
    ),
    CrosswalkEntry(
        library="TRL",
        component=_TRL_LEGACY_COMPONENT,
        option="policy/approxkl",
        aliases=("approxkl",),
        setting="logged stat",
        estimator="k2",
        library_formula="approxkl = 0.5 * masked_mean((logprobs - old_logprobs) ** 2, mask)",
        formula_latex=rf"\tfrac12\left({_TH} - {_OLD}\right)^2",
        sampler="rollout policy π_old (old_logprobs)",
        other="policy being updated π_θ (logprobs)",
        variables=(("old_logprobs", "sampler"), ("logprobs", "other")),
        direction="KL[π_old‖π_θ] (to second order)",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="metric",
        weight=None,
        early_stop=None,
        logged_as="policy/approxkl",
        source="trl/trainer/ppo_trainer.py::PPOTrainer.loss (approxkl)",
        verified_in="huggingface/trl@00667e8c trl/trainer/ppo_trainer.py (PPOTrainer.loss)",
        caveat=_CAV_K2,
    ),
    CrosswalkEntry(
        library="TRL",
        component="PPOTrainer",
        option="k1",
        aliases=(),
        setting="PPOConfig.kl_estimator",
        estimator="k1",
        library_formula="logr = ref_logprobs - logprobs\nkl = -logr",
        formula_latex=_k1_tex(_TH, _REF),
        sampler="policy π_θ at rollout (logprobs of the generated responses)",
        other="reference π_ref (ref_logprobs)",
        variables=(("logprobs", "sampler"), ("ref_logprobs", "other")),
        direction="KL[π_θ‖π_ref]",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="reward",
        weight="PPOConfig.kl_coef",
        early_stop=None,
        logged_as="objective/kl (summed over tokens)",
        source=_TRL_PPO_SRC,
        verified_in=_TRL_PPO_VER,
        caveat=_CAV_K1_REWARD,
    ),
    CrosswalkEntry(
        library="TRL",
        component="PPOTrainer",
        option="k3",
        aliases=(),
        setting="PPOConfig.kl_estimator",
        estimator="k3",
        library_formula="logr = ref_logprobs - logprobs\nkl = (logr.exp() - 1) - logr",
        formula_latex=_k3_tex(_REF, _TH),
        sampler="policy π_θ at rollout (logprobs of the generated responses)",
        other="reference π_ref (ref_logprobs)",
        variables=(("logprobs", "sampler"), ("ref_logprobs", "other")),
        direction="KL[π_θ‖π_ref]",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="reward",
        weight="PPOConfig.kl_coef",
        early_stop=None,
        logged_as="objective/kl (summed over tokens)",
        source=_TRL_PPO_SRC,
        verified_in=_TRL_PPO_VER,
        caveat=_CAV_K3_REWARD + " No clamp: exp(logr) can overflow when π_θ(x) ≪ π_ref(x).",
    ),
    CrosswalkEntry(
        library="TRL",
        component="PPOTrainer",
        option="policy/approxkl_avg",
        aliases=(),
        setting="logged stat",
        estimator="k2",
        library_formula="logprobs_diff = new_logprobs - mb_logprobs\napproxkl = 0.5 * (logprobs_diff**2).mean()",
        formula_latex=rf"\tfrac12\left({_TH} - {_OLD}\right)^2",
        sampler="rollout policy π_old (mb_logprobs)",
        other="policy being updated π_θ (new_logprobs)",
        variables=(("mb_logprobs", "sampler"), ("new_logprobs", "other")),
        direction="KL[π_old‖π_θ] (to second order)",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="metric",
        weight=None,
        early_stop=None,
        logged_as="policy/approxkl_avg",
        source=_TRL_PPO_SRC,
        verified_in=_TRL_PPO_VER,
        caveat=_CAV_K2,
    ),
    CrosswalkEntry(
        library="TRL",
        component="GRPOTrainer",
        option="beta",
        aliases=("per_token_kl",),
        setting="GRPOConfig.beta (> 0 turns the term on)",
        estimator="k3",
        library_formula=(
            "per_token_kl = (\n"
            "    torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1\n"
            ")\n"
            "per_token_loss = per_token_loss + self.beta * per_token_kl"
        ),
        formula_latex=_k3_tex(_REF, _TH),
        sampler=(
            "policy being updated π_θ (per_token_logps); the completions were sampled by π_old, "
            "equal to π_θ when num_iterations=1"
        ),
        other="reference π_ref (ref_per_token_logps)",
        variables=(("per_token_logps", "sampler"), ("ref_per_token_logps", "other")),
        direction="KL[π_θ‖π_ref]",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="loss",
        weight="GRPOConfig.beta",
        early_stop=None,
        logged_as="kl",
        source="trl/trainer/grpo_trainer.py::GRPOTrainer._compute_loss",
        verified_in="huggingface/trl@d2b69d76 trl/trainer/grpo_trainer.py (GRPOTrainer._compute_loss)",
        caveat=_CAV_K3_LOSS + " No clamp.",
    ),
    CrosswalkEntry(
        library="TRL",
        component="GRPOTrainer",
        option="use_bias_correction_kl",
        aliases=(),
        setting="GRPOConfig.use_bias_correction_kl=True (with beta > 0)",
        estimator="k3",
        library_formula=(
            "log_ratio = per_token_logps - old_per_token_logps\n"
            'log_importance_weights = log_ratio  # importance_sampling_level == "token"\n'
            "coef_1 = torch.exp(log_importance_weights)\n"
            "per_token_kl = (\n"
            "    torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1\n"
            ")\n"
            "if self.args.use_bias_correction_kl:\n"
            "    per_token_kl = per_token_kl * coef_1"
        ),
        formula_latex=(rf"e^{{{_TH} - {_OLD}}}\left({_k3_tex(_REF, _TH)}\right)"),
        sampler="old policy π_old that generated the completions (old_per_token_logps)",
        other="reference π_ref (ref_per_token_logps)",
        variables=(
            ("old_per_token_logps", "sampler"),
            ("ref_per_token_logps", "other"),
            ("per_token_logps", "current"),
        ),
        direction="KL[π_θ‖π_ref]",
        kl_roles=("current", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=True,
        acts_on="loss",
        weight="GRPOConfig.beta",
        early_stop=None,
        logged_as="kl",
        source="trl/trainer/grpo_trainer.py::GRPOTrainer._compute_loss (use_bias_correction_kl branch)",
        verified_in=(
            "Option and docstring: huggingface/trl@006d32c9 trl/trainer/grpo_config.py (cites the "
            "DeepSeek-V3.2 paper). The per_token_kl * coef_1 code was read in stored copies of "
            "grpo_trainer.py._compute_loss whose repository the index does not name; the "
            "huggingface/trl@d2b69d76 grpo_trainer.py stored here predates the option."
        ),
        caveat=(
            "The weight π_θ/π_old makes the value unbiased for KL[π_θ‖π_ref] although the tokens come "
            "from π_old; coef_1 is not detached, so on average the gradient is ∇KL[π_θ‖π_ref] too "
            f"({_TANG_MUNOS}). With importance_sampling_level='sequence', coef_1 is a per-sequence "
            "geometric mean and the correction is no longer exact per token."
        ),
    ),
    # ----------------------------------------------------------------- verl
    _verl_base("kl", ("k1",), "k1", "reward"),
    _verl_base("abs", (), "abs", "reward"),
    _verl_base("mse", ("k2",), "k2", "reward"),
    _verl_base("low_var_kl", ("k3",), "k3", "reward"),
    _verl_base("kl", ("k1",), "k1", "loss"),
    _verl_base("abs", (), "abs", "loss"),
    _verl_base("mse", ("k2",), "k2", "loss"),
    _verl_base("low_var_kl", ("k3",), "k3", "loss"),
    _verl_straight_through(_verl_base("kl", (), "k1", "loss"), "k1+", ("kl+",)),
    _verl_straight_through(_verl_base("abs", (), "abs", "loss"), "abs+", ()),
    _verl_straight_through(_verl_base("mse", (), "k2", "loss"), "k2+", ("mse+",)),
    _verl_straight_through(_verl_base("low_var_kl", (), "k3", "loss"), "k3+", ("low_var_kl+",)),
    CrosswalkEntry(
        library="verl",
        component="core_algos.compute_policy_loss_vanilla",
        option="actor/ppo_kl",
        aliases=("ppo_kl",),
        setting="logged metric of the default policy loss (loss_mode='vanilla')",
        estimator="k1",
        library_formula=(
            "negative_approx_kl = log_prob - old_log_prob\n"
            "negative_approx_kl = torch.clamp(negative_approx_kl, min=-20.0, max=20.0)\n"
            "ppo_kl = verl_F.masked_mean(-negative_approx_kl, response_mask)"
        ),
        formula_latex=rf"-\operatorname{{clip}}_{{[-20,20]}}({_TH} - {_OLD})",
        sampler="rollout policy π_old (old_log_prob)",
        other="policy being updated π_θ (log_prob)",
        variables=(("old_log_prob", "sampler"), ("log_prob", "other")),
        direction="KL[π_old‖π_θ]",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=(-20.0, 20.0),
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="metric",
        weight=None,
        early_stop=None,
        logged_as="actor/ppo_kl",
        source="verl/trainer/ppo/core_algos.py::compute_policy_loss_vanilla",
        verified_in=(
            "verl-project/verl@018f23b5 verl/trainer/ppo/core_algos.py (compute_policy_loss_vanilla); "
            "dp_actor.py@03b0081c sets old_log_prob = log_prob.detach() when fully on-policy"
        ),
        caveat=(
            _CAV_DRIFT_K1 + " When the update is fully on-policy (one mini-batch, one epoch) verl "
            "substitutes old_log_prob = log_prob.detach(), so the metric is exactly 0."
        ),
    ),
    # ------------------------------------------------------------- OpenRLHF
    _openrlhf("k1", "reward"),
    _openrlhf("k2", "reward"),
    _openrlhf("k3", "reward"),
    _openrlhf("k1", "loss"),
    _openrlhf("k2", "loss"),
    _openrlhf("k3", "loss"),
    # --------------------------------------------------------------- CleanRL
    CrosswalkEntry(
        library="CleanRL",
        component="ppo.py",
        option="old_approx_kl",
        aliases=("losses/old_approx_kl",),
        setting="logged metric",
        estimator="k1",
        library_formula="logratio = newlogprob - b_logprobs[mb_inds]\nold_approx_kl = (-logratio).mean()",
        formula_latex=_k1_tex(_OLD, _TH),
        sampler="rollout policy π_old (b_logprobs)",
        other="policy being updated π_θ (newlogprob)",
        variables=(("b_logprobs", "sampler"), ("newlogprob", "other")),
        direction="KL[π_old‖π_θ]",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="metric",
        weight=None,
        early_stop=None,
        logged_as="losses/old_approx_kl",
        source="cleanrl/ppo.py (main training loop)",
        verified_in="vwxyzjn/cleanrl@020cf0e5 cleanrl/ppo.py",
        caveat=_CAV_DRIFT_K1 + " Kept for comparison only; early stopping uses approx_kl.",
    ),
    CrosswalkEntry(
        library="CleanRL",
        component="ppo.py",
        option="approx_kl",
        aliases=("losses/approx_kl",),
        setting="logged metric; drives --target-kl",
        estimator="k3",
        library_formula=(
            "logratio = newlogprob - b_logprobs[mb_inds]\n"
            "ratio = logratio.exp()\n"
            "approx_kl = ((ratio - 1) - logratio).mean()"
        ),
        formula_latex=_k3_tex(_TH, _OLD),
        sampler="rollout policy π_old (b_logprobs)",
        other="policy being updated π_θ (newlogprob)",
        variables=(("b_logprobs", "sampler"), ("newlogprob", "other")),
        direction="KL[π_old‖π_θ]",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="metric",
        weight=None,
        early_stop=(
            "if target_kl is set: after each update epoch, stop the remaining epochs when "
            "approx_kl (of the last minibatch) > target_kl"
        ),
        logged_as="losses/approx_kl",
        source="cleanrl/ppo.py (main training loop)",
        verified_in="vwxyzjn/cleanrl@020cf0e5 cleanrl/ppo.py",
        caveat=_CAV_DRIFT_K3 + " Computed before that minibatch's optimizer step.",
    ),
    # ----------------------------------------------------- Stable-Baselines3
    CrosswalkEntry(
        library="Stable-Baselines3",
        component="PPO",
        option="approx_kl_div",
        aliases=("approx_kl", "train/approx_kl"),
        setting="logged metric; drives PPO(target_kl=...)",
        estimator="k3",
        library_formula=(
            "log_ratio = log_prob - rollout_data.old_log_prob\n"
            "approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()"
        ),
        formula_latex=_k3_tex(_TH, _OLD),
        sampler="rollout policy π_old (rollout_data.old_log_prob)",
        other="policy being updated π_θ (log_prob)",
        variables=(("rollout_data.old_log_prob", "sampler"), ("log_prob", "other")),
        direction="KL[π_old‖π_θ]",
        kl_roles=("sampler", "other"),
        sign=1,
        logr_clamp=None,
        value_clamp=None,
        straight_through=False,
        importance_weighted=False,
        acts_on="metric",
        weight=None,
        early_stop=(
            "if target_kl is set: stop training on this rollout (skip this minibatch's step and all "
            "later ones) when a minibatch's approx_kl_div > 1.5·target_kl"
        ),
        logged_as="train/approx_kl",
        source="stable_baselines3/ppo/ppo.py::PPO.train",
        verified_in=(
            "DLR-RM/stable-baselines3@cef4cf28 stable_baselines3/ppo/ppo.py (PPO.train); the older stored "
            "version @02888c61 used k1, mean(old_log_prob - log_prob), after the optimizer step"
        ),
        caveat=(
            _CAV_DRIFT_K3 + " SB3's comment calls it 'reverse KL'; in this lab's terms it is "
            "KL[π_old‖π_θ] with samples from π_old."
        ),
    ),
)


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
        loss) and OpenRLHF (``--use_kl_loss``).

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
) -> np.ndarray:
    r"""Compute the per-token value the library produces for ``entry``.

    Steps, in the library's order: ``logr = logp_other - logp_sampler`` (for
    importance-weighted entries ``logp_other - logp_current``), clamp ``logr``
    to :attr:`CrosswalkEntry.logr_clamp`, apply the estimator from
    :mod:`kl_core.estimators`, clamp to :attr:`CrosswalkEntry.value_clamp`, and
    multiply by :math:`\pi_\theta/\pi_{\mathrm{old}} = e^{\text{logp\_current} - \text{logp\_sampler}}`
    where the library does.  The result is per token, before the library's
    (masked) mean over tokens.

    For straight-through entries (verl ``"k3+"`` etc.) the value equals the base
    estimator's: only the gradient the library back-propagates differs.

    Parameters
    ----------
    entry : CrosswalkEntry
        A row of :data:`CROSSWALK`, e.g. from :func:`lookup`.
    logp_sampler : array_like
        Log-probs of the sampled tokens under the policy that generated them.
    logp_other : array_like
        Log-probs of the same tokens under the other policy (same shape).
    logp_current : array_like, optional
        Only for importance-weighted entries: log-probs under the policy being
        updated, :math:`\pi_\theta`.  Defaults to ``logp_sampler`` (on-policy,
        weight 1), which is what TRL uses when no old log-probs are stored.

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
    ls = _logp(logp_sampler, "logp_sampler")
    lo = _logp(logp_other, "logp_other")
    if lo.shape != ls.shape:
        raise ValueError(
            f"logp_other must have the shape of logp_sampler {ls.shape}, got {lo.shape}"
        )
    if entry.importance_weighted:
        lc = ls if logp_current is None else _logp(logp_current, "logp_current")
        if lc.shape != ls.shape:
            raise ValueError(
                f"logp_current must have the shape of logp_sampler {ls.shape}, got {lc.shape}"
            )
        logr = lo - lc
    else:
        if logp_current is not None:
            raise ValueError(
                f"logp_current applies only to importance-weighted entries, not {entry.library} "
                f"option {entry.option!r}"
            )
        lc = ls
        logr = lo - ls
    if entry.logr_clamp is not None:
        logr = np.clip(logr, *entry.logr_clamp)
    value = estimators.evaluate(entry.estimator, logr)
    if entry.value_clamp is not None:
        value = np.clip(value, *entry.value_clamp)
    if entry.importance_weighted:
        value = value * np.exp(lc - ls)
    return value
