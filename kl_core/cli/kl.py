r"""The ``kl`` command: :math:`\mathrm{KL}[q\|p]`, :math:`\mathrm{KL}[p\|q]` and every f-divergence, exactly.

``python -m kl_core kl [--q SPEC] [--p SPEC] [--json]``

Every f-divergence of :data:`kl_core.estimation.divergences.DIVERGENCES`,
:math:`D_f(p,q) = \mathbb{E}_q[f(p/q)]` (:func:`kl_core.estimation.exact.f_divergence`); one that
fails to integrate is reported as null with a warning on stderr, the others still print.
"""

from __future__ import annotations

import argparse
import math
import sys

from kl_core._docfill import docfill
from kl_core.cli._common import (
    HANDLER_SECTIONS,
    Command,
    add_pair_arguments,
    dumps,
    fmt,
    one_line,
    parse_pair,
    text_table,
)

__all__ = ["register", "run_kl"]


def _arguments(sp: argparse.ArgumentParser) -> None:
    add_pair_arguments(sp, "normal(0,1)", "normal(0.1,1)")
    sp.add_argument("--json", action="store_true", help="print one JSON object")


@docfill(**HANDLER_SECTIONS)
def run_kl(args: argparse.Namespace) -> int:
    """Handler of ``kl``: print its output, as text or with ``--json`` as JSON.

    %(handler)s
    """
    from kl_core.estimation._quadrature import QuadratureError
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
            print(f"warning: {name}: {one_line(exc)}; reported as null", file=sys.stderr)
    notes = _overflow_notes(q, p, kl_qp, kl_pq, fdiv)
    if args.json:
        print(dumps({"kl_qp": kl_qp, "kl_pq": kl_pq, "f_divergences": fdiv, "notes": notes}))
        return 0
    print(f"q = {q.name}   p = {p.name}")
    print(f"KL[q‖p] = {fmt(kl_qp, '.10g')}")
    print(f"KL[p‖q] = {fmt(kl_pq, '.10g')}")
    print()
    print("f-divergences D_f(p,q) = E_q[f(p/q)]:")
    body = [[name, d.name, d.f_latex, fmt(fdiv[name], ".10g")] for name, d in DIVERGENCES.items()]
    for line in text_table(["key", "divergence", "f(u)", "value"], body, [False, False, False, True]):
        print("  " + line)
    for name, note in notes.items():
        print(f"note ({name}): {note}")
    return 0


def _overflow_notes(q, p, kl_qp: float, kl_pq: float, fdiv: dict[str, float]) -> dict[str, str]:
    """Why each inf is infinite, or that it is finite but past a double (OVERFLOW_NOTE)."""
    from kl_core.estimation._expectation import expect
    from kl_core.estimation._integrands import divergence_integrand

    values = {"kl_qp": kl_qp, "kl_pq": kl_pq, **fdiv}
    out = {}
    for name, v in values.items():
        if math.isinf(v):
            _, note = expect(q, p, divergence_integrand(name))
            if note:
                out[name] = str(note)
    return out


register = Command(
    name="kl",
    help="KL[q‖p], KL[p‖q] and every f-divergence E_q[f(p/q)], exactly",
    description="Exact KL[q‖p], KL[p‖q] and D_f(p,q) = E_q[f(p/q)] for every f of the registry.",
    arguments=_arguments,
    handler=run_kl,
)
