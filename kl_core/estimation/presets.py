"""Named (q, p) pairs that the lab opens with, each chosen to show one behaviour.

The published numbers each preset reproduces live in :mod:`kl_core.estimation.published`
where they exist; the exact values are always computed, never stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from kl_core.estimation.distributions import Distribution, parse
from kl_core.validation import N_, by_key

__all__ = ["PRESETS", "Preset"]


@dataclass(frozen=True)
class Preset:
    """A named pair of distributions: ``q`` samples, ``p`` is the target.

    Attributes
    ----------
    key : str
        Short key, used in URLs.
    title : str
        Display title (English; the app translates it, see ``kl_core.validation.N_``).
    q_spec, p_spec : str
        Specs read by :func:`kl_core.estimation.distributions.parse`.
    blurb : str
        One sentence on what the preset shows (English, translated by the app).
    source : str
        Where the setting comes from (a citation, or English translated by the app).
    """

    key: str
    title: str
    q_spec: str
    p_spec: str
    blurb: str
    source: str

    @property
    def q(self) -> Distribution:
        """The sampler."""
        return parse(self.q_spec)

    @property
    def p(self) -> Distribution:
        """The target."""
        return parse(self.p_spec)


_BLOG = "J. Schulman, Approximating KL Divergence (2020), http://joschu.net/blog/kl-approx.html"

PRESETS: dict[str, Preset] = by_key(
    Preset(
        "schulman-small",
        N_("Schulman's small-KL case (μ = 0.1)"),
        "normal(0,1)",
        "normal(0.1,1)",
        N_("True KL 0.005: k1's stdev is 20× the KL, k2 and k3 about 1.42×; k2's bias is tiny."),
        _BLOG,
    ),
    Preset(
        "schulman-large",
        N_("Schulman's large-KL case (μ = 1)"),
        "normal(0,1)",
        "normal(1,1)",
        N_("True KL 0.5: k2 is now 25% too high, while k3 stays unbiased with stdev 1.7×."),
        _BLOG,
    ),
    Preset(
        "notes-example",
        N_("Worked example from the notes (μ = 0.5)"),
        "normal(0,1)",
        "normal(0.5,1)",
        N_("True KL 0.125; k1 = (0.25 − x)/2 per sample, so any x > 0.25 gives a negative value."),
        N_("Study notes on Schulman's blog (2025), worked example"),
    ),
    Preset(
        "heavy-tails",
        N_("Heavy tails: p = N(0, 1.5²)"),
        "normal(0,1)",
        "normal(0,1.5)",
        N_("p is wider than √2·q, so the mean of r² under q is infinite, and so is Var(k3): its "
           "running mean jumps."),
        N_("The variance condition: the mean of r² under q is finite only if p's variance is "
           "less than twice q's"),
    ),
    Preset(
        "laplace-gaussian",
        N_("Laplace sampler, Gaussian target"),
        "laplace(0,1)",
        "normal(0,1)",
        N_("Different shapes: both KLs have closed forms; the estimators' other moments come from quadrature."),
        N_("This lab"),
    ),
    Preset(
        "next-token",
        N_("Categorical next-token pair"),
        "categorical(2,1,0.5,0,-1)",
        "categorical(1.6,1.2,0.7,0.2,-0.6)",
        N_("Two next-token distributions over 5 tokens, as in an RLHF policy and its reference."),
        N_("This lab"),
    ),
)

