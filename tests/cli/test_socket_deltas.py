"""Live deltas over the resident worker's Unix socket: only the session's subscribers get
them, from any thread, and a subscriber reconnects to the next worker's socket."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

from sessionflow import AgentEvent, AgentEventType
from sessionflow.testing import wait_until
from sessionflow_cli._socket_deltas import DeltaSocketServer, SocketDeltaTransport, socket_path


def _delta(text: str) -> AgentEvent:
    return AgentEvent(
        type=AgentEventType.TEXT_DELTA,
        turn_id="turn-1",
        step_execution_id="step-1",
        attempt=1,
        data={"text": text},
    )


async def test_a_subscriber_gets_its_sessions_deltas_and_follows_the_next_worker(tmp_path: Path) -> None:
    path = socket_path(tmp_path, "flow-deltas")
    assert path is not None
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert socket_path(tmp_path, "flow-deltas") == path != socket_path(tmp_path, "another-flow")
    first = DeltaSocketServer(path)
    await first.start()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second: DeltaSocketServer | None = None
    try:
        async with SocketDeltaTransport(path).subscribe("session-1") as subscription:
            await wait_until("the subscription", lambda: first.has_subscribers("session-1"), timeout=30)
            assert not first.has_subscribers("session-2")
            first.publish("session-2", _delta("not yours"))
            # Steps publish from their own threads.
            sender = threading.Thread(target=first.publish, args=("session-1", _delta("hel")))
            sender.start()
            sender.join()
            first.publish("session-1", _delta("lo"))
            received: list[AgentEvent] = []
            while len(received) < 2:
                received += await subscription.next(30)
            assert [e.data["text"] for e in received] == ["hel", "lo"]
            assert received[0] == _delta("hel")

            # The worker stops; the next one serves the same socket and the subscriber finds it.
            await first.close()
            assert not path.exists()
            second = DeltaSocketServer(path)
            await second.start()
            await wait_until("the new subscription", lambda: second.has_subscribers("session-1"), timeout=30)
            second.publish("session-1", _delta("again"))
            assert [e.data["text"] for e in await subscription.next(30)] == ["again"]
        await wait_until("the unsubscription", lambda: not second.has_subscribers("session-1"), timeout=30)
    finally:
        await first.close()
        if second is not None:
            await second.close()


async def test_without_a_socket_a_subscription_is_empty(tmp_path: Path) -> None:
    async with SocketDeltaTransport(None).subscribe("session-1") as subscription:
        assert await subscription.next(0.05) == []
    async with SocketDeltaTransport(tmp_path / "nobody.sock").subscribe("session-1") as subscription:
        assert await subscription.next(0.05) == []
