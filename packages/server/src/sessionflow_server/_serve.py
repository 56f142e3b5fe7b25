"""Serving the app with uvicorn, and the bind rule: loopback unless told otherwise, with a token store."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass

import uvicorn

from sessionflow import UserError
from sessionflow_server._app import ApiServer

__all__ = [
    "LOOPBACK_HOSTS",
    "BindRefusedError",
    "RunningServer",
    "check_bind",
    "is_loopback",
    "quiet_http_client_logs",
    "running_server",
]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
"""Host header names a loopback server answers to (anything else may be DNS rebinding)."""


class BindRefusedError(UserError, ValueError):
    """A bind that could expose the API without the operator saying so."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, allow_remote: bool, token_store_configured: bool) -> None:
    """Refuse a non-loopback bind unless it was asked for and tokens live in a configured store."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise BindRefusedError(
            f"binding to {host} exposes the API beyond this machine; pass --allow-remote to mean it"
        )
    if not token_store_configured:
        raise BindRefusedError(
            f"binding to {host} needs a token store file (--token-store FILE), so tokens outlive the process"
        )


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: the caller decides when to stop.

    uvicorn's own handlers re-raise a caught SIGTERM after shutdown, which would end the
    process before a worker sharing it has finished its steps.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


@dataclass
class RunningServer:
    server: uvicorn.Server
    host: str
    port: int
    task: asyncio.Task[None]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"http://{host}:{self.port}"


def quiet_http_client_logs() -> None:
    """httpx and httpcore log every request's URL at INFO (webhook URLs included): WARNING only."""
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)


@contextlib.asynccontextmanager
async def running_server(
    api: ApiServer, *, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"
) -> AsyncGenerator[RunningServer]:
    """Serve `api` on this event loop until the block ends; `port=0` takes a free port.

    ``X-Forwarded-For`` is read only from the peers in ``api.config.trusted_proxies``
    (uvicorn alone would trust 127.0.0.1, so a local client could name any address).
    """
    quiet_http_client_logs()
    proxies = list(api.config.trusted_proxies)
    config = uvicorn.Config(
        api.app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=5,
        access_log=False,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies,
    )
    server = _Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving  # raises what stopped it (a port in use)
            raise OSError(f"the API server could not start on {host}:{port}")
        await asyncio.sleep(0.02)
    bound = port
    for listener in server.servers:
        for sock in listener.sockets:
            bound = int(sock.getsockname()[1])
    try:
        yield RunningServer(server, host, bound, serving)
    finally:
        api.shutdown.set()
        server.should_exit = True
        await serving
