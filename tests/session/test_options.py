"""Session options: the values they refuse, and what they resolve to."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.session.options import AgentSessionOptions, MemoryOptions, SessionBudget, SessionTimings


@pytest.mark.parametrize("field", ["model_max_attempts", "tool_max_attempts"])
def test_attempt_counts_start_at_one(field: str) -> None:
    assert getattr(SessionTimings(**{field: 1}), field) == 1  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValueError, match="attempt counts must be at least 1"):
        SessionTimings(**{field: 0})  # pyright: ignore[reportArgumentType]


def test_an_interrupt_deadline_must_be_positive() -> None:
    assert SessionTimings(interrupt_deadline=timedelta(microseconds=1)).interrupt_deadline
    for bad in (timedelta(0), timedelta(seconds=-1)):
        with pytest.raises(ValueError, match="interrupt_deadline must be positive"):
            SessionTimings(interrupt_deadline=bad)
    assert SessionTimings().interrupt_deadline is None


def test_tool_output_bytes_start_at_one_and_continues_at_zero() -> None:
    assert AgentSessionOptions(max_tool_output_bytes=1).max_tool_output_bytes == 1
    with pytest.raises(ValueError, match="max_tool_output_bytes must be at least 1, got 0"):
        AgentSessionOptions(max_tool_output_bytes=0)
    assert AgentSessionOptions(max_continues_per_turn=0).max_continues_per_turn == 0
    with pytest.raises(ValueError, match="max_continues_per_turn must be at least 0, got -1"):
        AgentSessionOptions(max_continues_per_turn=-1)


def test_a_policy_cap_overrides_the_sessions_tool_output_cap() -> None:
    options = AgentSessionOptions(max_tool_output_bytes=1000)
    assert options.tool_output_cap(ToolPolicy(effect=ToolEffect.READ)) == 1000
    assert options.tool_output_cap(ToolPolicy(effect=ToolEffect.READ, max_output_bytes=10)) == 10
    assert AgentSessionOptions().max_tool_output_bytes == 1024 * 1024
    assert AgentSessionOptions().event_stream_capacity == 256 * 1024


def test_prices_per_million_tokens_become_prices_per_token() -> None:
    budget = SessionBudget(input_price_per_mtok=2.0, output_price_per_mtok=8.0).resolve()
    assert (budget.input_price, budget.output_price) == (2.0 / 1e6, 8.0 / 1e6)
    free = SessionBudget().resolve()
    assert (free.input_price, free.output_price) == (0.0, 0.0)


def test_the_price_table_fills_only_the_prices_not_given() -> None:
    asked: list[tuple[str, str | None]] = []

    def table(model: str, provider: str | None) -> tuple[float, float]:
        asked.append((model, provider))
        return (3.0, 9.0)

    only_input = SessionBudget(price_model="m", price_provider="p", input_price_per_mtok=1.0).resolve(table)
    assert (only_input.input_price, only_input.output_price) == (1.0 / 1e6, 9.0 / 1e6)
    only_output = SessionBudget(price_model="m", output_price_per_mtok=5.0).resolve(table)
    assert (only_output.input_price, only_output.output_price) == (3.0 / 1e6, 5.0 / 1e6)
    assert asked == [("m", "p"), ("m", None)]
    both = SessionBudget(price_model="m", input_price_per_mtok=1.0, output_price_per_mtok=2.0).resolve(table)
    assert (both.input_price, both.output_price) == (1.0 / 1e6, 2.0 / 1e6)
    assert len(asked) == 2  # both prices given: the table is not asked
    no_model = SessionBudget(input_price_per_mtok=1.0).resolve(table)
    assert (no_model.input_price, no_model.output_price) == (1.0 / 1e6, 0.0)
    assert len(asked) == 2


def test_a_cost_limit_needs_both_prices() -> None:
    with pytest.raises(ValueError, match="max_session_cost needs prices"):
        SessionBudget(max_session_cost=1.0, input_price_per_mtok=1.0).resolve()
    with pytest.raises(ValueError, match="max_session_cost needs prices"):
        SessionBudget(max_session_cost=1.0, output_price_per_mtok=1.0).resolve()
    resolved = SessionBudget(
        max_session_cost=1.0, input_price_per_mtok=1.0, output_price_per_mtok=1.0
    ).resolve()
    assert resolved.max_session_cost == 1.0


def test_the_budget_carries_its_limits_and_durations_in_seconds() -> None:
    budget = SessionBudget(
        max_model_calls_per_turn=4,
        max_tool_calls_per_turn=5,
        max_turn_duration=timedelta(minutes=2),
        max_output_tokens=100,
        max_stuck=7,
    ).resolve()
    assert (budget.max_model_calls_per_turn, budget.max_tool_calls_per_turn) == (4, 5)
    assert budget.max_turn_seconds == 120.0
    assert (budget.max_output_tokens, budget.max_stuck) == (100, 7)
    assert SessionBudget().resolve().max_turn_seconds is None


def test_memory_options_defaults() -> None:
    options = MemoryOptions()
    assert (options.max_notes, options.max_chars, options.ttl) == (50, 500, timedelta(days=30))
