r"""Is :math:`\mathbb{E}_q[g(\log r)]` finite?  Decided from the families' tail exponents.

Every continuous family of the registry (:mod:`kl_core.estimation.families`)
gives, through its ``tail`` method, a log-density of the form
:math:`a x^2 + b|x| + c\log|x| + k + o(1)` far out on each side
(:class:`kl_core.estimation.families.Tail`, which says what the form can and cannot
describe): Gaussians and mixtures :math:`a < 0`, Laplace and logistic
:math:`a = 0, b < 0`, Student t :math:`a = b = 0, c = -(\nu+1)`.  The rules
below read only those coefficients, never the family.  The integrands are :math:`q\,g(t)`, :math:`t = \log r`, with
:math:`g(t) \approx P_k(t)\,e^{kt}` as :math:`t \to \pm\infty` for a polynomial
:math:`P_k` of degree :math:`d` (see ``kl_core.estimation._integrands``).  On one side,
with :math:`\Delta = \text{tail}(p) - \text{tail}(q)`:

1. **How log r grows.**  The first non-zero coefficient of
   :math:`\Delta = (\Delta a, \Delta b, \Delta c)` gives the direction of
   :math:`t` (its sign) and its growth :math:`|t| \sim |x|^{g}` with
   :math:`g = 2, 1`, or :math:`|t| \sim \log|x|` (:math:`g = 0`).  All zero:
   :math:`t` tends to a constant and the integrand is :math:`O(q)`: **finite**.
2. **Which term leads.**  As :math:`t \to +\infty` the term with the largest
   :math:`k`; as :math:`t \to -\infty` the one with the smallest.  Its weight
   :math:`q\,r^k = q^{1-k} p^k` has the tail :math:`E = (1-k)\,\text{tail}(q) + k\,\text{tail}(p)`.
3. **Decide.**

   =============================================  =====================================
   the tail E of the leading term                  the integral on this side
   =============================================  =====================================
   :math:`E_a < 0`, or :math:`E_a = 0,\ E_b < 0`    finite (exponential decay)
   :math:`E_a > 0`, or :math:`E_a = 0,\ E_b > 0`    **infinite** (exponential growth)
   :math:`E_a = E_b = 0,\ g \ge 1`                 :math:`|x|^{E_c + d g}`: finite iff :math:`E_c + dg < -1`
   :math:`E_a = E_b = 0,\ g = 0`                   :math:`|x|^{E_c}\log^d|x|`: finite iff :math:`E_c < -1`
   =============================================  =====================================

The comparisons are exact (the coefficients are rationals of the float
parameters), so boundary cases come out right: :math:`\mathbb{E}_q[r^2]` is
infinite at :math:`\sigma_p = \sqrt2\,\sigma_q` exactly (:math:`E_a = 0`, the
integrand tends to a constant), and :math:`\mathrm{Var}(k_3^{pq})` for
:math:`q = t_{\nu_q}`, :math:`p = t_{\nu_p}` is finite iff :math:`\nu_q < 2\nu_p`
(:math:`|x|^{\nu_q - 2\nu_p - 1}\log^2|x|`).

Source: the tail forms of the densities (e.g. N. L. Johnson, S. Kotz and
N. Balakrishnan, *Continuous Univariate Distributions*, 1994–95); the
estimators after J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from kl_core._docfill import docfill
from kl_core.estimation._docstrings import SECTIONS
from kl_core.estimation.distributions import Tail
from kl_core.validation import Message

__all__ = ["TailVerdict", "tail_verdict"]


@dataclass(frozen=True)
class TailVerdict:
    r"""Whether one side of :math:`\int q\,g(\log r)` converges, and how its integrand decays.

    Attributes
    ----------
    finite : bool
        True if the integral over this side converges.
    reason : str
        Empty, or why it diverges (one clause, no side): a
        :class:`~kl_core.validation.Message`, so the app can translate it.
    decay : str
        ``"exponential"``, ``"algebraic"`` (a power of :math:`|x|`) or
        ``"growth"`` (the infinite exponential case).
    exponent : fractions.Fraction or None
        For algebraic decay, the integrand is :math:`|x|^{\text{exponent}}\log^{j}|x|`.
    log_power : int
        :math:`j`.
    log_r_sign : int
        +1 if :math:`\log r \to +\infty` on this side, −1 if :math:`\to -\infty`, 0 if bounded.
    """

    finite: bool
    reason: str
    decay: str
    exponent: Fraction | None = None
    log_power: int = 0
    log_r_sign: int = 0


# The reasons are Messages (kl_core.validation): English here and on the command line,
# translated where the app shows them (i18n.message).
_Q_TAIL = Message("q's tail is too heavy for the powers of log r in the integrand")
_P_TAIL = Message("p's tail is too heavy for the powers of log r in the integrand (weighted by r = p/q)")


def _r_power(k: float) -> Message:
    return Message(
        "the factor r^{k} = (p/q)^{k} grows faster than q decays (p's tail is too heavy relative to q's)",
        k=format(k, "g"),
    )


@docfill(**SECTIONS)
def tail_verdict(
    q_tail: Tail,
    p_tail: Tail,
    up: tuple[float, int] | None,
    down: tuple[float, int] | None,
) -> TailVerdict:
    r"""Decide whether :math:`\int q(x)\,g(\log r(x))\,dx` converges on one side.

    With :math:`E = (1-k)\,\text{tail}(q) + k\,\text{tail}(p)` the tail of the
    leading term :math:`P_k(t)e^{kt}` and :math:`|\log r| \sim |x|^g` (or
    :math:`\log|x|` for :math:`g = 0`), the integrand behaves like
    :math:`e^{E_a x^2 + E_b |x|}\,|x|^{E_c + dg}` (times :math:`\log^d|x|`
    when :math:`g = 0`); see the module's decision table.

    Parameters
    ----------
    q_tail, p_tail : Tail
        ``q.tail(side)`` and ``p.tail(side)``.
    up, down : (float, int) or None
        ``(k, d)`` of the leading term of :math:`g` as :math:`\log r \to +\infty`
        and as :math:`\log r \to -\infty`; None if :math:`g` vanishes there.

    Returns
    -------
    TailVerdict
        Finite or not, why, and the decay of the integrand.

    %(schulman_references)s

    Examples
    --------
    >>> from kl_core.estimation.distributions import StudentT
    >>> # Var(k3_pq) for q = t_3, p = t_1.55: (t − 1)² e^{2t} leads as log r → +∞
    >>> v = tail_verdict(StudentT(3).tail(1), StudentT(1.55).tail(1), (2.0, 2), (0.0, 0))
    >>> v.finite, float(v.exponent), v.log_power
    (True, -1.1, 2)
    """
    delta = p_tail - q_tail
    lead = next(
        ((c, g) for c, g in ((delta.quadratic, 2), (delta.linear, 1), (delta.log, 0)) if c != 0),
        None,
    )
    if lead is None:  # log r tends to a constant: the integrand is O(q)
        return _algebraic_or_exponential(q_tail, 0, 0, 0, k=0.0)
    coef, growth = lead
    direction = 1 if coef > 0 else -1
    term = up if direction > 0 else down
    if term is None:
        return TailVerdict(True, "", "exponential", log_r_sign=direction)
    k, d = term
    e = q_tail.mix(p_tail, k)
    if e.quadratic > 0 or (e.quadratic == 0 and e.linear > 0):
        return TailVerdict(False, _r_power(k), "growth", log_r_sign=direction)
    return _algebraic_or_exponential(e, growth, d, direction, k)


def _algebraic_or_exponential(e: Tail, growth: int, d: int, direction: int, k: float) -> TailVerdict:
    if e.quadratic < 0 or (e.quadratic == 0 and e.linear < 0):
        return TailVerdict(True, "", "exponential", log_r_sign=direction)
    exponent = e.log + d * growth if growth else e.log
    log_power = 0 if growth else d
    finite = exponent < -1
    reason = ""
    if not finite:
        reason = _Q_TAIL if k == 0.0 else (_P_TAIL if k <= 1.0 else _r_power(k))
    return TailVerdict(finite, reason, "algebraic", exponent, log_power, direction)
