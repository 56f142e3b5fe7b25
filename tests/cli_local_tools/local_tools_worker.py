"""Worker child serving the local tools flow: `python -m tests.cli_local_tools.local_tools_worker`."""

from __future__ import annotations

import os
from pathlib import Path

from sessionflow.temporal import run_agent_worker
from tests.cli_local_tools._session import FLOW_TYPE_ENV, MODEL_URL_ENV, WORKSPACE_ENV, local_tools_flow


def main() -> None:
    flow = local_tools_flow(
        os.environ[FLOW_TYPE_ENV], Path(os.environ[WORKSPACE_ENV]), os.environ[MODEL_URL_ENV]
    )
    run_agent_worker([flow])


if __name__ == "__main__":
    main()
