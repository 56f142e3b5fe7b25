"""examples/openai-agents/support_agent.py as a user runs it, against the scripted model server.

``OPENAI_BASE_URL`` points the agent at the scripted server; the program is not changed
for the test. The first run is SIGKILLed while it asks to approve the refund; the second,
with ``--resume``, approves: the refund runs once and the answer streams.
"""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.example_programs._running import EXAMPLES, read_until, start

EXAMPLE = EXAMPLES / "openai-agents" / "support_agent.py"
PROMPT = re.compile(r"approve refund .*\? \[y/n\] ")


async def test_the_support_agent_resumes_after_a_crash_at_its_approval(
    temporal_address: str, tmp_path: Path
) -> None:
    with ScriptedModelServer() as model:
        model.script(
            "support",
            [
                ModelReply.call(ScriptedToolCall("call_status", "order_status", {"order_id": 7})),
                ModelReply.call(ScriptedToolCall("call_refund", "refund", {"order_id": 7})),
                ModelReply(text_chunks=["Order 7 arrived damaged, ", "so I refunded it."]),
            ],
        )
        env = {
            "SESSIONFLOW_SERVER_ADDRESS": temporal_address,
            "OPENAI_BASE_URL": model.base_url("support"),
            "OPENAI_API_KEY": "unused",
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
        }
        first = await start(EXAMPLE, [], env, tmp_path)
        try:
            shown = await read_until(first, PROMPT, timeout=120)
        finally:
            if first.returncode is None:
                first.send_signal(signal.SIGKILL)
            await first.wait()
        assert "[order_status done]" in shown, shown
        [session_id] = re.findall(r"--resume (support-\w+)", shown)

        second = await start(EXAMPLE, ["--resume", session_id], env, tmp_path)
        output, _ = await asyncio.wait_for(second.communicate(b"y\n"), timeout=180)
        text = output.decode()
    assert second.returncode == 0, text
    assert PROMPT.search(text), text  # the approval is asked again after the crash
    # The refund ran once: one result, with the idempotency key of its call.
    assert text.count("tool: refunded order 7 (idempotency key support-") == 1, text
    assert text.count("Order 7 arrived damaged, so I refunded it.") == 2, text  # streamed, then recorded
    assert text.rstrip().endswith("agent> Order 7 arrived damaged, so I refunded it."), text
