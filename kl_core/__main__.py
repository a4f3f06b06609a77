"""``python -m kl_core``: see :mod:`kl_core.cli.main`.

Two things here make the process itself cheaper; neither changes an output.
"""

import os
import sys

from kl_core.cli.main import main

__all__: list[str] = []


def _keep_freed_memory() -> None:
    """Let glibc's malloc keep freed blocks for reuse instead of returning them at once.

    The Monte Carlo engine allocates and frees a few MB of chunk-sized
    temporaries per chunk.  By default glibc hands such blocks back to the
    kernel (munmap, heap trimming) as soon as they are freed, and the next chunk
    pays page faults to get them again: about a fifth of the 10M-sample
    table's CPU time.  A command-line process is short-lived, so it keeps them.
    Nothing happens where there is no glibc ``mallopt`` (macOS, Windows, musl).
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # from glibc's malloc.h
    mallopt(m_mmap_threshold, 32 << 20)  # blocks up to 32 MB come from the heap
    mallopt(m_trim_threshold, 256 << 20)  # and up to 256 MB of free heap is kept


def _exit(code: int) -> None:
    """Flush the output and end the process without tearing the interpreter down.

    The command's work is done; unloading numpy and the rest module by module
    would add 20–30 ms of CPU to every run.  No thread is left running
    (:func:`kl_core.estimation.montecarlo.simulate` joins its pool).
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader has gone (`... | head`): as main() does, no error
            pass
        except ValueError:  # already closed by main() after a broken pipe
            pass
        except OSError as exc:  # e.g. a full disk: the output is incomplete
            print(f"error: could not write the output: {exc}", file=sys.__stderr__)
            code = code or 1
    os._exit(code)


if __name__ == "__main__":
    _keep_freed_memory()
    _exit(main())
