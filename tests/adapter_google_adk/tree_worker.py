"""Worker child: `python -m tests.adapter_google_adk.tree_worker` serves the tree of its state folder."""

from __future__ import annotations

import os
from pathlib import Path

from sessionflow import run_agent_worker
from sessionflow.testing import STATE_DIR_ENV
from tests.adapter_google_adk.tree_agents import load_tree_flow


def main() -> None:
    run_agent_worker([load_tree_flow(Path(os.environ[STATE_DIR_ENV]))])


if __name__ == "__main__":
    main()
