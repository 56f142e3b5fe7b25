"""Fixtures of the LangGraph adapter tests: the scripted model server and in-process serving."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager

import pytest

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSnapshot,
    AgentStatus,
    connect,
    serve_agent_flows,
)
from sessionflow.demo import ScriptedModelServer
from sessionflow.testing import wait_for_agent_snapshot


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


def unique(prefix: str) -> str:
    """A session ID or flow type no earlier run on the same dev server used."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@asynccontextmanager
async def serving(temporal_address: str, flow: AgentSessionFlow) -> AsyncGenerator[AgentSessionClient]:
    """Serve ``flow`` from this process while the block runs."""
    client = await connect(temporal_address)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        yield AgentSessionClient(client, flow)
    finally:
        stop.set()
        await worker


async def turn_ended(sessions: AgentSessionClient, session_id: str, turns: int = 1) -> AgentSnapshot:
    """Wait until ``turns`` turns have ended and the session waits for the user again."""

    def done(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        state = snapshot.state
        if state and state.turn_count >= turns and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
            return snapshot
        return None

    return await wait_for_agent_snapshot(
        sessions, session_id, done, description=f"turn {turns} to end", timeout=60
    )
