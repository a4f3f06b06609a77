r"""The command line: ``python -m kl_core <command> ...``.

Commands
--------
``table``
    Schulman's experiment for any pair: each estimator's bias/true and
    stdev/true, Monte Carlo beside exact, plus the true KL and the
    variance-optimal :math:`\lambda^*`.  The defaults reproduce his first table
    (:math:`q = \mathcal N(0,1)`, :math:`p = \mathcal N(0.1,1)`, 10 million samples).
``kl``
    :math:`\mathrm{KL}[q\|p]`, :math:`\mathrm{KL}[p\|q]` and every f-divergence
    of the registry, :math:`D_f(p,q) = \mathbb{E}_q[f(p/q)]`, exactly.

Adding a command
----------------
Write, in any module, ``def register(subparsers) -> None`` that calls
``subparsers.add_parser(...)``, adds its arguments and sets
``handler=<function(args) -> int>`` with ``set_defaults``; then add ONE line,
``"your.module:register",``, to :data:`SUBCOMMANDS`.  A handler prints its
output and returns the exit code; a ``ValueError`` it raises becomes one
``error: ...`` line on stderr and exit code 2.  :func:`add_pair_arguments`,
:func:`parse_pair` and :func:`json_value` are there to share.

Registration must stay cheap: every run imports every module of
:data:`SUBCOMMANDS`, ``--help`` included.  At its top level such a module
imports only the standard library, numpy and light ``kl_core`` modules; scipy,
pandas, pyarrow (and ``kl_core`` modules that import them at their top, such as
:mod:`kl_core.estimation.bregman`) are imported inside the handler that needs them.
``scipy.special`` alone costs 0.1–0.3 s, more than numpy.  tests/cli/test_main.py
checks that ``--help``, ``table`` and ``kl`` for Gaussian pairs import none of them.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from kl_core.estimation import families
from kl_core.estimation._quadrature import QuadratureError
from kl_core.estimation.distributions import Distribution, parse

__all__ = [
    "PROG",
    "SUBCOMMANDS",
    "add_pair_arguments",
    "build_parser",
    "json_value",
    "main",
    "parse_pair",
    "register_kl",
    "register_table",
    "table_rows",
]

PROG = "python -m kl_core"

# One "module:function" per command; each function registers its subparser.
SUBCOMMANDS: tuple[str, ...] = (
    "kl_core.cli.main:register_table",
    "kl_core.cli.main:register_kl",
    "kl_core.cli.audit:register",
    "kl_core.cli.sequence:register",
    "kl_core.cli.grad:register",
    "kl_core.cli.doctor:register",
    "kl_core.cli.quiz:register",
)

TABLE_KEYS: tuple[str, ...] = ("k1", "k2", "k3", "k_lambda", "k3_pq")
# The fields of one row of `table --json`, in order.
TABLE_JSON_FIELDS: tuple[str, ...] = (
    "estimator",
    "mc_mean",
    "mc_bias_over_true",
    "mc_std_over_true",
    "exact_mean",
    "exact_bias_over_true",
    "exact_std_over_true",
    "neg_fraction",
    "se_reliable",
    "note",
)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, not a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see --help)\n")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# ------------------------------------------------------------ shared helpers


def _count(text: str) -> int:
    """A sample count: ``10000000``, ``10_000_000`` or ``1e7``."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number such as 1e6, got {text!r}"
        ) from None
    if not (math.isfinite(value) and value.is_integer() and value >= 1):
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(value)


def add_pair_arguments(parser: argparse.ArgumentParser, q: str, p: str) -> None:
    """Add ``--q`` and ``--p`` distribution specs with the given defaults.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    q, p : str
        Default specs of the sampler and the target.

    Returns
    -------
    None
        The arguments are added to ``parser`` in place.
    """
    specs = families.syntax()  # every family of the registry
    parser.add_argument(
        "--q", default=q, metavar="SPEC", help=f"sampler q (default {q}); one of {specs}"
    )
    parser.add_argument("--p", default=p, metavar="SPEC", help=f"target p (default {p})")


def parse_pair(args: argparse.Namespace) -> tuple[Distribution, Distribution]:
    """Parse ``args.q`` and ``args.p``; ``ValueError`` with a one-line reason if they are bad.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments with ``q`` and ``p`` spec strings.

    Returns
    -------
    tuple of Distribution
        ``(q, p)``, of the same kind (both continuous or both categorical).
    """
    q, p = parse(args.q), parse(args.p)
    if q.discrete != p.discrete:
        raise ValueError(
            f"q {q.spec} and p {p.spec} must both be continuous or both be categorical"
        )
    return q, p


def json_value(x: Any) -> Any:
    """A value as strict JSON: ``inf`` → ``"inf"``, ``-inf`` → ``"-inf"``, nan → None.

    Parameters
    ----------
    x : Any
        A float, or a dict, list or tuple of them (converted recursively).

    Returns
    -------
    Any
        The same structure with non-finite floats replaced.

    Examples
    --------
    >>> json_value(float("inf")), json_value(float("nan")), json_value(0.5)
    ('inf', None, 0.5)
    """
    if isinstance(x, dict):
        return {k: json_value(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_value(v) for v in x]
    if isinstance(x, float):
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def _dumps(obj: Any) -> str:
    return json.dumps(json_value(obj), indent=2, allow_nan=False, ensure_ascii=False)


def _fmt(x: float | None, spec: str) -> str:
    """A number for the human table: — for missing or nan, inf spelled out."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return format(x, spec)


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]
) -> list[str]:
    """Aligned text columns."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if rj else c.ljust(w) for c, w, rj in zip(cells, widths, right, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


# ------------------------------------------------------------ table


def register_table(subparsers: argparse._SubParsersAction) -> None:
    """Register ``table``: bias/true and stdev/true of each estimator, MC beside exact.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``python -m kl_core`` subcommand collection.

    Returns
    -------
    None
        The subcommand is registered in place.
    """
    sp = subparsers.add_parser(
        "table",
        help="Schulman's bias/true and stdev/true table, Monte Carlo beside exact",
        description=(
            "For x ~ q and r = p(x)/q(x), print each estimator's bias/true and stdev/true "
            "(per-sample standard deviation over the true KL, as in Schulman's table), from "
            "n Monte Carlo samples and exactly. k1, k2, k3 and k_lambda are compared with "
            "KL[q,p]; k3_pq with KL[p,q]. Defaults reproduce Schulman's first experiment."
        ),
    )
    add_pair_arguments(sp, "normal(0,1)", "normal(0.1,1)")
    sp.add_argument("--n", type=_count, default=10_000_000, help="samples (default 1e7)")
    sp.add_argument("--seed", type=int, default=0, help="seed of numpy's default_rng (default 0)")
    sp.add_argument("--lam", type=float, default=1.0, help="λ of k_lambda (default 1)")
    sp.add_argument("--exact-only", action="store_true", help="no sampling: exact columns only")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.set_defaults(handler=run_table)


def table_rows(
    q: Distribution,
    p: Distribution,
    n: int,
    seed: int = 0,
    lam: float = 1.0,
    exact_only: bool = False,
) -> tuple[float, float, float, list[dict[str, Any]]]:
    r"""The figures behind ``table``: true KLs, :math:`\lambda^*`, one dict per estimator.

    For each key of :data:`TABLE_KEYS`, with KL the estimator's target
    (:func:`kl_core.estimation.montecarlo.target_of`):

    .. math:: \text{bias/true} = \frac{\mu - \mathrm{KL}}{\mathrm{KL}}, \qquad
              \text{stdev/true} = \frac{\sigma}{\mathrm{KL}},

    with :math:`\mu, \sigma` from :func:`kl_core.estimation.montecarlo.simulate` (``mc_*``)
    and from :func:`kl_core.estimation.exact.estimator_moments` (``exact_*``).

    Parameters
    ----------
    q, p : Distribution
        Sampler and target.
    n : int
        Monte Carlo samples.
    seed : int, default 0
        Seed of ``np.random.default_rng``.
    lam : float, default 1.0
        :math:`\lambda` of ``k_lambda``.
    exact_only : bool, default False
        Skip the sampling; the ``mc_*`` fields and ``neg_fraction`` are None.

    Returns
    -------
    tuple
        ``(KL[q,p], KL[p,q], λ*, rows)``, λ* None where it does not exist
        (:func:`kl_core.estimation.exact.lambda_star`); each row holds the
        :data:`TABLE_JSON_FIELDS` plus the display fields ``name``,
        ``target_name`` and ``mc_se_over_true``.  ``se_reliable`` says whether
        a ±SE from ``n`` samples can be trusted
        (:func:`kl_core.estimation.reliability.error_bar_check`, also with
        ``exact_only``); ``note`` says why not, or why a moment is infinite.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html
    """
    from kl_core.estimation import estimators as est
    from kl_core.estimation.exact import estimator_moments, kl, optimal_lambda
    from kl_core.estimation.montecarlo import ratio_to_target, simulate, target_of
    from kl_core.estimation.reliability import error_bar_check

    true_kl, true_kl_pq = kl(q, p), kl(p, q)
    lam_star = optimal_lambda(q, p)
    sim = (
        None
        if exact_only
        else simulate(q, p, n, seed=seed, lam=lam, keys=TABLE_KEYS, percentiles=False)
    )
    rows = []
    for key in TABLE_KEYS:
        target_name, target = target_of(key, true_kl, true_kl_pq)
        key_lam = lam if key == "k_lambda" else None
        m = estimator_moments(key, q, p, lam=key_lam)
        check = error_bar_check(key, q, p, n, lam=key_lam, moments=m)
        exact_bias = ratio_to_target(m.mean - target, target) if math.isfinite(m.mean) else math.nan
        row: dict[str, Any] = {
            "estimator": key,
            "mc_mean": None,
            "mc_bias_over_true": None,
            "mc_std_over_true": None,
            "exact_mean": m.mean,
            "exact_bias_over_true": exact_bias,
            "exact_std_over_true": ratio_to_target(m.std, target),
            "neg_fraction": None,
            "se_reliable": check.reliable,
            "note": check.note or m.note,
        }
        row.update(
            name=est.ESTIMATORS[key].name,
            target_name=target_name,
            mc_se_over_true=None,
        )
        if sim is not None:
            s = sim[key]
            row.update(
                mc_mean=s.mean,
                mc_bias_over_true=s.bias_over_true,
                mc_std_over_true=s.std_over_true,
                neg_fraction=s.neg_fraction,
            )
            row["mc_se_over_true"] = ratio_to_target(s.se, target)
        rows.append(row)
    return true_kl, true_kl_pq, lam_star, rows


def run_table(args: argparse.Namespace) -> int:
    """Handler of ``table``."""
    from kl_core.estimation.exact import lambda_star
    from kl_core.estimation.published import match_published

    q, p = parse_pair(args)
    true_kl, true_kl_pq, lam_star, rows = table_rows(
        q, p, args.n, args.seed, args.lam, args.exact_only
    )
    if args.json:
        out = {
            "true_kl": true_kl,
            "rows": [{k: r[k] for k in TABLE_JSON_FIELDS} for r in rows],
            "optimal_lambda": lam_star,
        }
        print(_dumps(out))
        return 0

    pub = match_published(q, p)
    print(f"q = {q.name}   p = {p.name}   (x ~ q, r = p(x)/q(x))")
    truth = f"KL[q,p] = {_fmt(true_kl, '.6g')}"
    if pub is not None:
        truth += f" (Schulman: {pub.true_kl_text})"
    star = "undefined" if lam_star is None else _fmt(lam_star, ".6g")
    print(f"{truth}   KL[p,q] = {_fmt(true_kl_pq, '.6g')}   optimal λ* = {star}")
    if args.exact_only:
        print("exact values only (--exact-only): no sampling")
    else:
        print(f"Monte Carlo: n = {args.n:,} samples of q, seed {args.seed}")
    print()

    mc = not args.exact_only
    # (title, cell function, right-aligned); MC columns only when sampling happened
    columns: list[tuple[str, Any, bool]] = [
        ("estimator", lambda r, label, pr: label, False),
        ("vs", lambda r, label, pr: r["target_name"], False),
    ]
    if mc:
        columns += [
            ("bias/true MC", lambda r, label, pr: _fmt(r["mc_bias_over_true"], "+.4f"), True),
            ("± SE", lambda r, label, pr: _se_cell(r), True),
        ]
    columns.append(
        (
            "bias/true exact" if not mc else "exact",
            lambda r, label, pr: _fmt(r["exact_bias_over_true"], "+.4f"),
            True,
        )
    )
    if pub is not None:
        columns.append(("Schulman", lambda r, label, pr: pr.bias_text if pr else "", True))
    if mc:
        columns.append(
            ("stdev/true MC", lambda r, label, pr: _fmt(r["mc_std_over_true"], ".4f"), True)
        )
    columns.append(
        (
            "stdev/true exact" if not mc else "exact",
            lambda r, label, pr: _fmt(r["exact_std_over_true"], ".4f"),
            True,
        )
    )
    if pub is not None:
        columns.append(("Schulman", lambda r, label, pr: pr.std_text if pr else "", True))
    if mc:
        columns.append(("P(k<0) MC", lambda r, label, pr: _fmt(r["neg_fraction"], ".2%"), True))

    body = []
    for r in rows:
        label = r["name"] + (f" (λ={args.lam:g})" if r["estimator"] == "k_lambda" else "")
        pr = pub.row(r["estimator"]) if pub is not None else None
        body.append([cell(r, label, pr) for _, cell, _ in columns])
    header = [title for title, _, _ in columns]
    right = [rj for _, _, rj in columns]
    for line in _table(header, body, right):
        print(line)
    print()
    print("bias/true = (mean − KL)/KL; stdev/true = per-sample standard deviation / KL.")
    if mc:
        print("± SE = standard error of the MC mean / KL.")
        if not all(r["se_reliable"] for r in rows):
            print("! = that ± SE cannot be trusted: see its note below.")
    print(
        "k2 is biased (its mean is E_q[½ log² r]) but, as in Schulman's table, compared with KL[q,p]."
    )
    if pub is not None:
        print(
            "Schulman: J. Schulman, Approximating KL Divergence (2020), http://joschu.net/blog/kl-approx.html"
        )
    if lam_star is None:
        print(f"note (λ*): {lambda_star(q, p).note}")
    for r in rows:
        if r["note"]:
            print(f"note ({r['estimator']}): {r['note']}")
    return 0


def _se_cell(row: dict[str, Any]) -> str:
    """The ± SE cell, marked ! where the error bar cannot be trusted."""
    text = _fmt(row["mc_se_over_true"], ".4f")
    return text if row["se_reliable"] else f"{text} !"


# ------------------------------------------------------------ kl


def register_kl(subparsers: argparse._SubParsersAction) -> None:
    """Register ``kl``: both KL directions and every registry f-divergence, exactly.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``python -m kl_core`` subcommand collection.

    Returns
    -------
    None
        The subcommand is registered in place.
    """
    sp = subparsers.add_parser(
        "kl",
        help="KL[q‖p], KL[p‖q] and every f-divergence E_q[f(p/q)], exactly",
        description="Exact KL[q‖p], KL[p‖q] and D_f(p,q) = E_q[f(p/q)] for every f of the registry.",
    )
    add_pair_arguments(sp, "normal(0,1)", "normal(0.1,1)")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.set_defaults(handler=run_kl)


def run_kl(args: argparse.Namespace) -> int:
    """Handler of ``kl``."""
    from kl_core.estimation.divergences import DIVERGENCES
    from kl_core.estimation.exact import f_divergence, kl

    q, p = parse_pair(args)
    kl_qp, kl_pq = kl(q, p), kl(p, q)
    fdiv = {}
    for name in DIVERGENCES:
        try:
            fdiv[name] = f_divergence(name, p, q)
        except QuadratureError as exc:  # one failed integral should not hide the others
            fdiv[name] = math.nan
            print(f"warning: {name}: {_one_line(exc)}; reported as null", file=sys.stderr)
    if args.json:
        print(_dumps({"kl_qp": kl_qp, "kl_pq": kl_pq, "f_divergences": fdiv}))
        return 0
    print(f"q = {q.name}   p = {p.name}")
    print(f"KL[q‖p] = {_fmt(kl_qp, '.10g')}")
    print(f"KL[p‖q] = {_fmt(kl_pq, '.10g')}")
    print()
    print("f-divergences D_f(p,q) = E_q[f(p/q)]:")
    body = [[name, d.name, d.f_latex, _fmt(fdiv[name], ".10g")] for name, d in DIVERGENCES.items()]
    for line in _table(["key", "divergence", "f(u)", "value"], body, [False, False, False, True]):
        print("  " + line)
    return 0


# ------------------------------------------------------------ entry point


def build_parser() -> argparse.ArgumentParser:
    """The parser with every command of :data:`SUBCOMMANDS` registered.

    Returns
    -------
    argparse.ArgumentParser
        The ``python -m kl_core`` parser.
    """
    parser = _Parser(
        prog=PROG,
        description="KL Estimator Lab: Monte Carlo and exact figures for Schulman's KL estimators.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for entry in SUBCOMMANDS:
        module, _, func = entry.partition(":")
        getattr(importlib.import_module(module), func)(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 2 bad input).

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        The exit code.  Bad arguments print one ``error: ...`` line on stderr.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one line (or --help)
        return int(exc.code or 0)
    try:
        return int(args.handler(args))
    except ValueError as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except QuadratureError as exc:  # a numerical failure, not bad input
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
