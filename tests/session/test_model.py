"""SessionModel turns, user messages, tool call records and interrupts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionflow import (
    AgentInterrupt,
    AgentState,
    AgentStatus,
    AgentToolCall,
    AgentToolCallStatus,
    AgentUsage,
    MessageRole,
    SessionStateError,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.kit import (
    FrameworkMessage,
    InvalidToolCallError,
    ToolCallsRequested,
    TurnCompleted,
    describe_tool_call_outcome,
)
from sessionflow.session.approval_digest import approval_digest
from sessionflow.session.interrupts import APPROVAL_EXPIRED
from sessionflow.session.model import SessionModel
from sessionflow.session.queued_message import QueuedUserMessage
from tests.session.helpers import NOW, READ, WRITE, assistant, call, clone, model_in_turn, requested, user

S = AgentToolCallStatus
MINUTE = timedelta(minutes=1)

# -- turns and sequences --------------------------------------------------------------


def test_fresh_model() -> None:
    model = SessionModel()
    assert model.state == AgentState()
    assert model.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
    assert (model.turn_active, model.next_sequence, model.digest, model.usage) == (False, 1, "", AgentUsage())


def test_begin_turn_numbers_turns() -> None:
    model = SessionModel()
    for number in range(1, 5):
        assert model.begin_turn() == f"turn-{number}"
        # Turn 3 follows a failed turn 2, whose error stays until a turn completes.
        error = "boom" if number == 3 else None
        outcome = None if number == 1 else ("failed" if number == 3 else "completed")
        assert model.state == AgentState(
            status=AgentStatus.RUNNING_MODEL,
            turn_id=f"turn-{number}",
            turn_count=number,
            last_turn_error=error,
            last_turn_outcome=outcome,
        )
        assert model.turn_active
        if number % 2:
            model.complete_turn(TurnCompleted(new_messages=[]))
        else:
            model.fail_turn("boom", None)
        assert not model.turn_active


def test_begin_turn_while_running_raises() -> None:
    model = model_in_turn()
    before = clone(model)
    with pytest.raises(SessionStateError) as caught:
        model.begin_turn()
    assert caught.value.message == "turn 'turn-1' is still running"
    assert model == before


def test_sequences_start_at_one_and_stay_dense_across_turns_and_notes() -> None:
    model = SessionModel()
    model.begin_turn()
    assert model.store_user_message(user("a")).sequence == 1
    model.complete_turn(TurnCompleted(new_messages=[assistant("b"), assistant("c")]))
    model.begin_turn()
    model.store_user_message(user("d"))
    model.fail_turn("boom", user("note"))
    model.begin_turn()
    model.fail_turn("boom again", None)
    model.begin_turn()
    model.store_user_message(user("e"))
    model.complete_turn(TurnCompleted(new_messages=[assistant("f")]))
    assert [(m.sequence, m.turn_id, m.message.text) for m in model.messages] == [
        (1, "turn-1", "a"),
        (2, "turn-1", "b"),
        (3, "turn-1", "c"),
        (4, "turn-2", "d"),
        (5, "turn-2", "note"),
        (6, "turn-4", "e"),
        (7, "turn-4", "f"),
    ]
    assert model.next_sequence == 8


@pytest.mark.parametrize("role", [MessageRole.ASSISTANT, MessageRole.TOOL, MessageRole.SYSTEM])
def test_store_user_message_refuses_other_roles(role: MessageRole) -> None:
    model = model_in_turn()
    before = clone(model)
    with pytest.raises(SessionStateError) as caught:
        model.store_user_message(FrameworkMessage(role=role, framework_item={}))
    assert caught.value.message == f"build_user_message returned role {role.value!r}, expected 'user'"
    assert model == before


def test_store_user_message_needs_a_turn() -> None:
    model = SessionModel()
    with pytest.raises(SessionStateError) as caught:
        model.store_user_message(user())
    assert caught.value.message == "no turn is running"
    assert model.messages == []


def test_turn_messages_returns_the_running_turns_tail() -> None:
    model = model_in_turn("first")
    model.complete_turn(TurnCompleted(new_messages=[assistant()]))
    model.begin_turn()
    model.store_user_message(user("second"))
    assert [m.message.text for m in model.turn_messages()] == ["second"]
    model.complete_turn(TurnCompleted(new_messages=[]))
    with pytest.raises(SessionStateError):
        model.turn_messages()


# -- queued user messages -------------------------------------------------------------


def test_queue_accepts_text_in_fifo_order() -> None:
    model = SessionModel()
    first, second = QueuedUserMessage(text="one"), QueuedUserMessage(text=" two ", images=["s3://x"])
    assert model.queue_user_message(first) is True
    assert model.queue_user_message(second) is True
    assert model.next_queued() is first
    assert model.next_queued() is second
    with pytest.raises(SessionStateError) as caught:
        model.next_queued()
    assert caught.value.message == "no queued user message"


@settings(max_examples=200, deadline=None, database=None)
@given(text=st.text(alphabet=" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u00a0\u1680\u2000\u2028\u2029\u3000"))
def test_queue_refuses_blank_text(text: str) -> None:
    model = SessionModel()
    assert SessionModel.is_acceptable_text(text) is False
    assert model.queue_user_message(QueuedUserMessage(text=text)) is False
    assert model.queued == []


@settings(max_examples=100, deadline=None, database=None)
@given(text=st.text(min_size=1).filter(lambda s: bool(s.strip())))
def test_queue_refuses_everything_once_stopped(text: str) -> None:
    model = SessionModel()
    assert model.queue_user_message(QueuedUserMessage(text=text)) is True
    model.stopped = True
    assert model.queue_user_message(QueuedUserMessage(text=text)) is False
    assert model.queued == [QueuedUserMessage(text=text)]


# -- completing a turn ----------------------------------------------------------------


def test_complete_turn_appends_in_order_adds_usage_and_clears_the_turn() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("c1"), call("c2", policy=WRITE)), now=NOW, deadline=None)
    model.move_tool_call("c1", S.RUNNING)
    model.move_tool_call("c1", S.SUCCEEDED, output="ok")
    new = [assistant("x"), FrameworkMessage(role=MessageRole.TOOL, framework_item={"t": 1}), assistant("y")]
    model.complete_turn(
        TurnCompleted(new_messages=new, usage=AgentUsage(requests=1, input_tokens=7, output_tokens=3))
    )
    assert [m.message for m in model.messages[1:]] == new
    assert [(m.sequence, m.turn_id) for m in model.messages] == [
        (1, "turn-1"),
        (2, "turn-1"),
        (3, "turn-1"),
        (4, "turn-1"),
    ]
    assert model.usage == AgentUsage(requests=2, input_tokens=17, output_tokens=8)
    assert model.tool_calls == {}
    assert model.run_state is None
    assert model.pending_interrupts == []
    assert model.state == AgentState(
        status=AgentStatus.WAITING_FOR_USER_MESSAGE, turn_id=None, turn_count=1, last_turn_outcome="completed"
    )


def test_complete_turn_clears_the_last_turn_error_but_begin_turn_keeps_it() -> None:
    model = model_in_turn()
    model.fail_turn("model crashed", None)
    assert model.state.last_turn_error == "model crashed"
    model.begin_turn()
    assert model.state.last_turn_error == "model crashed"
    model.complete_turn(TurnCompleted(new_messages=[]))
    assert model.state.last_turn_error is None


def test_complete_turn_needs_a_turn() -> None:
    model = SessionModel()
    with pytest.raises(SessionStateError):
        model.complete_turn(TurnCompleted(new_messages=[assistant()], usage=AgentUsage(requests=1)))
    assert model == SessionModel()


# -- requesting tools -----------------------------------------------------------------


def test_request_tools_creates_records_and_interrupts() -> None:
    model = model_in_turn()
    created = model.request_tools(
        requested(
            call("r1", tool_name="search", arguments='{"q": "a"}'),
            call("w1", tool_name="write", arguments='{"p": 1}', policy=WRITE),
            call(
                "w2",
                tool_name="write",
                policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False),
            ),
            call("r2", tool_name="search", policy=ToolPolicy(effect=ToolEffect.READ, requires_approval=True)),
            run_state="rs-1",
        ),
        now=NOW,
        deadline=timedelta(minutes=5),
    )
    assert [(r.tool_call_id, r.deferral_order, r.status, r.interrupt_id) for r in created] == [
        ("r1", 1, S.PENDING, None),
        ("w1", 2, S.AWAITING_APPROVAL, "turn-1:w1"),
        ("w2", 3, S.PENDING, None),
        ("r2", 4, S.AWAITING_APPROVAL, "turn-1:r2"),
    ]
    assert list(model.tool_calls.values()) == created
    assert model.pending_interrupts == [
        AgentInterrupt(
            interrupt_id="turn-1:w1",
            turn_id="turn-1",
            tool_call_id="w1",
            tool_name="write",
            arguments='{"p": 1}',
            raised_at="2025-01-02T03:04:05+00:00",
            deadline="2025-01-02T03:09:05+00:00",
            digest=approval_digest("write", '{"p":1}', ToolEffect.NON_IDEMPOTENT_WRITE),
            effect="non_idempotent_write",
            reason="`non_idempotent_write` calls ask for approval by default",
        ),
        AgentInterrupt(
            interrupt_id="turn-1:r2",
            turn_id="turn-1",
            tool_call_id="r2",
            tool_name="search",
            arguments='{"q": 1}',
            raised_at="2025-01-02T03:04:05+00:00",
            deadline="2025-01-02T03:09:05+00:00",
            digest=approval_digest("search", {"q": 1}, ToolEffect.READ),
            effect="read",
            reason="an explicit policy for this tool requires approval",
        ),
    ]
    assert model.run_state == "rs-1"
    assert model.state.status is AgentStatus.RUNNING_TOOLS
    assert model.usage == AgentUsage(requests=1, input_tokens=10, output_tokens=5)


def test_interrupt_without_deadline() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("w", policy=WRITE)), now=NOW, deadline=None)
    assert model.pending_interrupts[0].deadline is None
    assert model.pending_interrupts[0].raised_at == "2025-01-02T03:04:05+00:00"


def test_deferral_order_continues_across_model_calls_in_a_turn() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a"), call("b")), now=NOW, deadline=None)
    for tool_call_id in ("a", "b"):
        model.move_tool_call(tool_call_id, S.RUNNING)
        model.move_tool_call(tool_call_id, S.SUCCEEDED, output="ok")
    model.resume_model()
    assert model.state.status is AgentStatus.RUNNING_MODEL
    created = model.request_tools(
        requested(call("c"), call("d", policy=WRITE), run_state="rs-2"), now=NOW, deadline=None
    )
    assert [(r.tool_call_id, r.deferral_order) for r in created] == [("c", 3), ("d", 4)]
    assert model.run_state == "rs-2"
    assert model.usage.requests == 2
    # The next turn starts counting again.
    model.move_tool_call("c", S.REJECTED)
    model.expire_interrupt("turn-1:d")
    model.complete_turn(TurnCompleted(new_messages=[]))
    model.begin_turn()
    assert [r.deferral_order for r in model.request_tools(requested(call("a")), now=NOW, deadline=None)] == [
        1
    ]


def test_resume_model_refuses_non_final_records() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a")), now=NOW, deadline=None)
    with pytest.raises(SessionStateError):
        model.resume_model()
    assert model.state.status is AgentStatus.RUNNING_TOOLS


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        (
            ToolCallsRequested(framework_run_state="", tool_calls=[call("a")]),
            "ToolCallsRequested needs a non-empty framework_run_state",
        ),
        (
            ToolCallsRequested(framework_run_state="rs", tool_calls=[]),
            "ToolCallsRequested needs at least one tool call",
        ),
    ],
)
def test_request_tools_refuses_incomplete_outcomes(outcome: ToolCallsRequested, message: str) -> None:
    model = model_in_turn()
    before = clone(model)
    with pytest.raises(SessionStateError) as caught:
        model.request_tools(outcome, now=NOW, deadline=None)
    assert caught.value.message == message
    assert model == before


def test_request_tools_needs_a_turn() -> None:
    model = SessionModel()
    with pytest.raises(SessionStateError):
        model.request_tools(requested(call("a")), now=NOW, deadline=None)
    assert model == SessionModel()


@pytest.mark.parametrize("earlier_status", [S.PENDING, S.AWAITING_APPROVAL, S.APPROVED, S.RUNNING])
def test_request_tools_refuses_while_earlier_records_are_not_final(
    earlier_status: AgentToolCallStatus,
) -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a", policy=WRITE)), now=NOW, deadline=None)
    path = {
        S.AWAITING_APPROVAL: [],
        S.APPROVED: [S.APPROVED],
        S.PENDING: [S.REJECTED],
        S.RUNNING: [S.APPROVED, S.RUNNING],
    }[earlier_status]
    for status in path:
        model.move_tool_call("a", status)
    if earlier_status is S.PENDING:
        # Put a PENDING record next to the final one.
        model.pending_interrupts.clear()
        model.tool_calls["b"] = AgentToolCall(
            tool_call_id="b", tool_name="t", arguments="{}", policy=READ, deferral_order=2, status=S.PENDING
        )
    before = clone(model)
    with pytest.raises(SessionStateError) as caught:
        model.request_tools(requested(call("z"), run_state="rs-2"), now=NOW, deadline=None)
    assert caught.value.message == "the previous tool calls of this turn are not final"
    assert model == before


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (["ok", "  "], "tool call ID for tool 'lookup' is empty"),
        (["", "ok"], "tool call ID for tool 'lookup' is empty"),
        (["ok", "a/b"], "tool call ID 'a/b' contains '/'"),
        (["x", "ok", "x"], "tool call ID 'x' is used twice in one turn"),
        (["ok", "earlier"], "tool call ID 'earlier' is used twice in one turn"),
    ],
)
def test_request_tools_refuses_invalid_ids_without_changing_state(ids: list[str], message: str) -> None:
    model = model_in_turn()
    model.request_tools(requested(call("earlier", policy=WRITE)), now=NOW, deadline=MINUTE)
    model.resolve_interrupt("turn-1:earlier", approved=False, rejection_message=None, now=NOW)
    model.resume_model()
    before = clone(model)
    outcome = requested(*(call(i, policy=WRITE) for i in ids), run_state="rs-2", requests=5)
    with pytest.raises(InvalidToolCallError) as caught:
        model.request_tools(outcome, now=NOW, deadline=MINUTE)
    assert caught.value.message == message
    assert model == before
    assert model.usage.requests == 1
    assert list(model.tool_calls) == ["earlier"]


# -- interrupts -----------------------------------------------------------------------


def _awaiting(deadline: timedelta | None = MINUTE) -> SessionModel:
    model = model_in_turn()
    model.request_tools(requested(call("w", policy=WRITE), call("r")), now=NOW, deadline=deadline)
    return model


def test_approve_drops_the_rejection_message() -> None:
    model = _awaiting()
    updated = model.resolve_interrupt("turn-1:w", approved=True, rejection_message="ignored", now=NOW)
    assert (updated.status, updated.rejection_message, updated.error) == (S.APPROVED, None, None)
    assert model.tool_calls["w"] == updated
    assert model.pending_interrupts == []


@pytest.mark.parametrize(
    ("given_message", "stored"),
    [("  not this one \n", "not this one"), ("no", "no"), ("   ", None), ("", None), (None, None)],
)
def test_reject_strips_the_message(given_message: str | None, stored: str | None) -> None:
    model = _awaiting()
    updated = model.resolve_interrupt("turn-1:w", approved=False, rejection_message=given_message, now=NOW)
    assert (updated.status, updated.rejection_message) == (S.REJECTED, stored)
    assert model.tool_calls["w"] == updated
    assert model.pending_interrupts == []
    assert model.tools_final() is False  # "r" is still pending


def test_can_resolve_respects_the_deadline() -> None:
    model = _awaiting()
    assert model.can_resolve("turn-1:w", NOW) is True
    assert model.can_resolve("turn-1:w", NOW + MINUTE - timedelta(microseconds=1)) is True
    assert model.can_resolve("turn-1:w", NOW + MINUTE) is False
    assert model.can_resolve("turn-1:w", NOW + 2 * MINUTE) is False
    assert model.can_resolve("turn-1:r", NOW) is False
    assert model.can_resolve("nope", NOW) is False
    assert model.find_interrupt("nope") is None


def test_can_resolve_without_deadline_is_open_ended() -> None:
    model = _awaiting(deadline=None)
    assert model.can_resolve("turn-1:w", NOW + timedelta(days=3650)) is True


def test_resolve_past_the_deadline_raises_without_changing_state() -> None:
    model = _awaiting()
    before = clone(model)
    with pytest.raises(SessionStateError) as caught:
        model.resolve_interrupt("turn-1:w", approved=True, rejection_message=None, now=NOW + MINUTE)
    assert caught.value.message == "interrupt 'turn-1:w' is not pending"
    assert model == before


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("second", [True, False])
def test_resolving_twice_fails(first: bool, second: bool) -> None:
    model = _awaiting()
    model.resolve_interrupt("turn-1:w", approved=first, rejection_message=None, now=NOW)
    after_first = clone(model)
    with pytest.raises(SessionStateError):
        model.resolve_interrupt("turn-1:w", approved=second, rejection_message=None, now=NOW)
    assert model == after_first


def test_unknown_interrupt_cannot_be_resolved() -> None:
    model = _awaiting()
    with pytest.raises(SessionStateError):
        model.resolve_interrupt("turn-1:r", approved=True, rejection_message=None, now=NOW)


def test_expire_rejects_with_the_expiry_reason() -> None:
    model = _awaiting()
    expired = model.expire_interrupt("turn-1:w")
    assert expired is not None
    assert (expired.status, expired.error, expired.rejection_message) == (S.REJECTED, APPROVAL_EXPIRED, None)
    assert APPROVAL_EXPIRED == "The approval deadline passed before anyone answered."
    assert model.pending_interrupts == []


@pytest.mark.parametrize("approved", [True, False])
def test_resolve_then_expire_applies_once(approved: bool) -> None:
    model = _awaiting()
    resolved = model.resolve_interrupt("turn-1:w", approved=approved, rejection_message="no", now=NOW)
    assert model.expire_interrupt("turn-1:w") is None
    assert model.tool_calls["w"] == resolved


@pytest.mark.parametrize("approved", [True, False])
def test_expire_then_resolve_applies_once(approved: bool) -> None:
    model = _awaiting()
    expired = model.expire_interrupt("turn-1:w")
    assert model.can_resolve("turn-1:w", NOW) is False
    with pytest.raises(SessionStateError):
        model.resolve_interrupt("turn-1:w", approved=approved, rejection_message=None, now=NOW)
    assert model.tool_calls["w"] == expired
    assert model.expire_interrupt("turn-1:w") is None


def test_expired_approval_is_not_reported_as_a_user_rejection() -> None:
    # Nobody answered, so the model must not be told that the user said no.
    model = _awaiting()
    expired = model.expire_interrupt("turn-1:w")
    assert expired is not None
    outcome = describe_tool_call_outcome(expired)
    assert APPROVAL_EXPIRED in outcome
    assert "by the user" not in outcome


def test_reject_pending_interrupts() -> None:
    model = model_in_turn()
    model.request_tools(
        requested(call("w1", policy=WRITE), call("w2", policy=WRITE), call("w3", policy=WRITE)),
        now=NOW,
        deadline=None,
    )
    model.resolve_interrupt("turn-1:w2", approved=False, rejection_message="mine", now=NOW)
    rejected = model.reject_pending_interrupts("cancelled")
    # The session said no, not a person: the reason is the call's error, no rejection message.
    assert [(r.tool_call_id, r.status, r.error, r.rejection_message) for r in rejected] == [
        ("w1", S.REJECTED, "cancelled", None),
        ("w3", S.REJECTED, "cancelled", None),
    ]
    assert describe_tool_call_outcome(rejected[0]) == "Tool call not run: cancelled"
    assert model.pending_interrupts == []
    assert model.tool_calls["w2"].rejection_message == "mine"
    assert all(r.is_final for r in model.tool_calls.values())
    assert model.reject_pending_interrupts("again") == []


def test_reject_pending_interrupts_leaves_unapproved_pending_calls_alone() -> None:
    model = _awaiting()
    model.reject_pending_interrupts("cancelled")
    assert model.tool_calls["r"].status is S.PENDING


def test_abandon_unstarted_calls_leaves_only_final_records() -> None:
    model = model_in_turn()
    model.request_tools(
        requested(call("p"), call("w", policy=WRITE), call("a", policy=WRITE), call("s"), call("f")),
        now=NOW,
        deadline=None,
    )
    model.resolve_interrupt("turn-1:a", approved=True, rejection_message=None, now=NOW)
    model.move_tool_call("s", S.RUNNING)
    model.move_tool_call("s", S.SUCCEEDED, output="done")
    model.move_tool_call("f", S.RUNNING)
    model.move_tool_call("f", S.FAILED, error="oops")
    abandoned = model.abandon_unstarted_calls("cancelled")
    assert [r.tool_call_id for r in abandoned] == ["p", "a"]
    assert {k: (r.status, r.error, r.rejection_message) for k, r in model.tool_calls.items()} == {
        "p": (S.REJECTED, "cancelled", None),
        "w": (S.REJECTED, "cancelled", None),
        "a": (S.REJECTED, "cancelled", None),
        "s": (S.SUCCEEDED, None, None),
        "f": (S.FAILED, "oops", None),
    }
    assert model.tools_final()
    assert model.pending_interrupts == []


def test_abandon_leaves_running_calls_running() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("r"), call("p")), now=NOW, deadline=None)
    model.move_tool_call("r", S.RUNNING)
    assert [r.tool_call_id for r in model.abandon_unstarted_calls("x")] == ["p"]
    assert model.tool_calls["r"].status is S.RUNNING


def test_move_tool_call_unknown_id() -> None:
    model = model_in_turn()
    with pytest.raises(SessionStateError) as caught:
        model.move_tool_call("ghost", S.RUNNING)
    assert caught.value.message == "no tool call 'ghost' in the running turn"


# -- failing a turn -------------------------------------------------------------------


def test_fail_turn_with_a_note() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("w", policy=WRITE)), now=NOW, deadline=None)
    note = user("[sessionflow] note")
    model.fail_turn("tool crashed", note)
    assert [(m.sequence, m.turn_id, m.message) for m in model.messages[1:]] == [(2, "turn-1", note)]
    assert model.state == AgentState(
        status=AgentStatus.WAITING_FOR_USER_MESSAGE,
        turn_id=None,
        turn_count=1,
        last_turn_error="tool crashed",
        last_turn_outcome="failed",
    )
    assert (model.tool_calls, model.run_state, model.pending_interrupts) == ({}, None, [])


def test_fail_turn_without_a_note() -> None:
    model = model_in_turn()
    model.fail_turn("model crashed", None)
    assert len(model.messages) == 1
    assert model.state.last_turn_error == "model crashed"
    assert not model.turn_active


def test_fail_turn_refuses_a_non_user_note_and_keeps_the_turn() -> None:
    model = model_in_turn()
    before = clone(model)
    with pytest.raises(SessionStateError):
        model.fail_turn("x", assistant("note"))
    assert model == before


def test_fail_turn_needs_a_turn() -> None:
    model = SessionModel()
    with pytest.raises(SessionStateError):
        model.fail_turn("x", None)
    assert model == SessionModel()
