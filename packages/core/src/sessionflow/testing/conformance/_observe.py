"""Everything the checks look at, gathered from the session, the model server and the logs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessionflow.session import AgentEvent, AgentSnapshot, AgentStatus
from sessionflow.temporal import AgentSessionClient, StepHistoryEntry
from sessionflow.testing._model_script import RecordedRequest

__all__ = ["Observation", "read_durable_events"]


@dataclass(frozen=True, kw_only=True)
class Observation:
    """One look at a session of a case.

    Attributes:
        session_id: The session's ID (also the prefix of every idempotency key).
        snapshot: `AgentSessionClient.get_agent_snapshot`.
        events: The durable event stream, in offset order.
        live_events: Events that arrived live (offset None) through `AgentSessionClient.events`.
        requests: Model requests as the scripted server recorded them (what the framework sent).
        invocations: The InvocationLog entries of kind ``tool`` (every real tool run).
        steps: The session's activities from its workflow history.
        images: Bytes of the case's images by name.
        resume_texts: The framework's own resume prompts (`FrameworkSpec.resume_texts`),
            which do not count as user text.
    """

    session_id: str
    snapshot: AgentSnapshot
    events: list[AgentEvent]
    live_events: list[AgentEvent] = field(default_factory=lambda: [])
    requests: list[RecordedRequest] = field(default_factory=lambda: [])
    invocations: list[dict[str, Any]] = field(default_factory=lambda: [])
    steps: list[StepHistoryEntry] = field(default_factory=lambda: [])
    images: dict[str, bytes] = field(default_factory=lambda: {})
    resume_texts: tuple[str, ...] = ()

    @property
    def idle(self) -> bool:
        state = self.snapshot.state
        return (
            state is not None
            and state.turn_count > 0
            and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        )


async def read_durable_events(sessions: AgentSessionClient, session_id: str) -> list[AgentEvent]:
    """Every retained durable event of the session, oldest first."""
    events: list[AgentEvent] = []
    after = 0
    while True:
        page = await sessions.list_agent_events(session_id, after=after, limit=500)
        if not page.events:
            return events
        events += page.events
        after = page.next_offset
