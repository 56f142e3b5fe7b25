"""Worker child of the differential crash runs: ``python -m tests.adapter_openai.differential.worker``."""

from __future__ import annotations

import os
from pathlib import Path

from sessionflow import run_agent_worker
from sessionflow.testing import STATE_DIR_ENV
from tests.adapter_openai.differential.crash import flow_from_spec


def main() -> None:
    run_agent_worker([flow_from_spec(Path(os.environ[STATE_DIR_ENV]))])


if __name__ == "__main__":
    main()
