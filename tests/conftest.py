"""Shared fixtures: one real Temporal dev server for the whole test run."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sessionflow.temporal import DevServer, DevServerConfig
from sessionflow.testing import SERVER_ADDRESS_ENV


@pytest.fixture(scope="session")
async def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """Start the dev server once per run (or use the one named in the environment)."""
    preset = os.environ.get(SERVER_ADDRESS_ENV)
    if preset:
        yield preset
        return
    server = DevServer(DevServerConfig(data_dir=Path(tmp_path_factory.mktemp("temporal"))))
    handle = await server.start()
    os.environ[SERVER_ADDRESS_ENV] = handle.address
    try:
        yield handle.address
    finally:
        os.environ.pop(SERVER_ADDRESS_ENV, None)
        await server.stop()
