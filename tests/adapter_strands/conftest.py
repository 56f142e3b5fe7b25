"""Fixtures: a scripted model server per test.

These tests run in the Strands environment (``bash ci/strands.sh``): Strands needs mcp<2.2,
the workspace's default environment has mcp 2.3 for the public MCP servers of tests/mcp
(see ci/strands.sh). In the default environment this folder is not collected.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator

import pytest

from sessionflow.demo import ScriptedModelServer

if importlib.util.find_spec("strands") is None:
    collect_ignore_glob = ["*.py"]


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server
