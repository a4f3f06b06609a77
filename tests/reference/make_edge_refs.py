"""Reference values for the edge cases of issue 11, computed with mpmath.

Run from the repository root (takes a few minutes):

    uv run python tests/reference/make_edge_refs.py

It writes ``tests/reference/edge_refs.json``: for each case the pair (spec
strings), the quantity, the value, and the number of significant digits on
which two independent runs agree (at 30 and at 45 decimal digits, with
different splittings of the line).  ``tests/estimation/test_exact.py`` reads the file, so
the suite never recomputes these integrals.

Nothing here uses kl_core's numerics: the log-densities are written out in
mpmath (``parse`` only reads the spec strings), the integrals are mpmath's
tanh-sinh quadrature on pieces of the line with the tails mapped by
x = a ± (e^v − 1), the points where p = q are found with ``mpmath.findroot``,
and total variation follows from the CDFs at those points.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import mpmath as mp

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kl_core.estimation.distributions import (  # noqa: E402  (spec parsing only)
    Gaussian,
    GaussianMixture,
    Laplace,
    StudentT,
    parse,
)

OUT = Path(__file__).with_name("edge_refs.json")

# (q, p, quantity): quantity is kl_qp, kl_pq, f:<name> (D_f(p, q) = E_q f(r)),
# or mean:/var:/m4:<estimator> (E_q k, Var_q k, E_q (k − E k)⁴).
CASES: list[tuple[str, str, str]] = [
    # 1. Student t with small df
    ("t(0.2,0,1)", "t(1,0,1)", "kl_qp"),
    ("t(0.3,0,1)", "t(1,0,1)", "var:k1"),
    ("t(0.3,0,1)", "t(1,0,1)", "var:k3"),
    ("t(0.3,0,1)", "t(1,0,1)", "kl_pq"),
    ("t(0.3,0,1)", "normal(0,1)", "kl_pq"),
    ("t(0.3,0,1)", "normal(0,1)", "f:hellinger"),
    ("t(0.3,0,1)", "normal(0,1)", "f:tv"),
    ("t(0.3,0,1)", "laplace(0,1)", "f:js"),
    ("t(0.3,0,1)", "t(0.3,2,1)", "kl_qp"),
    ("t(0.3,0,1)", "t(0.3,2,1)", "var:k3"),
    ("t(0.3,0,1)", "t(0.3,0,3)", "kl_qp"),
    ("t(0.3,0,1)", "t(0.3,0,3)", "var:k1"),
    ("t(0.1,0,1)", "t(0.2,0,1)", "kl_qp"),
    ("t(0.1,0,1)", "t(0.2,0,1)", "var:k1"),
    ("t(0.1,0,1)", "t(0.1,0,2)", "f:tv"),
    ("t(0.5,0,1)", "t(0.5,0,5)", "kl_qp"),
    ("t(0.5,0,1)", "t(0.5,0,5)", "var:k3"),
    ("t(0.5,0,1)", "t(0.5,0,5)", "var:k3_pq"),
    ("normal(0,1)", "t(0.3,0,1)", "kl_qp"),
    # 2. finite variances that the old slope test called infinite (0 < 2ν_p − ν_q ≲ 0.13)
    ("t(3,0,1)", "t(1.55,0,1)", "var:k3_pq"),
    ("t(3.9,0,1)", "t(2,0,1)", "var:k3_pq"),
    ("t(5,0,1)", "t(2.55,0,1)", "var:k3_pq"),
    ("t(2,0,1)", "t(1.05,0,1)", "var:k3_pq"),
    ("t(4,0,1)", "t(2.05,0,1)", "var:k3_pq"),
    # a slow algebraic tail, |x|^-1.05: needs the far field
    ("t(2.05,0,1)", "normal(0,1)", "kl_qp"),
    ("normal(0,1)", "t(2.1,0,1)", "kl_pq"),
    # 3. total variation and |log r| where p = q
    ("normal(0,20)", "laplace(0,1)", "f:tv"),
    ("normal(8,2)", "t(10,3,1.3)", "var:abs"),
    ("normal(8,2)", "t(10,3,1.3)", "mean:abs"),
    ("laplace(0,1)", "normal(0.5,1.5)", "f:tv"),
    ("mixture(0.5:-1:1,0.5:1:1)", "normal(0,1.5)", "var:abs"),
    ("t(4,0,1)", "laplace(1,2)", "mean:abs"),
    # 4. fourth moments
    ("normal(0,1)", "normal(1,1)", "m4:k3"),
    ("normal(0,1)", "normal(1,1)", "m4:k3_pq"),
    ("normal(0,1)", "normal(0,1.1)", "m4:k3"),
    ("laplace(0,1)", "normal(0,1)", "m4:k1"),
    ("t(10,0,1)", "normal(0,1)", "m4:k3_pq"),
    ("t(3,0,1)", "t(2.5,0,1)", "m4:k3"),
    # far apart and narrow: pieces in their own coordinates
    ("laplace(-1000,0.1)", "t(0.5,0,0.5)", "kl_qp"),
    ("normal(0,100)", "normal(3,0.001)", "f:hellinger"),
]


def mp_logpdf(spec: str):
    d = parse(spec)
    if isinstance(d, Gaussian):
        mu, s = mp.mpf(d.mu), mp.mpf(d.sigma)
        return lambda x: -((x - mu) / s) ** 2 / 2 - mp.log(s) - mp.log(2 * mp.pi) / 2
    if isinstance(d, Laplace):
        loc, b = mp.mpf(d.loc), mp.mpf(d.scale)
        return lambda x: -abs(x - loc) / b - mp.log(2 * b)
    if isinstance(d, StudentT):
        nu, loc, s = mp.mpf(d.df), mp.mpf(d.loc), mp.mpf(d.scale)
        c = mp.loggamma((nu + 1) / 2) - mp.loggamma(nu / 2) - mp.log(nu * mp.pi) / 2 - mp.log(s)
        return lambda x: c - (nu + 1) / 2 * mp.log(1 + ((x - loc) / s) ** 2 / nu)
    if isinstance(d, GaussianMixture):
        comps = [(mp.log(w), mp.mpf(m), mp.mpf(s)) for w, m, s in zip(d.weights, d.means, d.sigmas, strict=True)]

        def lp(x):
            return mp.log(mp.fsum(mp.exp(lw - ((x - m) / s) ** 2 / 2) / s for lw, m, s in comps)) - mp.log(
                2 * mp.pi
            ) / 2

        return lp
    raise TypeError(spec)


def mp_cdf(spec: str):
    d = parse(spec)
    if isinstance(d, Gaussian):
        return lambda x: mp.ncdf(x, d.mu, d.sigma)
    if isinstance(d, Laplace):
        loc, b = mp.mpf(d.loc), mp.mpf(d.scale)
        return lambda x: mp.exp((x - loc) / b) / 2 if x < loc else 1 - mp.exp(-(x - loc) / b) / 2
    if isinstance(d, StudentT):
        nu, loc, s = mp.mpf(d.df), mp.mpf(d.loc), mp.mpf(d.scale)

        def cdf(x):
            z = (x - loc) / s
            tail = mp.betainc(nu / 2, mp.mpf(1) / 2, 0, nu / (nu + z * z), regularized=True) / 2
            return tail if z < 0 else 1 - tail

        return cdf
    raise TypeError(spec)


def centres(spec: str) -> list[tuple[float, float]]:
    d = parse(spec)
    if isinstance(d, Gaussian):
        return [(d.mu, d.sigma)]
    if isinstance(d, (Laplace, StudentT)):
        return [(d.loc, d.scale)]
    return list(zip(d.means, d.sigmas, strict=True))


def crossings(lq, lp, pts: list[float]) -> list:
    """Roots of log p − log q: sign changes on a fine grid, refined by findroot."""
    lo, hi = min(pts), max(pts)
    span = hi - lo
    grid = sorted(
        {*(lo - 50 * span + 100 * span * i / 20000 for i in range(20001)), *pts}
        | {math.copysign(10.0**e, s) for e in range(-3, 40) for s in (1, -1)}
    )
    vals = [lp(mp.mpf(x)) - lq(mp.mpf(x)) for x in grid]
    roots = []
    for a, b, fa, fb in zip(grid[:-1], grid[1:], vals[:-1], vals[1:], strict=True):
        if fa == 0:
            roots.append(mp.mpf(a))
        elif fa * fb < 0:
            roots.append(mp.findroot(lambda x: lp(x) - lq(x), (mp.mpf(a), mp.mpf(b)), solver="anderson"))
    return roots


# The tails are integrated in v up to V_MAX, |x| ≈ e^{10^4}: the slowest tail
# here decays like e^{−0.05 v}, so the rest is below e^{−500}.
V_MAX = 10_000


def integrate(f, pts: list) -> mp.mpf:
    """∫ f over ℝ: pieces between the sorted points, tails via x = a ± (e^v − 1)."""
    pts = sorted(set(pts))
    total = mp.quad(f, pts) if len(pts) > 1 else mp.mpf(0)
    lo, hi = pts[0], pts[-1]
    marks = [0, 1, 10, 100, 1000, V_MAX]
    total += mp.quad(lambda v: f(hi + mp.expm1(v)) * mp.exp(v), marks)
    total += mp.quad(lambda v: f(lo - mp.expm1(v)) * mp.exp(v), marks)
    return total


H = {
    "kl_qp": lambda t: -t,
    "kl_pq": lambda t: t * mp.exp(t),
    "f:tv": lambda t: abs(mp.expm1(t)) / 2,
    "f:hellinger": lambda t: mp.expm1(t / 2) ** 2,
    "f:js": lambda t: (t * mp.exp(t) - (1 + mp.exp(t)) * (mp.log1p(mp.exp(t)) - mp.log(2))) / 2,
    "f:pearson": lambda t: mp.expm1(t) ** 2,
}
K = {
    "k1": lambda t: -t,
    "k2": lambda t: t * t / 2,
    "k3": lambda t: mp.expm1(t) - t,
    "k3_pq": lambda t: t * mp.exp(t) - mp.expm1(t),
    "abs": lambda t: abs(t),
}


def reference(q: str, p: str, quantity: str, split: int) -> mp.mpf:
    lq, lp = mp_logpdf(q), mp_logpdf(p)
    cs = centres(q) + centres(p)
    pts = sorted({m + k * s for m, s in cs for k in range(-split, split + 1)})
    kinked = quantity in ("f:tv",) or quantity.endswith(":abs")
    roots = crossings(lq, lp, pts) if kinked else []
    if quantity == "f:tv" and all(isinstance(parse(s), (Gaussian, Laplace, StudentT)) for s in (q, p)):
        # TV = Σ over the intervals where p > q of P(I) − Q(I), from the CDFs
        fq, fp = mp_cdf(q), mp_cdf(p)
        edges = [-mp.inf, *sorted(roots), mp.inf]
        tv = mp.mpf(0)
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            mid = (a + b) / 2 if mp.isfinite(a) and mp.isfinite(b) else (b - 1 if mp.isfinite(b) else a + 1)
            if lp(mid) > lq(mid):
                pb = fp(b) if mp.isfinite(b) else 1
                pa = fp(a) if mp.isfinite(a) else 0
                qb = fq(b) if mp.isfinite(b) else 1
                qa = fq(a) if mp.isfinite(a) else 0
                tv += (pb - pa) - (qb - qa)
        return tv
    pts = [mp.mpf(x) for x in pts] + roots

    def expect(h):
        def f(x):
            a, b = lq(x), lp(x)
            t = b - a
            # |h(t)| ≤ (1 + |t|)^8 e^{4 max(t, 0)} for every h here: skip what is below e^-3000
            if a + 4 * max(t, 0) + 8 * mp.log1p(abs(t)) < -3000:
                return mp.mpf(0)
            if t > 0:  # q·h(t) = p·(h(t) e^{−t}): log q + log r would cancel two huge numbers
                return mp.exp(b) * (h(t) * mp.exp(-t))
            return mp.exp(a) * h(t)

        return integrate(f, pts)

    kind, _, key = quantity.partition(":")
    if quantity in H:
        return expect(H[quantity])
    mean = expect(K[key])
    if kind == "mean":
        return mean
    power = 2 if kind == "var" else 4
    return expect(lambda t: (K[key](t) - mean) ** power)


def main() -> None:
    out = []
    for q, p, quantity in CASES:
        with mp.workdps(30):
            a = reference(q, p, quantity, split=2)
        with mp.workdps(45):
            b = reference(q, p, quantity, split=3)
        agree = int(-mp.log10(abs(a - b) / abs(b))) if a != b else 30
        print(f"{q:>26} {p:>22} {quantity:>12}  {mp.nstr(b, 17):>24}  digits {agree}", flush=True)
        out.append({"q": q, "p": p, "quantity": quantity, "value": float(b), "digits": agree})
    OUT.write_text(json.dumps({"mpmath": mp.__version__, "dps": [30, 45], "cases": out}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
