"""Forking at turn N: which turns may be forked, and which messages a fork takes."""

from __future__ import annotations

import pytest

from sessionflow import (
    AgentMessage,
    AgentState,
    ForkedFrom,
    TurnOutOfRangeError,
    UnknownSessionError,
    UserError,
)
from sessionflow.session.fork import check_fork_turn, ended_turns, in_fork, turn_number
from sessionflow.session.model import SessionModel
from sessionflow.session.transcript import HISTORY_TURN_ID
from tests.session.helpers import user


def test_a_running_turn_has_not_ended() -> None:
    assert ended_turns(None) == 0
    assert ended_turns(AgentState(turn_count=2)) == 2
    assert ended_turns(AgentState(turn_count=3, turn_id="turn-3")) == 2


@pytest.mark.parametrize("at_turn", [0, -1, 3, True, 1.0, "1"])
def test_turns_out_of_range(at_turn: object) -> None:
    with pytest.raises(TurnOutOfRangeError):
        check_fork_turn("s", at_turn, 2)


def test_the_errors_say_why() -> None:
    with pytest.raises(TurnOutOfRangeError, match=r"has ended turns 1\.\.2: cannot fork at turn 3"):
        check_fork_turn("s", 3, 2)
    with pytest.raises(TurnOutOfRangeError, match="has no ended turn to fork at"):
        check_fork_turn("s", 1, 0)
    assert check_fork_turn("s", 2, 2) == 2
    assert issubclass(TurnOutOfRangeError, UserError) and issubclass(TurnOutOfRangeError, ValueError)
    assert issubclass(UnknownSessionError, UserError) and issubclass(UnknownSessionError, LookupError)


def test_turn_numbers() -> None:
    assert turn_number("turn-12") == 12
    assert turn_number(HISTORY_TURN_ID) == 0
    assert turn_number("turn-x") == 0


def test_a_fork_takes_the_history_and_turns_up_to_n() -> None:
    def stored(turn_id: str) -> AgentMessage:
        return AgentMessage(sequence=1, turn_id=turn_id, message=user("x"))

    assert in_fork(stored(HISTORY_TURN_ID), 1)
    assert in_fork(stored("turn-1"), 1)
    assert not in_fork(stored("turn-2"), 1)
    assert in_fork(stored("turn-2"), 2)


def test_the_snapshot_shows_where_a_fork_came_from() -> None:
    model = SessionModel(forked_from=ForkedFrom(session_id="a", turn=1))
    assert model.snapshot("b").forked_from == ForkedFrom(session_id="a", turn=1)
    assert SessionModel().snapshot("c").forked_from is None
