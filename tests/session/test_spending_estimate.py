"""The cost check's estimate of the next model call's input (`Spending.estimated_next_input_tokens`)."""

from __future__ import annotations

from datetime import UTC, datetime

from sessionflow import AgentToolCallStatus, AgentUsage
from sessionflow.session.bodies import BodyRef
from sessionflow.session.guardrails import Budget, StopReason
from sessionflow.session.messages import AgentMessage
from sessionflow.session.model import SessionModel
from sessionflow.session.state import AgentState
from tests.session.helpers import record, user

NOW = datetime(2025, 1, 2, tzinfo=UTC)


def _model() -> SessionModel:
    model = SessionModel(state=AgentState(turn_id="t2"), last_input_tokens=100)
    model.messages = [
        AgentMessage(sequence=1, turn_id="t1", message=user("x" * 300)),  # an earlier turn: in the 100
        AgentMessage(sequence=2, turn_id="t2", message=user("y" * 30)),  # 10 tokens
        AgentMessage(sequence=3, turn_id="t2", message=user("z" * 6)),  # 2 tokens
    ]
    return model


def test_the_estimate_adds_this_turns_messages_to_the_last_input() -> None:
    assert _model().estimated_next_input_tokens() == 100 + 10 + 2


def test_the_estimate_adds_each_tool_calls_output_error_and_arguments() -> None:
    model = _model()
    ref = BodyRef(driver="local", claim={}, size=90, sha256="0" * 64)
    model.tool_calls = {
        "c1": record(AgentToolCallStatus.SUCCEEDED, tool_call_id="c1", arguments="a" * 9, output="o" * 12),
        "c2": record(AgentToolCallStatus.FAILED, tool_call_id="c2", arguments="b" * 3, error="e" * 6),
        "c3": record(AgentToolCallStatus.SUCCEEDED, tool_call_id="c3", arguments="", output_ref=ref),
    }
    # c1: 4 output + 3 arguments; c2: 0 output + 3 error and arguments; c3: 30 from its body.
    assert model.estimated_next_input_tokens() == 112 + (4 + 3) + (0 + 3) + 30


def test_a_cost_exactly_at_the_limit_is_allowed_and_above_it_stops() -> None:
    budget = Budget(max_session_cost=1.0, input_price=0.0, output_price=0.001, max_output_tokens=1000)
    model = SessionModel()
    assert model.budget_stop_before_model_call(budget, NOW) is None  # 0 + 1.0 is not above 1.0
    model.record_usage(AgentUsage(requests=1, input_tokens=0, output_tokens=1), budget)
    stop = model.budget_stop_before_model_call(budget, NOW)
    assert stop is not None and stop[0] is StopReason.COST_BUDGET
