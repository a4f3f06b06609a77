"""Argument checks shared by the core modules, and translatable messages.

Each check raises ``ValueError`` with a message that names the offending
parameter, so that a user who mistypes an argument is told which one.

Messages a user of the app can meet (a mistyped distribution spec, a file
that cannot be audited, a config the doctor cannot read) are raised as
:class:`InputError`: a ``ValueError`` whose English text is made from a
*template* with named placeholders and its *params*.  The core and its
command line only ever show the English text (``str(exc)``); the app
translates the template and fills in the same params (``i18n.message``).
Each template is written once, here in the core, as the literal first
argument of ``InputError(...)`` or ``Message(...)``: the translation tools
(Babel, ``scripts/translations.py``) extract them from those calls.  An error can carry a second sentence for the app's user
(:meth:`InputError.worded`): the file, the column and what to do, in words,
while ``str(exc)`` keeps naming the parameter for programmatic callers.  Other
constants the app shows in words (an estimator's one-line summary) are marked
with the no-op :func:`N_`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from kl_core._docfill import docfill

__all__ = [
    "InputError",
    "Message",
    "N_",
    "as_float_array",
    "by_key",
    "check_finite",
    "check_positive",
    "check_positive_int",
    "registry_entry",
    "reason",
]


def N_(text: str) -> str:
    """Mark a constant the app shows (an estimator's summary) for translation; returns it unchanged.

    The core stays English: this only lets the translation tools find the
    text, and the app shows it as ``i18n._(text)``.

    Parameters
    ----------
    text : str
        The English text.

    Returns
    -------
    str
        ``text``, unchanged.
    """
    return text


class Message(str):
    """A sentence for a user: its English text, and the template and params it was made from.

    ``Message("{name} must be > 0, got {value!r}", name="sigma", value=-1.0)``
    is the string ``"sigma must be > 0, got -1.0"``; ``.template`` and
    ``.params`` let the app show it in another language.  A param may itself
    be a :class:`Message` (a reason inside a sentence); it is translated too.
    """

    template: str
    params: Mapping[str, Any]

    def __new__(cls, template: str, /, **params: Any) -> Message:
        self = super().__new__(cls, template.format(**params))
        self.template = template
        self.params = params
        return self

    def __reduce__(self) -> tuple:
        # st.cache_data pickles results; a str subclass would come back without its template.
        return (_message, (self.template, dict(self.params)))


def _message(template: str, params: dict[str, Any]) -> Message:
    return Message(template, **params)


class InputError(ValueError):
    """A ``ValueError`` whose text is a :class:`Message`: the template, the params, the English text.

    Raise it where a user's input is refused:
    ``raise InputError("spec {spec!r}: {s!r} is not a number", spec=spec, s=s)``,
    or with a :class:`Message` already made: ``raise InputError(message)``.
    Without params the text is taken literally (no placeholders).
    """

    user: Message
    """The sentence for the app's user (set by :meth:`worded`; else the same as ``message``)."""

    def __init__(self, template: str, /, **params: Any) -> None:
        if isinstance(template, Message) and not params:
            self.message = template
        elif not params:  # a fixed sentence: taken literally, braces and all
            self.message = Message(template.replace("{", "{{").replace("}", "}}"))
        else:
            self.message = Message(template, **params)
        super().__init__(str(self.message))
        self.user = self.message

    def worded(self, template: str | Message, /, **params: Any) -> InputError:
        """Give the error a sentence in the user's words (the file, the column, what to do); returns ``self``.

        ``raise InputError("path_or_buffer: {name!r} has no data rows", name=n).worded(
        "{file} has a header but no rows of data; …", file=n)``: the CLI and
        programmatic callers read ``str(exc)``, the app shows ``exc.user``.
        """
        self.user = template if isinstance(template, Message) and not params else Message(template, **params)
        return self

    @property
    def template(self) -> str:
        """The English template, with ``{named}`` placeholders."""
        return self.message.template

    @property
    def params(self) -> Mapping[str, Any]:
        """The values of the template's placeholders."""
        return self.message.params

    def __reduce__(self) -> tuple:
        return (_input_error, (type(self), self.message, self.user))


def _input_error(cls: type[InputError], message: Message, user: Message | None = None) -> InputError:
    exc = cls(message)
    if user is not None:
        exc.user = user
    return exc


def reason(exc: BaseException) -> str:
    """An exception's text, as a :class:`Message` when it has one (to nest in another message).

    Parameters
    ----------
    exc : BaseException
        The exception.

    Returns
    -------
    str
        Its :class:`Message` for an :class:`InputError`, else ``str(exc)``.
    """
    return exc.message if isinstance(exc, InputError) else str(exc)


def _check_sections(value: str, returns: str) -> str:
    """The Parameters, Returns and Raises sections every check below shares."""
    return f"""\
Parameters
----------
{value}
    The value to check.
name : str
    The parameter's name, for the error message.

Returns
-------
{returns}
    The checked value.

Raises
------
ValueError
    Naming ``name``, when the check fails."""


_CHECK_SECTIONS = {
    "array_check": _check_sections("x : array_like", "numpy.ndarray"),
    "float_check": _check_sections("value : float", "float"),
    "int_check": _check_sections("value : int", "int"),
}


@docfill(**_CHECK_SECTIONS)
def as_float_array(x: ArrayLike, name: str) -> np.ndarray:
    """Return ``x`` as a float64 array, or raise ``ValueError`` naming ``name``.

    %(array_check)s
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError("{name} must be numeric, got {got}", name=name, got=repr(x)[:60]) from exc
    if np.isnan(arr).any():
        raise InputError("{name} contains NaN", name=name)
    return arr


@docfill(**_CHECK_SECTIONS)
def check_finite(value: float, name: str) -> float:
    """Return ``value`` as a float if it is finite, else raise ``ValueError``.

    %(float_check)s
    """
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError("{name} must be a number, got {value!r}", name=name, value=value) from exc
    if not math.isfinite(v):
        raise InputError("{name} must be finite, got {value!r}", name=name, value=value)
    return v


@docfill(**_CHECK_SECTIONS)
def check_positive(value: float, name: str) -> float:
    """Return ``value`` as a float if it is finite and > 0, else raise ``ValueError``.

    %(float_check)s
    """
    v = check_finite(value, name)
    if v <= 0:
        raise InputError("{name} must be > 0, got {value!r}", name=name, value=value)
    return v


@docfill(**_CHECK_SECTIONS)
def check_positive_int(value: int, name: str) -> int:
    """Return ``value`` as an int if it is a whole number >= 1, else raise ``ValueError``.

    %(int_check)s
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise InputError("{name} must be a positive integer, got {value!r}", name=name, value=value)
    if value < 1:
        raise InputError("{name} must be >= 1, got {value!r}", name=name, value=value)
    return int(value)


_Entry = TypeVar("_Entry")


class _HasKey(Protocol):
    @property
    def key(self) -> str: ...


_Keyed = TypeVar("_Keyed", bound=_HasKey)


def by_key(*entries: _Keyed) -> dict[str, _Keyed]:
    """A registry: ``entries`` keyed by their ``key``, in the order given.

    Unlike a dict comprehension, it refuses two entries with the same key (a
    copied entry whose key was left unchanged would silently replace the first).

    Parameters
    ----------
    *entries : object
        The registry's entries, each with a ``key`` attribute (str).

    Returns
    -------
    dict of str to object
        ``{entry.key: entry}``.

    Raises
    ------
    ValueError
        If two entries have the same key.
    """
    registry: dict[str, _Keyed] = {}
    for entry in entries:
        if entry.key in registry:
            raise ValueError(f"entries must have distinct keys, got {entry.key!r} twice")
        registry[entry.key] = entry
    return registry


def registry_entry(registry: Mapping[str, _Entry], key: str, name: str) -> _Entry:
    """Return ``registry[key]``, or raise ``ValueError`` naming ``name`` and the valid keys.

    Parameters
    ----------
    registry : Mapping
        A registry, keyed by str.
    key : str
        The key asked for.
    name : str
        The parameter's name, for the error message.

    Returns
    -------
    object
        The entry.

    Raises
    ------
    ValueError
        If ``key`` is not a key of ``registry``.
    """
    if key not in registry:
        raise ValueError(f"{name} must be one of {sorted(registry)}, got {key!r}")
    return registry[key]
