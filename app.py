"""KL Estimator Lab: the entry point.

Run with ``uv run streamlit run app.py``.  This file only sets up the page and
the navigation; each page is a script in ``pages/`` (titles and URL paths in
``lab/pages.py``, the navigation in ``lab/navigation.py``; see
``docs/app_conventions.md``).
"""

import os

import streamlit as st

from lab.navigation import navigation
from lab.pages import PAGES

st.set_page_config(
    page_title="KL Estimator Lab",
    page_icon=":material/query_stats:",
    layout="wide",
)

page = navigation()
if page.title != PAGES[0].title:
    # The browser tab names the page, so a teacher's open tabs stay distinguishable.
    st.set_page_config(page_title=f"{page.title} · KL Estimator Lab")
try:
    page.run()
except Exception as exc:
    # Last line of defence: a student never sees a traceback.  Tests set
    # KL_LAB_STRICT=1 (tests/conftest.py) so that a bug still fails them.
    if os.environ.get("KL_LAB_STRICT") == "1":
        raise
    st.error(
        f"This view could not be computed for these settings ({type(exc).__name__}: {exc}). "
        "Try less extreme values; the rest of the lab keeps working.",
        icon=":material/error:",
    )
