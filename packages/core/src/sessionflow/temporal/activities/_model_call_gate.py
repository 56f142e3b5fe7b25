"""The slots of a worker's model call limits, taken around each model call.

A call beyond a limit waits in the worker, on the event loop (an asyncio semaphore, first
come first served), heartbeating so the server does not think its worker died. The wait
runs inside the step's attempt, so it counts toward the attempt's start-to-close timeout:
a call waits at most half of it, then its attempt fails with `ModelCallLimitWait` (retried
as any model failure is) instead of timing out with no slot left for the call itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterable
from contextlib import AsyncExitStack, asynccontextmanager

from temporalio.exceptions import ApplicationError

from sessionflow.temporal.worker._model_call_limits import ModelCallLimits

__all__ = ["WAIT_ERROR_TYPE", "ModelCallGate"]

WAIT_ERROR_TYPE = "ModelCallLimitWait"


class ModelCallGate:
    """One semaphore per limited key, shared by every flow the worker serves."""

    def __init__(self, limits: ModelCallLimits | None = None) -> None:
        self.limits = limits or ModelCallLimits()
        self._slots = {key: asyncio.Semaphore(limit) for key, limit in self.limits.limits.items()}

    @asynccontextmanager
    async def slot(
        self,
        keys: Iterable[str],
        *,
        heartbeat: Callable[[], None],
        interval: float,
        max_wait: float | None,
    ) -> AsyncGenerator[None]:
        """Hold a slot of every limit that applies to ``keys`` for the body's duration."""
        applying = self.limits.applying(keys)
        if not applying:
            yield
            return
        loop = asyncio.get_running_loop()
        deadline = None if max_wait is None else loop.time() + max_wait
        async with AsyncExitStack() as held:
            for key, limit in applying:
                semaphore = self._slots[key]
                await _acquire(semaphore, key, limit, heartbeat, interval, deadline, max_wait)
                held.callback(semaphore.release)
            yield


async def _acquire(
    semaphore: asyncio.Semaphore,
    key: str,
    limit: int,
    heartbeat: Callable[[], None],
    interval: float,
    deadline: float | None,
    max_wait: float | None,
) -> None:
    if not semaphore.locked():
        await semaphore.acquire()  # free: returns at once
        return
    loop = asyncio.get_running_loop()
    waiting = asyncio.ensure_future(semaphore.acquire())
    try:
        while True:
            timeout = interval if deadline is None else min(interval, deadline - loop.time())
            if timeout <= 0:
                raise ApplicationError(
                    f"no model call slot for {key!r} (limit {limit} at once on this worker) "
                    f"within {max_wait:.0f}s, half the step's start-to-close timeout; raise the "
                    "limit, add workers or lengthen model_start_to_close",
                    type=WAIT_ERROR_TYPE,
                )
            done, _ = await asyncio.wait({waiting}, timeout=max(timeout, 0.001))
            if done:
                waiting.result()
                return
            heartbeat()
    except BaseException:
        if waiting.done() and not waiting.cancelled() and waiting.exception() is None:
            semaphore.release()  # granted just as we gave up: hand it on
        else:
            waiting.cancel()
        raise
