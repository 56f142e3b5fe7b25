"""Side transports for live deltas, so streamed text never grows the workflow history.

Durable (structural) events live in the session workflow. Text and reasoning deltas are
best effort: they travel here, from the activity that writes them to every subscriber.
`InProcessDeltaBus` serves a client and a worker that share a process (the CLI's default).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from sessionflow.session.events import AgentEvent

__all__ = ["DeltaSubscription", "DeltaTransport", "InProcessDeltaBus"]


class DeltaTransport(Protocol):
    """Carries live events of a session from workers to subscribers."""

    def publish(self, session_id: str, event: AgentEvent) -> None: ...

    def has_subscribers(self, session_id: str) -> bool: ...

    def subscribe(self, session_id: str) -> AbstractAsyncContextManager[DeltaSubscription]: ...


@dataclass(eq=False)
class DeltaSubscription:
    """Live events of one session for one subscriber, in arrival order."""

    session_id: str
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[AgentEvent] = field(default_factory=lambda: asyncio.Queue[AgentEvent]())

    async def next(self, timeout: float) -> list[AgentEvent]:
        """Everything that arrived, waiting up to `timeout` seconds for the first one."""
        try:
            first = await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return []
        return [first, *self.ready()]

    def ready(self) -> list[AgentEvent]:
        """Everything that arrived so far, without waiting."""
        events: list[AgentEvent] = []
        while not self.queue.empty():
            events.append(self.queue.get_nowait())
        return events


class InProcessDeltaBus:
    """Delivers events to subscribers in this process. Publishing is safe from any thread."""

    _shared: ClassVar[InProcessDeltaBus | None] = None

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: dict[str, list[DeltaSubscription]] = {}

    @classmethod
    def shared(cls) -> InProcessDeltaBus:
        """The process-wide bus that flows and clients use unless told otherwise."""
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def publish(self, session_id: str, event: AgentEvent) -> None:
        with self._lock:
            targets = list(self._subscriptions.get(session_id, ()))
        for subscription in targets:
            try:
                subscription.loop.call_soon_threadsafe(subscription.queue.put_nowait, event)
            except RuntimeError:  # the subscriber's loop closed; it is going away
                continue

    def has_subscribers(self, session_id: str) -> bool:
        with self._lock:
            return bool(self._subscriptions.get(session_id))

    @asynccontextmanager
    async def subscribe(self, session_id: str) -> AsyncGenerator[DeltaSubscription]:
        subscription = DeltaSubscription(session_id=session_id, loop=asyncio.get_running_loop())
        with self._lock:
            self._subscriptions.setdefault(session_id, []).append(subscription)
        try:
            yield subscription
        finally:
            with self._lock:
                remaining = [s for s in self._subscriptions.get(session_id, []) if s is not subscription]
                if remaining:
                    self._subscriptions[session_id] = remaining
                else:
                    self._subscriptions.pop(session_id, None)
