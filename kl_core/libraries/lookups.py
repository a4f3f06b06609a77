"""Looking up the crosswalk: a library's options, one option (aliases accepted), its releases.

Library names are read through the registry (:func:`kl_core.libraries.registry.canonical_library`),
so any case and every alias of ``[[libraries]]`` works.
"""

from __future__ import annotations

from kl_core.libraries.registry import CROSSWALK, RELEASES, canonical_library
from kl_core.libraries.schema import ACTS_ON, CrosswalkEntry, Release

__all__ = ["lookup", "options", "releases"]


def options(library: str) -> list[CrosswalkEntry]:
    """Return every entry of one library, in table order.

    Parameters
    ----------
    library : str
        A name from :func:`~kl_core.libraries.registry.libraries` (case-insensitive), or an alias such as
        ``"sb3"`` or ``"huggingface/trl"``.

    Returns
    -------
    list of CrosswalkEntry
        The library's entries.

    Raises
    ------
    ValueError
        If ``library`` is unknown; the message lists the valid names.

    Examples
    --------
    >>> [e.option for e in options("cleanrl")]
    ['old_approx_kl', 'approx_kl']
    """
    name = canonical_library(library)
    return [e for e in CROSSWALK if e.library == name]


def lookup(library: str, option: str, *, acts_on: str | None = None) -> CrosswalkEntry:
    """Find the entry for one library option, accepting aliases.

    Parameters
    ----------
    library : str
        A name from :func:`~kl_core.libraries.registry.libraries` (case-insensitive) or a known alias.
    option : str
        The option or one of its aliases, exactly as the library spells it
        (e.g. ``"low_var_kl"``, ``"k3"``, ``"k3+"``).
    acts_on : {"reward", "loss", "metric"}, optional
        Needed when the same option name exists in two placements, as in verl
        (``algorithm.kl_penalty`` for the reward, ``actor.kl_loss_type`` for the
        loss) and OpenRLHF (``--algo.kl.use_loss``).

    Returns
    -------
    CrosswalkEntry
        The matching entry.

    Raises
    ------
    ValueError
        If the library or option is unknown (the message lists the valid
        choices), or if the option is ambiguous and ``acts_on`` is not given.

    Examples
    --------
    >>> lookup("verl", "k3", acts_on="loss").option
    'low_var_kl'
    >>> lookup("sb3", "approx_kl").estimator
    'k3'
    """
    name = canonical_library(library)
    if acts_on is not None and acts_on not in ACTS_ON:
        raise ValueError(f"acts_on must be None or one of {ACTS_ON}, got {acts_on!r}")
    entries = options(name)
    matches = [e for e in entries if option in e.names]
    if not matches:
        valid = sorted({n for e in entries for n in e.names})
        raise ValueError(f"option must be one of {valid} for library {name!r}, got {option!r}")
    if acts_on is not None:
        placed = [e for e in matches if e.acts_on == acts_on]
        if not placed:
            valid_places = sorted({e.acts_on for e in matches})
            raise ValueError(
                f"acts_on must be one of {valid_places} for {name} option {option!r}, got {acts_on!r}"
            )
        matches = placed
    if len(matches) > 1:
        places = {e.acts_on: e.setting for e in matches}
        raise ValueError(
            f"{name} option {option!r} exists in several placements; pass acts_on as one of "
            f"{sorted(places)} ({'; '.join(f'{k}: {v}' for k, v in sorted(places.items()))})"
        )
    return matches[0]


def releases(library: str | None = None) -> list[Release]:
    """Return the releases the crosswalk was read in, the current one of each library first.

    Parameters
    ----------
    library : str, optional
        A name from :func:`~kl_core.libraries.registry.libraries` (case-insensitive) or an alias; all
        libraries if omitted.

    Returns
    -------
    list of Release
        In file order, which lists each library's current release first.

    Raises
    ------
    ValueError
        If ``library`` is unknown.

    Examples
    --------
    >>> [(r.version, r.current) for r in releases("trl")]
    [('1.16.0', True), ('1.12.0', False), ('0.11.4', False)]
    """
    if library is None:
        return list(RELEASES)
    name = canonical_library(library)
    return [r for r in RELEASES if r.library == name]

