"""The package README's example runs as documented."""

from __future__ import annotations

from pathlib import Path

from tests.examples import run_example

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "packages" / "adapter-openai" / "examples" / "support_agent.py"
)


async def test_the_support_agent_example_runs(temporal_address: str) -> None:
    text = await run_example(EXAMPLE, {"SESSIONFLOW_SERVER_ADDRESS": temporal_address})
    assert 'approving refund {"order_id":7}' in text
    assert "tool: refunded order 7 (idempotency key support-" in text
    assert "assistant: Order 7 arrived damaged, so I refunded it." in text
