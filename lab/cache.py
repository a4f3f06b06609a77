"""Cached core calls.

Streamlit reruns the page script on every widget change; these wrappers make
a rerun with unchanged inputs free.  They are keyed on plain values: spec
strings (``Distribution.spec``), ints, floats and tuples, never on
``Distribution`` objects, so the cache key is exactly what the URL carries.

Add a wrapper here for every core call a page makes that costs more than a
millisecond or so; keep ``max_entries`` bounded so a long session cannot grow
memory without limit.
"""

from __future__ import annotations

import streamlit as st

from kl_core import exact, montecarlo
from kl_core.distributions import parse

__all__ = ["estimator_moments", "exact_kl", "simulate"]


@st.cache_data(max_entries=64, show_spinner=False)
def exact_kl(a_spec: str, b_spec: str) -> float:
    r"""``kl_core.exact.kl(parse(a_spec), parse(b_spec))`` = :math:`\mathrm{KL}[a\,\|\,b]`."""
    return exact.kl(parse(a_spec), parse(b_spec))


@st.cache_data(max_entries=32, show_spinner=False)
def simulate(
    q_spec: str,
    p_spec: str,
    n: int,
    repeats: int = 1,
    seed: int = 0,
    lam: float = 1.0,
    keys: tuple[str, ...] = montecarlo.DEFAULT_KEYS,
    sample_size: int = 20_000,
) -> montecarlo.Simulation:
    """``kl_core.montecarlo.simulate`` on spec strings; see its docstring."""
    return montecarlo.simulate(
        q_spec,
        p_spec,
        n,
        repeats=repeats,
        seed=seed,
        lam=lam,
        keys=keys,
        sample_size=sample_size,
    )


@st.cache_data(max_entries=128, show_spinner=False)
def estimator_moments(
    key: str, q_spec: str, p_spec: str, lam: float | None = None
) -> exact.Moments:
    """``kl_core.exact.estimator_moments`` on spec strings: exact mean and variance."""
    return exact.estimator_moments(key, parse(q_spec), parse(p_spec), lam=lam)
