# redis-py ships partial annotations (untyped **kwargs and PubSub messages).
# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false
"""Live deltas over Redis pub/sub, for clients and workers on different hosts.

Install with `pip install "sessionflow[redis]"` and give both the worker's and the
client's `AgentSessionFlow` the same `RedisDeltaTransport(url)`. Durable events never
depend on it: they stay in the session workflow.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import asdict
from typing import Any, cast

try:
    import redis
    import redis.asyncio as aioredis
except ImportError as _import_error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'The Redis delta transport needs the `redis` package: pip install "sessionflow[redis]"'
    ) from _import_error

from sessionflow.kit._deltas import DeltaSubscription
from sessionflow.session.events import AgentEvent, AgentEventType

__all__ = ["RedisDeltaTransport"]

_STOP = object()


def _encode(event: AgentEvent) -> str:
    return json.dumps(asdict(event))


def _decode(raw: str | bytes) -> AgentEvent:
    data = cast(dict[str, Any], json.loads(raw))
    return AgentEvent(
        type=AgentEventType(data["type"]),
        turn_id=str(data["turn_id"]),
        step_execution_id=str(data["step_execution_id"]),
        attempt=int(data["attempt"]),
        data=cast(dict[str, Any], data.get("data") or {}),
    )


class RedisDeltaTransport:
    """Publishes from any thread through one background sender; subscribes with redis.asyncio."""

    def __init__(self, url: str, *, channel_prefix: str = "sessionflow:deltas:") -> None:
        self.url = url
        self.channel_prefix = channel_prefix
        self._sync = redis.Redis.from_url(url)
        self._outbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._sender: threading.Thread | None = None
        self._lock = threading.Lock()

    def _channel(self, session_id: str) -> str:
        return self.channel_prefix + session_id

    def publish(self, session_id: str, event: AgentEvent) -> None:
        # Never block the caller (often the event loop) on the network.
        self._ensure_sender()
        self._outbox.put((self._channel(session_id), _encode(event)))

    def _ensure_sender(self) -> None:
        with self._lock:
            if self._sender is None or not self._sender.is_alive():
                self._sender = threading.Thread(
                    target=self._send_loop, name="sessionflow-redis-deltas", daemon=True
                )
                self._sender.start()

    def _send_loop(self) -> None:
        while True:
            item = self._outbox.get()
            if item is _STOP:
                return
            channel, payload = cast(tuple[str, str], item)
            try:
                self._sync.publish(channel, payload)
            except redis.RedisError:
                continue  # deltas are best effort; the stored messages are the truth

    def has_subscribers(self, session_id: str) -> bool:
        try:
            counts = cast(list[tuple[bytes, int]], self._sync.pubsub_numsub(self._channel(session_id)))
        except redis.RedisError:
            return False
        return any(count > 0 for _, count in counts)

    @asynccontextmanager
    async def subscribe(self, session_id: str) -> AsyncGenerator[DeltaSubscription]:
        subscription = DeltaSubscription(session_id=session_id, loop=asyncio.get_running_loop())
        client = aioredis.Redis.from_url(self.url)
        pubsub = client.pubsub()
        await pubsub.subscribe(self._channel(session_id))

        async def pump() -> None:
            async for message in pubsub.listen():
                if message.get("type") != "message":
                    continue
                try:
                    event = _decode(cast(bytes, message["data"]))
                except (ValueError, KeyError):
                    continue  # an event type a newer worker writes: best effort, skip it
                subscription.queue.put_nowait(event)

        reader = asyncio.create_task(pump())
        try:
            yield subscription
        finally:
            reader.cancel()
            await pubsub.unsubscribe()
            await pubsub.aclose()
            await client.aclose()

    def close(self) -> None:
        """Stop the background sender after it sends what is queued."""
        if self._sender is not None and self._sender.is_alive():
            self._outbox.put(_STOP)
            self._sender.join(timeout=5)
        self._sync.close()
