"""The framework's state view: what a completed turn shows, what keeps it, and its bound."""

from __future__ import annotations

from temporalio.converter import DataConverter

from sessionflow import AgentUsage
from sessionflow.kit import TurnCompleted
from sessionflow.session.framework_state import (
    FRAMEWORK_STATE_BYTES,
    bounded_framework_state,
    framework_state_view,
)
from sessionflow.session.model import SessionModel
from tests.session.helpers import NOW, assistant, model_in_turn, user


def done(state: dict[str, object] | None) -> TurnCompleted:
    return TurnCompleted(new_messages=[assistant()], usage=AgentUsage(requests=1), framework_state=state)


def next_turn(model: SessionModel) -> None:
    model.begin_turn(NOW)
    model.store_user_message(user("next"))


def test_a_completed_turn_shows_its_state_and_the_next_replaces_it() -> None:
    model = model_in_turn()
    assert model.snapshot("s").framework_state is None
    model.complete_turn(done({"user_name": "Ada", "turns": 1}))
    assert model.snapshot("s").framework_state == {"user_name": "Ada", "turns": 1}
    next_turn(model)
    model.complete_turn(done({"turns": 2}))
    assert model.snapshot("s").framework_state == {"turns": 2}
    next_turn(model)
    model.complete_turn(done(None))
    assert model.snapshot("s").framework_state is None


def test_a_failed_turn_keeps_the_state_it_started_with() -> None:
    model = model_in_turn()
    model.complete_turn(done({"turns": 1}))
    next_turn(model)
    model.fail_turn("model call failed: boom", None)
    assert model.snapshot("s").framework_state == {"turns": 1}


def test_the_view_is_json_and_keeps_whole_keys_within_its_bound() -> None:
    big = "x" * FRAMEWORK_STATE_BYTES
    outcome = bounded_framework_state(done({"a": 1, "big": big, "when": NOW, "b": [1, 2]}))
    assert outcome.framework_state == {"a": 1, "when": str(NOW), "b": [1, 2]}
    assert outcome.framework_state_omitted == ["big"]
    kept, omitted = framework_state_view({"a": "y" * 10, "b": "z" * 10}, limit=2 + 6 + 12)
    assert (kept, omitted) == ({"a": "y" * 10}, ["b"])
    model = model_in_turn()
    model.complete_turn(outcome)
    snapshot = model.snapshot("s")
    assert snapshot.framework_state_omitted == ["big"]


def test_the_view_survives_the_models_round_trip_and_an_old_model_shows_none() -> None:
    model = model_in_turn()
    model.complete_turn(bounded_framework_state(done({"cities": ["sf"], "big": "x" * FRAMEWORK_STATE_BYTES})))
    converter = DataConverter.default.payload_converter
    back = converter.from_payload(converter.to_payload(model), SessionModel)
    assert (back.framework_state, back.framework_state_omitted) == ({"cities": ["sf"]}, ["big"])
    old = converter.from_payload(converter.to_payload({"messages": [], "stopped": False}), SessionModel)
    assert (old.framework_state, old.framework_state_omitted) == (None, [])
    recorded = converter.to_payload({"new_messages": [], "carry": "c"})
    assert converter.from_payload(recorded, TurnCompleted).framework_state is None
