"""The library registry: the crosswalk's data, loaded once, and the one table of library names.

Every library is a ``[[libraries]]`` row of ``crosswalk.toml`` (:class:`Library`:
its name, the other spellings accepted for it, its Python packages).  Whatever
takes a library name from a user (:func:`kl_core.libraries.lookups.lookup`, the
doctor's ``--library``, a page's link) reads it with :func:`canonical_library`,
and the doctor recognises a library's code by :func:`library_packages`; nothing
else spells the libraries.
"""

from __future__ import annotations

from kl_core.libraries.loading import load_crosswalk
from kl_core.libraries.schema import CrosswalkEntry, Library, Release

__all__ = ["CROSSWALK", "LIBRARIES", "RELEASES", "canonical_library", "libraries", "library_packages"]

_DATA = load_crosswalk()

CROSSWALK: tuple[CrosswalkEntry, ...] = _DATA.entries
"""Every library option, in table order (from :data:`kl_core.libraries.loading.CROSSWALK_FILE`)."""

RELEASES: tuple[Release, ...] = _DATA.releases
"""The releases the entries were read in, with their defaults."""

LIBRARIES: tuple[Library, ...] = _DATA.libraries
"""Every library, in the order of the file's ``[[libraries]]``."""

_BY_SPELLING = {n: lib.name for lib in LIBRARIES for n in lib.names}


def libraries() -> list[str]:
    """Return the library names, in table order.

    Returns
    -------
    list of str
        E.g. ``["TRL", "verl", "OpenRLHF", "CleanRL", "Stable-Baselines3"]``.

    Examples
    --------
    >>> libraries()[:2]
    ['TRL', 'verl']
    """
    return [lib.name for lib in LIBRARIES]


def canonical_library(library: str) -> str:
    """The name of the library that ``library`` spells (any case, or an alias).

    Parameters
    ----------
    library : str
        A name from :func:`libraries` (case-insensitive), or an alias such as
        ``"sb3"`` or ``"huggingface/trl"``.

    Returns
    -------
    str
        The library's name, as in :func:`libraries`.

    Raises
    ------
    ValueError
        If ``library`` is not a string or names no library; the message lists the names.

    Examples
    --------
    >>> canonical_library("SB3"), canonical_library(" trl ")
    ('Stable-Baselines3', 'TRL')
    """
    if not isinstance(library, str):
        raise ValueError(f"library must be a string, one of {libraries()}, got {library!r}")
    name = _BY_SPELLING.get(library.strip().lower())
    if name is None:
        raise ValueError(f"library must be one of {libraries()} (case-insensitive), got {library!r}")
    return name


def library_packages() -> tuple[str, ...]:
    """Every library's top-level Python packages, in table order (e.g. ``"trl"``, ``"verl"``, ``"recipe"``).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> "openrlhf" in library_packages()
    True
    """
    return tuple(p for lib in LIBRARIES for p in lib.packages)
