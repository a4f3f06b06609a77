"""Composite pickers built from :mod:`lab.state` widgets.

A distribution is chosen with one text field holding its spec string, the
same string ``Distribution.spec`` writes and ``kl_core.distributions.parse``
reads (``normal(0.1,1)``, ``laplace(0,1)``, ``t(3,0,1)``,
``mixture(0.5:-1:1,0.5:1:1)``, ``categorical(0,1,2)``).  The URL therefore
carries the whole distribution compactly, e.g. ``?q=normal(0,1)&p=normal(1,1)``.
"""

from __future__ import annotations

import streamlit as st

from kl_core.distributions import Distribution, parse, practical_issue
from lab import state
from lab.ui import fail

__all__ = ["SPEC_HELP", "distribution_pair", "distribution_picker", "seed_picker"]

SPEC_HELP = (
    "Type a distribution as `family(parameters)`:\n\n"
    "- `normal(μ,σ)`, e.g. `normal(0.5,1)`\n"
    "- `laplace(loc,scale)`\n"
    "- `t(ν,loc,scale)` (Student t)\n"
    "- `mixture(w:μ:σ,w:μ:σ,…)`, weights summing to 1\n"
    "- `categorical(logit,logit,…)`, e.g. a next-token distribution"
)


def distribution_picker(label: str, key: str, default_spec: str, *, help: str | None = None) -> Distribution:
    """A spec text field bound to ``?key=``; returns the parsed distribution.

    Shows the distribution's readable name under the field.  On a spec that
    ``parse`` rejects, shows ``st.error`` with its message and stops the page
    (no traceback).

    Parameters
    ----------
    label : str
        Field label, e.g. ``"q (the sampler)"``.
    key : str
        URL key, e.g. ``"q"``.
    default_spec : str
        The spec shown when the URL has none; must parse.
    help : str, optional
        Tooltip; defaults to the spec grammar.
    """
    spec = state.text(label, key, value=default_spec, help=help or SPEC_HELP)
    try:
        dist = parse(spec)
    except ValueError as exc:
        fail(f"**{label}**: {exc}")
    issue = practical_issue(dist)
    if issue:
        fail(
            f"**{label}**: {issue}. The lab keeps scales within [1e-6, 1e6], locations within "
            "±1e6, Student t's df ≥ 0.1 and logits within ±1e4: beyond that, double precision "
            "can no longer tell the two distributions apart reliably."
        )
    st.caption(f"= {dist.name}")
    return dist


def distribution_pair(
    q_default: str,
    p_default: str,
    *,
    q_label: str = "q — the sampler (old policy)",
    p_label: str = "p — the target (new policy)",
    q_key: str = "q",
    p_key: str = "p",
) -> tuple[Distribution, Distribution]:
    """Two pickers side by side; stops with a clear error if q and p cannot be compared."""
    left, right = st.columns(2)
    with left:
        q = distribution_picker(q_label, q_key, q_default)
    with right:
        p = distribution_picker(p_label, p_key, p_default)
    if q.discrete != p.discrete:
        fail("q and p must both be continuous or both be categorical.")
    if q.discrete and getattr(q, "k", None) != getattr(p, "k", None):
        fail(f"q has {q.k} categories but p has {p.k}; give both the same number of logits.")
    return q, p


def seed_picker() -> int:
    """The seed field, ``?seed=``: one definition, so the seed carries from page to page."""
    return int(
        state.number(
            "Seed",
            "seed",
            min_value=0,
            max_value=2**31 - 1,
            value=0,
            step=1,
            help="Seed of numpy's default_rng: the same seed gives the same draws, on every machine.",
        )
    )
