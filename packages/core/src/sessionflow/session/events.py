"""Events a session publishes while it runs, and the writer a runner uses for them."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["AgentEvent", "AgentEventType", "AgentEventWriter", "AgentEventsPage", "EventLog", "EventSink"]


class AgentEventType(StrEnum):
    TURN_STARTED = "turn_started"
    TURN_COMPLETED = "turn_completed"
    TURN_FAILED = "turn_failed"
    TEXT_DELTA = "text_delta"
    REASONING_DELTA = "reasoning_delta"
    TOOL_CALL_STARTED = "tool_call_started"
    TOOL_CALL_FINISHED = "tool_call_finished"
    TOOL_CALL_DEFERRED = "tool_call_deferred"
    INTERRUPT_RAISED = "interrupt_raised"
    INTERRUPT_RESOLVED = "interrupt_resolved"
    USAGE_RECORDED = "usage_recorded"
    ATTEMPT_RESTARTED = "attempt_restarted"
    MODEL_CONTINUED = "model_continued"
    MODEL_STEP_COMPLETED = "model_step_completed"
    """A model step ended: what the model wrote in it and the calls it asked for (durable, so
    a client that connects late or reloads reads the running turn whole)."""
    TOOL_CALL_VERIFIED = "tool_call_verified"
    USER_MESSAGE_STEERED = "user_message_steered"
    """A message sent to steer the running turn joined it: ``step`` names the model step that
    got it (after the tool results of the step before), ``message_id`` the send's ID."""
    CUSTOM_EVENT = "custom_event"
    """Data a framework streams beside the text (LangGraph's ``get_stream_writer()``): live only."""

    @property
    def is_delta(self) -> bool:
        return self in (AgentEventType.TEXT_DELTA, AgentEventType.REASONING_DELTA)

    @property
    def is_live(self) -> bool:
        """Written by a step and carried by the delta transport, not by the workflow's event log.

        (Deltas and restarts also reach the log in coarse batches when nobody listens live.)
        """
        return self.is_delta or self in (AgentEventType.ATTEMPT_RESTARTED, AgentEventType.CUSTOM_EVENT)


@dataclass(frozen=True, kw_only=True)
class AgentEvent:
    """One event. `step_execution_id` is shared by every attempt of one step execution."""

    type: AgentEventType
    turn_id: str
    step_execution_id: str
    attempt: int
    data: dict[str, Any] = field(default_factory=lambda: {})
    offset: int | None = None


EventSink = Callable[[AgentEvent], None]


class AgentEventWriter:
    """Writes events for one step attempt. Safe from any thread; writes after `close()` are dropped."""

    def __init__(self, sink: EventSink | None, *, turn_id: str, step_execution_id: str, attempt: int) -> None:
        self._sink = sink
        self._lock = threading.Lock()
        self._closed = sink is None
        self.turn_id = turn_id
        self.step_execution_id = step_execution_id
        self.attempt = attempt

    def write_event(self, event_type: AgentEventType, data: dict[str, Any] | None = None) -> None:
        event = AgentEvent(
            type=event_type,
            turn_id=self.turn_id,
            step_execution_id=self.step_execution_id,
            attempt=self.attempt,
            data=data or {},
        )
        with self._lock:
            if self._closed or self._sink is None:
                return
            self._sink(event)

    def write_text_delta(self, text: str) -> None:
        if text:
            self.write_event(AgentEventType.TEXT_DELTA, {"text": text})

    def write_reasoning_delta(self, text: str) -> None:
        if text:
            self.write_event(AgentEventType.REASONING_DELTA, {"text": text})

    def write_custom_event(self, data: Any, **fields: Any) -> None:
        """A `custom_event` carrying ``data`` (and ``fields``), made JSON-safe for every transport."""
        payload = json.loads(json.dumps({**fields, "data": data}, default=str, ensure_ascii=False))
        self.write_event(AgentEventType.CUSTOM_EVENT, payload)

    def write_tool_call_started(self, tool_call_id: str, tool_name: str) -> None:
        self.write_event(
            AgentEventType.TOOL_CALL_STARTED, {"tool_call_id": tool_call_id, "tool_name": tool_name}
        )

    def write_tool_call_finished(self, tool_call_id: str, tool_name: str, status: str) -> None:
        self.write_event(
            AgentEventType.TOOL_CALL_FINISHED,
            {"tool_call_id": tool_call_id, "tool_name": tool_name, "status": status},
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed


@dataclass(frozen=True, kw_only=True)
class AgentEventsPage:
    """Durable events after an offset. `truncated` says older events were dropped by retention."""

    events: list[AgentEvent]
    next_offset: int
    truncated: bool = False
    closed: bool = False


def _event_size(event: AgentEvent) -> int:
    return 96 + sum(len(str(k)) + len(str(v)) for k, v in event.data.items())


@dataclass(kw_only=True)
class EventLog:
    """An offset-addressed log with a retention bound, kept in workflow memory.

    Offsets start at 1 and keep counting across continue-as-new. Only the newest events
    are retained (by count and approximate bytes), so the log never grows without limit.
    """

    events: list[AgentEvent] = field(default_factory=lambda: [])
    last_offset: int = 0
    retained_bytes: int = 0
    max_events: int = 2000
    max_bytes: int = 1024 * 1024

    def append(self, event: AgentEvent) -> AgentEvent:
        self.last_offset += 1
        stored = AgentEvent(
            type=event.type,
            turn_id=event.turn_id,
            step_execution_id=event.step_execution_id,
            attempt=event.attempt,
            data=event.data,
            offset=self.last_offset,
        )
        self.events.append(stored)
        self.retained_bytes += _event_size(stored)
        while len(self.events) > self.max_events or (
            self.retained_bytes > self.max_bytes and len(self.events) > 1
        ):
            dropped = self.events.pop(0)
            self.retained_bytes -= _event_size(dropped)
        return stored

    def read(self, after: int, limit: int = 500) -> AgentEventsPage:
        first = self.events[0].offset if self.events else self.last_offset + 1
        assert first is not None
        truncated = after + 1 < first
        start = max(0, after + 1 - first)
        chunk = self.events[start : start + max(1, limit)]
        next_offset = chunk[-1].offset if chunk and chunk[-1].offset is not None else max(after, first - 1)
        return AgentEventsPage(events=chunk, next_offset=next_offset, truncated=truncated)
