"""The app's navigation: the pages of :data:`lab.pages.PAGES`, and Streamlit's legacy ``pages/`` mode.

Streamlit 1.67 still has its first multipage mechanism.  When the entry
script has a ``pages/`` folder beside it, the *first* session of a fresh
server runs under a wrapper (``PagesManager.uses_pages_directory``) that
makes one page per file of ``pages/``, named and addressed by the file's stem,
until ``st.navigation`` is first called.  Left alone, that first session

* ran ``pages/<stem>.py`` on its own for a request to ``/<stem>``, with the
  file-name menu (``app | approx kl | …``) and the tab title ``<stem>``, and
  the server stayed in that mode;
* showed a "Page not found" dialog for a request to any other path (a
  canonical URL such as ``/estimator-lab`` when the file was
  ``estimator_lab.py``), and that dialog swallowed the first slider move.

So each page file is named after its URL (``pages/estimator-lab.py`` for
``/estimator-lab``; Home, the default page, is ``home.py``), which the wrapper
then finds, and two calls hand the session over to ``st.navigation``:

* :func:`leave_legacy_wrapper`, the first call of every page file: if the
  wrapper is running the page directly, switch the server to ``st.navigation``
  (as ``st.navigation`` itself does) and rerun; page hashes come from URL
  paths only, so the rerun lands on the same page, now through ``app.py``;
* :func:`navigation`, in ``app.py``: when the wrapper ran ``app.py`` (a request
  to ``/``), rerun once more so the session's first run is a plain one.

Links to the old underscore stems (``/estimator_lab``) are hidden alias pages
that switch to the canonical URL, keeping the link's query parameters.

Menu titles are translated into the run's language (``lab.language`` sets it
before the navigation is built); URL paths never change with the language.
The language itself, ``?lang=``, is bound in ``app.py``, so every page switch
keeps it.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from i18n import _
from lab.pages import PAGES, PageInfo

__all__ = ["leave_legacy_wrapper", "navigation"]


def _under_legacy_wrapper() -> bool:
    from streamlit.runtime.pages_manager import PagesManager

    return bool(PagesManager.uses_pages_directory)


def leave_legacy_wrapper() -> None:
    """Rerun through ``app.py`` if Streamlit's ``pages/`` wrapper started this page directly.

    ``st.navigation`` sets ``PagesManager.uses_pages_directory = False`` on its
    first call; the wrapper only runs a page without ``app.py`` while that flag
    is still true.  Setting it as ``st.navigation`` does and rerunning (same
    page hash) lets ``app.py`` take over.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def _link_params() -> dict[str, list[str]]:
    """The current query parameters, repeated keys kept (``?keys=k1&keys=k3``).

    The language is left out: it is bound to the switch in ``app.py``, which
    Streamlit carries onto every page itself (and refuses to set it directly).
    """
    from lab.language import KEY

    return {key: st.query_params.get_all(key) for key in st.query_params if key != KEY}


def _redirect(target: st.Page) -> Callable[[], None]:
    def redirect() -> None:
        st.switch_page(target, query_params=_link_params())

    return redirect


def _page(info: PageInfo, *, default: bool) -> st.Page:
    return st.Page(
        info.path,
        title=_(info.title),
        icon=info.icon,
        url_path=info.url_path or None,
        default=default,
    )


def _old_stem(info: PageInfo) -> str:
    """The URL of the page's file before the files were named after their URLs."""
    return info.url_path.replace("-", "_")


def navigation() -> st.Page:
    """``st.navigation`` over the pages (plus hidden aliases of old stems); returns the page to run."""
    under_wrapper = _under_legacy_wrapper()
    pages = [_page(info, default=(i == 0)) for i, info in enumerate(PAGES)]
    aliases = [
        st.Page(_redirect(page), title=_(info.title), url_path=_old_stem(info), visibility="hidden")
        for info, page in zip(PAGES, pages, strict=True)
        if _old_stem(info) != info.url_path
    ]
    page = st.navigation(pages + aliases)
    if under_wrapper:  # st.navigation has just left the legacy mode: start this session cleanly
        st.rerun()
    return page
