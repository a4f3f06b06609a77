r"""The distribution families the lab compares: q (the sampler) and p (the target).

Each family is a small frozen dataclass with ``logpdf``, ``sample``, a readable
``name`` and a ``spec`` string that :func:`parse` reads back, so that a pair of
distributions can live in a URL or on a command line.  The families live in
:mod:`kl_core.estimation.families`, one module each, found by a registry; this
module is their public face (the classes, :func:`parse`, :func:`log_ratio`,
:func:`practical_issue`).

=========================  ===========================================  ==================
spec                       family                                        support
=========================  ===========================================  ==================
``normal(mu,sigma)``       :class:`Gaussian`                             real line
``laplace(loc,scale)``     :class:`Laplace`                              real line
``t(df,loc,scale)``        :class:`StudentT`                             real line
``mixture(w:m:s,...)``     :class:`GaussianMixture`                      real line
``categorical(l,...)``     :class:`Categorical` (logits, the token case)  0 … K−1
=========================  ===========================================  ==================

and any family added since (``logistic(loc,scale)``, …): ``parse`` reads every
family of the registry, and ``kl_core.estimation.families.FAMILIES`` lists them.

``scipy.special`` is imported inside the methods that need it (t densities and
quantiles, mixtures, categorical normalisation): importing it costs a few
tenths of a second, and Gaussian pairs, the command line's default, never need it.
"""

from __future__ import annotations

import difflib
import re

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.families import FAMILIES, by_name, log_ratio_fast, syntax
from kl_core.estimation.families._base import PRACTICAL, Distribution, Tail
from kl_core.estimation.families.categorical import Categorical
from kl_core.estimation.families.laplace import Laplace
from kl_core.estimation.families.mixture import GaussianMixture
from kl_core.estimation.families.normal import Gaussian
from kl_core.estimation.families.student_t import StudentT
from kl_core.validation import InputError, reason

__all__ = [
    "PRACTICAL",
    "Categorical",
    "Distribution",
    "Gaussian",
    "GaussianMixture",
    "Laplace",
    "StudentT",
    "Tail",
    "log_ratio",
    "parse",
    "practical_issue",
]


def log_ratio(p: Distribution, q: Distribution, x: ArrayLike) -> np.ndarray:
    r"""The log-ratio :math:`\log r = \log p(x) - \log q(x)` at ``x``.

    A pair whose family module declares its own form (two Gaussians: the
    quadratic :math:`a x^2 + b x + c`) is evaluated in that form: it is faster and it avoids the cancellation of two large
    log-densities far in the tails.

    Parameters
    ----------
    p, q : Distribution
        Target and sampler.
    x : array_like
        Points, usually samples of ``q``.

    Returns
    -------
    numpy.ndarray
        :math:`\log r` at each point.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> log_ratio(Gaussian(0.1, 1), Gaussian(0, 1), [0.0]).tolist()
    [-0.005000000000000001]
    """
    fast = log_ratio_fast(p, q)
    if fast is not None:
        return fast(p, q, x)
    if p.discrete != q.discrete:
        raise ValueError("p and q must both be continuous or both be categorical")
    return p.logpdf(x) - q.logpdf(x)


# ---------------------------------------------------------------- practical range


def practical_issue(d: Distribution) -> str:
    r"""Why ``d`` is outside the range where the lab's numbers stay meaningful, or ``""``.

    The families accept any finite parameters, but in double precision
    :func:`log_ratio` and the exact integrals overflow for scales outside
    :math:`[10^{-6}, 10^{6}]`, locations beyond :math:`\pm 10^{6}`, Student t
    with :math:`\nu < 0.1` or logits beyond :math:`\pm 10^{4}` (:data:`PRACTICAL`;
    each family names its scales and locations, ``Distribution.practical_parts``).

    Parameters
    ----------
    d : Distribution
        A distribution.

    Returns
    -------
    str
        One sentence naming the parameter (a :class:`~kl_core.validation.Message`,
        which the app can translate), or an empty string.

    Examples
    --------
    >>> practical_issue(Gaussian(0, 1e-9))
    'sigma = 1e-09 is outside [1e-06, 1e+06]'
    """
    return d.practical_issue()


# ---------------------------------------------------------------- parsing

_SPEC = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$")
#: Every family's spec shape, for the error messages (from the registry).
_FAMILIES = syntax()
_FAMILY_NAMES = tuple(FAMILIES)


def _shape_error(spec: str) -> InputError:
    """The error for a spec that is not ``family(args)``, naming the actual mistake."""
    text = spec.strip()
    if not text:
        return InputError("spec is empty; type a distribution such as normal(0,1)")
    opens, closes = text.count("("), text.count(")")
    name = re.match(r"[A-Za-z_]*", text).group(0)
    if opens > closes:
        return InputError("spec {spec!r}: missing closing bracket ')'", spec=spec)
    if closes > opens:
        return InputError("spec {spec!r}: missing opening bracket '('", spec=spec)
    if opens == 0:
        if name and name == text:
            return InputError(
                "spec {spec!r}: the numbers are missing; write them in brackets, e.g. normal(0,1)",
                spec=spec,
            )
        return InputError(
            "spec {spec!r} is not of the form family(args); families: {families}",
            spec=spec, families=_FAMILIES,
        )
    if not name:
        return InputError(
            "spec {spec!r}: the family name is missing before '('; families: {families}",
            spec=spec, families=_FAMILIES,
        )
    last = text.rfind(")")
    if last < len(text) - 1:
        return InputError(
            "spec {spec!r}: unexpected text after the closing bracket: {extra!r}",
            spec=spec, extra=text[last + 1:],
        )
    return InputError(
        "spec {spec!r} is not of the form family(args); families: {families}",
        spec=spec, families=_FAMILIES,
    )


def parse(spec: str) -> Distribution:
    """Turn a spec string into a distribution.

    Parameters
    ----------
    spec : str
        ``family(args)`` for a family of the registry
        (:mod:`kl_core.estimation.families`), e.g. ``normal(mu,sigma)`` (also
        ``gaussian``, ``n``), ``laplace(loc,scale)``, ``t(df[,loc[,scale]])``,
        ``mixture(w:m:s,w:m:s,...)`` and ``categorical(logit,logit,...)``.

    Returns
    -------
    Distribution
        The distribution; ``parse(d.spec) == d`` for every family.

    Raises
    ------
    ValueError
        One line naming what could not be read.

    Examples
    --------
    >>> parse("t(3,0,1)")
    StudentT(df=3.0, loc=0.0, scale=1.0)
    >>> parse("mixture(0.5:-1:1,0.5:1:1)").means
    (-1.0, 1.0)
    """
    if not isinstance(spec, str):
        raise InputError("spec must be a string, got {type}", type=type(spec).__name__)
    m = _SPEC.match(spec)
    if not m:
        raise _shape_error(spec)
    family, body = m.group(1).lower(), m.group(2)
    if family == "markov":
        raise InputError(
            "spec {spec!r}: markov(...) is a sequence model, not a one-dimensional "
            "distribution; use it with the sequence tools (kl_core.sequences.markov.parse_markov, "
            "python -m kl_core sequence)",
            spec=spec[:60],
        )
    fam = by_name(family)
    try:
        if fam is not None:
            return fam.parse(body, spec)
    except ValueError as exc:
        if str(exc).startswith("spec "):
            raise InputError(reason(exc)) from None
        raise InputError("spec {spec!r}: {reason}", spec=spec, reason=reason(exc)) from None
    close = difflib.get_close_matches(family, _FAMILY_NAMES, n=1, cutoff=0.6)
    if close:
        raise InputError(
            "spec {spec!r}: unknown family {family!r} (did you mean {close}?); families: {families}",
            spec=spec, family=family, close=close[0], families=_FAMILIES,
        )
    raise InputError(
        "spec {spec!r}: unknown family {family!r}; families: {families}",
        spec=spec, family=family, families=_FAMILIES,
    )
