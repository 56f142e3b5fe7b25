"""Ending long streams when the server shuts down.

uvicorn waits for every open response before it stops (up to its graceful timeout, then
it cancels them, and the cancelled follows print tracebacks). An event stream of an idle
session has no end of its own, so each one ends itself when the server's shutdown event
is set: the response completes, the connection closes, and a browser's ``EventSource``
reconnects to the next server with its ``Last-Event-ID``.

sse-starlette's own ``shutdown_event`` is set only when it sees uvicorn's signal
handlers, which `sessionflow serve` does not install (it owns SIGINT and SIGTERM).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TypeVar

import anyio

__all__ = ["until_shutdown"]

T = TypeVar("T")


async def until_shutdown(items: AsyncGenerator[T], shutdown: anyio.Event) -> AsyncIterator[T]:
    """`items` until they end or `shutdown` is set, whichever comes first."""
    stopping = asyncio.ensure_future(shutdown.wait())
    step: asyncio.Future[T] | None = None
    try:
        while True:
            step = asyncio.ensure_future(anext(items))
            await asyncio.wait({step, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                return
            try:
                item = step.result()
            except StopAsyncIteration:
                return
            step = None
            yield item
    finally:
        # A follow still waiting (on a query or the live transport) is cancelled there, and
        # its own clean-up (the live subscription) runs; also when the client went away.
        for pending in (step, stopping):
            if pending is not None and not pending.done():
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pending
        await items.aclose()
