"""Worker child serving the local tools flow: `python -m tests.local_tools.local_tools_worker`.

With `FREEZE_AT_ENV` set to a stage of `sessionflow_local_tools._paths.checkpoint` (such as
``before_rename``), a file tool that reaches it writes `FREEZE_MARKER_ENV`'s file and waits
there for good, so a test can SIGKILL the worker at that exact moment of a write.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from sessionflow import run_agent_worker
from sessionflow_local_tools import _paths
from tests.local_tools._session import FLOW_TYPE_ENV, MODEL_URL_ENV, WORKSPACE_ENV, local_tools_flow

FREEZE_AT_ENV = "LOCAL_TOOLS_TEST_FREEZE_AT"
FREEZE_MARKER_ENV = "LOCAL_TOOLS_TEST_FREEZE_MARKER"


def _freeze_at(stage: str, marker: Path) -> None:
    def hook(reached: str) -> None:
        if reached == stage:
            marker.write_text(str(os.getpid()))
            time.sleep(3600)  # the tool's own thread: the worker keeps heartbeating until killed

    _paths.race_hook = hook


def main() -> None:
    if os.environ.get(FREEZE_AT_ENV):
        _freeze_at(os.environ[FREEZE_AT_ENV], Path(os.environ[FREEZE_MARKER_ENV]))
    flow = local_tools_flow(
        os.environ[FLOW_TYPE_ENV], Path(os.environ[WORKSPACE_ENV]), os.environ[MODEL_URL_ENV]
    )
    run_agent_worker([flow])


if __name__ == "__main__":
    main()
