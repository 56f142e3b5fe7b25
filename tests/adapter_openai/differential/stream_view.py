"""What a client following the run sees, reduced to what both runs can show alike.

Plain: the events of `Runner.run_streamed` (`stream_events()`). Session: the events a
client follows (`AgentSessionClient.events`). Both become one list of `StreamItem`:
text and reasoning deltas joined while they follow each other, each tool call the model
made (by its call ID, which is the script's in both runs) and each tool result.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import Any, cast

from agents import RawResponsesStreamEvent, RunItemStreamEvent, StreamEvent

from sessionflow import AgentEvent, AgentEventType, AgentSessionClient

__all__ = ["StreamItem", "collect_session_events", "joined", "plain_stream_item", "session_stream"]

StreamItem = tuple[str, str]
"""``("text", delta)``, ``("reasoning", delta)``, ``("tool_called", call_id)``, ``("tool_output", call_id)``."""

_PLAIN_DELTAS = {
    "response.output_text.delta": "text",
    "response.reasoning_summary_text.delta": "reasoning",
}
_SESSION_DELTAS = {AgentEventType.TEXT_DELTA: "text", AgentEventType.REASONING_DELTA: "reasoning"}


def plain_stream_item(event: StreamEvent) -> StreamItem | None:
    if isinstance(event, RawResponsesStreamEvent):
        data: Any = event.data
        kind = _PLAIN_DELTAS.get(str(data.type))
        return (kind, str(data.delta)) if kind is not None else None
    if isinstance(event, RunItemStreamEvent) and event.name in ("tool_called", "tool_output"):
        raw: Any = event.item.raw_item
        call_id: Any = (
            cast(dict[str, Any], raw).get("call_id")
            if isinstance(raw, dict)
            else getattr(raw, "call_id", None)
        )
        return (event.name, str(call_id))
    return None


def session_stream_item(event: AgentEvent) -> StreamItem | None:
    kind = _SESSION_DELTAS.get(event.type)
    if kind is not None:
        return (kind, str(event.data.get("text", "")))
    if event.type is AgentEventType.TOOL_CALL_DEFERRED:
        return ("tool_called", str(event.data.get("tool_call_id")))
    if event.type is AgentEventType.TOOL_CALL_FINISHED:
        return ("tool_output", str(event.data.get("tool_call_id")))
    return None


def joined(items: list[StreamItem]) -> list[StreamItem]:
    """Deltas of one kind that follow each other joined: how they split is the wire's business."""
    out: list[StreamItem] = []
    for kind, value in items:
        if out and kind in ("text", "reasoning") and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + value)
        else:
            out.append((kind, value))
    return out


async def collect_session_events(
    sessions: AgentSessionClient, session_id: str, turns: int
) -> list[AgentEvent]:
    """Follow the session from its start until ``turns`` turns have ended, then drain late deltas.

    The follow goes on until it has been idle for a second after the last turn ended, so a
    delta that arrived late (after the durable event that ends its turn) is still seen, and
    shows in the comparison as out of place.
    """
    events: list[AgentEvent] = []
    ended = 0
    # Closed on the way out, so its live subscription ends with the follow.
    follow = sessions.events(session_id)
    async with aclosing(follow):
        while True:
            try:
                next_event = anext(follow)
                event = await (asyncio.wait_for(next_event, timeout=1.0) if ended >= turns else next_event)
            except (TimeoutError, StopAsyncIteration):
                return events
            events.append(event)
            if event.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED):
                ended += 1


def session_stream(events: list[AgentEvent]) -> list[StreamItem]:
    """The session's events as a client shows them, in the order they arrived.

    Not reordered: the core places a step's live deltas before the first durable event its
    end caused (`sessionflow.temporal.client._live_order`), so a model step's text and reasoning
    reach the follower before the tool calls it deferred, as the plain stream has them.
    """
    return joined([item for item in map(session_stream_item, events) if item is not None])
