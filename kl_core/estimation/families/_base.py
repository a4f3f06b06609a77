r"""What every distribution family shares: :class:`Tail`, :class:`Distribution`, :class:`Family`.

A family module (``kl_core/estimation/families/<family>.py``) defines its
distribution class (a :class:`Distribution`) and one :class:`Family` named
``FAMILY``: its parameters, spec syntax, menu label and help line.  The
registry (:mod:`kl_core.estimation.families`) finds the modules by themselves.
"""

from __future__ import annotations

import dataclasses
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core.validation import InputError, Message, check_finite, check_positive, check_positive_int

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

#: Parameter ranges inside which double precision can still compare two
#: distributions (``log_ratio`` squares 1/σ and μ/σ; a t sampler with tiny df
#: draws values whose squares overflow).
PRACTICAL = {"scale": (1e-6, 1e6), "location": 1e6, "df": 0.1, "logit": 1e4}

#: Slider ranges of the picker: (lo, hi, step) of a linear slider, (lo, hi) of a log-scale one.
LOCATION_SLIDER = (-5.0, 5.0, 0.05)
SCALE_SLIDER = (0.1, 10.0)
WEIGHT_SLIDER = (0.05, 0.95, 0.05)


def num(x: float) -> str:
    """Format a parameter so that ``parse`` reads back the same float."""
    return repr(float(x)).removesuffix(".0") if float(x).is_integer() else repr(float(x))


def clean(x: float) -> float:
    """A slider's float without its binary noise (0.35000000000000003 → 0.35)."""
    return float(f"{float(x):.10g}")


# ---------------------------------------------------------------- tails


@dataclass(frozen=True)
class Tail:
    r"""The far-tail form of a log-density on one side of the real line.

    .. math:: \log d(x) = a\,x^2 + b\,|x| + c\,\log|x| + k + o(1),
              \qquad x \to \pm\infty,

    with the :math:`o(1)` term below :math:`10^{-50}` once
    :math:`|x| > 10^{50}` times every scale and location of the family.
    ``a``, ``b`` and ``c`` are the exact rationals of the float parameters, so
    a threshold such as :math:`\sigma_p = \sqrt2\,\sigma_q` is decided without
    rounding.

    **What it can describe**: Gaussian-type tails (:math:`a < 0`),
    exponential ones (:math:`a = 0,\ b < 0`: Laplace, logistic, whose
    correction :math:`-2\log(1 + e^{-|z|})` is exponentially small) and
    algebraic ones (:math:`a = b = 0`, :math:`c < -1`: Student t), and any
    of these times a power of :math:`|x|`; a finite mixture takes the
    component that decays slowest.  Differences and the blends
    :math:`(1-k)\,\text{tail}(q) + k\,\text{tail}(p)` stay in the form, which is
    all :mod:`kl_core.estimation.tails` needs.  **What it cannot**: stretched or
    compressed exponentials :math:`e^{-|x|^\beta}` with :math:`\beta \notin \{1, 2\}`
    (generalised normal), double exponentials (a Gumbel's :math:`e^{-e^{-x}}`
    side), :math:`\log\log` or oscillating terms, and bounded supports: a family
    with such a tail needs a new coefficient here and a row in the decision table
    of :mod:`kl_core.estimation.tails`.  Each family's ``tail`` method gives its
    coefficients.

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

    @classmethod
    def exponential(cls, rate: float, const: float) -> Tail:
        r"""An exponential tail :math:`-|x|/\text{rate} + k`, e.g. Laplace or logistic of scale ``rate``."""
        return cls(Fraction(0), -1 / Fraction(rate), Fraction(0), const)

    @classmethod
    def algebraic(cls, power: Fraction, const: float) -> Tail:
        r"""An algebraic tail :math:`|x|^{\text{power}}\,e^k`, e.g. Student t's :math:`-(\nu+1)`."""
        return cls(Fraction(0), Fraction(0), power, const)

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


def check_side(side: int) -> int:
    if side not in (1, -1):
        raise ValueError(f"side must be +1 or -1, got {side!r}")
    return side


def gaussian_tail(mu: float, sigma: float, side: int, log_weight: float = 0.0) -> Tail:
    """The tail of ``log w + log N(x; mu, sigma²)`` on ``side``."""
    s2 = Fraction(sigma) ** 2
    return Tail(
        Fraction(-1, 2) / s2,
        side * Fraction(mu) / s2,
        Fraction(0),
        log_weight - 0.5 * (mu / sigma) ** 2 - math.log(sigma) - LOG_SQRT_2PI,
    )


def abs_delta(x: np.ndarray, loc: float) -> np.ndarray:
    """|x − loc| − |loc|, without the cancellation of two large terms when loc is far out."""
    far, near = np.abs(x - loc), abs(loc)
    same_side = np.sign(x - loc) == np.sign(-loc)
    return np.where(same_side, np.sign(x - loc) * x, far - near)


# ---------------------------------------------------------------- distributions


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
        """The string that :func:`~kl_core.estimation.distributions.parse` turns back into this distribution."""

    @abstractmethod
    def logpdf(self, x: ArrayLike) -> np.ndarray:
        """Log density (log pmf for a categorical) at ``x``."""

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` independent samples with the generator ``rng``."""
        return self._sample(rng, check_rng_n(rng, n))

    @abstractmethod
    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """What a family writes for :meth:`sample`: ``rng`` and ``n`` are checked already."""

    def interval(self, coverage: float = 0.999) -> tuple[float, float]:
        """A central interval holding at least ``coverage`` of the mass."""
        return self._interval(check_coverage(coverage))

    @abstractmethod
    def _interval(self, coverage: float) -> tuple[float, float]:
        """What a family writes for :meth:`interval`: ``coverage`` is checked to lie in (0, 1)."""

    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Density (pmf for a categorical) at ``x``."""
        return np.exp(self.logpdf(x))

    def tail(self, side: int) -> Tail:
        """The far-tail form of ``logpdf`` as x → side·∞ (see :class:`Tail`)."""
        return self._tail(check_side(side))

    def _tail(self, side: int) -> Tail:
        """What a family with tails writes for :meth:`tail`: ``side`` is checked to be ±1."""
        raise ValueError(f"{type(self).__name__} has no tails: it is not a density on the real line")

    def centres(self) -> list[tuple[float, float]]:
        """(location, scale) of every component: the quadrature's breakpoints and scales."""
        return []

    def shifted(self, delta: float) -> Distribution:
        """This distribution moved by −delta (the quadrature works near each centre)."""
        raise ValueError(f"cannot move a {type(self).__name__}")

    def log_density_delta(self, x: np.ndarray) -> np.ndarray:
        """log d(x) − log d(0), without the cancellation of two large log-densities."""
        raise ValueError(f"no log-density difference for a {type(self).__name__}")

    def practical_parts(self) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The (name, value) of every scale and every location, for :meth:`practical_issue`."""
        return [], []

    def practical_issue(self) -> str:
        """Why this distribution is outside the practical range (:data:`PRACTICAL`), or ``""``."""
        lo, hi = PRACTICAL["scale"]
        loc_max = PRACTICAL["location"]
        scales, locations = self.practical_parts()
        for name, v in scales:
            if not lo <= v <= hi:
                return Message("{name} = {v:g} is outside [{lo:g}, {hi:g}]", name=name, v=v, lo=lo, hi=hi)
        for name, v in locations:
            if abs(v) > loc_max:
                return Message("{name} = {v:g} is beyond ±{most:g}", name=name, v=v, most=loc_max)
        return ""

    def __str__(self) -> str:
        return self.name


class LocationScale(Distribution):
    """A distribution with one location (finite) and one scale (> 0) among its fields.

    A family's dataclass names the two fields in :attr:`location_field` and
    :attr:`scale_field` (``loc`` and ``scale`` unless it says otherwise) and gets
    their checks, its quadrature centre and shift, and its practical range.  With
    :attr:`display_name` and :attr:`spec_name` set (``Laplace``, ``laplace``) it
    also gets ``name`` = ``Laplace(0, 1)`` and ``spec`` = ``laplace(0,1)``; a family
    with more parameters or another notation writes its own.
    """

    location_field: ClassVar[str] = "loc"
    scale_field: ClassVar[str] = "scale"
    display_name: ClassVar[str] = ""
    spec_name: ClassVar[str] = ""

    def __post_init__(self) -> None:
        loc, scale = self.location_field, self.scale_field
        object.__setattr__(self, loc, check_finite(getattr(self, loc), loc))
        object.__setattr__(self, scale, check_positive(getattr(self, scale), scale))

    def _location_scale(self) -> tuple[float, float]:
        return getattr(self, self.location_field), getattr(self, self.scale_field)

    @property
    def name(self) -> str:
        loc, scale = self._location_scale()
        return f"{self.display_name}({loc:g}, {scale:g})"

    @property
    def spec(self) -> str:
        loc, scale = self._location_scale()
        return f"{self.spec_name}({num(loc)},{num(scale)})"

    def centres(self) -> list[tuple[float, float]]:
        return [self._location_scale()]

    def shifted(self, delta: float) -> Distribution:
        loc, _ = self._location_scale()
        return dataclasses.replace(self, **{self.location_field: loc - delta})

    def practical_parts(self) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        loc, scale = self._location_scale()
        return [(self.scale_field, scale)], [(self.location_field, loc)]


def check_rng_n(rng: np.random.Generator, n: int) -> int:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return check_positive_int(n, "n")


def check_coverage(coverage: float) -> float:
    c = check_finite(coverage, "coverage")
    if not 0.0 < c < 1.0:
        raise ValueError(f"coverage must be in (0, 1), got {coverage!r}")
    return c


# ---------------------------------------------------------------- spec reading

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def floats(text: str, spec: str) -> list[float]:
    """The comma-separated numbers of a spec's brackets."""
    items = [s.strip() for s in text.split(",")] if text.strip() else []
    for s in items:
        if not re.fullmatch(NUMBER, s):
            raise InputError("spec {spec!r}: {s!r} is not a number", spec=spec, s=s)
    return [float(s) for s in items]


def arity(name: str, args: list[float], lo: int, hi: int, spec: str) -> None:
    """Refuse a spec with fewer than ``lo`` or more than ``hi`` numbers."""
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


# ---------------------------------------------------------------- the registry's entries


@dataclass(frozen=True)
class Param:
    """One parameter of a family, as the constructor, the spec and the picker see it.

    Attributes
    ----------
    name : str
        The constructor's keyword and the slider's id (``mu``, ``scale``, ``df`` …).
    label : str
        The slider's label, English, marked with ``N_`` (the app translates it).
    support : str
        ``"real"`` or ``"positive"``.
    default : float
        The value a spec may leave out (trailing parameters only) and a new distribution starts from.
    slider : str
        ``"linear"`` or ``"log"`` (log-scale steps).
    range : tuple of float
        (lo, hi, step) of a linear slider, (lo, hi) of a log-scale one; a value
        outside is kept (the slider widens, or gets one more step).
    role : str
        ``"location"``, ``"scale"`` or ``""``: what carries over when the picker switches family.
    """

    name: str
    label: str
    support: str = "real"
    default: float = 0.0
    slider: str = "linear"
    range: tuple[float, ...] = LOCATION_SLIDER
    role: str = ""


    @classmethod
    def location(cls, name: str, label: str) -> Param:
        """A location parameter: any real number, default 0, on a linear slider."""
        return cls(name, label, role="location")

    @classmethod
    def scale(cls, name: str, label: str) -> Param:
        """A scale parameter: > 0, default 1, on a log-scale slider over :data:`SCALE_SLIDER`."""
        return cls(name, label, "positive", 1.0, "log", SCALE_SLIDER, "scale")

@dataclass(frozen=True)
class Slider:
    """One slider of a distribution: what the picker shows and what :meth:`Family.with_value` changes.

    ``label`` is an English ``N_`` template, formatted with ``label_args``
    after translation.
    """

    id: str
    label: str
    value: float
    log: bool
    range: tuple[float, ...]
    label_args: tuple[tuple[str, object], ...] = ()


def _not_a_parameter(d: Distribution, knob_id: str) -> ValueError:
    return ValueError(f"knob_id {knob_id!r} is not a parameter of {d.spec}")


@dataclass(frozen=True)
class Family:
    """A distribution family as the registry holds it.

    Parameter-wise families (a fixed list of scalar parameters) need only
    ``key``, ``cls``, ``label``, ``help`` and ``params``; a family with a
    variable number of parameters (mixture, categorical) passes its own
    ``read``, ``sliders``, ``with_value`` and ``location_scale``.

    Attributes
    ----------
    key : str
        The spec's name (``normal``), also the picker's menu key.
    cls : type
        The :class:`Distribution` subclass.
    label : str
        Menu label, English, marked with ``N_``.
    help : str
        One line of the spec field's help, English, marked with ``N_``.
    params : tuple of Param
        The parameters in spec order.
    order : int
        Place in menus, help texts and error messages.
    aliases : tuple of str
        Other names the spec accepts (``gaussian``, ``n``).
    syntax : str
        The spec's shape in plain text, for error messages and the command line's help;
        by default ``key(param,param,...)``.
    min_args : int or None
        How many numbers a spec needs at least (the rest take their defaults); by default all.
    """

    key: str
    cls: type
    label: str
    help: str
    params: tuple[Param, ...] = ()
    order: int = 100
    aliases: tuple[str, ...] = ()
    syntax: str = ""
    min_args: int | None = None
    read: Callable[[str, str], Distribution] | None = None
    sliders_of: Callable[[Distribution], list[Slider]] | None = None
    set_value: Callable[[Distribution, str, float], Distribution | None] | None = None
    location_scale_of: Callable[[Distribution], tuple[float, float]] | None = None
    from_location_scale_of: Callable[[float, float], Distribution] | None = None

    @classmethod
    def of_location_scale(
        cls, family: type[LocationScale], label: str, help: str, *, location: str, scale: str,
        before: tuple[Param, ...] = (), **options: Any,
    ) -> Family:
        """The entry of a :class:`LocationScale` family, read from its class.

        Its key is the class's :attr:`~LocationScale.spec_name`, and its last two
        parameters are the class's location and scale fields (:meth:`Param.location`,
        :meth:`Param.scale`), after the parameters ``before`` (Student t's ν).
        ``label``, ``help``, ``location`` and ``scale`` are the ``N_``-marked menu
        label, spec help and slider labels; ``options`` are the other fields.
        """
        params = (*before, Param.location(family.location_field, location),
                  Param.scale(family.scale_field, scale))
        return cls(family.spec_name, family, label, help, params, **options)

    def __post_init__(self) -> None:
        if not self.syntax:
            object.__setattr__(self, "syntax", f"{self.key}({','.join(p.name for p in self.params)})")

    @property
    def discrete(self) -> bool:
        """True for a family of categorical distributions."""
        return bool(self.cls.discrete)

    @property
    def names(self) -> tuple[str, ...]:
        """Every name a spec may use for this family."""
        return (self.key, *self.aliases)

    def parse(self, body: str, spec: str) -> Distribution:
        """The distribution of a spec ``key(body)``; ``spec`` is the whole text, for messages."""
        if self.read is not None:
            return self.read(body, spec)
        args = floats(body, spec)
        lo = len(self.params) if self.min_args is None else self.min_args
        arity(self.key, args, lo, len(self.params), spec)
        return self.cls(*args)

    def default(self) -> Distribution:
        """The family's distribution at its parameters' defaults (a mixture: at location 0, scale 1)."""
        if not self.params and self.from_location_scale_of is not None:
            return self.from_location_scale_of(0.0, 1.0)
        return self.cls(**{p.name: p.default for p in self.params})

    def sliders(self, d: Distribution) -> list[Slider]:
        """One slider per parameter of ``d``, at ``d``'s values (none for a categorical)."""
        if self.sliders_of is not None:
            return self.sliders_of(d)
        return [Slider(p.name, p.label, getattr(d, p.name), p.slider == "log", p.range) for p in self.params]

    def with_value(self, d: Distribution, knob_id: str, value: float) -> Distribution:
        """``d`` with the slider ``knob_id`` set to ``value``; ``ValueError`` if it has none such."""
        if self.set_value is not None:
            new = self.set_value(d, knob_id, value)
            if new is None:
                raise _not_a_parameter(d, knob_id)
            return new
        if knob_id not in {p.name for p in self.params}:
            raise _not_a_parameter(d, knob_id)
        return dataclasses.replace(d, **{knob_id: value})

    def location_scale(self, d: Distribution) -> tuple[float, float]:
        """What the picker carries over to another family: ``d``'s location and scale."""
        if self.location_scale_of is not None:
            return self.location_scale_of(d)
        roles = {p.role: getattr(d, p.name) for p in self.params}
        return roles.get("location", 0.0), roles.get("scale", 1.0)

    def from_location_scale(self, loc: float, scale: float) -> Distribution:
        """A distribution of this family at ``loc`` and ``scale``, other parameters at their defaults."""
        if self.from_location_scale_of is not None:
            return self.from_location_scale_of(loc, scale)
        values = {p.name: {"location": loc, "scale": scale}.get(p.role, p.default) for p in self.params}
        return self.cls(**values)
