"""What Home says under its three histograms, and its table of numbers (no streamlit)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from i18n import N_, _
from kl_core.estimation.estimators import ESTIMATORS
from kl_core.estimation.exact import Moments
from kl_core.estimation.montecarlo import EstimatorSummary
from kl_core.numbers import SMALLEST_NORMAL
from lab.format import number, share

__all__ = ["MU_SLIDER", "QUESTIONS", "EstimatorTable", "SliderRange", "estimator_table",
           "histogram_captions", "table_caption"]


@dataclass(frozen=True)
class SliderRange:
    """A slider's range: ``lo`` … ``hi`` in steps of ``step``, starting at ``value``."""

    lo: float
    hi: float
    step: float
    value: float


#: Home's one slider, ``?mu=``: the distance μ between q = N(0, 1) and p = N(μ, 1).
MU_SLIDER = SliderRange(lo=0.0, hi=3.0, step=0.05, value=0.5)

#: The five questions to ask of any KL number: (question, answer), shown with ``_()``.
QUESTIONS = (
    (
        N_("1. Whose samples?"),
        N_(
            "The estimators average over x ~ q. Samples from a third policy, an asynchronous "
            "rollout or a replay buffer need an importance weight first."
        ),
    ),
    (
        N_("2. Which direction of KL?"),
        N_(
            r"$\mathbb{E}_q[-\log r]$ is KL[q‖p]. KL[p‖q] is in general a different number "
            r"(for the two normals above, which share a variance, both are μ²/2), estimated "
            r"from the same samples by $r\log r - (r-1)$."
        ),
    ),
    (
        N_("3. Which ratio?"),
        N_(
            "r = p(x)/q(x): target over sampler. A log-ratio written the other way round "
            "silently flips the sign of k1 and changes what k3 estimates; only k2 = ½(log r)² "
            "stays the same."
        ),
    ),
    (
        N_("4. Which estimator?"),
        N_(
            "k1, k2 and k3 differ in bias, spread and sign: compare a number only with one "
            "from the same estimator."
        ),
    ),
    (
        N_("5. Is it a value or a gradient?"),
        N_("An estimator that gets the KL's value right can still give the wrong gradient when "
           "it is put in a loss. When the policy being trained is the sampler q itself (as in a KL "
           "penalty against a reference p), k3 differentiates to the gradient of the other "
           "KL, KL[p‖q], and k1 to zero; the Gradients page shows why."),
    ),
)


def _k2_caption(k2_mean: float, true_kl: float) -> str:
    """k2's caption: its exact mean against the KL, in the digits shown, and its bias (μ²/4 for
    these normals; below 1e-12 a double cannot resolve it from the two numbers)."""
    bias = k2_mean / true_kl - 1.0
    # a mean that ends in a half keeps its 5 (μ = 3: 14.625, which 4 digits print 14.62 and the table 14.63)
    mean, kl = (f"{k2_mean:.5g}" if f"{k2_mean:.5g}".endswith("5") else f"{k2_mean:.4g}"), f"{true_kl:.4g}"
    if abs(bias) < 1e-12:  # below this the quotient's rounding (about 1e-16) would show in 2 digits
        return _("Never negative, and its exact mean agrees with the KL, {kl}, to better than one "
                 "part in 10¹¹.").format(kl=kl)
    if mean != kl and f"{abs(bias):.1%}" != "0.0%":
        # a bias that ends in a half (μ = 0.5: μ²/4 = 6.25 %) keeps its 5: 6.2 % would read as a slip
        spec = "+.2%" if f"{abs(bias):.2%}"[-2] == "5" else "+.1%"
        return _("Never negative, but its exact mean is {mean}, not {kl}: biased by {bias}.").format(
            mean=mean, kl=kl, bias=format(bias, spec))
    signed = ("+" if bias > 0 else "") + share(bias)
    if mean != kl:
        return _("Never negative, but its exact mean is {mean}, not {kl}: biased by {bias}.").format(
            mean=mean, kl=kl, bias=signed)
    return _("Never negative; its exact mean agrees with the KL, {kl}, to the digits shown, but "
             "is biased by {bias}.").format(kl=kl, bias=signed)


def histogram_captions(results: Mapping[str, EstimatorSummary], moments: Mapping[str, Moments],
                       true_kl: float, mu: float) -> dict[str, str]:
    """One caption per estimator (k1, k2, k3): k1's negative share, k2's bias, k3's exactness.

    ``mu`` is the slider's μ: only μ = 0 is p = q; a KL of 0 at μ = 1e-200 is 0 to double
    precision, and some values are then not 0.
    """
    if mu == 0.0:  # p = q: log r = 0 at every sample
        return dict.fromkeys(results, _("With p = q every log-ratio is 0, so every value is 0."))
    if true_kl == 0.0:  # μ so small that μ²/2 underflows
        out = {}
        for key, r in results.items():
            if np.any(r.samples):
                out[key] = _("KL[q‖p] is 0 to double precision here, but the values are not all 0: "
                             "they lie within about {size} of 0.").format(
                    size=number(float(np.max(np.abs(r.samples)))))
            else:
                out[key] = _("KL[q‖p] is 0 to double precision here, and so is every value.")
        return out
    return {
        "k1": _("{share} of single values are negative (shaded), though a KL never is.").format(
            share=share(results["k1"].neg_fraction)  # as the chart's subtitle writes it
        ),
        "k2": _k2_caption(moments["k2"].mean, true_kl),
        "k3": _k3_caption(results["k3"], moments["k3"], moments["k1"]),
    }


def _k3_caption(result: EstimatorSummary, k3: Moments, k1: Moments) -> str:
    """k3 is unbiased; where it is far noisier than k1 (its std over twice k1's), rare huge values carry its mean, so
    a sample's can land far from the KL (at μ = 3 a typical mean of 20,000 draws is 5 % short).  Just past μ ≈ 1.12,
    where k3's std first passes k1's (by 4 % at μ = 1.15), its mean is not yet carried by rare values."""
    text = _("Never negative, and its exact mean is the KL itself (dashed line).")
    if not k3.var > 4.0 * k1.var:
        return text
    return text + " " + _("But it is noisier than k1 here: rare, huge values carry its mean, so the mean of a "
                          "sample can land far from the KL (this one: {mean}).").format(mean=number(result.mean))


@dataclass(frozen=True)
class EstimatorTable:
    """Home's table: one row per estimator, headers in the run's language.

    Attributes
    ----------
    frame : pandas.DataFrame
        The rows, first column the estimator's name.
    formats : dict
        ``{header: number format}`` for ``st.column_config.NumberColumn``.
    """

    frame: pd.DataFrame
    formats: dict[str, str]


def estimator_table(keys: Sequence[str], results: Mapping[str, EstimatorSummary],
                    moments: Mapping[str, Moments], true_kl: float, n: int) -> EstimatorTable:
    """Sample mean, exact mean, exact KL, share of negative values and exact per-sample std of each estimator."""
    mean_of_n = _("mean of {n} values").format(n=f"{n:,}")
    exact_mean, exact_kl = _("exact mean"), _("exact KL[q‖p]")
    negative, std = _("share of values < 0"), _("per-sample std (exact)")
    frame = pd.DataFrame(
        {
            _("estimator"): [ESTIMATORS[k].name for k in keys],
            mean_of_n: [results[k].mean for k in keys],
            exact_mean: [moments[k].mean for k in keys],
            exact_kl: [true_kl] * len(keys),
            negative: [results[k].neg_fraction for k in keys],
            std: [math.nan if _std_unresolved(moments, k) else moments[k].std for k in keys],
        }
    )
    # the exact columns with the 4 significant digits of k2's caption (at μ = 0.05 "%.5f" printed
    # 0.00125 for both k2's mean, 0.001251, and the KL)
    formats = {mean_of_n: "%.5f", exact_mean: "%.4g", exact_kl: "%.4g", negative: "percent",
               std: "%.4f"}
    return EstimatorTable(frame, formats)


#: Below this a per-sample std's variance is not a normal double: the page does not resolve it.
STD_FLOOR = math.sqrt(SMALLEST_NORMAL)


def _std_unresolved(moments: Mapping[str, Moments], key: str) -> bool:
    """Whether ``key``'s exact variance is below the smallest normal double (``?mu=1e-100``: k3's is μ⁴/2 =
    5e-401, computed 0; at ``?mu=1e-80`` a subnormal 5e-321 gave a std 0.2 % off), while p differs from q."""
    var = moments[key].var
    return 0.0 < var < SMALLEST_NORMAL or (var == 0.0 and any(m.var > 0.0 for m in moments.values()))


def _std_text(moments: Mapping[str, Moments], key: str) -> str:
    return (_("below {floor}").format(floor=number(STD_FLOOR)) if _std_unresolved(moments, key)
            else f"{moments[key].std:.4g}")


def table_caption(q_name: str, p_name: str, n: int, seed: int,
                  moments: Mapping[str, Moments]) -> str:
    """Under Home's table: the shared draws, and whether k3's spread is below or above k1's here.

    k3 = k1 + (r − 1) has k1's exact mean; its per-sample spread is smaller while p is
    close to q and larger further out (for these normals beyond μ ≈ 1.12), so the
    comparison is chosen from the exact standard deviations in ``moments``.
    """
    text = _(
        "q = {q}, p = {p}: the same {n} draws x ~ q (seed {seed}) feed all three estimators, "
        "and the three panels share one x-axis."
    ).format(q=q_name, p=p_name, n=f"{n:,}", seed=seed)
    sd1, sd3 = moments["k1"].std, moments["k3"].std
    if sd1 == 0.0 and sd3 == 0.0:  # p = q: every value is 0
        return text
    if sd3 < sd1:
        more = _(
            "k1 and k3 have the same exact mean, and here k3's spread is smaller: per-sample std "
            "{k3} against {k1}."
        )
    elif sd3 > sd1:
        more = _(
            "k1 and k3 have the same exact mean, but this far apart k3's spread is larger: "
            "per-sample std {k3} against {k1} (its control variate r − 1 adds more noise "
            "than it cancels)."
        )
    else:
        more = _("k1 and k3 have the same exact mean and here the same spread, {k3}.")
    text += " " + more.format(k3=_std_text(moments, "k3"), k1=_std_text(moments, "k1"))
    if any(_std_unresolved(moments, k) for k in moments):
        text += " " + _("*None* in the table: a per-sample std below {floor}, whose variance is below the "
                        "smallest normal double.").format(floor=number(STD_FLOOR))
    return text
