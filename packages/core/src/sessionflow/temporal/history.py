"""Read which steps of a session ran, and at which attempt, from its workflow history."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

__all__ = ["StepHistoryEntry", "history_size", "read_step_history"]


@dataclass(frozen=True, kw_only=True)
class StepHistoryEntry:
    """One scheduled activity: its type (the step), ID, final attempt and outcome.

    `outcome` is `completed`, `failed`, `timed_out`, `canceled`, or `running` when the
    step has not finished. `step_execution_id` is the activity ID, shared by all attempts.
    """

    step_type: str
    step_execution_id: str
    final_attempt: int
    outcome: str
    failure: str | None = None


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


_OUTCOME_ATTRIBUTES = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "activity_task_canceled_event_attributes",
}


async def read_step_history(client: Client, session_id: str) -> list[StepHistoryEntry]:
    """Every activity of the session's current run, in scheduling order."""
    history = await client.get_workflow_handle(session_id).fetch_history()
    steps: dict[int, _Step] = {}
    for event in history.events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            steps[event.event_id] = _Step(
                step_type=attrs.activity_type.name, step_execution_id=attrs.activity_id
            )
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            steps[started.scheduled_event_id].attempt = started.attempt
        elif kind in _OUTCOMES:
            attrs = getattr(event, _OUTCOME_ATTRIBUTES[kind])
            step = steps[attrs.scheduled_event_id]
            step.outcome = _OUTCOMES[kind]
            failure = getattr(attrs, "failure", None)
            if failure is not None and failure.message:
                step.failure = str(failure.message)
    return [
        StepHistoryEntry(
            step_type=s.step_type,
            step_execution_id=s.step_execution_id,
            final_attempt=s.attempt,
            outcome=s.outcome,
            failure=s.failure,
        )
        for s in steps.values()
    ]


async def history_size(client: Client, session_id: str) -> tuple[int, int]:
    """(events, bytes) of the session's current run."""
    handle = client.get_workflow_handle(session_id)
    description = await handle.describe()
    raw = description.raw_description.workflow_execution_info
    return raw.history_length, raw.history_size_bytes
