"""What Home says under its three histograms, and its table of numbers (no streamlit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from kl_core.estimators import ESTIMATORS
from kl_core.exact import Moments
from kl_core.montecarlo import EstimatorSummary
from lab.i18n import _

__all__ = ["EstimatorTable", "estimator_table", "histogram_captions"]


def histogram_captions(results: Mapping[str, EstimatorSummary], moments: Mapping[str, Moments],
                       true_kl: float) -> dict[str, str]:
    """One caption per estimator (k1, k2, k3): k1's negative share, k2's bias, k3's exactness."""
    if true_kl == 0.0:  # p = q: log r = 0 at every sample
        return dict.fromkeys(results, _("With p = q every log-ratio is 0, so every value is 0."))
    k2_mean = moments["k2"].mean
    return {
        "k1": _("{share:.0%} of single values are negative (shaded), though a KL never is.").format(
            share=results["k1"].neg_fraction
        ),
        "k2": _("Never negative, but its exact mean is {mean:.4g}, not {kl:.4g}: biased by "
                "{bias:+.1%}.").format(mean=k2_mean, kl=true_kl, bias=k2_mean / true_kl - 1.0),
        "k3": _("Never negative, and its exact mean is the KL itself (dashed line)."),
    }


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
    exact_mean, exact_kl = _("exact mean"), _("exact KL[q,p]")
    negative, std = _("share of values < 0"), _("per-sample std (exact)")
    frame = pd.DataFrame(
        {
            _("estimator"): [ESTIMATORS[k].name for k in keys],
            mean_of_n: [results[k].mean for k in keys],
            exact_mean: [moments[k].mean for k in keys],
            exact_kl: [true_kl] * len(keys),
            negative: [results[k].neg_fraction for k in keys],
            std: [moments[k].std for k in keys],
        }
    )
    formats = {mean_of_n: "%.5f", exact_mean: "%.5f", exact_kl: "%.5f", negative: "percent",
               std: "%.4f"}
    return EstimatorTable(frame, formats)
