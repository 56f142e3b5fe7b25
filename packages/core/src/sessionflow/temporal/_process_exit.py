"""Ending a process that used Temporal without the interpreter's teardown.

The threads of temporalio's Rust bridge can outlive the event loop, and one that touches
the GIL while CPython finalizes aborts the process (``Fatal Python error:
PyGILState_Release``, SIGABRT; temporalio/sdk-python issue 300) instead of exiting with
its code. A process that has finished its work (the `sessionflow` command, a stopped
worker) flushes its output and logs and leaves at once. This module imports nothing heavy,
so the command's fast paths stay fast.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

__all__ = ["exit_without_teardown"]


def exit_without_teardown(code: int = 0) -> NoReturn:
    """Flush stdout, stderr and logging (if it was used), then `os._exit(code)`."""
    if "logging" in sys.modules:  # a process that never logged has nothing to flush
        import logging

        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stream has nothing more to say
    os._exit(code)
