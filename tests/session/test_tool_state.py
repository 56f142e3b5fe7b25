"""Tool state in the pure session model: updates recorded, refused off success, in model order."""

from __future__ import annotations

import pytest

from sessionflow import AgentToolCall, AgentToolCallStatus, AgentUsage, SessionStateError
from sessionflow.kit import (
    AgentEventWriter,
    AgentTurnContext,
    ContinueRequested,
    DeferredToolExecution,
    TurnCompleted,
)
from sessionflow.session.bodies import BodyRef
from sessionflow.session.bounds import bounded_tool_call
from sessionflow.session.model import SessionModel
from sessionflow.session.tool_state import state_updates_in_model_order, without_applied_updates
from tests.session.helpers import NOW, READ, assistant, call, model_in_turn, record, requested, user

REF = BodyRef(driver="test", claim={"key": "u"}, size=300_000, sha256="d")


def _succeed(model: SessionModel, tool_call_id: str, update: str | None = None) -> None:
    model.move_tool_call(tool_call_id, AgentToolCallStatus.RUNNING)
    model.move_tool_call(tool_call_id, AgentToolCallStatus.SUCCEEDED, output="ok", state_update=update)


def _context(records: list[AgentToolCall]) -> AgentTurnContext:
    return AgentTurnContext(
        flow_id="s",
        turn_id="turn-1",
        attempt=1,
        messages=[],
        framework_run_state="state",
        tool_calls={r.tool_call_id: r for r in records},
        policy_resolver=lambda name, effect: READ,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="turn-1/model-2", attempt=1),
        heartbeat=lambda *args: None,
    )


def test_a_success_records_its_update_and_the_next_step_gets_them_in_model_order() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a"), call("b"), call("c")), now=NOW, deadline=None)
    _succeed(model, "c", '{"k": "c"}')  # finish order c, b, a
    _succeed(model, "b", None)
    _succeed(model, "a", '{"k": "a"}')
    assert model.tool_calls["a"].state_update == '{"k": "a"}'
    context = _context(model.model_step_tool_calls())
    assert context.state_updates() == [("a", '{"k": "a"}'), ("c", '{"k": "c"}')]


@pytest.mark.parametrize("update", [{"state_update": "{}"}, {"state_update_ref": REF}])
def test_a_call_with_an_unknown_outcome_cannot_carry_an_update(update: dict[str, object]) -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a")), now=NOW, deadline=None)
    model.move_tool_call("a", AgentToolCallStatus.RUNNING)
    with pytest.raises(SessionStateError, match="cannot carry a state update"):
        model.move_tool_call("a", AgentToolCallStatus.OUTCOME_UNKNOWN, error="worker lost", **update)
    assert model.tool_calls["a"].status is AgentToolCallStatus.RUNNING  # nothing was recorded


def test_a_failed_call_keeps_its_account_of_the_failure_but_changes_no_state() -> None:
    # `ToolExecutionError(state_update=...)`: the framework's own account of the failure
    # (Pydantic AI's retry prompt) is on the record for the next model step, and is not an update.
    model = model_in_turn()
    model.request_tools(requested(call("a"), call("b")), now=NOW, deadline=None)
    model.move_tool_call("a", AgentToolCallStatus.RUNNING)
    model.move_tool_call("a", AgentToolCallStatus.FAILED, error="retry", state_update='{"retry": 1}')
    _succeed(model, "b", "from-b")
    model.resume_model()
    sent = model.model_step_tool_calls()
    assert _context(sent).state_updates() == [("b", "from-b")]
    assert {r.tool_call_id: r.state_update for r in sent} == {"a": '{"retry": 1}', "b": "from-b"}


def test_a_rejected_call_cannot_carry_an_update() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a")), now=NOW, deadline=None)
    with pytest.raises(SessionStateError, match="cannot carry a state update"):
        model.move_tool_call("a", AgentToolCallStatus.REJECTED, rejection_message="no", state_update="{}")


def test_updates_that_a_later_step_applied_are_not_handed_again() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a"), run_state="s1"), now=NOW, deadline=None)
    _succeed(model, "a", "from-a")
    model.resume_model()
    model.request_tools(requested(call("b"), run_state="s2 (a applied)"), now=NOW, deadline=None)
    _succeed(model, "b", "from-b")
    model.resume_model()
    sent = model.model_step_tool_calls()
    assert _context(sent).state_updates() == [("b", "from-b")]
    assert [r.output for r in sent] == ["ok", "ok"]  # the records themselves stay whole
    assert model.tool_calls["a"].state_update == "from-a"  # and the session keeps the update
    model.continue_model(
        ContinueRequested(framework_run_state="s3 (b applied)", usage=AgentUsage()), max_continues=8
    )
    assert _context(model.model_step_tool_calls()).state_updates() == []


def test_a_stored_update_travels_by_reference_only() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a")), now=NOW, deadline=None)
    model.move_tool_call("a", AgentToolCallStatus.RUNNING)
    model.move_tool_call("a", AgentToolCallStatus.SUCCEEDED, output="ok", state_update_ref=REF)
    (sent,) = model.model_step_tool_calls()
    assert (sent.state_update, sent.state_update_ref) == (None, REF)


def test_a_new_turn_starts_with_no_applied_updates() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a")), now=NOW, deadline=None)
    _succeed(model, "a")
    model.resume_model()
    model.request_tools(requested(call("b")), now=NOW, deadline=None)
    assert model.state_updates_applied_through == 1
    _succeed(model, "b")
    model.resume_model()
    model.complete_turn(TurnCompleted(new_messages=[assistant()], usage=AgentUsage()))
    model.begin_turn(NOW)
    model.store_user_message(user("again"))
    assert model.state_updates_applied_through == 0
    model.request_tools(requested(call("a2")), now=NOW, deadline=None)
    _succeed(model, "a2", "turn-2 update")
    assert _context(model.model_step_tool_calls()).state_updates() == [("a2", "turn-2 update")]


def test_model_order_is_deferral_order_and_skips_records_without_an_update() -> None:
    records = [
        record(AgentToolCallStatus.SUCCEEDED, tool_call_id="late", deferral_order=3, state_update="3"),
        record(AgentToolCallStatus.SUCCEEDED, tool_call_id="early", deferral_order=1, state_update="1"),
        record(AgentToolCallStatus.SUCCEEDED, tool_call_id="none", deferral_order=2),
    ]
    assert state_updates_in_model_order(records) == [("early", "1"), ("late", "3")]


def test_a_tool_step_sees_the_run_state_of_its_model_step() -> None:
    execution = DeferredToolExecution(
        flow_id="s",
        turn_id="turn-1",
        tool_call=record(AgentToolCallStatus.RUNNING),
        attempt=1,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="turn-1/tool/c1", attempt=1),
        heartbeat=lambda *args: None,
        run_state='{"state": {"k": 1}}',
    )
    assert execution.invocation.run_state == '{"state": {"k": 1}}'


def test_a_snapshot_cuts_a_long_inline_update_to_a_preview() -> None:
    long = record(AgentToolCallStatus.SUCCEEDED, output="ok", state_update="u" * 100_000)
    bounded = bounded_tool_call(long)
    assert bounded.state_update is not None and len(bounded.state_update) < 10_000


def test_an_applied_update_kept_by_reference_is_taken_out_too() -> None:
    ref = BodyRef(driver="local", claim={"key": "u"}, size=9, sha256="0" * 64)
    applied = record(AgentToolCallStatus.SUCCEEDED, tool_call_id="a", deferral_order=1, state_update_ref=ref)
    later = record(AgentToolCallStatus.SUCCEEDED, tool_call_id="b", deferral_order=2, state_update_ref=ref)
    kept = without_applied_updates([applied, later], applied_through=1)
    assert [(r.tool_call_id, r.state_update_ref) for r in kept] == [("a", None), ("b", ref)]
