"""What the "Gradients" page says about its numbers (no streamlit).

The page's setting (π_θ, π_ref, the sampler, the reward) is composed here
from its widgets' values; the captions, the headline, the option list of the
``?option=`` link, the cosine and library tables and the command line that
reproduces the page are composed here from :mod:`kl_core.gradients.expected` and
:mod:`kl_core.gradients.flow` results.  Every user-visible sentence is whole,
with named placeholders, and goes through :func:`i18n._`.
"""

from __future__ import annotations

import difflib
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

import numpy as np
import pandas as pd

from i18n import N_, _, ngettext
from kl_core.estimation.distributions import PRACTICAL
from kl_core.gradients.demo import DEMO_REFERENCES, demo_logits, demo_reward
from kl_core.gradients.expected import (
    BASIC_CLAIMS,
    BASIC_OPTIONS,
    GradientRow,
    GradientTable,
    entry_name,
    gradient_entries,
)
from kl_core.gradients.flow import TrainingRun
from kl_core.libraries.crosswalk import EXPECTED_GRADIENTS, CrosswalkEntry, lookup
from lab.format import lam_text, share
from lab.notation import policy_mapping
from lab.notes import Note

__all__ = [
    "AGREE_DRIFT",
    "DEFAULT_DRIFT",
    "DEFAULT_REFERENCE",
    "REFERENCES",
    "angle",
    "answer",
    "apply_edits",
    "drift_help",
    "reference_help",
    "library_caption",
    "pair_caption",
    "pair_names",
    "verdict",
    "DEFAULT_OPTION",
    "LOGIT_SPREAD",
    "GRADIENT_FORMULAS",
    "OPTION_KEY",
    "PAGE_URL",
    "SHORT_OPTION_KEY",
    "SPREAD_REPEATS",
    "TRAINING_OPTIONS",
    "TRAINING_SPEEDUP",
    "TRAINING_STEPS",
    "Setting",
    "chosen_note",
    "cli_command",
    "cos_text",
    "cosine_frame",
    "gradients_link",
    "link_option",
    "headline",
    "k_lambda_intro",
    "lambda_caption",
    "lambda_value_help",
    "library_frame",
    "option_names",
    "option_problem",
    "option_title",
    "panel_names",
    "panel_subtitle",
    "parse_values",
    "resize_values",
    "resolve_option",
    "run_end_text",
    "setting",
    "spread_caption",
    "spread_subtitle",
    "target_words",
    "training_caption",
    "training_frame",
    "training_step",
    "token_frame",
    "values_text",
]

PAGE_URL = "gradients"
#: The link key of the highlighted option; not ``opt``, which the approx_kl page's own
#: option menu uses (a value set for one would reach the other's menu).
OPTION_KEY = "option"
#: Also read from a link (``/gradients?opt=verl:low_var_kl``) when ``option`` is absent; never written.
SHORT_OPTION_KEY = "opt"
#: The option highlighted when the link names none: k3 as a loss, the page's question
#: (verl's ``low_var_kl``, GRPO's default, is k3 in the loss too: view 4 says so).
DEFAULT_OPTION = "k3"
#: π_ref's choices (:data:`kl_core.gradients.demo.DEMO_REFERENCES`), as the menu shows them.
REFERENCES: dict[str, str] = {"uneven": N_("uneven"), "uniform": N_("uniform")}
#: The default π_ref: the two KLs' gradients part at the default drift (issue 20).
DEFAULT_REFERENCE = "uneven"
#: The default drift s, "they disagree": k3's cosine to ∇KL[π_θ‖π_ref] is 0.59 at K = 6.
DEFAULT_DRIFT = 1.0
#: The drift of the "here they agree" preset: π_θ close to π_ref (cosine 0.998 at K = 6).
AGREE_DRIFT = 0.25
#: k3's cosine from which the answer says "nearly", and below which it says "no".
NEARLY, ROUGHLY = 0.99, 0.9
#: Largest difference between two hand-set logits of π_θ.
LOGIT_SPREAD = 100.0
#: N-sample estimates drawn for each spread histogram.
SPREAD_REPEATS = 2000
#: The training picture's options: k2 (k1_score follows the same path on-policy), k3 and k1 as losses.
TRAINING_OPTIONS = ("k2", "k3", "k1")
#: Recorded ascent steps drawn (the chart shows at most 120 per token anyway).
TRAINING_STEPS = 120
#: Step size over the core's default 1/(max R − min R + β): 120 such steps cover the 400 default
#: steps' path, three times faster to compute; where each run ends does not depend on it.
TRAINING_SPEEDUP = 3.0

#: The three on-policy facts of Tang & Munos (arXiv:2506.09477), one formula each.
GRADIENT_FORMULAS = (
    r"\mathbb{E}_{\pi_\theta}\nabla k_1 = 0",  # i18n: ok (LaTeX)
    r"\mathbb{E}_{\pi_\theta}\nabla k_2 = \nabla\,\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]",  # i18n: ok (LaTeX)
    r"\mathbb{E}_{\pi_\theta}\nabla k_3 = \nabla\,\mathrm{KL}[\pi_\mathrm{ref}\|\pi_\theta]",  # i18n: ok (LaTeX)
)

#: Notation the page's sentences typeset (markdown maths), filled into their placeholders.
KL_REVERSE = r"$\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$"
KL_FORWARD = r"$\mathrm{KL}[\pi_\mathrm{ref}\|\pi_\theta]$"
GRAD_REVERSE = r"$\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$"
GRAD_FORWARD = r"$\nabla\mathrm{KL}[\pi_\mathrm{ref}\|\pi_\theta]$"
OLD = r"$\pi_\mathrm{old}$"
OBJECTIVE_REVERSE = r"$\mathbb{E}[R] - \beta\,\mathrm{KL}[\pi\|\pi_\mathrm{ref}]$"
OBJECTIVE_FORWARD = r"$\mathbb{E}[R] - \beta\,\mathrm{KL}[\pi_\mathrm{ref}\|\pi]$"

#: The crosswalk's ``grad_fix`` texts, marked for translation: as the table shows them, and
#: typeset for a sentence (code as code, notation as maths).
GRAD_FIXES: dict[str, str] = {
    N_("--algo.kl.unbiased_gradient keeps the logged value and back-propagates "
       "sg(min(π_θ/π_old, 10))·∇½ log² r, whose expected gradient is ∇KL[π_θ‖π_ref] on-policy, and "
       "off-policy while π_θ/π_old ≤ 10."):
    N_(r"`--algo.kl.unbiased_gradient` keeps the logged value and back-propagates "
       r"$\mathrm{sg}(\min(\pi_\theta/\pi_\mathrm{old}, 10))\cdot\nabla\tfrac12\log^2 r$, whose expected "
       r"gradient is $\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ on-policy, and off-policy while "
       r"$\pi_\theta/\pi_\mathrm{old} \le 10$."),
    N_("kl_loss_type=k3+ (or low_var_kl+, k1+, abs+): same logged value, k2's gradient, "
       "∇KL[π_θ‖π_ref] on-policy."):
    N_(r"`kl_loss_type=k3+` (or `low_var_kl+`, `k1+`, `abs+`): same logged value, k2's gradient, "
       r"$\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ on-policy."),
    N_("algorithm.kl_penalty=kl (k1): a detached k1 in the reward gives ∇KL[π_θ‖π_ref] on-policy."):
    N_(r"`algorithm.kl_penalty=kl` (k1): a detached k1 in the reward gives "
       r"$\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ on-policy."),
    N_("--algo.kl.estimator k1 (the release itself recommends k1 when the KL is not a loss)."):
    N_("`--algo.kl.estimator k1` (the release itself recommends k1 when the KL is not a loss)."),
    N_("PPOConfig.kl_estimator='k1' (the default)"): N_("`PPOConfig.kl_estimator='k1'` (the default)"),
    N_("GRPOConfig.use_bias_correction_kl=True (the default in 1.16.0)"):
    N_("`GRPOConfig.use_bias_correction_kl=True` (the default in 1.16.0)"),
    N_("distillation_loss.loss_mode=k1 with use_policy_gradient=True (the release's recommendation)"):
    N_("`distillation_loss.loss_mode=k1` with `use_policy_gradient=True` (the release's recommendation)"),
}


def fix_markdown(fix: str) -> str:
    """A crosswalk ``grad_fix`` for a sentence: typeset and translated (a new text: as it is)."""
    return _(GRAD_FIXES[fix]) if fix in GRAD_FIXES else fix


_BASIC_TITLES = {
    "k1": N_("k1 as a loss"),
    "k2": N_("k2 as a loss"),
    "k3": N_("k3 as a loss"),
    "k3_pq": N_("k3_pq as a loss"),
    "k1_score": N_("k1_score: k1 as a detached reward"),
    "k_lambda": N_("kλ: score + pathwise"),
}


# --------------------------------------------------------------------------- the setting
@dataclass(frozen=True)
class Setting:
    """The distributions of one page view, as logits; ``sampler`` is None on-policy."""

    policy: tuple[float, ...]
    ref: tuple[float, ...]
    sampler: tuple[float, ...] | None
    reward: tuple[float, ...]

    @property
    def k(self) -> int:
        """Number of tokens."""
        return len(self.policy)


def number_text(value: float) -> str:
    """A number written short where that loses nothing (``0.5``), else in full (``1234.567``): it reads back equal."""
    short = f"{float(value):g}"
    return short if float(short) == float(value) else repr(float(value))


def values_text(values: Sequence[float]) -> str:
    """Numbers as the page's text fields and links write them: ``1,0,-1,0.5``; each reads back equal."""
    return ",".join(number_text(v) for v in values)


def parse_values(text: str, k: int, what: str) -> tuple[tuple[float, ...] | None, str]:
    """``k`` comma-separated finite numbers from ``text``, or ``(None, why)``.

    ``what`` names the field in the message (e.g. "$\\pi_\\theta$'s logits").
    """
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        return None, _("{what} must be numbers separated by commas, got `{text}`").format(
            what=what, text=text)
    if len(values) != k:
        return None, _("{what} need one number per token ({k}), got {n}").format(
            what=what, k=k, n=len(values))
    if not all(math.isfinite(v) for v in values):
        return None, _("{what} must be finite, got `{text}`").format(what=what, text=text)
    return values, ""


def resize_values(text: str, k: int, default: Sequence[float]) -> str:
    """A hand-set vector for ``k`` tokens: cut, or filled up from ``default`` (``""`` stays ``""``).

    Used when the vocabulary size changes, so that hand-set logits or rewards
    follow it instead of becoming unusable.
    """
    if not text.strip():
        return ""
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    parts = parts[:k] + [f"{float(v):g}" for v in list(default)[len(parts):k]]
    return ",".join(parts)


def setting(
    k: int,
    drift: float,
    logits_text: str,
    on_policy: bool,
    old_drift: float,
    reward_text: str,
    reference: str = DEFAULT_REFERENCE,
) -> tuple[Setting, list[Note]]:
    """The view's distributions from the widgets, and a warning for each hand-set field that cannot be used.

    π_ref is ``reference``'s (:data:`kl_core.gradients.demo.DEMO_REFERENCES`); π_θ
    moves ``drift`` from it along that reference's direction
    (:func:`kl_core.gradients.demo.demo_logits`) unless ``logits_text`` sets its
    logits; an older sampler π_old moves ``old_drift`` along the same direction.
    """
    if reference not in DEMO_REFERENCES:
        raise ValueError(f"reference must be one of {sorted(DEMO_REFERENCES)}, got {reference!r}")
    notes: list[Note] = []
    policy = tuple(demo_logits(k, drift, reference=reference).tolist())
    if logits_text.strip():
        typed, why = parse_values(logits_text, k, _(r"$\pi_\theta$'s logits"))
        if typed is not None and max(typed) - min(typed) > LOGIT_SPREAD:
            why = _(r"$\pi_\theta$'s logits may differ by at most {limit:g} (beyond that softmax "
                    "puts probabilities below exp(−{limit:g}) on some tokens and their gradients "
                    "vanish in rounding), got {spread:g}").format(limit=LOGIT_SPREAD, spread=max(typed) - min(typed))
            typed = None
        if typed is None:
            notes.append(Note("warning", _(r"{why}; the drift slider sets $\pi_\theta$ instead.").format(why=why),
                              ":material/warning:"))
        else:
            policy = typed
    reward = tuple(demo_reward(k).tolist())
    if reward_text.strip():
        typed, why = parse_values(reward_text, k, _("The rewards"))
        if typed is None:
            notes.append(Note("warning", _("{why}; the training picture uses the default reward "
                                           "instead.").format(why=why), ":material/warning:"))
        else:
            reward = typed
    sampler = None if on_policy else tuple(demo_logits(k, old_drift, reference=reference).tolist())
    return Setting(policy, tuple(demo_logits(k, 0.0, reference=reference).tolist()), sampler, reward), notes


def drift_help(reference: str, k: int) -> str:
    """The drift slider's help: π_ref and the direction v of ``reference`` at ``k`` tokens, in numbers."""
    ref = demo_logits(k, 0.0, reference=reference)
    direction = demo_logits(k, 1.0, reference=reference) - ref
    if not np.any(ref):
        return _(r"$\pi_\mathrm{{ref}}$ is uniform and $\pi_\theta = \mathrm{{softmax}}(s\,v)$ with "
                 r"$v = ({v})$. At $s = 0$, $\pi_\theta = \pi_\mathrm{{ref}}$.").format(
            v=", ".join(f"{x:g}" for x in direction))
    return _(r"$\pi_\mathrm{{ref}} = \mathrm{{softmax}}(\ell_\mathrm{{ref}})$ with $\ell_\mathrm{{ref}} = ({ref})$, "
             r"and $\pi_\theta = \mathrm{{softmax}}(\ell_\mathrm{{ref}} + s\,v)$ with $v = ({v})$: for $s > 0$, "
             r"$\pi_\theta$ moves mass from token 0 to token 1, a token $\pi_\mathrm{{ref}}$ makes rare. "
             r"At $s = 0$, $\pi_\theta = \pi_\mathrm{{ref}}$.").format(
        ref=", ".join(f"{x:g}" for x in ref), v=", ".join(f"{x:g}" for x in direction))


def reference_help(k: int) -> str:
    """The π_ref menu's help: which tokens the uneven π_ref likes at ``k`` tokens (its pattern repeats)."""
    ref = demo_logits(k, 0.0, reference="uneven")
    liked = [i for i in range(k) if ref[i] == ref.max()]
    pattern = ", ".join(f"{x:g}" for x in DEMO_REFERENCES["uneven"][0])
    return ngettext("Uneven: π_ref likes token {tokens} and makes the others rare, token 1 among them "
                    "(its logits repeat the pattern {pattern}). Uniform: the lessons' setting.",
                    "Uneven: π_ref likes tokens {tokens} and makes the others rare, token 1 among them "
                    "(its logits repeat the pattern {pattern}). Uniform: the lessons' setting.",
                    len(liked)).format(tokens=", ".join(map(str, liked)), pattern=pattern)


def _probs(logits: Sequence[float]) -> np.ndarray:
    """softmax(logits), computed in log space."""
    lg = np.asarray(logits, dtype=float)
    return np.exp(lg - np.logaddexp.reduce(lg))


def token_frame(s: Setting) -> pd.DataFrame:
    """The setting token by token: π_ref, π_θ's logit and probability, π_old's, and the reward."""
    frame = {
        _("token"): list(range(s.k)),
        _("π_ref"): _probs(s.ref),
        _("logit of π_θ"): list(s.policy),
        _("π_θ"): _probs(s.policy),
    }
    if s.sampler is not None:
        frame[_("π_old")] = _probs(s.sampler)
    frame[_("reward R")] = list(s.reward)
    return pd.DataFrame(frame)


def apply_edits(s: Setting, edits: Mapping[int, Mapping[str, float]]) -> dict[str, str]:
    """New ``logits``/``rew`` link values from edits of :func:`token_frame` (``{row: {column: value}}``).

    Only the edited vector is returned; an edited logit sets all of π_θ's
    logits by hand (the drift slider stops moving it).
    """
    logit_col, reward_col = _("logit of π_θ"), _("reward R")
    out = {}
    for col, key, start in ((logit_col, "logits", s.policy), (reward_col, "rew", s.reward)):
        changed = {int(i): cells[col] for i, cells in edits.items() if cells.get(col) is not None}
        if changed:
            values = list(start)
            for i, v in changed.items():
                values[i] = float(v)
            out[key] = values_text(values)
    return out


# --------------------------------------------------------------------------- the ?option= link
def option_names() -> list[str]:
    """Every option the page can highlight: the basic ones, then each crosswalk entry with a gradient."""
    return [*BASIC_OPTIONS, *(entry_name(e) for e in gradient_entries())]


def resolve_option(raw: str) -> str | None:
    """The option name a link means, accepting aliases and any case of the library name.

    ``verl:k3`` is verl's loss option ``low_var_kl`` (``k3`` is its alias);
    ``openrlhf:k3:reward`` is ``OpenRLHF:k3:reward``; ``K3`` is ``k3``.  None if
    nothing matches.
    """
    names = option_names()
    # No option contains a space, but a '+' typed into a link arrives as one (verl:k3+).
    text = raw.replace(" ", "+")
    if text in names:
        return text
    if text.lower() in BASIC_OPTIONS:
        return text.lower()
    lib, _colon, rest = text.partition(":")
    if rest.endswith((":loss", ":reward")):
        option, _colon, acts_on = rest.rpartition(":")
    else:
        option, acts_on = rest, "loss"
    try:
        entry = lookup(lib, option, acts_on=acts_on)
    except ValueError:
        return None
    name = entry_name(entry)
    return name if name in names else None


def link_option(option: str | None, opt: str | None) -> tuple[str | None, str]:
    """The option a link names, and the text of the link's value when it names none.

    ``option`` is the link's ``?option=``, ``opt`` its ``?opt=`` (read only when
    there is no ``option``).  Returns ``(name, "")`` for a usable value (an
    alias resolved), ``(None, raw)`` for an unusable one, ``(None, "")`` if the
    link names no option.
    """
    raw = option if option else opt
    if not raw:
        return None, ""
    name = resolve_option(raw)
    return (name, "") if name is not None else (None, raw)


def option_problem(raw: str) -> str:
    """What the ``?option=`` note says a link's option must be, with the closest names."""
    names = option_names()
    close = difflib.get_close_matches(raw, names, n=3, cutoff=0.5)
    text = _("a KL option with a gradient: k1, k2, k3, k3_pq, k1_score, k_lambda, or a library "
             "option written LIBRARY:OPTION, such as verl:low_var_kl, from the table at the "
             "bottom of the page")
    if close:
        text = _("{allowed}; did you mean {names}?").format(
            allowed=text, names=", ".join(f"`{n}`" for n in close))
    return text


def gradients_link(entry: CrosswalkEntry) -> str | None:
    """The link to this page with ``entry`` highlighted, or None for a metric (no gradient).

    Relative to the page it is on (``gradients?option=verl:low_var_kl``), so that
    it also works where the app is served under a path prefix.
    """
    if entry.grad_mode == "none":
        return None
    return "{page}?{key}={name}".format(page=PAGE_URL, key=OPTION_KEY,
                                         name=quote(entry_name(entry), safe=":/"))


def panel_names(chosen: str) -> list[str]:
    """The options drawn in views 1 and 2: the chosen one first, then the basic ones."""
    return [chosen, *(n for n in BASIC_OPTIONS if n != chosen)]


def option_title(row: GradientRow) -> str:
    """A panel's title: the option, and where its value goes."""
    if row.entry is None:
        return _(_BASIC_TITLES[row.name])
    e = row.entry
    if e.acts_on == "reward":
        return _("{library} {option} (reward)").format(library=e.library, option=e.option)
    return _("{library} {option} (loss)").format(library=e.library, option=e.option)


# --------------------------------------------------------------------------- words for numbers
def cos_text(x: float | None) -> str:
    """A cosine with its sign and three decimals, ``—`` when it is undefined (a zero vector)."""
    return "—" if x is None else f"{x:+.3f}"


def target_words(row: GradientRow, on_policy: bool) -> str:
    """What the row's expected gradient is, in words: reverse KL, forward KL, zero, or why it is biased."""
    if row.target != "mixed":
        return _(EXPECTED_GRADIENTS[row.target].name)
    on_claim = row.entry.grad_target if row.entry is not None else BASIC_CLAIMS[row.name]
    clamps = row.clamped_mass > 0
    stale = not on_policy and on_claim != "mixed"  # clean on-policy: the old samples bias it
    if clamps and row.claim not in (None, "mixed"):
        return _("biased by clamps ({share} of sampled tokens)").format(share=share(row.clamped_mass))
    if stale and clamps:
        return _("biased by off-policy samples and clamps")
    if stale:
        return _("biased by off-policy samples")
    return _(EXPECTED_GRADIENTS["mixed"].name)


def panel_subtitle(row: GradientRow, on_policy: bool) -> list[str]:
    """Three lines under a panel's title: what the gradient is, and its cosine to each true gradient."""
    return [
        _("expected gradient: {what}").format(what=target_words(row, on_policy)),
        _("cos to ∇ reverse KL: {cos}").format(cos=cos_text(row.cos_reverse)),
        _("cos to ∇ forward KL: {cos}").format(cos=cos_text(row.cos_forward)),
    ]


def angle(cos: float) -> float:
    """The angle in degrees whose cosine is ``cos`` (clipped to [−1, 1] against rounding)."""
    return math.degrees(math.acos(min(1.0, max(-1.0, cos))))


def verdict(cos: float) -> str:
    """The answer's first words for k3's cosine to ∇KL[π_θ‖π_ref]: nearly, roughly, or no.

    Decided on the cosine as printed (:func:`cos_text`), so "+0.900" is never called "No."
    """
    cos = round(cos, 3)
    if cos >= NEARLY:
        return _("**Nearly, here.**")
    if cos >= ROUGHLY:
        return _("**Roughly, not exactly.**")
    return _("**No.**")


def _zero(table: GradientTable) -> bool:
    """π_θ = π_ref: both KLs' gradients are zero (an option's need not be, off-policy)."""
    return not np.any(table.true_reverse) and not np.any(table.true_forward)


#: An expected gradient shorter than this is zero (rounding leaves ~1e-17 where it is exactly 0).
ZERO_LENGTH = 1e-12


def _moves(row) -> bool:
    return float(np.linalg.norm(row.expected_grad)) > ZERO_LENGTH


def _every_option_zero(table: GradientTable) -> bool:
    return not any(_moves(row) for row in table.rows)


#: π_θ = π_ref with tokens from π_old: options that do not reweight by π_θ/π_old still push.
OFF_POLICY_AT_REF = N_(
    r"**Here $\pi_\theta = \pi_\mathrm{{ref}}$**, so both KLs' gradients are zero; but the tokens "
    r"come from $\pi_\mathrm{{old}}$, and {names} still have a nonzero expected gradient: a loss "
    r"built on them moves $\pi_\theta$ although there is no KL to reduce (see the table)."
)


def _off_policy_at_ref(table: GradientTable) -> str:
    moving = [row.name for row in table.rows if _moves(row)]
    shown = ", ".join(moving[:4]) + (", …" if len(moving) > 4 else "")
    return _(OFF_POLICY_AT_REF).format(names=shown)


def opening_caption(table: GradientTable) -> str:
    """The sentence under the page's question that maps π_θ, π_ref (and π_old) to q and p, and
    what k3 estimates from the tokens at hand: on-policy the KL without bias; off-policy its
    average under π_old, beside the KL it no longer averages to in general."""
    if table.on_policy:
        return " ".join((policy_mapping("theta"), _(
            r"$k_3 = (r - 1) - \log r$ estimates $\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ without bias.")))
    mean, kl = f"{table.k3_sampler_mean:.4g}", f"{table.kl_reverse:.4g}"
    if mean == kl:
        more = _(r"Averaged under {old}, $k_3 = (r - 1) - \log r$ still comes to {kl_name} = {kl} here; "
                 "it does at every setting on-policy.")
    else:
        more = _(r"Averaged under {old}, $k_3 = (r - 1) - \log r$ comes to {mean} here, not {kl_name} = {kl}: "
                 "it estimates that KL without bias only on-policy.")
    return " ".join((policy_mapping("old"), more.format(old=OLD, kl_name=KL_REVERSE, kl=kl, mean=mean)))


def answer(table: GradientTable) -> str:
    """The page's answer: where k3 as a loss points, against ∇KL[π_θ‖π_ref] and k2 as a loss.

    Chosen from the numbers on screen: k3's and k2's cosines to
    ∇KL[π_θ‖π_ref] (and their angles), on-policy or with tokens from π_old.
    """
    if _zero(table) and not _every_option_zero(table):
        return _off_policy_at_ref(table)
    if _zero(table):
        return _(r"**Here $\pi_\theta = \pi_\mathrm{ref}$**, so both KLs' gradients are zero, and so is "
                 "every option's: move the drift $s$ (or, with logits typed by hand, change them).")
    c3, c2 = table.row("k3").cos_reverse, table.row("k2").cos_reverse
    if c3 is None or c2 is None:  # a zero expected gradient although the KL's is not
        return _("As a loss, k3's expected gradient has cosine {c3} to {grad_rev}, k2's {c2} "
                 "(— : that expected gradient is zero to rounding, so it has no direction).").format(
            c3=cos_text(c3), c2=cos_text(c2), grad_rev=GRAD_REVERSE)
    if table.on_policy:
        return _("{verdict} As a loss, k3's expected gradient is at an angle of {a3:.0f}° to {grad_rev} "
                 "(cosine {c3}): it is {grad_fwd}, the gradient of the *other* KL. k2 as a loss gives "
                 "{grad_rev} itself (cosine {c2}).").format(
            verdict=verdict(c3), a3=angle(c3), c3=cos_text(c3), c2=cos_text(c2),
            grad_rev=GRAD_REVERSE, grad_fwd=GRAD_FORWARD)
    return _("{verdict} With tokens from {old}, k3's expected gradient as a loss is at an angle of {a3:.0f}° "
             "to {grad_rev} (cosine {c3}), and k2's at {a2:.0f}° (cosine {c2}): off the policy, k2's is "
             "not that gradient in general either.").format(
        verdict=verdict(c3), old=OLD, a3=angle(c3), a2=angle(c2), c3=cos_text(c3), c2=cos_text(c2),
        grad_rev=GRAD_REVERSE)


def pair_names(table: GradientTable) -> list[str]:
    """The legend of the first chart: k2 and k3 as losses with their cosines, and their difference."""
    return [
        _("k2 as a loss (cos {c})").format(c=cos_text(table.row("k2").cos_reverse)),
        _("k3 as a loss (cos {c})").format(c=cos_text(table.row("k3").cos_reverse)),
        _("difference k3 − k2"),
    ]


def pair_caption(table: GradientTable) -> str:
    """What the first chart shows, and where to look."""
    text = _(r"Bars: the exact expected gradient in each logit $\theta_x$ of k2 and of k3 used as a loss, and in "
             "grey their difference. Ticks: {grad_rev}, the gradient of the KL the penalty means; "
             "cos is each option's cosine to it.").format(grad_rev=GRAD_REVERSE)
    if table.on_policy and not _zero(table):
        text += " " + _("On-policy the k2 bars end exactly on the ticks.")
    return text


def library_caption(table: GradientTable, chosen: str) -> str:
    """The caption of view 4's table: the star, where the highlighted option is a library's."""
    text = _("Same value, different gradient: read the option's row before you trust a KL loss.")
    if table.row(chosen).entry is not None:
        text = _("★ marks {name}.").format(name=chosen) + " " + text
    return text


def chosen_note(table: GradientTable, name: str) -> Note:
    """What the highlighted option does here, with the library's fix where it has one."""
    row = table.row(name)
    if _zero(table) and _moves(row):
        return Note("warning", _(r"**{title}**: at $\pi_\theta = \pi_{{\mathrm{{ref}}}}$ both KL gradients "
                                 r"are zero, but with tokens from $\pi_\mathrm{{old}}$ this option's "
                                 "expected gradient is not.").format(title=option_title(row)),
                    ":material/warning:")
    if _zero(table) and _every_option_zero(table):
        return Note("info", _(r"**{title}**: at $\pi_\theta = \pi_{{\mathrm{{ref}}}}$ every option's "
                              "expected gradient is zero.").format(title=option_title(row)), ":material/info:")
    if _zero(table):  # this one reweights by π_θ/π_old, others do not (the headline names them)
        return Note("info", _(r"**{title}**: at $\pi_\theta = \pi_{{\mathrm{{ref}}}}$ this option's expected "
                              "gradient is zero, as both KL gradients are, even with tokens from "
                              r"$\pi_\mathrm{{old}}$; other options' are not (see the table).").format(
                                  title=option_title(row)), ":material/info:")
    what = target_words(row, table.on_policy)
    text = _("**{title}**: its expected gradient here is **{what}** (cosine {rev} to {grad_rev}, "
             "{fwd} to {grad_fwd}).").format(title=option_title(row), what=what,
                                                  rev=cos_text(row.cos_reverse), fwd=cos_text(row.cos_forward),
                                                  grad_rev=GRAD_REVERSE, grad_fwd=GRAD_FORWARD)
    if row.entry is not None and row.entry.grad_fix and row.target != "reverse_kl":
        text += " " + _("The library's fix: {fix}").format(fix=fix_markdown(row.entry.grad_fix))
    good = row.target == "reverse_kl"
    return Note("success" if good else "warning", text,
                ":material/check_circle:" if good else ":material/warning:")


def headline(table: GradientTable) -> Note:
    """The message at a glance: which basic option's gradient is which, at this setting."""
    if _zero(table) and not _every_option_zero(table):
        return Note("warning", _off_policy_at_ref(table), ":material/history:")
    if _zero(table):
        return Note("info", _(r"$\pi_\theta$ equals $\pi_\mathrm{ref}$ here, so both KL gradients "
                              "are zero and every option's expected gradient is zero too. Move the "
                              "drift slider (or, with logits typed by hand, change them)."),
                    ":material/info:")
    if table.on_policy:
        k2, k3 = table.row("k2"), table.row("k3")
        cosines = (k3.cos_forward, k3.cos_reverse, k2.cos_reverse)
        numbers = dict(kl_rev=KL_REVERSE, kl_fwd=KL_FORWARD, grad_rev=GRAD_REVERSE, kl=table.kl_reverse,
                       c3=cos_text(k3.cos_forward), c3r=cos_text(k3.cos_reverse), c2=cos_text(k2.cos_reverse))
        if None in cosines or k2.target != "reverse_kl" or k3.target != "forward_kl":
            # a zero vector somewhere (rounding): say what each gradient is, and what — means
            return Note("info", _(
                "**Same value, different gradient.** k1 and k3 both estimate {kl_rev} = {kl:.4g} without "
                "bias, yet in a loss their expected gradients differ. Here k3's is {what3} (cosine {c3} to "
                "the gradient of {kl_fwd}, {c3r} to {grad_rev}) and k2's is {what2} (cosine {c2} to "
                "{grad_rev}); — marks a cosine with a vector that is zero to rounding.").format(
                what3=target_words(k3, True), what2=target_words(k2, True), **numbers), ":material/lightbulb:")
        return Note(
            "info",
            _("**Same value, different gradient.** k1 and k3 both estimate {kl_rev} = "
              "{kl:.4g} without bias, yet in a loss k1's expected gradient is zero and k3's is the "
              "gradient of the *other* KL, {kl_fwd} (cosine {c3} to it, {c3r} to the "
              "one you meant). k2 in a loss, or k1 as a detached reward (k1_score), gives "
              "{grad_rev} (cosine {c2}).").format(**numbers),
            ":material/lightbulb:",
        )
    k2 = table.row("k2")
    restoring = [f"`{row.name}`" for row in table.rows if row.entry is not None and row.target == "reverse_kl"]
    if k2.cos_reverse is None:
        text = _("**Tokens from an older policy.** With samples from {old} none of the basic options "
                 "is unbiased any more: k2's expected gradient is {what} here, so its cosine to {grad_rev} "
                 "is undefined (—).").format(old=OLD, grad_rev=GRAD_REVERSE, what=target_words(k2, False))
    else:
        text = _("**Tokens from an older policy.** With samples from {old} none of the basic options "
                 "is unbiased any more: k2's expected gradient has cosine {c2} to {grad_rev}.").format(
            old=OLD, grad_rev=GRAD_REVERSE, c2=cos_text(k2.cos_reverse))
    if restoring:
        text += " " + _("At this setting these library options give it: {names}; see the table at the "
                        "bottom.").format(names=", ".join(restoring))
    else:
        text += " " + _("At this setting no library option gives it; see the table at the bottom.")
    return Note("warning", text, ":material/history:")


def cosine_frame(table: GradientTable, names: Sequence[str]) -> pd.DataFrame:
    """The compact table under view 1: cosines, sizes and what each gradient is.

    The last columns, the expected gradient per logit, are the numbers behind
    the bars (in the CSV; the page shows the first six columns).
    """
    rows = [table.row(n) for n in names]
    frame = {
        _("option"): [r.name for r in rows],
        _("expected gradient is"): [target_words(r, table.on_policy) for r in rows],
        _("cos to ∇ reverse KL"): [cos_text(r.cos_reverse) for r in rows],
        _("cos to ∇ forward KL"): [cos_text(r.cos_forward) for r in rows],
        # a zero gradient is zero up to rounding (1e-17): show it as 0
        _("‖E g‖"): [0.0 if r.target == "zero" else float(np.linalg.norm(r.expected_grad)) for r in rows],
        _("spread per token"): [r.grad_spread for r in rows],
    }
    for x in range(table.k):
        frame[_("E g, logit {x}").format(x=x)] = [
            0.0 if r.target == "zero" else float(r.expected_grad[x]) for r in rows]
    return pd.DataFrame(frame)


def _fix(row: GradientRow, on_policy: bool, true_zero: bool = False) -> str:
    """The crosswalk's fix; "not needed" only where the row gives ∇KL[π_θ‖π_ref] here (which is
    its zero where ``true_zero``, π_θ = π_ref: ∇KL[π_θ‖π_ref] = 0 and ``classify`` says "zero").

    An option that gives it on-policy with clamps inactive, but not here (tokens from π_old, or
    clamps that act), has no fix in the crosswalk for that case.
    """
    e = row.entry
    if e is not None and e.grad_fix:
        return _(e.grad_fix)
    if e is None or e.grad_target != "reverse_kl":
        return "—"
    if row.target == "reverse_kl" or (true_zero and row.target == "zero"):
        return _("not needed")
    if not on_policy:
        return _("none in the crosswalk for off-policy samples")
    if row.clamped_mass > 0:
        return _("none in the crosswalk for clamped tokens")
    return _("none in the crosswalk for this setting")


def library_frame(table: GradientTable, chosen: str = "") -> pd.DataFrame:
    """View 4: every library option with a gradient, what it is here and in the crosswalk, and the fix.

    The option named ``chosen`` comes first, marked with a star.
    """
    rows = [r for r in table.rows if r.entry is not None]
    rows = [r for r in rows if r.name == chosen] + [r for r in rows if r.name != chosen]
    return pd.DataFrame({
        "": ["★" if r.name == chosen else "" for r in rows],
        _("library"): [r.library for r in rows],
        _("option"): [r.option for r in rows],
        _("acts on"): [r.entry.acts_on for r in rows],
        _("gradient here"): [target_words(r, table.on_policy) for r in rows],
        _("cos to ∇ reverse KL"): [cos_text(r.cos_reverse) for r in rows],
        _("on-policy"): [_(EXPECTED_GRADIENTS[r.entry.grad_target].name) for r in rows],
        _("from π_old"): [_(EXPECTED_GRADIENTS[r.entry.grad_target_off_policy].name)
                          if r.entry.grad_target_off_policy else "—" for r in rows],
        _("the library's fix"): [_fix(r, table.on_policy, not table.true_reverse.any()) for r in rows],
        _("name in links"): [r.name for r in rows],
    })


# --------------------------------------------------------------------------- the spread
def _shown(x: float, scale: float) -> float:
    """``x``, or 0 if it is rounding noise next to ``scale`` (a zero mean computed as 1e-17)."""
    return 0.0 if abs(x) <= 1e-12 * scale else x


def spread_subtitle(mean: float, sd: float, mc_mean: float, mc_sd: float) -> list[str]:
    """Two lines under a spread panel: Monte Carlo, then exact (mean ± standard deviation)."""
    scale = max(abs(mean), sd, 1e-300)
    return [
        _("Monte Carlo: {m:.3g} ± {s:.3g}").format(m=_shown(mc_mean, scale), s=mc_sd),
        _("exact: {m:.3g} ± {s:.3g}").format(m=_shown(mean, scale), s=sd),
    ]


def spread_caption(n: int, repeats: int, norm_reverse: float) -> str:
    """What to look at in view 2."""
    return _("Each histogram: {repeats:,} estimates, each the mean gradient of N = {n:,} sampled "
             "tokens, projected on the direction of {grad_rev}. The solid line is where "
             "an unbiased estimate of that gradient centres ({norm:.3g}); the grey band is the exact "
             "mean ± one standard deviation. Same tokens for every option.").format(
        repeats=repeats, n=n, norm=norm_reverse, grad_rev=GRAD_REVERSE)


def _minus(text: str) -> str:
    """A formatted number for prose: the Unicode minus "−", not the hyphen (outside LaTeX)."""
    return text.replace("-", "−")


def _lam(x: float) -> str:
    """A λ for prose and labels: :func:`lam_text` with the Unicode minus (``λ = −0.56``, not ``-0.56``)."""
    return _minus(lam_text(x))


def k_lambda_intro(table: GradientTable, lam_lo: float, lam_hi: float) -> str:
    """View 2's opening: kλ's value is the KL for every λ only on-policy; off it, its mean over
    the λ slider (``lam_lo`` to ``lam_hi``) from the numbers here."""
    loss = _(r"In a loss as $\mathrm{sg}(k_\lambda)\log\pi_\theta + k_\lambda$ (score function plus pathwise "
             r"term), its expected gradient on-policy is $\nabla\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$ for "
             "every λ too: on-policy, λ changes only how much one estimate scatters.")
    if table.on_policy:
        return " ".join((_(r"kλ is $-\log r + \lambda\,(r - 1)$ (the Control variates page): on-policy, the "
                           r"same unbiased value for every λ, since $\mathbb{E}[r - 1] = 0$."), loss))
    lo, hi = table.k_lambda_sampler_mean(lam_lo), table.k_lambda_sampler_mean(lam_hi)
    # prose numbers with the Unicode minus; gap is typeset in LaTeX, which draws its own
    numbers = dict(old=OLD, kl_name=KL_REVERSE, kl=_minus(f"{table.kl_reverse:.4g}"), lo=_minus(f"{lo:.4g}"),
                   hi=_minus(f"{hi:.4g}"), lam_lo=_minus(f"{lam_lo:g}"), lam_hi=_minus(f"{lam_hi:g}"),
                   gap=f"{table.k_lambda_sampler_mean(1.0) - table.k_lambda_sampler_mean(0.0):.4g}")
    if numbers["lo"] == numbers["hi"]:
        value = _(r"kλ is $-\log r + \lambda\,(r - 1)$ (the Control variates page). On-policy it has the same "
                  r"unbiased value for every λ, since $\mathbb{{E}}[r - 1] = 0$ there. With tokens from {old}, "
                  r"$\mathbb{{E}}[r - 1] = {gap}$ here, and kλ's average is {lo} to the digits shown for every λ "
                  "from {lam_lo} to {lam_hi}, while {kl_name} = {kl}.").format(**numbers)
    else:
        value = _(r"kλ is $-\log r + \lambda\,(r - 1)$ (the Control variates page). On-policy it has the same "
                  r"unbiased value for every λ, since $\mathbb{{E}}[r - 1] = 0$ there. With tokens from {old}, "
                  r"$\mathbb{{E}}[r - 1] = {gap}$ here, so kλ's average moves with λ: {lo} at λ = {lam_lo}, "
                  "{hi} at λ = {lam_hi}, while {kl_name} = {kl}.").format(**numbers)
    return " ".join((value, loss))


def lambda_buttons(table: GradientTable, lo: float, hi: float) -> list[tuple[str, float, str, str, bool]]:
    """The two buttons under the λ slider: (key, λ to set, label, help, disabled), for λ_grad and the value's λ*.

    Only the label writes λ as prose (with the Unicode minus); the key and the λ to set are what the page uses.

    A button is disabled where its λ is off the slider (``lo`` … ``hi``), and λ*'s where every λ is λ*
    (π_θ = π_ref).
    """
    any_lam = table.lam_value_any
    return [
        ("grad", table.lam_grad_opt, _("λ_grad = {lam}").format(lam=_lam(table.lam_grad_opt)),
         _("The λ whose gradient estimate has the least spread (the chart below)."),
         not lo <= table.lam_grad_opt <= hi),
        ("value", table.lam_value_opt,
         _("λ*: any λ here") if any_lam else _("λ* = {lam}").format(lam=_lam(table.lam_value_opt)),
         lambda_value_help(table), any_lam or not lo <= table.lam_value_opt <= hi),
    ]


def _same_lambda(table: GradientTable) -> bool:
    """λ_grad and the value's λ* print the same."""
    return lam_text(table.lam_grad_opt) == lam_text(table.lam_value_opt)


def lambda_value_help(table: GradientTable) -> str:
    """The λ* button's help: the value's λ (from on-policy tokens), and whether it is λ_grad here."""
    if table.lam_value_any:
        return _("The λ whose *value* estimate of the KL, from on-policy tokens, has the least variance "
                 "(Control variates page); here every λ: with π_θ = π_ref every kλ value is 0.")
    if _same_lambda(table):
        return _("The λ whose *value* estimate of the KL, from on-policy tokens, has the least variance "
                 "(Control variates page); here it is also λ_grad, the λ whose gradient estimate has "
                 "the least spread.")
    return _("The λ whose *value* estimate of the KL, from on-policy tokens, has the least variance "
             "(Control variates page); here it is not the best λ for the gradient, λ_grad = {grad}.").format(
        grad=_lam(table.lam_grad_opt))


#: The λ chart widens past the slider to show λ_grad and λ*, but not past ±this: a λ further out is
#: named in the caption only.
LAM_CHART_REACH = 10.0


def lambda_chart_range(table: GradientTable, lo: float, hi: float) -> tuple[float, float]:
    """The λ range of the spread chart: the slider's (``lo`` … ``hi``), widened with a margin to show
    λ_grad and the value's λ* where they lie off it (up to ±:data:`LAM_CHART_REACH`)."""
    shown = [v for v in (table.lam_grad_opt, lambda_value_mark(table))
             if math.isfinite(v) and abs(v) <= LAM_CHART_REACH]
    return min([lo, *(v - 0.3 for v in shown)]), max([hi, *(v + 0.3 for v in shown)])


def lambda_value_mark(table: GradientTable) -> float:
    """Where the λ chart marks the value's λ*: nowhere (nan) where every λ is λ* (π_θ = π_ref)."""
    return math.nan if table.lam_value_any else table.lam_value_opt


def lambda_caption(table: GradientTable) -> str:
    """What to look at in the λ chart: the variance is the parabola, the chart its square root."""
    same = _same_lambda(table)
    if table.on_policy:
        first = _("kλ's gradient is unbiased for every λ, but its variance is a parabola in λ (the chart "
                  "draws its square root, the spread).")
    else:
        first = _(r"With tokens from $\pi_\mathrm{old}$, kλ's expected gradient changes with λ (it is "
                  "unbiased for every λ only on-policy), and its variance is a parabola in λ (the chart draws "
                  "its square root, the spread).")
    if table.lam_value_any:
        second = _("Both are least at λ = {grad}. The value's λ* is no single λ here: with π_θ = π_ref every "
                   "kλ value is 0, whatever λ.")
    elif table.on_policy and same:
        second = _("Both are least at λ = {grad}, which here is also the value's λ*, the λ that makes "
                   "the KL's *value* estimate least noisy.")
    elif table.on_policy:
        second = _("Both are least at λ = {grad}, not at the value's λ* = {value}, which makes "
                   "the KL's *value* estimate least noisy.")
    elif same:
        second = _("Both are least at λ = {grad}, which here is also λ*, the λ that makes the KL's "
                   "*value* estimate from on-policy tokens least noisy.")
    else:
        second = _("Both are least at λ = {grad}, not at λ* = {value}, the λ that makes the KL's "
                   "*value* estimate from on-policy tokens least noisy.")
    second = second.format(grad=_lam(table.lam_grad_opt), value=_lam(table.lam_value_opt))
    return "{first} {second}".format(first=first, second=second)


# --------------------------------------------------------------------------- the training picture
#: Two distributions are the same point when no probability differs by this much.
SAME_POINT = 1e-6


def _same_point(a: np.ndarray, b: np.ndarray) -> bool:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max()) < SAME_POINT


def _optima_coincide(optima: tuple[np.ndarray, np.ndarray]) -> bool:
    """The two analytic optima are one point (to :data:`SAME_POINT`): with a constant reward both are π_ref."""
    return _same_point(*optima)


def _ends_at(run: TrainingRun, optima: tuple[np.ndarray, np.ndarray]) -> str | None:
    """Which analytic optimum a run's fixed point is, if either (to 1e-6 in every probability).

    ``"both"`` where it is one of them and the two coincide (:func:`_optima_coincide`).
    """
    if run.fixed_point is None:
        return None
    hits = [key for key, opt in zip(("reverse_kl", "forward_kl"), optima, strict=True)
            if _same_point(run.fixed_point, opt)]
    if hits and _optima_coincide(optima):
        return "both"
    return hits[0] if hits else "other"


def run_end_text(run: TrainingRun, optima: tuple[np.ndarray, np.ndarray]) -> list[str]:
    """How one training run ends, in one or two short lines."""
    where = _ends_at(run, optima)
    if where == "both":
        return [_("ends at both optima ●○"), _("(the two coincide here)")]
    if where == "reverse_kl":
        return [_("ends at the reverse-KL optimum ●")]
    if where == "forward_kl":
        return [_("ends at the forward-KL optimum ○")]
    if where == "other":
        return [_("ends at a fixed point of its own,"), _("neither optimum")]
    if run.vanished:
        kept = [i for i in range(run.limit.size) if i not in run.vanished]
        return [_("no fixed point: tokens {gone} → 0,").format(gone=", ".join(map(str, run.vanished))),
                _("the mass ends on token {kept}").format(kept=", ".join(map(str, kept)))]
    return [_("no fixed point found: tokens have"),
            _("not settled (max |h − E h| = {res:.2g})").format(res=run.residual)]


def training_caption(runs: Mapping[str, TrainingRun], optima: tuple[np.ndarray, np.ndarray]) -> str:
    """What to look at in view 3."""
    both_opt = [n for n, r in runs.items() if _ends_at(r, optima) == "both"]
    rev_opt = [n for n, r in runs.items() if _ends_at(r, optima) == "reverse_kl"]
    fwd_opt = [n for n, r in runs.items() if _ends_at(r, optima) == "forward_kl"]
    parts = []
    if both_opt:
        parts.append(ngettext("{names} ends at the optimum of {objective_rev} and at that of {objective_fwd}, "
                              "which coincide here (● and ○)",
                              "{names} end at the optimum of {objective_rev} and at that of {objective_fwd}, "
                              "which coincide here (● and ○)",
                              len(both_opt)).format(names=", ".join(both_opt), objective_rev=OBJECTIVE_REVERSE,
                                                    objective_fwd=OBJECTIVE_FORWARD))
    if rev_opt:
        parts.append(ngettext("{names} ends at the optimum of {objective} (●)",
                              "{names} end at the optimum of {objective} (●)",
                              len(rev_opt)).format(names=", ".join(rev_opt), objective=OBJECTIVE_REVERSE))
    if fwd_opt:
        parts.append(_("{names} at the optimum of {objective} (○)").format(
            names=", ".join(fwd_opt), objective=OBJECTIVE_FORWARD))
    summary = "; ".join(parts) if parts else _("No option ends at either optimum")
    return _("{summary}. Each line is one token's probability; the dots right of the lines are the "
             "two analytic optima, ● filled for the reverse KL, ○ hollow for the forward KL.").format(
        summary=summary)


def training_step(reward: Sequence[float], beta: float) -> float:
    """The step size of the drawn ascent: :data:`TRAINING_SPEEDUP` times the core's default."""
    return TRAINING_SPEEDUP / (max(reward) - min(reward) + beta)


def training_frame(
    s: Setting, runs: Mapping[str, TrainingRun], optima: tuple[np.ndarray, np.ndarray]
) -> pd.DataFrame:
    """Per token: π_ref, R, the start, both optima, and where each run ends."""
    ref, start = _probs(s.ref), _probs(s.policy)
    frame = {
        _("token"): list(range(s.k)),
        _("R"): list(s.reward),
        _("π_ref"): ref,
        _("π_θ at the start"): start,
        _("optimum, reverse KL"): optima[0],
        _("optimum, forward KL"): optima[1],
    }
    for name, run in runs.items():
        frame[_("{name} ends at").format(name=name)] = run.limit
    return pd.DataFrame(frame)


# --------------------------------------------------------------------------- reproduce
def cli_command(s: Setting, lam: float, beta: float) -> str:
    """The ``python -m kl_core grad`` command that prints this view's numbers."""
    def spec(logits: Sequence[float]) -> str:
        top = max(abs(v) for v in logits)
        if top > PRACTICAL["logit"]:  # the CLI's range: the same softmax, shifted to its largest logit
            logits = [v - max(logits) for v in logits]
        return "categorical({v})".format(v=values_text(logits))

    args = ["python", "-m", "kl_core", "grad", "--policy", spec(s.policy), "--ref", spec(s.ref)]
    if s.sampler is not None:
        args += ["--sampler", spec(s.sampler)]
    args += [f"--lam={number_text(lam)}", "--reward", values_text(s.reward), f"--beta={number_text(beta)}"]
    return "uv run " + shlex.join(args)


