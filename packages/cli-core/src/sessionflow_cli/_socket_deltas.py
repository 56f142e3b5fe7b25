"""Live deltas between the resident worker and the commands using it, over a Unix socket.

The in-process bus cannot reach a command in another process, and without a subscriber a
worker sends a step's text in a few coarse batches through the workflow. So the resident
worker serves its deltas on a socket, and a chat subscribes to its session there: text
streams as it did with the worker in the command.

The socket lives in ``$TMPDIR/sessionflow-<uid>/`` (0700, owned by this user: a path under
a deep home could pass the 108-byte limit of socket paths), named by a digest of the
sessionflow folder and the flow type, so the worker and its commands find the same one.
Best effort like every delta transport: a subscriber that cannot connect, or whose worker
died, gets no live deltas (it reconnects to the next worker), and the durable events and
stored messages stay the truth.

The protocol: the subscriber writes its session ID and a newline; the worker writes one
JSON line per event of that session (`AgentEvent` as a dict, without its offset).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import stat
import tempfile
import threading
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

from sessionflow.kit import DeltaSubscription
from sessionflow.session.events import AgentEvent, AgentEventType

__all__ = ["DeltaSocketServer", "SocketDeltaTransport", "socket_path"]

_MAX_BUFFER = 4 * 1024 * 1024
"""Bytes a slow subscriber may have waiting before its events are dropped (best effort)."""
_RECONNECT = 0.5


def _private_socket_dir() -> Path | None:
    """``$TMPDIR/sessionflow-<uid>``, 0700 and ours; None when that cannot be made sure of."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return None
    uid: int = getuid()
    folder = Path(tempfile.gettempdir()) / f"sessionflow-{uid}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    try:
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or stat.S_IMODE(info.st_mode) & 0o077:
        return None  # someone else's, a link, or readable by others: no socket there
    return folder


def socket_path(home: Path, flow_type: str) -> Path | None:
    """The socket of the resident worker of `flow_type` under the sessionflow folder `home`."""
    folder = _private_socket_dir()
    if folder is None:
        return None
    digest = hashlib.sha256(f"{home.resolve()}\n{flow_type}".encode()).hexdigest()[:20]
    return folder / f"{digest}.sock"


def _encode(session_id: str, event: AgentEvent) -> bytes:
    record = asdict(event)
    record.pop("offset", None)
    record["session_id"] = session_id
    return (json.dumps(record, default=str) + "\n").encode()


def _decode(line: bytes) -> AgentEvent:
    data = cast(dict[str, Any], json.loads(line))
    return AgentEvent(
        type=AgentEventType(data["type"]),
        turn_id=str(data["turn_id"]),
        step_execution_id=str(data["step_execution_id"]),
        attempt=int(data["attempt"]),
        data=cast(dict[str, Any], data.get("data") or {}),
    )


class DeltaSocketServer:
    """The worker's side: a `DeltaTransport` that sends each event to the session's subscribers.

    `publish` and `has_subscribers` are safe from any thread; `start` and `close` run on the
    worker's event loop.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._subscribers: dict[str, set[asyncio.StreamWriter]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.path.unlink(missing_ok=True)  # a dead worker's socket
        old = os.umask(0o177)  # the socket file 0600 from the start
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.path))
        finally:
            os.umask(old)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        session_id = ""
        try:
            line = await reader.readline()
            session_id = line.decode(errors="replace").strip()
            if not session_id:
                return
            with self._lock:
                self._subscribers.setdefault(session_id, set()).add(writer)
            await reader.read()  # until the subscriber goes away
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with self._lock:
                remaining = self._subscribers.get(session_id)
                if remaining is not None:
                    remaining.discard(writer)
                    if not remaining:
                        del self._subscribers[session_id]
            writer.close()

    def has_subscribers(self, session_id: str) -> bool:
        with self._lock:
            return bool(self._subscribers.get(session_id))

    def publish(self, session_id: str, event: AgentEvent) -> None:
        loop = self._loop
        if loop is None or not self.has_subscribers(session_id):
            return
        payload = _encode(session_id, event)
        with contextlib.suppress(RuntimeError):  # the loop closed: the worker is stopping
            loop.call_soon_threadsafe(self._send, session_id, payload)

    def _send(self, session_id: str, payload: bytes) -> None:
        with self._lock:
            writers = list(self._subscribers.get(session_id, ()))
        for writer in writers:
            if writer.is_closing() or writer.transport.get_write_buffer_size() > _MAX_BUFFER:
                continue
            with contextlib.suppress(OSError, RuntimeError):
                writer.write(payload)

    def subscribe(self, session_id: str) -> contextlib.AbstractAsyncContextManager[DeltaSubscription]:
        return SocketDeltaTransport(self.path).subscribe(session_id)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with self._lock:
                writers = [w for group in self._subscribers.values() for w in group]
            for writer in writers:
                writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        self.path.unlink(missing_ok=True)


class SocketDeltaTransport:
    """The command's side: subscribes to its session on the resident worker's socket."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def publish(self, session_id: str, event: AgentEvent) -> None:
        return  # a client publishes nothing

    def has_subscribers(self, session_id: str) -> bool:
        return False

    @asynccontextmanager
    async def subscribe(self, session_id: str) -> AsyncGenerator[DeltaSubscription]:
        subscription = DeltaSubscription(session_id=session_id, loop=asyncio.get_running_loop())
        if self.path is None:
            yield subscription
            return
        reader = asyncio.create_task(self._pump(self.path, subscription))
        try:
            yield subscription
        finally:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader

    async def _pump(self, path: Path, subscription: DeltaSubscription) -> None:
        # A worker that stops (idle, replaced, killed) closes the socket: connect to the next one.
        while True:
            try:
                stream, writer = await asyncio.open_unix_connection(str(path))
            except OSError:
                await asyncio.sleep(_RECONNECT)
                continue
            try:
                writer.write(subscription.session_id.encode() + b"\n")
                await writer.drain()
                while line := await stream.readline():
                    try:
                        event = _decode(line)
                    except (ValueError, KeyError, TypeError):
                        continue  # an event type a newer worker writes: skip it
                    subscription.queue.put_nowait(event)
            except OSError:
                pass
            finally:
                writer.close()
            await asyncio.sleep(_RECONNECT)
