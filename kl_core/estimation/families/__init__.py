r"""The registry of distribution families: one module per family, found by itself.

Each module ``kl_core/estimation/families/<family>.py`` (a name without a
leading underscore) defines its :class:`~kl_core.estimation.families._base.Distribution`
subclass and ``FAMILY``, a :class:`Family` with

* its parameters (:class:`Param`: name, support, default, slider scale and range, role),
* its density and sampler (the class's ``logpdf`` and ``_sample``), its central
  interval (``_interval``), its spec (``parse`` reads ``key(...)``, the class's
  ``spec`` writes it back),
* its tail (the class's ``_tail``, a :class:`Tail`), the quadrature's
  breakpoints (``centres``, ``shifted``, ``log_density_delta``) and its
  practical range (``practical_parts``),
* its menu label and spec help line (English, marked for translation),

and, optionally, ``KL_CLOSED_FORMS`` (``{(type(a), type(b)): kl}``) and
``LOG_RATIOS`` (``{(type(p), type(q)): log_ratio}``).  The spec parser, the
exact values, the tail rules, the picker's sliders and the command line's help
read only this registry: adding a family is adding its module (and its tests).
The public ``sample``, ``interval`` and ``tail`` of
:class:`~kl_core.estimation.families._base.Distribution` check their arguments
and call the family's ``_sample``, ``_interval`` and ``_tail``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

from kl_core.estimation.families._base import (
    LOCATION_SLIDER,
    SCALE_SLIDER,
    WEIGHT_SLIDER,
    Distribution,
    Family,
    Param,
    Slider,
    Tail,
)

__all__ = [
    "FAMILIES",
    "LOCATION_SLIDER",
    "SCALE_SLIDER",
    "WEIGHT_SLIDER",
    "Distribution",
    "Family",
    "Param",
    "Slider",
    "Tail",
    "by_name",
    "closed_form_kl",
    "family_of",
    "log_ratio_fast",
    "syntax",
]


def _discover() -> tuple[dict[str, Family], dict[tuple[type, type], Callable], dict[tuple[type, type], Callable]]:
    found: list[Family] = []
    kls: dict[tuple[type, type], Callable] = {}
    ratios: dict[tuple[type, type], Callable] = {}
    # the directory's modules (not pkgutil: importing it costs the command line's start-up)
    names = sorted({e.name[:-3] for p in __path__ for e in os.scandir(p) if e.name.endswith(".py")})
    for name in names:
        if name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{name}")
        found.append(module.FAMILY)
        kls.update(getattr(module, "KL_CLOSED_FORMS", {}))
        ratios.update(getattr(module, "LOG_RATIOS", {}))
    found.sort(key=lambda f: (f.order, f.key))
    return {f.key: f for f in found}, kls, ratios


#: Every family, by key, in menu order.
FAMILIES, _CLOSED_KL, _LOG_RATIOS = _discover()
_BY_NAME = {name: f for f in FAMILIES.values() for name in f.names}
_BY_CLASS = {f.cls: f for f in FAMILIES.values()}


def by_name(name: str) -> Family | None:
    """The family a spec's name (key or alias, lower case) stands for.

    Parameters
    ----------
    name : str
        ``normal``, ``gaussian``, ``t`` …

    Returns
    -------
    Family or None
        The family, or ``None`` if no module declares that name.
    """
    return _BY_NAME.get(name)


def family_of(d: Distribution) -> Family:
    """The family of the distribution ``d``.

    Parameters
    ----------
    d : Distribution
        A distribution of one of the registry's families.

    Returns
    -------
    Family
        Its registry entry; ``ValueError`` if its class is none of the registry's.
    """
    try:
        return _BY_CLASS[type(d)]
    except KeyError:
        raise ValueError(f"d must be one of the lab's families, got {type(d).__name__}") from None


def syntax() -> str:
    """Every family's spec shape, for messages and the command line's help.

    Returns
    -------
    str
        ``"normal(mu,sigma), laplace(loc,scale), …"`` in menu order.
    """
    return ", ".join(f.syntax for f in FAMILIES.values())


def closed_form_kl(a: Distribution, b: Distribution) -> Callable[[Distribution, Distribution], float] | None:
    """The closed form of KL[a ‖ b] a family module declares (``KL_CLOSED_FORMS``).

    Parameters
    ----------
    a, b : Distribution
        The pair, in the order of KL[a ‖ b].

    Returns
    -------
    callable or None
        ``kl(a, b) -> float``, or ``None`` (then the exact values use quadrature).
    """
    return _CLOSED_KL.get((type(a), type(b)))


def log_ratio_fast(p: Distribution, q: Distribution) -> Callable | None:
    """A pair's own log p − log q (``LOG_RATIOS``, e.g. the Gaussian quadratic).

    Parameters
    ----------
    p, q : Distribution
        Target and sampler.

    Returns
    -------
    callable or None
        ``log_ratio(p, q, x) -> ndarray``, or ``None`` (then ``p.logpdf − q.logpdf``).
    """
    return _LOG_RATIOS.get((type(p), type(q)))
