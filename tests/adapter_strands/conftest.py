"""Fixtures: a scripted model server per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sessionflow.demo import ScriptedModelServer


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server
