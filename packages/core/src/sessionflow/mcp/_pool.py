"""Connections to MCP servers, kept open per worker process and closed when idle."""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import os
import sys
import threading
import weakref
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TextIO

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT, Implementation

from sessionflow.mcp._config import ConnectionKey, McpServerConfig
from sessionflow.mcp._errors import McpUnavailableError, describe_error

__all__ = ["McpConnectionPool", "shared_pool"]

logger = logging.getLogger("sessionflow.mcp")

DEFAULT_IDLE_TIMEOUT = 300.0
DEFAULT_CONNECT_TIMEOUT = 30.0
_CLOSE_TIMEOUT = 10.0


def _client_info() -> Implementation:
    try:
        version = importlib.metadata.version("sessionflow")
    except importlib.metadata.PackageNotFoundError:
        version = "0"
    return Implementation(name="sessionflow", version=version)


def _breaks_connection(error: BaseException) -> bool:
    """Whether an error escaping a connection's use means the connection cannot be trusted."""
    if not isinstance(error, Exception):
        return False  # cancellation: the connection itself is fine
    if isinstance(error, MCPError):
        # The server answered with an error: the connection works. The SDK raises these
        # two codes itself when the connection closed or a request got no answer.
        return error.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT)
    return True


class _Connection:
    """One open client, owned by a task that enters and leaves its async context.

    The MCP SDK's transports run anyio task groups, which must be exited by the task that
    entered them, so a dedicated task holds the client open until the connection is idle
    for too long, retired after a failure, or closed.
    """

    def __init__(self, config: McpServerConfig, pool: McpConnectionPool, slot: _LoopSlot) -> None:
        self.config = config
        self._pool = pool
        self._slot = slot
        loop = asyncio.get_running_loop()
        self._ready: asyncio.Future[Client] = loop.create_future()
        self._closing = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.in_use = 0
        self.last_used = loop.time()
        self.retired = False
        self.closed = False

    @property
    def usable(self) -> bool:
        return not (self.retired or self.closed or self._closing.is_set())

    async def start(self, timeout: float) -> Client:
        self._task = asyncio.create_task(self._hold(), name=f"sessionflow-mcp-{self.config.name}")
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(self._ready)
        except TimeoutError:
            await self.close()
            if self._ready.done() and not self._ready.cancelled():
                self._ready.exception()  # retrieved: nobody else waits for it
            raise McpUnavailableError(self.config.name, f"no answer within {timeout:g} s") from None
        except McpUnavailableError:
            raise
        except Exception as error:
            raise McpUnavailableError(self.config.name, describe_error(error)) from error

    @property
    def client(self) -> Client:
        return self._ready.result()

    def release(self) -> None:
        self.in_use -= 1
        self.last_used = asyncio.get_running_loop().time()
        self._wake.set()

    def retire(self, reason: str) -> None:
        """Stop handing this connection out; it closes once its calls in flight end."""
        if not self.retired:
            logger.info("MCP server %r: dropping its connection (%s)", self.config.name, reason)
        self.retired = True
        self._wake.set()

    async def close(self) -> None:
        self._closing.set()
        self._wake.set()
        task = self._task
        if task is None or task is asyncio.current_task():
            return
        if not self._ready.done():
            task.cancel()  # still starting: nothing to shut down gracefully
        done, _ = await asyncio.wait([task], timeout=_CLOSE_TIMEOUT)
        if not done:
            task.cancel()

    async def _hold(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(self._client(stack))
                self._ready.set_result(client)
                await self._serve()
        except BaseException as error:
            if not self._ready.done():
                self._ready.set_exception(
                    error
                    if isinstance(error, Exception)
                    else McpUnavailableError(self.config.name, "cancelled")
                )
            elif isinstance(error, Exception):
                logger.info(
                    "MCP server %r: connection ended with %s", self.config.name, describe_error(error)
                )
            if not isinstance(error, Exception):
                raise
        finally:
            self.closed = True
            self._slot.forget(self)

    def _client(self, stack: AsyncExitStack) -> Client:
        config = self.config
        if config.command is not None:
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) if config.env is not None else None,
                cwd=config.cwd,
            )
            errlog = self._pool.server_stderr or sys.stderr
            return Client(stdio_client(params, errlog=errlog), cache=None, client_info=_client_info())
        assert config.url is not None
        http = httpx2.AsyncClient(
            headers=dict(config.headers or {}),
            timeout=httpx2.Timeout(DEFAULT_CONNECT_TIMEOUT, read=300.0),
        )
        stack.push_async_callback(http.aclose)
        return Client(
            streamable_http_client(config.url, http_client=http), cache=None, client_info=_client_info()
        )

    async def _serve(self) -> None:
        """Wait until closed, retired and unused, or unused for the pool's idle timeout."""
        loop = asyncio.get_running_loop()
        while not self._closing.is_set():
            if self.in_use == 0:
                if self.retired:
                    return
                remaining = self.last_used + self._pool.idle_timeout - loop.time()
                if remaining <= 0:
                    logger.debug("MCP server %r: closing its idle connection", self.config.name)
                    return
            else:
                remaining = self._pool.idle_timeout
            self._wake.clear()
            with anyio.move_on_after(remaining):
                await self._wake.wait()


class _LoopSlot:
    """The connections of one event loop: a connection belongs to the loop that opened it."""

    def __init__(self) -> None:
        self.connections: dict[ConnectionKey, _Connection] = {}
        self.locks: dict[ConnectionKey, asyncio.Lock] = {}

    def forget(self, connection: _Connection) -> None:
        key = connection.config.connection_key
        if self.connections.get(key) is connection:
            del self.connections[key]


class McpConnectionPool:
    """Open MCP connections shared by every tool of a worker process.

    A connection is keyed by what it talks to (`McpServerConfig.connection_key`) and by
    the event loop it was opened on. It is opened on first use, shared by concurrent
    calls, closed after ``idle_timeout`` seconds without use, and replaced by a new one
    after a failure.

    Args:
        idle_timeout: Seconds a connection may stay unused before it is closed.
        connect_timeout: Seconds to start a server and complete the MCP handshake.
        server_stderr: Where stdio servers write their stderr (a file with a descriptor,
            such as a log file); defaults to this process's stderr.
    """

    def __init__(
        self,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        server_stderr: TextIO | None = None,
    ) -> None:
        if idle_timeout <= 0 or connect_timeout <= 0:
            raise ValueError("idle_timeout and connect_timeout must be positive")
        self.idle_timeout = idle_timeout
        self.connect_timeout = connect_timeout
        self.server_stderr = server_stderr
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopSlot] = (
            weakref.WeakKeyDictionary()
        )
        self._pid = os.getpid()

    def _slot(self) -> _LoopSlot:
        if os.getpid() != self._pid:
            # A forked child must not use its parent's pipes and sockets.
            self._slots = weakref.WeakKeyDictionary()
            self._pid = os.getpid()
        loop = asyncio.get_running_loop()
        slot = self._slots.get(loop)
        if slot is None:
            slot = self._slots[loop] = _LoopSlot()
        return slot

    @asynccontextmanager
    async def connection(self, config: McpServerConfig) -> AsyncGenerator[Client]:
        """Borrow the open client of ``config``'s server, connecting first if needed.

        An error that shows the connection broke retires it, so the next use reconnects.

        Raises:
            McpUnavailableError: The server could not be started or did not complete the
                handshake within ``connect_timeout``.
        """
        connection = await self._acquire(config)
        try:
            yield connection.client
        except BaseException as error:
            if _breaks_connection(error):
                connection.retire(describe_error(error))
            raise
        finally:
            connection.release()

    async def _acquire(self, config: McpServerConfig) -> _Connection:
        slot = self._slot()
        key = config.connection_key
        lock = slot.locks.get(key)
        if lock is None:
            lock = slot.locks[key] = asyncio.Lock()
        async with lock:
            connection = slot.connections.get(key)
            if connection is None or not connection.usable:
                connection = _Connection(config, self, slot)
                slot.connections[key] = connection
                # Count this use before it starts, so an idle timeout shorter than the
                # start-up cannot close the connection under its first user.
                connection.in_use += 1
                try:
                    await connection.start(self.connect_timeout)
                except BaseException:
                    connection.in_use -= 1
                    connection.retire("it did not start")  # a start still running ends unused
                    slot.forget(connection)
                    raise
            else:
                connection.in_use += 1
            return connection

    def is_connected(self, config: McpServerConfig) -> bool:
        """Whether this event loop holds an open connection to ``config``'s server."""
        connection = self._slot().connections.get(config.connection_key)
        return connection is not None and connection.usable

    async def close(self, configs: list[McpServerConfig] | None = None) -> None:
        """Close this event loop's connections (of ``configs`` only, when given)."""
        slot = self._slot()
        keys = None if configs is None else {config.connection_key for config in configs}
        closing = [c for k, c in list(slot.connections.items()) if keys is None or k in keys]
        await asyncio.gather(*(connection.close() for connection in closing))


_shared: McpConnectionPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> McpConnectionPool:
    """The process-wide pool every `McpToolSource` uses unless it is given its own."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = McpConnectionPool()
        return _shared
