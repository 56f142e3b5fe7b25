"""Wait for a session condition, and stop waiting as soon as it can no longer come true."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

from sessionflow.session import AgentSnapshot, AgentStatus
from sessionflow.temporal import AgentSessionClient
from sessionflow.testing.conformance._failure import ConformanceFailure
from sessionflow.testing.conformance._matching import preview

__all__ = ["settled", "wait_for_session"]

T = TypeVar("T")
_POLL_SECONDS = 0.05


def settled(snapshot: AgentSnapshot) -> bool:
    """No turn runs and no message waits: nothing will happen until the test acts again."""
    state = snapshot.state
    return (
        state is not None
        and state.turn_count > 0
        and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        and snapshot.queued_message_count == 0
    )


async def wait_for_session(
    sessions: AgentSessionClient,
    session_id: str,
    description: str,
    probe: Callable[[AgentSnapshot], T | None],
    *,
    timeout: float,
) -> T:
    """Poll the snapshot until ``probe`` returns something truthy, and return it.

    Raises:
        ConformanceFailure: The session settled while the probe still said no, so the
            condition cannot come true any more (a failed or finished turn).
        TimeoutError: Neither happened within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            snapshot = await sessions.get_agent_snapshot(session_id)
        except Exception as error:  # no worker answers queries while a replacement starts
            last_error = error
        else:
            value = probe(snapshot)
            if value:
                return value
            if settled(snapshot):
                state = snapshot.state
                assert state is not None
                raise ConformanceFailure(
                    f"the session settled before {description}: {state.turn_count} turn(s) ended, "
                    f"last_turn_error={preview(state.last_turn_error)}"
                )
        if time.monotonic() > deadline:
            detail = f" (last error: {last_error!r})" if last_error else ""
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {description}{detail}")
        await asyncio.sleep(_POLL_SECONDS)
