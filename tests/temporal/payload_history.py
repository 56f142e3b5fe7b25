"""What a session's histories hold: every run of the continue-as-new chain, and its payloads."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory

__all__ = ["StartedStep", "payload_sizes", "run_histories", "started_steps"]


async def run_histories(client: Client, session_id: str) -> list[WorkflowHistory]:
    """The history of every run of the session, oldest first.

    Each run's first event names the run it continued from, so the chain is exact; a
    visibility listing could lag behind the last continue-as-new.
    """
    histories: list[WorkflowHistory] = []
    run_id: str | None = None
    while True:
        history = await client.get_workflow_handle(session_id, run_id=run_id).fetch_history()
        histories.append(history)
        previous = history.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
        if not previous:
            return histories[::-1]
        run_id = previous


def payload_sizes(event: HistoryEvent) -> Iterator[int]:
    """The serialized size of every `Payload` anywhere in the event (nested, repeated, in maps)."""
    yield from _walk(event)


def _walk(message: Message) -> Iterator[int]:
    if isinstance(message, Payload):
        yield message.ByteSize()
        return
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            if field.message_type.fields_by_name["value"].message_type is not None:
                for item in value.values():
                    yield from _walk(item)
        elif field.is_repeated:
            for item in value:
                yield from _walk(item)
        else:
            yield from _walk(value)


@dataclass(frozen=True)
class StartedStep:
    """An activity's start as its history records it: the final attempt and the failure before it."""

    step_type: str
    attempt: int
    last_failure: str | None
    last_failure_bytes: int = 0


def started_steps(history: WorkflowHistory) -> list[StartedStep]:
    """Every started activity of one run, with the last failure the server kept for it."""
    types: dict[int, str] = {}
    found: list[StartedStep] = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            types[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            failure = started.last_failure.message if started.HasField("last_failure") else None
            size = started.last_failure.ByteSize() if started.HasField("last_failure") else 0
            found.append(
                StartedStep(types[started.scheduled_event_id], started.attempt, failure or None, size)
            )
    return found
