"""`tool_timeout`: a tool that takes longer fails with a retry prompt, counted against its retries.

The tool's first run never finishes by itself (it waits on an event nobody sets), so the
timeout, not a clock in the test, decides; its second run answers at once. The timeout is
Pydantic AI's own, applied in the tool step (the agent's function toolset carries it), and
the model is sent the same retry prompt.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic_ai import Agent

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, assert_same_run, run_both


def slow_then_fast(models: Models, log: InvocationLog) -> Built:
    agent = Agent(models.model(), instructions="Look things up.", tool_timeout=0.5)
    runs = 0

    @agent.tool_plain
    async def lookup(key: str) -> str:
        """Look a key up."""
        nonlocal runs
        runs += 1
        log.record("hook", "lookup started", key=key, run=runs)
        if runs == 1:
            await asyncio.Event().wait()  # hangs until the timeout cancels it
        log.record("tool", "lookup", key=key)
        return f"{key}=42"

    return Built(agent=agent)


async def test_a_tool_that_times_out_is_retried_by_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-timeout",
        build=slow_then_fast,
        script=[
            ModelReply.call(ScriptedToolCall("call_1", "lookup", {"key": "answer"})),
            ModelReply.call(ScriptedToolCall("call_2", "lookup", {"key": "answer"})),
            ModelReply.say("It is 42."),
        ],
        turns=["Look up the answer"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["It is 42."]
    assert [h["run"] for h in plain.hook_runs] == [1, 2]
    assert plain.tool_runs == [{"name": "lookup", "key": "answer"}]
    # The model saw the timeout as a retry prompt for its first call.
    timed_out = plain.requests[""][1]["messages"][-1]
    assert timed_out["role"] == "tool" and "Timed out after 0.5 seconds" in timed_out["content"]
    assert_same_run(plain, session)
