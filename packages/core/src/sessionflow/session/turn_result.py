"""What one turn came to, as a client that awaited it sees it (`AgentSessionClient.run_turn`).

`TurnTracker` reads a session's events and follows one turn: it finds the turn's start (by
the message ID its user message was sent with, or as the session's first turn), gathers its
tool calls and usage, and notices its end or an interrupt it waits on. It is pure, so what a
result holds is decided here, not by the client's I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, cast

from sessionflow.session.events import AgentEvent, AgentEventType
from sessionflow.session.guardrails import StopReason
from sessionflow.session.state import AgentInterrupt
from sessionflow.session.usage import AgentUsage

__all__ = ["Rejection", "TurnResult", "TurnStatus", "TurnToolCall", "TurnTracker"]


class TurnStatus(StrEnum):
    """How a turn ended, or that it waits."""

    COMPLETED = "completed"
    FAILED = "failed"
    """An error ended it (a model call that failed for good, an invalid model step)."""
    CANCELLED = "cancelled"
    STOPPED = "stopped"
    """The session stopped it on its own: a budget, a repeated call, too many refusals."""
    WAITING = "waiting"
    """It waits on an approval or a question nobody answered here (`TurnResult.interrupts`)."""


@dataclass(frozen=True, kw_only=True)
class Rejection:
    """What an `on_interrupt` callback returns to reject a call, or decline a question, with a reason."""

    message: str = ""


@dataclass(frozen=True, kw_only=True)
class TurnToolCall:
    """One tool call of the turn and how it ended (`AgentToolCallStatus` values)."""

    tool_call_id: str
    tool_name: str
    effect: str | None = None
    status: str = "pending"
    """``succeeded``, ``failed``, ``rejected``...; ``pending`` or ``awaiting_approval`` while it waits."""
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """One turn, awaited: its whole answer, how it ended, what it cost and which tools it called."""

    session_id: str
    turn_id: str
    status: TurnStatus
    text: str = ""
    """The turn's final answer, whole (never a preview): the text of its last assistant message."""
    stop_reason: str | None = None
    """For a stopped turn, the `StopReason` value; ``cancelled`` for a cancelled one."""
    error: str | None = None
    usage: AgentUsage = field(default_factory=AgentUsage)
    """The model usage of this turn alone."""
    tool_calls: list[TurnToolCall] = field(default_factory=lambda: [])
    interrupts: list[AgentInterrupt] = field(default_factory=lambda: [])
    """The approvals and questions the turn waits on (status `WAITING`)."""

    @property
    def ok(self) -> bool:
        return self.status is TurnStatus.COMPLETED


_STOP_REASONS = frozenset(reason.value for reason in StopReason)


class TurnTracker:
    """Follows one turn through a session's events (durable and live, in the client's order)."""

    def __init__(self, *, message_id: str | None) -> None:
        """`message_id`: the ID the turn's message was sent with; None matches the first turn started."""
        self._message_id = message_id
        self.turn_id: str | None = None
        self.first_sequence: int | None = None
        """The sequence the turn's user message got."""
        self._calls: dict[str, TurnToolCall] = {}
        self._usage = AgentUsage()
        self.raised: list[str] = []
        """IDs of interrupts raised and not yet resolved, oldest first."""
        self.ended: AgentEvent | None = None

    def mine(self, event: AgentEvent) -> bool:
        """Take `event` in; True when it belongs to the followed turn."""
        if self.turn_id is None:
            if event.type is not AgentEventType.TURN_STARTED:
                return False
            if self._message_id is not None and event.data.get("message_id") != self._message_id:
                return False
            self.turn_id = event.turn_id
            sequence = event.data.get("sequence")
            self.first_sequence = sequence if isinstance(sequence, int) else None
            return True
        if event.turn_id != self.turn_id:
            return False
        if event.offset is not None:  # live events repeat what durable ones say
            self._record(event)
        return True

    def _record(self, event: AgentEvent) -> None:
        data = event.data
        match event.type:
            case AgentEventType.TOOL_CALL_DEFERRED:
                call_id = str(data.get("tool_call_id", ""))
                self._calls[call_id] = TurnToolCall(
                    tool_call_id=call_id,
                    tool_name=str(data.get("tool_name", "")),
                    effect=_text_or_none(data.get("effect")),
                    status="awaiting_approval" if data.get("requires_approval") else "pending",
                )
            case AgentEventType.TOOL_CALL_STARTED:
                self._moved(data, status="running")
            case AgentEventType.TOOL_CALL_FINISHED:
                self._moved(data, status=str(data.get("status", "")), error=_text_or_none(data.get("error")))
            case AgentEventType.USAGE_RECORDED:
                self._usage = self._usage + _usage_of(data.get("recorded"))
            case AgentEventType.INTERRUPT_RAISED:
                self.raised.append(str(data.get("interrupt_id", "")))
            case AgentEventType.INTERRUPT_RESOLVED:
                resolved = data.get("interrupt_id")
                self.raised = [i for i in self.raised if i != resolved]
            case AgentEventType.TURN_COMPLETED | AgentEventType.TURN_FAILED:
                self.ended = event
            case _:
                pass

    def _moved(self, data: dict[str, Any], *, status: str, error: str | None = None) -> None:
        call_id = str(data.get("tool_call_id", ""))
        known = self._calls.get(call_id) or TurnToolCall(
            tool_call_id=call_id, tool_name=str(data.get("tool_name", ""))
        )
        self._calls[call_id] = TurnToolCall(
            tool_call_id=call_id, tool_name=known.tool_name, effect=known.effect, status=status, error=error
        )

    def result(
        self, session_id: str, *, text: str, interrupts: list[AgentInterrupt] | None = None
    ) -> TurnResult:
        """The result so far: the turn's end if it ended, else a turn that waits on `interrupts`."""
        assert self.turn_id is not None, "the turn has not started"
        status, stop_reason, error = TurnStatus.WAITING, None, None
        if self.ended is not None:
            status, stop_reason, error = _ending(self.ended)
        return TurnResult(
            session_id=session_id,
            turn_id=self.turn_id,
            status=status,
            text=text,
            stop_reason=stop_reason,
            error=error,
            usage=self._usage,
            tool_calls=list(self._calls.values()),
            interrupts=list(interrupts or []) if self.ended is None else [],
        )


def _ending(event: AgentEvent) -> tuple[TurnStatus, str | None, str | None]:
    if event.type is AgentEventType.TURN_COMPLETED:
        return TurnStatus.COMPLETED, None, None
    reason = str(event.data.get("reason", "error"))
    error = _text_or_none(event.data.get("error"))
    if reason == "cancelled":
        return TurnStatus.CANCELLED, reason, error
    if reason in _STOP_REASONS:
        return TurnStatus.STOPPED, reason, error
    return TurnStatus.FAILED, None, error


def _usage_of(recorded: Any) -> AgentUsage:
    if not isinstance(recorded, dict):
        return AgentUsage()
    fields = cast(dict[str, Any], recorded)
    counts = {key: fields.get(key) for key in ("requests", "input_tokens", "output_tokens")}
    return AgentUsage(**{key: value for key, value in counts.items() if isinstance(value, int)})


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
