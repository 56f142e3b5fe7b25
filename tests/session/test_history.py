"""`SessionModel.load_history`: the messages a session starts with, before any turn."""

from __future__ import annotations

import pytest

from sessionflow import SessionStateError
from sessionflow.kit import TurnCompleted, message_digest
from sessionflow.session.guardrails import Budget
from sessionflow.session.model import SessionModel
from sessionflow.session.transcript import HISTORY_TURN_ID
from tests.session.helpers import NOW, assistant, user


def test_history_is_stored_before_the_first_turn() -> None:
    model = SessionModel()
    history = [user("a"), assistant("b")]
    model.load_history(history)

    assert [(m.sequence, m.turn_id, m.message) for m in model.messages] == [
        (1, HISTORY_TURN_ID, history[0]),
        (2, HISTORY_TURN_ID, history[1]),
    ]
    digest = ""
    for stored in model.messages:
        digest = message_digest(digest, stored)
    assert model.digest == digest
    assert not model.turn_active and model.state.turn_count == 0

    # The first turn follows it, as after earlier turns.
    model.begin_turn()
    model.store_user_message(user("c"))
    assert [m.sequence for m in model.turn_messages()] == [3]
    model.complete_turn(TurnCompleted(new_messages=[assistant("d")]))
    assert [m.turn_id for m in model.messages] == [HISTORY_TURN_ID] * 2 + ["turn-1"] * 2


def test_history_is_loaded_only_into_an_empty_session() -> None:
    model = SessionModel()
    model.load_history([user("a")])
    with pytest.raises(SessionStateError):
        model.load_history([user("b")])


def test_the_budget_counts_the_history_before_the_first_call() -> None:
    long = user("x" * 30_000)
    fresh, loaded = SessionModel(), SessionModel()
    loaded.load_history([long])
    for model in (fresh, loaded):
        model.begin_turn()
        model.store_user_message(user("hi"))
    assert loaded.estimated_next_input_tokens() > fresh.estimated_next_input_tokens() + 9_000
    # A cost budget the history alone would break stops the turn before its first call.
    budget = Budget(max_session_cost=0.005, input_price=1.0 / 1_000_000, output_price=0.0)
    assert fresh.budget_stop_before_model_call(budget, NOW) is None
    assert loaded.budget_stop_before_model_call(budget, NOW) is not None
