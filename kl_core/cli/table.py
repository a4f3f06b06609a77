r"""The ``table`` command: Schulman's bias/true and stdev/true table, Monte Carlo beside exact.

``python -m kl_core table [--q SPEC] [--p SPEC] [--n 1e7] [--seed 0] [--lam 1] [--exact-only] [--json]``

For each estimator of :data:`TABLE_KEYS` (the registry's compared estimators,
:data:`kl_core.estimation.estimators.COMPARED_KEYS`), its bias/true and stdev/true from ``--n``
samples of ``q`` and exactly, plus the true KL and the variance-optimal :math:`\lambda^*`.  The
defaults reproduce his first table (:math:`q = \mathcal N(0,1)`, :math:`p = \mathcal N(0.1,1)`,
10 million samples).

``--json`` prints everything the text shows: ``true_kl``, ``true_kl_pq``, ``rows`` (one object of
:data:`TABLE_JSON_FIELDS` per estimator; ``notes`` lists every note the text prints for the row),
``optimal_lambda`` and ``optimal_lambda_note``; then the inputs ``q``, ``p`` (specs), ``n``,
``seed`` (null with ``--exact-only``), ``lam`` and ``exact_only``; ``notes``, the notes on the
true KLs (:func:`table_notes`: below the smallest normal double, or 0 so that every ratio is
undefined); and ``published``, Schulman's printed figures for this pair (``source``,
``true_kl``, ``rows``: ``{estimator: {"bias_over_true", "std_over_true"}}``) or null.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import argparse
import functools
import math
from typing import TYPE_CHECKING, Any

from kl_core._docfill import docfill
from kl_core.cli._common import (
    HANDLER_SECTIONS,
    Command,
    add_pair_arguments,
    count,
    dumps,
    fmt,
    named_by_flags,
    parse_pair,
    share,
    text_table,
)
from kl_core.estimation.estimators import COMPARED_KEYS, ESTIMATORS
from kl_core.numbers import SMALLEST_NORMAL, from_log, unresolved

if TYPE_CHECKING:
    from kl_core.estimation.distributions import Distribution

__all__ = [
    "FIXED_POINT_LIMIT", "MAX_N", "TABLE_JSON_FIELDS", "TABLE_KEYS", "register", "run_table", "table_notes", "table_rows",
]

#: The most samples ``table --n`` takes: 100 times the app's largest N and Schulman's 10⁷
#: (about 30 s; the sampling is chunked, so memory stays near 100 MB).  Beyond it a run takes
#: hours, and a mistyped exponent (``--n 1e18``) would look like a hang.
MAX_N = 1_000_000_000

#: The estimators of the table, in order.
TABLE_KEYS: tuple[str, ...] = COMPARED_KEYS
#: The fields of one row of ``table --json``, in order: the first ten as they have always been, then
#: what the text table also shows: the estimator's name with its λ (None but for ``k_lambda``), the KL
#: it is compared with ("vs"), the "± SE" column, the logs behind a stdev/true past a double, and
#: every note the text prints for the row (``note`` is the first of them, or "").
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
    "name",
    "lam",
    "target_name",
    "mc_se_over_true",
    "exact_log_var",
    "exact_log_std_over_true",
    "notes",
)


def _arguments(sp: argparse.ArgumentParser) -> None:
    add_pair_arguments(sp, "normal(0,1)", "normal(0.1,1)")
    sp.add_argument(
        "--n",
        type=functools.partial(count, example="1e7", most=MAX_N),
        default=10_000_000,
        help=f"samples (default 1e7, at most 1e{round(math.log10(MAX_N))})",
    )
    sp.add_argument("--seed", type=int, default=0, help="seed of numpy's default_rng (default 0)")
    sp.add_argument("--lam", type=float, default=1.0, help="λ of k_lambda (default 1)")
    sp.add_argument("--exact-only", action="store_true", help="no sampling: exact columns only")
    sp.add_argument("--json", action="store_true", help="print one JSON object")


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
    and from :func:`kl_core.estimation.exact.estimator_moments` (``exact_*``).  Where the exact
    variance is finite but past the largest double, the exact stdev/true is
    :math:`\exp(\tfrac12\log\mathrm{Var} - \log\mathrm{KL})`
    (:func:`kl_core.estimation.exact.log_estimator_variance`), finite wherever that fits a double.

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
        :data:`TABLE_JSON_FIELDS` (``lam`` is ``lam`` for ``k_lambda``, None for the others;
        ``mc_se_over_true`` is the standard error of the MC mean over KL; ``exact_log_var`` and
        ``exact_log_std_over_true`` are the logs where the variance is past a double, else nan)
        plus the display fields ``target``, ``exact_std_unresolved`` and ``mc_std_unresolved``.
        ``se_reliable`` says whether a ±SE from ``n`` samples can be trusted
        (:func:`kl_core.estimation.reliability.error_bar_check`, also with
        ``exact_only``); ``note`` says why not, or why a moment is infinite; ``notes`` holds
        it and every other note on the row (:func:`_row_notes`), as the text prints them.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html
    """
    from kl_core.estimation.exact import (
        estimator_moments,
        kl,
        log_estimator_variance,
        optimal_lambda,
    )
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
        key_lam = lam if ESTIMATORS[key].parameter is not None else None
        m = estimator_moments(key, q, p, lam=key_lam)
        check = error_bar_check(key, q, p, n, lam=key_lam, moments=m)
        # an infinite mean (k2 under a t(3) sampler: E[½ log² r] = ∞) is infinitely biased, not undefined
        exact_bias = ratio_to_target(m.mean - target, target) if math.isfinite(m.mean) else (
            m.mean if math.isinf(m.mean) and math.isfinite(target) and target > 0 else math.nan)
        exact_std = math.nan if m.var_unresolved else ratio_to_target(m.std, target)
        std_unresolved = m.var_unresolved
        if std_unresolved and math.isfinite(target) and target >= SMALLEST_NORMAL:
            # Var below the smallest normal double: its digits are lost, its log is not
            log_var = log_estimator_variance(key, q, p, lam=key_lam)
            if math.isfinite(log_var):
                exact_std, std_unresolved = math.exp(0.5 * log_var - math.log(target)), False
        log_std_over_true = math.nan
        if math.isfinite(m.log_var) and math.isfinite(target) and target > 0.0:
            # Var past a double, its square root often not: σ/KL = exp(½ log Var − log KL)
            log_std_over_true = m.log_std - math.log(target)
            exact_std = _exp(log_std_over_true)
        row: dict[str, Any] = {
            "estimator": key,
            "target": target,
            "exact_std_unresolved": std_unresolved,
            "mc_std_unresolved": False,
            "mc_mean": None,
            "mc_bias_over_true": None,
            "mc_std_over_true": None,
            "exact_mean": m.mean,
            "exact_bias_over_true": exact_bias,
            "exact_std_over_true": exact_std,
            "neg_fraction": None,
            "se_reliable": check.reliable,
            "note": check.note or m.note,
        }
        row.update(
            name=ESTIMATORS[key].name,
            lam=key_lam,
            target_name=target_name,
            mc_se_over_true=None,
            exact_log_var=m.log_var,
            exact_log_std_over_true=log_std_over_true,
        )
        if sim is not None:
            s = sim[key]
            row.update(
                mc_mean=s.mean,
                mc_bias_over_true=s.bias_over_true,
                mc_std_unresolved=s.std_unresolved,
                mc_std_over_true=math.nan if s.std_unresolved else s.std_over_true,
                neg_fraction=s.neg_fraction,
            )
            row["mc_se_over_true"] = math.nan if s.std_unresolved else ratio_to_target(s.se, target)
        row["notes"] = _row_notes(row)
        rows.append(row)
    return true_kl, true_kl_pq, lam_star, rows


def _row_notes(row: dict[str, Any]) -> list[str]:
    """Every note on one row of :func:`table_rows`, in the order the text prints them (without the
    ``note (key):`` prefix): its ``note``, a standard deviation that is not resolved, and where its
    stdev/true past a double comes from."""
    notes = [row["note"]] if row["note"] else []
    if not unresolved(row["target"]):
        if row["exact_std_unresolved"]:
            notes.append("its exact standard deviation is not resolved: its values are so small that their "
                         "squares fall below the smallest normal double, so its exact stdev/true is left out (—)")
        if row["mc_std_unresolved"]:
            notes.append("its Monte Carlo standard deviation is below the smallest normal double, where a double "
                         "loses its significant digits, so its MC stdev/true and ± SE are left out (—)")
    if math.isfinite(row["exact_log_std_over_true"]):  # Var is inf: say where the stdev/true comes from
        var = f"Var({row['name']})"
        past = "" if math.isfinite(row["exact_std_over_true"]) else (
            ", and is past the largest double too: printed from its log (inf with --json)")
        notes.append(f"{var} is past the largest double; the exact stdev/true is worked out in logs, "
                     f"exp(½ log {var} − log {row['target_name']}) with log {var} = "
                     f"{row['exact_log_var']:.10g}{past}")
    return notes


def table_notes(true_kl: float, true_kl_pq: float, same: bool = False) -> list[str]:
    r"""The notes of ``table`` on the two true KLs: why the figures divided by them are left out (—).

    Parameters
    ----------
    true_kl, true_kl_pq : float
        :math:`\mathrm{KL}[q\|p]` and :math:`\mathrm{KL}[p\|q]`, as :func:`table_rows` returns them.
    same : bool, default False
        Whether ``q`` and ``p`` are the same distribution (says "p = q" rather than "to double
        precision" where the KLs are 0).

    Returns
    -------
    list of str
        One sentence per case, none when both KLs are normal, nonzero doubles: KLs below the
        smallest normal double (their digits are lost), and KLs that are 0 (a ratio to 0 is
        undefined).

    Examples
    --------
    >>> table_notes(0.5, 0.5)
    []
    >>> table_notes(0.0, 0.0, same=True)[0][:44]
    'KL[q,p] and KL[p,q] are 0 (p = q): bias/true'
    """
    out = []
    names = (("KL[q,p]", true_kl), ("KL[p,q]", true_kl_pq))
    tiny = [name for name, x in names if unresolved(x)]
    if tiny:
        out.append(f"{' and '.join(tiny)} {'is' if len(tiny) == 1 else 'are'} below the smallest normal double "
                   f"({SMALLEST_NORMAL:.4g}), where a double loses its significant digits: every figure divided by "
                   f"{'it' if len(tiny) == 1 else 'them'} is left out (—)")
    zero = [name for name, x in names if x == 0.0]
    if zero:
        one = len(zero) == 1
        why = "p = q" if same else "p = q to double precision"
        out.append(f"{' and '.join(zero)} {'is' if one else 'are'} 0 ({why}): bias/true, stdev/true and ± SE "
                   f"divide by {'it' if one else 'them'}, so they are undefined and left out (—)")
    return out


@docfill(**HANDLER_SECTIONS)
def run_table(args: argparse.Namespace) -> int:
    """Handler of ``table``: print its output, as text or with ``--json`` as JSON.

    %(handler)s
    """
    from kl_core.estimation.exact import lambda_star
    from kl_core.estimation.published import match_published

    q, p = parse_pair(args)
    if not math.isfinite(args.lam):  # checked here too: with --exact-only nothing else would
        raise ValueError(f"--lam must be finite, got {args.lam}")
    if args.seed < 0:
        raise ValueError(f"--seed must be an integer >= 0, got {args.seed}")
    try:
        true_kl, true_kl_pq, lam_star, rows = table_rows(
            q, p, args.n, args.seed, args.lam, args.exact_only
        )
    except ValueError as exc:  # the core names its parameters; the user typed flags
        raise named_by_flags(exc, {"lam": "--lam", "seed": "--seed", "n": "--n"}) from None
    star_info = lambda_star(q, p)
    if not star_info.resolved:  # a quotient of subnormal numbers: its digits are lost
        lam_star = None
    pub = match_published(q, p)
    notes = table_notes(true_kl, true_kl_pq, same=q == p)
    if args.json:
        out = {
            "true_kl": true_kl,
            "true_kl_pq": true_kl_pq,
            "rows": [{k: r[k] for k in TABLE_JSON_FIELDS} for r in rows],
            "optimal_lambda": lam_star,
            "optimal_lambda_note": str(star_info.note),
            # the inputs, as the text's header gives them
            "q": q.spec,
            "p": p.spec,
            "n": args.n,  # also with --exact-only: se_reliable is for n samples
            "seed": None if args.exact_only else args.seed,
            "lam": args.lam,
            "exact_only": bool(args.exact_only),
            "notes": notes,
            "published": None if pub is None else {
                "source": pub.source,
                "true_kl": pub.true_kl.value,
                "rows": {r.estimator: {"bias_over_true": r.bias.value, "std_over_true": r.std.value}
                         for r in pub.rows},
            },
        }
        print(dumps(out))
        return 0

    print(f"q = {q.name}   p = {p.name}   (x ~ q, r = p(x)/q(x))")
    truth = f"KL[q,p] {_kl_text(true_kl)}"
    if pub is not None:
        truth += f" (Schulman: {pub.true_kl})"
    star = "not resolved" if not star_info.resolved else "undefined" if lam_star is None else fmt(lam_star, ".6g")
    print(f"{truth}   KL[p,q] {_kl_text(true_kl_pq)}   optimal λ* = {star}")
    if args.exact_only:
        print("exact values only (--exact-only): no sampling")
    else:
        print(f"Monte Carlo: n = {args.n:,} {'sample' if args.n == 1 else 'samples'} of q, seed {args.seed}")
    print()

    mc = not args.exact_only
    # (title, cell function, right-aligned); MC columns only when sampling happened
    columns: list[tuple[str, Any, bool]] = [
        ("estimator", lambda r, label, pr: label, False),
        ("vs", lambda r, label, pr: r["target_name"], False),
    ]

    def measure(title: str, field: str, spec: str, published: str, se: bool) -> list[tuple[str, Any, bool]]:
        """One measure's columns: Monte Carlo (and its SE), exact, Schulman's printed value."""
        cols: list[tuple[str, Any, bool]] = []
        if mc:
            cols.append((f"{title} MC", lambda r, label, pr: _fixed(r[f"mc_{field}"], spec), True))
            if se:
                cols.append(("± SE", lambda r, label, pr: _se_cell(r), True))
        cols.append((f"{title} exact" if not mc else "exact",
                     lambda r, label, pr: _fixed(r[f"exact_{field}"], spec, r.get(f"exact_log_{field}", math.nan)),
                     True))
        if pub is not None:
            cols.append(("Schulman", lambda r, label, pr: getattr(pr, published).text if pr else "", True))
        return cols

    columns += measure("bias/true", "bias_over_true", "+.4f", "bias", se=True)
    columns += measure("stdev/true", "std_over_true", ".4f", "std", se=False)
    if mc:
        columns.append(("P(k<0) MC", lambda r, label, pr: share(r["neg_fraction"], 2), True))

    body = []
    for r in rows:
        parameter = ESTIMATORS[r["estimator"]].parameter
        label = r["name"] + (f" ({parameter.symbol}={args.lam:g})" if parameter is not None else "")
        pr = pub.row(r["estimator"]) if pub is not None else None
        body.append([cell(r, label, pr) for _, cell, _ in columns])
    header = [title for title, _, _ in columns]
    right = [rj for _, _, rj in columns]
    for line in text_table(header, body, right):
        print(line)
    print()
    print("bias/true = (mean − KL)/KL; stdev/true = per-sample standard deviation / KL.")
    if mc:
        print("± SE = standard error of the MC mean / KL.")
        if any(_se_cell(r).endswith("!") for r in rows):
            print("! = that ± SE cannot be trusted: see its note below.")
    print(
        "k2 is biased (its mean is E_q[½ log² r]) but, as in Schulman's table, compared with KL[q,p]."
    )
    if pub is not None:
        print(
            "Schulman: J. Schulman, Approximating KL Divergence (2020), http://joschu.net/blog/kl-approx.html"
        )
    for note in notes:
        print(f"note: {note}")
    star_note = star_info.note
    if star_note:  # undefined, 0 because χ² is infinite or past a double, or p = q
        print(f"note (λ*): {star_note}")
    for r in rows:
        for note in r["notes"]:
            print(f"note ({r['estimator']}): {note}")
    return 0


#: From here on a fixed-point column writes a figure with 4 significant digits (1.234e+15), not
#: in fixed point (a standard deviation of e^450 has 196 digits before the point).
FIXED_POINT_LIMIT = 1e15


def _exp(log_x: float) -> float:
    """e^log_x, ``inf`` where that is past the largest double."""
    try:
        return math.exp(log_x)
    except OverflowError:
        return math.inf


def _fixed(x: float | None, spec: str, log_x: float = math.nan) -> str:
    """A figure of a fixed-point column (``spec`` such as ``+.4f``), with 4 significant digits from
    :data:`FIXED_POINT_LIMIT` on, worked out from its natural log ``log_x`` where it is past a double, and for a
    figure that is not zero but would print as zero."""
    sign = "+" if spec.startswith("+") else ""
    if x is not None and math.isinf(x) and x > 0 and math.isfinite(log_x):
        return from_log(log_x, sign=sign)
    if x is not None and math.isfinite(x) and abs(x) >= FIXED_POINT_LIMIT:
        return fmt(x, f"{sign}.3e")
    if x is not None and math.isfinite(x) and x != 0 and float(fmt(x, spec)) == 0:  # 2.5e-13, not "0.0000"
        return fmt(x, f"{sign}.3e")
    return fmt(x, spec)


def _kl_text(x: float) -> str:
    """An exact KL as the header prints it, "= 0.5"; "< 2.225e-308" where its digits are not resolved."""
    return f"< {SMALLEST_NORMAL:.4g}" if unresolved(x) else f"= {fmt(x, '.6g')}"


def _se_cell(row: dict[str, Any]) -> str:
    """The ± SE cell, marked ! where the error bar cannot be trusted (not where it is left out, —)."""
    text = _fixed(row["mc_se_over_true"], ".4f")
    return text if row["se_reliable"] or math.isnan(row["mc_se_over_true"]) else f"{text} !"


register = Command(
    name="table",
    help="Schulman's bias/true and stdev/true table, Monte Carlo beside exact",
    description=(
        "For x ~ q and r = p(x)/q(x), print each estimator's bias/true and stdev/true "
        "(per-sample standard deviation over the true KL, as in Schulman's table), from "
        "n Monte Carlo samples and exactly. k1, k2, k3 and k_lambda are compared with "
        "KL[q,p]; k3_pq with KL[p,q]. Defaults reproduce Schulman's first experiment."
    ),
    arguments=_arguments,
    handler=run_table,
)
