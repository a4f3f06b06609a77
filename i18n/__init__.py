"""Translations: every string a user reads goes through :func:`_`.

The app speaks English and Simplified Chinese.  Messages live in standard
gettext catalogs, ``locale/<lang>/LC_MESSAGES/messages.po`` (compiled to
``.mo``, both committed), managed with Babel; the English source strings are
the English UI.  ``uv run python scripts/translations.py`` extracts the
strings, updates the catalogs and compiles them (docs/app_conventions.md,
"Translating").

Rules for writing a translatable string:

* one ``_()`` per whole sentence, with named placeholders filled *after*
  translation: ``_("{n} samples per estimate").format(n=n)``, never strings
  glued from pieces (word order differs between English and Chinese);
* module-level constants are marked with :func:`N_` (no translation at import
  time) and translated with ``_()`` where they are shown;
* formulas (LaTeX), code, spec strings, library option names and published
  figures stay as they are, outside ``_()``;
* the core's messages (``kl_core.validation.Message`` and ``InputError``:
  templates with named params) are shown with :func:`message`.

The language of the current script run is held in a context variable, so the
pure chart builders in ``charts/`` can translate their titles without
importing streamlit.  ``app.py`` sets it at the start of every run
(:func:`lab.language.language_switch`).  Anything cached across runs that
holds translated text must take the language as part of its key.
"""

from __future__ import annotations

import gettext
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

from kl_core.validation import InputError, Message

__all__ = [
    "DOMAIN",
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "LOCALE_DIR",
    "N_",
    "Nn_",
    "_",
    "from_locale",
    "language",
    "message",
    "ngettext",
    "npgettext",
    "pgettext",
    "set_language",
    "using",
]

#: Language codes the app offers, English first (the source language).
LANGUAGES: tuple[str, ...] = ("en", "zh")
#: Each language in its own words, for the switch (never translated).
LANGUAGE_NAMES: dict[str, str] = {"en": "English", "zh": "中文"}
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


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Translate into ``lang`` inside the ``with`` block, then restore the run's language.

    Used to read a label in every language (a link made in Chinese holds the
    Chinese label of an option; :mod:`lab.state` still understands it in English).
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    token = _current.set(lang)
    try:
        yield
    finally:
        _current.reset(token)


def from_locale(locale: str | None) -> str:
    """The app language for a browser locale (``navigator.language``): ``zh-*`` → ``"zh"``, else ``"en"``."""
    if isinstance(locale, str) and locale.strip().lower().replace("_", "-").split("-")[0] == "zh":
        return "zh"
    return "en"


def _(message: str) -> str:
    """``message`` in the current language (itself in English, or if untranslated)."""
    return _catalog(_current.get()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form of a message for the count ``n``, translated."""
    return _catalog(_current.get()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the current language, as meant in ``context``.

    For a short message that means different things in different places: the
    English ``"from"`` is a histogram bin's lower edge in one chart and the
    source of a setting in the config doctor's table.  Each use gets its own
    ``msgctxt`` in the catalog, so each gets its own translation.
    """
    return _catalog(_current.get()).pgettext(context, message)


def npgettext(context: str, singular: str, plural: str, n: int) -> str:
    """:func:`ngettext` with a context (see :func:`pgettext`)."""
    return _catalog(_current.get()).npgettext(context, singular, plural, n)


def N_(message: str) -> str:
    """Mark ``message`` for extraction without translating it now (module constants)."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a singular and plural pair for extraction without translating it now (module constants for
    :func:`ngettext`)."""
    return singular, plural


def message(text: object) -> str:
    """A core message, an exception or a string, in the current language.

    A :class:`kl_core.validation.Message` (or an ``InputError``: its ``user``
    sentence, which names the file and the column in words where the core
    gave one, else its message) is shown as ``_(template).format(**params)``, its params that are messages
    themselves translated first; anything else as ``str(text)`` (English, the
    fallback for a message without a template).  A translation whose
    placeholders do not fit the params falls back to the English text, so a
    mistake in the catalog never hides an error from the user.
    """
    if isinstance(text, InputError):
        text = text.user
    if not isinstance(text, Message):
        return str(text)
    params = {k: message(v) if isinstance(v, (Message, InputError)) else v for k, v in text.params.items()}
    try:
        return _(text.template).format(**params)
    except (KeyError, IndexError, ValueError, AttributeError):
        return str(text)
