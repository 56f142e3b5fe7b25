"""Where live events go among a page of durable events, so a follower sees them in causal order.

A step publishes its live events (deltas) on the side transport while it runs, and the
workflow writes the durable events its end causes (`usage_recorded`, `tool_call_deferred`,
`tool_call_finished`, `turn_completed`, ...) only after it returns. The in-process bus
queues every live event on the subscriber's loop before the step can return, so by the time
a page of durable events reaches the follower, the live events of every step that page
ends are already queued. Their place is just before the first durable event their step's
end caused: never after it (a view clears a turn's live text at `turn_completed`), and
never before the durable events that came before the step began.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionflow.session.events import AgentEvent, AgentEventType

__all__ = ["interleave"]

_TURN_ENDS = (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED)


def interleave(live: Sequence[AgentEvent], durable: Sequence[AgentEvent]) -> list[AgentEvent]:
    """``durable`` in order, each live event before the first durable event its step's end caused.

    That is the first durable event of the live event's own step (other than the
    `tool_call_started` the workflow writes when it starts the step, and batched deltas),
    or the end of its turn. A live event of a step the page does not see end goes after
    the page. Live events keep their order among those placed at the same point.
    """
    placed: dict[int, list[AgentEvent]] = {}
    after: list[AgentEvent] = []
    for event in live:
        index = _anchor(event, durable)
        if index is None:
            after.append(event)
        else:
            placed.setdefault(index, []).append(event)
    merged: list[AgentEvent] = []
    for index, event in enumerate(durable):
        merged += placed.get(index, [])
        merged.append(event)
    return merged + after


def _anchor(live: AgentEvent, durable: Sequence[AgentEvent]) -> int | None:
    for index, event in enumerate(durable):
        if event.type in _TURN_ENDS and event.turn_id == live.turn_id:
            return index
        if (
            event.step_execution_id == live.step_execution_id
            and not event.type.is_live
            and event.type is not AgentEventType.TOOL_CALL_STARTED
        ):
            return index
    return None
