"""How RL libraries compute their KL: the crosswalk, as data, and what follows from it.

``crosswalk.toml`` (the data) read by ``loading`` into ``schema``'s records;
``registry`` (the loaded crosswalk and the one table of library names and
aliases), ``lookups``, ``evaluation`` (an option's per-token value),
``snippets`` (the prose fields' ``@{name}`` language), ``babel_extractor``;
``crosswalk`` re-exports them.  ``clamps`` (what the libraries' clamps do) and
``loss_aggregation`` (sum or mean over tokens, and β).
"""
