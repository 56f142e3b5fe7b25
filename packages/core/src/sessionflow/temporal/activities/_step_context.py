"""What every kind of step shares: the flow, its client and payload store, and the helpers of a running attempt.

`StepContext` is built once per flow on a worker and handed to each step class, so they
share one body store (and its cache of bodies read). `StepActivities` is the base of those
classes, with how a step reports its failures. The functions read the running activity
(`store_scope`) and keep it heartbeating (`with_heartbeats`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from sessionflow.session.errors import SessionError, SessionStateError
from sessionflow.session.events import AgentEvent, AgentEventType, AgentEventWriter
from sessionflow.temporal.activities._delta_fallback import DeltaFallback
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope
from sessionflow.temporal.worker._shutdown import shutdown_fails_retryably

if TYPE_CHECKING:
    from sessionflow.kit._flow import AgentSessionFlow

__all__ = ["StepActivities", "StepContext", "StepEventWriter", "store_scope", "with_heartbeats"]

T = TypeVar("T")


class StepContext:
    """One flow on one worker: its runner and options, its client and payload store."""

    def __init__(self, flow: AgentSessionFlow, client: Client) -> None:
        self.flow = flow
        self.client = client
        self.bodies = BodyStore.of(client)

    def require_bodies(self) -> BodyStore:
        if self.bodies is None:
            raise SessionStateError("this session keeps bodies in a payload store, and this worker has none")
        return self.bodies

    def writer(self, session_id: str, turn_id: str) -> StepEventWriter:
        """An event writer for this attempt: live transport, plus coarse batches if nobody listens."""
        info = activity.info()
        transport = self.flow.delta_transport
        fallback: DeltaFallback | None = None
        if self.flow.delta_fallback and not transport.has_subscribers(session_id):
            fallback = DeltaFallback(self.client, session_id)

        def sink(event: AgentEvent) -> None:
            transport.publish(session_id, event)
            if fallback is not None:
                fallback.add(event)

        writer = StepEventWriter(
            sink, fallback, turn_id=turn_id, step_execution_id=info.activity_id, attempt=info.attempt
        )
        if info.attempt > 1:
            writer.write_event(AgentEventType.ATTEMPT_RESTARTED, {"previous_attempt": info.attempt - 1})
        return writer


class StepActivities:
    """The activities of one kind of step, for one flow on one worker."""

    def __init__(self, steps: StepContext) -> None:
        self._steps = steps

    @contextmanager
    def _failures_reported(self) -> Generator[None]:
        """Failures as the workflow expects them: by the error's class, and retryable at shutdown."""
        with _retry_by_class(), shutdown_fails_retryably(self._steps.client.identity):
            yield


class StepEventWriter(AgentEventWriter):
    """Closes its fallback batcher along with the writer."""

    def __init__(
        self,
        sink: Callable[[AgentEvent], None],
        fallback: DeltaFallback | None,
        *,
        turn_id: str,
        step_execution_id: str,
        attempt: int,
    ) -> None:
        super().__init__(sink, turn_id=turn_id, step_execution_id=step_execution_id, attempt=attempt)
        self._fallback = fallback
        self._text: list[str] = []

    def write_event(self, event_type: AgentEventType, data: dict[str, Any] | None = None) -> None:
        if event_type is AgentEventType.TEXT_DELTA and not self.closed and data:
            self._text.append(str(data.get("text", "")))
        super().write_event(event_type, data)

    @property
    def text(self) -> str:
        """The text this attempt streamed: the model's text of the step, when it ends well."""
        return "".join(self._text)

    def close(self) -> None:
        super().close()
        if self._fallback is not None:
            self._fallback.close()


@contextmanager
def _retry_by_class() -> Generator[None]:
    """Report a `SessionError` whose class says it is not retryable as a non-retryable failure.

    The failure keeps the error's class name as its type, so the workflow's failure notes
    read as before; the server then ends the step at once instead of retrying it.
    """
    try:
        yield
    except SessionError as error:
        if error.retryable:
            raise
        raise ApplicationError(str(error), type=type(error).__name__, non_retryable=True) from None


async def with_heartbeats(
    interval: float, work: Awaitable[T], heartbeat: Callable[[], None] | None = None
) -> T:
    """Await `work` while heartbeating in the background, so a dead worker is noticed.

    ``heartbeat`` replaces `activity.heartbeat()`: a step whose heartbeats carry details
    (its journal, `HeartbeatJournal`) must send them with every beat.
    """
    send = heartbeat or activity.heartbeat

    async def beat() -> None:
        while True:
            await asyncio.sleep(interval)
            send()

    beater = asyncio.create_task(beat())
    try:
        return await work
    finally:
        beater.cancel()


def store_scope() -> StoreScope:
    """The running activity's session, which the store groups its objects by."""
    info = activity.info()
    return StoreScope(
        namespace=info.workflow_namespace or info.namespace,
        session_id=info.workflow_id or "",
        flow_type=info.workflow_type,
        run_id=info.workflow_run_id,
    )
