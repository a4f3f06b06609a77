"""The data files' snippet language: ``@{name}`` references, and prose fields as messages.

Any string of ``crosswalk.toml`` (and of ``kl_core/doctor/releases.toml``) may
contain ``@{name}``, a reference to the file's ``[snippets]`` table (snippets may
use other snippets; a cycle is refused).  :func:`_expand` replaces the references
by their text; :func:`prose` turns a field a user reads into a
:class:`kl_core.validation.Message` whose template keeps each snippet as a
placeholder, so that the app translates the sentence and each snippet once.
"""

from __future__ import annotations

import re
from typing import Any

from kl_core.validation import Message

__all__ = ["marked_message", "prose"]

_SNIPPET = re.compile(r"@\{(\w+)\}")


def _expand(text: str, snippets: dict[str, str], where: str, seen: tuple[str, ...] = ()) -> str:
    """Replace every ``@{name}`` in ``text`` by its snippet, recursively."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in snippets:
            raise ValueError(f"{where}: unknown snippet @{{{name}}}")
        if name in seen:
            raise ValueError(f"{where}: snippet @{{{name}}} refers to itself")
        return _expand(snippets[name], snippets, where, (*seen, name))

    return _SNIPPET.sub(one, text)



def marked_message(template: str, /, **params: Any) -> Message:
    """A :class:`Message` whose template is not a literal here: the catalog gets it elsewhere.

    From :func:`kl_core.libraries.babel_extractor.extract_messages` (a prose field of the data file), from an
    ``N_("...")`` literal (a word chosen from a table), or it is only
    placeholders and separators (a list of messages, nothing to translate).
    Babel extracts ``Message("...")`` calls only when the template is a literal;
    everything else goes through here so that the rule stays checkable.

    Parameters
    ----------
    template : str
        The English template, with ``{named}`` placeholders.
    **params
        Its values; a :class:`Message` among them is translated too.

    Returns
    -------
    Message
    """
    return Message.__new__(Message, template, **params)


def prose(text: str, snippets: dict[str, str], where: str = "", seen: tuple[str, ...] = ()) -> Message:
    """A prose field as a :class:`Message`: its English text is :func:`_expand`'s.

    The template is the field with its braces escaped and each ``@{name}`` as a
    ``{name}`` placeholder, whose param is the snippet's own message; so the app
    translates the sentence and each snippet once (``i18n.message``).

    Parameters
    ----------
    text : str
        The field as written in the data file.
    snippets : dict of str to str
        The file's ``[snippets]``.
    where, seen : str, tuple of str
        For error messages, and the snippets being expanded (a cycle is refused).

    Returns
    -------
    Message
        ``str(result)`` is the expanded English text.

    Raises
    ------
    ValueError
        If a snippet is unknown or refers to itself.
    """
    parts = _SNIPPET.split(text)  # text, name, text, name, ..., text
    template, params = "", {}
    for i, part in enumerate(parts):
        if i % 2 == 0:
            template += part.replace("{", "{{").replace("}", "}}")
            continue
        if part not in snippets:
            raise ValueError(f"{where}: unknown snippet @{{{part}}}")
        if part in seen:
            raise ValueError(f"{where}: snippet @{{{part}}} refers to itself")
        template += "{" + part + "}"
        params[part] = prose(snippets[part], snippets, where, (*seen, part))
    return marked_message(template, **params)

