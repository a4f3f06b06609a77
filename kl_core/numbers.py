"""How a number is written, defined once for the command line and the app.

Two rules that every place printing a share or a figure past a double must agree on:

- :func:`share`: a percentage that never shows a share that is not zero as ``0.0%``;
- :func:`from_log`: a positive number given by its natural log, in scientific notation,
  also where it is past the largest double (``1.234e+310``);

- :func:`lam_text`: a coefficient λ of kλ, never printed as k1's 0 or k3's 1 unless it is one;

and one rule for a figure that must not be written at all: :func:`unresolved`, a nonzero
figure below the smallest normal double, whose digits a computation has already lost.

The app's ``charts.numbers`` re-exports them, so a page and the CLI print the same text.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

__all__ = ["SMALLEST_NORMAL", "from_log", "lam_text", "probability_text", "share", "unresolved"]

_LN10 = math.log(10.0)

#: The smallest normal double, ≈2.2e-308.  Below it a double is subnormal: it keeps fewer
#: significant digits (5e-323 is 10 times the smallest step, 4.9e-324), and a computation
#: through such numbers loses more (Var(k1) for Gaussians 1e-161 apart comes out 9e-323, not 1e-322).
SMALLEST_NORMAL = sys.float_info.min


def share(x: float | None, decimals: int = 1) -> str:
    r"""A share as a percentage, ``decimals`` places, never ``0.0%`` for a share that is not zero
    nor ``100.0%`` for one below 1.

    Below the smallest share ``decimals`` places can show, :math:`10^{-(d+2)}`, it is written
    with 2 significant digits (``0.037%``); exactly 0 stays ``0.0%``.  A share below 1 that
    would round to 100 % gets the places it needs to show it is not all (``99.96%``).

    Parameters
    ----------
    x : float or None
        The share, 0.25 for 25 %.
    decimals : int, default 1
        Places after the point.

    Returns
    -------
    str
        ``"—"`` for ``None`` or NaN; ``"inf%"`` for an infinite share.

    Examples
    --------
    >>> share(0.25), share(0.00037), share(0.0), share(None), share(0.9996)
    ('25.0%', '0.037%', '0.0%', '—', '99.96%')
    """
    if decimals < 0:
        raise ValueError(f"decimals must be >= 0, got {decimals}")
    if x is None or math.isnan(x):
        return "—"
    if x == 0.0 or not math.isfinite(x) or abs(x) >= 10.0 ** -(decimals + 2):
        text = f"{x + 0.0:.{decimals}%}"  # + 0.0: -0.0 prints as 0.0%
        if not 0.0 < x < 1.0 or float(text[:-1]) < 100.0:
            return text
        for places in range(decimals + 1, 10):  # a share below 1 that rounds to 100%: not all of them
            text = f"{x:.{places}%}"
            if float(text[:-1]) < 100.0:
                return text
        return f"{math.floor(x * 1e11) / 1e9:.9f}%"
    return f"{100 * x:.2g}%"


def from_log(log_x: float, digits: int = 4, *, sign: str = "", trim: bool = False) -> str:
    r"""A positive number :math:`x = e^{\ell}` from :math:`\ell = \log x`, in scientific notation.

    Written as :math:`m \times 10^{e}` with :math:`e = \lfloor \ell / \ln 10 \rfloor` and
    :math:`m = e^{\ell - e \ln 10}`, so it works where :math:`x` itself is past a double
    (:math:`\ell > 709.78`) or below its smallest (:math:`\ell < -745.13`).

    Parameters
    ----------
    log_x : float
        The natural log of the number; finite.
    digits : int, default 4
        Significant digits, at least 1.
    sign : str, default ""
        Written before the number (``"+"`` for a column of signed figures).
    trim : bool, default False
        Drop trailing zeros of the mantissa (``1.5e+400``, not ``1.500e+400``).

    Returns
    -------
    str
        ``"1.234e+310"``: the exponent has at least two digits, as Python writes it.

    Examples
    --------
    >>> from_log(450.0)
    '2.707e+195'
    >>> from_log(math.log(1.5) + 400 * math.log(10.0), 3, trim=True)
    '1.5e+400'
    """
    if not math.isfinite(log_x):
        raise ValueError(f"log_x must be finite, got {log_x!r}")
    if digits < 1:
        raise ValueError(f"digits must be >= 1, got {digits}")
    exponent = math.floor(log_x / _LN10)
    mantissa = math.exp(log_x - exponent * _LN10)
    spec = f".{digits}g" if trim else f".{digits - 1}f"
    if float(format(mantissa, spec)) >= 10.0:  # 9.9996 rounds up to the next power of ten
        mantissa, exponent = 1.0, exponent + 1
    return f"{sign}{format(mantissa, spec)}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"


def unresolved(x: float) -> bool:
    r"""A nonzero figure below the smallest normal double, :math:`0 < |x| < 2^{-1022}`.

    Its digits are not resolved: a subnormal double keeps fewer significant digits, so a
    figure computed from it (a ratio, a variance) can be wrong in its first digit.

    Parameters
    ----------
    x : float
        The figure.

    Returns
    -------
    bool
        False for 0, NaN, infinities and every normal double.

    Examples
    --------
    >>> unresolved(1e-322), unresolved(0.0), unresolved(1e-300)
    (True, False, False)
    """
    return 0.0 < abs(x) < SMALLEST_NORMAL


def lam_text(x: float, also: Sequence[float] = ()) -> str:
    r"""A coefficient :math:`\lambda` of :math:`k_\lambda = -\log r + \lambda(r - 1)`, as every page prints it.

    Three significant digits, more (5, 7, 9, 12, then the shortest text that reads back
    as ``x``) where three would print k1's :math:`\lambda = 0`, k3's :math:`\lambda = 1`
    or a value of ``also`` (a slider's ends) for a :math:`\lambda` that is none of them.

    Parameters
    ----------
    x : float
        :math:`\lambda`.
    also : sequence of float, optional
        Other values ``x`` must not be printed as unless it is one: "λ* = 3.002 lies outside
        [−1, 3]", not "λ* = 3 lies outside".

    Returns
    -------
    str

    Examples
    --------
    >>> lam_text(0.58197670686932642), lam_text(0.9999998), lam_text(3.4719859e-10), lam_text(1.0)
    ('0.582', '0.9999998', '3.47e-10', '1')
    >>> lam_text(0.999999999999995), lam_text(3.001997, also=(-1.0, 3.0))
    ('0.999999999999995', '3.002')
    """
    return _apart(x, {0.0, 1.0, *(float(a) for a in also)})


def probability_text(p: float) -> str:
    r"""A probability as the pages print it: three significant digits, more where three would print 0 or 1.

    Parameters
    ----------
    p : float
        The probability, :math:`0 \le p \le 1`.

    Returns
    -------
    str

    Examples
    --------
    >>> probability_text(0.25), probability_text(0.9996336), probability_text(1.0), probability_text(2e-4)
    ('0.25', '0.99963', '1', '0.0002')
    """
    return _apart(p, {0.0, 1.0})


def _apart(x: float, avoid: set[float]) -> str:
    """``x`` in 3 significant digits, or more (5, 7, 9, 12, then the shortest text that reads back as ``x``) where
    fewer would print a value of ``avoid`` that ``x`` is not."""
    if x in avoid or not math.isfinite(x):
        return f"{x:.3g}"
    for digits in (3, 5, 7, 9, 12):
        text = f"{x:.{digits}g}"
        if float(text) not in avoid:
            return text
    return repr(float(x))  # the shortest text that reads back as x: never one of `avoid`
