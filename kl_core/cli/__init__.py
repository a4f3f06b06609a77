"""``python -m kl_core``: ``main`` (the parser), one module per command (``table``,
``kl``, ``audit``, ``doctor``, ``grad``, ``quiz``, ``sequence``), each registered
through ``_common.Command``.
"""
