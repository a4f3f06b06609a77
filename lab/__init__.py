"""The thin UI layer between ``kl_core`` and the pages in ``pages/``.

* :mod:`lab.pages`       – titles, URL paths and icons of the pages;
* :mod:`lab.navigation`  – ``st.navigation``, and the hand-over from Streamlit's legacy ``pages/`` mode;
* :mod:`lab.state`       – widgets bound to the URL (``bind="query-params"``);
* :mod:`i18n`        – ``_()``, ``N_()``, the run's language; :mod:`lab.language` – the ``?lang=`` switch;
* :mod:`lab.picker`      – the distribution picker: family menu and sliders over the spec string;
* :mod:`lab.spec_params` – a spec as sliders and back; :mod:`lab.grids` – slider steps;
* :mod:`lab.widgets`     – sample-size sliders, the seed, preset buttons;
* :mod:`lab.token_setting` – the Gradients page's vocabulary, drift, sampler and token table;
* :mod:`lab.notes`       – per page, the warnings, captions and table rows composed from the numbers;
* :mod:`lab.format`      – how numbers are written;
* :mod:`lab.cache`       – ``st.cache_data`` wrappers around core calls;
* :mod:`lab.export`      – PNG/SVG/CSV downloads;
* :mod:`lab.ui`          – charts with captions, tables, metric rows, formulas, the source viewer.

See ``docs/app_conventions.md``.
"""
