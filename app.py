"""KL Estimator Lab: the entry point.

Run with ``uv run streamlit run app.py``.  This file only sets up the page,
the language and the navigation; each page is a script in ``pages/`` (titles
and URL paths in ``lab/pages.py``, the navigation in ``lab/navigation.py``,
the language switch in ``lab/language.py``; see ``docs/app_conventions.md``).
"""

import os

import streamlit as st

from i18n import _, message
from lab.a11y import page_support
from lab.language import language_switch
from lab.navigation import navigation
from lab.pages import PAGES
from lab.state import check_link, unread_note
from lab.ui import glossary, page_style, run_status

language_switch()  # first: every text below is in the run's language
st.set_page_config(
    page_title=_("KL Estimator Lab"),
    page_icon=":material/query_stats:",
    layout="wide",
)

page_style()
page_support()  # <html lang>, the skip link, keyboard-reachable scroll boxes (issue 21)
page = navigation()
glossary(page.url_path)  # the sidebar's "Symbols": this page's notation (lab/notation.py)
if page.url_path != PAGES[0].url_path:
    # The browser tab names the page, so a teacher's open tabs stay distinguishable.
    st.set_page_config(page_title=_("{page} · KL Estimator Lab").format(page=page.title))
unread_note(page.url_path)  # a link's parameters that no run of the page has read yet (lab.state.check_link)
try:
    # A run over half a second (a cold link, a preset) says so on the page, not only in
    # Streamlit's corner; faster runs show nothing (st.spinner waits 0.5 s before drawing).
    with run_status().spinner(_("Updating the page…"), show_time=True):
        page.run()
except Exception as exc:
    # Last line of defence: a student never sees a traceback.  Tests set
    # KL_LAB_STRICT=1 (tests/conftest.py) so that a bug still fails them.
    if os.environ.get("KL_LAB_STRICT") == "1":
        raise
    st.error(
        _(
            "This view could not be computed for these settings ({error}: {reason}). "
            "Try less extreme values; the rest of the lab keeps working."
        ).format(error=type(exc).__name__, reason=message(exc)),
        icon=":material/error:",
    )
else:
    check_link(page.url_path)
