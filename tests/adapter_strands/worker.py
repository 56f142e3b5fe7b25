"""Worker child of the crash runs: ``python -m tests.adapter_strands.worker`` serves the flow its spec file describes."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from sessionflow import connect, serve_agent_flows
from sessionflow.testing import STATE_DIR_ENV
from tests.adapter_strands.harness import flow_from_spec

READY_LINE = "sessionflow worker ready"


async def main() -> None:
    flow = flow_from_spec(Path(os.environ[STATE_DIR_ENV]))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    client = await connect()
    print(READY_LINE, flush=True)
    await serve_agent_flows(client, [flow], stop=stop)


if __name__ == "__main__":
    asyncio.run(main())
