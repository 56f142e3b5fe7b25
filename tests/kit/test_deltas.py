"""The in-process delta bus: fan-out to every subscriber of a session, from any thread,
and the subscription's reads."""

from __future__ import annotations

import asyncio
import threading

from sessionflow import AgentEvent, AgentEventType
from sessionflow.kit import DeltaSubscription, InProcessDeltaBus


def _delta(text: str) -> AgentEvent:
    return AgentEvent(
        type=AgentEventType.TEXT_DELTA,
        turn_id="turn-1",
        step_execution_id="turn-1/model-1",
        attempt=1,
        data={"text": text},
    )


async def test_every_subscriber_of_a_session_gets_each_event_and_no_other_session_does() -> None:
    bus = InProcessDeltaBus()
    async with bus.subscribe("s-1") as first, bus.subscribe("s-1") as second, bus.subscribe("s-2") as other:
        bus.publish("s-1", _delta("a"))
        bus.publish("s-1", _delta("b"))
        bus.publish("s-3", _delta("nobody listens"))
        assert await first.next(timeout=5) == [_delta("a"), _delta("b")]
        assert await second.next(timeout=5) == [_delta("a"), _delta("b")]
        assert other.ready() == []


async def test_has_subscribers_follows_subscriptions_as_they_come_and_go() -> None:
    bus = InProcessDeltaBus()
    assert not bus.has_subscribers("s-1")
    async with bus.subscribe("s-1") as staying:
        assert bus.has_subscribers("s-1")
        async with bus.subscribe("s-1") as leaving:
            bus.publish("s-1", _delta("both"))
            assert await leaving.next(timeout=5) == [_delta("both")]
        # The one that left gets nothing more; the one that stays still does.
        assert bus.has_subscribers("s-1")
        bus.publish("s-1", _delta("one"))
        assert await staying.next(timeout=5) == [_delta("both"), _delta("one")]
        await asyncio.sleep(0)  # let any event wrongly sent to the left subscriber land
        assert leaving.ready() == []
        assert not bus.has_subscribers("s-2")
    assert not bus.has_subscribers("s-1")


async def test_a_publish_from_another_thread_reaches_the_subscriber_loop() -> None:
    bus = InProcessDeltaBus()
    async with bus.subscribe("s-1") as subscription:
        publisher = threading.Thread(target=lambda: [bus.publish("s-1", _delta(str(n))) for n in range(3)])
        publisher.start()
        publisher.join()
        received: list[AgentEvent] = []
        while len(received) < 3:
            batch = await subscription.next(timeout=5)
            assert batch, "the events published from another thread did not arrive"
            received.extend(batch)
        assert received == [_delta("0"), _delta("1"), _delta("2")]


async def test_a_subscriber_whose_loop_closed_does_not_stop_the_others() -> None:
    bus = InProcessDeltaBus()

    def subscribe_then_close_the_loop() -> None:
        # A subscriber on a loop that closed without leaving (its thread ended).
        loop = asyncio.new_event_loop()
        loop.run_until_complete(bus.subscribe("s-1").__aenter__())
        loop.close()

    orphan = threading.Thread(target=subscribe_then_close_the_loop)
    orphan.start()
    orphan.join()
    async with bus.subscribe("s-1") as live:
        bus.publish("s-1", _delta("still delivered"))
        assert await live.next(timeout=5) == [_delta("still delivered")]


async def test_next_waits_for_the_first_event_then_takes_all_that_arrived() -> None:
    subscription = DeltaSubscription(session_id="s-1", loop=asyncio.get_running_loop())
    assert await subscription.next(timeout=0.01) == []
    assert subscription.ready() == []
    subscription.queue.put_nowait(_delta("a"))
    subscription.queue.put_nowait(_delta("b"))
    assert await subscription.next(timeout=5) == [_delta("a"), _delta("b")]
    assert subscription.ready() == []


async def test_subscriptions_compare_by_identity() -> None:
    # The bus drops a leaving subscription by identity, and callers keep them in sets.
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue[AgentEvent]()
    one = DeltaSubscription(session_id="s-1", loop=loop, queue=queue)
    twin = DeltaSubscription(session_id="s-1", loop=loop, queue=queue)
    assert one != twin
    assert len({one, twin, one}) == 2


def test_the_shared_bus_is_one_per_process() -> None:
    assert InProcessDeltaBus.shared() is InProcessDeltaBus.shared()
    assert isinstance(InProcessDeltaBus.shared(), InProcessDeltaBus)
