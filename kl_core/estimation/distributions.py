r"""The distribution families the lab compares: q (the sampler) and p (the target).

Each family is a small frozen dataclass with ``logpdf``, ``sample``, a readable
``name`` and a ``spec`` string that :func:`parse` reads back, so that a pair of
distributions can live in a URL or on a command line.

=====================  ===========================================  ==================
spec                   family                                        support
=====================  ===========================================  ==================
``normal(mu,sigma)``   :class:`Gaussian`                             real line
``laplace(loc,scale)`` :class:`Laplace`                              real line
``t(df,loc,scale)``    :class:`StudentT`                             real line
``mixture(w:m:s,...)`` :class:`GaussianMixture`                      real line
``categorical(l,...)`` :class:`Categorical` (logits, the token case)  0 … K−1
=====================  ===========================================  ==================

``scipy.special`` is imported inside the methods that need it (t densities and
quantiles, mixtures, categorical normalisation): importing it costs a few
tenths of a second, and Gaussian pairs, the command line's default, never need it.
"""

from __future__ import annotations

import difflib
import math
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.validation import (
    InputError,
    Message,
    as_float_array,
    check_finite,
    check_positive,
    check_positive_int,
    reason,
)

__all__ = [
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

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _num(x: float) -> str:
    """Format a parameter so that ``parse`` reads back the same float."""
    return repr(float(x)).removesuffix(".0") if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class Tail:
    r"""The far-tail form of a log-density on one side of the real line.

    .. math:: \log d(x) = a\,x^2 + b\,|x| + c\,\log|x| + k + o(1),
              \qquad x \to \pm\infty,

    with the :math:`o(1)` term below :math:`10^{-50}` once
    :math:`|x| > 10^{50}` times every scale and location of the family
    (Gaussian and Laplace tails are exact polynomials; a t tail's correction is
    :math:`O(\mathrm{loc}/x + \nu s^2/x^2)`).  ``a``, ``b`` and ``c`` are the
    exact rationals of the float parameters, so a threshold such as
    :math:`\sigma_p = \sqrt2\,\sigma_q` is decided without rounding.

    =====================  ======================  =====================  ============
    family                 ``quadratic`` a         ``linear`` b            ``log`` c
    =====================  ======================  =====================  ============
    N(μ, σ²)               :math:`-1/(2\sigma^2)`  :math:`\pm\mu/\sigma^2`  0
    Laplace(μ, b)          0                       :math:`-1/b`             0
    t(ν, μ, s)             0                       0                      :math:`-(\nu+1)`
    mixture of normals     the widest component (then the one furthest out), weights merged
    =====================  ======================  =====================  ============

    Attributes
    ----------
    quadratic, linear, log : fractions.Fraction
        The exact coefficients a, b, c.
    const : float
        The constant k.
    """

    quadratic: Fraction
    linear: Fraction
    log: Fraction
    const: float

    def __sub__(self, other: Tail) -> Tail:
        return Tail(
            self.quadratic - other.quadratic,
            self.linear - other.linear,
            self.log - other.log,
            self.const - other.const,
        )

    def mix(self, other: Tail, k: float) -> Tail:
        r"""The tail of :math:`d^{1-k} e^{k \log d'}`: ``(1 − k)·self + k·other``."""
        fk = Fraction(k)
        return Tail(
            (1 - fk) * self.quadratic + fk * other.quadratic,
            (1 - fk) * self.linear + fk * other.linear,
            (1 - fk) * self.log + fk * other.log,
            (1.0 - k) * self.const + k * other.const,
        )


def _check_side(side: int) -> int:
    if side not in (1, -1):
        raise ValueError(f"side must be +1 or -1, got {side!r}")
    return side


def _gaussian_tail(mu: float, sigma: float, side: int, log_weight: float = 0.0) -> Tail:
    s2 = Fraction(sigma) ** 2
    return Tail(
        Fraction(-1, 2) / s2,
        side * Fraction(mu) / s2,
        Fraction(0),
        log_weight - 0.5 * (mu / sigma) ** 2 - math.log(sigma) - _LOG_SQRT_2PI,
    )


class Distribution(ABC):
    """A one-dimensional distribution: continuous density or categorical pmf."""

    discrete: ClassVar[bool] = False

    @property
    @abstractmethod
    def name(self) -> str:
        """A readable name in standard notation, e.g. ``N(0, 1)``."""

    @property
    @abstractmethod
    def spec(self) -> str:
        """The string that :func:`parse` turns back into this distribution."""

    @abstractmethod
    def logpdf(self, x: ArrayLike) -> np.ndarray:
        """Log density (log pmf for :class:`Categorical`) at ``x``."""

    @abstractmethod
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` independent samples with the generator ``rng``."""

    @abstractmethod
    def interval(self, coverage: float = 0.999) -> tuple[float, float]:
        """A central interval holding at least ``coverage`` of the mass."""

    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Density (pmf for :class:`Categorical`) at ``x``."""
        return np.exp(self.logpdf(x))

    def tail(self, side: int) -> Tail:
        """The far-tail form of ``logpdf`` as x → side·∞ (see :class:`Tail`)."""
        raise ValueError(f"{type(self).__name__} has no tails: it is not a density on the real line")

    def __str__(self) -> str:
        return self.name


def _check_rng_n(rng: np.random.Generator, n: int) -> int:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return check_positive_int(n, "n")


def _check_coverage(coverage: float) -> float:
    c = check_finite(coverage, "coverage")
    if not 0.0 < c < 1.0:
        raise ValueError(f"coverage must be in (0, 1), got {coverage!r}")
    return c


@dataclass(frozen=True)
class Gaussian(Distribution):
    r"""Normal distribution :math:`\mathcal N(\mu, \sigma^2)`.

    .. math:: \log q(x) = -\tfrac12\left(\tfrac{x-\mu}{\sigma}\right)^2 - \log\sigma - \tfrac12\log 2\pi

    ========  ===========  ========  ============
    support   mean         variance  spec
    ========  ===========  ========  ============
    ℝ         :math:`\mu`  σ²        normal(μ,σ)
    ========  ===========  ========  ============

    Parameters
    ----------
    mu : float
        Mean.
    sigma : float
        Standard deviation, > 0.

    Examples
    --------
    >>> Gaussian(0, 1).name
    'N(0, 1)'
    """

    mu: float = 0.0
    sigma: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_finite(self.mu, "mu"))
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))

    @property
    def name(self) -> str:
        return f"N({self.mu:g}, {self.sigma:g}²)" if self.sigma != 1 else f"N({self.mu:g}, 1)"

    @property
    def spec(self) -> str:
        return f"normal({_num(self.mu)},{_num(self.sigma)})"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        z = (as_float_array(x, "x") - self.mu) / self.sigma
        return -0.5 * z * z - math.log(self.sigma) - _LOG_SQRT_2PI

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = _check_rng_n(rng, n)
        x = rng.standard_normal(n)
        if self.sigma != 1.0:  # skipped passes change nothing: x * 1 == x, x + 0 == x
            x *= self.sigma
        if self.mu != 0.0:
            x += self.mu
        return x

    def interval(self, coverage: float = 0.999) -> tuple[float, float]:
        # The standard library's normal quantile (Wichura's AS 241, ~1e-16 relative):
        # the exact values of Gaussian pairs need their bulk, and no scipy.
        from statistics import NormalDist

        z = -NormalDist().inv_cdf((1.0 - _check_coverage(coverage)) / 2.0)
        return (self.mu - z * self.sigma, self.mu + z * self.sigma)

    def tail(self, side: int) -> Tail:
        return _gaussian_tail(self.mu, self.sigma, _check_side(side))


@dataclass(frozen=True)
class Laplace(Distribution):
    r"""Laplace distribution with location :math:`\mu` and scale :math:`b`.

    .. math:: \log q(x) = -\frac{|x - \mu|}{b} - \log 2b

    ========  ===========  ========  ================
    support   mean         variance  spec
    ========  ===========  ========  ================
    ℝ         :math:`\mu`  2b²       laplace(μ,b)
    ========  ===========  ========  ================

    Parameters
    ----------
    loc : float
        Location (mean and median).
    scale : float
        Scale :math:`b`, > 0.

    Examples
    --------
    >>> Laplace(0, 1).name
    'Laplace(0, 1)'
    """

    loc: float = 0.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "loc", check_finite(self.loc, "loc"))
        object.__setattr__(self, "scale", check_positive(self.scale, "scale"))

    @property
    def name(self) -> str:
        return f"Laplace({self.loc:g}, {self.scale:g})"

    @property
    def spec(self) -> str:
        return f"laplace({_num(self.loc)},{_num(self.scale)})"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        return -np.abs(as_float_array(x, "x") - self.loc) / self.scale - math.log(2.0 * self.scale)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = _check_rng_n(rng, n)
        return rng.laplace(self.loc, self.scale, n)

    def interval(self, coverage: float = 0.999) -> tuple[float, float]:
        half = -self.scale * math.log(1.0 - _check_coverage(coverage))
        return (self.loc - half, self.loc + half)

    def tail(self, side: int) -> Tail:
        # -|x - loc|/b = -|x|/b + side·loc/b once side·x > |loc|
        side = _check_side(side)
        return Tail(
            Fraction(0),
            -1 / Fraction(self.scale),
            Fraction(0),
            side * self.loc / self.scale - math.log(2.0 * self.scale),
        )


@dataclass(frozen=True)
class StudentT(Distribution):
    r"""Student's t distribution with ``df`` degrees of freedom, location and scale.

    .. math:: \log q(x) = \log\Gamma\!\left(\tfrac{\nu+1}{2}\right) - \log\Gamma\!\left(\tfrac{\nu}{2}\right)
        - \tfrac12\log(\nu\pi) - \log s - \tfrac{\nu+1}{2}\log\!\left(1 + \tfrac{z^2}{\nu}\right),
        \quad z = \tfrac{x-\mu}{s}

    ========  =====================  ==========================  ==============
    support   mean                   variance                    spec
    ========  =====================  ==========================  ==============
    ℝ         μ (ν > 1)              s²ν/(ν−2) (ν > 2)           t(ν,μ,s)
    ========  =====================  ==========================  ==============

    Parameters
    ----------
    df : float
        Degrees of freedom :math:`\nu`, > 0.
    loc : float
        Location :math:`\mu`.
    scale : float
        Scale :math:`s`, > 0.

    Examples
    --------
    >>> StudentT(3).name
    't₃(0, 1)'
    """

    df: float = 3.0
    loc: float = 0.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "df", check_positive(self.df, "df"))
        object.__setattr__(self, "loc", check_finite(self.loc, "loc"))
        object.__setattr__(self, "scale", check_positive(self.scale, "scale"))

    @property
    def name(self) -> str:
        sub = str(f"{self.df:g}").translate(str.maketrans("0123456789.", "₀₁₂₃₄₅₆₇₈₉."))
        return f"t{sub}({self.loc:g}, {self.scale:g})"

    @property
    def spec(self) -> str:
        return f"t({_num(self.df)},{_num(self.loc)},{_num(self.scale)})"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        from scipy import special

        nu = self.df
        z = (as_float_array(x, "x") - self.loc) / self.scale
        const = (
            special.gammaln((nu + 1) / 2)
            - special.gammaln(nu / 2)
            - 0.5 * math.log(nu * math.pi)
            - math.log(self.scale)
        )
        return const - (nu + 1) / 2 * np.log1p(z * z / nu)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = _check_rng_n(rng, n)
        return self.loc + self.scale * rng.standard_t(self.df, n)

    def interval(self, coverage: float = 0.999) -> tuple[float, float]:
        from scipy import special

        z = float(special.stdtrit(self.df, 0.5 + _check_coverage(coverage) / 2.0))
        return (self.loc - z * self.scale, self.loc + z * self.scale)

    def tail(self, side: int) -> Tail:
        # log(1 + z²/ν) = 2 log|x| − 2 log s − log ν + O(loc/x + ν s²/x²)
        _check_side(side)
        nu = self.df
        half = (nu + 1.0) / 2.0
        const = (
            math.lgamma(half) - math.lgamma(nu / 2.0) - 0.5 * math.log(nu * math.pi)
            - math.log(self.scale) + half * (2.0 * math.log(self.scale) + math.log(nu))
        )  # fmt: skip
        return Tail(Fraction(0), Fraction(0), -(Fraction(nu) + 1), float(const))


@dataclass(frozen=True)
class GaussianMixture(Distribution):
    r"""A finite mixture of normals, :math:`\sum_k w_k\,\mathcal N(\mu_k, \sigma_k^2)`.

    .. math:: \log q(x) = \log\sum_k w_k\,\mathcal N(x;\mu_k,\sigma_k^2)

    ========  =====================  =====================================  =========================
    support   mean                   variance                               spec
    ========  =====================  =====================================  =========================
    ℝ         :math:`\sum w_k\mu_k`  :math:`\sum w_k(\sigma_k^2+\mu_k^2)-\bar\mu^2`  mixture(w:μ:σ, …)
    ========  =====================  =====================================  =========================

    Parameters
    ----------
    weights : sequence of float
        Component weights, each > 0, summing to 1 (within 1e-9).
    means : sequence of float
        Component means.
    sigmas : sequence of float
        Component standard deviations, each > 0.

    Examples
    --------
    >>> GaussianMixture((0.5, 0.5), (-1, 1), (1, 1)).spec
    'mixture(0.5:-1:1,0.5:1:1)'
    """

    weights: tuple[float, ...]
    means: tuple[float, ...]
    sigmas: tuple[float, ...]

    def __post_init__(self) -> None:
        w = tuple(check_positive(v, "weights") for v in np.atleast_1d(self.weights))
        m = tuple(check_finite(v, "means") for v in np.atleast_1d(self.means))
        s = tuple(check_positive(v, "sigmas") for v in np.atleast_1d(self.sigmas))
        if not w:
            raise InputError("weights must have at least one component")
        if not len(w) == len(m) == len(s):
            raise InputError(
                "weights, means and sigmas must have the same length, got {nw}, {nm}, {ns}",
                nw=len(w), nm=len(m), ns=len(s),
            )
        if abs(sum(w) - 1.0) > 1e-9:
            raise InputError("weights must sum to 1, got {total:.12g}", total=sum(w))
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "means", m)
        object.__setattr__(self, "sigmas", s)

    @property
    def name(self) -> str:
        parts = [f"{w:g}·{Gaussian(m, s).name}" for w, m, s in zip(self.weights, self.means, self.sigmas, strict=False)]
        return " + ".join(parts)

    @property
    def spec(self) -> str:
        comps = [
            f"{_num(w)}:{_num(m)}:{_num(s)}" for w, m, s in zip(self.weights, self.means, self.sigmas, strict=False)
        ]
        return f"mixture({','.join(comps)})"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        from scipy import special

        xa = as_float_array(x, "x")
        comps = [
            math.log(w) + Gaussian(m, s).logpdf(xa)
            for w, m, s in zip(self.weights, self.means, self.sigmas, strict=False)
        ]
        return special.logsumexp(np.stack(comps), axis=0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = _check_rng_n(rng, n)
        # One component label per draw keeps the draws in i.i.d. order (the
        # running mean on the lab pages depends on it).
        k = rng.choice(len(self.weights), size=n, p=np.asarray(self.weights))
        return np.asarray(self.means)[k] + np.asarray(self.sigmas)[k] * rng.standard_normal(n)

    def interval(self, coverage: float = 0.999) -> tuple[float, float]:
        c = _check_coverage(coverage)
        spans = [Gaussian(m, s).interval(c) for m, s in zip(self.means, self.sigmas, strict=False)]
        return (min(a for a, _ in spans), max(b for _, b in spans))

    def tail(self, side: int) -> Tail:
        # The widest component wins, then the one furthest out on this side;
        # identical components add their weights.
        side = _check_side(side)
        comps = list(zip(self.weights, self.means, self.sigmas, strict=True))
        top = max((s, side * m) for _, m, s in comps)
        weight = sum(w for w, m, s in comps if (s, side * m) == top)
        sigma, mu = top[0], side * top[1]
        return _gaussian_tail(mu, sigma, side, math.log(weight))


@dataclass(frozen=True)
class Categorical(Distribution):
    r"""A categorical distribution over tokens 0 … K−1, given by logits.

    .. math:: \log q(k) = \ell_k - \log\sum_j e^{\ell_j}

    This is the language-model case: a policy's next-token distribution.

    Parameters
    ----------
    logits : sequence of float
        Unnormalised log-probabilities, finite, at least one.

    Examples
    --------
    >>> Categorical((0.0, 0.0)).probs.tolist()
    [0.5, 0.5]
    """

    logits: tuple[float, ...]
    discrete: ClassVar[bool] = True

    def __post_init__(self) -> None:
        arr = np.atleast_1d(np.asarray(self.logits, dtype=object))
        if arr.size == 0:
            raise InputError("logits must not be empty")
        object.__setattr__(self, "logits", tuple(check_finite(v, "logits") for v in arr))

    @property
    def k(self) -> int:
        """The number of categories K."""
        return len(self.logits)

    @property
    def log_probs(self) -> np.ndarray:
        """Normalised log-probabilities of categories 0 … K−1."""
        # Shift by the maximum first: logits that differ by a constant then give
        # bit-identical log-probabilities, so KL between them is exactly 0.
        from scipy import special

        lg = np.asarray(self.logits)
        lg = lg - lg.max()
        return lg - special.logsumexp(lg)

    @property
    def probs(self) -> np.ndarray:
        """Probabilities of categories 0 … K−1."""
        return np.exp(self.log_probs)

    @property
    def name(self) -> str:
        return "Cat(" + ", ".join(f"{p:.3g}" for p in self.probs) + ")"

    @property
    def spec(self) -> str:
        return f"categorical({','.join(_num(v) for v in self.logits)})"

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        xa = as_float_array(x, "x")
        idx = np.rint(xa)
        inside = (idx == xa) & (xa >= 0) & (xa < self.k)
        out = np.full(xa.shape, -np.inf)
        out[inside] = self.log_probs[idx[inside].astype(np.int64)]
        return out

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = _check_rng_n(rng, n)
        cdf = np.cumsum(self.probs)
        idx = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
        return np.minimum(idx, self.k - 1).astype(np.float64)

    def interval(self, coverage: float = 0.999) -> tuple[float, float]:
        _check_coverage(coverage)
        return (0.0, float(self.k - 1))


def log_ratio(p: Distribution, q: Distribution, x: ArrayLike) -> np.ndarray:
    r"""The log-ratio :math:`\log r = \log p(x) - \log q(x)` at ``x``.

    For two Gaussians it is the quadratic :math:`a x^2 + b x + c`, evaluated in
    that form: it is faster and it avoids the cancellation of two large
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
    if isinstance(p, Gaussian) and isinstance(q, Gaussian):
        xa = as_float_array(x, "x")
        a = 0.5 / q.sigma**2 - 0.5 / p.sigma**2
        b = p.mu / p.sigma**2 - q.mu / q.sigma**2
        c = 0.5 * q.mu**2 / q.sigma**2 - 0.5 * p.mu**2 / p.sigma**2 + math.log(q.sigma / p.sigma)
        if a != 0.0:
            out = a * xa
            out += b
            out *= xa
        else:  # equal sigmas: log r is linear, (0 + b)·x = b·x
            out = np.multiply(b, xa, out=np.empty_like(xa))
        out += c
        return out
    if p.discrete != q.discrete:
        raise ValueError("p and q must both be continuous or both be categorical")
    return p.logpdf(x) - q.logpdf(x)


# ---------------------------------------------------------------- practical range

#: Parameter ranges inside which double precision can still compare two
#: distributions (``log_ratio`` squares 1/σ and μ/σ; a t sampler with tiny df
#: draws values whose squares overflow).
PRACTICAL = {"scale": (1e-6, 1e6), "location": 1e6, "df": 0.1, "logit": 1e4}


def practical_issue(d: Distribution) -> str:
    r"""Why ``d`` is outside the range where the lab's numbers stay meaningful, or ``""``.

    The families accept any finite parameters, but in double precision
    :func:`log_ratio` and the exact integrals overflow for scales outside
    :math:`[10^{-6}, 10^{6}]`, locations beyond :math:`\pm 10^{6}`, Student t
    with :math:`\nu < 0.1` or logits beyond :math:`\pm 10^{4}`.

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
    lo, hi = PRACTICAL["scale"]
    loc_max = PRACTICAL["location"]
    scales: list[tuple[str, float]] = []
    locations: list[tuple[str, float]] = []
    if isinstance(d, Gaussian):
        scales, locations = [("sigma", d.sigma)], [("mu", d.mu)]
    elif isinstance(d, Laplace):
        scales, locations = [("scale", d.scale)], [("loc", d.loc)]
    elif isinstance(d, StudentT):
        scales, locations = [("scale", d.scale)], [("loc", d.loc)]
        if d.df < PRACTICAL["df"]:
            return Message("df = {df:g} is below {least:g}", df=d.df, least=PRACTICAL["df"])
    elif isinstance(d, GaussianMixture):
        scales = [("sigmas", s) for s in d.sigmas]
        locations = [("means", m) for m in d.means]
    elif isinstance(d, Categorical):
        worst = max(abs(v) for v in d.logits)
        if worst > PRACTICAL["logit"]:
            return Message(
                "logits = {worst:g} is beyond ±{most:g}", worst=worst, most=PRACTICAL["logit"]
            )
    for name, v in scales:
        if not lo <= v <= hi:
            return Message("{name} = {v:g} is outside [{lo:g}, {hi:g}]", name=name, v=v, lo=lo, hi=hi)
    for name, v in locations:
        if abs(v) > loc_max:
            return Message("{name} = {v:g} is beyond ±{most:g}", name=name, v=v, most=loc_max)
    return ""


# ---------------------------------------------------------------- parsing

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SPEC = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$")
_FAMILIES = "normal(mu,sigma), laplace(loc,scale), t(df,loc,scale), mixture(w:m:s,...), categorical(logit,...)"


_FAMILY_NAMES = ("normal", "laplace", "t", "mixture", "categorical")


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


def _floats(text: str, spec: str) -> list[float]:
    items = [s.strip() for s in text.split(",")] if text.strip() else []
    for s in items:
        if not re.fullmatch(_NUMBER, s):
            raise InputError("spec {spec!r}: {s!r} is not a number", spec=spec, s=s)
    return [float(s) for s in items]


def _arity(name: str, args: list[float], lo: int, hi: int, spec: str) -> None:
    if not lo <= len(args) <= hi:
        if lo == hi:
            raise InputError(
                "spec {spec!r}: {name} takes {want} numbers, got {got}",
                spec=spec, name=name, want=lo, got=len(args),
            )
        raise InputError(
            "spec {spec!r}: {name} takes {lo} to {hi} numbers, got {got}",
            spec=spec, name=name, lo=lo, hi=hi, got=len(args),
        )


def parse(spec: str) -> Distribution:
    """Turn a spec string into a distribution.

    Parameters
    ----------
    spec : str
        One of ``normal(mu,sigma)`` (also ``gaussian``, ``n``),
        ``laplace(loc,scale)``, ``t(df[,loc[,scale]])``,
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
    try:
        if family in ("normal", "gaussian", "n"):
            args = _floats(body, spec)
            _arity("normal", args, 2, 2, spec)
            return Gaussian(*args)
        if family == "laplace":
            args = _floats(body, spec)
            _arity("laplace", args, 2, 2, spec)
            return Laplace(*args)
        if family in ("t", "studentt", "student_t"):
            args = _floats(body, spec)
            _arity("t", args, 1, 3, spec)
            return StudentT(*args)
        if family in ("categorical", "cat"):
            args = _floats(body, spec)
            if not args:
                raise InputError("logits must not be empty")
            _arity("categorical", args, 1, 10_000, spec)
            return Categorical(tuple(args))
        if family in ("mixture", "mix", "gmm"):
            comps = [c.strip() for c in body.split(",")] if body.strip() else []
            if not comps:
                raise InputError("spec {spec!r}: mixture needs at least one w:m:s component", spec=spec)
            triples = []
            for c in comps:
                parts = c.split(":")
                if len(parts) != 3:
                    raise InputError(
                        "spec {spec!r}: mixture component {c!r} is not weight:mean:sigma", spec=spec, c=c
                    )
                triples.append(_floats(",".join(parts), spec))
            w, mu, s = zip(*triples, strict=False)
            return GaussianMixture(tuple(w), tuple(mu), tuple(s))
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
