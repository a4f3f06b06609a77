r"""Vectorised adaptive Gauss–Kronrod quadrature over the real line and over far tails.

``scipy.integrate.quad`` calls its integrand once per point from Python; the
exact tables need dozens of integrals per page view, so this module evaluates
all nodes of all sub-intervals in one numpy call per refinement round.

The line is mapped to :math:`\theta \in (-\theta_{max}, \theta_{max})` by
:math:`x = c + s\sinh(\tan\theta)`.  The double-exponential growth of
:math:`\sinh\circ\tan` turns an algebraic tail :math:`|x|^{-\alpha}`,
:math:`\alpha > 1` (Student t integrands), into one that decays like
:math:`e^{-(\alpha-1)\tan\theta}`, which Gauss–Kronrod resolves; the plain
:math:`\tan` map leaves :math:`(\pi/2-\theta)^{\alpha-2}`, an end-point
singularity for :math:`\alpha < 2` on which bisection never converges.
:math:`\theta_{max}` stops the map at :math:`|x - c| = 10^{120} s`: a tail
decaying like :math:`|x|^{-1.1}` loses a fraction of order 1e-11 beyond it, and
the standardised :math:`x^2` never overflows.  Sub-intervals whose local error
is small relative to their width are accepted; the rest are halved.

:func:`integrate_real_line` can stop at finite bounds instead; the far tails
beyond them are then integrated by :func:`integrate_log_tail` in
:math:`v = \log|x|`, where an algebraic tail :math:`|x|^{-1-\varepsilon}(\log|x|)^j`
becomes :math:`e^{-\varepsilon v} v^j` and is mapped by
:math:`v = v_0 + \tan(\theta)/\varepsilon`: no cut-off, whatever
:math:`\varepsilon > 0`, and no :math:`x` that overflows a double.

The reported error is the summed :math:`|K_{15} - G_7|` (an overestimate for
smooth integrands, so sub-intervals must not straddle a kink: pass kinks as
breakpoints), and never less than the rounding floor
:math:`50\,\epsilon \int |f|` of QUADPACK.  When the integrand's own rounding
noise stops the refinement short of ``epsrel``, the result is returned if its
error estimate is below ``noise_floor`` (1e-8) relative, and
:class:`QuadratureError` is raised otherwise.  These stopping rules are one
:class:`Tolerance`; its defaults are the exact tables' 1e-12 relative.

Reference: R. Piessens et al., *QUADPACK* (1983), the G7–K15 pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["QuadratureError", "Tolerance", "integrate_log_tail", "integrate_real_line"]


@dataclass(frozen=True)
class Tolerance:
    r"""When the adaptive quadrature stops, and when it gives up.

    Attributes
    ----------
    epsrel, epsabs : float
        Stop when the summed error estimate is below ``max(epsabs, epsrel·|I|)``.
    noise_floor : float
        Where the integrand's rounding noise stops the refinement, accept an
        error estimate up to this fraction of the result.
    zero_below : float
        Where the refinement stops on noise and :math:`\int|g|` is at most this,
        the integral is 0 to the precision of its integrand (returned as 0, not
        raised); 0 turns this off.
    max_intervals : int
        Give up (raise :class:`QuadratureError`) beyond this many sub-intervals.
    """

    epsrel: float = 1e-12
    epsabs: float = 1e-300
    noise_floor: float = 1e-8
    zero_below: float = 0.0
    max_intervals: int = 40_000

# Kronrod 15-point nodes (>= 0) and weights; Gauss 7-point weights on the odd nodes.
_XK = np.array(
    [
        0.991455371120812639206854697526329,
        0.949107912342758524526189684047851,
        0.864864423359769072789712788640926,
        0.741531185599394439863864773280788,
        0.586087235467691130294144845693013,
        0.405845151377397166906606412076961,
        0.207784955007898467600689403773245,
        0.000000000000000000000000000000000,
    ]
)
_WK = np.array(
    [
        0.022935322010529224963732008058970,
        0.063092092629978553290700663189204,
        0.104790010322250183839876322541518,
        0.140653259715525918745189590510238,
        0.169004726639267902826583426598550,
        0.190350578064785409913256402421014,
        0.204432940075298892414161999234649,
        0.209482141084727828012999174891714,
    ]
)
_WG = np.array(
    [
        0.129484966168869693270611432679082,
        0.279705391489276667901467771423780,
        0.381830050505118944950369775488975,
        0.417959183673469387755102040816327,
    ]
)
_NODES = np.concatenate([-_XK[:-1], _XK[::-1]])  # 15 nodes in increasing order
_WEIGHTS_K = np.concatenate([_WK[:-1], _WK[::-1]])
_WEIGHTS_G = np.zeros(15)
_WEIGHTS_G[1::2] = np.concatenate([_WG[:-1], _WG[::-1]])
# x = c + s·sinh(tan θ) reaches |x − c| = 1e120·s here.
_THETA_MAX = math.atan(math.asinh(1e120))


class QuadratureError(RuntimeError):
    """The adaptive rule did not reach its tolerance; carries the partial result."""

    def __init__(self, message: str, value: float, error: float) -> None:
        super().__init__(message)
        self.value = value
        self.error = error


_EPS = float(np.finfo(float).eps)


def _adaptive(
    g: Callable[[np.ndarray], np.ndarray], edges: np.ndarray, tol: Tolerance
) -> tuple[float, float]:
    """∫ g(θ) dθ over [edges[0], edges[-1]], starting from the given sub-intervals.

    ``g`` includes the Jacobian of the map; it is called once per round on
    the 15 nodes of every open sub-interval.
    """
    lo, hi = edges[:-1], edges[1:]
    span = float(edges[-1] - edges[0])
    done_val = 0.0
    done_err = 0.0
    done_abs = 0.0
    while True:
        mid = 0.5 * (lo + hi)
        half = 0.5 * (hi - lo)
        theta = mid[:, None] + half[:, None] * _NODES[None, :]
        y = g(theta.ravel()).reshape(theta.shape)
        kron = (y @ _WEIGHTS_K) * half
        gauss = (y @ _WEIGHTS_G) * half
        absk = (np.abs(y) @ _WEIGHTS_K) * half
        err = np.abs(kron - gauss)
        total = done_val + kron.sum()
        total_err = done_err + err.sum()
        total_abs = done_abs + absk.sum()
        target = max(tol.epsabs, tol.epsrel * abs(total))
        if not math.isfinite(total):
            raise QuadratureError("integrand produced a non-finite value", total, total_err)
        if total_err <= target:
            return float(total), float(max(total_err, 50.0 * _EPS * total_abs))
        accept = err <= 0.5 * target * (hi - lo) / span
        done_val += kron[accept].sum()
        done_err += err[accept].sum()
        done_abs += absk[accept].sum()
        lo, hi = lo[~accept], hi[~accept]
        if 2 * lo.size + 1 > tol.max_intervals or (hi - lo).min() < 1e-15:
            # The integrand's own rounding noise reached before the tolerance
            # (e.g. (log r − mean)² where log r ≈ 3e9 and the deviation ≈ 80):
            # return what we have if it is still accurate to noise_floor, else fail.
            if total_err <= max(tol.epsabs, tol.noise_floor * abs(total)):
                return float(total), float(max(total_err, 50.0 * _EPS * total_abs))
            if total_abs <= tol.zero_below:  # nothing but rounding noise to integrate
                return 0.0, float(total_abs)
            raise QuadratureError(
                f"quadrature did not converge (error {total_err:.3g} on {total:.6g}): the "
                "integrand is too badly conditioned in double precision",
                float(total),
                float(total_err),
            )
        mid = 0.5 * (lo + hi)
        lo, hi = np.concatenate([lo, mid]), np.concatenate([mid, hi])


def _theta_of(x: float, center: float, scale: float) -> float:
    return math.atan(math.asinh((x - center) / scale))


def integrate_real_line(
    f: Callable[[np.ndarray], np.ndarray],
    center: float,
    scale: float,
    breakpoints: Iterable[float] = (),
    bounds: tuple[float, float] = (-math.inf, math.inf),
    tol: Tolerance = Tolerance(),
) -> tuple[float, float]:
    r"""Integrate ``f`` over :math:`(-\infty, \infty)`, or over finite ``bounds``.

    Parameters
    ----------
    f : callable
        Vectorised integrand; must return finite values.
    center, scale : float
        The map :math:`x = c + s\sinh(\tan\theta)`; choose them to cover the bulk of the mass.
    breakpoints : iterable of float
        Points where ``f`` has a kink or a sharp peak; sub-intervals start there.
    bounds : (float, float)
        Integrate over ``[lo, hi]``; an infinite bound stops at
        :math:`|x - c| = 10^{120} s` (see the module notes).
    tol : Tolerance
        When to stop; the default asks for 1e-12 relative.

    Returns
    -------
    value, error : float
        The integral and the summed Kronrod–Gauss error estimate.
    """
    lo_x, hi_x = bounds
    t_lo = -_THETA_MAX if lo_x == -math.inf else _theta_of(lo_x, center, scale)
    t_hi = _THETA_MAX if hi_x == math.inf else _theta_of(hi_x, center, scale)
    if not t_lo < t_hi:
        raise ValueError(f"bounds must be increasing, got {bounds!r}")
    edges = set(np.linspace(t_lo, t_hi, 33).tolist())
    for b in breakpoints:
        if math.isfinite(b):
            theta_b = _theta_of(b, center, scale)
            if t_lo < theta_b < t_hi:
                edges.add(theta_b)

    def g(theta: np.ndarray) -> np.ndarray:
        u = np.tan(theta)
        x = center + scale * np.sinh(u)
        jac = scale * np.cosh(u) / np.cos(theta) ** 2
        return f(x) * jac

    return _adaptive(g, np.array(sorted(edges)), tol)


def integrate_log_tail(
    h: Callable[[np.ndarray], np.ndarray],
    v0: float,
    rate: float,
    breakpoints: Iterable[float] = (),
    tol: Tolerance = Tolerance(),
) -> tuple[float, float]:
    r"""Integrate ``h`` over :math:`[v_0, \infty)`, for ``h`` decaying like :math:`e^{-\text{rate}\cdot v}`.

    The map :math:`v = v_0 + \tan(\theta)/\text{rate}`, :math:`\theta \in [0, \pi/2)`,
    turns :math:`e^{-\varepsilon v} v^j` into a function that vanishes
    smoothly at :math:`\theta = \pi/2` for every :math:`\varepsilon > 0`.

    Parameters
    ----------
    h : callable
        Vectorised integrand in :math:`v`; must return finite values for every
        :math:`v \ge v_0` (it is evaluated up to :math:`v \approx 10^{16}/\text{rate}`).
    v0 : float
        Lower limit.
    rate : float
        The exponential decay rate of ``h``, > 0.
    breakpoints : iterable of float
        Kinks of ``h`` beyond ``v0``.
    tol : Tolerance
        As for :func:`integrate_real_line`.

    Returns
    -------
    value, error : float
        As for :func:`integrate_real_line`.
    """
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError(f"rate must be finite and > 0, got {rate!r}")
    top = 0.5 * math.pi
    edges = set(np.linspace(0.0, top, 17).tolist())
    for b in breakpoints:
        if math.isfinite(b) and b > v0:
            edges.add(math.atan((b - v0) * rate))

    def g(theta: np.ndarray) -> np.ndarray:
        w = np.tan(theta)
        return h(v0 + w / rate) / (rate * np.cos(theta) ** 2)

    return _adaptive(g, np.array(sorted(edges)), tol)
