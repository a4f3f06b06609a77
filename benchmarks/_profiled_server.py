"""``streamlit run`` with cProfile on: used by ``profile_pages.py --profile``.

Runs Streamlit's own command line (``python benchmarks/_profiled_server.py
run app.py ...``) with every script run profiled in its own thread and the
main thread (the event loop: serialising and sending the messages) profiled
too, in CPU time of each thread (``time.thread_time``: waiting for a core on a
busy machine is not counted).  ``SIGUSR1`` writes the statistics gathered since the last signal to the
file named by ``KL_PROFILE_OUT`` (pstats format) and starts afresh.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import signal
import sys
import threading
import time

from streamlit.runtime.scriptrunner import script_runner

#: CPU time of the thread by default; KL_PROFILE_TIMER=wall uses perf_counter (less overhead,
#: but a busy machine's waits count).
_TIMER = time.perf_counter if os.environ.get("KL_PROFILE_TIMER") == "wall" else time.thread_time
_lock = threading.Lock()
_done: list[cProfile.Profile] = []
_main = cProfile.Profile(_TIMER)
_original = script_runner.ScriptRunner._run_script_thread


def _profiled(self) -> None:  # type: ignore[no-untyped-def]
    prof = cProfile.Profile(_TIMER)
    prof.enable()
    try:
        _original(self)
    finally:
        prof.disable()
        with _lock:
            _done.append(prof)


def _dump(signum: int, frame: object) -> None:
    global _main
    _main.disable()
    with _lock:
        profiles, _done[:] = list(_done), []
    stats = pstats.Stats(_main)
    for prof in profiles:
        stats.add(prof)
    stats.dump_stats(os.environ["KL_PROFILE_OUT"])
    _main = cProfile.Profile(_TIMER)
    _main.enable()


script_runner.ScriptRunner._run_script_thread = _profiled
signal.signal(signal.SIGUSR1, _dump)

if __name__ == "__main__":
    from streamlit.web.cli import main

    _main.enable()
    sys.argv[0] = "streamlit"
    sys.exit(main())
