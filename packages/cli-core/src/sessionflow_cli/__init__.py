"""The `sessionflow` command: a terminal chat with durable agent sessions on Temporal.

`main` is the console entry point. The configuration lives in `sessionflow_cli.config`;
local tools come from `sessionflow_cli.local_tools`.
"""

from __future__ import annotations

__all__ = ["main"]


def main() -> None:
    """Console entry point: ``sessionflow [chat|init|sessions|frameworks|server] [options]``."""
    import os
    import sys

    from sessionflow_cli._main import main as run

    code = run()
    # Leave without finalizing the interpreter: Temporal's core threads may still call into
    # Python while it shuts down, which aborts the process instead of exiting with `code`.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if "logging" in sys.modules:  # a command that never logged has nothing to flush
        import logging

        logging.shutdown()
    os._exit(code)
