# redis-py ships partial annotations.
# pyright: reportUnknownMemberType=false
"""Live deltas across processes through Redis pub/sub (the `redis` extra)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis

from sessionflow import AgentEvent, AgentEventType, RedisDeltaTransport
from sessionflow.kit import DeltaSubscription
from sessionflow.temporal import free_port
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


def _delta(text: str, *, attempt: int = 1) -> AgentEvent:
    return AgentEvent(
        type=AgentEventType.TEXT_DELTA,
        turn_id="turn-1",
        step_execution_id="turn-1/model-1",
        attempt=attempt,
        data={"text": text},
    )


async def _receive(subscription: DeltaSubscription, count: int) -> list[AgentEvent]:
    """The next `count` events of `subscription`; fails if they do not come within 10 s."""
    events: list[AgentEvent] = []

    async def gather() -> None:
        while len(events) < count:
            events.extend(await subscription.next(timeout=1))

    await asyncio.wait_for(gather(), 10)
    return events


@pytest.fixture
def transports(redis_url: str) -> Iterator[tuple[RedisDeltaTransport, RedisDeltaTransport]]:
    """A publisher and a subscriber on one server, as a worker and a client on two hosts."""
    publisher, subscriber = RedisDeltaTransport(redis_url), RedisDeltaTransport(redis_url)
    yield publisher, subscriber
    publisher.close()
    subscriber.close()


async def test_events_arrive_whole_in_order_and_only_for_their_session(
    transports: tuple[RedisDeltaTransport, RedisDeltaTransport],
) -> None:
    publisher, client = transports
    sent = [
        _delta("par"),
        _delta("tïal ✓", attempt=2),
        AgentEvent(
            type=AgentEventType.ATTEMPT_RESTARTED,
            turn_id="turn-2",
            step_execution_id="turn-2/model-3",
            attempt=3,
            data={"nested": {"n": [1, 2.5, None]}},
        ),
        AgentEvent(type=AgentEventType.TEXT_DELTA, turn_id="t", step_execution_id="t/m", attempt=1),
    ]
    assert not publisher.has_subscribers("s-1")
    async with client.subscribe("s-1") as first, client.subscribe("s-2") as second:
        await wait_until("both subscriptions", lambda: publisher.has_subscribers("s-1"))
        await wait_until("both subscriptions", lambda: publisher.has_subscribers("s-2"))
        for event in sent:
            publisher.publish("s-1", event)
        publisher.publish("s-2", _delta("other"))
        assert await _receive(second, 1) == [_delta("other")]
        assert await _receive(first, len(sent)) == sent
        # A last event on s-1 comes after anything else it got: s-2's event never reached it.
        publisher.publish("s-1", _delta("last"))
        assert await _receive(first, 1) == [_delta("last")]
        assert first.ready() == [] and second.ready() == []


async def test_has_subscribers_sees_live_subscribers_on_the_prefixed_channel(
    transports: tuple[RedisDeltaTransport, RedisDeltaTransport], redis_url: str
) -> None:
    publisher, client = transports
    other_prefix = RedisDeltaTransport(redis_url, channel_prefix="elsewhere:")
    raw = redis.Redis.from_url(redis_url)
    try:
        assert not publisher.has_subscribers("s-1")
        async with client.subscribe("s-1"):
            await wait_until("the subscription", lambda: publisher.has_subscribers("s-1"))
            # The channel is the prefix and the session ID: what workers and clients of every
            # version agree on.
            assert raw.pubsub_numsub("sessionflow:deltas:s-1") == [(b"sessionflow:deltas:s-1", 1)]
            assert not publisher.has_subscribers("s-2")
            assert not other_prefix.has_subscribers("s-1")
        await wait_until("the unsubscription", lambda: not publisher.has_subscribers("s-1"))
        async with other_prefix.subscribe("s-1") as subscription:
            await wait_until("the subscription", lambda: other_prefix.has_subscribers("s-1"))
            assert raw.pubsub_numsub("elsewhere:s-1") == [(b"elsewhere:s-1", 1)]
            assert not publisher.has_subscribers("s-1")
            other_prefix.publish("s-1", _delta("x"))
            assert await _receive(subscription, 1) == [_delta("x")]
    finally:
        other_prefix.close()
        raw.close()


async def test_a_message_the_subscriber_cannot_read_is_skipped(
    transports: tuple[RedisDeltaTransport, RedisDeltaTransport], redis_url: str
) -> None:
    publisher, client = transports
    raw = redis.Redis.from_url(redis_url)
    channel = "sessionflow:deltas:s-1"
    valid = {"type": "text_delta", "turn_id": "t", "step_execution_id": "t/m", "attempt": 1}
    try:
        async with client.subscribe("s-1") as subscription:
            await wait_until("the subscription", lambda: publisher.has_subscribers("s-1"))
            raw.publish(channel, "not json")
            raw.publish(channel, json.dumps({**valid, "type": "an_event_of_a_newer_worker"}))
            raw.publish(channel, json.dumps({key: value for key, value in valid.items() if key != "attempt"}))
            raw.publish(channel, json.dumps({**valid, "data": None}))
            publisher.publish("s-1", _delta("after"))
            events = await _receive(subscription, 2)
            assert events == [
                AgentEvent(type=AgentEventType.TEXT_DELTA, turn_id="t", step_execution_id="t/m", attempt=1),
                _delta("after"),
            ]
            assert events[0].data == {}
    finally:
        raw.close()


async def test_close_sends_what_is_queued_and_a_later_publish_starts_again(
    transports: tuple[RedisDeltaTransport, RedisDeltaTransport],
) -> None:
    publisher, client = transports
    client.close()  # it never published: nothing to stop
    async with client.subscribe("s-1") as subscription:
        await wait_until("the subscription", lambda: publisher.has_subscribers("s-1"))
        sent = [_delta(f"d{index}") for index in range(50)]
        for event in sent:
            publisher.publish("s-1", event)
        publisher.close()
        # Every queued event was sent before close returned.
        assert await _receive(subscription, 50) == sent
        publisher.publish("s-1", _delta("again"))
        assert await _receive(subscription, 1) == [_delta("again")]


async def test_a_publish_redis_refuses_does_not_stop_later_ones(
    transports: tuple[RedisDeltaTransport, RedisDeltaTransport], redis_url: str
) -> None:
    publisher, client = transports
    raw = redis.Redis.from_url(redis_url)
    try:
        # Only the channels of sessions named "open..." may be used: a publish to another
        # session fails with NOPERM, as a network error or a full server would.
        raw.execute_command("ACL", "SETUSER", "default", "resetchannels", "&sessionflow:deltas:open*")
        async with client.subscribe("open-1") as subscription:
            await wait_until("the subscription", lambda: publisher.has_subscribers("open-1"))
            publisher.publish("closed-1", _delta("refused"))
            publisher.publish("open-1", _delta("after"))
            assert await _receive(subscription, 1) == [_delta("after")]
    finally:
        raw.close()


async def test_an_unreachable_redis_is_best_effort_for_the_publisher() -> None:
    transport = RedisDeltaTransport(f"redis://127.0.0.1:{free_port()}/0")
    try:
        assert transport.has_subscribers("s-1") is False
        transport.publish("s-1", _delta("lost"))  # never raises: the stored messages are the truth
    finally:
        transport.close()


UNCLOSED = """
import sys
from sessionflow import AgentEvent, AgentEventType, RedisDeltaTransport
transport = RedisDeltaTransport(sys.argv[1])
transport.publish("s-1", AgentEvent(type=AgentEventType.TEXT_DELTA, turn_id="t", step_execution_id="t/m", attempt=1))
print("published")
"""


def test_a_transport_never_closed_does_not_keep_its_process_alive(redis_url: str) -> None:
    try:
        completed = subprocess.run(
            [sys.executable, "-c", UNCLOSED, redis_url],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the process did not exit: the background sender kept it alive")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "published"


WITHOUT_REDIS = """
import sys
sys.modules["redis"] = None  # as if the `redis` extra were not installed
try:
    from sessionflow import RedisDeltaTransport
except ImportError as error:
    print(error)
"""


def test_without_the_redis_extra_the_error_says_what_to_install() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", WITHOUT_REDIS], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == (
        'The Redis delta transport needs the `redis` package: pip install "sessionflow[redis]"'
    )
