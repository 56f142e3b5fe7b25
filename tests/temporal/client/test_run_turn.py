"""`run_turn` and `stream_turn` through a real worker: a turn you can await.

The client sends the message and follows the session's events (Queries) until that turn
ends; it answers approvals and questions through `on_interrupt`, and it keeps waiting
through a worker's SIGKILL.
"""

from __future__ import annotations

import asyncio

import pytest

from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentInterrupt,
    Rejection,
    SessionStoppedError,
    ToolEffect,
    ToolPolicy,
    TurnResult,
    TurnStatus,
    UserError,
    serve_agent_flows,
)
from sessionflow.testing import FileGate
from tests.harness import Harness, HarnessFactory

WRITE = {"send_email": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)}
EMAIL = {"id": "e1", "name": "send_email", "arguments": {"to": "ops"}}


async def test_the_answer_comes_whole_past_the_preview_limit(harness: Harness) -> None:
    answer = "".join(f"line {n:05d} of a long answer\n" for n in range(1200))  # ~32 KiB
    assert len(answer.encode()) > 8 * 1024
    harness.script("rt-long", [[{"text": answer, "usage": {"input_tokens": 11, "output_tokens": 7}}]])
    result = await harness.sessions.run_turn("rt-long", "write it all", timeout=60)
    assert (result.status, result.turn_id, result.ok) == (TurnStatus.COMPLETED, "turn-1", True)
    assert result.text == answer
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.requests) == (11, 7, 1)
    # The snapshot holds a preview only: the result is what the client could not read there.
    snapshot = await harness.sessions.get_agent_snapshot("rt-long")
    assert snapshot.messages[-1].message.text != answer


async def test_a_second_turn_is_awaited_on_the_existing_session(harness: Harness) -> None:
    harness.script(
        "rt-two",
        [[{"text": "one", "usage": {"input_tokens": 5}}], [{"text": "two", "usage": {"input_tokens": 3}}]],
    )
    first = await harness.sessions.run_turn("rt-two", "q1", timeout=60)
    second = await harness.sessions.run_turn("rt-two", "q2", timeout=60)
    assert [(r.turn_id, r.text, r.usage.input_tokens) for r in (first, second)] == [
        ("turn-1", "one", 5),
        ("turn-2", "two", 3),
    ]
    assert harness.seen("rt-two", 2)[-1] == "q2"


async def test_on_interrupt_approves_a_write_that_runs_once(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(tool_policies=WRITE)
    harness.script(
        "rt-approve", [[{"tool_calls": [EMAIL]}, {"text": "sent"}]], {"send_email": {"output": "queued"}}
    )
    asked: list[AgentInterrupt] = []

    async def approve(interrupt: AgentInterrupt) -> bool:  # an async callback
        asked.append(interrupt)
        return True

    result = await harness.sessions.run_turn("rt-approve", "mail ops", on_interrupt=approve, timeout=60)
    assert (result.status, result.text) == (TurnStatus.COMPLETED, "sent")
    assert [(i.tool_name, i.kind) for i in asked] == [("send_email", "approval")]
    assert [(c.tool_name, c.effect, c.status) for c in result.tool_calls] == [
        ("send_email", "non_idempotent_write", "succeeded")
    ]
    assert len(harness.log.entries("tool", session="rt-approve")) == 1


async def test_a_rejection_with_a_reason_reaches_the_model_and_the_tool_never_runs(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(tool_policies=WRITE)
    harness.script(
        "rt-reject", [[{"tool_calls": [EMAIL]}, {"text": "not sent"}]], {"send_email": {"output": "x"}}
    )
    result = await harness.sessions.run_turn(
        "rt-reject", "mail ops", on_interrupt=lambda _: Rejection(message="not today"), timeout=60
    )
    assert (result.status, result.text) == (TurnStatus.COMPLETED, "not sent")
    assert [c.status for c in result.tool_calls] == ["rejected"]
    assert harness.log.entries("tool", session="rt-reject") == []
    assert any("not today" in text for text in harness.seen("rt-reject", 2))


async def test_a_question_is_answered(harness: Harness) -> None:
    no_arguments: dict[str, object] = {}
    harness.script(
        "rt-question",
        [[{"tool_calls": [{"id": "q1", "name": "ask", "arguments": no_arguments}]}, {"text": "thanks"}]],
        {"ask": {"question": "Which colour?", "returns_answer": True, "effect": "read"}},
    )
    result = await harness.sessions.run_turn(
        "rt-question",
        "paint it",
        on_interrupt=lambda i: "blue" if i.question == "Which colour?" else False,
        timeout=60,
    )
    assert (result.status, result.text) == (TurnStatus.COMPLETED, "thanks")
    assert len(harness.log.entries("tool", session="rt-question")) == 1
    assert "the user answered: blue" in harness.seen("rt-question", 2)


async def test_without_a_callback_it_returns_at_the_interrupt_with_the_turn_waiting(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(tool_policies=WRITE)
    harness.script("rt-wait", [[{"tool_calls": [EMAIL]}, {"text": "sent"}]], {"send_email": {"output": "ok"}})
    waiting = await harness.sessions.run_turn("rt-wait", "mail ops", timeout=60)
    assert (waiting.status, waiting.text, waiting.ok) == (TurnStatus.WAITING, "", False)
    (interrupt,) = waiting.interrupts
    assert (interrupt.tool_name, [c.status for c in waiting.tool_calls]) == (
        "send_email",
        ["awaiting_approval"],
    )
    assert harness.log.entries("tool", session="rt-wait") == []
    # Answered elsewhere, the turn goes on; the session is not stuck.
    assert await harness.sessions.resolve_interrupt("rt-wait", interrupt.interrupt_id, approved=True)


async def test_stream_turn_yields_the_turns_events_then_its_result(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(workers=0)
    stop = asyncio.Event()
    # The worker shares this process, so its deltas reach the client on the in-process bus.
    worker = asyncio.create_task(serve_agent_flows(harness.stack.client, [harness.flow], stop=stop))
    try:
        harness.script("rt-stream", [[{"text": "abc", "deltas": ["a", "b", "c"]}]])
        items = [item async for item in harness.sessions.stream_turn("rt-stream", "go", timeout=60)]
    finally:
        stop.set()
        await worker
    *events, result = items
    assert isinstance(result, TurnResult) and result.text == "abc"
    assert all(isinstance(e, AgentEvent) and e.turn_id == "turn-1" for e in events)
    kinds = [e.type for e in events if isinstance(e, AgentEvent)]
    assert kinds[0] is AgentEventType.TURN_STARTED and kinds[-1] is AgentEventType.TURN_COMPLETED
    deltas = "".join(str(e.data["text"]) for e in events if isinstance(e, AgentEvent) and e.type.is_delta)
    assert deltas == "abc"


async def test_a_worker_sigkilled_while_the_client_waits(harness: Harness) -> None:
    harness.script("rt-kill", [[{"text": "survived", "gate": "model", "gate_attempts": 1}]])
    waiting = asyncio.create_task(harness.sessions.run_turn("rt-kill", "hold on", timeout=120))
    await FileGate(harness.state_dir, "model").wait_until_reached()
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
    result = await waiting
    assert (result.status, result.text, result.turn_id) == (TurnStatus.COMPLETED, "survived", "turn-1")
    # The turn ended once: one completion, and the model step ran a second attempt.
    page = await harness.sessions.list_agent_events("rt-kill")
    assert [e.type for e in page.events].count(AgentEventType.TURN_COMPLETED) == 1
    assert [e["attempt"] for e in harness.log.entries("model", session="rt-kill")] == [1, 2]


async def test_bad_input_gets_a_clear_error(harness: Harness) -> None:
    with pytest.raises(UserError, match="the text is blank"):
        await harness.sessions.run_turn("rt-blank", "   ")
    harness.script("rt-stopped", [[{"text": "bye"}]])
    await harness.sessions.run_turn("rt-stopped", "hi", timeout=60)
    assert await harness.sessions.stop_session("rt-stopped")
    with pytest.raises(SessionStoppedError, match="is stopped"):
        await harness.sessions.run_turn("rt-stopped", "again", timeout=60)
    harness.script("rt-slow", [[{"text": "late", "gate": "slow"}]])
    with pytest.raises(TimeoutError, match=r"did not end within 0\.5 s"):
        await harness.sessions.run_turn("rt-slow", "wait", timeout=0.5)
    FileGate(harness.state_dir, "slow").release()
