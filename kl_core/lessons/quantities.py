r"""The quantities a lesson or a quiz question asks for, each computed by ``kl_core``.

One vocabulary, shared by the app's lessons (``/lessons``) and by the quiz
exporter (``python -m kl_core quiz``): a question names its quantity and the
parameters of its setting, and :func:`compute` returns the exact value.  The
parameters are plain JSON values (distribution specs as strings, numbers),
so a question's ``params`` reproduce its answer.

Numeric quantities (``x ~ q``, ``r = p(x)/q(x)``; ``q``, ``p`` are specs):

======================  ==================================================================  ===============
quantity                what it is                                                          params
======================  ==================================================================  ===============
``kl_qp``               :math:`\mathrm{KL}[q\|p]`                                            q, p
``kl_pq``               :math:`\mathrm{KL}[p\|q]`                                            q, p
``mean_k1``             :math:`\mathbb{E}_q[k_1]` (likewise ``mean_k2``, ``mean_k3``)        q, p
``mean_k_lambda``       :math:`\mathbb{E}_q[k_\lambda]`                                      q, p, lam
``bias_k2``             :math:`\mathbb{E}_q[k_2] - \mathrm{KL}[q\|p]`                        q, p
``sd_k1``               per-sample SD of :math:`k_1` (likewise ``sd_k2``, ``sd_k3``,         q, p
                        ``sd_k3_pq``)
``sd_k_lambda``         per-sample SD of :math:`k_\lambda`                                   q, p, lam
``sd_mean_k1``          SD of the mean of ``n`` independent :math:`k_1` values               q, p, n
``neg_share_k1``        :math:`P_q(k_1 < 0) = P_q(\log r > 0)`                               q, p
``neg_share_k_lambda``  :math:`P_q(k_\lambda < 0)`                                           q, p, lam
``neg_share_mean_k1``   :math:`P(\bar k_1 < 0)` for the mean of ``n`` values (equal-variance  q, p, n
                        normals, where it is exactly normal)
``lambda_star``         :math:`\lambda^* = \mathrm{Cov}(\log r, r)/\mathrm{Var}(r)`          q, p
``var_ratio_lambda_star``  :math:`\mathrm{Var}(k_{\lambda^*}) / \mathrm{Var}(k_1)`           q, p
``mu_equal_sd``         the shift μ at which ``a`` and ``b`` have equal SD,                  a, b
                        :math:`q = \mathcal N(0,1)`, :math:`p = \mathcal N(\mu,1)`
``k1_at``               the value of :math:`k_1` at one ``logr`` (likewise ``k2_at``,        logr
                        ``k3_at``, ``k3_pq_at``)
``grad_norm``           :math:`\|\mathbb{E}_\pi[\nabla_\theta\,\ell]\|` of ``option`` used   k, t, option
                        as a loss, :math:`\pi_\theta = \mathrm{softmax}(t v)`, uniform
                        :math:`\pi_{\mathrm{ref}}` (:func:`kl_core.gradients.demo.demo_logits`)
``grad_cos_reverse``    its cosine to :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]`  k, t, option
``grad_cos_forward``    its cosine to :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`  k, t, option
``kl_policy_ref``       :math:`\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]` of that setting   k, t
``beta_per_sequence``   the coefficient a per-token β puts on the sequence KL                beta, T, mode
``seq_kl``              the sequence KL of the drift family (:func:`kl_core.sequences.markov.drift_pair`)  K, drift, T
``seq_mean_<key>``      exact mean of a sequence estimator (``sum_k1``, ``mean_k3``, ``rb`` …)  K, drift, T
``seq_sd_<key>``        its exact SD per sequence                                            K, drift, T
``kl_coef``             the coefficient of a config's KL term (0 without one)                config
======================  ==================================================================  ===============

Choice quantities return the key of the right choice:

=========================  =====================================================  ==================
``narrower``               the estimator of ``keys`` with the smallest SD           q, p, keys
``unbiased_for``           the estimator of ``keys`` whose mean is ``target``        q, p, keys, target
``unchanged_under_flip``   the estimator of ``keys`` equal at ``logr`` and −logr    logr, keys
``nonnegative_lambda``     the λ of ``lams`` for which no sample of kλ is < 0       lams
``grad_target``            what ``option``'s expected gradient is (``reverse_kl``,  k, t, option
                           ``forward_kl``, ``zero``, ``mixed``)
``seq_largest_sd``         the sequence estimator of ``keys`` with the largest SD   K, drift, T, keys
``seq_smallest_sd``        … with the smallest SD                                   K, drift, T, keys
``kl_where``               where a config's KL term sits: ``reward``, ``loss``,     config
                           ``none``
``kl_estimator``           its estimator (``k1``, ``k2``, ``k3``, ``none``)         config
``kl_gradient``            its on-policy expected gradient, or ``none``             config
=========================  =====================================================  ==================

``config`` is the file name of one of the doctor's examples in
``data/doctor_examples`` (read by :func:`kl_core.doctor.diagnosis.diagnose`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from kl_core.estimation import estimators
from kl_core.estimation.distributions import Categorical, Distribution, Gaussian, parse

__all__ = [
    "CHOICE_QUANTITIES",
    "EXAMPLES_DIR",
    "NUMERIC_QUANTITIES",
    "compute",
    "example_text",
    "first_use",
    "mu_equal_sd",
    "prob_log_ratio_above",
]

#: The doctor's example configs (lesson 7 reads them).
EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "data" / "doctor_examples"

_STD = NormalDist()


# --------------------------------------------------------------------------- #
# Probabilities of events in log r
# --------------------------------------------------------------------------- #
def _gaussian_above(q: Gaussian, p: Gaussian, level: float) -> float:
    r"""P_q(log r > level) for two normals: log r is a quadratic ax² + bx + c in x."""
    a = 0.5 / q.sigma**2 - 0.5 / p.sigma**2
    b = p.mu / p.sigma**2 - q.mu / q.sigma**2
    c = math.log(q.sigma / p.sigma) - p.mu**2 / (2 * p.sigma**2) + q.mu**2 / (2 * q.sigma**2) - level

    def cdf(x: float) -> float:
        return _STD.cdf((x - q.mu) / q.sigma)

    if a == 0.0:
        if b == 0.0:
            return 1.0 if c > 0 else 0.0
        root = -c / b
        return 1.0 - cdf(root) if b > 0 else cdf(root)
    disc = b * b - 4 * a * c
    if disc <= 0.0:
        return 1.0 if a > 0 else 0.0
    s = math.sqrt(disc)
    x1, x2 = sorted(((-b - s) / (2 * a), (-b + s) / (2 * a)))
    inside = cdf(x2) - cdf(x1)
    return 1.0 - inside if a > 0 else inside


def prob_log_ratio_above(q: Distribution, p: Distribution, level: float) -> float:
    r"""The probability :math:`P_{x\sim q}(\log r(x) > \text{level})`, exactly.

    For two normals :math:`\log r = \log p(x) - \log q(x)` is a quadratic
    :math:`a x^2 + b x + c` in :math:`x`, with
    :math:`a = \tfrac{1}{2\sigma_q^2} - \tfrac{1}{2\sigma_p^2}`,
    :math:`b = \tfrac{\mu_p}{\sigma_p^2} - \tfrac{\mu_q}{\sigma_q^2}`, so the event
    is one or two half-lines or an interval and its probability is a sum of
    normal CDFs :math:`\Phi`.  For :math:`q = \mathcal N(0,1)`,
    :math:`p = \mathcal N(\mu,1)`, :math:`\mu > 0`:
    :math:`P_q(\log r > 0) = P(x > \mu/2) = \Phi(-\mu/2)`.  Categoricals sum
    :math:`q_k` over the tokens with :math:`\log r_k > \text{level}`.

    Parameters
    ----------
    q, p : Distribution
        Sampler and target: two :class:`~kl_core.estimation.distributions.Gaussian`, or two
        :class:`~kl_core.estimation.distributions.Categorical` over the same tokens.
    level : float
        The threshold on :math:`\log r`; may be ``±inf``.

    Returns
    -------
    float
        The probability, in [0, 1].

    Raises
    ------
    ValueError
        For any other pair of families (``q``), or a NaN ``level``.

    Examples
    --------
    >>> round(prob_log_ratio_above(Gaussian(0, 1), Gaussian(1, 1), 0.0), 6)  # Φ(−1/2)
    0.308538
    """
    if math.isnan(level):
        raise ValueError("level must not be NaN")
    if level == math.inf:
        return 0.0
    if level == -math.inf:
        return 1.0
    if isinstance(q, Gaussian) and isinstance(p, Gaussian):
        return min(max(_gaussian_above(q, p, float(level)), 0.0), 1.0)
    if isinstance(q, Categorical) and isinstance(p, Categorical) and q.k == p.k:
        above = (p.log_probs - q.log_probs) > level
        return float(np.exp(q.log_probs[above]).sum())
    raise ValueError(f"q and p must be two normals or two categoricals over the same tokens, got {q.spec}, {p.spec}")


# --------------------------------------------------------------------------- #
# The vocabulary
# --------------------------------------------------------------------------- #
def _pair(params: Mapping[str, Any]) -> tuple[Distribution, Distribution]:
    return parse(params["q"]), parse(params["p"])


def _moments(key: str, params: Mapping[str, Any], lam: float | None = None) -> Any:
    from kl_core.estimation.exact import estimator_moments

    q, p = _pair(params)
    return estimator_moments(key, q, p, lam)


def _kl_qp(params: Mapping[str, Any]) -> float:
    from kl_core.estimation.exact import kl

    q, p = _pair(params)
    return kl(q, p)


def _kl_pq(params: Mapping[str, Any]) -> float:
    from kl_core.estimation.exact import kl

    q, p = _pair(params)
    return kl(p, q)


def _neg_share_k_lambda(params: Mapping[str, Any]) -> float:
    from kl_core.estimation.bregman import k_lambda_negative_interval

    q, p = _pair(params)
    interval = k_lambda_negative_interval(float(params["lam"]))
    if interval is None:
        return 0.0
    lo, hi = interval
    return max(prob_log_ratio_above(q, p, lo) - prob_log_ratio_above(q, p, hi), 0.0)


def _neg_share_mean_k1(params: Mapping[str, Any]) -> float:
    q, p = _pair(params)
    if not (isinstance(q, Gaussian) and isinstance(p, Gaussian) and q.sigma == p.sigma):
        raise ValueError("neg_share_mean_k1 needs two normals with the same sigma (then k1 is normal)")
    m = _moments("k1", params)
    n = int(params["n"])
    if m.std == 0.0:
        return 0.0
    # k1 = −log r is linear in x, so the mean of n values is exactly N(KL, Var(k1)/n).
    return _STD.cdf(-m.mean * math.sqrt(n) / m.std)


def _lambda_star(params: Mapping[str, Any]) -> float:
    from kl_core.estimation.exact import lambda_star

    q, p = _pair(params)
    value = lambda_star(q, p).value
    return math.nan if value is None else value


def _var_ratio_lambda_star(params: Mapping[str, Any]) -> float:
    from kl_core.estimation.control_variates import lambda_parabola

    par = lambda_parabola(*_pair(params))
    return par.var_optimal / par.var_log_r


@lru_cache(maxsize=16)
def mu_equal_sd(a: str, b: str) -> float:
    r"""The shift :math:`\mu > 0` at which estimators ``a`` and ``b`` have equal per-sample SD.

    For :math:`q = \mathcal N(0,1)`, :math:`p = \mathcal N(\mu,1)` (bisection on
    the exact variances of :func:`kl_core.estimation.exact.estimator_moments`, in
    :math:`0.05 \le \mu \le 3`).  For ``k1`` against ``k3``:
    :math:`\mu^2 = e^{\mu^2} - 1 - \mu^2`, :math:`\mu \approx 1.1209`; ``k1``
    against ``k2``: :math:`\mu^2 = \sqrt5 - 1`, :math:`\mu \approx 1.1118`.

    Parameters
    ----------
    a, b : str
        Estimator keys of :data:`kl_core.estimation.estimators.ESTIMATORS`.

    Returns
    -------
    float
        μ, to about 1e-10.

    Raises
    ------
    ValueError
        If the difference of the SDs does not change sign on the interval.
    """
    from kl_core.estimation.exact import estimator_moments

    def diff(mu: float) -> float:
        q, p = Gaussian(0.0, 1.0), Gaussian(mu, 1.0)
        return estimator_moments(a, q, p).std - estimator_moments(b, q, p).std

    lo, hi = 0.05, 3.0
    f_lo, f_hi = diff(lo), diff(hi)
    if f_lo * f_hi > 0:
        raise ValueError(f"a={a!r} and b={b!r}: their SDs do not cross for 0.05 <= mu <= 3")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        f_mid = diff(mid)
        if f_mid * f_lo > 0:
            lo, f_lo = mid, f_mid
        else:
            hi = mid
        if hi - lo < 1e-11:
            break
    return 0.5 * (lo + hi)


def _table(params: Mapping[str, Any]) -> Any:
    return _gradient_table(int(params["k"]), float(params["t"]))


@lru_cache(maxsize=64)
def _gradient_table(k: int, t: float) -> Any:
    from kl_core.gradients import expected as gradients
    from kl_core.gradients.demo import demo_logits

    return gradients.gradient_table(demo_logits(k, t), demo_logits(k, 0.0))


def _grad_norm(params: Mapping[str, Any]) -> float:
    row = _table(params).row(params["option"])
    norm = float(np.linalg.norm(row.expected_grad))
    # Exactly zero in exact arithmetic (E_π[∇log π] = 0) shows as ~1e-17: report 0.
    return 0.0 if norm < 1e-12 * max(row.grad_spread, 1.0) else norm


def _cos(which: str) -> Callable[[Mapping[str, Any]], float]:
    def get(params: Mapping[str, Any]) -> float:
        value = getattr(_table(params).row(params["option"]), which)
        return math.nan if value is None else float(value)

    return get


@lru_cache(maxsize=64)
def _sequence(k: int, drift: float, length: int) -> Any:
    from kl_core.sequences.estimators import exact_moments
    from kl_core.sequences.markov import drift_pair

    return exact_moments(*drift_pair(k, drift, "every"), length)


def _seq(params: Mapping[str, Any]) -> Any:
    return _sequence(int(params["K"]), float(params["drift"]), int(params["T"]))


@lru_cache(maxsize=32)
def _diagnosis(config: str) -> Any:
    from kl_core.doctor.diagnosis import diagnose

    return diagnose(example_text(config), filename=config)


def example_text(config: str) -> str:
    """The text of one of the doctor's example configs (a file name in :data:`EXAMPLES_DIR`).

    Parameters
    ----------
    config : str
        The file name, e.g. ``"verl_grpo_qwen3_8b.sh"``.

    Returns
    -------
    str
        The file's text.
    """
    path = EXAMPLES_DIR / config
    if path.parent != EXAMPLES_DIR or not path.is_file():
        raise ValueError(f"config must be a file of {EXAMPLES_DIR}, got {config!r}")
    return path.read_text(encoding="utf-8")


def first_use(params: Mapping[str, Any]) -> Any:
    """The first KL term the doctor finds in a config.

    Parameters
    ----------
    params : mapping
        ``config``: a file name of :data:`EXAMPLES_DIR`.

    Returns
    -------
    KLUse or None
        The first :class:`kl_core.doctor.diagnosis.KLUse` of :func:`kl_core.doctor.diagnosis.diagnose`, or None without one.
    """
    uses = _diagnosis(params["config"]).kl_uses
    return uses[0] if uses else None


def defaults_used(config: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """The release the doctor reads a config as, and the KL settings (switch, option, coefficient, toggle) the
    config leaves to that release: what a reader of Lesson 7 needs besides the text.

    Parameters
    ----------
    config : str
        A file name of :data:`EXAMPLES_DIR`.

    Returns
    -------
    tuple of (str, tuple of (str, Any))
        E.g. ``("TRL 1.16.0", (("beta", 0.0), ("use_bias_correction_kl", True)))``: each setting as the
        release spells it, with its default.
    """
    d = _diagnosis(config)
    p = d.profile
    keys = [k for pl in p.placements
            for k in (*(k for k, _ in pl.switch), pl.option, pl.coef, *(k for k, _ in pl.toggles)) if k]
    return f"{p.library} {p.release}", tuple(
        (p.spelled(k), d.settings.get(k, p.keys[k].default))
        for k in dict.fromkeys(keys) if k in p.keys and k not in d.given)


def _kl_coef(params: Mapping[str, Any]) -> float:
    use = first_use(params)
    return 0.0 if use is None or use.coef is None else float(use.coef)


def _beta_per_sequence(params: Mapping[str, Any]) -> float:
    from kl_core.libraries.loss_aggregation import kl_coefficient

    return kl_coefficient(params.get("mode", "seq-mean-token-mean"), float(params["beta"]), int(params["T"]))


def _at(key: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda params: float(estimators.evaluate(key, [float(params["logr"])])[0])


def _sd(key: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda params: _moments(key, params).std


def _mean(key: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda params: _moments(key, params).mean


def _seq_key(field: str, key: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda params: float(getattr(_seq(params), field)[key])


NUMERIC_QUANTITIES: dict[str, Callable[[Mapping[str, Any]], float]] = {
    "kl_qp": _kl_qp,
    "kl_pq": _kl_pq,
    "mean_k1": _mean("k1"),
    "mean_k2": _mean("k2"),
    "mean_k3": _mean("k3"),
    "mean_k3_pq": _mean("k3_pq"),
    "mean_k_lambda": lambda params: _moments("k_lambda", params, float(params["lam"])).mean,
    "bias_k2": lambda params: _moments("k2", params).mean - _kl_qp(params),
    "sd_k1": _sd("k1"),
    "sd_k2": _sd("k2"),
    "sd_k3": _sd("k3"),
    "sd_k3_pq": _sd("k3_pq"),
    "sd_k_lambda": lambda params: _moments("k_lambda", params, float(params["lam"])).std,
    "sd_mean_k1": lambda params: _moments("k1", params).std / math.sqrt(int(params["n"])),
    "neg_share_k1": lambda params: prob_log_ratio_above(*_pair(params), 0.0),
    "neg_share_k_lambda": _neg_share_k_lambda,
    "neg_share_mean_k1": _neg_share_mean_k1,
    "lambda_star": _lambda_star,
    "var_ratio_lambda_star": _var_ratio_lambda_star,
    "mu_equal_sd": lambda params: mu_equal_sd(params["a"], params["b"]),
    "k1_at": _at("k1"),
    "k2_at": _at("k2"),
    "k3_at": _at("k3"),
    "k3_pq_at": _at("k3_pq"),
    "grad_norm": _grad_norm,
    "grad_cos_reverse": _cos("cos_reverse"),
    "grad_cos_forward": _cos("cos_forward"),
    "kl_policy_ref": lambda params: float(_table(params).kl_reverse),
    "beta_per_sequence": _beta_per_sequence,
    "seq_kl": lambda params: float(_seq(params).true_kl),
    **{f"seq_mean_{k}": _seq_key("mean", k) for k in ("sum_k1", "sum_k2", "sum_k3", "seq_k3", "rb", "mean_k3")},
    **{f"seq_sd_{k}": _seq_key("std", k) for k in ("sum_k1", "sum_k2", "sum_k3", "seq_k3", "rb", "mean_k3")},
    "kl_coef": _kl_coef,
}
"""Each numeric quantity: a function of the params returning the exact value."""


def _narrower(params: Mapping[str, Any]) -> str:
    sds = {k: _moments(k, params).std for k in params["keys"]}
    return min(sds, key=sds.__getitem__)


def _unbiased_for(params: Mapping[str, Any]) -> str:
    target = NUMERIC_QUANTITIES[params["target"]](params)
    hits = [k for k in params["keys"] if math.isclose(_moments(k, params).mean, target, rel_tol=1e-7, abs_tol=1e-12)]
    if len(hits) != 1:
        raise ValueError(f"expected exactly one estimator with mean {params['target']}, got {hits}")
    return hits[0]


def _unchanged_under_flip(params: Mapping[str, Any]) -> str:
    t = float(params["logr"])
    hits = [k for k in params["keys"]
            if math.isclose(*(float(estimators.evaluate(k, [s])[0]) for s in (t, -t)), rel_tol=1e-12, abs_tol=1e-15)]
    if len(hits) != 1:
        raise ValueError(f"expected exactly one estimator unchanged at logr={t}, got {hits}")
    return hits[0]


def _nonnegative_lambda(params: Mapping[str, Any]) -> str:
    from kl_core.estimation.bregman import k_lambda_negative_interval

    hits = [str(lam) for lam in params["lams"] if k_lambda_negative_interval(float(lam)) is None]
    if len(hits) != 1:
        raise ValueError(f"expected exactly one λ with no negative sample, got {hits}")
    return hits[0]


def _seq_extreme(pick: Callable[..., Any]) -> Callable[[Mapping[str, Any]], str]:
    def get(params: Mapping[str, Any]) -> str:
        std = _seq(params).std
        return pick(params["keys"], key=lambda k: float(std[k]))

    return get


CHOICE_QUANTITIES: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "narrower": _narrower,
    "unbiased_for": _unbiased_for,
    "unchanged_under_flip": _unchanged_under_flip,
    "nonnegative_lambda": _nonnegative_lambda,
    "grad_target": lambda params: _table(params).row(params["option"]).target,
    "seq_largest_sd": _seq_extreme(max),
    "seq_smallest_sd": _seq_extreme(min),
    "kl_where": lambda params: "none" if (u := first_use(params)) is None else u.where,
    "kl_estimator": lambda params: "none" if (u := first_use(params)) is None else u.estimator,
    "kl_gradient": lambda params: "none" if (u := first_use(params)) is None else u.gradient_target,
}
"""Each choice quantity: a function of the params returning the key of the right choice."""


def compute(quantity: str, params: Mapping[str, Any]) -> float | str:
    """The exact value of ``quantity`` at ``params`` (a float, or a choice key).

    Parameters
    ----------
    quantity : str
        A key of :data:`NUMERIC_QUANTITIES` or :data:`CHOICE_QUANTITIES`.
    params : mapping
        The setting: specs as strings and numbers (see the module docstring).

    Returns
    -------
    float or str
        The value, or the key of the right choice.

    Raises
    ------
    ValueError
        For an unknown quantity or params it cannot use.

    Examples
    --------
    >>> compute("kl_qp", {"q": "normal(0,1)", "p": "normal(1,1)"})
    0.5
    """
    if quantity in NUMERIC_QUANTITIES:
        return float(NUMERIC_QUANTITIES[quantity](params))
    if quantity in CHOICE_QUANTITIES:
        return CHOICE_QUANTITIES[quantity](params)
    raise ValueError(f"quantity must be one of {sorted(NUMERIC_QUANTITIES) + sorted(CHOICE_QUANTITIES)}, got {quantity!r}")

