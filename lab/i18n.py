"""Translations: every string a user reads goes through :func:`_`.

The app speaks English and Simplified Chinese.  Messages live in standard
gettext catalogs, ``locale/<lang>/LC_MESSAGES/messages.po`` (compiled to
``.mo``), managed with Babel; the English source strings are the English UI.

Rules for writing a translatable string:

* one ``_()`` per whole sentence, with named placeholders filled *after*
  translation: ``_("{n} samples per estimate").format(n=n)``, never strings
  glued from pieces (word order differs between English and Chinese);
* module-level constants are marked with :func:`N_` (no translation at import
  time) and translated with ``_()`` where they are shown;
* formulas (LaTeX), code, spec strings, library option names and published
  figures stay as they are, outside ``_()``.

The language of the current script run is held in a context variable, so the
pure chart builders in ``charts/`` can translate their titles without
importing streamlit.  ``app.py`` sets it at the start of every run.
Anything cached across runs that holds translated text must take the
language as part of its key.
"""

from __future__ import annotations

import gettext
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

__all__ = ["DOMAIN", "LANGUAGES", "LOCALE_DIR", "N_", "_", "language", "ngettext", "set_language"]

#: Language codes the app offers, English first (the source language).
LANGUAGES: tuple[str, ...] = ("en", "zh")
DOMAIN = "messages"
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"

_current: ContextVar[str] = ContextVar("kl_lab_language", default="en")


@lru_cache(maxsize=len(LANGUAGES))
def _catalog(lang: str) -> gettext.NullTranslations:
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


def set_language(lang: str) -> None:
    """Make ``lang`` (one of :data:`LANGUAGES`) the language of this script run."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    _current.set(lang)


def language() -> str:
    """The language of this script run."""
    return _current.get()


def _(message: str) -> str:
    """``message`` in the current language (itself in English, or if untranslated)."""
    return _catalog(_current.get()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form of a message for the count ``n``, translated."""
    return _catalog(_current.get()).ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Mark ``message`` for extraction without translating it now (module constants)."""
    return message
