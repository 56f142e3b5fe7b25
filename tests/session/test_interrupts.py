"""Interrupts: the events that say which call waits, and how each wait ended."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sessionflow import AgentEventType, ToolEffect
from sessionflow.kit import approval_digest
from sessionflow.session.model import SessionModel
from tests.session.helpers import NOW, WRITE, call, model_in_turn, requested

DIGEST = approval_digest("lookup", '{"q": 1}', ToolEffect.NON_IDEMPOTENT_WRITE)
"""The digest of the call the helpers' `call("w", policy=WRITE)` makes."""
LATER = NOW.replace(minute=9)


def events(model: SessionModel, event_type: AgentEventType) -> list[dict[str, Any]]:
    return [e.data for e in model.event_log.read(0, 500).events if e.type is event_type]


def test_each_raised_event_describes_its_own_interrupt() -> None:
    model = model_in_turn()
    approval = call("w", policy=WRITE)
    asked = replace(call("q", tool_name="ask"), question="Which colour?")
    model.request_tools(requested(approval, asked), now=NOW, deadline=None)
    raised = events(model, AgentEventType.INTERRUPT_RAISED)
    assert [(r["tool_call_id"], r["kind"], r["question"], r["source"]) for r in raised] == [
        ("w", "approval", None, "session"),
        ("q", "question", "Which colour?", "framework"),
    ]


def test_an_expired_interrupt_is_resolved_as_expired_and_not_approved() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("w", policy=WRITE)), now=NOW, deadline=None)
    model.expire_interrupt("turn-1:w", LATER)
    assert events(model, AgentEventType.INTERRUPT_RESOLVED) == [
        {
            "interrupt_id": "turn-1:w",
            "approved": False,
            "rejection_message": None,
            "expired": True,
            "digest": DIGEST,
            "answered_by": None,
            "answered_at": LATER.isoformat(),
        }
    ]


def test_rejecting_every_pending_interrupt_says_not_approved_with_the_message() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("w", policy=WRITE)), now=NOW, deadline=None)
    model.reject_pending_interrupts("cancelled", LATER)
    assert events(model, AgentEventType.INTERRUPT_RESOLVED) == [
        {
            "interrupt_id": "turn-1:w",
            "approved": False,
            "rejection_message": "cancelled",
            "expired": False,
            "digest": DIGEST,
            "answered_by": None,
            "answered_at": LATER.isoformat(),
        }
    ]


def test_an_answer_is_resolved_as_not_expired() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("w", policy=WRITE)), now=NOW, deadline=None)
    model.resolve_interrupt(
        "turn-1:w", approved=True, rejection_message="ignored", now=LATER, answered_by="ana"
    )
    assert events(model, AgentEventType.INTERRUPT_RESOLVED) == [
        {
            "interrupt_id": "turn-1:w",
            "approved": True,
            "rejection_message": None,
            "expired": False,
            "digest": DIGEST,
            "answered_by": "ana",
            "answered_at": LATER.isoformat(),
        }
    ]


def test_an_interrupt_id_belongs_to_the_running_turn_only() -> None:
    model = SessionModel()
    assert not model.is_current_turn_interrupt("turn-1:w")  # no turn runs
    model.begin_turn()
    assert model.is_current_turn_interrupt("turn-1:w")
    assert not model.is_current_turn_interrupt("turn-2:w")
    assert not model.is_current_turn_interrupt("turn-10:w")
