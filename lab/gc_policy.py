"""Keep Python's garbage collector off the imported libraries.

Streamlit runs a full collection after every script run
(``runner.postScriptGC``), and Python runs one by itself now and then.  A full
collection visits every container object in the process, and about 160,000 of
them are the modules the lab imports (numpy, scipy, pandas, Altair, Streamlit
and their caches): ~65 ms of CPU per run on the project's machine, about half
of a run's cost, to find nothing, since modules live as long as the process.

:func:`freeze_new_imports` moves what exists into the collector's permanent
generation (``gc.freeze``) whenever modules were imported since the last
time, after one full collection so no garbage is frozen.  It is called by the
page building blocks (:func:`lab.ui.chart`, :func:`lab.ui.table`), so it runs
on a page's first runs in a process (each page imports its own modules) and
then costs one ``len(sys.modules)`` a call.  Objects made later (sessions,
cached results) are collected as before; frozen objects are still freed by
reference counting when nothing refers to them, but a reference cycle among
them (a session that was open during a freeze, say) is never collected, so
a process freezes at most ``MAX_FREEZES`` times.
"""

from __future__ import annotations

import gc
import sys
import threading

__all__ = ["MAX_FREEZES", "freeze_new_imports"]

#: Freezes per process at most (each page's first run imports its modules: ~10).
MAX_FREEZES = 32

_lock = threading.Lock()
_modules_at_freeze = 0
freezes = 0


def freeze_new_imports() -> bool:
    """Collect once and freeze every live object if modules were imported since the last freeze.

    Returns whether it froze.
    """
    global _modules_at_freeze, freezes
    if len(sys.modules) == _modules_at_freeze or freezes >= MAX_FREEZES:
        return False
    with _lock:
        n = len(sys.modules)
        if n == _modules_at_freeze or freezes >= MAX_FREEZES:
            return False
        gc.collect()
        gc.freeze()
        _modules_at_freeze = n
        freezes += 1
        return True
