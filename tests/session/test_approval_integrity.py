"""An approval is bound to what was shown: its digest, who answered and when, and rewrites that ask again."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sessionflow import AgentToolCallStatus, ApprovalRecord, StaleApprovalError, ToolEffect
from sessionflow.kit import DeferredToolCall
from sessionflow.session.approval_digest import (
    approval_digest,
    approved_digest_of,
    canonical_arguments,
    run_arguments_of,
)
from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEventType
from sessionflow.session.interrupts import MAX_REBINDS
from sessionflow.session.model import SessionModel
from tests.session.helpers import NOW, WRITE, call, clone, model_in_turn, requested

S = AgentToolCallStatus
LATER = NOW + timedelta(seconds=30)


def _waiting(arguments: str = '{"path": "a.txt", "text": "hi"}') -> SessionModel:
    model = model_in_turn()
    model.request_tools(
        requested(call("w", policy=WRITE, tool_name="write", arguments=arguments)),
        now=NOW,
        deadline=timedelta(minutes=5),
    )
    return model


def _events(model: SessionModel, kind: AgentEventType) -> list[dict[str, object]]:
    return [e.data for e in model.event_log.read(0, 10_000).events if e.type is kind]


# -- the digest --------------------------------------------------------------------------


def test_digest_is_one_for_every_spelling_of_the_same_arguments() -> None:
    a = approval_digest("write", '{"b": 2, "a": [1, "é"]}', ToolEffect.READ)
    assert a == approval_digest("write", '{"a":[1,"\\u00e9"],"b":2}', ToolEffect.READ)
    assert a == approval_digest("write", {"a": [1, "é"], "b": 2}, ToolEffect.READ)
    assert a.startswith("sha256:") and len(a) == len("sha256:") + 64


@pytest.mark.parametrize(
    ("tool", "arguments", "effect"),
    [
        ("write", '{"a": [1, "é"], "b": 3}', ToolEffect.READ),  # a value
        ("write", '{"a": [1, "é"]}', ToolEffect.READ),  # a key gone
        ("other", '{"a": [1, "é"], "b": 2}', ToolEffect.READ),  # the tool
        ("write", '{"a": [1, "é"], "b": 2}', ToolEffect.NON_IDEMPOTENT_WRITE),  # the effect
    ],
)
def test_digest_changes_with_the_tool_the_effect_and_every_argument(
    tool: str, arguments: str, effect: ToolEffect
) -> None:
    assert approval_digest(tool, arguments, effect) != approval_digest(
        "write", '{"a": [1, "é"], "b": 2}', ToolEffect.READ
    )


def test_text_that_is_not_json_is_compared_as_it_is() -> None:
    assert canonical_arguments("not json {") == "not json {"
    assert approval_digest("t", "x", ToolEffect.READ) != approval_digest("t", "x ", ToolEffect.READ)
    # A value JSON cannot hold is covered by its repr, not dropped.
    assert canonical_arguments({"a": frozenset()}) == '{"a":"frozenset()"}'


# -- raising and answering ---------------------------------------------------------------


def test_the_interrupt_carries_the_digest_of_what_it_shows() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    assert interrupt.digest == approval_digest("write", interrupt.arguments, ToolEffect.NON_IDEMPOTENT_WRITE)
    assert interrupt.effect == "non_idempotent_write"
    assert interrupt.previous_arguments is None
    (raised,) = _events(model, AgentEventType.INTERRUPT_RAISED)
    assert raised["digest"] == interrupt.digest
    assert raised["rewritten"] is False


def test_an_answer_records_who_when_and_the_digest() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    record = model.resolve_interrupt(
        interrupt.interrupt_id,
        approved=True,
        rejection_message=None,
        now=LATER,
        digest=interrupt.digest,
        answered_by="ana",
    )
    assert record.status is S.APPROVED
    assert record.approval == ApprovalRecord(
        interrupt_id=interrupt.interrupt_id,
        approved=True,
        digest=interrupt.digest,
        answered_by="ana",
        answered_at=LATER.isoformat(),
    )
    assert approved_digest_of(record) == interrupt.digest
    (resolved,) = _events(model, AgentEventType.INTERRUPT_RESOLVED)
    assert resolved["answered_by"] == "ana"
    assert resolved["answered_at"] == LATER.isoformat()
    assert resolved["digest"] == interrupt.digest


def test_a_rejection_is_recorded_with_its_reason_and_authorizes_nothing() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    record = model.resolve_interrupt(
        interrupt.interrupt_id, approved=False, rejection_message=" no ", now=LATER, answered_by="bo"
    )
    assert record.approval is not None
    assert (record.approval.approved, record.approval.reason, record.approval.answered_by) == (
        False,
        "no",
        "bo",
    )
    assert approved_digest_of(record) is None


def test_an_answer_for_other_arguments_is_refused_and_changes_nothing() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    before = clone(model)
    stale = approval_digest("write", '{"path": "b.txt", "text": "hi"}', ToolEffect.NON_IDEMPOTENT_WRITE)
    with pytest.raises(StaleApprovalError, match="other arguments"):
        model.resolve_interrupt(
            interrupt.interrupt_id, approved=True, rejection_message=None, now=LATER, digest=stale
        )
    assert model.pending_interrupts == before.pending_interrupts
    assert model.record("w") == before.record("w")


def test_an_answer_without_a_digest_is_taken_as_before() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    record = model.resolve_interrupt(interrupt.interrupt_id, approved=True, rejection_message=None, now=LATER)
    assert record.approval is not None and record.approval.answered_by is None
    assert record.approval.digest == interrupt.digest


def test_an_approval_is_consumed_by_its_call() -> None:
    model = model_in_turn()
    model.request_tools(
        requested(call("a", policy=WRITE, tool_name="send"), call("b", policy=WRITE, tool_name="send")),
        now=NOW,
        deadline=None,
    )
    first, second = model.pending_interrupts
    assert first.digest == second.digest  # the same tool and arguments...
    model.resolve_interrupt(first.interrupt_id, approved=True, rejection_message=None, now=LATER)
    # ...yet answering the first leaves the second waiting, and the first cannot be answered twice.
    assert model.record("b").status is S.AWAITING_APPROVAL
    assert [i.interrupt_id for i in model.pending_interrupts] == [second.interrupt_id]
    with pytest.raises(SessionStateError):
        model.resolve_interrupt(first.interrupt_id, approved=True, rejection_message=None, now=LATER)


def test_expiry_and_cancel_record_that_nobody_answered() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    expired = model.expire_interrupt(interrupt.interrupt_id, LATER)
    assert expired is not None and expired.approval is not None
    assert (expired.approval.expired, expired.approval.answered_by, expired.approval.answered_at) == (
        True,
        None,
        LATER.isoformat(),
    )
    model = _waiting()
    (cancelled,) = model.reject_pending_interrupts("turn cancelled", LATER)
    assert cancelled.approval is not None
    assert (cancelled.approval.approved, cancelled.approval.reason, cancelled.approval.expired) == (
        False,
        "turn cancelled",
        False,
    )


def test_a_framework_rewrite_before_the_approval_is_shown_as_a_diff() -> None:
    model = model_in_turn()
    rewritten = DeferredToolCall(
        tool_call_id="w",
        tool_name="write",
        arguments='{"path": "safe/a.txt"}',
        policy=WRITE,
        previous_arguments='{"path": "a.txt"}',
    )
    model.request_tools(requested(rewritten), now=NOW, deadline=None)
    (interrupt,) = model.pending_interrupts
    assert interrupt.previous_arguments == '{"path": "a.txt"}'
    assert interrupt.digest == approval_digest(
        "write", '{"path": "safe/a.txt"}', ToolEffect.NON_IDEMPOTENT_WRITE
    )
    assert _events(model, AgentEventType.INTERRUPT_RAISED)[0]["rewritten"] is True


# -- a rewrite after the approval --------------------------------------------------------


def _approved_and_running() -> SessionModel:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    model.resolve_interrupt(
        interrupt.interrupt_id, approved=True, rejection_message=None, now=NOW, answered_by="ana"
    )
    model.move_tool_call("w", S.RUNNING)
    return model


def test_a_rewrite_in_the_step_asks_again_showing_what_was_approved() -> None:
    model = _approved_and_running()
    approved = model.record("w").arguments
    record = model.rebind_approval(
        "w", '{"path":"a.txt","text":"HI"}', now=LATER, deadline=timedelta(minutes=1)
    )
    assert record.status is S.AWAITING_APPROVAL
    assert record.interrupt_id == "turn-1:w#2"
    assert run_arguments_of(record) == '{"path":"a.txt","text":"HI"}'
    assert record.arguments == approved  # the model's call is kept as it was
    (interrupt,) = model.pending_interrupts
    assert interrupt.interrupt_id == "turn-1:w#2"
    assert interrupt.arguments == '{"path":"a.txt","text":"HI"}'
    assert interrupt.previous_arguments == approved
    assert interrupt.deadline == (LATER + timedelta(minutes=1)).isoformat()
    assert interrupt.digest == approval_digest(
        "write", '{"path":"a.txt","text":"HI"}', ToolEffect.NON_IDEMPOTENT_WRITE
    )
    # The old approval no longer authorizes the call: its digest is not the new one.
    assert model.record("w").approval is not None
    assert model.record("w").approval.digest != interrupt.digest  # type: ignore[union-attr]
    again = model.resolve_interrupt(
        "turn-1:w#2", approved=True, rejection_message=None, now=LATER, answered_by="ana"
    )
    assert approved_digest_of(again) == interrupt.digest


def test_a_second_rewrite_shows_the_diff_against_the_last_approval() -> None:
    model = _approved_and_running()
    _rewrite_and_approve(model, 2, '{"v":1}')
    model.rebind_approval("w", '{"v":2}', now=LATER, deadline=None)
    (interrupt,) = model.pending_interrupts
    assert (interrupt.interrupt_id, interrupt.previous_arguments, interrupt.arguments) == (
        "turn-1:w#3",
        '{"v":1}',
        '{"v":2}',
    )


def test_confirming_a_rewrite_keeps_the_answer_of_the_first_approval() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    model.resolve_interrupt(
        interrupt.interrupt_id, approved=True, rejection_message=None, now=NOW, answer="edit"
    )
    model.move_tool_call("w", S.RUNNING)
    model.rebind_approval("w", '{"v":1}', now=LATER, deadline=None)
    again = model.resolve_interrupt("turn-1:w#2", approved=True, rejection_message=None, now=LATER)
    assert again.answer == "edit"


def test_the_digest_is_stable_across_versions() -> None:
    """Recorded in histories and events, and sent back by clients: its bytes never change.

    The digest is sha256 over ``{"arguments": <canonical JSON text>, "effect": ..., "tool": ...}``
    as sorted, compact JSON with non-ASCII kept as UTF-8.
    """
    assert approval_digest("send", {"to": "é", "n": 1}, ToolEffect.NON_IDEMPOTENT_WRITE) == (
        "sha256:af64aaa9fe7abd2f029f5e3f60a1980c4150ef5413405772dd40b3198fc5b74b"
    )


def test_a_value_json_cannot_hold_is_canonical_too() -> None:
    assert canonical_arguments({"b": frozenset(), "a": "é"}) == '{"a":"é","b":"frozenset()"}'


def _rewrite_and_approve(model: SessionModel, n: int, arguments: str) -> None:
    """Rewrite the running call ``w``, approve interrupt ``#n``, and run it again."""
    model.rebind_approval("w", arguments, now=LATER, deadline=None)
    model.resolve_interrupt(f"turn-1:w#{n}", approved=True, rejection_message=None, now=LATER)
    model.move_tool_call("w", S.RUNNING)


def test_three_rewrites_may_ask_again_and_the_fourth_fails_unrun() -> None:
    model = _approved_and_running()
    for n in (2, 3, 4):  # literal: MAX_REBINDS is 3
        _rewrite_and_approve(model, n, f'{{"v":{n}}}')
    record = model.rebind_approval("w", '{"v":"again"}', now=LATER, deadline=None)
    assert record.status is S.FAILED
    assert record.error is not None and f"{MAX_REBINDS} times" in record.error
    assert model.pending_interrupts == []


def test_a_rewrite_keeps_who_asked_and_a_call_that_never_waited_asks_as_the_framework() -> None:
    model = _approved_and_running()
    record = model.rebind_approval("w", '{"v":1}', now=LATER, deadline=None)
    assert record.approval_source == "session"
    assert model.pending_interrupts[0].source == "session"
    model = model_in_turn()
    model.request_tools(requested(call("r")), now=NOW, deadline=None)  # a read: no approval
    model.move_tool_call("r", S.RUNNING)
    record = model.rebind_approval("r", '{"q":2}', now=LATER, deadline=None)
    assert record.approval_source == "framework"
    assert model.pending_interrupts[0].source == "framework"


def test_previous_arguments_equal_to_the_arguments_are_no_rewrite() -> None:
    model = model_in_turn()
    same = DeferredToolCall(
        tool_call_id="w", tool_name="write", arguments='{"a":1}', policy=WRITE, previous_arguments='{"a":1}'
    )
    model.request_tools(requested(same), now=NOW, deadline=None)
    assert model.pending_interrupts[0].previous_arguments is None


def test_a_new_answer_to_a_rewrite_replaces_the_first() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    model.resolve_interrupt(
        interrupt.interrupt_id, approved=True, rejection_message=None, now=NOW, answer="edit"
    )
    model.move_tool_call("w", S.RUNNING)
    model.rebind_approval("w", '{"v":1}', now=LATER, deadline=None)
    again = model.resolve_interrupt(
        "turn-1:w#2", approved=True, rejection_message=None, now=LATER, answer="new"
    )
    assert again.answer == "new"


def test_an_expiry_without_a_time_is_recorded_at_the_deadline() -> None:
    model = _waiting()
    (interrupt,) = model.pending_interrupts
    expired = model.expire_interrupt(interrupt.interrupt_id)
    assert expired is not None and expired.approval is not None
    assert expired.approval.answered_at == interrupt.deadline
