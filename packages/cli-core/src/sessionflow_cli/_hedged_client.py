"""The session client of the chat: its reads are hedged, so a query Temporal holds back does not
hold up the turn's display.

A query that reaches a session while one of its workflow tasks is in flight waits for that
task, and then about a second more; the chat reads right when events arrive, which is just
when the workflow's next task runs, so about half of the one-shot turns waited once or twice
(`bench.oneshot_latency`). A query sent a moment later is answered at once. So a read that has
no answer after `HEDGE_AFTER` is sent again, and the first answer wins (the other is
cancelled): reads change nothing, so the second costs one more small query, only then.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sessionflow import AgentSessionClient, AgentSnapshot
from sessionflow.session.events import AgentEventsPage

__all__ = ["HEDGE_AFTER", "HedgedSessionClient", "hedged"]

HEDGE_AFTER = 0.15
"""Seconds a read may take before the same read is sent again."""

T = TypeVar("T")


async def hedged(read: Callable[[], Awaitable[T]], after: float = HEDGE_AFTER) -> T:
    """`read()`, and once more if it has not answered after `after` seconds: the first answer.

    An error is raised only when both reads failed (the first one's)."""
    first = asyncio.ensure_future(read())
    done, _ = await asyncio.wait({first}, timeout=after)
    if done:
        return first.result()
    second = asyncio.ensure_future(read())
    pending: set[asyncio.Future[T]] = {first, second}
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.exception() is None:
                    return task.result()
        return first.result()  # both failed: the first read's error
    finally:
        for task in pending:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


class HedgedSessionClient(AgentSessionClient):
    """`AgentSessionClient` whose event pages and snapshots are hedged reads (`hedged`)."""

    async def list_agent_events(
        self, session_id: str, *, after: int = 0, limit: int = 500
    ) -> AgentEventsPage:
        read = super().list_agent_events
        return await hedged(lambda: read(session_id, after=after, limit=limit))

    async def get_agent_snapshot(self, session_id: str) -> AgentSnapshot:
        read = super().get_agent_snapshot
        return await hedged(lambda: read(session_id))
