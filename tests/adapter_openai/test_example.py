"""The package README's example runs as documented, against the scripted model server."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.examples import run_example

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "packages" / "adapter-openai" / "examples" / "support_agent.py"
)


async def test_the_support_agent_example_runs(temporal_address: str) -> None:
    with ScriptedModelServer() as model:
        model.script(
            "support",
            [
                ModelReply.call(ScriptedToolCall("call_status", "order_status", {"order_id": 7})),
                ModelReply.call(ScriptedToolCall("call_refund", "refund", {"order_id": 7})),
                ModelReply.say("Order 7 arrived damaged, so I refunded it."),
            ],
        )
        env = {
            "TEMPORAL_ADDRESS": temporal_address,
            "OPENAI_BASE_URL": model.base_url("support"),
            "OPENAI_API_KEY": "unused",
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
        }
        text = await run_example(EXAMPLE, env)
    assert 'approving refund {"order_id":7}' in text
    assert "tool: refunded order 7 (idempotency key support-" in text
    assert "assistant: Order 7 arrived damaged, so I refunded it." in text
