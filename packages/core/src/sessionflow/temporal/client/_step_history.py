"""Read which steps of a session ran, and at which attempt, from its workflow history."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

from temporalio.api.enums.v1 import EventType
from temporalio.api.failure.v1 import Failure
from temporalio.api.history.v1 import MarkerRecordedEventAttributes
from temporalio.client import Client

from sessionflow.temporal._payloads import BUILD_USER_MESSAGE, FLOW_RUN_CONFIG

__all__ = ["StepHistoryEntry", "history_size", "read_step_history"]


@dataclass(frozen=True, kw_only=True)
class StepHistoryEntry:
    """One step: its type, ID, final attempt and outcome.

    `outcome` is `completed`, `failed`, `timed_out`, `canceled`, or `running` when the
    step has not finished. `step_execution_id` is the activity ID, shared by all attempts.
    `local` marks a local step (a local activity, recorded as one marker when it ends).
    `worker` is the identity of the worker that ran the final attempt, and `previous_failure`
    how the attempt before it failed (a worker that shut down names itself there).
    """

    step_type: str
    step_execution_id: str
    final_attempt: int
    outcome: str
    failure: str | None = None
    local: bool = False
    worker: str | None = None
    previous_failure: str | None = None


# The marker Temporal's SDK core records for each finished local activity.
_LOCAL_ACTIVITY_MARKER = "core_local_activity"

_OUTCOMES = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "completed",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "failed",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "timed_out",
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "canceled",
}


@dataclass
class _Step:
    step_type: str
    step_execution_id: str
    attempt: int = 0
    outcome: str = "running"
    failure: str | None = None
    local: bool = False
    worker: str | None = None
    previous_failure: str | None = None


_OUTCOME_ATTRIBUTES = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "activity_task_canceled_event_attributes",
}


async def read_step_history(client: Client, session_id: str) -> list[StepHistoryEntry]:
    """Every model and tool step of the session's current run: activities in scheduling
    order, local ones where their marker is (when they ended)."""
    history = await client.get_workflow_handle(session_id).fetch_history()
    steps: dict[int, _Step] = {}
    for event in history.events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_MARKER_RECORDED:
            marker = event.marker_recorded_event_attributes
            local = _local_step(marker)
            if local is not None:
                if local.failure is not None:
                    local.failure = await _failure_message(client, marker.failure)
                steps[event.event_id] = local
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            steps[event.event_id] = _Step(
                step_type=attrs.activity_type.name, step_execution_id=attrs.activity_id
            )
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            step = steps[started.scheduled_event_id]
            step.attempt = started.attempt
            step.worker = started.identity or None
            if started.HasField("last_failure") and started.last_failure.message:
                step.previous_failure = str(started.last_failure.message)
        elif kind in _OUTCOMES:
            attrs = getattr(event, _OUTCOME_ATTRIBUTES[kind])
            step = steps[attrs.scheduled_event_id]
            step.outcome = _OUTCOMES[kind]
            failure = getattr(attrs, "failure", None)
            if failure is not None and failure.message:
                step.failure = await _failure_message(client, failure)
    return [
        StepHistoryEntry(
            step_type=s.step_type,
            step_execution_id=s.step_execution_id,
            final_attempt=s.attempt,
            outcome=s.outcome,
            failure=s.failure,
            local=s.local,
            worker=s.worker,
            previous_failure=s.previous_failure,
        )
        for s in steps.values()
    ]


def _local_step(marker: MarkerRecordedEventAttributes) -> _Step | None:
    if marker.marker_name != _LOCAL_ACTIVITY_MARKER or "data" not in marker.details:
        return None
    payloads = marker.details["data"].payloads
    try:
        loaded: object = json.loads(payloads[0].data) if payloads else None
    except ValueError:
        return None
    if not isinstance(loaded, dict):
        return None
    data = cast(dict[str, object], loaded)
    if data.get("activity_type") in (BUILD_USER_MESSAGE, FLOW_RUN_CONFIG):
        # They shape the user's message as the turn starts, and the session's configuration
        # as it starts: not model or tool steps.
        return None
    failed = marker.HasField("failure")
    return _Step(
        step_type=str(data.get("activity_type", "")),
        step_execution_id=str(data.get("activity_id", "")),
        attempt=int(str(data.get("attempt", 1))),
        outcome="failed" if failed else "completed",
        failure=str(marker.failure.message) if failed and marker.failure.message else None,
        local=True,
    )


async def _failure_message(client: Client, failure: Failure) -> str:
    """The failure's message; an encoded one (payloads under a codec) decoded with the client's codec."""
    codec = client.data_converter.payload_codec
    if codec is None or not failure.HasField("encoded_attributes"):
        return str(failure.message)
    try:
        attributes = (await codec.decode([failure.encoded_attributes]))[0]
        message: object = cast(dict[str, object], json.loads(attributes.data)).get("message")
    except (ValueError, RuntimeError, AttributeError):
        return str(failure.message)
    return message if isinstance(message, str) else str(failure.message)


async def history_size(client: Client, session_id: str) -> tuple[int, int]:
    """(events, bytes) of the session's current run."""
    handle = client.get_workflow_handle(session_id)
    description = await handle.describe()
    raw = description.raw_description.workflow_execution_info
    return raw.history_length, raw.history_size_bytes
