"""What Home says under its three histograms (no streamlit)."""

from __future__ import annotations

from collections.abc import Mapping

from kl_core.exact import Moments
from kl_core.montecarlo import EstimatorSummary

__all__ = ["histogram_captions"]


def histogram_captions(results: Mapping[str, EstimatorSummary], moments: Mapping[str, Moments],
                       true_kl: float) -> dict[str, str]:
    """One caption per estimator (k1, k2, k3): k1's negative share, k2's bias, k3's exactness."""
    if true_kl == 0.0:  # p = q: log r = 0 at every sample
        return dict.fromkeys(results, "With p = q every log-ratio is 0, so every value is 0.")
    k2_mean = moments["k2"].mean
    return {
        "k1": "{share:.0%} of single values are negative (shaded), though a KL never is.".format(
            share=results["k1"].neg_fraction
        ),
        "k2": "Never negative, but its exact mean is {mean:.4g}, not {kl:.4g}: biased by "
        "{bias:+.1%}.".format(mean=k2_mean, kl=true_kl, bias=k2_mean / true_kl - 1.0),
        "k3": "Never negative, and its exact mean is the KL itself (dashed line).",
    }
