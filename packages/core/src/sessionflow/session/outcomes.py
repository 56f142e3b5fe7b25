"""What one model step returns to the session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessionflow.session.bodies import BodyRef
from sessionflow.session.messages import AgentMessage, FrameworkMessage
from sessionflow.session.tools import DeferredToolCall
from sessionflow.session.usage import AgentUsage

__all__ = ["AgentTurnOutcome", "ContinueRequested", "ToolCallsRequested", "TurnCompleted"]


@dataclass(frozen=True, kw_only=True)
class TurnCompleted:
    """The model gave its final answer.

    `new_messages` holds everything the turn produced after its user message, across all
    of its model calls, in order. `usage` covers this model call only.
    """

    new_messages: list[FrameworkMessage]
    usage: AgentUsage = field(default_factory=AgentUsage)
    carry: str | None = None
    """State for the next turn, in the runner's own encoding (see `sessionflow.session.carry`).

    It replaces the carry this turn started with (`AgentTurnContext.carried_state`); None
    or "" leaves none. A runner that carries passes the old one on to keep it."""
    carry_ref: BodyRef | None = None
    """Set by the engine when it stored a large carry; `carry` is then its preview."""
    framework_state: dict[str, Any] | None = None
    """The framework's state after the turn, as JSON values by key, for the snapshot
    (`AgentSnapshot.framework_state`; see `sessionflow.session.framework_state`). Read
    only: the session never gives it back to the runner. None shows none."""
    framework_state_omitted: list[str] = field(default_factory=lambda: [])
    """Keys of the view left out because it would have been too large (set by the engine)."""
    replaced_messages: list[AgentMessage] = field(default_factory=lambda: [])
    """Messages this turn stored before its model steps (its user message, notes) as the
    framework's own history holds them at the end of the turn: a node redacted or rewrote
    them (LangChain's `PIIMiddleware`). Each replaces the stored message of its `sequence`,
    which must be one of the running turn's; the stored transcript is then what the
    framework's history holds. Empty: nothing replaced."""
    superseded: list[int] = field(default_factory=lambda: [])
    """Sequences of stored messages, of earlier turns or this one, that the framework's own
    history no longer holds at the end of this turn: a handoff's input filter dropped them,
    a summary replaced them. The session keeps them (forks at an earlier turn, and audit
    reads, still see them), and its reads leave them out, so the transcript is what the
    framework's history holds. A runner may name the same message again on a later turn.
    Empty: nothing superseded."""


@dataclass(frozen=True, kw_only=True)
class ToolCallsRequested:
    """The model asked for tools. The session runs them, then resumes from the run state."""

    framework_run_state: str
    tool_calls: list[DeferredToolCall]
    usage: AgentUsage = field(default_factory=AgentUsage)
    run_state_ref: BodyRef | None = None
    """Set by the engine when it stored a large run state; `framework_run_state` is then ""."""


@dataclass(frozen=True, kw_only=True)
class ContinueRequested:
    """Call the model again, from a new run state, with no tool in between.

    For a retry prompt (an output validator refused the answer), a second node that calls
    the model, or a reasoning-only response. The next call is its own model step, so a
    crash repeats only that call. `note` says why, for events and logs; the model never
    sees it (put what the model must see into the run state).
    """

    framework_run_state: str
    note: str = ""
    usage: AgentUsage = field(default_factory=AgentUsage)
    run_state_ref: BodyRef | None = None
    """Set by the engine when it stored a large run state; `framework_run_state` is then ""."""


AgentTurnOutcome = TurnCompleted | ToolCallsRequested | ContinueRequested
