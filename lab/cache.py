"""Cached core calls.

Streamlit reruns the page script on every widget change; these wrappers make
a rerun with unchanged inputs free.  They are keyed on plain values: spec
strings (``Distribution.spec``), ints, floats and tuples, never on
``Distribution`` objects, so the cache key is exactly what the URL carries.

Add a wrapper here for every core call a page makes that costs more than a
millisecond or so; keep ``max_entries`` bounded so a long session cannot grow
memory without limit.

Waiting: a wrapper made with :func:`cached` shows a spinner with its text on
the page (in the run's language) when a call is not in the cache and takes
more than half a second (Streamlit's own ``show_spinner``, which waits 0.5 s
before drawing); a cache hit shows nothing and costs nothing more.  So a cold
shared link or a preset says what it is computing, not only Streamlit's
"Running" in the corner, without any page code.

Languages: the core's results hold numbers and English-only core text, the
same in every language, so their keys need no language.  A cached function
that returns *translated* text (a chart with its titles) takes the language
as its first argument, filled in by a plain wrapper from
:func:`i18n.language` (see :func:`estimator_chart`), so an English chart is
never served to a Chinese page.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st

import i18n
from i18n import N_
from kl_core.estimation import exact, montecarlo
from kl_core.estimation.distributions import parse
from kl_core.estimation.estimators import ESTIMATORS

__all__ = [
    "CORE_ERRORS",
    "cached",
    "audit_file",
    "chart",
    "estimator_chart",
    "clamp_curve",
    "diagnose",
    "pull_curve",
    "json_file",
    "table_columns",
    "draw_log_ratios",
    "estimator_moments",
    "exact_kl",
    "f_divergence",
    "fisher_curve",
    "gain_along_path",
    "gradient_table",
    "k2_bias",
    "k_lambda_spread",
    "lambda_parabola",
    "moments_or_failures",
    "lambda_star",
    "error_bar_checks",
    "simulate",
    "drift_specs",
    "sequence_curves",
    "sequence_gradient_table",
    "sequence_sample",
    "projection_draws",
    "training_runs",
]


def cached(waiting: str, *, max_entries: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``st.cache_data(max_entries=...)`` with the spinner text ``waiting`` in the run's language.

    ``waiting`` is an English message marked ``N_("…")``.  Streamlit reads
    ``show_spinner`` when the function is decorated, so this decorates the
    function once per language (:data:`i18n.LANGUAGES`) and calls the one
    of the run's language.  The copies share one cache: Streamlit keys a
    function's cache by its module, name and source, which they have in common,
    so a result computed for an English page is a hit for a Chinese one.
    The returned function has ``clear()`` (empties that shared cache) and
    ``spinner_texts`` (the spinner text per language).
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        texts = {}
        for lang in i18n.LANGUAGES:
            with i18n.using(lang):
                texts[lang] = i18n._(waiting)
        by_language = {lang: st.cache_data(func, max_entries=max_entries, show_spinner=text)
                       for lang, text in texts.items()}

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            return by_language.get(i18n.language(), by_language["en"])(*args, **kwargs)

        call.clear = by_language["en"].clear  # type: ignore[attr-defined]
        call.spinner_texts = texts  # type: ignore[attr-defined]
        return call

    return decorate


@cached(N_("Computing the exact KL…"), max_entries=64)
def exact_kl(a_spec: str, b_spec: str) -> float:
    r"""``kl_core.estimation.exact.kl(parse(a_spec), parse(b_spec))`` = :math:`\mathrm{KL}[a\,\|\,b]`."""
    return exact.kl(parse(a_spec), parse(b_spec))


@cached(N_("Drawing samples and computing the estimates…"), max_entries=32)
def simulate(q_spec: str, p_spec: str, n: int, **options: Any) -> montecarlo.Simulation:
    """``kl_core.estimation.montecarlo.simulate`` on spec strings; see its docstring.

    ``options`` are its keywords (``repeats``, ``seed``, ``lam``, ``keys`` as a
    tuple, ``sample_size``, …), with its defaults: part of the cache key.
    """
    return montecarlo.simulate(q_spec, p_spec, n, **options)


#: What kl_core raises on a pair it cannot handle (reported on the page, not as a traceback).
CORE_ERRORS = (ValueError, ArithmeticError, RuntimeError)


@cached(N_("Computing the estimators' exact mean and variance…"), max_entries=128)
def estimator_moments(
    key: str, q_spec: str, p_spec: str, lam: float | None = None
) -> exact.Moments:
    """``kl_core.estimation.exact.estimator_moments`` on spec strings: exact mean and variance."""
    return exact.estimator_moments(key, parse(q_spec), parse(p_spec), lam=lam)


def moments_or_failures(
    keys: tuple[str, ...], q_spec: str, p_spec: str, lam: float
) -> tuple[dict[str, exact.Moments], dict[str, str]]:
    """Exact moments of each estimator in ``keys`` (λ for ``k_lambda``), and the ones that failed.

    A key whose moments the core cannot compute (e.g. a variance too large for
    floating point) gets NaN moments carrying the reason, and is listed in the
    second dict with that reason.
    """
    moments, failed = {}, {}
    for k in keys:
        try:
            moments[k] = estimator_moments(k, q_spec, p_spec, lam if ESTIMATORS[k].parameter else None)
        except CORE_ERRORS as exc:
            moments[k] = exact.Moments(math.nan, math.nan, i18n.message(exc))
            failed[k] = i18n.message(exc)
    return moments, failed


def _estimator_builders() -> dict:
    from charts.estimator_lab import batch_means_histogram, running_means_chart
    from charts.histograms import per_sample_histogram

    return {
        "per-sample": per_sample_histogram,
        "estimates": batch_means_histogram,
        "running-means": running_means_chart,
    }


def estimator_chart(kind: str, *args, **kwargs):  # -> alt.Chart
    """The Estimator Lab's chart ``kind`` (per-sample, estimates, running-means), kept across reruns.

    The same inputs (arrays are hashed by content) in the same language give
    the same read-only chart object, so a rerun that changes nothing a chart
    shows does not rebuild it.
    """
    return _estimator_chart(i18n.language(), kind, *args, **kwargs)


@st.cache_resource(max_entries=128, show_spinner=False)
def _estimator_chart(lang: str, kind: str, *args, **kwargs):  # -> alt.Chart
    # ``lang`` is only part of the key: the builders translate with the run's language.
    from charts.estimator_lab import with_numpy_rows

    return with_numpy_rows(_estimator_builders()[kind](*args, **kwargs))


def chart(builder, *args, **kwargs):  # -> alt.TopLevelMixin
    """``builder(*args, **kwargs)`` — a ``charts`` builder's chart — kept across reruns and sessions.

    For a chart whose inputs often stay the same while another widget moves:
    ``ui.chart(cache.chart(fisher.gap_chart, curve, theta), name=...)``.  The
    key is the builder's qualified name, the language and the arguments (arrays
    by content, so pass the arrays the chart is drawn from, not large raw
    samples); the chart returned is shared, so never change it.  Building an
    Altair chart costs ~1-3 ms and :func:`lab.ui.chart` converts a kept chart
    to its spec only once.
    """
    name = f"{builder.__module__}.{builder.__qualname__}"
    return _chart(i18n.language(), name, builder, *args, **kwargs)


@st.cache_resource(max_entries=64, show_spinner=False)
def _chart(lang: str, name: str, _builder, *args, **kwargs):  # -> alt.TopLevelMixin
    # ``lang`` and ``name`` are only the key (the builder translates with the run's language);
    # ``_builder`` is not hashed: its name stands for it.
    return _builder(*args, **kwargs)


@cached(N_("Computing the f-divergences along the path…"), max_entries=64)
def fisher_curve(path: str, name: str, thetas: np.ndarray):  # -> fisher.FisherCurve
    """``kl_core.estimation.fisher.fisher_curve``: D_f along a path and ½ f″(1) F θ² (~1-2 ms per θ).

    ``thetas`` is a numpy array: Streamlit hashes its bytes at once, where a tuple
    of floats is hashed element by element (~1 ms per 100 floats on every rerun).
    """
    from kl_core.estimation import fisher

    return fisher.fisher_curve(path, name, thetas)


@cached(N_("Computing E[k2] and the KL along the path…"), max_entries=32)
def k2_bias(path: str, thetas: np.ndarray):  # -> fisher.K2Bias
    """``kl_core.estimation.fisher.k2_bias_along_path``: E[k2] and KL[q‖p] along a path."""
    from kl_core.estimation import fisher

    return fisher.k2_bias_along_path(path, thetas)


@cached(N_("Computing the best λ…"), max_entries=64)
def lambda_star(q_spec: str, p_spec: str) -> exact.LambdaStar:
    """``kl_core.estimation.exact.lambda_star`` on spec strings: λ* of kλ, or None with the reason."""
    return exact.lambda_star(parse(q_spec), parse(p_spec))


@cached(N_("Checking whether the error bars can be trusted…"), max_entries=256)
def _error_bar_check(key: str, q_spec: str, p_spec: str, n: int, lam: float | None):
    from kl_core.estimation import reliability

    return reliability.error_bar_check(key, parse(q_spec), parse(p_spec), n, lam=lam)


def error_bar_checks(keys: tuple[str, ...], q_spec: str, p_spec: str, n: int,
                     lam: float) -> dict:  # -> {key: reliability.ErrorBarCheck | None}
    """``kl_core.estimation.reliability.error_bar_check`` for each estimator at N = ``n``.

    Can a ±SE from ``n`` draws be trusted (exact fourth moment)?  None where
    the core cannot tell (its exact moments failed for this pair).
    """
    out = {}
    for k in keys:
        try:
            out[k] = _error_bar_check(k, q_spec, p_spec, n, lam if ESTIMATORS[k].parameter else None)
        except CORE_ERRORS:
            out[k] = None
    return out


@cached(N_("Computing the variance of kλ for every λ…"), max_entries=64)
def lambda_parabola(q_spec: str, p_spec: str):  # -> control_variates.LambdaParabola
    """``kl_core.estimation.control_variates.lambda_parabola``: exact Var(kλ) as a parabola in λ."""
    from kl_core.estimation import control_variates

    return control_variates.lambda_parabola(parse(q_spec), parse(p_spec))


@cached(N_("Computing the variance gain along the path…"), max_entries=16)
def gain_along_path(path: str, thetas: tuple[float, ...]):  # -> control_variates.GainCurve
    """``kl_core.estimation.control_variates.gain_along_path``: Var(k3)/Var(kλ*) along a path (~2-4 ms per θ)."""
    from kl_core.estimation import control_variates

    return control_variates.gain_along_path(path, thetas)


@cached(N_("Drawing samples…"), max_entries=32)
def draw_log_ratios(q_spec: str, p_spec: str, n: int, seed: int = 0):  # -> numpy.ndarray
    """``kl_core.estimation.bregman.draw_log_ratios``: log r of n seeded draws x ~ q."""
    from kl_core.estimation import bregman

    return bregman.draw_log_ratios(parse(q_spec), parse(p_spec), n, seed)


@cached(N_("Computing the exact f-divergence…"), max_entries=64)
def f_divergence(name: str, p_spec: str, q_spec: str) -> float:
    """``kl_core.estimation.exact.f_divergence``: exact D_f(p, q) = E_q[f(p/q)] (``inf`` if it diverges)."""
    return exact.f_divergence(name, parse(p_spec), parse(q_spec))


# ---------------------------------------------------------------- approx_kl page
# (imports inside the functions: kl_core.audit.statistics pulls in pandas only when used)


@cached(N_("Computing the clamped estimators along the path…"), max_entries=32)
def clamp_curve(entry_id: str, path: str, n: int = 121):  # -> kl_core.libraries.clamps.ClampCurve
    """``kl_core.libraries.clamps.clamp_curve``: exact clamped and unclamped means, KL and clamp hits along a path."""
    from kl_core.libraries import clamps

    return clamps.clamp_curve(entry_id, path, n=n)


def _source(data: bytes, name: str):
    """Uploaded bytes as a binary buffer named ``name`` (the name gives the format)."""
    import io

    buf = io.BytesIO(data)
    buf.name = name
    return buf


@cached(N_("Reading the file…"), max_entries=16)
def table_columns(key: str, name: str, _data: bytes | None = None) -> list[str]:
    """``kl_core.cli.audit.table_columns`` of the file at path ``key``, or of uploaded bytes.

    With ``_data`` (an upload's bytes, named ``name``), ``key`` only identifies
    the upload (its ``file_id``), so a large upload's bytes are not hashed
    again on every rerun.
    """
    from kl_core.cli.audit import table_columns as columns

    return columns(key if _data is None else _source(_data, name))


@cached(N_("Auditing the file…"), max_entries=16)
def audit_file(
    key: str, name: str, sampler_col: str, other_col: str, direction: str = "sampler-other",
    _data: bytes | None = None, **columns: str | None,
):  # -> kl_core.audit.statistics.AuditReport
    """``kl_core.audit.statistics.load_table`` then ``kl_core.audit.statistics.audit``; ``ValueError`` on a bad file.

    ``key`` is a path, or with ``_data`` the upload's ``file_id`` (as in :func:`table_columns`).
    ``columns`` are ``load_table``'s optional columns, by keyword (``mask_col``,
    ``position_col``, ``sequence_col``, ``rollout_col``; ``kl_col``, the exact
    next-token KL, adds the Rao–Blackwellized ``rb``).
    """
    from kl_core.audit import statistics as audit

    source = key if _data is None else _source(_data, name)
    table = audit.load_table(source, sampler_col, other_col, **columns)
    return audit.audit(**table.as_kwargs(), direction=direction)


@st.cache_data(max_entries=4, show_spinner=False)
def json_file(path: str) -> dict:
    """The parsed JSON file at ``path`` (e.g. the bundled example's exact KLs)."""
    import json
    from pathlib import Path

    return json.loads(Path(path).read_text())


@cached(N_("Reading the configuration…"), max_entries=32)
def diagnose(data: str | bytes, library: str | None = None, filename: str | None = None,
             release: str | None = None):  # -> kl_core.doctor.diagnosis.Diagnosis
    """``kl_core.doctor.diagnosis.diagnose``; ``UnreadableInput`` (a ``ValueError``) on input it cannot read."""
    from kl_core.doctor.diagnosis import diagnose as run

    return run(data, library, filename=filename, release=release)


@cached(N_("Computing how this option pulls the policy…"), max_entries=64)
def pull_curve(entry):  # (CrosswalkEntry) -> kl_core.doctor.diagnosis.PullCurve
    """``kl_core.doctor.diagnosis.pull_curve`` of one crosswalk row: the card's own, an older
    release's clamps and code included (``KLUse.entry``), not today's row of that option."""
    from kl_core.doctor.diagnosis import pull_curve as run

    return run(entry)


# ---------------------------------------------------------------- Tokens & sequences page
# (chains travel as their markov(...) specs; imports inside: the page's modules only load there)


@st.cache_data(max_entries=32, show_spinner=False)
def drift_specs(k: int, drift: float, placement: str) -> tuple[str, str]:
    """``kl_core.sequences.markov.drift_pair`` as the two ``markov(...)`` specs ``(policy, ref)``."""
    from kl_core.sequences.markov import drift_pair

    policy, ref = drift_pair(k, drift, placement)
    return policy.spec, ref.spec


@cached(N_("Computing the exact curves for every sequence length…"), max_entries=32)
def sequence_curves(policy_spec: str, ref_spec: str, max_length: int):  # -> sequences.SequenceCurves
    """``kl_core.sequences.estimators.exact_curves``: exact mean and std of the six estimators for T = 1 … max_length."""
    from kl_core.sequences.estimators import exact_curves

    return exact_curves(policy_spec, ref_spec, max_length)


@cached(N_("Sampling sequences…"), max_entries=16)
def sequence_sample(
    policy_spec: str, ref_spec: str, length: int, n: int, seed: int, checkpoints: tuple[int, ...]
):  # -> sequence_montecarlo.SequenceSample
    """``kl_core.sequences.montecarlo.simulate_sequences`` with summaries at ``checkpoints``."""
    from kl_core.sequences.montecarlo import simulate_sequences

    return simulate_sequences(policy_spec, ref_spec, length, n, seed=seed, checkpoints=checkpoints)


@cached(N_("Computing every option's exact gradient…"), max_entries=32)
def sequence_gradient_table(policy_spec: str, ref_spec: str, length: int):  # -> SequenceGradientTable
    """``kl_core.sequences.gradients.sequence_gradient_table``: every option's exact expected gradient."""
    from kl_core.sequences.gradients import sequence_gradient_table as table

    return table(policy_spec, ref_spec, length)


# ---------------------------------------------------------------- Gradients page
# Distributions travel as tuples of logits (a handful of floats: hashing them is cheap).

Logits = tuple[float, ...]


@cached(N_("Computing every option's exact gradient…"), max_entries=64)
def gradient_table(policy: Logits, ref: Logits, sampler: Logits | None, lam: float):  # -> GradientTable
    """``kl_core.gradients.expected.gradient_table`` with every crosswalk entry that has a gradient (loss and reward)."""
    from kl_core.gradients import expected as gradients

    return gradients.gradient_table(policy, ref, sampler=sampler, lam=lam,
                                    entries=gradients.gradient_entries())


@cached(N_("Computing the spread of kλ's gradient…"), max_entries=64)
def k_lambda_spread(policy: Logits, ref: Logits, sampler: Logits | None,
                    lams: np.ndarray) -> np.ndarray:
    """``kl_core.gradients.expected.k_lambda_spread``: k_λ's gradient spread along a grid of λ."""
    from kl_core.gradients import expected as gradients

    return gradients.k_lambda_spread(policy, ref, sampler=sampler, lam=lams)


@cached(N_("Sampling gradient estimates…"), max_entries=32)
def projection_draws(
    policy: Logits, ref: Logits, sampler: Logits | None, lam: float, names: tuple[str, ...],
    n: int, repeats: int, seed: int,
) -> dict[str, tuple[np.ndarray, float, float]]:
    """Per option: ``repeats`` N-sample gradient estimates projected on ∇KL[π_θ‖π_ref], and their exact mean and sd.

    ``kl_core.gradients.expected.sample_projection_means`` (the same seed, so the same
    tokens, for every option) and ``projection_moments``; empty if that
    gradient is zero.
    """
    from kl_core.gradients import expected as gradients

    table = gradient_table(policy, ref, sampler, lam)
    direction = table.true_reverse
    if not np.any(direction):
        return {}
    out = {}
    for name in names:
        row = table.row(name)
        mean, sd = gradients.projection_moments(row, table, direction, n)
        draws = gradients.sample_projection_means(row, table, direction, n, repeats, seed=seed)
        out[name] = (draws, mean, sd)
    return out


@cached(N_("Training the toy policy with each option…"), max_entries=32)
def training_runs(policy: Logits, ref: Logits, reward: Logits, beta: float, options: tuple[str, ...],
                  steps: int, lr: float):  # -> (dict of TrainingRun, (reverse, forward) optima)
    """``kl_core.gradients.flow.training_runs`` for ``options`` and ``analytic_optima`` (ValueError on a bad β).

    λ is left at its default: it only matters for ``k_lambda``, which the page does not train.
    """
    from kl_core.gradients import flow as gradient_flow

    runs = gradient_flow.training_runs(policy, ref, reward, beta, options=options, steps=steps, lr=lr)
    return runs, gradient_flow.analytic_optima(ref, reward, beta)
