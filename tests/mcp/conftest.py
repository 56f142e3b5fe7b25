"""Fixtures of the MCP tests: a private connection pool per test, closed afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sessionflow.mcp import McpConnectionPool


@pytest.fixture
async def pool() -> AsyncIterator[McpConnectionPool]:
    pool = McpConnectionPool(connect_timeout=30.0)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """Where the fixture server records what it received."""
    folder = tmp_path / "server"
    folder.mkdir()
    return folder
