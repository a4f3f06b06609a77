r"""Seven lessons as data: predict, check, explore.

Each :class:`Lesson` is a short path through one idea of the lab, in
:class:`Step`\ s.  A step is a setting (two distributions, N, λ …), a
question whose answer is one quantity of :mod:`kl_core.lessons.quantities`
(a number, with a tolerance, or the key of the right choice), and an
explanation filled in with the exact numbers.  Its *variants* draw the
setting from a range the step defines, chosen so that the step's point
holds (``Step.holds``); variant ``v`` of lesson ``L``, step ``S`` is always the
same setting (a seeded ``random.Random``), so ``/lessons?lesson=2&step=3&v=17``
shows every student the same numbers.

:func:`question` turns (lesson, step, variant) into a :class:`Question`:
the params, the exact answer, the tolerance, the choices, and the texts as
:class:`~kl_core.validation.Message`\ s (English; the app and
``python -m kl_core quiz --lang zh`` translate their templates).  The app's
page and the quiz exporter (:mod:`kl_core.lessons.quiz`) both read these questions,
so a step's answer is defined once.

Texts are Markdown with TeX between ``$…$`` (the exporter rewrites it as
``\(…\)`` for Moodle's MathJax filter); literal braces in templates are doubled.

Source of the ideas: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; Y. Tang and R. Munos, arXiv:2506.09477
(2025) for the gradients; the seed notes of the course.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kl_core.lessons.quantities import CHOICE_QUANTITIES, NUMERIC_QUANTITIES, compute
from kl_core.libraries.crosswalk import marked_message
from kl_core.validation import N_, Message

__all__ = [
    "LESSONS",
    "MAX_VARIANT",
    "Choice",
    "Grade",
    "Lesson",
    "Question",
    "Step",
    "all_questions",
    "grade",
    "lesson",
    "question",
    "vocabulary",
]

#: Variants are 0 … MAX_VARIANT (the ``v`` of a link).
MAX_VARIANT = 9999
_MAX_TRIES = 200

Params = dict[str, Any]


@dataclass(frozen=True)
class Choice:
    """One answer of a choice question: its key and its label (an ``N_`` template, filled with the params)."""

    key: str
    label: str
    fill: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    r"""One step of a lesson (see the module docstring).

    Attributes
    ----------
    title, setup, prompt, explanation : str
        English templates (``N_``), filled with the params and the facts
        (``answer`` and the ``extras``).
    quantity : str
        What is asked: a key of the lesson-quantity vocabulary.
    sample : callable
        ``random.Random`` → params of a variant.
    kind : str
        ``"numeric"`` or ``"choice"``.
    tolerance : (float, float)
        Absolute and relative tolerance; a guess is right within
        ``max(abs, rel·|answer|)``.
    choices : callable
        params → the :class:`Choice`\ s (choice questions).
    extras : mapping
        Name → (quantity, param overrides): more exact numbers for the explanation.
    holds : callable
        facts → bool: the step's point, true for every variant it serves.
    derive : callable
        facts → more facts, ratios of the computed numbers (for the explanation).
    explore : callable
        params → (URL path, query) of the page that covers the setting.
    chart : str
        A chart the page may draw beside the answer ("" for none).
    setting : str
        The picture of the setting drawn before any answer, for a setting
        without a q and a p (those are drawn as densities): ``"policies"`` or
        ``"chains"`` (:func:`kl_core.lessons.settings.token_pair`), "" for none.
    """

    title: str
    setup: str
    prompt: str
    explanation: str
    quantity: str
    sample: Callable[[random.Random], Params]
    explore: Callable[[Params], tuple[str, dict[str, Any]]]
    kind: str = "numeric"
    tolerance: tuple[float, float] = (0.0, 0.05)
    choices: Callable[[Params], tuple[Choice, ...]] = lambda params: ()
    extras: Mapping[str, tuple[str, Mapping[str, Any]]] = field(default_factory=dict)
    holds: Callable[[Params], bool] = lambda facts: True
    chart: str = ""
    derive: Callable[[Params], Params] = lambda facts: {}
    setting: str = ""


@dataclass(frozen=True)
class Lesson:
    """A lesson: its number (1 …), title, a one-line intro (``N_``) and its steps."""

    number: int
    title: str
    intro: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Question:
    """One variant of one step, with its exact answer (:func:`question`).

    Attributes
    ----------
    lesson, step, variant : int
        Where it comes from (lesson and step count from 1).
    kind, quantity : str
        ``"numeric"`` or ``"choice"``; the quantity asked.
    params : dict
        The setting (JSON values).
    answer : float or str
        The exact value, or the key of the right choice.
    tolerance : float or None
        The absolute tolerance of a numeric answer.
    choices : tuple of (str, Message)
        Key and label of each choice.
    title, setup, prompt, explanation : Message
        The texts (English; translatable templates).
    facts : dict
        ``answer`` and the extra numbers of the explanation.
    explore : (str, dict)
        URL path and query of the page that covers the setting.
    chart : str
        The step's chart, or "".
    setting : str
        The step's picture of its setting without q and p (``Step.setting``), or "".
    """

    lesson: int
    step: int
    variant: int
    kind: str
    quantity: str
    params: Params
    answer: float | str
    tolerance: float | None
    choices: tuple[tuple[str, Message], ...]
    title: Message
    setup: Message
    prompt: Message
    explanation: Message
    facts: Params
    explore: tuple[str, dict[str, Any]]
    chart: str = ""
    setting: str = ""

    @property
    def correct_label(self) -> Message | None:
        """The label of the right choice (None for a numeric question)."""
        return dict(self.choices).get(self.answer) if self.kind == "choice" else None  # type: ignore[arg-type]

    def link(self) -> str:
        """The lesson link of this variant: ``/lessons?lesson=L&step=S&v=V``."""
        return f"/lessons?lesson={self.lesson}&step={self.step}&v={self.variant}"


@dataclass(frozen=True)
class Grade:
    """A guess checked against a question: right or not, and how far off a number was."""

    correct: bool
    error: float | None = None  # guess − answer (numeric)
    relative: float | None = None  # |guess − answer| / |answer| (numeric, answer ≠ 0)


def grade(q: Question, guess: float | str | None) -> Grade:
    """Check ``guess`` against the question's exact answer.

    Parameters
    ----------
    q : Question
        The question.
    guess : float, str or None
        A number (numeric question) or a choice key; None ("Show me") is not right.

    Returns
    -------
    Grade
        Right when ``|guess − answer| ≤ tolerance`` (numeric) or the key is the
        right one (choice).
    """
    if guess is None:
        return Grade(False)
    if q.kind == "choice":
        return Grade(str(guess) == q.answer)
    g = float(guess)
    if not math.isfinite(g):
        return Grade(False)
    answer = float(q.answer)  # type: ignore[arg-type]
    err = g - answer
    rel = abs(err) / abs(answer) if answer != 0 else None
    return Grade(abs(err) <= (q.tolerance or 0.0) * (1 + 1e-9), err, rel)


# --------------------------------------------------------------------------- #
# Samplers and links
# --------------------------------------------------------------------------- #
def _tolerance(tolerance: tuple[float, float], answer: float) -> float:
    """A numeric step's ± tolerance at ``answer``: its absolute floor, or its share of the answer."""
    return max(tolerance[0], tolerance[1] * abs(float(answer)))


def _outside(tolerance: tuple[float, float], facts: Params, guess: float) -> bool:
    """A naive ``guess`` is graded wrong: it lies beyond ``tolerance`` of the answer (for a ``holds``)."""
    return abs(guess - float(facts["answer"])) > _tolerance(tolerance, facts["answer"]) * (1 + 1e-6)


def _grid(rng: random.Random, lo: float, hi: float, step: float) -> float:
    """A value of lo, lo + step, …, hi, drawn uniformly (rounded to the grid's digits)."""
    n = round((hi - lo) / step)
    return round(lo + step * rng.randrange(n + 1), 6)


def _num(x: float) -> str:
    return f"{x:g}"


def _shift(mu: float) -> Params:
    return {"q": "normal(0,1)", "p": f"normal({_num(mu)},1)", "mu": mu}


def _lab(*keys: str) -> Callable[[Params], tuple[str, dict[str, Any]]]:
    def link(params: Params) -> tuple[str, dict[str, Any]]:
        query: dict[str, Any] = {"q": params["q"], "p": params["p"]}
        if "n" in params:
            query["n"] = str(params["n"])
        query["keys"] = list(keys)
        return "estimator-lab", query

    return link


def _cv(params: Params) -> tuple[str, dict[str, Any]]:
    query = {"q": params["q"], "p": params["p"]}
    if "lam" in params:
        query["lam"] = _num(params["lam"])
    return "control-variates", query


def _grad(params: Params) -> tuple[str, dict[str, Any]]:
    # piref=uniform: the lessons' uniform π_ref (the Gradients page's default is uneven since issue 20)
    return "gradients", {"k": str(params["k"]), "piref": "uniform", "t": _num(params["t"]),
                         "option": params["option"]}


def _seq(params: Params) -> tuple[str, dict[str, Any]]:
    query = {"K": str(params["K"]), "drift": _num(params["drift"]), "T": str(params["T"])}
    if "beta" in params:
        query["beta"] = _num(params["beta"])
    return "sequences", query


#: The doctor's examples with a ?ex= button on /config-doctor (its URL carries the label).
_DOCTOR_BUTTONS = {"verl_grpo_qwen3_8b.sh": "verl", "openrlhf_dapo_hybrid.sh": "OpenRLHF", "trl_deepseekmath.py": "TRL"}
#: The configs lesson 7 reads, from the doctor's examples.
CONFIGS = (
    "verl_grpo_qwen3_8b.sh",
    "openrlhf_dapo_hybrid.sh",
    "trl_deepseekmath.py",
    "verl_rloo_qwen3_8b.sh",
    "openrlhf_ppo_hybrid.sh",
    "openrlhf_reinforce_baseline.sh",
    "trl_rloo_config.yaml",
    "trl_grpo_config.yaml",
)


def _doctor(params: Params) -> tuple[str, dict[str, Any]]:
    ex = _DOCTOR_BUTTONS.get(params["config"])
    if ex is not None:
        return "config-doctor", {"ex": ex}
    if params.get("option"):
        return "gradients", {"option": params["option"]}
    return "config-doctor", {}


# --------------------------------------------------------------------------- #
# The lessons
# --------------------------------------------------------------------------- #
_SHIFT_SETUP = N_(
    r"Samples come from $q = \mathcal N(0, 1)$; the target is $p = \mathcal N({mu:g}, 1)$. "
    r"For each draw $x \sim q$ let $r = p(x)/q(x)$."
)

#: ± tolerances of the standard-deviation steps, shared with their ``holds``, which keep a naive guess wrong
#: (another estimator's SD, or the KL).
_SD_K1_TOLERANCE = (0.01, 0.05)
_SD_K_LAMBDA_TOLERANCE = (0.01, 0.07)
_SD_K3_TOLERANCE = (0.002, 0.07)
_MEAN_K3_TOLERANCE = (0.005, 0.05)
_SD_K2_TOLERANCE = (0.01, 0.07)

_L1 = Lesson(
    1,
    N_("Why is my approx_kl negative?"),
    N_("One k1 value against the average of many: the share of negative values, and what averaging does."),
    (
        Step(
            title=N_("The number being estimated"),
            setup=_SHIFT_SETUP,
            prompt=N_(r"What is $\mathrm{{KL}}[q\|p] = \mathbb{{E}}_q[-\log r]$?"),
            explanation=N_(
                r"For two normals with the same σ, $\mathrm{{KL}}[q\|p] = \mu^2/2$ = {answer:.4g}. Every "
                "approx_kl in this lesson estimates this number, and it is never negative."
            ),
            quantity="kl_qp",
            sample=lambda rng: _shift(_grid(rng, 0.2, 1.0, 0.05)),
            explore=_lab("k1"),
            tolerance=(0.005, 0.05),
        ),
        Step(
            title=N_("One value of k1"),
            setup=_SHIFT_SETUP,
            prompt=N_(
                r"$k_1 = -\log r$ for a single draw. What is the probability that this one value is "
                "negative? (A number between 0 and 1.)"
            ),
            explanation=N_(
                r"Here $\log r = \mu x - \mu^2/2$, so $k_1 < 0$ exactly when $x > \mu/2$ = {half:.3g}, "
                "which has probability {answer:.3f}. A single k1 value is negative wherever p(x) > q(x); "
                "only its average over many draws is the KL."
            ),
            quantity="neg_share_k1",
            sample=lambda rng: (lambda mu: {**_shift(mu), "half": mu / 2})(_grid(rng, 0.2, 1.0, 0.05)),
            explore=_lab("k1"),
            tolerance=(0.03, 0.0),
            holds=lambda f: 0.2 < f["answer"] < 0.5,
            chart="k1",
        ),
        Step(
            title=N_("How far one value strays"),
            setup=_SHIFT_SETUP,
            prompt=N_(r"What is the standard deviation of a single value of $k_1$?"),
            explanation=N_(
                r"$\mathrm{{Var}}(k_1) = \mu^2$, so the SD is {answer:.4g}: {ratio:.3g} times the KL "
                "({kl:.4g}) it estimates. Single values scatter far to both sides of their mean, "
                "which is why so many are negative."
            ),
            quantity="sd_k1",
            sample=lambda rng: _shift(_grid(rng, 0.2, 1.0, 0.05)),
            explore=_lab("k1"),
            extras={"kl": ("kl_qp", {})},
            derive=lambda f: {"ratio": f["answer"] / f["kl"]},
            tolerance=_SD_K1_TOLERANCE,
            # the variance μ² = 2·KL, typed for the SD, is wrong (at μ = 0.95 it sat on the edge)
            holds=lambda f: f["answer"] > 2 * f["kl"] and _outside(_SD_K1_TOLERANCE, f, 2 * f["kl"]),
        ),
        Step(
            title=N_("What averaging does"),
            setup=N_(
                r"Samples come from $q = \mathcal N(0, 1)$, the target is $p = \mathcal N({mu:g}, 1)$, and "
                "approx_kl is the mean of N = {n} values of $k_1$."
            ),
            prompt=N_("What is the probability that this logged mean is negative? (A number between 0 and 1.)"),
            explanation=N_(
                r"The mean of N values has SD $\mathrm{{SD}}(k_1)/\sqrt N$ = {sd_mean:.3g}, against a KL of {kl:.3g}; here "
                "it is exactly normal, so it is negative with probability {answer:.3f}. A negative approx_kl "
                "says that the KL is small next to that SD, not that something is broken; more samples "
                r"shrink the SD by $\sqrt N$."
            ),
            quantity="neg_share_mean_k1",
            sample=lambda rng: {**_shift(_grid(rng, 0.04, 0.2, 0.01)), "n": rng.choice((50, 100, 200, 500))},
            explore=_lab("k1"),
            extras={"kl": ("kl_qp", {}), "sd_mean": ("sd_mean_k1", {})},
            tolerance=(0.015, 0.0),  # below every answer (> 0.02): the guess 0, "never negative", is wrong
            holds=lambda f: 0.02 < f["answer"] < 0.5,
            chart="mean_k1",
        ),
    ),
)

_K1_K3 = (Choice("k1", N_(r"$k_1 = -\log r$")), Choice("k3", N_(r"$k_3 = (r - 1) - \log r$")))

_L2 = Lesson(
    2,
    N_("Bias and spread"),
    N_("k2's bias, k3's unbiasedness, and where k3's spread is smaller than k1's and where it is not."),
    (
        Step(
            title=N_("k2's bias"),
            setup=_SHIFT_SETUP,
            prompt=N_(r"$k_2 = \tfrac12(\log r)^2$. What is its bias, $\mathbb{{E}}_q[k_2] - \mathrm{{KL}}[q\|p]$?"),
            explanation=N_(
                r"$\mathbb{{E}}[k_2]$ = {mean:.4g} against KL = {kl:.4g}: k2 overestimates by {answer:.4g}. "
                r"For these normals the bias is $\mu^4/8$ while the KL is $\mu^2/2$, so it is small only "
                "when p is close to q."
            ),
            quantity="bias_k2",
            sample=lambda rng: _shift(_grid(rng, 0.5, 1.5, 0.1)),
            explore=_lab("k1", "k2"),
            extras={"mean": ("mean_k2", {}), "kl": ("kl_qp", {})},
            tolerance=(0.003, 0.1),
            holds=lambda f: f["answer"] > 0,
        ),
        Step(
            title=N_("k3's mean"),
            setup=_SHIFT_SETUP,
            prompt=N_(r"$k_3 = (r - 1) - \log r$. What is $\mathbb{{E}}_q[k_3]$?"),
            explanation=N_(
                r"$\mathbb{{E}}_q[r - 1] = 0$, so $\mathbb{{E}}[k_3] = \mathbb{{E}}[-\log r] = \mathrm{{KL}}[q\|p]$ "
                "= {answer:.4g}: k3 is unbiased, like k1, and unlike k1 no single value of it is negative."
            ),
            quantity="mean_k3",
            sample=lambda rng: _shift(_grid(rng, 0.5, 1.5, 0.1)),
            explore=_lab("k1", "k3"),
            extras={"mean_k2": ("mean_k2", {})},
            # k2's biased mean, typed for k3's, is wrong (a floor of 0.01 accepted it at μ = 0.5)
            tolerance=_MEAN_K3_TOLERANCE,
            holds=lambda f: _outside(_MEAN_K3_TOLERANCE, f, f["mean_k2"]),
        ),
        Step(
            title=N_("k3's spread near p = q"),
            setup=_SHIFT_SETUP,
            prompt=N_(r"What is the standard deviation of a single value of $k_3$?"),
            explanation=N_(
                r"$\mathrm{{Var}}(k_3) = e^{{\mu^2}} - 1 - \mu^2$, so SD($k_3$) = {answer:.4g} against "
                r"SD($k_1$) = $\mu$ = {sd_k1:.4g}: here k3 is the narrower one."
            ),
            quantity="sd_k3",
            sample=lambda rng: _shift(_grid(rng, 0.2, 1.0, 0.05)),
            explore=_lab("k1", "k3"),
            extras={"sd_k1": ("sd_k1", {}), "kl": ("kl_qp", {})},
            tolerance=_SD_K3_TOLERANCE,
            holds=lambda f: f["answer"] < f["sd_k1"] and all(_outside(_SD_K3_TOLERANCE, f, f[k]) for k in ("sd_k1", "kl")),
            chart="k1_k3",
        ),
        Step(
            title=N_("Further apart"),
            setup=_SHIFT_SETUP,
            prompt=N_("Which has the smaller per-sample standard deviation here?"),
            explanation=N_(
                r"SD($k_1$) = {sd_k1:.4g}, SD($k_3$) = {sd_k3:.4g}. $\mathrm{{Var}}(k_3) = e^{{\mu^2}} - 1 - \mu^2$ "
                r"grows faster than $\mathrm{{Var}}(k_1) = \mu^2$: they are equal at $\mu \approx$ {cross:.3f}, and "
                "beyond it k3 is the noisier of the two."
            ),
            quantity="narrower",
            kind="choice",
            sample=lambda rng: {**_shift(_grid(rng, 1.3, 2.0, 0.1)), "keys": ["k1", "k3"]},
            choices=lambda params: _K1_K3,
            explore=_lab("k1", "k3"),
            extras={"sd_k1": ("sd_k1", {}), "sd_k3": ("sd_k3", {}), "cross": ("mu_equal_sd", {"a": "k1", "b": "k3"})},
            holds=lambda f: f["answer"] == "k1" and f["cross"] < 1.3,
            chart="k1_k3",
        ),
        Step(
            title=N_("k2's spread, further apart"),
            setup=_SHIFT_SETUP,
            prompt=N_(r"What is the standard deviation of a single value of $k_2$?"),
            explanation=N_(
                "SD($k_2$) = {answer:.4g}, SD($k_3$) = {sd_k3:.4g}, SD($k_1$) = {sd_k1:.4g}. Near p = q, k2 and k3 "
                r"spread about equally little; past $\mu \approx$ {cross23:.3f} k2 is the narrower of the two, as "
                r"here. Both are wider than k1 by now: k2's SD passed k1's at $\mu \approx$ {cross2:.3f}. And k2 "
                "pays for its narrowness with a bias (step 1)."
            ),
            quantity="sd_k2",
            sample=lambda rng: _shift(_grid(rng, 1.6, 2.0, 0.05)),
            explore=_lab("k1", "k2", "k3"),
            extras={"sd_k1": ("sd_k1", {}), "sd_k3": ("sd_k3", {}),
                    "cross2": ("mu_equal_sd", {"a": "k1", "b": "k2"}),
                    "cross23": ("mu_equal_sd", {"a": "k2", "b": "k3"})},
            tolerance=_SD_K2_TOLERANCE,
            holds=lambda f: (f["sd_k1"] < f["answer"] < f["sd_k3"] and max(f["cross2"], f["cross23"]) < 1.6
                             and all(_outside(_SD_K2_TOLERANCE, f, f[k]) for k in ("sd_k1", "sd_k3"))),
        ),
    ),
)


def _lam_choices(params: Params) -> tuple[Choice, ...]:
    return tuple(Choice(str(lam), N_("λ = {lam}"), {"lam": _num(lam)}) for lam in params["lams"])


def _cv_lams(rng: random.Random) -> Params:
    mu = _grid(rng, 0.5, 1.5, 0.1)
    others = rng.sample([0.0, 0.25, 0.5, 0.75, 1.5, 2.0], 3)
    lams = sorted([1.0, *others])
    return {**_shift(mu), "lams": lams}


_CV_SETUP = N_(
    r"Samples come from $q = \mathcal N(0, 1)$; the target is $p = \mathcal N({mu:g}, 1)$. "
    r"$k_\lambda = -\log r + \lambda (r - 1)$: $\lambda = 0$ is $k_1$, $\lambda = 1$ is $k_3$."
)

_L3 = Lesson(
    3,
    N_("Control variates"),
    N_("kλ, the variance parabola, λ*, and why λ = 1 is the one that keeps every sample ≥ 0 for every q and p."),
    (
        Step(
            title=N_("Any λ, the same mean"),
            setup=_CV_SETUP,
            prompt=N_(r"Take $\lambda$ = {lam:g}. What is $\mathbb{{E}}_q[k_\lambda]$?"),
            explanation=N_(
                r"$\mathbb{{E}}_q[r - 1] = 0$, so adding any multiple of it leaves the mean at "
                r"$\mathrm{{KL}}[q\|p]$ = {answer:.4g}. λ changes only the spread."
            ),
            quantity="mean_k_lambda",
            sample=lambda rng: {**_shift(_grid(rng, 0.5, 1.5, 0.1)), "lam": rng.choice((-0.5, 0.5, 1.5, 2.0))},
            explore=_cv,
            tolerance=(0.01, 0.05),
        ),
        Step(
            title=N_("The variance parabola"),
            setup=_CV_SETUP,
            prompt=N_(r"Take $\lambda$ = {lam:g}. What is the per-sample standard deviation of $k_\lambda$?"),
            explanation=N_(
                r"$\mathrm{{Var}}(k_\lambda) = \mathrm{{Var}}(\log r) - 2\lambda\,\mathrm{{Cov}}(\log r, r) + "
                r"\lambda^2\,\mathrm{{Var}}(r)$ is a parabola in λ. Here SD($k_\lambda$) = {answer:.4g}, "
                "against {sd_k1:.4g} for k1 and {sd_k3:.4g} for k3."
            ),
            quantity="sd_k_lambda",
            sample=lambda rng: {**_shift(_grid(rng, 0.5, 1.2, 0.1)), "lam": rng.choice((0.25, 0.5, 1.5))},
            explore=_cv,
            extras={"sd_k1": ("sd_k1", {}), "sd_k3": ("sd_k3", {})},
            tolerance=_SD_K_LAMBDA_TOLERANCE,
            # k1's or k3's SD, or kλ's variance, typed for kλ's SD, is wrong (5 of 24 settings accepted one of
            # the SDs; μ = 1.2, λ = 0.25 accepted the variance)
            holds=lambda f: all(_outside(_SD_K_LAMBDA_TOLERANCE, f, g)
                                for g in (f["sd_k1"], f["sd_k3"], f["answer"] ** 2)),
        ),
        Step(
            title=N_("The best λ"),
            setup=_CV_SETUP,
            prompt=N_(r"Which λ gives the smallest variance, $\lambda^*$?"),
            explanation=N_(
                r"The parabola's lowest point is $\lambda^* = \mathrm{{Cov}}(\log r, r)/\mathrm{{Var}}(r) = "
                r"(\mathrm{{KL}}[p\|q] + \mathrm{{KL}}[q\|p])/\chi^2$ = {answer:.4g}. It cuts the variance to "
                "{ratio:.1%} of k1's."
            ),
            quantity="lambda_star",
            sample=lambda rng: _shift(_grid(rng, 0.3, 1.5, 0.1)),
            explore=_cv,
            extras={"ratio": ("var_ratio_lambda_star", {})},
            tolerance=(0.02, 0.02),  # under 1 − λ* (0.044 at μ = 0.3): the guess 1, k3's λ, is wrong
            holds=lambda f: 0 < f["answer"] < 1,
        ),
        Step(
            title=N_("Never below zero"),
            setup=_CV_SETUP,
            prompt=N_(r"Which of these λ keeps every single sample of $k_\lambda$ at or above 0?"),
            explanation=N_(
                r"$k_\lambda = k_3 + (\lambda - 1)(r - 1)$. $k_3 \ge 0$ touches 0 at r = 1 with zero slope, "
                r"while $(\lambda - 1)(r - 1)$ changes sign there, so for every λ ≠ 1 some samples dip below 0. "
                r"λ = 1 gives up some variance (here $\lambda^*$ = {lam_star:.3g}) to keep every sample ≥ 0."
            ),
            quantity="nonnegative_lambda",
            kind="choice",
            sample=_cv_lams,
            choices=_lam_choices,
            explore=_cv,
            extras={"lam_star": ("lambda_star", {})},
            holds=lambda f: f["answer"] == "1.0",
        ),
        Step(
            title=N_("The least variance still dips below zero"),
            setup=_CV_SETUP,
            prompt=N_(
                r"At $\lambda = \lambda^*$ = {lam:.3f}, what share of single $k_\lambda$ values is negative? "
                "(A number between 0 and 1.)"
            ),
            explanation=N_(
                "{answer:.3f} of the samples are negative at λ* (k1's share is {k1:.3f}). The least-variance "
                "estimator still logs negative values; k3 never does."
            ),
            quantity="neg_share_k_lambda",
            sample=lambda rng: (lambda p: {**p, "lam": round(compute("lambda_star", p), 6)})(
                _shift(_grid(rng, 0.5, 1.5, 0.1))),
            explore=_cv,
            extras={"k1": ("neg_share_k1", {})},
            tolerance=(0.01, 0.0),  # under the gap to k1's share (0.012 at μ = 1.5): k1's share is wrong
            holds=lambda f: f["answer"] > 0,
            chart="k_lambda",
        ),
    ),
)

_DIRECTION_CHOICES = (
    Choice("k1", N_(r"$k_1 = -\log r$")),
    Choice("k2", N_(r"$k_2 = \tfrac12 (\log r)^2$")),
    Choice("k3", N_(r"$k_3 = (r - 1) - \log r$")),
    Choice("k3_pq", N_(r"$k_{{3,pq}} = r \log r - (r - 1)$")),
)


def _flip(rng: random.Random) -> Params:
    t = _grid(rng, 0.3, 2.0, 0.1) * rng.choice((-1, 1))
    return {"logr": t, "minus": -t, "keys": ["k1", "k2", "k3"]}


_L4 = Lesson(
    4,
    N_("Which direction?"),
    N_("KL[q‖p] against KL[p‖q], which ratio, and what flipping the log-ratio does to k1, k2 and k3."),
    (
        Step(
            title=N_("Equal variances"),
            setup=_SHIFT_SETUP,
            prompt=N_(r"$\mathrm{{KL}}[q\|p]$ = {kl_qp:.4g}. What is $\mathrm{{KL}}[p\|q]$?"),
            explanation=N_(
                r"For two normals with the same σ both directions are $\mu^2/2$ = {answer:.4g}. They part as "
                "soon as the widths differ: next step."
            ),
            quantity="kl_pq",
            sample=lambda rng: (lambda p: {**p, "kl_qp": compute("kl_qp", p)})(_shift(_grid(rng, 0.5, 2.0, 0.1))),
            explore=_lab("k3", "k3_pq"),
            tolerance=(0.01, 0.05),
        ),
        Step(
            title=N_("Different widths"),
            setup=N_(
                r"Samples come from $q = \mathcal N(0, 1)$; the target is the wider $p = \mathcal N(0, {sigma:g}^2)$. "
                r"$\mathrm{{KL}}[q\|p]$ = {kl_qp:.4g}."
            ),
            prompt=N_(r"What is $\mathrm{{KL}}[p\|q]$?"),
            explanation=N_(
                r"$\mathrm{{KL}}[p\|q] = \tfrac12(\sigma^2 - 1) - \log\sigma$ = {answer:.4g}, against "
                r"$\mathrm{{KL}}[q\|p]$ = {kl_qp:.4g}: {ratio:.3g} times as large. Which one a library logs "
                "depends on the ratio and the estimator it uses."
            ),
            quantity="kl_pq",
            sample=lambda rng: (lambda s: (lambda p: {**p, "kl_qp": compute("kl_qp", p),
                                                      "ratio": compute("kl_pq", p) / compute("kl_qp", p)})(
                {"q": "normal(0,1)", "p": f"normal(0,{_num(s)})", "sigma": s}))(_grid(rng, 1.5, 3.0, 0.1)),
            explore=_lab("k3", "k3_pq"),
            tolerance=(0.02, 0.07),
        ),
        Step(
            title=N_("The other direction from the same samples"),
            setup=N_(
                r"Samples come from $q = \mathcal N(0, 1)$, the target is $p = \mathcal N(0, {sigma:g}^2)$, "
                r"$r = p(x)/q(x)$."
            ),
            prompt=N_(r"Which estimator has mean $\mathrm{{KL}}[p\|q]$ under $x \sim q$?"),
            explanation=N_(
                r"$\mathbb{{E}}_q[r \log r] = \mathbb{{E}}_p[\log r] = \mathrm{{KL}}[p\|q]$ and $\mathbb{{E}}_q[r - 1] = 0$, "
                r"so $k_{{3,pq}}$ has mean {kl_pq:.4g} = $\mathrm{{KL}}[p\|q]$. k1 and k3 have mean "
                r"$\mathrm{{KL}}[q\|p]$ = {kl_qp:.4g}; k2 has {mean_k2:.4g}."
            ),
            quantity="unbiased_for",
            kind="choice",
            sample=lambda rng: (lambda s: {"q": "normal(0,1)", "p": f"normal(0,{_num(s)})", "sigma": s,
                                           "keys": ["k1", "k2", "k3", "k3_pq"], "target": "kl_pq"})(
                _grid(rng, 1.2, 2.0, 0.1)),
            choices=lambda params: _DIRECTION_CHOICES,
            explore=_lab("k3", "k3_pq"),
            extras={"kl_pq": ("kl_pq", {}), "kl_qp": ("kl_qp", {}), "mean_k2": ("mean_k2", {})},
            holds=lambda f: f["answer"] == "k3_pq",
        ),
        Step(
            title=N_("Flipping the log-ratio"),
            setup=N_(
                r"One sample has $\log r$ = {logr:g}. A library computes the ratio the other way round, "
                r"$\log(q/p)$ = {minus:g}, and plugs that into the same formula."
            ),
            prompt=N_("Which estimator gives the same value both ways?"),
            explanation=N_(
                r"$k_1$ flips its sign ({k1:.4g} → {k1f:.4g}); $k_2 = \tfrac12(\log r)^2$ stays {k2:.4g}; $k_3$ "
                "changes, {k3:.4g} → {k3f:.4g}, because r − 1 and 1/r − 1 differ. So k2 cannot tell which "
                "ratio a library used; k1 and k3 can."
            ),
            quantity="unchanged_under_flip",
            kind="choice",
            sample=_flip,
            choices=lambda params: _DIRECTION_CHOICES[:3],
            explore=lambda params: ("bregman-gap", {}),
            extras={"k1": ("k1_at", {}), "k1f": ("k1_at", {"logr": "minus"}), "k2": ("k2_at", {}),
                    "k3": ("k3_at", {}), "k3f": ("k3_at", {"logr": "minus"})},
            holds=lambda f: f["answer"] == "k2",
        ),
        Step(
            title=N_("k3 with the ratio flipped"),
            setup=N_(r"One sample has $\log r$ = {logr0:g}, so $k_3$ = {k3:.4g}."),
            prompt=N_(r"What does $k_3$ give with the flipped ratio, at $\log r$ = {logr:g}?"),
            explanation=N_(
                r"$k_3$ at {logr:g} is {answer:.4g}, not {k3:.4g}. The flipped $k_3$ is the one that samples "
                r"from p would use for $\mathrm{{KL}}[p\|q]$; on samples from q, $k_{{3,pq}} = r\log r - (r - 1)$ "
                "estimates that direction."
            ),
            quantity="k3_at",
            sample=lambda rng: (lambda t: {"logr0": t, "logr": -t, "k3": compute("k3_at", {"logr": t})})(
                _flip(rng)["logr"]),
            explore=lambda params: ("bregman-gap", {}),
            tolerance=(0.002, 0.05),  # under |k3(t) − k3(−t)| (0.009 at |t| = 0.3): the unflipped k3 is wrong
            holds=lambda f: True,
        ),
    ),
)

_TARGET_CHOICES = (
    Choice("reverse_kl", N_(r"$\nabla\,\mathrm{{KL}}[\pi_\theta \Vert \pi_\mathrm{{ref}}]$")),
    Choice("forward_kl", N_(r"$\nabla\,\mathrm{{KL}}[\pi_\mathrm{{ref}} \Vert \pi_\theta]$")),
    Choice("zero", N_("Zero: no pull at all")),
    Choice("mixed", N_("Something else: neither KL's gradient")),
)

_GRAD_SETUP = N_(
    r"A policy $\pi_\theta = \mathrm{{softmax}}(\theta)$ over {k} tokens, at $\theta = s\,v$ with $s$ = {t:g} and "
    r"$v$ = {v}, and a uniform $\pi_\mathrm{{ref}}$; tokens are drawn from $\pi_\theta$ (on-policy), "
    r"$r = \pi_\mathrm{{ref}}/\pi_\theta$."
)


def _direction(k: int) -> str:
    """The demo's direction v over ``k`` tokens, as the setup shows it: ``(1, 0, −1, 0.5)``."""
    from kl_core.gradients.demo import demo_logits

    return "(" + ", ".join(f"{x:g}".replace("-", "−") for x in demo_logits(k, 1.0)) + ")"


def _grad_params(option: str) -> Callable[[random.Random], Params]:
    def sample(rng: random.Random) -> Params:
        k = rng.choice((4, 5, 6, 7, 8))
        return {"k": k, "t": _grid(rng, 0.5, 1.5, 0.25), "option": option, "v": _direction(k)}

    return sample


_GRAD_EXTRAS = {"cos_r": ("grad_cos_reverse", {}), "cos_f": ("grad_cos_forward", {})}


def _grad_target_step(option: str, *, answer: str, **fields: Any) -> Step:
    """A step asking which gradient ``option`` gives on :data:`_GRAD_SETUP`; it holds when that is ``answer``."""
    return Step(
        setup=_GRAD_SETUP,
        quantity="grad_target",
        kind="choice",
        sample=_grad_params(option),
        choices=lambda params: _TARGET_CHOICES,
        explore=_grad,
        extras=_GRAD_EXTRAS,
        holds=lambda f: f["answer"] == answer,
        setting="policies",
        **fields,
    )


_L5 = Lesson(
    5,
    N_("Value ≠ gradient"),
    N_("k1, k2 and k3 used as a loss; k1 as a reward; what verl's GRPO default does."),
    (
        Step(
            title=N_("k1 as a loss"),
            setup=_GRAD_SETUP,
            prompt=N_(
                r"The loss is the mean of $k_1 = -\log r$ over the tokens. How large is its expected "
                r"gradient in θ (its Euclidean norm)?"
            ),
            explanation=N_(
                r"On-policy $\mathbb{{E}}_\pi[\nabla\log\pi_\theta] = 0$, so the expected gradient of $k_1$ as a "
                "loss is exactly {answer:.3g}, although its value estimates a KL of {kl:.4g}. The value "
                "estimates the KL; the gradient does not."
            ),
            quantity="grad_norm",
            sample=_grad_params("k1"),
            explore=_grad,
            extras={"kl": ("kl_policy_ref", {})},
            tolerance=(0.01, 0.0),
            holds=lambda f: f["answer"] == 0.0,
            setting="policies",
        ),
        _grad_target_step(
            "k2",
            answer="reverse_kl",
            title=N_("k2 as a loss"),
            prompt=N_(r"The loss is the mean of $k_2 = \tfrac12(\log r)^2$. Its expected gradient is …"),
            explanation=N_(
                r"$\nabla k_2 = \log(\pi_\theta/\pi_\mathrm{{ref}})\,\nabla\log\pi_\theta$, whose mean under "
                r"$\pi_\theta$ is exactly $\nabla\,\mathrm{{KL}}[\pi_\theta \Vert \pi_\mathrm{{ref}}]$ (cosine {cos_r:.3f}). "
                "k2's value is biased; its gradient is the right one."
            ),
        ),
        _grad_target_step(
            "k3",
            answer="forward_kl",
            title=N_("k3 as a loss"),
            prompt=N_(r"The loss is the mean of $k_3 = (r - 1) - \log r$. Its expected gradient is …"),
            explanation=N_(
                r"$\nabla k_3 = (1 - r)\,\nabla\log\pi_\theta$ and $\mathbb{{E}}_\pi[r\,\nabla\log\pi_\theta] = "
                r"\sum \pi_\mathrm{{ref}}\nabla\log\pi_\theta$, so the mean is $\nabla\,\mathrm{{KL}}[\pi_\mathrm{{ref}} "
                r"\Vert \pi_\theta]$ (cosine {cos_f:.3f}): k3's value is unbiased for one direction, its gradient "
                r"is the other's. Here its cosine with $\nabla\,\mathrm{{KL}}[\pi_\theta \Vert \pi_\mathrm{{ref}}]$ is "
                r"{cos_r:.3f}: both KLs have the same second-order term at $\pi_\mathrm{{ref}}$, so near it their "
                r"gradients point alike, and they part as $\pi_\theta$ moves away."
            ),
        ),
        _grad_target_step(
            "k1_score",
            answer="reverse_kl",
            title=N_("k1 as a reward"),
            prompt=N_(
                r"Now $k_1$ goes into the reward, as a score-function term: the gradient is "
                r"$k_1\,\nabla\log\pi_\theta$ with $k_1$ held fixed. Its expected gradient is …"
            ),
            explanation=N_(
                r"$\mathbb{{E}}_\pi[\log(\pi_\theta/\pi_\mathrm{{ref}})\,\nabla\log\pi_\theta] = "
                r"\nabla\,\mathrm{{KL}}[\pi_\theta \Vert \pi_\mathrm{{ref}}]$ (cosine {cos_r:.3f}). The same number "
                "that pulls nowhere as a loss pulls the right way from the reward."
            ),
        ),
        _grad_target_step(
            "verl:low_var_kl",
            answer="forward_kl",
            title=N_("verl's GRPO default"),
            prompt=N_(
                "verl's GRPO recipes set kl_loss_type=low_var_kl: k3 in the loss, as in DeepSeekMath's GRPO, "
                "with verl's clamps on log r and on the value. On-policy, its expected gradient is …"
            ),
            explanation=N_(
                r"It is k3 in the loss, so its gradient is $\nabla\,\mathrm{{KL}}[\pi_\mathrm{{ref}} \Vert \pi_\theta]$ "
                "(cosine {cos_f:.3f}): the other direction from the KL its value estimates. TRL's GRPO, "
                r"when β > 0, by default multiplies k3 by $\pi_\theta/\pi_\mathrm{{old}}$ "
                r"(use_bias_correction_kl), whose gradient is $\nabla\,\mathrm{{KL}}[\pi_\theta \Vert \pi_\mathrm{{ref}}]$."
            ),
        ),
    ),
)

_SEQ_SETUP = N_(
    "A toy language model: a policy and a reference Markov chain over K = {K} tokens, the policy tilted "
    r"by $\delta$ = {drift:g} in every transition; sequences of T = {T} tokens come from the policy. "
    r"With the tokens numbered $j = 0, \ldots, K-1$, the reference starts at token $j$ with probability "
    r"$\propto 1/(1+j)$ and moves from $i$ to $j$ with "
    r"probability $\propto 1/(1 + (j - i) \bmod K)$; the policy multiplies each by $e^{{\delta v_j}}$, "
    r"$v_j = 1 - 2j/(K-1)$, and renormalises."
)
_SEQ_KEYS = ("sum_k1", "sum_k3", "seq_k3", "rb")
_SEQ_CHOICES = (
    Choice("sum_k1", N_(r"$\Sigma k_1$, the sum of per-token $k_1$")),
    Choice("sum_k3", N_(r"$\Sigma k_3$, the sum of per-token $k_3$")),
    Choice("seq_k3", N_(r"seq_k3, $k_3$ of the whole-sequence ratio $R = \prod_t r_t$")),
    Choice("rb", N_("rb, the Rao–Blackwellized sum of exact next-token KLs")),
)


def _seq_params(rng: random.Random) -> Params:
    return {"K": rng.choice((4, 6, 8)), "drift": _grid(rng, 0.3, 0.8, 0.05), "T": rng.choice((32, 48, 64, 96, 128))}


_L6 = Lesson(
    6,
    N_("Tokens and sequences"),
    N_("The sum against the per-token mean, β/T, and the Rao–Blackwellized estimator."),
    (
        Step(
            title=N_("β on a per-token mean"),
            setup=N_(
                "A GRPO-style loss adds β = {beta:g} times the per-token mean of k3 over each sequence "
                "(seq-mean-token-mean); every sequence has T = {T} tokens."
            ),
            prompt=N_("What coefficient does that put on the KL between whole sequences?"),
            explanation=N_(
                r"$\mathbb{{E}}[\sum_t k_{{3,t}}]$ is the KL between whole sequences, and the mean divides the sum "
                "by T: β on a per-token mean is β/T = {answer:.3g} on the sequence KL. The same β regularises "
                "a long sequence less than a short one."
            ),
            quantity="beta_per_sequence",
            sample=lambda rng: {"beta": rng.choice((0.01, 0.04, 0.1)), "T": rng.choice((16, 32, 64, 128, 256)),
                                "mode": "seq-mean-token-mean", "K": 6, "drift": 0.5},
            explore=_seq,
            tolerance=(0.0, 0.02),
        ),
        Step(
            title=N_("What the per-token mean estimates"),
            setup=_SEQ_SETUP,
            prompt=N_(
                "The KL between whole sequences is {kl:.4g}. What does the per-token mean of k3, "
                r"$\frac1T\sum_t k_{{3,t}}$, average to?"
            ),
            explanation=N_(
                r"$\mathbb{{E}}[\frac1T \sum_t k_{{3,t}}]$ = KL / T = {answer:.4g}: the per-token mean many training "
                "logs show estimates KL / T, not the KL of the sequence ({kl:.4g})."
            ),
            quantity="seq_mean_mean_k3",
            sample=lambda rng: (lambda p: {**p, "kl": compute("seq_kl", p)})(_seq_params(rng)),
            explore=_seq,
            # No picture: the answer, KL / T, lies among the token shares a "chains" picture plots (for
            # 22 of the 165 settings one share is within its 5% tolerance), and the per-position KL,
            # the picture of this step's idea, averages to the answer itself.
            tolerance=(0.0, 0.05),
        ),
        Step(
            title=N_("Rao–Blackwellized"),
            setup=_SEQ_SETUP,
            prompt=N_(r"Which has the smaller standard deviation per sequence: $\Sigma k_1$ or rb?"),
            explanation=N_(
                "rb replaces each sampled k1 by the exact next-token KL at the sampled prefix: SD {sd_rb:.4g} "
                r"against {sd_k1:.4g} for $\Sigma k_1$. It needs the full next-token distributions, and it is "
                "usually, not always, the quieter one (Tokens & sequences has a counterexample)."
            ),
            quantity="seq_smallest_sd",
            kind="choice",
            sample=lambda rng: {**_seq_params(rng), "keys": ["sum_k1", "rb"]},
            choices=lambda params: (_SEQ_CHOICES[0], _SEQ_CHOICES[3]),
            explore=_seq,
            setting="chains",
            extras={"sd_rb": ("seq_sd_rb", {}), "sd_k1": ("seq_sd_sum_k1", {})},
            holds=lambda f: f["answer"] == "rb",
        ),
        Step(
            title=N_("The whole-sequence ratio"),
            setup=_SEQ_SETUP,
            prompt=N_("Which of these unbiased estimators of the sequence KL has the largest standard deviation?"),
            explanation=N_(
                r"seq_k3: SD {sd_seq:.4g}, against {sd_sum:.4g} for $\Sigma k_3$ and {sd_rb:.4g} for rb. "
                "R is a product of T ratios, so its spread can grow exponentially with T; the sums add T terms."
            ),
            quantity="seq_largest_sd",
            kind="choice",
            sample=lambda rng: {**_seq_params(rng), "keys": list(_SEQ_KEYS)},
            choices=lambda params: _SEQ_CHOICES,
            explore=_seq,
            setting="chains",
            extras={"sd_seq": ("seq_sd_seq_k3", {}), "sd_sum": ("seq_sd_sum_k3", {}), "sd_rb": ("seq_sd_rb", {})},
            holds=lambda f: f["answer"] == "seq_k3",
        ),
    ),
)

_WHERE_CHOICES = (
    Choice("reward", N_("In the reward")),
    Choice("loss", N_("In the loss")),
    Choice("none", N_("Nowhere: there is no KL term")),
)
_ESTIMATOR_CHOICES = (
    Choice("k1", N_("k1")),  # i18n: ok
    Choice("k2", N_("k2")),  # i18n: ok
    Choice("k3", N_("k3")),  # i18n: ok
    Choice("none", N_("None: there is no KL term")),
)
_GRADIENT_CHOICES = (*_TARGET_CHOICES, Choice("none", N_("None: there is no KL term")))

_DOCTOR_SETUP = N_("A real launch config, `{config}` (from the config doctor's examples):\n\n```\n{text}\n```\n\n{defaults}")
#: Lesson 7's setup: what the config leaves to its release.
_DEFAULTS = N_("Read as {release}. The KL settings it does not give take that release's defaults: {settings}.")
_NO_DEFAULTS = N_("Read as {release}. It gives every KL setting itself.")


def _config(rng: random.Random) -> Params:
    from kl_core.lessons.quantities import first_use

    config = rng.choice(CONFIGS)
    use = first_use({"config": config})
    return {"config": config, "option": "" if use is None else use.crosswalk_name}


def _doctor_step(**fields: Any) -> Step:
    """A step on a launch config drawn by :func:`_config`, shown as :data:`_DOCTOR_SETUP`, explored in the doctor."""
    return Step(setup=_DOCTOR_SETUP, sample=_config, explore=_doctor, **fields)


_L7 = Lesson(
    7,
    N_("Your library"),
    N_("Read a real launch script: where its KL goes and which way its gradient pushes."),
    (
        _doctor_step(
            title=N_("Where does the KL go?"),
            prompt=N_("Where does this config put its KL term?"),
            explanation=N_(
                "The doctor reads: {where_words}. A KL in the reward is a score-function term (k1 there pulls "
                "the right way); a KL in the loss is differentiated, and then the estimator decides the direction."
            ),
            quantity="kl_where",
            kind="choice",
            choices=lambda params: _WHERE_CHOICES,
        ),
        _doctor_step(
            title=N_("Which estimator?"),
            prompt=N_("Which estimator does its KL term compute?"),
            explanation=N_(
                "The doctor reads {where_words}; its estimator: {answer_words}. Option names differ from "
                "library to library (verl's low_var_kl is OpenRLHF's k3; TRL's GRPO has no such option and "
                "computes k3): the crosswalk on approx_kl in practice lists them."
            ),
            quantity="kl_estimator",
            kind="choice",
            choices=lambda params: _ESTIMATOR_CHOICES,
        ),
        _doctor_step(
            title=N_("Which way does it push?"),
            prompt=N_("On-policy, its expected gradient is …"),
            explanation=N_(
                "The doctor's answer for this config: {answer_words}. On-policy, k1 in the reward and plain k2 "
                "in the loss pull along the reverse KL, plain k3 in the loss along the forward KL; TRL's "
                r"default weight $\pi_\theta/\pi_\mathrm{{old}}$ turns k3's gradient into the reverse KL's."
            ),
            quantity="kl_gradient",
            kind="choice",
            choices=lambda params: _GRADIENT_CHOICES,
        ),
        _doctor_step(
            title=N_("How strong?"),
            prompt=N_("What is the KL coefficient? (0 if there is no KL term.)"),
            explanation=N_(
                "The coefficient is {answer:g}, read from the config or, where it does not set it, from the "
                "release's default."
            ),
            quantity="kl_coef",
            tolerance=(1e-12, 0.01),
        ),
    ),
)

LESSONS: tuple[Lesson, ...] = (_L1, _L2, _L3, _L4, _L5, _L6, _L7)
"""The seven lessons, in order."""


def lesson(number: int) -> Lesson:
    """Lesson ``number`` of :data:`LESSONS`.

    Parameters
    ----------
    number : int
        1 … 7; ``ValueError`` naming ``lesson`` otherwise.

    Returns
    -------
    Lesson
        The lesson.
    """
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(LESSONS):
        raise ValueError(f"lesson must be a whole number from 1 to {len(LESSONS)}, got {number!r}")
    return LESSONS[number - 1]


# --------------------------------------------------------------------------- #
# A question
# --------------------------------------------------------------------------- #
def _extra(name: str, spec: tuple[str, Mapping[str, Any]], params: Params) -> Any:
    quantity, overrides = spec
    merged = dict(params)
    for key, value in overrides.items():
        # an override naming another param ("minus") takes that param's value
        merged[key] = params[value] if isinstance(value, str) and value in params else value
    return compute(quantity, merged)


def _facts(st: Step, params: Params) -> Params:
    facts: Params = {"answer": compute(st.quantity, params)}
    for name, spec in st.extras.items():
        facts[name] = _extra(name, spec, params)
    facts.update(st.derive(facts))
    return facts


def _seed(lesson_no: int, step_no: int, variant: int) -> int:
    return 1_000_003 * lesson_no + 10_007 * step_no + variant


def _choice_label(c: Choice) -> Message:
    return marked_message(c.label, **c.fill)


def question(lesson_no: int, step_no: int, variant: int = 0) -> Question:
    """Variant ``variant`` of step ``step_no`` of lesson ``lesson_no``, with its exact answer.

    Parameters
    ----------
    lesson_no : int
        1 … 7.
    step_no : int
        1 … the lesson's number of steps.
    variant : int, default 0
        0 … :data:`MAX_VARIANT`; the same variant is always the same setting.

    Returns
    -------
    Question
        The setting, the exact answer (from :mod:`kl_core.lessons.quantities`),
        the tolerance or the choices, and the texts.

    Raises
    ------
    ValueError
        If a number is out of range (naming ``lesson``, ``step`` or ``variant``).

    Examples
    --------
    >>> q = question(1, 1, 0)
    >>> q.quantity, q.params["q"]
    ('kl_qp', 'normal(0,1)')
    """
    les = lesson(lesson_no)
    if isinstance(step_no, bool) or not isinstance(step_no, int) or not 1 <= step_no <= len(les.steps):
        raise ValueError(f"step must be a whole number from 1 to {len(les.steps)}, got {step_no!r}")
    if isinstance(variant, bool) or not isinstance(variant, int) or not 0 <= variant <= MAX_VARIANT:
        raise ValueError(f"variant must be a whole number from 0 to {MAX_VARIANT}, got {variant!r}")
    st = les.steps[step_no - 1]
    rng = random.Random(_seed(lesson_no, step_no, variant))
    for _ in range(_MAX_TRIES):
        params = st.sample(rng)
        facts = _facts(st, params)
        if st.holds(facts):
            break
    else:  # pragma: no cover - the tests check every variant they serve
        raise ValueError(f"lesson {lesson_no} step {step_no}: no variant near {variant} makes its point")
    answer = facts["answer"]
    words = _doctor_words(params, answer) if lesson_no == 7 else {}
    tol = _tolerance(st.tolerance, answer) if st.kind == "numeric" else None
    fill = {**params, **facts, **words}
    choices = tuple((c.key, _choice_label(c)) for c in st.choices(params))
    if st.kind == "choice" and answer not in dict(choices):
        raise ValueError(f"lesson {lesson_no} step {step_no}: answer {answer!r} is not among the choices")
    return Question(
        lesson=lesson_no,
        step=step_no,
        variant=variant,
        kind=st.kind,
        quantity=st.quantity,
        params=params,
        answer=answer,
        tolerance=tol,
        choices=choices,
        title=marked_message(st.title),
        setup=marked_message(st.setup, **fill),
        prompt=marked_message(st.prompt, **fill),
        explanation=marked_message(st.explanation, **fill),
        facts=facts,
        explore=st.explore(params),
        chart=st.chart,
        setting=st.setting,
    )


_WHERE_WORDS = {
    "reward": N_("a KL term in the reward, option {option}"),
    "loss": N_("a KL term in the loss, option {option}"),
    "none": N_("no KL term at all"),
}


def _doctor_words(params: Params, answer: float | str) -> Params:
    """Lesson 7's texts: the config's text, and the doctor's findings as sentences, not keys."""
    from kl_core.lessons.quantities import defaults_used, example_text

    where = compute("kl_where", params)
    release, defaults = defaults_used(params["config"])
    settings = ", ".join(f"`{k} = {v}`" for k, v in defaults)
    out: Params = {
        "text": example_text(params["config"]).strip(),
        "defaults": marked_message(_DEFAULTS, release=release, settings=settings) if defaults
        else marked_message(_NO_DEFAULTS, release=release),
        "where_words": marked_message(_WHERE_WORDS[str(where)], option=params.get("option", "")),
    }
    if isinstance(answer, str):
        labels = {c.key: c.label for c in (*_WHERE_CHOICES, *_ESTIMATOR_CHOICES, *_GRADIENT_CHOICES)}
        out["answer_words"] = marked_message(labels[answer]) if answer in labels else answer
    return out


def all_questions(variants: int, seed: int = 0, lessons: tuple[int, ...] | None = None) -> list[Question]:
    """Every step of ``lessons`` (all by default), ``variants`` variants each, from variant ``seed`` on.

    Parameters
    ----------
    variants : int
        How many variants per step, ≥ 1.
    seed : int, default 0
        The first variant; variants ``seed`` … ``seed + variants − 1`` (wrapping at :data:`MAX_VARIANT`).
    lessons : tuple of int, optional
        Lesson numbers; all seven if omitted.

    Returns
    -------
    list of Question
        In lesson, step, variant order.
    """
    if isinstance(variants, bool) or not isinstance(variants, int) or variants < 1:
        raise ValueError(f"variants must be a whole number >= 1, got {variants!r}")
    chosen = tuple(range(1, len(LESSONS) + 1)) if lessons is None else lessons
    out = []
    for number in chosen:
        for s in range(1, len(lesson(number).steps) + 1):
            for i in range(variants):
                out.append(question(number, s, (seed + i) % (MAX_VARIANT + 1)))
    return out


def vocabulary() -> tuple[str, ...]:
    """Every quantity a question may ask for (numeric, then choice).

    Returns
    -------
    tuple of str
        The keys of :data:`kl_core.lessons.quantities.NUMERIC_QUANTITIES` and ``CHOICE_QUANTITIES``.
    """
    return (*NUMERIC_QUANTITIES, *CHOICE_QUANTITIES)
