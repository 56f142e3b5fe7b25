"""`max_concurrency`: the agent's limiter takes a slot per Pydantic AI run, and a session step is a run.

A plain `agent.run` holds one slot for the whole run (its requests and its tools); the
session takes one per step (each model step and each tool step is an `Agent.iter`), in the
worker process that runs it, and gives it back when the step ends. So the limit bounds the
steps running at once in a worker, not turns, and a turn waiting for a person holds no slot.
The limiter logs each slot it hands out; the counts are asserted, the rest compared.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.concurrency import ConcurrencyLimiter

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, assert_same_run, run_both


class LoggedLimiter(ConcurrencyLimiter):
    """A limiter of one slot that logs each slot it gives."""

    def __init__(self, log: InvocationLog) -> None:
        super().__init__(max_running=1)
        self.log = log

    async def acquire(self, source: str) -> None:
        await super().acquire(source)
        self.log.record("hook", "slot", source=source)


def limited(models: Models, log: InvocationLog) -> Built:
    agent = Agent(models.model(), instructions="Count.", max_concurrency=LoggedLimiter(log), name="counter")

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        log.record("tool", "add", a=a, b=b)
        return a + b

    return Built(agent=agent)


async def test_a_slot_per_step_not_per_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="max-concurrency",
        build=limited,
        script=[
            ModelReply.call(ScriptedToolCall("call_add", "add", {"a": 2, "b": 3})),
            ModelReply.say("5"),
            ModelReply.say("Still 5."),
        ],
        turns=["What is 2 + 3?", "And again?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["5", "Still 5."]
    assert plain.tool_runs == [{"name": "add", "a": 2, "b": 3}]
    # Plain: one slot per run (turn). The session: one per step: turn 1's model step, tool
    # step and model step, then turn 2's model step.
    assert plain.hook_runs == [{"name": "slot", "source": "agent:counter"}] * 2
    assert session.hook_runs == [{"name": "slot", "source": "agent:counter"}] * 4
    assert session.model_steps == 3
    assert_same_run(replace(plain, hook_runs=[]), replace(session, hook_runs=[]))
