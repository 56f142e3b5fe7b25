"""Waiting on the API's answers, and reading its event stream."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import httpx

from sessionflow.testing import wait_until
from tests.server.conftest import Api

T = TypeVar("T")


async def eventually(what: str, probe: Callable[[], Awaitable[T | None]], timeout: float = 60.0) -> T:
    """Await `probe()` until it returns something truthy."""
    return await wait_until(what, probe, timeout=timeout)


def state_of(snapshot: dict[str, Any]) -> dict[str, Any]:
    return cast(dict[str, Any], snapshot.get("state") or {})


async def snapshot_when(
    api: Api, session_id: str, probe: Callable[[dict[str, Any]], Any], what: str, user: str = "alice"
) -> dict[str, Any]:
    """GET the snapshot until `probe(snapshot)` holds."""

    async def check() -> dict[str, Any] | None:
        response = await api.get(f"/api/v1/sessions/{session_id}", user=user)
        snapshot: dict[str, Any] = response.json()
        return snapshot if response.status_code == 200 and probe(snapshot) else None

    return await eventually(what, check)


async def idle_after(api: Api, session_id: str, turns: int) -> dict[str, Any]:
    def done(snapshot: dict[str, Any]) -> bool:
        state = state_of(snapshot)
        return state.get("turn_count", 0) >= turns and state.get("status") == "waiting_for_user_message"

    return await snapshot_when(api, session_id, done, f"turn {turns} of {session_id} to end")


async def pending(api: Api, session_id: str) -> dict[str, Any]:
    snapshot = await snapshot_when(api, session_id, lambda s: s["pending_interrupts"], "a pending interrupt")
    return snapshot["pending_interrupts"][0]


async def read_sse(
    response: httpx.Response, *, until: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Parse server-sent events until `until(event)` holds (inclusive); each as {event, id, data}."""
    import json

    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if line == "":
            if "data" in current:
                current["data"] = json.loads(current["data"])
                events.append(current)
                if until(current):
                    return events
            current = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            current["data"] = current.get("data", "") + value
        else:
            current[name] = value
    return events
