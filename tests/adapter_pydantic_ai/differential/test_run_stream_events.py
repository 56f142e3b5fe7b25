"""`run_stream_events`: plain code that reads a run's events gets them in a session from the
flow's `event_stream_handler`, and the run's end from the session (its stored answer).

The plain run is `agent.run_stream_events(...)` read to its end, each event logged, the
last (`AgentRunResultEvent`) giving the result; the session logs every event its
`event_stream_handler` is handed. Both log the same events in the same order (text parts
and deltas, the final result, the tool's call and result events), and the requests, the
history and the tool runs are compared as for `agent.run`.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, AgentRunResult, AgentRunResultEvent, RunContext
from pydantic_ai.messages import AgentStreamEvent

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, assert_same_run, run_both


def _entry(event: Any) -> dict[str, Any]:
    part = getattr(event, "part", None)
    delta = getattr(event, "delta", None)
    return {
        "event": type(event).__name__,
        "part": type(part).__name__ if part is not None else None,
        "call": getattr(part, "tool_call_id", None) or getattr(event, "tool_call_id", None),
        "text": getattr(part, "content", None) if isinstance(getattr(part, "content", None), str) else None,
        "delta": getattr(delta, "content_delta", None),
    }


def streamed_events(models: Models, log: InvocationLog) -> Built:
    agent = Agent(models.model(), instructions="Tell the time.")

    @agent.tool_plain
    def clock(city: str) -> str:
        """The time in a city."""
        log.record("tool", "clock", city=city)
        return f"noon in {city}"

    async def by_events(prompt: str | None, **kwargs: Any) -> AgentRunResult[Any]:
        result: AgentRunResult[Any] | None = None
        async with agent.run_stream_events(prompt, **kwargs) as events:
            async for event in events:
                if isinstance(event, AgentRunResultEvent):
                    result = event.result
                else:
                    log.record("hook", "event", **_entry(event))
        assert result is not None, "run_stream_events ended without its result event"
        return result

    async def handler(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for event in events:
            log.record("hook", "event", **_entry(event))

    return Built(agent=agent, plain_run=by_events, flow_args={"event_stream_handler": handler})


async def test_the_events_of_run_stream_events_reach_the_flows_handler(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="stream-events",
        build=streamed_events,
        script=[
            ModelReply.call(ScriptedToolCall("call_clock", "clock", {"city": "Lima"}), text="Checking."),
            ModelReply.say("It is noon in Lima.", ["It is ", "noon ", "in Lima."]),
            ModelReply.say("Still noon."),
        ],
        turns=["What time is it in Lima?", "And now?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["It is noon in Lima.", "Still noon."]
    assert plain.tool_runs == [{"name": "clock", "city": "Lima"}]
    kinds = [h["event"] for h in plain.hook_runs]
    assert "FunctionToolCallEvent" in kinds and "FunctionToolResultEvent" in kinds
    text_deltas = [h["delta"] for h in plain.hook_runs if h["event"] == "PartDeltaEvent" and h["delta"]]
    assert text_deltas[-2:] == ["noon ", "in Lima."]
    assert_same_run(plain, session)
