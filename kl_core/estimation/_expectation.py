r"""The engine behind :mod:`kl_core.estimation.exact`: :math:`\mathbb{E}_q[g(\log r)]` for continuous pairs.

.. math:: \mathbb{E}_q[g(\log r)] = \int q(x)\, g(\log p(x) - \log q(x))\, dx,

to about 1e-12 relative, with ``g`` one of the integrands of
:mod:`kl_core.estimation._integrands` (an estimator, a Bregman form, a power of a deviation):

* finiteness is decided before integrating, in closed form, from the
  families' tail exponents (:mod:`kl_core.estimation.tails`), so an infinite KL,
  variance or fourth moment is reported as ``inf`` with the reason, and a
  finite one however slowly its integrand decays is integrated;
* the bulk :math:`|x| \le X = 10^{50}\,R` (:math:`R` the largest location or
  scale in play) is cut half-way between the densities' centres (every
  component of both; centres within 30 scales share a piece), each piece
  integrated in coordinates centred on its anchor (q and p moved with it, so
  that nothing is lost to the rounding of a large x) under
  :math:`x = a + s\sinh(\tan\theta)`, with breakpoints at the centres and,
  for the kinked integrands (:math:`|\log r|`, total variation), at every
  point where :math:`p = q`;
* beyond :math:`X`, an algebraic tail (a Student t in play) is integrated in
  :math:`v = \log|x|` from the tails' closed forms, with no cut-off;
* where :math:`\log r > 30` (or :math:`|\log r|^d` overflows) the integrand is
  summed term by term in log space,
  :math:`P_k(\log r)\,e^{k\log p + (1-k)\log q}`, so that neither :math:`r^k`
  nor :math:`|\log r|^d` overflows while ``q`` underflows.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html; R. Piessens et al., *QUADPACK* (1983).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np

from kl_core.estimation._integrands import Integrand
from kl_core.estimation._quadrature import (
    QuadratureError,
    Tolerance,
    integrate_log_tail,
    integrate_real_line,
)
from kl_core.estimation.distributions import Distribution, Tail, log_ratio
from kl_core.estimation.families.categorical import log_ratio_table
from kl_core.estimation.tails import TailVerdict, tail_verdict
from kl_core.validation import Message

__all__ = ["DEVIATION_NOISE", "EPSREL", "OVERFLOW_NOTE", "RESOLUTION", "expect", "log_integral", "tail_note"]

# Beyond log r = 30 the integrand is summed term by term in log space (q·r^k
# would cancel two huge logs); below −30 only where |log r|^d overflows (the
# expanded polynomials lose digits where log r is close to the mean).
_LOG_SPACE_T = 30.0
# The bulk ends at |x| = _FAR · R: there every tail is in its closed form to 1e-50.
_FAR = 1e50
_CROSSING_GRID = 4097
# The integrators' defaults: 1e-12 relative, and an absolute floor no tolerance goes below.
_DEFAULT = Tolerance()
_EPSREL = EPSREL = _DEFAULT.epsrel
# (k − mean)^n where log r is ~1e10 times its own spread across q's bulk (densities
# a million scales apart): the rounding of log r is noise of that relative size in
# the deviation, and the quadrature may stop at this relative error.
DEVIATION_NOISE = 1e-6
# log r = log p − log q carries a rounding error of about 1e-16·|log q| ≥ 1e-16 in q's
# bulk, so an expectation of a square of log r (a divergence in its Bregman form, a
# variance) cannot be told from 0 below about (1e-14)²: where the quadrature stops on
# noise with ∫|g| under this, the value is 0 (p = q written two ways: a mixture of two
# equal normals against that normal gave 7e-33 ± 2e-33 and raised).
RESOLUTION = 1e-28


def _zero_below(g: Integrand) -> float:
    """:data:`RESOLUTION` for g that is quadratic in log r's rounding near r = 1; its square
    root for a kinked g (|r − 1|, |log r|: the rounding enters to the first power)."""
    return math.sqrt(RESOLUTION) if g.kinked and g.deviation_of is None else RESOLUTION



def _centres(d: Distribution) -> list[tuple[float, float]]:
    """(location, scale) of every component of ``d`` (the family's ``centres``)."""
    return d.centres()


def _shifted(d: Distribution, delta: float) -> Distribution:
    """``d`` moved by −delta: every quantity here is invariant under moving q and p together."""
    return d if delta == 0.0 else d.shifted(delta)


@dataclass(frozen=True)
class _Segment:
    """A piece [lo, hi] of the bulk, integrated in coordinates centred on ``anchor``.

    ``q`` and ``p`` are moved by −anchor, so that x − anchor is exact near the
    densities the piece holds: far from the origin, x itself would carry an
    absolute rounding error of ulp(x), which for a narrow density a million
    scales out is a relative error of 1e-10 in the integrand.
    """

    lo: float
    hi: float
    anchor: float
    scale: float
    q: Distribution
    p: Distribution
    marks: tuple[float, ...]  # local coordinates


@dataclass(frozen=True)
class _Layout:
    """The bulk |x| ≤ far, cut into segments around the densities' centres."""

    segments: tuple[_Segment, ...]
    far: float


# Two centres closer than this many (smaller) scales share one segment.
_MERGE = 30.0


@functools.lru_cache(maxsize=512)
def _layout(q: Distribution, p: Distribution) -> _Layout:
    centres = sorted(set(_centres(q) + _centres(p)))
    marks = [*q.interval(0.999), *p.interval(0.999), *q.interval(0.5), *p.interval(0.5)]
    reach = 0.0
    for loc, scale in centres:
        marks.append(loc)
        reach = max(reach, abs(loc) + scale)
    far = _FAR * reach
    # One segment per cluster of centres, anchored at its narrowest member and
    # using that scale in the map (the sinh map resolves wider features too).
    clusters: list[list[tuple[float, float]]] = []
    for loc, scale in centres:
        if clusters:
            anchor = min(clusters[-1], key=lambda m: m[1])
            if abs(loc - anchor[0]) <= _MERGE * min(anchor[1], scale):
                clusters[-1].append((loc, scale))
                continue
        clusters.append([(loc, scale)])
    anchors = [min(members, key=lambda m: m[1]) for members in clusters]
    # Cut half-way: there x − a and x − b are both large, so each density is
    # evaluated with a relative rounding error of 1e-16 on either side.
    cuts = [-far, *(0.5 * (la + lb) for (la, _), (lb, _) in zip(anchors[:-1], anchors[1:], strict=True)), far]
    segments = []
    for (loc, scale), lo, hi in zip(anchors, cuts[:-1], cuts[1:], strict=True):
        local = tuple(m - loc for m in marks if lo < m < hi)
        segments.append(_Segment(lo, hi, loc, scale, _shifted(q, loc), _shifted(p, loc), local))
    return _Layout(tuple(segments), far)


def _theta_of(x: np.ndarray | float, scale: float) -> np.ndarray:
    return np.arctan(np.arcsinh(np.asarray(x, dtype=float) / scale))


def _x_of(theta: np.ndarray, scale: float) -> np.ndarray:
    return scale * np.sinh(np.tan(theta))


@functools.lru_cache(maxsize=512)
def _crossings(seg: _Segment) -> tuple[float, ...]:
    """Points of a segment (local coordinates) where log r changes sign: kinks of |log r|, |p − q|."""
    q, p = seg.q, seg.p
    extra = [loc + k * scale for loc, scale in _centres(q) + _centres(p) for k in (-3, -1, 1, 3)]
    lo, hi = seg.lo - seg.anchor, seg.hi - seg.anchor
    pts = [m for m in (*seg.marks, *extra) if lo < m < hi]
    ends = _theta_of([lo, hi], seg.scale)
    theta = np.unique(np.concatenate([np.linspace(ends[0], ends[1], _CROSSING_GRID), _theta_of(pts, seg.scale)]))
    t = log_ratio(p, q, _x_of(theta, seg.scale))
    sgn = np.sign(t)
    out = [float(x) for x in _x_of(theta[sgn == 0], seg.scale)]
    i = np.nonzero(sgn[:-1] * sgn[1:] < 0)[0]
    a, b, sa = theta[i], theta[i + 1], sgn[i]
    for _ in range(64):  # bisection in θ: 64 halvings of a grid step reach 1e-20 in θ
        mid = 0.5 * (a + b)
        same = np.sign(log_ratio(p, q, _x_of(mid, seg.scale))) == sa
        a, b = np.where(same, mid, a), np.where(same, b, mid)
    out.extend(float(x) for x in _x_of(0.5 * (a + b), seg.scale))
    return tuple(sorted(out))


class _Overflow(ArithmeticError):
    """The integrand exceeds the largest double somewhere in the bulk."""


OVERFLOW_NOTE = Message(
    "it is finite in exact arithmetic but larger than the largest double (about {limit}), "
    "e.g. {example} for Gaussians μ apart",
    limit="1.8e308",
    example="E_q[r²] = e^{μ²}",
)


def _mixed_log(k: float, lq: np.ndarray, lp: np.ndarray) -> np.ndarray:
    """log(q^{1−k} p^k), with 0·(−inf) = 0 where one density underflows."""
    if k == 0.0:
        return lq
    if k == 1.0:
        return lp
    return k * lp + (1.0 - k) * lq


def _finish(out: np.ndarray) -> np.ndarray:
    if np.isposinf(out).any():
        raise _Overflow
    return np.where(np.isnan(out), 0.0, out)  # 0·inf where q underflows


def _log_density_delta(d: Distribution, x: np.ndarray) -> np.ndarray:
    """log d(x) − log d(0), without the cancellation of two large log-densities (the family's own)."""
    return d.log_density_delta(x)


def _recentred(q: Distribution, p: Distribution, g: Integrand, x, lq, t) -> np.ndarray:
    """q·(b(t) − m)^n with t = t0 + δ split at the segment's anchor (x = 0)."""
    dev = g.deviation_of
    t0 = float(log_ratio(p, q, np.zeros(1))[0])
    coefs, rest = dev.around(t0)
    delta = _log_density_delta(p, x) - _log_density_delta(q, x)
    inner = np.polynomial.polynomial.polyval(delta, coefs)
    if rest.terms:
        inner = inner + rest.weighted(np.sign(t), np.log(np.abs(t)), lambda k: k * t)
    n = dev.power
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        mag = np.exp(lq + n * np.log(np.abs(inner)))
    return np.where(inner == 0.0, 0.0, np.sign(inner) ** n * mag)


def _bulk_integrand(q: Distribution, p: Distribution, g: Integrand):
    # Far below log r = 0 at the anchor, a deviation (k − mean)^n is evaluated
    # around log r(anchor): see Deviation.around.
    recentre = g.deviation_of is not None and float(log_ratio(p, q, np.zeros(1))[0]) < -_LOG_SPACE_T

    def integrand(x: np.ndarray) -> np.ndarray:
        lq = q.logpdf(x)
        lp = p.logpdf(x)
        t = log_ratio(p, q, x)
        up = t > _LOG_SPACE_T
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            out = np.exp(lq) * g.value(np.where(up, 0.0, t))
            if recentre:
                low = t < -_LOG_SPACE_T
                if low.any():
                    out[low] = _recentred(q, p, g, x[low], lq[low], t[low])
                down = np.zeros_like(up)
            else:
                # |log r|^d overflowing (or 0·inf) far below: sum in log space there
                down = ~up & ~np.isfinite(out) & (t < -_LOG_SPACE_T)
            for mask, poly in ((up, g.up), (down, g.down)):
                if mask.any():
                    lqm, lpm, tm = lq[mask], lp[mask], t[mask]
                    out[mask] = poly.weighted(
                        np.sign(tm), np.log(np.abs(tm)), lambda k, a=lqm, b=lpm: _mixed_log(k, a, b)
                    )
        return _finish(out)

    return integrand


# A tail as floats (a, b, c, k): log d = a·x² + b·|x| + c·log|x| + k at |x| = e^v.
_FloatTail = tuple[float, float, float, float]


def _floats(tail: Tail) -> _FloatTail:
    return float(tail.quadratic), float(tail.linear), float(tail.log), tail.const


def _tail_log(tail: _FloatTail, v: np.ndarray) -> np.ndarray:
    """a·x² + b·|x| + c·log|x| + k at |x| = e^v, without overflow (±inf where it is huge)."""
    a, b, c, k = tail
    rest = c * v + k
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if a != 0.0:
            return a * np.exp(2.0 * v) * (1.0 + (b / a) * np.exp(-v) + (rest / a) * np.exp(-2.0 * v))
        if b != 0.0:
            return b * np.exp(v) * (1.0 + (rest / b) * np.exp(-v))
    return rest


def _tail_log_abs(tail: _FloatTail, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sign, log|·|) of the same expansion: log r far out, even where it overflows."""
    a, b, c, k = tail
    rest = c * v + k
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        if a != 0.0:
            bracket = 1.0 + (b / a) * np.exp(-v) + (rest / a) * np.exp(-2.0 * v)
            return np.sign(a) * np.sign(bracket), math.log(abs(a)) + 2.0 * v + np.log(np.abs(bracket))
        if b != 0.0:
            bracket = 1.0 + (rest / b) * np.exp(-v)
            return np.sign(b) * np.sign(bracket), math.log(abs(b)) + v + np.log(np.abs(bracket))
        return np.sign(rest), np.log(np.abs(rest))


@functools.lru_cache(maxsize=2048)
def _far_tails(
    q: Distribution, p: Distribution, side: int, ks: tuple[float, ...]
) -> tuple[_FloatTail, _FloatTail, dict[float, _FloatTail]]:
    """q's tail, log r's tail and the tail of q^{1−k}p^k for each k, as floats.

    Mixed exactly first, so that a coefficient that cancels is exactly 0.
    """
    tq, tp = q.tail(side), p.tail(side)
    return _floats(tq), _floats(tp - tq), {k: _floats(tq.mix(tp, k)) for k in ks}


def _far_integrand(q: Distribution, p: Distribution, g: Integrand, side: int):
    """v ↦ e^v · q(x) g(log r(x)) at x = side·e^v, from the tails' closed forms."""
    ks = tuple(sorted({k for poly in (g.up, g.down) for k, _ in poly.terms}))
    tq, delta, mixed = _far_tails(q, p, side, ks)

    def h(v: np.ndarray) -> np.ndarray:
        lq = _tail_log(tq, v)
        sign_t, logabs_t = _tail_log_abs(delta, v)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            t = sign_t * np.exp(logabs_t)
            up = t > _LOG_SPACE_T
            out = np.exp(lq + v) * g.value(np.where(up | np.isinf(t), 0.0, t))
            down = ~up & (np.isinf(t) | (~np.isfinite(out) & (t < -_LOG_SPACE_T)))
            for mask, poly in ((up, g.up), (down, g.down)):
                if mask.any():
                    vm = v[mask]
                    out[mask] = poly.weighted(
                        sign_t[mask], logabs_t[mask], lambda k, w=vm: _tail_log(mixed[k], w) + w
                    )
        return _finish(out)

    return h


def _far_part(
    q: Distribution, p: Distribution, g: Integrand, side: int, verdict: TailVerdict, far: float,
    floor: float, noise_floor: float,
) -> float:
    """∫ over side·x > far, in v = log|x|, for an algebraic tail (0 for an exponential one)."""
    if verdict.decay != "algebraic":
        return 0.0
    v0 = math.log(far)
    rate = float(-(verdict.exponent + 1))
    kinks = []
    delta = p.tail(side) - q.tail(side)
    if g.kinked and delta.quadratic == 0 and delta.linear == 0 and delta.log != 0:
        kinks.append(-delta.const / float(delta.log))  # log r = Δc·v + Δk changes sign here
    value, _ = integrate_log_tail(
        _far_integrand(q, p, g, side), v0, rate, breakpoints=kinks,
        tol=Tolerance(epsabs=max(floor, _DEFAULT.epsabs), noise_floor=noise_floor, zero_below=_zero_below(g)),
    )  # fmt: skip
    return value


def _verdicts(q: Distribution, p: Distribution, g: Integrand) -> dict[int, TailVerdict]:
    return _verdicts_of(q, p, g.up.top(), g.down.bottom())


@functools.lru_cache(maxsize=2048)
def _verdicts_of(
    q: Distribution, p: Distribution, top: tuple[float, int] | None, bottom: tuple[float, int] | None
) -> dict[int, TailVerdict]:
    return {side: tail_verdict(q.tail(side), p.tail(side), top, bottom) for side in (1, -1)}


def _divergence_reason(verdicts: dict[int, TailVerdict]) -> str:
    """Empty if both sides converge, else the sentence the notes carry."""
    for side, where in ((1, "+∞"), (-1, "−∞")):
        v = verdicts[side]
        if not v.finite:
            return Message("the integral diverges as x → {where}: {reason}", where=where, reason=v.reason)
    return ""


def tail_note(q: Distribution, p: Distribution, g: Integrand) -> str:
    """Empty if E_q|g| is finite in both tails, else why it diverges."""
    return "" if q.discrete else _divergence_reason(_verdicts(q, p, g))


def _segment_integral(g: Integrand, seg: _Segment, tol: Tolerance) -> float:
    marks = [*seg.marks, *(_crossings(seg) if g.kinked else ())]
    value, _ = integrate_real_line(
        _bulk_integrand(seg.q, seg.p, g), 0.0, seg.scale, breakpoints=marks,
        bounds=(seg.lo - seg.anchor, seg.hi - seg.anchor), tol=tol,
    )  # fmt: skip
    return value


def _bulk(
    g: Integrand, segments: tuple[_Segment, ...], noise_floor: float, abs_floor: float
) -> float:
    """The bulk: every segment to 1e-12 of the whole (not of itself: a piece far from
    the mass may be 1e-200 of it, and its own relative error does not matter)."""
    tol = Tolerance(epsabs=max(abs_floor, _DEFAULT.epsabs), noise_floor=noise_floor, zero_below=_zero_below(g))
    if len(segments) == 1:
        return _segment_integral(g, segments[0], tol)
    rough_tol = replace(tol, epsrel=1e-4, noise_floor=1e-2)
    rough = sum(abs(_segment_integral(g, seg, rough_tol)) for seg in segments)
    tol = replace(tol, epsabs=max(_EPSREL * 0.1 * rough, tol.epsabs))
    return sum(_segment_integral(g, seg, tol) for seg in segments)


def _categorical_sum(lq: np.ndarray, lp: np.ndarray, g: Integrand, t: np.ndarray | None = None) -> float:
    r""":math:`\sum_k q_k\, g(t_k)`, :math:`t_k = \log p_k - \log q_k`, from log-probabilities.

    Where :math:`t_k > 30` the term is summed in log space,
    :math:`P_j(t_k)\,e^{j \log p_k + (1-j)\log q_k}`: a :math:`q_k` that underflows to 0
    (a logit ~745 below the others) still carries :math:`q_k r_k = p_k`, which
    ``q_k · g(t_k)`` would lose as 0·inf.  Every categorical sum is finite, so an
    ``inf`` is an overflow of a double.
    """
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        t = lp - lq if t is None else t  # t: from the logits (log_ratio_table), where given
        up = t > _LOG_SPACE_T
        out = np.exp(lq) * g.value(np.where(up, 0.0, t))
        out = np.where(np.exp(lq) > 0.0, out, 0.0)  # 0·g where q_k = 0 and t_k is moderate
        if up.any():
            lqm, lpm, tm = lq[up], lp[up], t[up]
            out[up] = g.up.weighted(
                np.sign(tm), np.log(np.abs(tm)), lambda k, a=lqm, b=lpm: _mixed_log(k, a, b)
            )
    if np.isnan(out).any():
        return math.inf
    return math.fsum(out.tolist())


def expect(
    q: Distribution, p: Distribution, g: Integrand, noise_floor: float = _DEFAULT.noise_floor,
    abs_floor: float = 0.0,
) -> tuple[float, str]:
    """E_q[g(log r)] and, if it is infinite, the reason (one clause, for a note).

    ``noise_floor``: where the integrand's own rounding noise stops the
    quadrature, accept an error estimate up to this fraction of the result.
    ``abs_floor``: an absolute error that is good enough (for a signed
    integrand whose integral is small).  A finite value too large for a double
    is ``inf`` with :data:`OVERFLOW_NOTE`.
    """
    if q.discrete:
        total = _categorical_sum(q.log_probs, p.log_probs, g, log_ratio_table(q, p))
        return (total, "") if math.isfinite(total) else (math.inf, OVERFLOW_NOTE)
    verdicts = _verdicts(q, p, g)
    note = _divergence_reason(verdicts)
    if note:
        return math.inf, note
    lay = _layout(q, p)
    try:
        value = _bulk(g, lay.segments, noise_floor, abs_floor)
        floor = max(_EPSREL * 0.1 * abs(value), abs_floor)
        value += sum(
            _far_part(q, p, g, side, verdicts[side], lay.far, floor, noise_floor) for side in (1, -1)
        )
    except (_Overflow, QuadratureError) as exc:
        if isinstance(exc, QuadratureError) and math.isfinite(exc.value):
            raise
        return math.inf, OVERFLOW_NOTE
    if not math.isfinite(value):
        return math.inf, OVERFLOW_NOTE
    return value, ""


def log_integral(
    log_f: Callable[[np.ndarray], np.ndarray], q: Distribution, p: Distribution, marks: Iterable[float] = (),
) -> float:
    r""":math:`\log\int e^{h(x)}\,dx` for a log-integrand ``log_f`` = :math:`h` of a continuous pair, in log space.

    .. math:: \log\int e^{h(x)}\,dx = M + \log\int e^{h(x) - M}\,dx, \qquad M = \max_x h(x),

    finite where the integral is finite but past the largest double
    (:math:`\mathbb{E}_q[r^2] = e^{\mu^2}`, :math:`\mu = 30`).  The peak is searched from every
    centre of ``q`` and ``p`` and every reflection :math:`2a - b` of a centre :math:`b` of ``q``
    in one :math:`a` of ``p`` (where :math:`p^2/q` peaks for Gaussians of one width), refined
    by Brent's method; :math:`e^{h - M}` is then integrated over the real line around it (scale:
    the smallest of the densities' scales), with breakpoints at the peak and at ``marks``.
    :func:`kl_core.estimation.control_variates.log_second_moment` (:math:`h = 2\log p - \log q`)
    and :func:`kl_core.estimation.exact.log_estimator_variance`
    (:math:`h = \log q + 2\log|k - \mu|`) both use it.

    ``log_f`` is vectorised and may return ``-inf`` (where the integrand is 0).  Returns ``-inf``
    where it is ``-inf`` at every start; a :class:`QuadratureError` where the quadrature fails.
    """
    from scipy.optimize import minimize_scalar  # only here: kl_core imports scipy lazily

    def at(x: float) -> float:
        return float(log_f(np.array([x]))[0])

    cq, cp = q.centres(), p.centres()
    scale = min(s for _loc, s in cq + cp)
    starts = [loc for loc, _s in cq + cp] + [2.0 * a - b for a, _s in cp for b, _t in cq]
    best = max(starts, key=at)
    try:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
            found = minimize_scalar(lambda x: -at(x), bracket=(best - scale, best + scale))
    except (RuntimeError, ValueError):  # no bracket found (a flat or -inf stretch): keep the best start
        found = None
    if found is not None and found.success and -found.fun >= at(best):
        best = float(found.x)
    top = at(best)
    if top == -math.inf:
        return -math.inf

    def scaled(x: np.ndarray) -> np.ndarray:
        with np.errstate(under="ignore"):
            return np.exp(log_f(x) - top)

    value, _err = integrate_real_line(scaled, best, scale, breakpoints=(best, *marks))
    return top + math.log(value)
