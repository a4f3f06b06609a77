r"""KL Estimator Lab's numerical core: Monte Carlo estimators of KL divergence, exactly and by sampling.

The names below are the public API: what the app's pages, a notebook and the
command line use.  They load lazily (PEP 562), so ``import kl_core`` costs
almost nothing and pulls in no scipy; the first use of a name imports the
module that defines it.  Each name is defined once, in the module listed in
:data:`_WHERE`; ``help(kl_core.kl)`` shows its formula and source.

Subpackages, from the bottom layer up (``tests/test_layers.py`` checks that
imports only go downwards):

``validation``, ``numbers``
    :class:`Message` and :class:`InputError`, and the argument checks; how a
    share and a figure past a double are written.
``estimation``
    Distributions and their families, the estimators k1, k2, k3, kλ,
    f-divergences, exact values by quadrature, tails, Monte Carlo, error
    bars, control variates, the Bregman picture, the Fisher view, presets
    and Schulman's published tables.
``libraries``
    How PPO/GRPO/RLHF libraries compute their KL (the crosswalk), their
    clamps and loss reductions.
``gradients``, ``audit``
    Exact expected gradients of each KL option (value ≠ gradient);
    auditing a file of per-token log-probabilities.
``sequences``, ``doctor``
    Sequence-level KL on a Markov toy model; the config doctor.
``lessons``
    The lessons and their quiz export.
``cli``
    ``python -m kl_core``.

Example
-------
>>> import kl_core
>>> q, p = kl_core.parse("normal(0,1)"), kl_core.parse("normal(1,1)")
>>> round(kl_core.kl(q, p), 6)
0.5

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module (under ``kl_core``) that defines it.
_WHERE: dict[str, str] = {
    # messages
    "InputError": "validation",
    "Message": "validation",
    # how numbers are written
    "share": "numbers",
    "from_log": "numbers",
    "lam_text": "numbers",
    # distributions
    "Distribution": "estimation.distributions",
    "Tail": "estimation.distributions",
    "parse": "estimation.distributions",
    "log_ratio": "estimation.distributions",
    "practical_issue": "estimation.distributions",
    # estimators and divergences
    "ESTIMATORS": "estimation.estimators",
    "EstimatorInfo": "estimation.estimators",
    "k1": "estimation.estimators",
    "k2": "estimation.estimators",
    "k3": "estimation.estimators",
    "k_lambda": "estimation.estimators",
    "DIVERGENCES": "estimation.divergences",
    "FDivergence": "estimation.divergences",
    # exact values
    "kl": "estimation.exact",
    "f_divergence": "estimation.exact",
    "estimator_moments": "estimation.exact",
    "lambda_star": "estimation.exact",
    "optimal_lambda": "estimation.exact",
    "Moments": "estimation.exact",
    "LambdaStar": "estimation.exact",
    "CHI2_OVERFLOW_NOTE": "estimation.exact",
    "QuadratureError": "estimation._quadrature",
    "OVERFLOW_NOTE": "estimation._expectation",
    # sampling
    "simulate": "estimation.montecarlo",
    "Simulation": "estimation.montecarlo",
    "error_bar_check": "estimation.reliability",
    "PRESETS": "estimation.presets",
    "SCHULMAN_2020": "estimation.published",
    "match_published": "estimation.published",
    # pictures
    "tangent_picture": "estimation.bregman",
    "lambda_parabola": "estimation.control_variates",
    "fisher_curve": "estimation.fisher",
    "PATHS": "estimation.paths",
    # libraries, gradients, sequences
    "CROSSWALK": "libraries.crosswalk",
    "lookup": "libraries.crosswalk",
    "gradient_table": "gradients.expected",
    "training_run": "gradients.flow",
    "SEQUENCE_ESTIMATORS": "sequences.estimators",
    "sequence_report": "sequences.estimators",
    "simulate_sequences": "sequences.montecarlo",
    # audit, doctor, lessons
    "load_table": "audit.statistics",
    "diagnose": "doctor.diagnosis",
    "LESSONS": "lessons.catalog",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """The object ``kl_core.<module>.<name>`` for a ``name`` of :data:`__all__`.

    Its module is imported on first use (PEP 562); any other name raises AttributeError.
    """
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'kl_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kl_core.{where}"), name)
    globals()[name] = value  # later uses skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
