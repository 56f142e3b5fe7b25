"""Follow a session's events in the background, into a queue the chat reads at its own pace."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Iterable

from sessionflow import AgentEvent, AgentEventType, AgentSessionClient

__all__ = ["EventPump"]


class EventPump:
    """`AgentSessionClient.events` in a task; `get` returns the next event or raises its error.

    The pump also remembers which interrupts it saw resolved, so a prompt that waits for an
    answer here can learn, without reading the queue, that someone answered it elsewhere
    (the web console, another terminal, the API).
    """

    def __init__(self, sessions: AgentSessionClient, session_id: str, *, after: int = 0) -> None:
        self._queue: asyncio.Queue[AgentEvent | BaseException] = asyncio.Queue()
        self._returned: deque[AgentEvent] = deque()
        self._resolved: dict[str, AgentEvent] = {}
        self._watchers: dict[str, list[asyncio.Future[AgentEvent]]] = {}
        self._task = asyncio.create_task(self._run(sessions, session_id, after))

    def interrupt_resolved(self, interrupt_id: str) -> asyncio.Future[AgentEvent]:
        """Done with the `interrupt_resolved` event of `interrupt_id`, whenever the pump sees it."""
        future: asyncio.Future[AgentEvent] = asyncio.get_running_loop().create_future()
        seen = self._resolved.get(interrupt_id)
        if seen is not None:
            future.set_result(seen)
        else:
            self._watchers.setdefault(interrupt_id, []).append(future)
        return future

    def _note(self, event: AgentEvent) -> None:
        if event.type is not AgentEventType.INTERRUPT_RESOLVED:
            return
        interrupt_id = str(event.data.get("interrupt_id"))
        self._resolved[interrupt_id] = event
        for future in self._watchers.pop(interrupt_id, []):
            if not future.done():
                future.set_result(event)

    async def _run(self, sessions: AgentSessionClient, session_id: str, after: int) -> None:
        try:
            async for event in sessions.events(session_id, after=after):
                self._note(event)
                self._queue.put_nowait(event)
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            self._queue.put_nowait(error)
            return
        self._queue.put_nowait(EOFError("the session's event stream ended"))

    def put_back(self, events: Iterable[AgentEvent]) -> None:
        """Events read ahead that belong to a later reader (a later turn's): `get` returns them first."""
        self._returned.extendleft(reversed(list(events)))

    async def get(self) -> AgentEvent:
        if self._returned:
            return self._returned.popleft()
        item = await self._queue.get()
        if isinstance(item, BaseException):
            raise item
        return item

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
