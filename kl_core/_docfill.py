"""Docstring sections that several functions share, written once (scipy's ``doccer`` pattern).

A docstring names a shared section on a line of its own, ``%(name)s``;
:func:`docfill` replaces that line by the section, indented like it, when the
function is defined.  The docstring reads complete at run time (``help()``,
``inspect.getdoc``, Sphinx, the doctests); only the source shows the placeholder::

    _SECTIONS = {"value_name": "value : float\\n    The value to check.\\nname : str\\n    ..."}

    @docfill(**_SECTIONS)
    def check_finite(value: float, name: str) -> float:
        \"\"\"Return ``value`` as a float if it is finite.

        Parameters
        ----------
        %(value_name)s
        \"\"\"
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["docfill", "fill", "lookup_sections"]

T = TypeVar("T")

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def fill(doc: str, sections: dict[str, str]) -> str:
    """Replace every line ``%(name)s`` of ``doc`` by ``sections[name]``, indented like that line.

    Parameters
    ----------
    doc : str
        A docstring.
    sections : dict of str to str
        The sections by name; each is dedented, then indented like its placeholder.

    Returns
    -------
    str
        The docstring with every placeholder filled.

    Raises
    ------
    KeyError
        If a placeholder names no section.
    """

    def section(m: re.Match[str]) -> str:
        text = textwrap.dedent(sections[m[2]]).strip("\n")
        return textwrap.indent(text, m[1])

    return _PLACEHOLDER.sub(section, doc)


def docfill(**sections: str) -> Callable[[T], T]:
    """Decorator: fill the ``%(name)s`` lines of a function's or class's docstring (:func:`fill`).

    Parameters
    ----------
    **sections : str
        The sections by name.

    Returns
    -------
    callable
        The decorator; it returns the object itself, its ``__doc__`` filled
        (left as it is when Python runs with ``-OO`` and there is none).
    """

    def decorate(obj: T) -> T:
        if obj.__doc__:
            obj.__doc__ = fill(obj.__doc__, sections)
        return obj

    return decorate


def lookup_sections(param: str, registry: str, returns: str) -> str:
    """The Parameters, Returns and Raises sections of a function that returns one registry entry.

    Parameters
    ----------
    param : str
        The function's parameter, the entry's key (``key``, ``name``).
    registry : str
        The registry's name as Sphinx cross-references it (``PATHS``).
    returns : str
        The entry's type.

    Returns
    -------
    str
        The sections, for a ``%(name)s`` placeholder (:func:`docfill`).
    """
    return f"""\
Parameters
----------
{param} : str
    A key of :data:`{registry}`.

Returns
-------
{returns}
    The entry.

Raises
------
ValueError
    If ``{param}`` is not a key of :data:`{registry}`."""
