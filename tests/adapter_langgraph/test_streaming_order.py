"""A client following a LangGraph session sees every delta of a step before the step's end.

Deltas travel beside the workflow (the in-process bus), durable events through it. A
follower of `AgentSessionClient.events` must still see a model step's deltas before the
durable events its completion caused (`usage_recorded`, `tool_call_deferred`) and before
`turn_completed`: a chat view clears the turn's live text there. Asserted over many runs,
because the order used to depend on which of the two paths was faster.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow import AgentEvent, AgentEventType, AgentSessionClient
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_langgraph.conftest import serving, unique
from tests.adapter_langgraph.flows import FlowSpec, build_flow

T = AgentEventType
RUNS = 20
FIRST = ["Let me ", "look ", "that up."]
SECOND = ["It is ", "sunny ", "in ", "Oslo."]


async def follow_turn(sessions: AgentSessionClient, session_id: str) -> list[AgentEvent]:
    """Every event the follower yields up to and including `turn_completed` (or `turn_failed`)."""
    seen: list[AgentEvent] = []
    stream = sessions.events(session_id)
    async for event in stream:
        seen.append(event)
        if event.type in (T.TURN_COMPLETED, T.TURN_FAILED):
            break
    await stream.aclose()
    return seen


def step_text(events: list[AgentEvent], step: str) -> str:
    return "".join(
        str(e.data["text"]) for e in events if e.type is T.TEXT_DELTA and e.step_execution_id == step
    )


def before_completion(events: list[AgentEvent], step: str) -> list[AgentEvent]:
    """The events before the first durable event that the end of `step` caused."""
    for index, event in enumerate(events):
        if event.offset is not None and event.step_execution_id == step:
            return events[:index]
    raise AssertionError(f"no durable event of step {step!r} in {[e.type.value for e in events]}")


async def test_every_delta_of_a_step_comes_before_its_end_in_many_runs(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-order")
    flow = build_flow(FlowSpec(flow_type=key, base_url=model_server.base_url(key)), tmp_path)
    async with serving(temporal_address, flow) as sessions:
        for run in range(RUNS):
            model_server.script(
                key,
                [
                    ModelReply(
                        text_chunks=FIRST,
                        tool_calls=[ScriptedToolCall(f"c{run}", "lookup", {"city": "Oslo"})],
                    ),
                    ModelReply.say("".join(SECOND), chunks=SECOND),
                ],
            )
            session_id = f"{key}-{run}"
            await sessions.start_session(session_id, "Weather in Oslo?")
            events = await follow_turn(sessions, session_id)

            assert events[-1].type is T.TURN_COMPLETED, [e.type.value for e in events]
            # Every delta arrived before turn_completed, in order, exactly once.
            assert step_text(events, "turn-1/model-1") == "".join(FIRST)
            assert step_text(events, "turn-1/model-2") == "".join(SECOND)
            # ...and before the durable events its own step's end caused.
            assert step_text(before_completion(events, "turn-1/model-1"), "turn-1/model-1") == "".join(FIRST)
            assert step_text(before_completion(events, "turn-1/model-2"), "turn-1/model-2") == "".join(SECOND)
            # ...and never before the durable events that came before its step began.
            finished = next(i for i, e in enumerate(events) if e.type is T.TOOL_CALL_FINISHED)
            assert not step_text(events[:finished], "turn-1/model-2")
