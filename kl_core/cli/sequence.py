r"""The ``sequence`` command: six estimators of a sequence-level KL, exact beside Monte Carlo.

``python -m kl_core sequence --policy MARKOV --ref MARKOV --T 16 [--n 2000] [--seed 0] [--json]``

Sequences of T tokens are drawn from the policy, a Markov chain written as
``markov(a1,...,aK; b11,...,b1K; ...; bK1,...,bKK)`` (:func:`kl_core.sequences.markov.parse_markov`),
and compared with the reference.  Without ``--policy``/``--ref`` the pair comes
from the drift family (:func:`kl_core.sequences.markov.drift_pair`; ``--K``, ``--drift``,
``--placement``).  For each estimator of :data:`kl_core.sequences.estimators.SEQUENCE_KEYS`
it prints the exact mean and standard deviation of one sequence's value
(:func:`kl_core.sequences.estimators.exact_moments`) beside the Monte Carlo mean, its
standard error and standard deviation over ``--n`` sequences.

``--json`` prints :meth:`kl_core.sequences.estimators.SequenceReport.as_dict`: ``true_kl``,
``true_kl_reverse``, ``per_position_kl`` (T floats) and ``rows`` (``name``,
``exact_mean``, ``exact_std``, ``mc_mean``, ``mc_std``, ``mc_se``), then ``T``,
``K``, ``n``, ``seed``, the two specs, ``per_position_kl_reverse``,
``variance_ratio`` and ``notes``.  JSON has no literal for infinity, so, as
everywhere in this command line (:func:`kl_core.cli.main.json_value`), an infinite
number is written as the string ``"inf"`` (``seq_k3``'s ``exact_std`` once
:math:`\mathbb{E}[R^2]` passes the largest double) and an undefined one (``nan``)
as ``null``; ``mc_*`` are ``null`` with ``--exact-only``.

This module imports only the standard library when the parser is built, so
``python -m kl_core --help`` does not pay for numpy; the numerics load when the
command runs.  Bad input raises ``ValueError``: one ``error:`` line on stderr,
exit code 2.

Source: A. Amini, T. Vieira, R. Cotterell, "Better Estimation of the KL
Divergence Between Language Models" (2025), arXiv:2504.10637; J. Schulman,
"Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
from typing import Any

from kl_core._docfill import docfill
from kl_core.cli._common import HANDLER_SECTIONS, Command, count, named_by_flags, text_table
from kl_core.cli._common import fmt as _fmt

__all__ = ["register", "report_lines", "run_sequence"]

DEFAULT_LENGTH = 16
DEFAULT_N = 2000

#: A whole number >= 1: ``2000``, ``2_000`` or ``2e3``.
_count = functools.partial(count, example="2000")

#: The range of ``--K``: :data:`kl_core.sequences.markov.MAX_TOKENS` is its top (a test checks they
#: agree; markov needs numpy, which building the parser must not import).
MIN_K, MAX_K = 2, 256


def _tokens(text: str) -> int:
    """``--K``: a whole number (``8``, ``1e1``); its range, :data:`MIN_K` to :data:`MAX_K`, is checked
    with the other settings of the drift family, so that 0, 1 and 300 get the same sentence."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value.is_integer()):
        raise argparse.ArgumentTypeError(f"expected a whole number from {MIN_K} to {MAX_K}, got {text!r}")
    return int(value)


def _arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--policy", metavar="MARKOV", help="the chain that draws the sequences")
    sp.add_argument("--ref", metavar="MARKOV", help="the reference chain (same K)")
    sp.add_argument(
        "--T",
        type=_count,
        default=DEFAULT_LENGTH,
        help=f"tokens per sequence (default {DEFAULT_LENGTH})",
    )
    sp.add_argument(
        "--n", type=_count, default=DEFAULT_N, help=f"Monte Carlo sequences (default {DEFAULT_N})"
    )
    sp.add_argument("--seed", type=int, default=0, help="seed of numpy's default_rng (default 0)")
    sp.add_argument("--exact-only", action="store_true", help="no sampling: exact columns only")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    family = sp.add_argument_group("drift family (when --policy and --ref are not given)")
    family.add_argument("--K", type=_tokens, help=f"number of tokens, {MIN_K} to {MAX_K} (default 8)")
    family.add_argument(
        "--drift", type=float, help="tilt of the policy by a per-token reward (default 0.5)"
    )
    family.add_argument(
        "--placement",
        choices=("every", "first"),
        help="drift in every transition (default) or in the first token only",
    )


def _chains(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """The (policy, ref) pair and a one-line description of where it came from."""
    from kl_core.sequences import markov

    specs = {"--policy": args.policy, "--ref": args.ref}
    family = {"--K": args.K, "--drift": args.drift, "--placement": args.placement}
    given = [flag for flag, v in specs.items() if v is not None]
    if given:
        if len(given) == 1:
            missing = "--ref" if given == ["--policy"] else "--policy"
            raise ValueError(f"{given[0]} needs {missing} too (or neither, for the drift family)")
        mixed = [flag for flag, v in family.items() if v is not None]
        if mixed:
            verb = "applies" if len(mixed) == 1 else "apply"
            raise ValueError(
                f"{' and '.join(mixed)} {verb} to the drift family, not to --policy/--ref"
            )
        policy, ref = markov.check_pair(args.policy, args.ref)
        return policy, ref, f"given chains, K = {policy.k}"
    k = markov.DEFAULT_K if args.K is None else args.K
    if not MIN_K <= k <= MAX_K:  # the core's sentence; for 0 it would say ">= 1", as for any count
        raise ValueError(f"--K must be in {MIN_K} … {MAX_K}, got {k}")
    drift = markov.DEFAULT_DRIFT if args.drift is None else args.drift
    placement = markov.DEFAULT_PLACEMENT if args.placement is None else args.placement
    policy, ref = markov.drift_pair(k, drift, placement)
    where = markov.PLACEMENTS[placement]
    return policy, ref, f"drift family, K = {k}, drift {drift:g} in {where}"


@docfill(**HANDLER_SECTIONS)
def run_sequence(args: argparse.Namespace) -> int:
    """Handler of ``sequence``: build the chains, compute the report, print text or JSON.

    %(handler)s
    """
    from kl_core.cli._common import json_value
    from kl_core.sequences.estimators import sequence_report

    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    try:
        policy, ref, origin = _chains(args)
        report = sequence_report(
            policy, ref, args.T, n=args.n, seed=args.seed, exact_only=args.exact_only
        )
    except ValueError as exc:  # the core names its parameters; the user typed flags
        raise named_by_flags(exc, _FLAGS) from None
    if args.json:
        print(
            json.dumps(json_value(report.as_dict()), indent=2, allow_nan=False, ensure_ascii=False)
        )
        return 0
    for line in report_lines(report, origin=origin):
        print(line)
    return 0


#: Core parameter names → the flags of ``sequence``.
_FLAGS = {"length": "--T", "k": "--K", "n": "--n", "drift": "--drift", "placement": "--placement",
          "policy": "--policy", "ref": "--ref", "seed": "--seed"}


# ------------------------------------------------------------ text output


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Aligned columns: the first two left, the others right."""
    return text_table(header, rows, [i > 1 for i in range(len(header))])


def _positions_shown(length: int) -> list[int]:
    """Every position up to 16; beyond, 1, 2, 4, 8, … and the last."""
    if length <= 16:
        return list(range(1, length + 1))
    shown = [2**i for i in range(int(math.log2(length)) + 1)]
    return shown if shown[-1] == length else [*shown, length]


def report_lines(report: Any, *, origin: str | None = None) -> list[str]:
    """The human-readable ``sequence`` output, one string per line.

    Parameters
    ----------
    report : kl_core.sequences.estimators.SequenceReport
        From :func:`kl_core.sequences.estimators.sequence_report`.
    origin : str, optional
        Where the chains came from, for the header.

    Returns
    -------
    list of str
    """
    from kl_core.sequences.estimators import SE_SHORTFALL, SEQUENCE_ESTIMATORS, se_shortfall

    ex = report.exact
    t = report.length
    out = []
    if origin:
        out.append(f"chains: {origin}")
    for label, chain in (("policy", report.policy), ("ref", report.ref)):
        spec = chain.spec
        out.append(
            f"{label}: {spec if len(spec) <= 100 else spec[:80] + '... (in full in --json)'}"
        )
    out.append(
        f"sequences of T = {t} {'token' if t == 1 else 'tokens'} drawn from the policy; log r_t = log ref(x_t | x_<t) - "
        "log policy(x_t | x_<t)"
    )
    out.append("")
    out.append(
        f"KL[policy||ref] = {_fmt(ex.true_kl)} over whole sequences ({_fmt(ex.true_kl / t, '.4g')} "
        f"per token);  KL[ref||policy] = {_fmt(ex.true_kl_reverse)}"
    )
    shown = _positions_shown(t)
    cells = [f"t={p}: {_fmt(float(ex.per_position_kl[p - 1]), '.4g')}" for p in shown]
    title = (
        "per-position KL" if len(shown) == t else "per-position KL (some positions; all in --json)"
    )
    out.append(f"{title}:")
    for i in range(0, len(cells), 6):
        out.append("  " + "   ".join(cells[i : i + 6]))
    out.append("")
    if report.n is None:
        out.append("exact values only (--exact-only): no sampling")
    else:
        out.append(
            f"Monte Carlo: n = {report.n:,} {'sequence' if report.n == 1 else 'sequences'}, seed {report.seed}; figures per sequence"
        )
    header = ["estimator", "estimates", "exact mean", "exact std"]
    if report.n is not None:
        header += ["MC mean", "± SE", "MC std"]
    rows = []
    for r in report.rows:
        cells = [r.name, SEQUENCE_ESTIMATORS[r.name].target, _fmt(r.exact_mean), _fmt(r.exact_std)]
        if report.n is not None:
            far = se_shortfall(r, report.n) > SE_SHORTFALL  # nan (no figures, or both 0): not marked
            cells += [_fmt(r.mc_mean), _fmt(r.mc_se, ".3g") + (" !" if far else ""), _fmt(r.mc_std)]
        rows.append(cells)
    out.extend(_table(header, rows))
    out.append("")
    ratio = report.variance_ratio
    out.append(
        f"variance ratios of rb (exact): Var(sum_k1)/Var(rb) = {_fmt(ratio['sum_k1'], '.4g')}, "
        f"Var(sum_k3)/Var(rb) = {_fmt(ratio['sum_k3'], '.4g')}"
    )
    out.extend(f"note: {n}" for n in report.notes)
    out.append("")
    for key, info in SEQUENCE_ESTIMATORS.items():
        out.append(f"  {key}: {info.summary}")
    out.append(
        "Sources: J. Schulman, http://joschu.net/blog/kl-approx.html (k1, k2, k3); "
        "Amini, Vieira & Cotterell, arXiv:2504.10637 (rb)."
    )
    return out


register = Command(
    name="sequence",
    help="sequence-level KL of two Markov chains: sum_k1, sum_k3, seq_k3, sum_k2, rb, mean_k3",
    description=(
        "Draw sequences of T tokens from the policy (a Markov chain) and estimate "
        "KL[policy||ref] over whole sequences six ways: the sums of k1, k3 and k2 over "
        "tokens, k3 of the sequence ratio, the Rao-Blackwellized rb (exact next-token KL "
        "at each prefix) and the per-token mean of k3. Prints each one's exact mean and std "
        "per sequence beside Monte Carlo. Chains: markov(a1,...,aK; b11,...,b1K; ...; "
        "bK1,...,bKK), first-token logits then one row of next-token logits per token; "
        "without --policy/--ref the drift family is used (--K, --drift, --placement)."
    ),
    arguments=_arguments,
    handler=run_sequence,
)
