"""The app's navigation: the six pages of :data:`lab.pages.PAGES`, and the legacy-folder trap.

Streamlit 1.67 still has its first multipage mechanism: when the entry script
has a ``pages/`` folder beside it, the *first* session of a fresh server runs
``app.py`` and each ``pages/*.py`` under a wrapper that names every page after
its file (``PagesManager.uses_pages_directory``).  A first request to
``/estimator-lab`` is harmless (the wrapper finds no such file, runs ``app.py``,
and ``st.navigation`` switches the server to our pages for good), but a first
request to a file-stem path such as ``/estimator_lab`` made the wrapper run
``pages/estimator_lab.py`` on its own, with the file-name menu and tab title,
and the server stayed in that mode.  Two pieces undo it:

* :func:`leave_legacy_wrapper`, the first call of every page file: if the
  wrapper is running the page, it does what ``st.navigation`` would have done
  (switch the server to ``st.navigation``) and reruns, so ``app.py`` runs;
* :func:`navigation` registers, beside the six pages, one hidden page per file
  stem (``/estimator_lab``, ``/home``, …) that only switches to the canonical
  URL and keeps the link's query parameters.  That rerun lands there, and so
  does any later request to a file-stem path.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from lab.pages import PAGES, PageInfo

__all__ = ["leave_legacy_wrapper", "navigation"]


def leave_legacy_wrapper() -> None:
    """Rerun through ``app.py`` if Streamlit's ``pages/`` wrapper started this page directly.

    ``st.navigation`` itself sets ``PagesManager.uses_pages_directory = False``
    on its first call; the wrapper only runs a page without ``app.py`` while
    that flag is still true.  Setting it as ``st.navigation`` does and
    rerunning (same page hash: the file-stem alias) lets ``app.py`` take over.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def _link_params() -> dict[str, list[str]]:
    """The current query parameters, repeated keys kept (``?keys=k1&keys=k3``)."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def _redirect(target: st.Page) -> Callable[[], None]:
    def redirect() -> None:
        st.switch_page(target, query_params=_link_params())

    return redirect


def _page(info: PageInfo, *, default: bool) -> st.Page:
    return st.Page(
        info.path,
        title=info.title,
        icon=info.icon,
        url_path=info.url_path or None,
        default=default,
    )


def navigation() -> st.Page:
    """``st.navigation`` over the six pages plus a hidden alias per file stem; returns the page to run."""
    pages = [_page(info, default=(i == 0)) for i, info in enumerate(PAGES)]
    aliases = [
        st.Page(_redirect(page), title=info.title, url_path=info.stem, visibility="hidden")
        for info, page in zip(PAGES, pages, strict=True)
        # Home, the default page, already answers to its stem (/home).
        if info.url_path and info.stem != info.url_path
    ]
    return st.navigation(pages + aliases)
