"""The framework's own approvals and questions in the session model: the floor, the interrupt, the answer."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any, cast

import pytest

from sessionflow import (
    AgentEventType,
    AgentToolCallStatus,
    InvalidAnswerError,
    SessionStateError,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.kit import DeferredToolCall, FrameworkApproval
from sessionflow.session.approvals import MAX_ANSWER_BYTES, as_session_approval, decide_approval
from sessionflow.session.model import SessionModel
from tests.session.helpers import NOW, READ, call, model_in_turn, requested

# Every floor a session can have: the effect's default, an explicit ToolPolicy either way,
# and approval.always, which a harness folds into its call policy as requires_approval=True.
_FLOORS: dict[str, tuple[ToolPolicy, bool]] = {
    "read, effect default": (ToolPolicy(effect=ToolEffect.READ), False),
    "idempotent write, effect default": (ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE), False),
    "non-idempotent write, effect default": (ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE), True),
    "unclassified, effect default": (ToolPolicy(effect=ToolEffect.UNCLASSIFIED), True),
    "read, explicit requires_approval": (ToolPolicy(effect=ToolEffect.READ, requires_approval=True), True),
    "write, explicit no approval": (
        ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False),
        False,
    ),
    "read, approval.always": (ToolPolicy(effect=ToolEffect.READ, requires_approval=True), True),
}
_FRAMEWORK: list[FrameworkApproval | None] = [None, "required", "pre_approved"]


def _cases() -> list[Any]:
    return [
        pytest.param(policy, floor, framework, id=f"{name} x framework {framework}")
        for name, (policy, floor) in _FLOORS.items()
        for framework in _FRAMEWORK
    ]


def deferred_events(model: SessionModel) -> list[dict[str, Any]]:
    return [
        e.data for e in model.event_log.read(0, 500).events if e.type is AgentEventType.TOOL_CALL_DEFERRED
    ]


@pytest.mark.parametrize(("policy", "floor", "framework"), _cases())
def test_the_floor_decides_and_the_framework_may_only_add(
    policy: ToolPolicy, floor: bool, framework: FrameworkApproval | None
) -> None:
    model = model_in_turn()
    deferred = replace(call("a", policy=policy), framework_approval=framework)
    (record,) = model.request_tools(requested(deferred), now=NOW, deadline=None)
    waits = floor or framework == "required"
    source = ("session" if floor else "framework") if waits else None
    assert decide_approval(deferred).waits is waits
    assert record.status is (AgentToolCallStatus.AWAITING_APPROVAL if waits else AgentToolCallStatus.PENDING)
    assert (record.approval_source, record.framework_approval) == (source, framework)
    assert [i.source for i in model.pending_interrupts] == ([source] if waits else [])
    assert all(i.kind == "approval" for i in model.pending_interrupts)
    (event,) = deferred_events(model)
    assert event["requires_approval"] is waits
    assert event.get("approval_source") == source
    assert event.get("framework_approval") == framework


def test_a_pre_approval_the_floor_overrides_is_shown_with_the_floor_as_the_asker() -> None:
    model = model_in_turn()
    write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    deferred = replace(call("a", policy=write), framework_approval="pre_approved")
    model.request_tools(requested(deferred), now=NOW, deadline=None)
    (event,) = deferred_events(model)
    assert event == {
        "tool_call_id": "a",
        "tool_name": "lookup",
        "effect": "non_idempotent_write",
        "requires_approval": True,
        "approval_source": "session",
        "kind": "approval",
        "framework_approval": "pre_approved",
    }


def test_a_call_no_framework_rule_touched_keeps_its_old_event() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a")), now=NOW, deadline=None)
    assert deferred_events(model) == [
        {"tool_call_id": "a", "tool_name": "lookup", "effect": "read", "requires_approval": False}
    ]


def question(
    tool_call_id: str = "q", text: str = "Which colour?", *, policy: ToolPolicy = READ
) -> DeferredToolCall:
    return replace(call(tool_call_id, policy=policy, tool_name="ask"), question=text)


def test_a_question_waits_as_a_question_with_its_text_and_deadline() -> None:
    model = model_in_turn()
    (record,) = model.request_tools(requested(question()), now=NOW, deadline=timedelta(seconds=30))
    assert record.status is AgentToolCallStatus.AWAITING_APPROVAL
    assert (record.question, record.approval_source) == ("Which colour?", "framework")
    (interrupt,) = model.pending_interrupts
    assert (interrupt.kind, interrupt.question, interrupt.source) == (
        "question",
        "Which colour?",
        "framework",
    )
    assert interrupt.deadline == (NOW + timedelta(seconds=30)).isoformat()
    raised = [
        e.data for e in model.event_log.read(0, 100).events if e.type is AgentEventType.INTERRUPT_RAISED
    ]
    assert raised[-1]["kind"] == "question"
    assert raised[-1]["question"] == "Which colour?"
    snapshot = model.snapshot("s")
    assert snapshot.pending_interrupts[0].kind == "question"
    assert snapshot.tool_calls[0].question == "Which colour?"


def test_a_question_on_a_floor_that_asks_anyway_says_the_session_asked() -> None:
    model = model_in_turn()
    policy = ToolPolicy(effect=ToolEffect.READ, requires_approval=True)
    model.request_tools(requested(question(policy=policy)), now=NOW, deadline=None)
    assert (model.pending_interrupts[0].kind, model.pending_interrupts[0].source) == ("question", "session")


def test_an_answer_is_kept_on_the_record_for_the_runner() -> None:
    model = model_in_turn()
    model.request_tools(requested(question()), now=NOW, deadline=None)
    resolved = model.resolve_interrupt(
        "turn-1:q", approved=True, rejection_message=None, now=NOW, answer="blue"
    )
    assert (resolved.status, resolved.answer) == (AgentToolCallStatus.APPROVED, "blue")
    assert model.pending_interrupts == []


def test_an_empty_answer_is_an_answer() -> None:
    model = model_in_turn()
    model.request_tools(requested(question()), now=NOW, deadline=None)
    resolved = model.resolve_interrupt("turn-1:q", approved=True, rejection_message=None, now=NOW, answer="")
    assert resolved.answer == ""


def test_a_question_approved_without_an_answer_is_refused_and_stays_pending() -> None:
    model = model_in_turn()
    model.request_tools(requested(question()), now=NOW, deadline=None)
    with pytest.raises(InvalidAnswerError, match="answer it with answer="):
        model.resolve_interrupt("turn-1:q", approved=True, rejection_message=None, now=NOW)
    assert model.record("q").status is AgentToolCallStatus.AWAITING_APPROVAL
    assert [i.interrupt_id for i in model.pending_interrupts] == ["turn-1:q"]


def test_an_answer_above_the_limit_is_refused() -> None:
    model = model_in_turn()
    model.request_tools(requested(question()), now=NOW, deadline=None)
    with pytest.raises(InvalidAnswerError, match="at most"):
        model.resolve_interrupt(
            "turn-1:q", approved=True, rejection_message=None, now=NOW, answer="x" * (MAX_ANSWER_BYTES + 1)
        )
    resolved = model.resolve_interrupt(
        "turn-1:q", approved=True, rejection_message=None, now=NOW, answer="x" * MAX_ANSWER_BYTES
    )
    assert resolved.status is AgentToolCallStatus.APPROVED


def test_a_declined_question_rejects_its_call() -> None:
    model = model_in_turn()
    model.request_tools(requested(question()), now=NOW, deadline=None)
    resolved = model.resolve_interrupt("turn-1:q", approved=False, rejection_message="no thanks", now=NOW)
    assert (resolved.status, resolved.rejection_message, resolved.answer) == (
        AgentToolCallStatus.REJECTED,
        "no thanks",
        None,
    )


def test_a_question_expires_like_an_approval() -> None:
    model = model_in_turn()
    model.request_tools(requested(question()), now=NOW, deadline=timedelta(seconds=5))
    assert not model.can_resolve("turn-1:q", NOW + timedelta(seconds=5))
    expired = model.expire_interrupt("turn-1:q")
    assert expired is not None
    assert expired.status is AgentToolCallStatus.REJECTED


def test_an_approval_without_an_answer_works_as_before() -> None:
    model = model_in_turn()
    write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    model.request_tools(requested(call("w", policy=write)), now=NOW, deadline=None)
    resolved = model.resolve_interrupt("turn-1:w", approved=True, rejection_message=None, now=NOW)
    assert (resolved.status, resolved.answer) == (AgentToolCallStatus.APPROVED, None)


def test_a_long_question_is_held_to_the_inline_limit() -> None:
    model = model_in_turn()
    (record,) = model.request_tools(
        requested(question(text="?" * (MAX_ANSWER_BYTES * 3))), now=NOW, deadline=None
    )
    assert record.question is not None
    assert len(record.question.encode()) < MAX_ANSWER_BYTES + 300
    assert "was cut" in record.question


@pytest.mark.parametrize(
    "deferred",
    [
        pytest.param(question(text="  "), id="blank question"),
        pytest.param(
            replace(call("a"), framework_approval=cast(Any, "maybe")), id="unknown framework approval"
        ),
    ],
)
def test_a_runner_mistake_is_an_invalid_model_step(deferred: DeferredToolCall) -> None:
    model = model_in_turn()
    with pytest.raises(SessionStateError):
        model.request_tools(requested(deferred), now=NOW, deadline=None)


def test_a_refused_proposal_never_asks_even_when_the_framework_does() -> None:
    model = model_in_turn()
    deferred = replace(call("a"), framework_approval="required", proposal_error="not_allowed: no such tool")
    (record,) = model.request_tools(requested(deferred), now=NOW, deadline=None)
    assert (record.status, record.approval_source) == (AgentToolCallStatus.REJECTED, None)
    assert model.pending_interrupts == []


@pytest.mark.parametrize(
    ("deferred", "requires_approval"),
    [
        pytest.param(replace(call("a"), framework_approval="required"), True, id="framework asks for a read"),
        pytest.param(question(), True, id="a question on a read"),
        pytest.param(replace(call("a"), framework_approval="pre_approved"), None, id="a pre-approved read"),
        pytest.param(call("a"), None, id="no framework rule"),
        pytest.param(
            replace(
                call("a", policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)),
                framework_approval="required",
            ),
            None,
            id="the floor asks already",
        ),
    ],
)
def test_a_workflow_before_framework_asks_still_waits_for_what_the_framework_asks(
    deferred: DeferredToolCall, requires_approval: bool | None
) -> None:
    # Such a workflow reads only the policy: the call must wait there as an approval.
    folded = as_session_approval(deferred)
    assert folded.policy.requires_approval is requires_approval
    assert folded.policy.is_approval_required is decide_approval(deferred).waits


def test_a_runner_mistake_in_a_batch_records_none_of_it() -> None:
    model = model_in_turn()
    with pytest.raises(SessionStateError, match="blank"):
        model.request_tools(requested(call("a"), question("q", text="")), now=NOW, deadline=None)
    assert (model.tool_calls, model.pending_interrupts, model.usage.requests) == ({}, [], 0)
