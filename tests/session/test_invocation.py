"""The runner contract's records: `session_id` beside `flow_id`, and the one invocation view."""

from __future__ import annotations

from sessionflow import AgentToolCallStatus
from sessionflow.kit import AgentEventWriter, DeferredToolExecution, ToolInvocation
from tests.session.helpers import record


def execution() -> DeferredToolExecution:
    return DeferredToolExecution(
        flow_id="s1",
        turn_id="turn-2",
        tool_call=record(AgentToolCallStatus.RUNNING, tool_name="ask", answer="yes"),
        attempt=3,
        events=AgentEventWriter(None, turn_id="turn-2", step_execution_id="x", attempt=3),
        heartbeat=lambda *args: None,
        session_settings={"model": "m"},
    )


def test_session_id_is_the_name_and_flow_id_its_alias() -> None:
    call = execution()
    assert call.session_id == call.flow_id == "s1"
    assert call.idempotency_key == "s1/turn-2/c1"


def test_the_invocation_is_the_handler_view_of_the_execution() -> None:
    call = execution()
    assert call.invocation == ToolInvocation(
        tool_call_id="c1",
        idempotency_key="s1/turn-2/c1",
        attempt=3,
        session_id="s1",
        turn_id="turn-2",
        tool_name="ask",
        session_settings={"model": "m"},
        answer="yes",
        effect="read",
    )
    assert call.invocation is call.invocation  # built once per execution
