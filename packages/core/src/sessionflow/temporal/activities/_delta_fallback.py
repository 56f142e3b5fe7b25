"""Coarse delta batches sent to the workflow when no side transport reaches a subscriber."""

from __future__ import annotations

import asyncio
import threading
import time

from temporalio.client import Client

from sessionflow.session.events import AgentEvent, AgentEventType
from sessionflow.temporal._payloads import PUBLISH_DELTAS, DeltaBatch

# Seconds after the first delta at which a batch is sent: at most four signals per step,
# whatever the answer's length, so the history grows by a constant per model call.
FLUSH_SCHEDULE = (0.5, 1.5, 4.5, 13.5)


def coalesce(events: list[AgentEvent]) -> list[AgentEvent]:
    """Merge runs of deltas of one type, step and attempt into single events."""
    merged: list[AgentEvent] = []
    for event in events:
        last = merged[-1] if merged else None
        if (
            last is not None
            and event.type.is_delta
            and last.type is event.type
            and last.step_execution_id == event.step_execution_id
            and last.attempt == event.attempt
        ):
            merged[-1] = AgentEvent(
                type=last.type,
                turn_id=last.turn_id,
                step_execution_id=last.step_execution_id,
                attempt=last.attempt,
                data={"text": str(last.data.get("text", "")) + str(event.data.get("text", ""))},
            )
        else:
            merged.append(event)
    return merged


class DeltaFallback:
    """Collects deltas from any thread and signals them to the session in a few batches."""

    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self._session_id = session_id
        self._loop = asyncio.get_running_loop()
        self._lock = threading.Lock()
        self._pending: list[AgentEvent] = []
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def add(self, event: AgentEvent) -> None:
        if not (event.type.is_delta or event.type is AgentEventType.ATTEMPT_RESTARTED):
            return
        with self._lock:
            if self._closed:
                return
            self._pending.append(event)
            first = len(self._pending) == 1 and self._task is None
        if first:
            self._loop.call_soon_threadsafe(self._start)

    def _start(self) -> None:
        if self._task is None and not self._closed:
            self._task = self._loop.create_task(self._run())

    async def _run(self) -> None:
        began = time.monotonic()
        for at in FLUSH_SCHEDULE:
            await asyncio.sleep(max(0.0, at - (time.monotonic() - began)))
            with self._lock:
                batch, self._pending = self._pending, []
            if batch:
                handle = self._client.get_workflow_handle(self._session_id)
                await handle.signal(PUBLISH_DELTAS, DeltaBatch(events=coalesce(batch)))

    def close(self) -> None:
        """Stop sending: once the step returns, the stored messages carry the text."""
        with self._lock:
            self._closed = True
        if self._task is not None:
            self._task.cancel()
