"""The thin UI layer between ``kl_core`` and the pages in ``pages/``.

* :mod:`lab.state`   – widgets bound to the URL (``bind="query-params"``);
* :mod:`lab.widgets` – composite pickers (a distribution from its spec string);
* :mod:`lab.cache`   – ``st.cache_data`` wrappers around core calls;
* :mod:`lab.export`  – PNG/SVG/CSV downloads;
* :mod:`lab.ui`      – charts with captions, formulas, and the source viewer.

See ``docs/app_conventions.md``.
"""
