"""The `sessionflow` command: a terminal chat with durable agent sessions on Temporal.

`main` is the console entry point. The configuration lives in `sessionflow_cli.config`;
local tools come from `sessionflow_local_tools`.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Console entry point: ``sessionflow [chat|init|sessions|frameworks|server] [options]``."""
    from sessionflow_cli._main import main as run

    code = run()
    if "temporalio" not in sys.modules:
        # A command that never loaded Temporal (`--version`, `frameworks`, `init`) has no core
        # threads: a plain exit, without importing the engine binding only to leave.
        sys.exit(code)
    # Leave without finalizing the interpreter: Temporal's core threads may still call into
    # Python while it shuts down, which aborts the process instead of exiting with `code`.
    from sessionflow.temporal import exit_without_teardown

    exit_without_teardown(code)
