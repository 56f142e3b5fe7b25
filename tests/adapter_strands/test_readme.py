"""The README's runnable example runs as written (in the Strands environment), against the scripted model server."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.examples import own_temporal, readme_example, run_example


async def test_the_readme_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_example("adapter-strands"))
    answer = "Order 7 had already shipped; I cancelled it anyway, as you asked."
    async with own_temporal(tmp_path / "temporal") as temporal_address:
        with ScriptedModelServer() as model:
            model.script(
                "orders",
                [
                    ModelReply.call(ScriptedToolCall("call-1", "order_status", {"order_id": 7})),
                    ModelReply.call(ScriptedToolCall("call-2", "cancel_order", {"order_id": 7})),
                    ModelReply.say(answer),
                ],
            )
            env = {
                "TEMPORAL_ADDRESS": temporal_address,
                "OPENAI_BASE_URL": model.base_url("orders"),
                "OPENAI_API_KEY": "unused",
            }
            text = await run_example(script, env)
            requests = model.requests("orders")
    assert text.rstrip().endswith(answer), text
    # Both tools ran, the cancellation after its approval, and the model saw their results.
    assert len(requests) == 3, requests
    seen = requests[-1].tool_results()
    assert "order 7 shipped yesterday" in seen["call-1"], seen
    assert "cancelled order 7" in seen["call-2"], seen
