"""The run context as durable JSON (issue 22, item 2): what is refused when the flow is built,
how it round-trips, and run states written before the context was durable."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from agents import Agent
from pydantic import BaseModel

from sessionflow import UnsupportedOptionError
from sessionflow.kit import value_change
from sessionflow_openai_agents import openai_agents_session_flow
from sessionflow_openai_agents._context import ContextCodec
from sessionflow_openai_agents._state import parse_run_state
from sessionflow_openai_agents._step_update import StepState, encode_step_update


class Client:
    """Stands for an HTTP client or a secret store: no JSON form."""


@dataclass
class WithClient:
    user: str
    client: Client


@dataclass
class Seat:
    row: int
    letter: str


@dataclass
class Booking:
    name: str
    seats: list[Seat] = field(default_factory=lambda: [])


class Airline(BaseModel):
    flight_number: str | None = None
    seat_number: str | None = None


def test_a_context_that_cannot_be_json_is_refused_when_the_flow_is_built() -> None:
    with pytest.raises(UnsupportedOptionError) as raised:
        openai_agents_session_flow(
            Agent[Any](name="start"),
            flow_type="refused",
            context_factory=lambda session_id: WithClient(user=session_id, client=Client()),
        )
    assert raised.value.option == "context_factory"
    assert "the run context (WithClient) cannot be stored with the session" in raised.value.why
    assert "pydantic model, a dataclass or a JSON dict" in raised.value.why


def test_a_dict_with_an_object_in_it_is_refused() -> None:
    with pytest.raises(UnsupportedOptionError) as raised:
        ContextCodec(lambda session_id: {"client": Client()})
    assert raised.value.option == "context_factory"


@pytest.mark.parametrize(
    "context",
    [Airline(flight_number="FLT-1"), Booking(name="Ada", seats=[Seat(12, "A")]), {"user": "u1"}],
)
def test_pydantic_models_dataclasses_and_json_dicts_round_trip(context: Any) -> None:
    codec = ContextCodec(lambda session_id: context)
    data = codec.dump(context)
    assert json.loads(json.dumps(data)) == data
    again = codec.load(data, "s")
    assert type(again) is type(context)
    assert again == context


def test_a_missing_context_is_built_by_the_factory_for_the_session() -> None:
    codec = ContextCodec(lambda session_id: {"user": session_id})
    assert codec.load(None, "session-7") == {"user": "session-7"}
    assert ContextCodec(None).load(None, "s") is None


def test_parallel_tool_changes_merge_field_by_field_in_model_order() -> None:
    before = {"flight_number": "FLT-1", "seat_number": None, "meal": None}
    seat = value_change(before, {**before, "seat_number": "12A"})
    meal = value_change(before, {**before, "meal": "veg", "seat_number": "14C"})
    assert value_change(before, dict(before)) is None
    updates = [("a", encode_step_update(seat, None)), ("b", encode_step_update(meal, {"k": 1}))]
    merged = StepState(before).apply([(call, text) for call, text in updates if text is not None])
    assert merged.context == {"flight_number": "FLT-1", "seat_number": "14C", "meal": "veg"}
    assert merged.tool_state == {"k": 1}


def test_a_run_state_written_before_the_context_was_durable_still_reads() -> None:
    # Format 1 (before issue 22): no context, no tool state; the step builds a fresh context.
    old = json.dumps(
        {"format": "sessionflow-openai-agents/1", "input_from_messages": True, "state": {"x": 1}}
    )
    saved = parse_run_state(old)
    assert saved.context is None
    assert saved.tool_state == {}
    assert saved.data == {"x": 1}
