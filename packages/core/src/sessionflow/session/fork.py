"""Forking a session at turn N: which of its messages the new session starts with.

A turn is one user message and everything stored up to the turn's end (the model's
replies, tool results, the note a failed turn leaves). A fork at turn N starts a new
session whose history is the original's history (if it started with one) and its turns
1..N, all of which have ended; the original is not changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sessionflow.session.errors import UserError
from sessionflow.session.messages import AgentMessage

if TYPE_CHECKING:
    # The snapshot records `ForkedFrom`, so the state module imports this one.
    from sessionflow.session.state import AgentState

__all__ = [
    "ForkedFrom",
    "TurnOutOfRangeError",
    "UnknownSessionError",
    "check_fork_turn",
    "ended_turns",
    "in_fork",
    "turn_number",
]

_TURN_PREFIX = "turn-"


@dataclass(frozen=True, kw_only=True)
class ForkedFrom:
    """Where a forked session came from: its messages are `session_id`'s turns 1..`turn`."""

    session_id: str
    turn: int


class UnknownSessionError(UserError, LookupError):
    """No session has this ID."""


class TurnOutOfRangeError(UserError, ValueError):
    """A fork asked for a turn the session has not ended (or a turn number below 1)."""


def ended_turns(state: AgentState | None) -> int:
    """Turns of the session that have ended; a running turn does not count."""
    if state is None:
        return 0
    return state.turn_count - (1 if state.turn_id is not None else 0)


def check_fork_turn(session_id: str, at_turn: object, ended: int) -> int:
    """`at_turn` when it names an ended turn of the session; `TurnOutOfRangeError` otherwise."""
    if isinstance(at_turn, bool) or not isinstance(at_turn, int):
        raise TurnOutOfRangeError(f"at_turn must be a whole number, got {at_turn!r}")
    if ended == 0:
        raise TurnOutOfRangeError(f"session {session_id!r} has no ended turn to fork at")
    if not 1 <= at_turn <= ended:
        raise TurnOutOfRangeError(
            f"session {session_id!r} has ended turns 1..{ended}: cannot fork at turn {at_turn}"
        )
    return at_turn


def turn_number(turn_id: str) -> int:
    """The number of a turn ID (`turn-3` is 3); 0 for anything stored before the first turn."""
    if turn_id.startswith(_TURN_PREFIX) and turn_id[len(_TURN_PREFIX) :].isdigit():
        return int(turn_id[len(_TURN_PREFIX) :])
    return 0


def in_fork(message: AgentMessage, at_turn: int) -> bool:
    """The message belongs to a fork at `at_turn`: the history, or a turn up to `at_turn`."""
    return turn_number(message.turn_id) <= at_turn
