"""Worker child of the MCP crash test: ``python -m tests.mcp.worker``.

It lists the fixture server's tools on its own event loop (so the pooled connection is
the one its tool steps use), then serves the flow.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from sessionflow import connect, serve_agent_flows
from sessionflow.testing import STATE_DIR_ENV
from tests.mcp.crash_flow import build_flow, mcp_source


async def main() -> None:
    state_dir = Path(os.environ[STATE_DIR_ENV])
    source = mcp_source(state_dir)
    tools = await source.list_tools()
    flow = build_flow(state_dir, tools)
    client = await connect()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print("sessionflow worker ready", flush=True)
    try:
        await serve_agent_flows(client, [flow], stop=stop)
    finally:
        await source.aclose()


if __name__ == "__main__":
    asyncio.run(main())
