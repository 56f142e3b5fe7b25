"""`TurnTracker`: which events are the awaited turn's, and what its `TurnResult` says."""

from __future__ import annotations

from typing import Any

import pytest

from sessionflow.session.events import AgentEvent, AgentEventType
from sessionflow.session.state import AgentInterrupt
from sessionflow.session.turn_result import TurnStatus, TurnToolCall, TurnTracker
from sessionflow.session.usage import AgentUsage

T = AgentEventType


def event(kind: AgentEventType, turn: str = "turn-2", offset: int | None = 1, **data: Any) -> AgentEvent:
    return AgentEvent(
        type=kind, turn_id=turn, step_execution_id=f"{turn}/x", attempt=1, data=data, offset=offset
    )


def test_the_turn_is_the_one_whose_start_names_the_message() -> None:
    tracker = TurnTracker(message_id="m-2")
    assert not tracker.mine(event(T.TURN_STARTED, "turn-1", message_id="m-1", sequence=1))
    assert not tracker.mine(event(T.USAGE_RECORDED, "turn-1", recorded={"input_tokens": 99}))
    assert tracker.mine(event(T.TURN_STARTED, message_id="m-2", sequence=5))
    assert (tracker.turn_id, tracker.first_sequence) == ("turn-2", 5)
    assert not tracker.mine(event(T.TURN_COMPLETED, "turn-3"))
    assert tracker.ended is None


def test_without_a_message_id_the_first_turn_started_is_the_one() -> None:
    tracker = TurnTracker(message_id=None)
    assert not tracker.mine(event(T.USAGE_RECORDED, "turn-1"))
    assert tracker.mine(event(T.TURN_STARTED, "turn-1", sequence=1))
    assert tracker.turn_id == "turn-1"


def test_tool_calls_usage_and_interrupts_come_from_durable_events_only() -> None:
    tracker = TurnTracker(message_id=None)
    tracker.mine(event(T.TURN_STARTED, sequence=3))
    tracker.mine(
        event(
            T.TOOL_CALL_DEFERRED, tool_call_id="c1", tool_name="send", effect="read", requires_approval=True
        )
    )
    tracker.mine(event(T.TOOL_CALL_DEFERRED, tool_call_id="c2", tool_name="look", effect="read"))
    tracker.mine(event(T.INTERRUPT_RAISED, interrupt_id="turn-2:c1"))
    assert tracker.raised == ["turn-2:c1"]
    waiting = tracker.result("s", text="")
    assert waiting.status is TurnStatus.WAITING
    assert [c.status for c in waiting.tool_calls] == ["awaiting_approval", "pending"]
    tracker.mine(event(T.INTERRUPT_RESOLVED, interrupt_id="turn-2:c1"))
    assert tracker.raised == []
    tracker.mine(event(T.TOOL_CALL_STARTED, tool_call_id="c1", tool_name="send"))
    # A live event (no offset) repeats a durable one: it changes nothing.
    assert tracker.mine(event(T.TOOL_CALL_FINISHED, offset=None, tool_call_id="c1", status="failed"))
    tracker.mine(event(T.TOOL_CALL_FINISHED, tool_call_id="c1", tool_name="send", status="succeeded"))
    tracker.mine(
        event(T.TOOL_CALL_FINISHED, tool_call_id="c2", tool_name="look", status="failed", error="boom")
    )
    tracker.mine(event(T.TOOL_CALL_FINISHED, tool_call_id="c9", tool_name="late", status="rejected"))
    tracker.mine(event(T.USAGE_RECORDED, recorded={"requests": 1, "input_tokens": 4, "output_tokens": 2}))
    tracker.mine(event(T.USAGE_RECORDED, recorded={"requests": 1, "input_tokens": 1, "output_tokens": "x"}))
    tracker.mine(event(T.USAGE_RECORDED, recorded=None))
    tracker.mine(event(T.TURN_COMPLETED))
    result = tracker.result("s", text="done", interrupts=[])
    assert (result.status, result.text, result.ok, result.stop_reason, result.error) == (
        TurnStatus.COMPLETED,
        "done",
        True,
        None,
        None,
    )
    assert result.usage == AgentUsage(requests=2, input_tokens=5, output_tokens=2)
    assert result.tool_calls == [
        TurnToolCall(tool_call_id="c1", tool_name="send", effect="read", status="succeeded"),
        TurnToolCall(tool_call_id="c2", tool_name="look", effect="read", status="failed", error="boom"),
        TurnToolCall(tool_call_id="c9", tool_name="late", status="rejected"),
    ]


@pytest.mark.parametrize(
    ("reason", "status", "stop_reason"),
    [
        ("cancelled", TurnStatus.CANCELLED, "cancelled"),
        ("tool_budget", TurnStatus.STOPPED, "tool_budget"),
        ("repeated_call", TurnStatus.STOPPED, "repeated_call"),
        ("error", TurnStatus.FAILED, None),
    ],
)
def test_a_failed_turn_says_why(reason: str, status: TurnStatus, stop_reason: str | None) -> None:
    tracker = TurnTracker(message_id=None)
    tracker.mine(event(T.TURN_STARTED))
    tracker.mine(event(T.TURN_FAILED, error="it broke", reason=reason))
    result = tracker.result("s", text="", interrupts=[])
    assert (result.status, result.stop_reason, result.error, result.ok) == (
        status,
        stop_reason,
        "it broke",
        False,
    )


def test_an_ended_turn_lists_no_interrupts() -> None:
    tracker = TurnTracker(message_id=None)
    tracker.mine(event(T.TURN_STARTED))
    tracker.mine(event(T.TURN_FAILED, reason="error"))
    pending = AgentInterrupt(
        interrupt_id="i", turn_id="turn-2", tool_call_id="c", tool_name="t", arguments="{}", raised_at=""
    )
    assert tracker.result("s", text="", interrupts=[pending]).interrupts == []
