"""Session events: the durable stream, identity fields, live deltas, retries and resuming."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from sessionflow import AgentEvent, AgentEventType, LiveText, serve_agent_flows
from sessionflow.temporal import history_size
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, pending_interrupt

T = AgentEventType


def call(tool_call_id: str, name: str) -> dict[str, Any]:
    return {"id": tool_call_id, "name": name, "arguments": {}}


async def collect_until(
    events: AsyncIterator[AgentEvent], stop: AgentEventType, timeout: float = 60.0
) -> list[AgentEvent]:
    collected: list[AgentEvent] = []

    async def run() -> None:
        async for event in events:
            collected.append(event)
            if event.type is stop:
                return

    await asyncio.wait_for(run(), timeout)
    return collected


async def test_event_sequence_of_a_turn_with_two_tools_and_one_approval(harness: Harness) -> None:
    harness.script(
        "e-seq",
        [[{"tool_calls": [call("a", "lookup"), call("b", "publish")]}, {"text": "done"}]],
        {"lookup": {"effect": "read", "output": "A"}, "publish": {"effect": "non_idempotent_write"}},
    )
    await harness.sessions.start_session("e-seq", "go")
    stream = harness.sessions.events("e-seq")
    first = await collect_until(stream, T.TOOL_CALL_FINISHED)
    interrupt = await pending_interrupt(harness, "e-seq")
    assert await harness.sessions.resolve_interrupt("e-seq", interrupt.interrupt_id, approved=True)
    rest = await collect_until(stream, T.TURN_COMPLETED)
    events = first + rest
    summary = [(e.type.value, e.data.get("tool_call_id")) for e in events]
    assert summary == [
        ("turn_started", None),
        ("usage_recorded", None),
        ("tool_call_deferred", "a"),
        ("tool_call_deferred", "b"),
        ("interrupt_raised", "b"),
        ("model_step_completed", None),
        ("tool_call_started", "a"),
        ("tool_call_finished", "a"),
        ("interrupt_resolved", None),
        ("tool_call_started", "b"),
        ("tool_call_finished", "b"),
        ("model_step_completed", None),
        ("usage_recorded", None),
        ("turn_completed", None),
    ]
    # Identity on every event: the turn, the step execution (activity ID), the attempt.
    steps = {e.type.value + ":" + str(e.data.get("tool_call_id")): e.step_execution_id for e in events}
    assert steps["turn_started:None"] == "turn-1/turn"
    assert steps["tool_call_deferred:a"] == "turn-1/model-1"
    assert steps["tool_call_started:a"] == "turn-1/tool/a"
    assert steps["tool_call_finished:b"] == "turn-1/tool/b"
    assert all(e.turn_id == "turn-1" and e.attempt == 1 for e in events)
    offsets = [e.offset for e in events]
    assert offsets == list(range(1, len(events) + 1))
    assert events[0].data == {"sequence": 1}
    assert events[-1].data == {"message_count": 5}
    first_step = events[5]
    assert (first_step.step_execution_id, first_step.data) == (
        "turn-1/model-1",
        {
            "step": "turn-1/model-1",
            "text": "",
            "text_cut": 0,
            "tool_calls": [
                {"tool_call_id": "a", "tool_name": "lookup"},
                {"tool_call_id": "b", "tool_name": "publish"},
            ],
        },
    )
    assert events[-3].data["text"] == "done" and events[-3].data["tool_calls"] == []
    resolved = events[8]
    answered_at = resolved.data.pop("answered_at")
    assert answered_at >= interrupt.raised_at  # the workflow's time when it applied the answer
    assert resolved.data == {
        "interrupt_id": interrupt.interrupt_id,
        "approved": True,
        "rejection_message": None,
        "expired": False,
        "digest": interrupt.digest,
        "answered_by": None,
    }
    assert events[-2].data["session"]["requests"] == 2
    finished = [e.data["status"] for e in events if e.type is T.TOOL_CALL_FINISHED]
    assert finished == ["succeeded", "succeeded"]


async def test_resuming_from_an_offset_replays_the_rest(harness: Harness) -> None:
    harness.script(
        "e-resume", [[{"tool_calls": [call("a", "lookup")]}, {"text": "ok"}]], {"lookup": {"effect": "read"}}
    )
    await harness.sessions.start_session("e-resume", "go")
    everything = await collect_until(harness.sessions.events("e-resume"), T.TURN_COMPLETED)
    cut = everything[3].offset
    assert cut is not None
    resumed = await collect_until(harness.sessions.events("e-resume", after=cut), T.TURN_COMPLETED)
    assert resumed == everything[4:]


async def test_rejections_finish_exactly_once(harness: Harness) -> None:
    harness.script(
        "e-reject",
        [[{"tool_calls": [call("x", "drop_db")]}, {"text": "fine"}]],
        {"drop_db": {"effect": "unclassified"}},
    )
    await harness.sessions.start_session("e-reject", "go")
    interrupt = await pending_interrupt(harness, "e-reject")
    assert await harness.sessions.resolve_interrupt(
        "e-reject", interrupt.interrupt_id, approved=False, rejection_message="no"
    )
    events = await collect_until(harness.sessions.events("e-reject"), T.TURN_COMPLETED)
    finished = [e for e in events if e.type is T.TOOL_CALL_FINISHED]
    assert [(e.data["tool_call_id"], e.data["status"]) for e in finished] == [("x", "rejected")]
    assert not [e for e in events if e.type is T.TOOL_CALL_STARTED]


async def test_deltas_without_a_side_transport_arrive_in_few_batches(harness: Harness) -> None:
    # The worker is another process, so the in-process bus cannot reach this client:
    # deltas come back through the workflow, coalesced into a bounded number of signals.
    chunks = [f"tok{i} " for i in range(2000)]
    harness.script("e-fallback", [[{"deltas": chunks, "delay_after_deltas": 1.0, "text": "".join(chunks)}]])
    await harness.sessions.start_session("e-fallback", "stream please")
    events = await collect_until(harness.sessions.events("e-fallback"), T.TURN_COMPLETED)
    deltas = [e for e in events if e.type is T.TEXT_DELTA]
    assert deltas, "the fallback batch should reach the durable stream"
    assert "".join(str(e.data["text"]) for e in deltas) == "".join(chunks)
    assert all(e.offset is not None and e.step_execution_id == "turn-1/model-1" for e in deltas)
    assert len(deltas) <= 4
    history_events, _ = await history_size(harness.stack.client, "e-fallback")
    # Start, update, local activity, activity, workflow tasks, plus at most 4 signals' worth.
    assert history_events <= 40


async def test_in_process_bus_and_a_retried_attempt(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(workers=0)
    harness.script(
        "e-retry",
        [
            [
                {
                    "deltas_by_attempt": {"1": ["wrong ", "answer"], "2": ["right ", "answer"]},
                    "fail_attempts": 1,
                    "text": "right answer",
                }
            ]
        ],
    )
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(harness.stack.client, [harness.flow], stop=stop))
    try:
        live = LiveText()
        seen: list[AgentEvent] = []
        stream = harness.sessions.events("e-retry")

        async def follow() -> None:
            async for event in stream:
                seen.append(event)
                if event.type is T.ATTEMPT_RESTARTED or event.type.is_delta:
                    live.apply(event)
                if (
                    event.type is T.TEXT_DELTA
                    and event.attempt == 2
                    and live.text("turn-1") == "right answer"
                ):
                    return

        await harness.sessions.start_session("e-retry", "question")
        await asyncio.wait_for(follow(), 60)
        assert live.text("turn-1") == "right answer"
        texts = [(e.attempt, e.data["text"]) for e in seen if e.type is T.TEXT_DELTA]
        assert (1, "wrong ") in texts and (2, "right ") in texts
        restarted = [e for e in seen if e.type is T.ATTEMPT_RESTARTED]
        assert restarted and restarted[0].step_execution_id == "turn-1/model-1" and restarted[0].attempt == 2
        # Live deltas travel outside the workflow: none of them is in the durable log.
        page = await harness.sessions.list_agent_events("e-retry")
        assert not [e for e in page.events if e.type is T.TEXT_DELTA]
        await idle_after(harness, "e-retry", 1)
    finally:
        stop.set()
        await worker


async def test_event_log_keeps_a_retention_bound(harness_factory: HarnessFactory) -> None:
    from sessionflow import AgentSessionOptions

    harness: Harness = await harness_factory()
    harness.flow.options = AgentSessionOptions(event_stream_capacity=2_000)
    harness.script("e-bound", [[{"text": f"answer {n}"}] for n in range(1, 13)])
    await harness.sessions.start_session("e-bound", "q1")
    await idle_after(harness, "e-bound", 1)
    for n in range(2, 13):
        assert await harness.sessions.send_user_message("e-bound", f"q{n}")
        await idle_after(harness, "e-bound", n)
    page = await harness.sessions.list_agent_events("e-bound")
    assert page.truncated
    assert page.events[0].offset is not None and page.events[0].offset > 1
    assert page.events[-1].type is T.TURN_COMPLETED
    assert len(page.events) < 12 * 3
