# redis-py ships partial annotations.
# pyright: reportUnknownMemberType=false
"""Live deltas across processes through Redis pub/sub (the `redis` extra)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from sessionflow import AgentEvent, AgentEventType
from sessionflow.testing import wait_until
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after
from tests.redis_server import running_redis


@pytest.fixture
def redis_url() -> Iterator[str]:
    with running_redis() as url:
        yield url


async def test_deltas_reach_a_client_in_another_process_live(
    harness_factory: HarnessFactory, redis_url: str
) -> None:
    harness: Harness = await harness_factory(redis_url=redis_url)
    harness.script(
        "r-live",
        [
            [
                {
                    "deltas_by_attempt": {"1": ["par", "tial"], "2": ["fin", "al"]},
                    "fail_attempts": 1,
                    "text": "final",
                }
            ]
        ],
    )
    seen: list[AgentEvent] = []

    async def follow() -> None:
        # Live deltas and durable events travel apart, so the turn's end may be read before
        # the last deltas: follow until both are in.
        done = False
        async for event in harness.sessions.events("r-live"):
            seen.append(event)
            done = done or event.type is AgentEventType.TURN_COMPLETED
            if done and any(e.attempt == 2 and e.data.get("text") == "al" for e in seen):
                return

    follower = asyncio.create_task(follow())
    transport = harness.flow.delta_transport
    await wait_until("the client to subscribe", lambda: transport.has_subscribers("r-live"))
    await harness.sessions.start_session("r-live", "go")
    await asyncio.wait_for(follower, 60)
    await idle_after(harness, "r-live", 1)
    live = [(e.attempt, e.data["text"]) for e in seen if e.type is AgentEventType.TEXT_DELTA]
    assert live == [(1, "par"), (1, "tial"), (2, "fin"), (2, "al")]
    assert all(e.offset is None for e in seen if e.type is AgentEventType.TEXT_DELTA)
    restarted = [e for e in seen if e.type is AgentEventType.ATTEMPT_RESTARTED]
    assert [(e.step_execution_id, e.attempt) for e in restarted] == [("turn-1/model-1", 2)]
    # A subscriber was reachable, so nothing fell back into the workflow history.
    durable = (await harness.sessions.list_agent_events("r-live")).events
    assert not [e for e in durable if e.type is AgentEventType.TEXT_DELTA]
