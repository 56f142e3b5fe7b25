"""A follower of `events()` sees a step's live deltas before the durable events its end caused.

Deltas travel on the in-process bus, durable events through the workflow; which path is
faster is luck. Every framework's deltas go this way, so the core's scripted runner shows
it: over many runs, each model step's deltas come whole before that step's own durable
events (`usage_recorded`, `tool_call_deferred`) and `turn_completed`, and never before the
`tool_call_finished` that preceded the step.
"""

from __future__ import annotations

import asyncio

from sessionflow import AgentEvent, AgentEventType, serve_agent_flows
from tests.harness import Harness, HarnessFactory

T = AgentEventType
RUNS = 20
FIRST = ["checking ", "the ", "files"]
SECOND = ["all ", "files ", "are ", "fine"]
LOOKUP: dict[str, object] = {"id": "a", "name": "lookup", "arguments": {}}


async def follow_turn(harness: Harness, session_id: str) -> list[AgentEvent]:
    seen: list[AgentEvent] = []
    stream = harness.sessions.events(session_id)
    async for event in stream:
        seen.append(event)
        if event.type in (T.TURN_COMPLETED, T.TURN_FAILED):
            break
    await stream.aclose()
    return seen


def text(events: list[AgentEvent], step: str) -> str:
    return "".join(
        str(e.data["text"]) for e in events if e.type is T.TEXT_DELTA and e.step_execution_id == step
    )


def until_durable_of(events: list[AgentEvent], step: str) -> list[AgentEvent]:
    index = next(i for i, e in enumerate(events) if e.offset is not None and e.step_execution_id == step)
    return events[:index]


async def test_live_deltas_come_before_their_step_end_in_many_runs(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(workers=0)
    stop = asyncio.Event()
    # The worker shares this process, so its deltas reach the client on the in-process bus.
    worker = asyncio.create_task(serve_agent_flows(harness.stack.client, [harness.flow], stop=stop))
    try:
        for run in range(RUNS):
            session_id = f"order-{run}"
            harness.script(
                session_id,
                [
                    [
                        {"deltas": FIRST, "tool_calls": [LOOKUP]},
                        {"deltas": SECOND, "text": "".join(SECOND)},
                    ]
                ],
                {"lookup": {"effect": "read", "output": "ok"}},
            )
            await harness.sessions.start_session(session_id, "check")
            events = await follow_turn(harness, session_id)
            assert events[-1].type is T.TURN_COMPLETED, f"run {run}: {[e.type.value for e in events]}"
            assert text(until_durable_of(events, "turn-1/model-1"), "turn-1/model-1") == "".join(FIRST), run
            assert text(until_durable_of(events, "turn-1/model-2"), "turn-1/model-2") == "".join(SECOND), run
            assert text(events, "turn-1/model-1") + text(events, "turn-1/model-2") == "".join(FIRST + SECOND)
            finished = next(i for i, e in enumerate(events) if e.type is T.TOOL_CALL_FINISHED)
            assert not text(events[:finished], "turn-1/model-2"), run
    finally:
        stop.set()
        await worker
