"""`SessionModel.continue_model`: a model step that asks for another model call."""

from __future__ import annotations

import pytest

from sessionflow import (
    AgentEventType,
    AgentStatus,
    AgentToolCallStatus,
    AgentUsage,
    SessionStateError,
    StopReason,
)
from sessionflow.kit import ContinueRequested
from sessionflow.session.bodies import BodyRef
from sessionflow.session.guardrails import Budget
from tests.session.helpers import NOW, WRITE, call, model_in_turn, requested


def continued(run_state: str = "state-2", *, note: str = "retry") -> ContinueRequested:
    return ContinueRequested(
        framework_run_state=run_state,
        note=note,
        usage=AgentUsage(requests=1, input_tokens=7, output_tokens=2),
    )


def test_a_continue_keeps_its_run_state_counts_its_usage_and_says_so_in_an_event() -> None:
    model = model_in_turn()
    model.continue_model(continued("state-2", note="output validator: say OK"), max_continues=8)
    assert (model.run_state, model.run_state_ref) == ("state-2", None)
    assert model.state.status is AgentStatus.RUNNING_MODEL
    assert model.usage == AgentUsage(requests=1, input_tokens=7, output_tokens=2)
    assert model.last_input_tokens == 7
    assert model.turn_continues == 1
    assert model.stop_reason is None
    events = model.event_log.read(0, 100).events
    assert [e.type for e in events][-2:] == [AgentEventType.USAGE_RECORDED, AgentEventType.MODEL_CONTINUED]
    assert events[-1].data == {"note": "output validator: say OK", "continues": 1}


def test_a_stored_run_state_travels_by_reference() -> None:
    model = model_in_turn()
    ref = BodyRef(driver="test", claim={"key": "k"}, size=300_000, sha256="d")
    model.continue_model(ContinueRequested(framework_run_state="", run_state_ref=ref), max_continues=8)
    assert (model.run_state, model.run_state_ref) == (None, ref)


def test_a_continue_after_tools_replaces_their_run_state() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("a"), run_state="after-tools"), now=NOW, deadline=None)
    model.move_tool_call("a", AgentToolCallStatus.RUNNING)
    model.move_tool_call("a", AgentToolCallStatus.SUCCEEDED, output="x")
    model.resume_model()
    model.continue_model(continued("after-continue"), max_continues=8)
    assert model.run_state == "after-continue"
    assert model.tool_calls["a"].status is AgentToolCallStatus.SUCCEEDED  # the next call still sees it


def test_the_continue_past_the_limit_stops_the_turn_and_keeps_the_last_run_state() -> None:
    model = model_in_turn()
    model.continue_model(continued("s1"), max_continues=2)
    model.continue_model(continued("s2"), max_continues=2)
    assert model.stop_reason is None
    model.continue_model(continued("s3"), max_continues=2)
    assert model.stop_reason == StopReason.CONTINUE_LIMIT.value == "continue_limit"
    assert model.stop_detail == "the model asked to continue 3 times in this turn; the limit is 2"
    assert model.run_state == "s2"
    assert model.usage.requests == 3  # the refused continue's call was still made and paid for


def test_a_limit_of_zero_refuses_the_first_continue() -> None:
    model = model_in_turn()
    model.continue_model(continued(), max_continues=0)
    assert model.stop_reason == "continue_limit"


def test_the_count_starts_again_with_each_turn() -> None:
    model = model_in_turn()
    model.continue_model(continued(), max_continues=1)
    model.fail_turn("boom", None)
    model.begin_turn()
    assert model.turn_continues == 0 and model.stop_reason is None


def test_continues_count_as_model_calls_for_the_step_budget() -> None:
    # The workflow counts every RunModel step; a continue adds one like any other call.
    model = model_in_turn()
    budget = Budget(max_model_calls_per_turn=2)
    model.count_model_call()
    model.continue_model(continued(), max_continues=8, budget=budget)
    model.count_model_call()
    over = model.budget_stop_before_model_call(budget, NOW)
    assert over is not None and over[0] is StopReason.STEP_BUDGET


def test_a_continue_needs_a_run_state() -> None:
    with pytest.raises(SessionStateError, match="non-empty framework_run_state"):
        model_in_turn().continue_model(ContinueRequested(framework_run_state=""), max_continues=8)


def test_a_continue_needs_every_tool_call_final() -> None:
    model = model_in_turn()
    model.request_tools(requested(call("w", policy=WRITE)), now=NOW, deadline=None)
    with pytest.raises(SessionStateError, match="every tool call is final"):
        model.continue_model(continued(), max_continues=8)


def test_a_continue_needs_a_turn() -> None:
    model = model_in_turn()
    model.fail_turn("boom", None)
    with pytest.raises(SessionStateError, match="no turn is running"):
        model.continue_model(continued(), max_continues=8)
