"""What the "Tokens & sequences" page says about its numbers (no streamlit).

The sliders' grids and limits, the Monte Carlo budget, the command line that
reproduces the view, the captions of its four views, the honest note on
``rb``, the sum-against-mean table and the gradient table.  Every number
comes from ``kl_core``; the functions here only choose and phrase.
"""

from __future__ import annotations

import functools
import math
import shlex
from collections.abc import Iterable

import numpy as np
import pandas as pd

from charts.palette import REFERENCE_COLOR, SERIES_COLORS, ZERO_COLOR, color
from charts.sequences import SEQUENCE_COLORS, McPoint
from i18n import N_, _, ngettext
from kl_core.libraries.crosswalk import EXPECTED_GRADIENTS
from kl_core.libraries.loss_aggregation import LOSS_AGGREGATIONS, kl_coefficient
from kl_core.numbers import SMALLEST_NORMAL
from kl_core.sequences.estimators import (
    RB_COUNTEREXAMPLE,
    SEQUENCE_ESTIMATORS,
    SequenceCurves,
    exact_curves,
    likely_missed,
    rare_sequences,
)
from kl_core.sequences.gradients import SequenceGradientTable
from kl_core.sequences.markov import DEFAULT_DRIFT, DEFAULT_K, MarkovChain, drift_pair, parse_markov
from kl_core.sequences.montecarlo import SequenceSample
from lab.format import from_log, number
from lab.format import share as percent
from lab.notes import Note

__all__ = [
    "CURVE_KEYS",
    "DEFAULT_SOURCE",
    "link_source",
    "gradient_formula",
    "gradient_intro",
    "gradient_terms",
    "rb_definition",
    "STICKY",
    "answer",
    "sticky_text",
    "CUSTOM_DEFAULT",
    "DEFAULT_K",
    "DRIFT_HELP",
    "DEFAULT_LENGTH",
    "K_MAX",
    "MAX_BAR_TOKENS",
    "LENGTHS",
    "MAX_LENGTH",
    "MAX_TOKENS_PER_RUN",
    "SOURCES",
    "WILD_SPREAD",
    "chains",
    "checkpoints",
    "command_line",
    "counterexample_text",
    "cosine_data",
    "estimator_label",
    "estimator_line",
    "first_token_series",
    "gradient_caption",
    "gradient_number_columns",
    "gradient_rows",
    "kl_at",
    "length_from_link",
    "mc_points",
    "penalty_caption",
    "penalty_curves",
    "position_caption",
    "rb_note",
    "relative_std_caption",
    "report_rows",
    "sample_size",
    "source_help",
    "unreliable_note",
    "first_token_caption",
    "sum_mean_caption",
    "sum_k3_note",
    "sum_mean_rows",
    "usage_lines",
]

#: T on the slider: about two steps per octave, 1 … 256.
LENGTHS: tuple[int, ...] = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
MAX_LENGTH = LENGTHS[-1]
#: 16 tokens: the sticky pair's per-position KLs climb across the whole chart, and its per-token
#: losses are far off the true gradient (Σk2's cosine 0.08, Σk3's 0.31).
DEFAULT_LENGTH = 16
K_MAX = 64
#: Largest N·T sampled on one rerun (10,000 sequences of 256 tokens: about 0.1 s).
MAX_TOKENS_PER_RUN = 2_560_000
#: Where the chains come from: URL value → label.
SOURCES: dict[str, str] = {
    "sticky": N_("Sticky token"),
    "drift": N_("Drift family"),
    "counter": N_("rb counterexample"),
    "custom": N_("Your own chains"),
}
#: The page opens on the sticky pair: there the per-token losses miss the later prefixes at once.
DEFAULT_SOURCE = "sticky"
#: The sticky pair (K = 2): π_ref draws every token on its own, token 0 with probability
#: ``ref_zero``; π_θ draws token 0 first with probability ``first_zero``, then moves from token 1
#: to token 0 with probability ``move`` only, but repeats token 0 with probability ``stay``.
#: At T = 16 Σk2 as a loss has cosine 0.08 to the true gradient and Σk3 0.31 (on the slider both
#: below 0.5 for T = 8 … 24; Σk3's is 0.501 at T = 32, Σk2's stays below 0.5 up to T = 64), the
#: per-position KLs climb from 0.087 to 0.965, and rb has less variance than Σk1 at every T
#: (issue 20: a default that shows the point).
STICKY_PROBS: dict[str, float] = {"ref_zero": 0.3, "first_zero": 0.5, "move": 0.1, "stay": 0.99}


def _sticky_pair() -> tuple[str, str]:
    z, first, move, stay = (STICKY_PROBS[k] for k in ("ref_zero", "first_zero", "move", "stay"))
    row = np.log([z, 1 - z])
    ref = MarkovChain.from_arrays(row, np.stack([row, row]))
    policy = MarkovChain.from_arrays(np.log([first, 1 - first]), np.log([[stay, 1 - stay], [move, 1 - move]]))
    return policy.spec, ref.spec


#: ``(policy, ref)`` specs of the sticky pair.
STICKY: tuple[str, str] = _sticky_pair()
#: The estimators of the spread chart; mean_k3 has exactly Σk3's relative spread.
CURVE_KEYS: tuple[str, ...] = ("sum_k1", "sum_k3", "seq_k3", "sum_k2", "rb")
#: The "Your own chains" fields start from a small drift pair (K = 3).
CUSTOM_DEFAULT: tuple[str, str] = tuple(c.spec for c in drift_pair(3, DEFAULT_DRIFT))  # type: ignore[assignment]
#: How many first-token logits the gradient bars show at most.
MAX_BAR_TOKENS = 16
#: The help of the drift slider.  The tilt is the KL-regularised optimum of one step for the
#: reward βδ·v; over T ≥ 2 tilted tokens the sequence optimum also weighs the reward still to
#: come (with K = 4, T = 3, δ = β = 1 its objective is 1.529 against the tilt's 1.478).
DRIFT_HELP = N_(
    r"$\pi_\theta(j \mid i) \propto \pi_\mathrm{ref}(j \mid i)\, e^{\delta v_j}$, $v$ from +1 "
    r"(token 0) to −1 (token K−1): token by token, the optimum of the KL-regularised objective "
    r"for a per-token reward $\beta\delta\, v$. With the first token only it is also the "
    r"sequence optimum; over several tilted tokens it is not, since the sequence optimum also "
    r"weighs the reward still to come."
)


#: The core's names of the gradient options (kl_core.sequences.gradients.OPTIONS), marked for
#: translation (shown as ``_(row.name)``).
OPTION_NAMES = (N_("Σ k1 as a loss"), N_("Σ k2 as a loss"), N_("Σ k3 as a loss"),
                N_("Σ exact next-token KL as a loss"), N_("k1 as a reward, reward-to-go"))
#: The metrics' names of the sequence KL and of the other direction (typeset).
KL_SEQUENCE = r"$\mathrm{KL}[\pi_\theta\|\pi_\mathrm{ref}]$"
KL_OTHER = r"$\mathrm{KL}[\pi_\mathrm{ref}\|\pi_\theta]$"
#: What each sequence estimator is, for the page's list: the core's one-line summaries
#: (kl_core.sequences.estimators.SEQUENCE_ESTIMATORS), typeset and marked for translation.
SUMMARIES: dict[str, str] = {
    "sum_k1": N_("The plain Monte Carlo estimate of the sequence KL; single values can be < 0."),
    "sum_k3": N_("Each term is unbiased for its own position's KL, and never negative."),
    "seq_k3": N_(r"k3 applied to the whole-sequence ratio: unbiased, but its variance can grow like $e^{cT}$."),
    "sum_k2": N_(r"Biased: its mean is the sum of each position's $\mathbb{E}[\tfrac12\log^2 r]$, in general "
                 "not the KL (both are 0 when the chains agree)."),
    "rb": N_("The exact next-token KL at each sampled prefix; needs the full next-token distributions."),
    "mean_k3": N_("The per-token average most training logs show: it estimates KL / T, which is "
                  "the KL only at T = 1 or where the KL is 0."),
}
#: The core's names of the sequence estimators, marked for translation (shown as ``_(name)``).
NAMES = (N_("k3 of the sequence ratio"), N_("mean k3 per token"), N_("Rao–Blackwellized"))


def estimator_line(key: str) -> str:
    """One item of the page's list of estimators: name, formula, what it is."""
    return "**{label}**: ${latex}$ — {summary}".format(
        label=estimator_label(key), latex=SEQUENCE_ESTIMATORS[key].latex, summary=_(SUMMARIES[key]))


def estimator_label(key: str) -> str:
    """Legend text of a sequence estimator: its key (as the command line prints it) and name."""
    return _("{key}: {name}").format(key=key, name=_(SEQUENCE_ESTIMATORS[key].name))


#: The rb counterexample, as the page describes it: true at every T (the stds at the chosen T follow it).
COUNTEREXAMPLE = N_(
    r"**The counterexample** (K = 3): $\pi_\theta$ picks token 0 or 1 at even odds and then repeats "
    r"it. $\pi_\mathrm{ref}$ makes token 1 $e$ times less likely at first, and after token 0 repeats it "
    r"with probability $1/e$ only. So every token after a first 0 adds 1 both to "
    r"$\log \pi_\theta(x)/\pi_\mathrm{ref}(x)$ (Σk1) and to the next-token KL (rb), and every token "
    "after a first 1 adds 0 to both; but the first token 1 itself adds 1 more to the log-ratio than "
    "token 0 does, which rb does not see (its first term is the same for every sequence). At T = 2 "
    "that offsets the one later token, and Σk1 is the same for both likely sequences."
)


@functools.cache
def _counter_curves() -> SequenceCurves:
    return exact_curves(*RB_COUNTEREXAMPLE, MAX_LENGTH)


def _rb_noisier(curves: SequenceCurves) -> np.ndarray:
    """Per T: True where rb's exact std exceeds Σk1's."""
    return curves.std["rb"] > curves.std["sum_k1"] * (1 + 1e-9)


def source_help() -> str:
    """The help of the chain menu: from which T on the counterexample's rb is the noisier (exact)."""
    curves = _counter_curves()
    noisier = _rb_noisier(curves)
    # the smallest T of the slider from which on rb is noisier at every T
    start = next(t for t in LENGTHS if noisier[t - 1:].all())
    return _(r"The sticky token is a pair where the per-token losses miss the later prefixes; the drift "
             r"family tilts $\pi_\mathrm{{ref}}$ by a reward per token, and there Σk2 as a loss points "
             "nearly the right way; the counterexample is a pair where rb is noisier than Σk1 at every "
             "T ≥ {t}; or type your own `markov(...)` specs.").format(t=start)


def counterexample_text(curves: SequenceCurves, length: int) -> str:
    """The counterexample's description, then both exact stds at T = ``length`` and which is the larger."""
    sd1, sdrb = float(curves.std["sum_k1"][length - 1]), float(curves.std["rb"][length - 1])
    if sdrb > sd1 * (1 + 1e-9):
        tail = _("At T = {t} the std of Σk1 is {k1} and rb's is {rb}: rb is the noisier.")
    elif sd1 > sdrb * (1 + 1e-9):
        tail = _("At T = {t} the std of Σk1 is {k1} and rb's is {rb}: here Σk1 is the noisier.")
    else:
        tail = _("At T = {t} the std of Σk1 is {k1} and rb's is {rb}: the same.")
    return "{text} {tail}".format(text=_(COUNTEREXAMPLE),
                                  tail=tail.format(t=length, k1=number(sd1), rb=number(sdrb)))


#: The URL keys of the drift family's widgets: a link with one of them and no ``src`` means the drift
#: family (links made before the sticky pair became the default, and the lessons' links).
DRIFT_KEYS: tuple[str, ...] = ("K", "drift", "first")


def link_source(url_keys: Iterable[str]) -> str | None:
    """``src`` for a link that sets a drift-family widget but no ``src``: the drift family's
    (English) label, which the page writes into the URL; else None (the link says what it means)."""
    keys = set(url_keys)
    return SOURCES["drift"] if "src" not in keys and keys & set(DRIFT_KEYS) else None


def sticky_text() -> str:
    """What the sticky pair is, its probabilities read from its two chains."""
    policy, ref = (parse_markov(s) for s in STICKY)
    return _(
        # No maths in the first line: KaTeX's struts reach about 2.7em above a subscript and
        # would catch the clicks meant for the chain buttons just above.
        r"**Sticky token** (K = 2): the reference draws every token on its own, token 0 with "
        r"probability {zero}. The policy draws token 0 first with probability {first}, later moves "
        r"to token 0 rarely ({move}) but, once there, repeats it ({stay}). After a token 1, that "
        r"position's own KL pulls $\pi_\theta$ towards $\pi_\mathrm{{ref}}$'s {zero}, that is towards "
        "token 0; but every move to token 0 starts a run of tokens that each add KL, and only the "
        "true gradient sees that."
    ).format(zero=f"{ref.first_probs[0]:.0%}", first=f"{policy.first_probs[0]:.0%}",
             move=f"{policy.transition_probs[1, 0]:.0%}",
             stay=f"{policy.transition_probs[0, 0]:.0%}")


def chains(source: str, drift_specs: tuple[str, str], custom: tuple[str, str]) -> tuple[str, str]:
    """The ``(policy, ref)`` specs of a source: the sticky pair's, the drift family's, the
    counterexample's, or the typed ones."""
    if source == "sticky":
        return STICKY
    if source == "drift":
        return drift_specs
    if source == "counter":
        return RB_COUNTEREXAMPLE
    if source == "custom":
        return custom
    raise ValueError(f"source must be one of {list(SOURCES)}, got {source!r}")


def sample_size(n: int, length: int) -> tuple[int, str | None]:
    """N as sampled, within :data:`MAX_TOKENS_PER_RUN` tokens, and a sentence if it was lowered."""
    cap = max(1, MAX_TOKENS_PER_RUN // length)
    if n <= cap:
        return n, None
    return cap, _(
        "N × T would be {total:,} tokens; this page samples at most {limit:,} per view, so it "
        "uses N = {n:,} sequences at T = {t}. The command line below has no such limit."
    ).format(total=n * length, limit=MAX_TOKENS_PER_RUN, n=cap, t=length)


def length_from_link(text: str) -> int | None:
    """A link's T off the slider's steps (``T=100``): kept if it is a whole number in 1 … 256."""
    try:
        x = float(text)
    except ValueError:
        return None
    return int(x) if x.is_integer() and 1 <= x <= MAX_LENGTH else None


def checkpoints(length: int) -> tuple[int, ...]:
    """The lengths T′ ≤ T that get Monte Carlo points: the slider's steps up to T, and T."""
    return tuple(sorted({*(t for t in LENGTHS if t <= length), length}))


def command_line(policy: str, ref: str, length: int, n: int, seed: int) -> str:
    """``python -m kl_core sequence`` with these chains, T, N and seed: the same exact and MC figures."""
    return "uv run python -m kl_core sequence --policy {p} --ref {r} --T {t} --n {n} --seed {s}".format(  # i18n: ok (a command)
        p=shlex.quote(policy), r=shlex.quote(ref), t=length, n=n, s=seed
    )


# ---------------------------------------------------------------- 1. KL along the sequence


def kl_at(curves: SequenceCurves, length: int) -> tuple[float, float, float]:
    """The sequence KL at T, per token (KL / T), and the other direction's."""
    kl = float(curves.true_kl[length - 1])
    return kl, kl / length, float(curves.true_kl_reverse[length - 1])


def position_caption(curves: SequenceCurves, length: int) -> str:
    """Under the per-position chart: how the KL is spread along the sequence."""
    c = curves.per_position_kl[:length]
    total = float(c.sum())
    if total == 0:
        return _("At T = {t} the two chains give every sequence the same probability: every "
                 "position adds 0, and the KL is 0.").format(t=length)
    later = c[1:]
    if length == 1:
        return _(
            "One token: the sequence KL is that token's KL, {total}. The dots are the mean of each "
            "per-token term over the sampled sequences, ±2 SE."
        ).format(total=number(total))
    if length > 1 and float(np.max(curves.per_position_kl[1:])) <= 1e-12 * total:
        return _(
            "Only the first token differs: position 1 adds {first}, every later position adds 0, "
            "so the KL stays {total} for any T. Dots: the mean of each per-token term at each "
            "position over the sampled sequences, ±2 SE."
        ).format(first=number(float(c[0])), total=number(total))
    if length > 1 and float(np.max(later)) <= 1e-12 * total:
        return _(
            "Up to T = {t} only the first token differs: position 1 adds {first}, positions 2 to "
            "{t} add 0, so the KL is {total}. Dots: the mean of each per-token term at each "
            "position over the sampled sequences, ±2 SE."
        ).format(first=number(float(c[0])), total=number(total), t=length)
    if float(np.ptp(c)) <= 1e-9 * float(c.max()):
        return _(
            "Every position adds the same KL, {each}; their sum is the sequence KL, {total} over "
            "T = {t} tokens. Dots: the mean of each per-token term at each position over the "
            "sampled sequences, ±2 SE."
        ).format(each=number(float(c[0])), total=number(total), t=length)
    return _(
        "Positions add from {lo} to {hi}; their sum is the sequence KL, {total} over T = {t} "
        "tokens ({per} per token). Dots: the mean of each per-token term at each position over "
        "the sampled sequences, ±2 SE; rb's per-position variance is never larger than k1's, so "
        "its error bars are as a rule the shorter."
    ).format(lo=number(float(c.min())), hi=number(float(c.max())), total=number(total), t=length,
             per=number(total / length))


def rb_definition() -> str:
    """What rb is, said before its first metric."""
    return _(
        r"**rb** (Rao–Blackwellized) adds, at each sampled prefix, the exact next-token KL "
        r"$\kappa(x_{<t})$ in place of the sampled token's k1: the same mean, computed from the full "
        "next-token distributions. The dots below are each term's mean at each position."
    )


# ---------------------------------------------------------------- 2. spread against T


def report_rows(curves: SequenceCurves, sample: SequenceSample, length: int) -> pd.DataFrame:
    """The six estimators at T, exact beside Monte Carlo (the rows of ``python -m kl_core sequence``)."""
    i = length - 1
    rows = []
    for key, info in SEQUENCE_ESTIMATORS.items():
        s = sample.summary(key)
        rows.append({
            _("estimator"): key,
            _("estimates"): info.target,
            _("exact mean"): float(curves.mean[key][i]),
            _("exact std"): float(curves.std[key][i]),
            _("MC mean"): s.mean,
            _("± SE"): s.se,
            _("MC std"): s.std,
        })
    return pd.DataFrame(rows)



def mc_points(sample: SequenceSample, curves: SequenceCurves, keys: tuple[str, ...] = CURVE_KEYS) -> list[McPoint]:
    """The Monte Carlo std over the exact KL at each checkpoint, with ±2 SE of the std."""
    out = []
    for t, summaries in sorted(sample.checkpoints.items()):
        kl = float(curves.true_kl[t - 1])
        if not kl > 0:
            continue
        for k in keys:
            s = summaries[k]
            se = s.std_se if math.isfinite(s.std_se) else math.nan
            out.append(McPoint(k, t, s.std / kl, (s.std - 2 * se) / kl, (s.std + 2 * se) / kl))
    return out


def _leaves(curves: SequenceCurves, key: str, top: float) -> int | None:
    """The first T from which ``key``'s std / KL stays above ``top`` (or overflows) at every longer
    T; lengths where KL = 0 (std / KL is 0/0, no spread to compare) are left out."""
    r = curves.relative_std(key)
    has_kl = np.asarray(curves.true_kl) > 0
    above = (np.isinf(r) | (r > top))[has_kl]  # NaN, not resolved, is not above
    lengths = np.asarray(curves.lengths)[has_kl]
    if not above.size or not above[-1]:
        return None
    below = np.flatnonzero(~above)
    return int(lengths[below[-1] + 1]) if below.size else int(lengths[0])


def relative_std_caption(curves: SequenceCurves, length: int, n: int) -> str:
    """Under the spread chart: the figures at the reader's T, where seq_k3 goes, and whether N = ``n``
    draws are likely to miss the rare sequences behind its variance (:func:`rare_sequences`)."""
    kl = float(curves.true_kl[length - 1])
    if not kl > 0:
        return _("At T = {t} the two chains give every sequence the same probability (KL = 0): "
                 "there is no relative spread to draw.").format(t=length)
    i = length - 1
    rel = {k: float(curves.relative_std(k)[i]) for k in CURVE_KEYS}
    sd1, sdrb = float(curves.std["sum_k1"][i]), float(curves.std["rb"][i])
    if sdrb == 0:
        gain = _("rb has no noise at all here (at each position, every prefix has the same next-token KL)")
    elif sdrb <= sd1:
        gain = _("rb needs {x} times fewer sequences than Σk1 for the same standard error").format(
            x=number((sd1 / sdrb) ** 2))
    else:
        gain = _("here rb is the noisier one: Var(rb) is {x} times Var(Σk1)").format(
            x=number((sdrb / sd1) ** 2) if sd1 > 0 else "∞")
    text = _(
        "At T = {t}, std per sequence / KL: rb {rb}, Σk3 {k3}, Σk1 {k1}, seq_k3 {s3}; {gain}. "
        "Lines: exact, for every T; circles: the N sampled sequences, ±2 SE."
    ).format(t=length, rb=_ratio_text(rel["rb"]), k3=_ratio_text(rel["sum_k3"]), k1=_ratio_text(rel["sum_k1"]),
             s3=_ratio_text(rel["seq_k3"]), gain=gain)
    leaves = _leaves(curves, "seq_k3", 100.0)
    if leaves is not None:
        text += " " + _(
            "seq_k3's spread passes 100 times the KL from T = {t} on."
        ).format(t=leaves)
    rare, hit = rare_sequences(float(curves.log_r2[i]), n)
    if not rel["seq_k3"] <= WILD_SPREAD and likely_missed(rare, hit):
        text += " " + _(
            "seq_k3's sample std likely falls far short of the exact one: sequences of total probability at most "
            "p = {rare} carry at least 1 − p of E[R²], the term behind its variance, and N = {n:,} draws "
            "include one with probability at most {hit}."
        ).format(rare=_tiny(rare, -0.5 * float(curves.log_r2[i])), n=n,
                 # below a double's normal range n·p ≪ 1, so 1 − (1 − p)^n is n·p to every digit shown
                 hit=_tiny(hit, math.log(n) - 0.5 * float(curves.log_r2[i])))
    return text


def _tiny(x: float, log_x: float) -> str:
    """A probability as :func:`lab.format.number` writes it, or from its log where it is below a double's
    normal range (p = e^−1200 printed as 0 beside "at most p")."""
    return number(x) if x >= SMALLEST_NORMAL else from_log(log_x, 3, trim=True)


def _ratio_text(x: float) -> str:
    """A positive figure as :func:`lab.format.number` writes it, or words where it overflowed a double or is not
    resolved (seq_k3's std for chains a hair apart: ``SequenceCurves.std`` NaN)."""
    if math.isnan(x):
        return _("not resolved in double precision")
    return number(x) if math.isfinite(x) else _("too large for a double")


#: Std per sequence over the KL beyond which seq_k3's spread is called wild (as the note of
#: ``python -m kl_core sequence`` does).
WILD_SPREAD = 10.0

#: A standard error above this share of the KL is worth a warning: ±2 SE is then ±20% of it or more.
NOTED_RELATIVE_SE = 0.1


def _noisy_means(curves: SequenceCurves, length: int, n: int) -> dict[str, float]:
    """The unbiased estimators whose Monte Carlo mean from N draws has an exact standard error above
    :data:`NOTED_RELATIVE_SE` of the KL, with that standard error over the KL (none where the KL is 0)."""
    if not float(curves.true_kl[length - 1]) > 0:
        return {}
    rel_se = {k: float(curves.relative_std(k)[length - 1]) / math.sqrt(n) for k in ("sum_k1", "sum_k3", "seq_k3")}
    return {k: se for k, se in rel_se.items() if not se <= NOTED_RELATIVE_SE and not math.isnan(se)}


def unreliable_note(curves: SequenceCurves, length: int, n: int) -> Note | None:
    """A warning where an unbiased estimator's Monte Carlo mean from N draws has a standard error above
    :data:`NOTED_RELATIVE_SE` of the KL."""
    noisy = _noisy_means(curves, length, n)
    if not noisy:
        return None
    # each key with its own figure: one overflowing standard error says nothing of the others'
    figures = "; ".join(
        _("{key}: {se} times the KL").format(key=k, se=number(se)) if math.isfinite(se)
        else _("{key}: too large for a double").format(key=k) for k, se in noisy.items())
    text = ngettext(
        "At T = {t}, with N = {n:,} draws {count} Monte Carlo mean has a standard error above {limit} times the KL "
        "({figures}): it can land far from the exact value.",
        "At T = {t}, with N = {n:,} draws {count} Monte Carlo means have standard errors above {limit} times the "
        "KL ({figures}): they can land far from the exact value.", len(noisy)
    ).format(t=length, n=n, count=len(noisy), limit=number(NOTED_RELATIVE_SE), figures=figures)
    if all(math.isfinite(float(curves.std[k][length - 1])) or math.isnan(float(curves.std[k][length - 1]))
           for k in curves.std):
        text += " " + _("The exact columns are right.")
    else:
        text += " " + _("The exact columns are right where they show a number; ∞ there means too "
                        "large for a double.")
    return Note("warning", text, ":material/warning:")


def sum_k3_note(curves: SequenceCurves, length: int, n: int, sample: SequenceSample) -> Note | None:
    """Under section 3's Σk3 figures: where :func:`unreliable_note` flags Σk3, that its sample mean (and
    mean k3's, and the penalties from the samples) can be far off, with its exact standard error beside
    the one the draws give."""
    rel_se = _noisy_means(curves, length, n).get("sum_k3")
    if rel_se is None:
        return None
    se = float(curves.std["sum_k3"][length - 1]) / math.sqrt(n)
    # finite: a spec's logits spread over at most 300, so every k3 and its square are finite doubles
    return Note("warning", _(
        "**Σk3's sample figures are unreliable here** (see the warning in section 2): at T = {t}, with "
        "N = {n:,} draws, the exact standard error of Σk3's mean is {se}, {rel} times the KL, while "
        "these draws give ± {sample_se}. The two means above and the penalties from the samples below "
        "can land far from the exact values."
    ).format(t=length, n=n, se=number(se), rel=number(rel_se), sample_se=number(sample.summary("sum_k3").se)),
        ":material/warning:")


def rb_note(curves: SequenceCurves) -> Note | None:
    """The honest statement about rb: far lower variance as a rule, not always; None where the KL is 0
    at every T (every estimator is then exactly 0, rb no better than another)."""
    if not (curves.true_kl > 0).any():
        return None
    sd1, sdrb = curves.std["sum_k1"], curves.std["rb"]
    worse = np.flatnonzero(sdrb > sd1 * (1 + 1e-12))
    if worse.size:
        t = curves.lengths[worse]
        where = (_("for T from {a} to {b}") if t.size == int(t[-1] - t[0]) + 1
                 else _("at {n} values of T from {a} to {b}")).format(a=int(t[0]), b=int(t[-1]), n=t.size)
        return Note("warning", _(
            "**rb is noisier than Σk1 here** ({where}). Rao–Blackwellizing never "
            "adds variance *position by position*, but the sum also carries covariances between "
            "positions: when a token's log-ratio is high exactly where the KL still to come is "
            "low, Σk1's terms cancel and rb's do not. So rb usually has far less variance than "
            "Σk1, not always."
        ).format(where=where), ":material/warning:")
    ratio = np.where(sdrb > 0, (sd1 / np.where(sdrb > 0, sdrb, 1.0)) ** 2, np.inf)
    finite = ratio[np.isfinite(ratio) & (curves.true_kl > 0)]
    if finite.size == 0:
        return Note("info", _(
            "rb has no noise for these chains: at each position, every prefix has the same next-token KL. "
            "rb is not always better than Σk1, though: choose **rb counterexample** above."
        ), ":material/info:")
    drifted = curves.true_kl > 0  # where the KL is 0 every estimator is exactly 0: rb is no better there
    less = (_("less variance") if bool(np.all(sdrb[drifted] < sd1[drifted])) else _("no more variance"))
    where = (_("at every T") if bool(drifted.all()) else
             _("at every T from {t} on, where the KL is above 0").format(t=int(curves.lengths[np.argmax(drifted)])))
    return Note("info", _(
        "For these chains rb has {less} than Σk1 {where} (Var(Σk1)/Var(rb) from {lo} "
        "to {hi}). That is usual, not guaranteed: each position's term is never noisier, but the "
        "covariances between positions can make the whole sum so. Choose **rb counterexample** "
        "above to see a pair where it is."
    ).format(less=less, where=where, lo=number(float(finite.min())), hi=number(float(finite.max()))),
        ":material/info:")


# ---------------------------------------------------------------- 3. sum against mean


def _l_max() -> int:
    return MAX_LENGTH


def sum_mean_rows(beta: float, length: int, kl: float, sample: SequenceSample | None) -> pd.DataFrame:
    """One row per loss reduction: who uses it, its weight, β·c on the sequence KL, the penalty."""
    rows = []
    mc = sample.summary("sum_k3") if sample is not None else None
    for key in LOSS_AGGREGATIONS:
        coef = kl_coefficient(key, beta, length, max_length=_l_max())
        row = {
            _("reduction (verl loss_agg_mode)"): key,
            _("coefficient on the sequence KL"): coef,
            _("penalty, exact"): coef * kl,
        }
        if mc is not None:
            row[_("penalty from the samples")] = coef * mc.mean
            row[_("± SE")] = coef * mc.se
        rows.append(row)
    return pd.DataFrame(rows)


def usage_lines() -> str:
    """Markdown: which library option reduces the loss in each way (from the core's table)."""
    return "\n".join(
        "- `{key}`: {uses}".format(key=key, uses="; ".join(_usage(u) for u in agg.used_by))
        for key, agg in LOSS_AGGREGATIONS.items()
    )


#: Words in the core's usage notes (``kl_core.libraries.loss_aggregation``), marked for translation.
_USAGE_WORDS = {"its default": N_("its default")}


def _usage(text: str) -> str:
    """``verl loss_agg_mode=token-mean (its default)`` → the setting as code, the remark in words."""
    setting, paren, remark = text.partition(" (")
    if not paren:
        return f"`{setting}`"
    remark = remark.removesuffix(")")
    return "`{setting}` ({remark})".format(
        setting=setting, remark=_(_USAGE_WORDS[remark]) if remark in _USAGE_WORDS else remark)


def sum_mean_caption(beta: float, length: int) -> str:
    """Under the sum-against-mean table."""
    return _(
        "With every sequence of length T = {t}, β = {beta} on a per-token mean is β/T = {bt} on "
        "the sequence KL; summed over tokens it stays β. `seq-mean-token-sum-norm` divides by a "
        "constant L_max, here {lmax} (verl: `loss_scale_factor` or the padded length; TRL: "
        "`max_completion_length`). Penalty from the samples: the coefficient times the mean of Σk3 "
        "over the N sequences above."
    ).format(t=length, beta=number(beta), bt=number(beta / length), lmax=_l_max())


def penalty_curves(beta: float, curves: SequenceCurves) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The penalty on one sequence against T for the three kinds of reduction, and their colours."""
    t = curves.lengths
    kl = curves.true_kl
    out = {
        _("sum: β·KL"): beta * kl,
        _("per-token mean: (β/T)·KL"): np.array(
            [kl_coefficient("token-mean", beta, int(n)) for n in t]) * kl,
        _("sum ÷ {lmax}: (β/L_max)·KL").format(lmax=_l_max()): np.array(
            [kl_coefficient("seq-mean-token-sum-norm", beta, int(n), max_length=_l_max()) for n in t]) * kl,
    }
    # Ways of reducing, no estimators: colours of their own (the estimator colours stay reserved).
    colors = dict(zip(out, SERIES_COLORS[:3], strict=True))
    return out, colors


def penalty_caption(curves: SequenceCurves, length: int) -> str:
    """Under the penalty chart: what happens as T grows, for this pair."""
    kl = curves.true_kl
    if not kl[-1] > 0:
        return _("The chains are identical: every penalty is 0.")
    start = int(np.flatnonzero(kl > 0)[0])  # the first T whose KL is not 0
    if start == 0 and kl[-1] <= kl[0] * (1 + 1e-9):
        if length == 1:
            return _(
                "The sequence KL does not grow with T here (only the first token drifted), so a "
                "per-token mean shrinks the penalty like 1/T as T grows. At T = 1 the sum and the "
                "mean coincide: one token."
            )
        return _(
            "The sequence KL does not grow with T here (only the first token drifted), so a "
            "per-token mean shrinks the penalty like 1/T: at T = {t} it is {x} times the "
            "summed one, although the policy drifted exactly as far."
        ).format(t=length, x=number(1 / length))
    t = curves.lengths
    summed = kl[-1] / kl[start]
    if start == 0 and number(summed) == number(1.0):  # "grows 1 times": the growth is past the digits shown
        return _(
            "The sequence KL grows with T here only past the digits shown (from T = {t0} to {t1}, by a factor of "
            "{s}): nearly all of it is the first token's, so a per-token mean shrinks the penalty like 1/T: at "
            "T = {t} it is {x} times the summed one, although the policy drifted as far."
        ).format(t0=int(t[0]), t1=int(t[-1]), s=f"{summed:.12g}", t=length, x=number(1 / length))
    per_token = summed * t[start] / t[-1]
    numbers = dict(t0=int(t[start]), t1=int(t[-1]), s=number(summed), m=number(per_token))
    if start == 0:
        grows = _("The KL grows with T, so from T = {t0} to {t1} the summed penalty grows {s} times.")
    else:
        grows = _("The KL is 0 up to T = {z} (the first tokens are drawn alike) and grows after, so from "
                  "T = {t0}, the first T with a KL above 0, to {t1} the summed penalty grows {s} times.")
    if numbers["m"] == number(1.0):
        mean = _("Over the same range the per-token mean does not change to the digits shown: a per-token β "
                 "regularises each token, not the sequence.")
    else:
        mean = _("Over the same range the per-token mean changes by a factor of {m}: a per-token β regularises "
                 "each token, not the sequence.")
    return " ".join((grows, mean)).format(z=int(t[start - 1]) if start else 0, **numbers)


# ---------------------------------------------------------------- 4. gradients


def gradient_intro(source: str, table: SequenceGradientTable | None) -> str:
    """Section 4's opening: what autograd of a per-token loss misses, and where that matters.

    "with the sticky token it can be far off" points to the cosine chart at the top only where that
    chart is drawn (``table`` is not None), for the sticky token, with Σk2's cosine far off."""
    k2 = None if table is None else table.row["sum_k2_loss"]
    intro = _(
        "Autograd of a per-token KL loss holds the sampled tokens fixed, so it never sees that "
        "changing token t changes the prefixes every later token is drawn from. The true gradient "
        "has both parts (Tang & Munos, arXiv:2506.09477); every expectation below is exact, over "
        r"all of $\pi_\theta$'s $K + K^2$ logits."
    )
    if source == "sticky" and k2 is not None and table.reverse.norm > 0 and _far_off(k2.cos_reverse):
        where = _("In the drift family the per-token Σk2 loss points nearly the right way (exactly, when only "
                  "the first token drifts or T = 1); with the sticky token it can be far off (the chart at the "
                  "top); in the rb counterexample (T ≥ 3) it points the opposite way.")
    else:
        where = _("In the drift family the per-token Σk2 loss points nearly the right way (exactly, when only "
                  "the first token drifts or T = 1); with the sticky token it can be far off; in the rb "
                  "counterexample (T ≥ 3) it points the opposite way.")
    return f"{intro} {where}"


def gradient_terms(drawn: bool) -> str:
    """Under section 4's formula: its symbols, and where each option's cosine is (the chart at the
    top only if it is drawn, ``drawn``)."""
    if drawn:
        return _(
            "with $s_t = \\nabla\\log\\pi_\\theta(x_t\\mid x_{<t})$ the score of token t and $W_t(j)$ the "
            "KL still to come after token j at position t. The chart at the top of the page gives each "
            "option's cosine to the true gradient; the table gives them all, with their lengths."
        )
    return _(
        "with $s_t = \\nabla\\log\\pi_\\theta(x_t\\mid x_{<t})$ the score of token t and $W_t(j)$ the "
        "KL still to come after token j at position t."
    )


def gradient_formula() -> str:
    """The TeX of the true gradient as the local part plus the later prefixes, labels translated."""
    local = r"\text{" + _("local") + r": }\Sigma k_2\text{ " + _("loss") + "}"
    later = r"\text{" + _("later prefixes") + "}"
    return (
        r"\begin{aligned}\nabla\mathrm{KL} &= \mathbb{E}\Big[\sum_t s_t \sum_{u\ge t} k_{1,u}\Big] \\ "  # i18n: ok (TeX)
        r"&= \underbrace{\mathbb{E}\Big[\sum_t s_t\,k_{1,t}\Big]}_{" + local + "}"  # i18n: ok (TeX)
        r" + \underbrace{\mathbb{E}\Big[\sum_t s_t\,W_t(x_t)\Big]}_{" + later + r"}\end{aligned}"  # i18n: ok (TeX)
    )


_OPTION_COLORS = {
    "sum_k1_loss": color("k1"),
    "sum_k2_loss": color("k2"),
    "sum_k3_loss": color("k3"),
    "rb_loss": SEQUENCE_COLORS["rb"],
    "k1_reward_to_go": REFERENCE_COLOR,
}


def _cos_text(c: float | None) -> str:
    return "—" if c is None else f"{c:.4f}"


#: The number columns of :func:`gradient_rows` (lengths over the true gradient's).
GRADIENT_RATIO_COLUMNS = (N_("‖g‖ / ‖∇KL‖"), N_("‖g − ∇KL‖ / ‖∇KL‖"))


def gradient_number_columns(df: pd.DataFrame) -> list[str]:
    """The columns of :func:`gradient_rows` that hold numbers (to format as such): the two ratios,
    unless the true gradient is 0 and they are "—"."""
    return [c for c in (_(name) for name in GRADIENT_RATIO_COLUMNS) if pd.api.types.is_float_dtype(df[c])]


def gradient_rows(table: SequenceGradientTable) -> pd.DataFrame:
    """One row per option: the later-prefix terms, what its expected gradient is, its cosines, its error.

    Where the true gradient is 0 the two ratios to its length have no value: "—", as the cosines."""
    df = pd.DataFrame({
        _("option"): [_(r.name) for r in table.rows],
        _("later prefixes"): [_("included") if r.later_terms
                              else _("missed") if table.later_share > 1e-9 else _("none to miss")
                              for r in table.rows],
        _("in expectation it is"): [_(EXPECTED_GRADIENTS[r.target].meaning) for r in table.rows],
        _("cos to ∇KL[π_θ‖π_ref]"): [_cos_text(r.cos_reverse) for r in table.rows],
        _("cos to ∇KL[π_ref‖π_θ]"): [_cos_text(r.cos_forward) for r in table.rows],
        _("‖g‖ / ‖∇KL‖"): [_length_ratio(table, r.grad.norm) for r in table.rows],
        _("‖g − ∇KL‖ / ‖∇KL‖"): [r.relative_error for r in table.rows],
    })
    if not table.reverse.norm > 0:
        for name in GRADIENT_RATIO_COLUMNS:
            df[_(name)] = "—"
    return df


def _length_ratio(table: SequenceGradientTable, norm: float) -> float:
    true = table.reverse.norm
    return norm / true if true > 0 else math.nan


def cosine_data(table: SequenceGradientTable) -> tuple[list[str], list[float | None], list[str]]:
    """Labels, cosines to ∇KL[π_θ‖π_ref] and colours of the cosine bars."""
    return ([_(r.name) for r in table.rows], [r.cos_reverse for r in table.rows],
            [_OPTION_COLORS[r.key] for r in table.rows])


def first_token_series(table: SequenceGradientTable) -> tuple[list[str], dict[str, np.ndarray], dict[str, str], str]:
    """The bars of the first-token logits: categories, series, colours, and what is shown.

    Beyond :data:`MAX_BAR_TOKENS` tokens, the ones where the true gradient is largest (in token order).
    """
    k = table.k
    idx = np.arange(k)
    if k > MAX_BAR_TOKENS:
        idx = np.sort(np.argsort(-np.abs(table.reverse.first), kind="stable")[:MAX_BAR_TOKENS])
        shown = _("the {m} of K = {k} first-token logits where the true gradient is largest").format(
            m=MAX_BAR_TOKENS, k=k)
    else:
        shown = _("all K = {k} first-token logits").format(k=k)
    names = {
        "true": _("true gradient = k1 reward-to-go"),
        "local": _("Σ k2 loss = exact-KL loss (local part)"),
        "later": _("what they miss: later prefixes"),
        "k3": _("Σ k3 loss"),
    }
    series = {
        names["true"]: table.reverse.first[idx],
        names["local"]: table.row["sum_k2_loss"].grad.first[idx],
        names["later"]: table.later.first[idx],
        names["k3"]: table.row["sum_k3_loss"].grad.first[idx],
    }
    colors = {names["true"]: REFERENCE_COLOR, names["local"]: color("k2"), names["later"]: ZERO_COLOR,
              names["k3"]: color("k3")}
    return [f"a{i}" for i in idx], series, colors, shown


def first_token_caption(table: SequenceGradientTable, shown: str) -> str:
    """Under the first-token bars: what the later-prefix bars say here."""
    if table.reverse.norm == 0:
        return _("At T = {t} the two chains give every sequence the same probability: every "
                 "gradient is 0.").format(t=table.length)
    if table.reverse.norm <= 1e-6 * table.local.norm:
        return _(
            "Expected gradients in {shown}: the grey bars (what the per-token losses miss) cancel "
            "the blue ones, so the true gradient is 0 here."
        ).format(shown=shown)
    if table.later.norm <= 1e-9 * table.reverse.norm:
        return _(
            "Expected gradients in {shown}: no grey bars, since no KL is still to come that the "
            "first token could change; Σk2 matches the true gradient."
        ).format(shown=shown)
    return _(
        "Expected gradients in {shown}: the grey bars are what the per-token losses miss. A step "
        "against the grey bars alone moves the first token away from tokens after which more KL "
        "is still to come; the blue ones, the local part, can pull the other way."
    ).format(shown=shown)


def gradient_caption(table: SequenceGradientTable) -> str:
    """Under the cosine bars: the size of the later-prefix terms and who misses them."""
    share = table.later_share
    n = table.k + table.k**2
    if math.isnan(share):
        return _("At T = {t} the two chains give every sequence the same probability: every "
                 "gradient is 0.").format(t=table.length)
    k2 = table.row["sum_k2_loss"]
    if table.reverse.norm <= 1e-6 * table.local.norm:
        return _(
            "Over all {n} logits, the local part and the later-prefix terms cancel: the true "
            "gradient is {r} times shorter than either, so the sequence KL is flat here to that "
            "precision, while Σk2 and the exact next-token KL as losses, which see only the local "
            "part, still push with length {length}. Cosines to a vector this short mean little."
        ).format(n=n, r=number(table.local.norm / table.reverse.norm), length=number(table.local.norm))
    if share < 1e-9:
        return _(
            "Over all {n} logits: here the later-prefix terms vanish (T = 1, or the KL still to come "
            "after a token does not depend on which token it is), so Σk2 and the exact-KL loss give "
            "the true gradient too. "
            "Σk1 as a loss still gives 0."
        ).format(n=n)
    if k2.cos_reverse is not None and k2.cos_reverse < 0:
        return _(
            "Over all {n} logits, the terms from later prefixes are {share} of the true gradient's "
            "length: so large that Σk2 and the exact next-token KL as losses, which miss them, point "
            "against the true gradient (cosine {cos}). Only k1 as a reward with reward-to-go is the "
            "true gradient."
        ).format(n=n, share=percent(share), cos=_cos_words(k2.cos_reverse))
    return _(
        "Over all {n} logits, the terms from later prefixes are {share} of the true gradient's "
        "length. Σk2 and the exact next-token KL as losses miss them: cosine {cos}, and {length} "
        "times the true gradient's length. Only k1 as a reward with reward-to-go is the true "
        "gradient; Σk1 as a loss is 0 in expectation; Σk3 as a loss follows the other KL "
        r"direction, weighted by $\pi_\theta$'s prefixes."
    ).format(n=n, share=percent(share), cos=_cos_words(k2.cos_reverse),
             length=number(_length_ratio(table, k2.grad.norm)))


# ---------------------------------------------------------------- the answer, first on the page

#: Below this cosine to the true gradient, a per-token loss is said to point elsewhere.
FAR_OFF = 0.9


def _far_off(cos: float | None) -> bool:
    """A cosine below :data:`FAR_OFF` as printed (0.89996 shows as 0.9000), or no gradient at all."""
    return cos is None or round(cos, 4) < FAR_OFF


def _cos_words(c: float | None) -> str:
    return _("0 (no gradient)") if c is None else f"{c:.4f}".replace("-", "−")  # as the cosine chart prints it


def answer(table: SequenceGradientTable, per_position: np.ndarray) -> str:
    """The page's answer: the sequence KL as the sum of its positions', then whether the gradient
    of a per-token KL loss is the sequence KL's gradient (Σk2's and Σk3's cosines to it).

    ``per_position`` holds the T positions' exact KLs; ``table`` is the gradient table at that T.
    """
    c = np.asarray(per_position, dtype=float)
    length, kl = c.size, float(c.sum())
    if table.reverse.norm == 0:
        return _("At T = {t} the two chains give every sequence the same probability: the "
                 "sequence KL is 0, and so is every gradient.").format(t=length)
    lo, hi = float(c.min()), float(c.max())
    if length == 1:
        head = _("At T = 1 the sequence KL is the first token's KL, {kl}.").format(kl=number(kl))
    elif hi - lo <= 1e-9 * hi:  # as position_caption: every position adds the same
        head = _("At T = {t} the sequence KL, {kl}, is the sum of its positions' KLs: each adds "
                 "{each}.").format(t=length, kl=number(kl), each=number(hi))
    elif number(lo) == number(hi):
        head = _("At T = {t} the sequence KL, {kl}, is the sum of its positions' KLs: each adds "
                 "{each} to the digits shown.").format(t=length, kl=number(kl), each=number(hi))
    else:
        head = _("At T = {t} the sequence KL, {kl}, is the sum of its positions' KLs, which run "
                 "from {lo} to {hi}.").format(t=length, kl=number(kl), lo=number(lo), hi=number(hi))
    k2, k3 = table.row["sum_k2_loss"], table.row["sum_k3_loss"]
    rtg = table.row["k1_reward_to_go"]
    names = {"k2": _(k2.name), "k3": _(k3.name), "rtg": _(rtg.name)}
    if table.reverse.norm <= 1e-6 * table.local.norm:
        tail = _(
            "Its gradient is nearly 0 here: the later-prefix terms cancel the local part, which "
            "the per-token losses still push along, so their cosines mean little."
        )
    elif table.later_share < 1e-9:
        tail = _(
            "Its gradient is here a per-token loss's too: no KL is still to come that a token "
            "could change, so {k2} has cosine {c2} to the true gradient."
        ).format(c2=_cos_words(k2.cos_reverse), **names)
    else:
        # The verdict follows Σk2, the per-token loss that differs from the true gradient by the
        # later-prefix terms alone; Σk3 also follows the other KL direction, so it can be far off
        # where Σk2 is not (drift family, K = 8, δ = 2, T = 16: 0.8923 beside 0.9972).
        if _far_off(k2.cos_reverse):
            tail = _(
                "**Its gradient is not a per-token loss's**: to the true gradient "
                r"$\nabla\mathrm{{KL}}[\pi_\theta\|\pi_\mathrm{{ref}}]$, {k2} has cosine {c2} and "
                "{k3} {c3}. They miss the terms from later prefixes ({share} of the true gradient's "
                "length); {rtg}, which keeps them, has {crtg}."
            )
        elif _far_off(k3.cos_reverse):
            tail = _(
                "Here {k2} points nearly the right way: to the true gradient "
                r"$\nabla\mathrm{{KL}}[\pi_\theta\|\pi_\mathrm{{ref}}]$ it has cosine {c2}, although it "
                "misses the terms from later prefixes ({share} of the true gradient's length); {rtg}, "
                "which keeps them, has {crtg}. {k3}, though, has cosine {c3}: at each prefix it "
                r"follows the other KL direction, $\nabla\mathrm{{KL}}[\pi_\mathrm{{ref}}(\cdot\mid "
                r"x_{{<t}})\,\|\,\pi_\theta(\cdot\mid x_{{<t}})]$."
            )
        else:
            tail = _(
                "Here the per-token losses point nearly the right way: to the true gradient, {k2} "
                "has cosine {c2} and {k3} {c3}, although they miss the terms from later prefixes "
                "({share} of its length); {rtg} has {crtg}."
            )
        tail = tail.format(c2=_cos_words(k2.cos_reverse), c3=_cos_words(k3.cos_reverse),
                           crtg=_cos_words(rtg.cos_reverse), share=percent(table.later_share), **names)
    return f"{head} {tail}"
