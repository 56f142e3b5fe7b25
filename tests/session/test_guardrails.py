"""Budgets and proposal screening in the pure session model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sessionflow import (
    AgentToolCallStatus,
    AgentUsage,
    MessageRole,
    SessionBudget,
    StopReason,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.kit import DeferredToolCall, FrameworkMessage, ToolCallsRequested
from sessionflow.session.guardrails import Budget, call_fingerprint
from sessionflow.session.model import SessionModel

NOW = datetime(2026, 1, 1, tzinfo=UTC)
READ = ToolPolicy(effect=ToolEffect.READ)


def in_turn() -> SessionModel:
    model = SessionModel()
    model.begin_turn(NOW)
    model.store_user_message(FrameworkMessage(role=MessageRole.USER, framework_item="hi", text="hi"))
    return model


def calls(
    *specs: tuple[str, str, str], policy: ToolPolicy = READ, error: str | None = None
) -> ToolCallsRequested:
    return ToolCallsRequested(
        framework_run_state="rs",
        tool_calls=[
            DeferredToolCall(tool_call_id=i, tool_name=n, arguments=a, policy=policy, proposal_error=error)
            for i, n, a in specs
        ],
        usage=AgentUsage(requests=1, input_tokens=100, output_tokens=10),
    )


def finish(model: SessionModel) -> None:
    for record in list(model.tool_calls.values()):
        if not record.is_final:
            model.move_tool_call(record.tool_call_id, AgentToolCallStatus.RUNNING)
            model.move_tool_call(record.tool_call_id, AgentToolCallStatus.SUCCEEDED, output="ok")
    model.resume_model()


def test_fingerprint_ignores_json_spelling() -> None:
    assert call_fingerprint("t", '{"a": 1, "b": 2}') == call_fingerprint("t", '{"b":2,"a":1}')
    assert call_fingerprint("t", '{"a": 1}') != call_fingerprint("u", '{"a": 1}')


def test_step_budget_is_checked_before_the_call() -> None:
    model = in_turn()
    budget = Budget(max_model_calls_per_turn=2)
    assert model.budget_stop_before_model_call(budget, NOW) is None
    model.count_model_call()
    assert model.budget_stop_before_model_call(budget, NOW) is None
    model.count_model_call()
    stop = model.budget_stop_before_model_call(budget, NOW)
    assert stop is not None and stop[0] is StopReason.STEP_BUDGET


def test_time_budget() -> None:
    model = in_turn()
    budget = Budget(max_turn_seconds=10)
    assert model.budget_stop_before_model_call(budget, NOW + timedelta(seconds=9)) is None
    stop = model.budget_stop_before_model_call(budget, NOW + timedelta(seconds=10))
    assert stop is not None and stop[0] is StopReason.TIME_BUDGET


def test_cost_budget_takes_the_worst_case_of_the_next_call() -> None:
    model = in_turn()
    budget = Budget(max_session_cost=1.0, input_price=0.001, output_price=0.002, max_output_tokens=100)
    # Nothing spent yet; the next call's worst case is its estimated input plus 100 output tokens.
    assert model.budget_stop_before_model_call(budget, NOW) is None
    model.record_usage(AgentUsage(requests=1, input_tokens=500, output_tokens=100), budget)
    assert abs(model.cost - (0.5 + 0.2)) < 1e-9
    # 0.7 spent; next worst case >= 500 * 0.001 + 100 * 0.002 = 0.7 -> 1.4 > 1.0.
    stop = model.budget_stop_before_model_call(budget, NOW)
    assert stop is not None and stop[0] is StopReason.COST_BUDGET


def test_repeat_within_a_turn_is_refused_and_stops() -> None:
    model = in_turn()
    budget = Budget()
    model.request_tools(calls(("a", "search", '{"q": 1}')), now=NOW, deadline=None, budget=budget)
    finish(model)
    records = model.request_tools(calls(("b", "search", '{"q":1}')), now=NOW, deadline=None, budget=budget)
    assert records[0].status is AgentToolCallStatus.REJECTED
    assert (records[0].error or "").startswith("repeated_call:")
    assert model.stop_reason == "repeated_call"


def test_repeats_allowed_by_policy() -> None:
    model = in_turn()
    budget = Budget()
    allow = ToolPolicy(effect=ToolEffect.READ, allow_repeats=True)
    model.request_tools(calls(("a", "poll", "{}"), policy=allow), now=NOW, deadline=None, budget=budget)
    finish(model)
    records = model.request_tools(
        calls(("b", "poll", "{}"), policy=allow), now=NOW, deadline=None, budget=budget
    )
    assert records[0].status is AgentToolCallStatus.PENDING and model.stop_reason is None


def test_tool_budget_refuses_calls_past_the_limit() -> None:
    model = in_turn()
    budget = Budget(max_tool_calls_per_turn=2)
    records = model.request_tools(
        calls(("a", "s", '{"q":1}'), ("b", "s", '{"q":2}'), ("c", "s", '{"q":3}')),
        now=NOW,
        deadline=None,
        budget=budget,
    )
    assert [r.status for r in records] == [
        AgentToolCallStatus.PENDING,
        AgentToolCallStatus.PENDING,
        AgentToolCallStatus.REJECTED,
    ]
    assert model.stop_reason == "tool_budget"


def test_consecutive_refusals_make_the_turn_stuck() -> None:
    model = in_turn()
    budget = Budget(max_stuck=2)
    model.request_tools(
        calls(("a", "x", "{}"), error="not_allowed: no"), now=NOW, deadline=None, budget=budget
    )
    assert model.stop_reason is None
    model.resume_model()
    model.request_tools(
        calls(("b", "x", "{}"), error="invalid_arguments: bad"), now=NOW, deadline=None, budget=budget
    )
    assert model.stop_reason == "stuck"


def test_an_accepted_call_resets_the_refusal_run() -> None:
    model = in_turn()
    budget = Budget(max_stuck=2)
    model.request_tools(
        calls(("a", "x", "{}"), error="not_allowed: no"), now=NOW, deadline=None, budget=budget
    )
    model.resume_model()
    model.request_tools(calls(("b", "s", "{}")), now=NOW, deadline=None, budget=budget)
    finish(model)
    model.request_tools(
        calls(("c", "x", "{}"), error="not_allowed: no"), now=NOW, deadline=None, budget=budget
    )
    assert model.stop_reason is None


def test_refused_proposals_raise_no_interrupt() -> None:
    model = in_turn()
    write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    model.request_tools(
        calls(("a", "x", "{}"), policy=write, error="not_allowed: no"), now=NOW, deadline=None
    )
    assert model.pending_interrupts == []
    assert model.tool_calls["a"].status is AgentToolCallStatus.REJECTED


def test_session_budget_resolves_prices() -> None:
    budget = SessionBudget(max_session_cost=1.0, price_model="m").resolve(lambda model, provider: (2.0, 8.0))
    assert (budget.input_price, budget.output_price) == (2.0 / 1e6, 8.0 / 1e6)
    try:
        SessionBudget(max_session_cost=1.0, price_model="unknown").resolve(lambda model, provider: None)
    except ValueError as error:
        assert "needs prices" in str(error)
    else:
        raise AssertionError("a cost limit without prices must be refused")


def test_a_repeat_counts_as_one_refusal_and_an_accepted_call_resets_the_run_to_zero() -> None:
    model = in_turn()
    budget = Budget()
    model.request_tools(calls(("a", "search", '{"q": 1}')), now=NOW, deadline=None, budget=budget)
    assert model.consecutive_rejections == 0
    finish(model)
    model.request_tools(calls(("b", "search", '{"q": 1}')), now=NOW, deadline=None, budget=budget)
    assert model.consecutive_rejections == 1
    model.resume_model()
    model.request_tools(calls(("c", "search", '{"q": 2}')), now=NOW, deadline=None, budget=budget)
    assert model.consecutive_rejections == 0


def test_the_time_deadline_and_budget_of_a_request_are_given_by_keyword() -> None:
    model = in_turn()
    with pytest.raises(TypeError):
        model.request_tools(calls(("a", "s", "{}")), NOW, None)  # type: ignore[misc]
    assert model.tool_calls == {}
