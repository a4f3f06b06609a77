r"""The ``audit`` command: ``python -m kl_core audit FILE --sampler-col C1 --other-col C2``.

Reads a CSV or Parquet table of per-token log-probs with
:func:`kl_core.audit.statistics.load_table` (the same loader, checks and size limit as
the app's "approx_kl in practice" page), runs :func:`kl_core.audit.statistics.audit` and
prints the same summary as the page: for k1, k2 and k3 the mean, standard
deviation, standard error, share of negative values, p95, p99 and max; the
per-position buckets and the sequence sums when those columns are named; the
effective sample size when a rollout column is named; with ``--kl-col`` (the
exact next-token KL at each token's prefix, from full logits) the
Rao–Blackwellized ``rb`` beside them and its variance reduction
Var(k1)/Var(rb), Var(k3)/Var(rb), per token and per sequence.

``--json`` prints :meth:`kl_core.audit.statistics.AuditReport.to_dict` plus ``file`` and
``columns``: top-level keys ``n``, ``direction``, ``k1``, ``k2``, ``k3`` (each with
``mean``, ``std``, ``se``, ``neg_fraction``, ``p95``, ``p99``, ``max``) and more;
``rb`` and ``variance_ratio`` are null without ``--kl-col``.  A figure that is
finite but past the largest double (about 1.8e308; e.g. the mean of k3 when one
token has log r = 800) cannot be a JSON number: it is written as a string,
``"1.23456789012e+347"``, and its natural log follows under the same key with
``log_`` in front (``"log_mean": 799.8``, ``"log_k3_mean"`` in a position row);
``"inf"`` is kept for a figure that is truly infinite.  The text output prints
such a figure from its log too (:func:`kl_core.numbers.from_log`).
``--list-columns`` prints the file's columns, one per line.

A bad file or bad columns raise ``ValueError``, which :func:`kl_core.cli.main.main`
prints as one ``error: ...`` line on stderr with exit code 2.

Source of the estimators: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; of ``rb``: A. Amini, T. Vieira,
R. Cotterell (2025), arXiv:2504.10637.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import TYPE_CHECKING, BinaryIO

from kl_core._docfill import docfill
from kl_core.audit import DIRECTIONS, table_files
from kl_core.cli._common import (
    HANDLER_SECTIONS,
    Command,
    json_value,
    named_by_flags,
    plural,
    share,
    text_table,
)
from kl_core.cli._common import fmt as _fmt
from kl_core.numbers import from_log
from kl_core.validation import InputError

if TYPE_CHECKING:
    from kl_core.audit import statistics as audit

__all__ = ["register", "report_lines", "run_audit", "table_columns"]


def table_columns(
    path_or_buffer: str | os.PathLike[str] | BinaryIO,
    *,
    fmt: str | None = None,
    max_bytes: int | None = None,
) -> list[str]:
    """The column names of a CSV or Parquet file, with :func:`kl_core.audit.statistics.load_table`'s checks.

    The same format rule (by file name unless ``fmt`` is given) and size limit
    as :func:`kl_core.audit.statistics.load_table`, so a file that passes here is refused
    there only for its contents.

    Parameters
    ----------
    path_or_buffer : str, path or binary file-like
        A ``.csv``, ``.parquet`` or ``.pq`` file, or an open binary file with a ``name``.
    fmt : {"csv", "parquet"}, optional
        The format, overriding the file name.
    max_bytes : int, optional
        Size limit; defaults to :data:`kl_core.audit.statistics.MAX_FILE_BYTES`.

    Returns
    -------
    list of str
        The columns, in file order.

    Raises
    ------
    ValueError
        If the file is not CSV/Parquet, is over the size limit, cannot be
        parsed or has no columns.

    Examples
    --------
    >>> import io
    >>> table_columns(io.BytesIO(b"lp,lq\\n-1.0,-1.5\\n"), fmt="csv")
    ['lp', 'lq']
    """
    from kl_core.audit import statistics as audit  # its limit (load_table's), read when called

    limit = audit.MAX_FILE_BYTES if max_bytes is None else max_bytes
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_bytes must be a positive integer, got {max_bytes!r}")
    name = os.fspath(path_or_buffer) if isinstance(path_or_buffer, str | os.PathLike) else None
    name = name or getattr(path_or_buffer, "name", None)
    fmt = table_files.file_format(name, fmt)
    data, name = table_files.read_bytes(path_or_buffer, limit)
    cols = list(table_files.read_frame(data, name, fmt, nrows=0).columns)
    cols = [str(c) for c in cols if not str(c).startswith("__index_level_")]
    if not cols:
        if name:
            raise InputError("path_or_buffer: {name!r} has no columns", name=name)
        raise InputError("path_or_buffer: the buffer has no columns")
    return cols


# ------------------------------------------------------------ registration


def _arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("file", help="a .csv, .parquet or .pq file")
    sp.add_argument("--sampler-col", metavar="COL", help="log-probs under the sampling policy")
    sp.add_argument("--other-col", metavar="COL", help="log-probs under the other policy")
    sp.add_argument(
        "--direction",
        choices=DIRECTIONS,
        default="sampler-other",
        help="sampler-other estimates KL[sampler||other] (default); other-sampler KL[other||sampler]",
    )
    sp.add_argument("--mask-col", metavar="COL", help="1 = count the token, 0 = skip (e.g. prompt)")
    sp.add_argument("--position-col", metavar="COL", help="token index within its sequence")
    sp.add_argument("--sequence-col", metavar="COL", help="sequence id: adds per-sequence sums")
    sp.add_argument(
        "--rollout-col",
        metavar="COL",
        help="log-probs under a third policy that actually drew the tokens (importance weights, ESS)",
    )
    sp.add_argument(
        "--kl-col",
        metavar="COL",
        help=(
            "exact KL of the two next-token distributions at each token's prefix, in the audited "
            "direction, computed from full logits: adds the Rao-Blackwellized rb and its variance "
            "reduction"
        ),
    )
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.add_argument("--list-columns", action="store_true", help="print the file's columns and exit")


@docfill(**HANDLER_SECTIONS)
def run_audit(args: argparse.Namespace) -> int:
    """Handler of ``audit``: load the file, audit it, print the summary or JSON.

    %(handler)s
    """
    try:
        return _run_audit(args)
    except ValueError as exc:  # the loader names its parameters; the user typed flags
        raise named_by_flags(exc, _FLAGS) from None


#: The loader's parameter names → the flags (and the positional FILE) the user typed.
_FLAGS = {
    **{f"{role}_col": f"--{role}-col" for role in ("sampler", "other", "mask", "position", "sequence", "rollout", "kl")},
    "path_or_buffer": "file",
    "mask": "--mask-col",
}


def _run_audit(args: argparse.Namespace) -> int:
    from kl_core.audit import statistics as audit  # the numerics only when a file is audited

    if args.list_columns:
        for col in table_columns(args.file):
            print(col)
        return 0
    missing = [
        flag
        for flag, v in (("--sampler-col", args.sampler_col), ("--other-col", args.other_col))
        if not v
    ]
    if missing:
        raise ValueError(
            f"{' and '.join(missing)} required (see --list-columns for the file's columns)"
        )
    table = audit.load_table(
        args.file,
        args.sampler_col,
        args.other_col,
        mask_col=args.mask_col,
        position_col=args.position_col,
        sequence_col=args.sequence_col,
        rollout_col=args.rollout_col,
        kl_col=args.kl_col,
    )
    report = audit.audit(**table.as_kwargs(), direction=args.direction)
    if args.json:
        out = report.shown().to_dict()  # withheld figures are null, as the app leaves them out
        out["notes"] = [str(note) for note in report.withheld_notes()]
        out["file"] = os.fspath(args.file)
        out["columns"] = dict(table.columns)
        print(json.dumps(json_value(out), indent=2, allow_nan=False, ensure_ascii=False))
        return 0
    for line in report_lines(
        report, file=os.fspath(args.file), columns=table.columns, n_rows=table.n_rows
    ):
        print(line)
    return 0


# ------------------------------------------------------------ text output


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Aligned columns: the first left, the others right."""
    return text_table(header, rows, [i > 0 for i in range(len(header))])


PLAIN_FORMULAS = {
    "sampler-other": {
        "k1": "-log r",
        "k2": "(log r)^2 / 2",
        "k3": "(r - 1) - log r",
        "rb": "KL[sampler(.|prefix) || other(.|prefix)]",
    },
    "other-sampler": {
        "k1": "r log r",
        "k2": "r (log r)^2 / 2",
        "k3": "r log r - (r - 1)",
        "rb": "KL[other(.|prefix) || sampler(.|prefix)]",
    },
}
"""The formulas of :data:`kl_core.audit.statistics.DEFINITIONS` (and ``rb``) in plain text, for a terminal."""

SUMMARY_HEADER = ["estimator", "mean", "std", "SE", "neg fraction", "p95", "p99", "max"]


def _figure(x: float, log_x: float = math.nan, spec: str = ".6g") -> str:
    """:func:`_fmt`, but a figure past a double (``inf`` with a finite ``log_x``) from its log, as many digits."""
    if math.isinf(x) and math.isfinite(log_x):
        digits = int(spec.rsplit(".", 1)[1].rstrip("g")) if "." in spec else 6
        return from_log(log_x, digits, sign="-" if x < 0 else "", trim=True)
    return _fmt(x, spec)


def _summary_rows(stats: dict[str, audit.EstimatorSummary]) -> list[list[str]]:
    return [
        [
            k,
            _figure(s.mean, s.log_mean),
            _figure(s.std, s.log_std),
            _figure(s.se, s.log_se, ".3g"),
            share(s.neg_fraction, 2) if math.isfinite(s.neg_fraction) else "—",
            _figure(s.p95, s.log_p95),
            _figure(s.p99, s.log_p99),
            _figure(s.max, s.log_max),
        ]
        for k, s in stats.items()
    ]


def _ratio_lines(ratio: dict[str, float], logs: dict[str, float] | None, what: str = "per token") -> list[str]:
    """The variance ratios of rb, and which estimator rb varies more than in this file (a ratio below 1)."""
    logs = logs or {}
    lines = [
        f"variance ratios of rb: Var(k1)/Var(rb) = "
        f"{_figure(ratio['k1'], logs.get('k1', math.nan), '.4g')}, "
        f"Var(k3)/Var(rb) = {_figure(ratio['k3'], logs.get('k3', math.nan), '.4g')}"
    ]
    more = [k for k in ("k1", "k3") if ratio[k] < 1]  # nan: no claim either way
    if more:
        lines.append(f"for this file rb varies more {what} than {' and '.join(more)}: it can remove "
                     "variance only in expectation, and only if the column holds each prefix's exact KL")
    return lines


def _past_double(report: audit.AuditReport) -> bool:
    """True if the report has a figure that is finite but past the largest double."""
    stats = list(report.all_summaries.values())
    ratios = [report.log_variance_ratio]
    if report.sequences is not None:
        stats += report.sequences.stats.values()
        ratios.append(report.sequences.log_variance_ratio)
    logs = [getattr(s, f"log_{f}") for s in stats for f in ("mean", "std", "se", "p95", "p99", "max")]
    logs += [v for r in ratios if r for v in r.values()]
    for b in report.positions or ():
        logs += [*b.log_mean.values(), *b.log_se.values()]
    return any(math.isfinite(v) for v in logs)


def report_lines(
    report: audit.AuditReport,
    *,
    file: str | None = None,
    columns: dict[str, str] | None = None,
    n_rows: int | None = None,
) -> list[str]:
    """The human-readable summary of an audit, one string per line.

    Parameters
    ----------
    report : AuditReport
        From :func:`kl_core.audit.statistics.audit`.
    file : str, optional
        The file's name, for the header.
    columns : dict of str to str, optional
        ``AuditTable.columns``: the column read for each role.
    n_rows : int, optional
        Rows in the file.

    Returns
    -------
    list of str
    """
    from kl_core.audit import statistics as audit  # the numerics only when a file is audited

    out: list[str] = []
    if file is not None:
        counted = (
            "all counted"
            if report.n == report.n_total
            else f"{report.n:,} of {report.n_total:,} tokens counted by the mask"
        )
        rows = f"{plural(n_rows, 'row', 'rows')}, " if n_rows is not None else ""
        out.append(f"file: {file} ({rows}{counted})")
    if columns:
        out.append("columns: " + ", ".join(f"{role} = {col}" for role, col in columns.items()))
    out.append(
        f"direction: {report.direction}, estimating {report.target}; "
        "log r = log-prob(other) - log-prob(sampler)"
    )
    defs = audit.DEFINITIONS[report.direction]
    for k in audit.ESTIMATOR_KEYS:
        out.append(f"  {k} = {PLAIN_FORMULAS[report.direction][k]}: {defs[k]['meaning']}")
    keys = list(report.all_summaries)
    if report.rb is not None:
        meaning = audit.RB_DEFINITIONS[report.direction]["meaning"]
        out.append(f"  rb = {PLAIN_FORMULAS[report.direction]['rb']}: {meaning}")
    if report.weighted:
        out.append(
            f"rollout importance weights: ESS = {_fmt(report.ess, ',.1f')} tokens "
            f"({share(report.ess_fraction)} of n); figures are self-normalised IS estimates"
        )
    withheld = [str(note) for note in report.withheld_notes()]
    report = report.shown()  # the SE, std and percentiles that mean nothing at its counts are withheld (—)
    out.append("")
    out.append(f"per token (n = {report.n:,}):")
    out.extend("  " + line for line in _table(SUMMARY_HEADER, _summary_rows(report.all_summaries)))
    if report.variance_ratio is not None:
        out.extend("  " + line for line in _ratio_lines(report.variance_ratio, report.log_variance_ratio))
    if report.positions is not None:
        out.append("")
        out.append("per position (log2 buckets): mean ± SE")
        header = ["positions", "tokens"] + [f"{k} mean ± SE" for k in keys]
        rows = []
        for b in report.positions:
            span = (
                f"{b.lo}+"
                if b.hi is None
                else (f"{b.lo}" if b.hi == b.lo + 1 else f"{b.lo}-{b.hi - 1}")
            )
            rows.append(
                [span, f"{b.count:,}"]
                + [
                    f"{_figure(b.mean[k], b.log_mean.get(k, math.nan), '.4g')} ± "
                    f"{_figure(b.se[k], b.log_se.get(k, math.nan), '.2g')}"
                    for k in keys
                ]
            )
        out.extend("  " + line for line in _table(header, rows))
    if report.sequences is not None:
        seq = report.sequences
        out.append("")
        extra = f", ESS = {_fmt(seq.ess, ',.1f')} sequences" if seq.ess is not None else ""
        out.append(f"per-sequence sums (n = {seq.n_sequences:,} sequences{extra}):")
        out.extend("  " + line for line in _table(SUMMARY_HEADER, _summary_rows(seq.stats)))
        if seq.variance_ratio is not None:
            out.extend("  " + line for line in _ratio_lines(seq.variance_ratio, seq.log_variance_ratio,
                                                            "summed over sequences"))
    out.append("")
    out.extend(f"note: {note}" for note in withheld)
    if _past_double(report):
        out.append(
            "Figures above 1.8e308 are past the largest double: they are finite, "
            "worked out from their logs."
        )
    out.append(
        "SE = standard error of the mean; neg fraction = share of values < 0 (a KL never is). "
        "Estimators: J. Schulman, http://joschu.net/blog/kl-approx.html"
    )
    return out


register = Command(
    name="audit",
    help="audit a CSV/Parquet file of per-token log-probs: k1, k2, k3 with error bars",
    description=(
        "Estimate a KL divergence from per-token log-probs. Each row is one sampled token: "
        "its log-prob under the policy that sampled it (--sampler-col) and under the other "
        "policy (--other-col); log r = other - sampler. Prints, for k1, k2 and k3, the mean, "
        "std, standard error, share of negative values, p95, p99 and max, as the app's "
        "approx_kl page does."
    ),
    arguments=_arguments,
    handler=run_audit,
)
