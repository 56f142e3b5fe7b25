"""Worker child of the differential crash runs: ``python -m tests.adapter_openai.differential.worker``.

It serves the flow its spec file describes. An agent with local MCP servers has them
connected first, as the adapter README asks of a worker (``async with server: serve``).
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from sessionflow import connect, serve_agent_flows
from sessionflow.testing import STATE_DIR_ENV
from tests.adapter_openai.differential.crash import flow_from_spec
from tests.adapter_openai.differential.harness import mcp_connected

READY_LINE = "sessionflow worker ready"


async def main() -> None:
    built, flow = flow_from_spec(Path(os.environ[STATE_DIR_ENV]))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with await mcp_connected(built.agent):
        client = await connect()
        print(READY_LINE, flush=True)
        await serve_agent_flows(client, [flow], stop=stop)


if __name__ == "__main__":
    asyncio.run(main())
