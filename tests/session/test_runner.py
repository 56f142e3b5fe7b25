"""The runner's side of the contract: what a model step's context tells it."""

from __future__ import annotations

import pytest

from sessionflow import AgentToolCallStatus
from sessionflow.kit import AgentEventWriter, AgentFrameworkRunner, AgentTurnContext
from tests.session.helpers import READ, record


def _context(framework_run_state: str | None) -> AgentTurnContext:
    done = record(AgentToolCallStatus.SUCCEEDED, tool_call_id="c1")
    return AgentTurnContext(
        flow_id="s",
        turn_id="turn-1",
        attempt=1,
        messages=[],
        framework_run_state=framework_run_state,
        tool_calls={"c1": done},
        policy_resolver=lambda name, effect: READ,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="turn-1/model-1", attempt=1),
        heartbeat=lambda *args: None,
    )


def test_a_step_resumes_when_it_carries_run_state() -> None:
    assert _context("state").is_resuming is True
    assert _context(None).is_resuming is False


def test_a_recorded_call_is_found_and_an_unknown_one_is_a_clear_key_error() -> None:
    context = _context(None)
    assert context.recorded_tool_call("c1").tool_call_id == "c1"
    with pytest.raises(KeyError, match="no tool call 'nope' in 'turn-1'"):
        context.recorded_tool_call("nope")


def test_the_runner_protocol_can_be_checked_at_run_time() -> None:
    assert not isinstance(object(), AgentFrameworkRunner)
