"""Poll with a deadline instead of sleeping."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sessionflow.session.state import AgentSnapshot
from sessionflow.temporal.client._client import AgentSessionClient

__all__ = ["wait_for_agent_snapshot", "wait_until"]

T = TypeVar("T")


async def wait_until(
    description: str,
    probe: Callable[[], T | Awaitable[T | None] | None],
    *,
    timeout: float = 30.0,
    interval: float = 0.05,
) -> T:
    """Call `probe` until it returns something truthy, and return that; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            value = probe()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value  # type: ignore[return-value]
        except Exception as error:  # a probe may fail while a worker restarts
            last_error = error
        if time.monotonic() > deadline:
            detail = f" (last error: {last_error!r})" if last_error else ""
            raise TimeoutError(f"timed out after {timeout} s waiting for {description}{detail}")
        await asyncio.sleep(interval)


async def wait_for_agent_snapshot(
    sessions: AgentSessionClient,
    session_id: str,
    probe: Callable[[AgentSnapshot], T | None],
    *,
    description: str,
    timeout: float = 30.0,
) -> T:
    """Poll the session's snapshot until `probe` returns something truthy."""

    async def check() -> T | None:
        return probe(await sessions.get_agent_snapshot(session_id))

    return await wait_until(description, check, timeout=timeout)
