"""Framework approvals and questions through the real workflow: who asked, what the model sees, crashes."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from sessionflow import AgentEventType, InvalidAnswerError
from sessionflow.session.approvals import MAX_ANSWER_BYTES
from tests.harness import FAST, Harness, HarnessFactory
from tests.harness_helpers import idle_after, pending_interrupt

ASK: dict[str, object] = {"id": "q1", "name": "ask", "arguments": {"question": "Which colour?"}}
QUESTION_TOOL: dict[str, object] = {"effect": "read", "question": True, "returns_answer": True}


async def test_an_answer_reaches_the_model_and_the_tool_runs_once(harness: Harness) -> None:
    harness.script("q-answer", [[{"tool_calls": [ASK]}, {"text": "teal it is"}]], {"ask": QUESTION_TOOL})
    await harness.sessions.start_session("q-answer", "paint the shed")
    interrupt = await pending_interrupt(harness, "q-answer", "q1")
    assert (interrupt.kind, interrupt.question, interrupt.source) == (
        "question",
        "Which colour?",
        "framework",
    )
    assert harness.log.count("tool", "ask") == 0
    assert await harness.sessions.resolve_interrupt(
        "q-answer", interrupt.interrupt_id, approved=True, answer="teal"
    )
    snapshot = await idle_after(harness, "q-answer", 1)
    assert snapshot.messages[-1].message.text == "teal it is"
    assert harness.seen("q-answer", 2)[-1] == "the user answered: teal"
    assert harness.log.count("tool", "ask") == 1
    page = await harness.sessions.list_agent_events("q-answer")
    raised = [e.data for e in page.events if e.type is AgentEventType.INTERRUPT_RAISED]
    assert [(d["kind"], d["question"]) for d in raised] == [("question", "Which colour?")]


async def test_a_question_approved_without_an_answer_is_refused_and_can_be_answered_after(
    harness: Harness,
) -> None:
    harness.script("q-none", [[{"tool_calls": [ASK]}, {"text": "ok"}]], {"ask": QUESTION_TOOL})
    await harness.sessions.start_session("q-none", "go")
    interrupt = await pending_interrupt(harness, "q-none", "q1")
    with pytest.raises(InvalidAnswerError, match="answer it with answer="):
        await harness.sessions.resolve_interrupt("q-none", interrupt.interrupt_id, approved=True)
    with pytest.raises(InvalidAnswerError, match="at most"):
        await harness.sessions.resolve_interrupt(
            "q-none", interrupt.interrupt_id, approved=True, answer="x" * (MAX_ANSWER_BYTES + 1)
        )
    snapshot = await harness.sessions.get_agent_snapshot("q-none")
    assert [i.interrupt_id for i in snapshot.pending_interrupts] == [interrupt.interrupt_id]
    assert await harness.sessions.resolve_interrupt(
        "q-none", interrupt.interrupt_id, approved=True, answer=""
    )
    await idle_after(harness, "q-none", 1)
    assert harness.seen("q-none", 2)[-1] == "the user answered: "


async def test_a_declined_question_never_runs_and_the_model_sees_why(harness: Harness) -> None:
    harness.script("q-decline", [[{"tool_calls": [ASK]}, {"text": "fine"}]], {"ask": QUESTION_TOOL})
    await harness.sessions.start_session("q-decline", "go")
    interrupt = await pending_interrupt(harness, "q-decline", "q1")
    assert await harness.sessions.resolve_interrupt(
        "q-decline", interrupt.interrupt_id, approved=False, rejection_message="not now"
    )
    await idle_after(harness, "q-decline", 1)
    assert harness.log.count("tool", "ask") == 0
    assert harness.seen("q-decline", 2)[-1] == "Tool call rejected by the user: not now"


async def test_a_question_expires_at_its_deadline_like_an_approval(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(timings=replace(FAST, interrupt_deadline=timedelta(seconds=2)))
    harness.script("q-expire", [[{"tool_calls": [ASK]}, {"text": "nobody answered"}]], {"ask": QUESTION_TOOL})
    await harness.sessions.start_session("q-expire", "go")
    interrupt = await pending_interrupt(harness, "q-expire", "q1")
    assert interrupt.kind == "question" and interrupt.deadline is not None
    snapshot = await idle_after(harness, "q-expire", 1)
    assert snapshot.messages[-1].message.text == "nobody answered"
    assert not await harness.sessions.resolve_interrupt(
        "q-expire", interrupt.interrupt_id, approved=True, answer="too late"
    )
    assert harness.log.count("tool", "ask") == 0
    assert harness.seen("q-expire", 2)[-1] == (
        "Tool call not run: The approval deadline passed before anyone answered."
    )


async def test_sigkill_during_a_question_wait_the_answer_after_the_restart_reaches_the_model(
    harness: Harness,
) -> None:
    harness.script("q-kill", [[{"tool_calls": [ASK]}, {"text": "answered"}]], {"ask": QUESTION_TOOL})
    await harness.sessions.start_session("q-kill", "go")
    interrupt = await pending_interrupt(harness, "q-kill", "q1")
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
    assert await harness.sessions.resolve_interrupt(
        "q-kill", interrupt.interrupt_id, approved=True, answer="blue"
    )
    snapshot = await idle_after(harness, "q-kill", 1)
    assert snapshot.messages[-1].message.text == "answered"
    assert harness.seen("q-kill", 2)[-1] == "the user answered: blue"
    assert [m["call"] for m in harness.log.entries("model", session="q-kill")] == [1, 2]
    assert [t["attempt"] for t in harness.log.entries("tool", "ask")] == [1]


async def test_a_framework_approval_on_a_read_waits_and_says_the_framework_asked(harness: Harness) -> None:
    lookup: dict[str, object] = {"id": "c1", "name": "lookup", "arguments": {}}
    harness.script(
        "f-read",
        [[{"tool_calls": [lookup]}, {"text": "done"}]],
        {"lookup": {"effect": "read", "framework_approval": "required", "output": "42"}},
    )
    await harness.sessions.start_session("f-read", "go")
    interrupt = await pending_interrupt(harness, "f-read", "c1")
    assert (interrupt.kind, interrupt.source) == ("approval", "framework")
    snapshot = await harness.sessions.get_agent_snapshot("f-read")
    assert [(r.approval_source, r.framework_approval) for r in snapshot.tool_calls] == [
        ("framework", "required")
    ]
    assert harness.log.count("tool", "lookup") == 0
    assert await harness.sessions.resolve_interrupt("f-read", interrupt.interrupt_id, approved=True)
    await idle_after(harness, "f-read", 1)
    assert harness.seen("f-read", 2)[-1] == "42"
    assert harness.log.count("tool", "lookup") == 1


async def test_a_framework_pre_approval_does_not_lift_the_floor_of_a_write(harness: Harness) -> None:
    send: dict[str, object] = {"id": "c1", "name": "send", "arguments": {}}
    harness.script(
        "f-pre",
        [[{"tool_calls": [send]}, {"text": "sent"}]],
        {"send": {"effect": "non_idempotent_write", "framework_approval": "pre_approved", "output": "ok"}},
    )
    await harness.sessions.start_session("f-pre", "go")
    interrupt = await pending_interrupt(harness, "f-pre", "c1")
    assert (interrupt.kind, interrupt.source) == ("approval", "session")
    assert harness.log.count("tool", "send") == 0
    page = await harness.sessions.list_agent_events("f-pre")
    deferred = [e.data for e in page.events if e.type is AgentEventType.TOOL_CALL_DEFERRED]
    assert [(d["approval_source"], d["framework_approval"]) for d in deferred] == [
        ("session", "pre_approved")
    ]
    assert await harness.sessions.resolve_interrupt("f-pre", interrupt.interrupt_id, approved=True)
    await idle_after(harness, "f-pre", 1)
    assert harness.log.count("tool", "send") == 1
