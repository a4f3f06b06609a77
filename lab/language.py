"""The language switch: English or Simplified Chinese, in the sidebar of every page, bound to ``?lang=``.

``app.py`` calls :func:`language_switch` first on every run, before any text
is drawn.  How the language is chosen:

* a link's ``?lang=en`` or ``?lang=zh`` wins, on every page;
* a link without ``lang`` opens in the browser's language (Streamlit's
  ``st.context.locale``, the browser's ``navigator.language``: ``zh-*`` gives
  Chinese, anything else English), and that language is written into the URL
  at once, so the link the user then shares opens in the same language for
  everyone;
* the switch keeps every other widget's value: widgets are identified by
  their URL keys, not their (translated) labels, and :func:`lab.state.relabel`
  rewrites select-type values in the new language's words.

The widget is bound in ``app.py``, outside the pages, so Streamlit keeps
``?lang=`` on every page switch made in the browser: the sidebar menu and
``st.page_link`` (with or without its own ``query_params``, which must not
name ``lang``: it would appear twice) both carry it.  ``st.switch_page`` with
``query_params`` clears every parameter it is not given and refuses a bound
one, so after it the session keeps its language but the URL shows none; only
the hidden aliases of the old underscore URLs (:mod:`lab.navigation`) switch
that way, and those links predate ``?lang=``.

The widget's default is "no choice" rather than English, so ``?lang=en`` is
written out too: a link made in English stays English for a reader whose
browser prefers Chinese.
"""

from __future__ import annotations

import streamlit as st

import i18n
from i18n import _
from lab import state

__all__ = ["KEY", "LABEL", "language_switch"]

#: The URL key of the language.
KEY = "lang"
#: The switch's label, in both languages so that anyone can find it.
LABEL = "Language · 语言"  # i18n: ok


def _from_link() -> str | None:
    raw = st.query_params.get_all(KEY)
    return raw[-1] if raw and raw[-1] in i18n.LANGUAGES else None


def language_switch() -> str:
    """Draw the switch in the sidebar, make its language this run's (:func:`i18n.set_language`), return it."""
    state.start_run()
    browser = i18n.from_locale(st.context.locale)
    if KEY not in st.session_state and _from_link() is None:
        # No usable language in the link: the browser's, written into the URL;
        # an unusable ?lang=fr is dropped by Streamlit, and named in a note.
        st.session_state[KEY] = browser
        raw = st.query_params.get_all(KEY)
        if raw:
            state.dropped_link(KEY, raw, browser)
        else:
            st.query_params[KEY] = browser
    i18n.set_language(st.session_state.get(KEY) or _from_link() or browser)
    with st.sidebar:
        chosen = state.segmented(
            LABEL,
            KEY,
            i18n.LANGUAGES,
            value=None,
            help=_(
                "en: English · zh: 简体中文. The language is part of the link (?lang=en or "
                "?lang=zh): a shared link opens in the same language, with the same settings."
            ),
            on_change=state.relabel,
        )
    lang = chosen or browser  # None only on a history entry from before the language was set
    i18n.set_language(lang)
    return lang
