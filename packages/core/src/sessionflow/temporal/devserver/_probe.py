"""Ports and probing: a free port, ``host:port`` text, and whether a frontend answers."""

from __future__ import annotations

import asyncio
import socket
import time

from sessionflow.temporal.client._probe import FrontendState, probe_frontend

__all__ = [
    "PROBE_TIMEOUT",
    "REUSE_PROBE_WINDOW",
    "free_port",
    "hostport",
    "probe_state",
    "probe_until_ready",
    "split_hostport",
]

PROBE_TIMEOUT = 3.0
"""Seconds one readiness/identity probe of a port may take."""

REUSE_PROBE_WINDOW = 10.0
"""Seconds a recorded, live server gets to answer before it is considered wedged and replaced."""


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that is free right now (the OS picks it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def split_hostport(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


async def probe_state(address: str, namespace: str, limit: float = PROBE_TIMEOUT) -> FrontendState:
    """What answers on ``address`` (`probe_frontend`); every step is bounded by ``limit`` seconds."""
    return (await probe_frontend(address, namespace, timeout=limit)).state


async def probe_until_ready(address: str, namespace: str, window: float) -> FrontendState:
    """Probe repeatedly for up to ``window`` seconds; returns READY or the last other result."""
    deadline = time.monotonic() + window
    while True:
        result = await probe_state(address, namespace)
        if result in (FrontendState.READY, FrontendState.NAMESPACE_MISSING) or time.monotonic() > deadline:
            return result
        await asyncio.sleep(0.2)
