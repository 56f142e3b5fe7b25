"""The package README's example runs as documented."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "packages" / "adapter-openai" / "examples" / "support_agent.py"


async def test_the_support_agent_example_runs(temporal_address: str) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        env={**os.environ, "SESSIONFLOW_SERVER_ADDRESS": temporal_address},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), 120)
    text = output.decode()
    assert process.returncode == 0, text
    assert 'approving refund {"order_id":7}' in text
    assert "tool: refunded order 7 (idempotency key support-" in text
    assert "assistant: Order 7 arrived damaged, so I refunded it." in text
