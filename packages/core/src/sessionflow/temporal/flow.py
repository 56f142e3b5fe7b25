"""`AgentSessionFlow`: one agent, its runner and options, served as one flow type."""

from __future__ import annotations

import re
from collections.abc import Callable

from sessionflow.session import AgentEventWriter, AgentFrameworkRunner, AgentSessionOptions, EventSink
from sessionflow.temporal._payloads import WorkflowTimings

__all__ = ["AgentSessionFlow"]

_FLOW_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$")

EventSinkFactory = Callable[[str], EventSink | None]


class AgentSessionFlow:
    """A flow type: its name is the workflow type and the task queue of its sessions."""

    def __init__(
        self,
        runner: AgentFrameworkRunner,
        *,
        flow_type: str,
        options: AgentSessionOptions | None = None,
        continue_as_new_after_events: int = 10_000,
    ) -> None:
        if not _FLOW_TYPE.match(flow_type):
            raise ValueError(
                f"flow_type {flow_type!r} must be 1-200 characters of letters, digits, '.', '_', ':' or '-'"
            )
        self.runner = runner
        self.flow_type = flow_type
        self.options = options or AgentSessionOptions()
        self.continue_as_new_after_events = continue_as_new_after_events
        self.event_sink_factory: EventSinkFactory | None = None

    @property
    def task_queue(self) -> str:
        return self.flow_type

    def workflow_timings(self) -> WorkflowTimings:
        return WorkflowTimings.from_timings(
            self.options.timings, continue_as_new_after_events=self.continue_as_new_after_events
        )

    def event_writer(self, session_id: str, *, turn_id: str, step_execution_id: str, attempt: int) -> AgentEventWriter:
        sink = self.event_sink_factory(session_id) if self.event_sink_factory else None
        return AgentEventWriter(sink, turn_id=turn_id, step_execution_id=step_execution_id, attempt=attempt)

    def __repr__(self) -> str:
        return f"AgentSessionFlow(flow_type={self.flow_type!r}, runner={type(self.runner).__name__})"
