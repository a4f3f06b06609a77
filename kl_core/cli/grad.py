r"""The ``grad`` command: ``python -m kl_core grad --policy SPEC --ref SPEC [...]``.

For a categorical policy :math:`\pi_\theta = \mathrm{softmax}(\theta)` and a
reference :math:`\pi_{\mathrm{ref}}` over the same :math:`K` tokens, prints the
exact expected gradient (in the logits) of every KL option used in a loss,
beside the true gradients of both KL directions, with the cosine to each and
the per-sample spread (:func:`kl_core.gradients.expected.gradient_table`).  With
``--reward`` and ``--beta`` it also says where exact expected-gradient ascent on
:math:`\mathbb{E}_\pi[R] - \beta\cdot\text{loss}` ends for each option, beside
the two analytic optima (:mod:`kl_core.gradients.flow`).

``--json`` prints one object:

``true_grad``
    ``{"reverse_kl": [K], "forward_kl": [K]}``: :math:`\nabla\mathrm{KL}[\pi_\theta\|\pi_{\mathrm{ref}}]`
    and :math:`\nabla\mathrm{KL}[\pi_{\mathrm{ref}}\|\pi_\theta]`.
``rows``
    ``[{"name", "library", "option", "expected_grad", "cos_reverse", "cos_forward", "grad_spread",
    "grad_norm", "target"}]``;
    ``name`` is ``k1``, ``k2``, ``k3``, ``k3_pq``, ``k1_score``, ``k_lambda`` or
    ``LIBRARY:OPTION``; a cosine with a zero vector is null; ``grad_norm`` is the table's
    ‖E g‖ and ``target`` its "expected gradient is" column, the core's word
    (:func:`kl_core.gradients.expected.classify`: ``reverse_kl``, ``forward_kl``, ``zero``,
    ``mixed``).
``lambda_grad_opt``, ``lambda_value_opt``
    The λ minimising the gradient's spread, and the value's λ*.
``lambda_used``
    The λ of the ``k_lambda`` row: ``--lam``, or ``lambda_grad_opt`` without it.
``policy``, ``ref``, ``sampler``, ``on_policy``
    The specs read (``sampler`` null without ``--sampler``), and whether the tokens come from
    the policy.
``optimum``, ``fixed_points``, ``fixed_point_notes``, ``reward``, ``beta`` (with ``--reward``)
    ``{"reverse_kl": [K], "forward_kl": [K]}``; ``{name: [K] or null}``; and,
    for each null, why; the reward per token and β.  Training starts from the policy and is
    on-policy at every step (``--sampler`` does not apply to it).

The table prints the core's words (:attr:`~kl_core.gradients.expected.GradientRow.target`),
norms and spreads; a figure past a double (a gradient of 1e-345 at a logit 800 above the
others, a spread of 1e+434) is written from its log (:func:`kl_core.numbers.from_log`).  The
JSON keeps doubles, and beside a figure a double cannot hold adds its log: ``log_grad_norm``
in a row whose gradient is 0 or subnormal in doubles, ``log_grad_spread`` (and
``grad_spread`` as a string, ``"1.31282145212e+434"``) where the spread is past a double,
``true_grad_log`` (``{"reverse_kl": {"sign": [K], "log_abs": [K]} or null, …}``, a
``log_abs`` of null for a 0 entry) where a true gradient's entry is, and
``log_lambda_value_opt`` where λ* is.  At ordinary logits these keys are absent.

A bad spec, mismatched K, a reward of the wrong length or with an empty value, β ≤ 0, a β
too small for the reward, or |λ| > 1e6 raise ``ValueError`` naming the flag, which
:func:`kl_core.cli.main.main` prints as one line on stderr with exit code 2.  This module
imports nothing heavy until the command runs.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; Y. Tang and R. Munos, "On a few pitfalls
in KL divergence gradient estimation for RL", arXiv:2506.09477.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from kl_core._docfill import docfill
from kl_core.cli._common import Command, check_practical, fmt, named_by_flags, plural
from kl_core.gradients._docstrings import SECTIONS
from kl_core.numbers import SMALLEST_NORMAL, from_log

__all__ = ["grad_report", "register", "run_grad"]

_SPECS = "categorical(logit,...)"

#: The largest |λ| of ``--lam``: k_lambda's coefficient is (1 − λ) − log r, and past about 1e10
#: the log-ratio is lost to rounding beside λ (at --lam 1e308 the expected gradient came out 0,
#: "zero", though on-policy it is ∇KL[π_θ‖π_ref] for every λ); 1e6 keeps 6 digits.
MAX_ABS_LAM = 1e6

#: Core parameter names → the flags of ``grad``.
_FLAGS = {"policy": "--policy", "ref": "--ref", "sampler": "--sampler", "lam": "--lam",
          "reward": "--reward", "beta": "--beta"}
#: The same for the training runs, whose reward is checked here first: their refusal of a small β
#: says "for this reward", not a flag.
_RUN_FLAGS = {name: flag for name, flag in _FLAGS.items() if name != "reward"}


def _arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--policy", required=True, metavar="SPEC", help=f"π_θ, a {_SPECS} spec")
    sp.add_argument("--ref", required=True, metavar="SPEC", help=f"π_ref, a {_SPECS} spec with the same K")
    sp.add_argument(
        "--sampler",
        metavar="SPEC",
        help=f"the policy that drew the tokens, e.g. an older π_old ({_SPECS}); default: the policy",
    )
    sp.add_argument("--lam", type=float, help="λ of k_lambda (default: the gradient-optimal λ)")
    sp.add_argument("--reward", metavar="R1,...,RK", help="a reward per token, for the training picture")
    sp.add_argument("--beta", type=float, help="the KL coefficient β > 0, with --reward")
    sp.add_argument("--json", action="store_true", help="print one JSON object")


def _categorical(spec: str, name: str) -> Any:
    from kl_core.estimation.distributions import Categorical, parse

    try:
        d = parse(spec)
    except ValueError as exc:
        raise ValueError(f"--{name}: {exc}") from None
    if not isinstance(d, Categorical):
        raise ValueError(f"--{name} must be a {_SPECS} spec, got {spec!r}")
    check_practical(f"--{name}", d)
    return d


def _reward(text: str, k: int) -> list[float]:
    parts = text.replace(" ", "").split(",")
    for i, part in enumerate(parts, 1):
        if not part.strip():  # "1,,2,3" is not three numbers with a typo skipped
            raise ValueError(f"--reward must be {k} comma-separated numbers, got {text!r}: value {i} is empty")
    try:
        values = [float(v) for v in parts]
    except ValueError:
        raise ValueError(f"--reward must be {k} comma-separated numbers, got {text!r}") from None
    if len(values) != k:
        raise ValueError(f"--reward must have one value per token ({k}), got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"--reward must be finite, got {text!r}")
    return values


@docfill(**SECTIONS)
def grad_report(
    policy: str,
    ref: str,
    sampler: str | None = None,
    lam: float | None = None,
    reward: str | None = None,
    beta: float | None = None,
) -> dict[str, Any]:
    r"""The figures behind ``grad``, as the JSON object the command prints (before JSON escaping).

    Parameters
    ----------
    policy, ref : str
        ``categorical(...)`` specs of :math:`\pi_\theta` and :math:`\pi_{\mathrm{ref}}`.
    sampler : str, optional
        Spec of the policy that drew the tokens; the policy if omitted.
    lam : float, optional
        :math:`\lambda` of ``k_lambda``; the gradient-optimal one if omitted.
    reward : str, optional
        ``"r1,...,rK"``: with ``beta``, adds the training picture.
    beta : float, optional
        :math:`\beta > 0`, required with ``reward``.

    Returns
    -------
    dict
        ``true_grad``, ``rows``, ``lambda_grad_opt``, ``lambda_value_opt``, ``lambda_used``,
        ``policy``, ``ref``, ``sampler``, ``on_policy`` and, with a reward, ``optimum``,
        ``fixed_points``, ``fixed_point_notes``, ``reward``, ``beta`` (the module's docstring
        describes each).

    Raises
    ------
    ValueError
        One line naming the bad argument.

    %(tang_munos_references)s
    """
    return _report(policy, ref, sampler, lam, reward, beta)[0]


def _report(
    policy: str,
    ref: str,
    sampler: str | None,
    lam: float | None,
    reward: str | None,
    beta: float | None,
) -> tuple[dict[str, Any], Any]:
    """:func:`grad_report`'s object, and the :class:`~kl_core.gradients.expected.GradientTable` behind it."""
    from kl_core.gradients.expected import gradient_table

    if (reward is None) != (beta is None):
        raise ValueError("--reward and --beta go together: give both, or neither")
    if lam is not None and not (math.isfinite(lam) and abs(lam) <= MAX_ABS_LAM):
        raise ValueError(
            f"--lam must be finite and within ±{MAX_ABS_LAM:,.0f}, got {lam:g}: beyond, k_lambda's "
            "coefficient (1 − λ) − log r loses log r to rounding"
        )
    if beta is not None and not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"--beta must be a finite number > 0, got {beta:g}")
    p = _categorical(policy, "policy")
    q = _categorical(ref, "ref")
    s = None if sampler is None else _categorical(sampler, "sampler")
    for flag, d in (("--ref", q), ("--sampler", s)):
        if d is not None and d.k != p.k:
            raise ValueError(
                f"{flag} has {plural(d.k, 'token', 'tokens')} but --policy has {p.k}; they must match"
            )
    try:
        table = gradient_table(p, q, sampler=s, lam=lam)
    except ValueError as exc:  # the core names its parameters; the user typed flags
        raise named_by_flags(exc, _FLAGS) from None
    out: dict[str, Any] = {
        "true_grad": {"reverse_kl": table.true_reverse.tolist(), "forward_kl": table.true_forward.tolist()},
        "rows": [_json_row(r) for r in table.rows],
        "lambda_grad_opt": table.lam_grad_opt,
        "lambda_value_opt": table.lam_value_opt,
        "lambda_used": table.lam,  # "k_lambda uses λ = …"
        "policy": p.spec,
        "ref": q.spec,
        "sampler": None if s is None else s.spec,
        "on_policy": bool(table.on_policy),
    }
    logs = {name: _json_log_vector(v) for name, v in (("reverse_kl", table.true_reverse_log),
                                                       ("forward_kl", table.true_forward_log))}
    if any(v is not None for v in logs.values()):
        out["true_grad_log"] = logs
    if _lost(table.log_lam_value_opt):  # λ* = 8.8e-345 at a logit 800 above the others: 0 in doubles
        out["log_lambda_value_opt"] = table.log_lam_value_opt
    if reward is not None and beta is not None:
        from kl_core.gradients.flow import analytic_optima, training_runs

        r = _reward(reward, table.k)
        try:  # the runs first: they refuse a β too small for the reward, which the optima do not check
            runs = training_runs(p, q, r, beta, lam=table.lam)
            rev, fwd = analytic_optima(q, r, beta)
        except ValueError as exc:  # "beta must be at least … for this reward": the user typed --beta
            raise named_by_flags(exc, _RUN_FLAGS) from None
        out["optimum"] = {"reverse_kl": rev.tolist(), "forward_kl": fwd.tolist()}
        out["fixed_points"] = {
            name: None if run.fixed_point is None else run.fixed_point.tolist() for name, run in runs.items()
        }
        out["fixed_point_notes"] = {name: run.note for name, run in runs.items() if run.fixed_point is None}
        out["reward"] = r
        out["beta"] = beta
    return out, table


def _lost(log_abs: float) -> bool:
    """A figure whose double is not its value: 0 or subnormal below the smallest normal double, or past the
    largest (its log is finite)."""
    return math.isfinite(log_abs) and not math.log(SMALLEST_NORMAL) <= log_abs <= math.log(sys.float_info.max)


def _json_row(r: Any) -> dict[str, Any]:
    """One row of ``--json``; ``log_grad_norm`` / ``log_grad_spread`` beside a figure a double cannot hold
    (the entries of a gradient of norm 1e-345 are 0 in doubles; a spread of 1e+434 is ``inf``)."""
    row = {"name": r.name, "library": r.library, "option": r.option, "expected_grad": r.expected_grad.tolist(),
           "cos_reverse": r.cos_reverse, "cos_forward": r.cos_forward, "grad_spread": r.grad_spread,
           "grad_norm": _norm(r.log_grad_norm), "target": r.target}
    if _lost(r.log_grad_norm):
        row["log_grad_norm"] = r.log_grad_norm
    if _lost(r.log_grad_spread):
        row["grad_spread"] = from_log(r.log_grad_spread, 12)
        row["log_grad_spread"] = r.log_grad_spread
    return row


def _norm(log_norm: float) -> float:
    """‖E g‖ from its log: 0 for a zero vector, inf past the largest double (its log is then in the row)."""
    return math.exp(log_norm) if log_norm < 709.0 else math.inf


def _json_log_vector(v: Any) -> dict[str, list] | None:
    """A true gradient as ``{"sign", "log_abs"}`` where one of its entries is lost in doubles, else None."""
    if v is None or not any(_lost(float(la)) for la in v.log_abs):
        return None
    return {"sign": [int(x) for x in v.sign],
            "log_abs": [float(la) if math.isfinite(la) else None for la in v.log_abs]}


def _f(x: float | None, spec: str = "+.4f") -> str:
    return fmt(x, spec)


def _vec(v: list[float]) -> str:
    return "[" + ", ".join(format(x, ".4g") for x in v) + "]"


def _num(x: float, log_abs: float, sign: float = 1.0) -> str:
    """A figure the core also gives as log|x|: 4 significant digits, from the log where x is past a double."""
    if math.isnan(log_abs) or log_abs == -math.inf or (math.isfinite(x) and abs(x) >= SMALLEST_NORMAL):
        return _f(x, ".4g")
    return from_log(log_abs, 4, sign="-" if sign < 0 else "", trim=True)


def _log_vec(v: list[float], logs: Any) -> str:
    if logs is None:
        return _vec(v)
    return "[" + ", ".join(_num(x, la, sg) for x, la, sg in zip(v, logs.log_abs, logs.sign, strict=True)) + "]"


def run_grad(args: argparse.Namespace) -> int:
    """Handler of ``grad``: print :func:`grad_report` as JSON or as a table.

    Parameters
    ----------
    args : argparse.Namespace
        ``policy``, ``ref``, ``sampler``, ``lam``, ``reward``, ``beta`` and ``json``.

    Returns
    -------
    int
        0; bad input raises ``ValueError``, which :func:`kl_core.cli.main.main` turns into exit code 2.
    """
    from kl_core.cli._common import json_value

    rep, table = _report(args.policy, args.ref, args.sampler, args.lam, args.reward, args.beta)
    if args.json:
        print(json.dumps(json_value(rep), indent=2, allow_nan=False, ensure_ascii=False))
        return 0
    rev, fwd = rep["true_grad"]["reverse_kl"], rep["true_grad"]["forward_kl"]
    print(f"π_θ = {args.policy}   π_ref = {args.ref}   tokens from: {args.sampler or 'π_θ (on-policy)'}")
    print(f"∇KL[π_θ‖π_ref] (reverse_kl) = {_log_vec(rev, table.true_reverse_log)}")
    print(f"∇KL[π_ref‖π_θ] (forward_kl) = {_log_vec(fwd, table.true_forward_log)}")
    lam_used = rep["lambda_used"]
    lam_value = rep["lambda_value_opt"]
    log_value = table.log_lam_value_opt  # λ* in logs where it may be past a double (1e-345)
    if math.isfinite(log_value) and not (math.isfinite(lam_value) and abs(lam_value) >= SMALLEST_NORMAL):
        value_text = from_log(log_value, 6, trim=True)
    else:
        value_text = format(lam_value, ".6g")
    print(
        f"k_lambda uses λ = {lam_used:.6g}; gradient-optimal λ = {rep['lambda_grad_opt']:.6g}, "
        f"value-optimal λ* = {value_text}"
    )
    print()
    header = ["option", "cos→reverse", "cos→forward", "spread", "‖E g‖", "expected gradient is"]
    body = []
    for row, core in zip(rep["rows"], table.rows, strict=True):
        # the core's norm, spread (logs: also past a double) and word, not recomputed here
        with_norm = _norm(core.log_grad_norm)
        body.append(
            [
                row["name"],
                _f(row["cos_reverse"]),
                _f(row["cos_forward"]),
                _num(core.grad_spread, core.log_grad_spread),
                _num(with_norm, core.log_grad_norm),
                core.target,
            ]
        )
    widths = [max(len(r[i]) for r in (header, *body)) for i in range(len(header))]
    for cells in (header, ["-" * w for w in widths], *body):
        parts = [
            c.ljust(w) if i in (0, 5) else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        print("  ".join(parts).rstrip())
    print()
    print("cos→… = cosine of the expected gradient with that true gradient (— for a zero vector);")
    print("spread = sqrt(E‖g − E g‖²) per sample.")
    if "optimum" in rep:
        print()
        print(f"Training on E[R] − β·loss, R = [{args.reward}], β = {args.beta:g}:")
        print(f"  optimum for KL[π‖π_ref]: {_vec(rep['optimum']['reverse_kl'])}")
        print(f"  optimum for KL[π_ref‖π]: {_vec(rep['optimum']['forward_kl'])}")
        for name, fp in rep["fixed_points"].items():
            end = _vec(fp) if fp is not None else rep["fixed_point_notes"][name]
            print(f"  {name}: {end}")
    return 0


register = Command(
    name="grad",
    help="expected gradient of each KL option in a loss vs the true KL gradients (categorical policy)",
    description=(
        "Exact expected gradients, in the logits of a categorical policy, of k1, k2, k3, k3_pq "
        "used as a loss, of the score-function forms k1_score and k_lambda, and of every library "
        "KL loss in the crosswalk, beside the true gradients of KL[π_θ‖π_ref] (reverse_kl) and "
        "KL[π_ref‖π_θ] (forward_kl). With --reward and --beta: where exact expected-gradient "
        "ascent on E[R] − β·loss, started from the policy and on-policy at every step, ends for "
        "each option."
    ),
    arguments=_arguments,
    handler=run_grad,
)
