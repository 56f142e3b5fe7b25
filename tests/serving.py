"""Serving a flow from the test process while a block runs (the differential harnesses of every adapter)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from sessionflow import AgentSessionClient, AgentSessionFlow, connect, serve_agent_flows

__all__ = ["serving"]


@asynccontextmanager
async def serving(temporal_address: str, flow: AgentSessionFlow) -> AsyncGenerator[AgentSessionClient]:
    """Serve ``flow`` from this process (a real worker on the dev server) while the block runs."""
    client = await connect(temporal_address)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        yield AgentSessionClient(client, flow)
    finally:
        stop.set()
        await worker
