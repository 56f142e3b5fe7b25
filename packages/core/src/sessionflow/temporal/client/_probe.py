"""What answers on an address: nothing, a Temporal frontend (with a namespace or not), or another service."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from dataclasses import dataclass
from datetime import timedelta

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest, GetSystemInfoRequest
from temporalio.service import ConnectConfig, RPCError, RPCStatusCode, ServiceClient

__all__ = ["DEFAULT_PROBE_TIMEOUT", "FrontendProbe", "FrontendState", "probe_frontend"]

DEFAULT_PROBE_TIMEOUT = 3.0
"""Seconds each step of `probe_frontend` may take."""


class FrontendState(enum.StrEnum):
    """What `probe_frontend` found, from nothing at all to a usable frontend."""

    UNREACHABLE = "unreachable"
    """Nothing accepts TCP connections."""
    NOT_TEMPORAL = "not_temporal"
    """Something accepts connections but does not answer as a Temporal frontend."""
    NAMESPACE_MISSING = "namespace_missing"
    """A Temporal frontend answers, and the namespace does not exist."""
    NOT_READY = "not_ready"
    """A Temporal frontend answers, but cannot tell about the namespace yet (still starting)."""
    READY = "ready"
    """A Temporal frontend answers, and the namespace exists."""

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    FrontendState.UNREACHABLE: "nothing accepts TCP connections",
    FrontendState.NOT_TEMPORAL: "a service answers that is not a Temporal frontend",
    FrontendState.NAMESPACE_MISSING: "a Temporal frontend answers, but the namespace does not exist",
    FrontendState.NOT_READY: "a Temporal frontend answers, but cannot tell about the namespace yet",
    FrontendState.READY: "a Temporal frontend answers and has the namespace",
}


@dataclass(frozen=True, kw_only=True)
class FrontendProbe:
    """The answer of `probe_frontend`.

    Attributes:
        address: The probed ``host:port``.
        namespace: The namespace asked about.
        reachable: Something accepts TCP connections there.
        is_temporal: It answers as a Temporal frontend (``GetSystemInfo``).
        has_namespace: True or False when the frontend told; None when it could not (or
            nothing Temporal answers).
        error: Why the last step failed, in one line; None when every step worked.
    """

    address: str
    namespace: str
    reachable: bool
    is_temporal: bool
    has_namespace: bool | None
    error: str | None = None

    @property
    def state(self) -> FrontendState:
        if not self.reachable:
            return FrontendState.UNREACHABLE
        if not self.is_temporal:
            return FrontendState.NOT_TEMPORAL
        if self.has_namespace is None:
            return FrontendState.NOT_READY
        return FrontendState.READY if self.has_namespace else FrontendState.NAMESPACE_MISSING

    @property
    def ready(self) -> bool:
        """A Temporal frontend with the namespace answers."""
        return self.state is FrontendState.READY


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"address {address!r} is not host:port")
    return host.strip("[]"), int(port)


def _reason(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "no answer in time"
    if isinstance(error, RPCError):
        return f"{error.status.name}: {error.message}" if error.message else error.status.name
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


async def probe_frontend(
    address: str, namespace: str = "default", *, timeout: float = DEFAULT_PROBE_TIMEOUT
) -> FrontendProbe:
    """Find out what answers on ``address`` (``host:port``, ``[v6]:port``), without TLS.

    Three steps, each bounded by `timeout` seconds: a TCP connection, Temporal's
    ``GetSystemInfo``, and ``DescribeNamespace``. A step that fails ends the probe.

    Raises:
        ValueError: `address` is not ``host:port``.
    """
    host, port = _split(address)

    def answer(
        *,
        reachable: bool,
        is_temporal: bool = False,
        has_namespace: bool | None = None,
        error: BaseException | None = None,
    ) -> FrontendProbe:
        return FrontendProbe(
            address=address,
            namespace=namespace,
            reachable=reachable,
            is_temporal=is_temporal,
            has_namespace=has_namespace,
            error=None if error is None else _reason(error),
        )

    try:
        async with asyncio.timeout(timeout):
            _reader, writer = await asyncio.open_connection(host, port)
    except (OSError, TimeoutError) as error:
        return answer(reachable=False, error=error)
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()

    rpc_timeout = timedelta(seconds=timeout)
    try:
        # The asyncio timeout covers a peer that never finishes the HTTP/2 handshake, which
        # the RPC deadline does not.
        async with asyncio.timeout(timeout):
            service = await ServiceClient.connect(
                ConnectConfig(
                    target_host=address, lazy=True, keep_alive_config=None, connect_timeout=rpc_timeout
                )
            )
            await service.workflow_service.get_system_info(
                GetSystemInfoRequest(), retry=False, timeout=rpc_timeout
            )
    except Exception as error:
        return answer(reachable=True, error=error)
    try:
        async with asyncio.timeout(timeout):
            await service.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace=namespace), retry=False, timeout=rpc_timeout
            )
    except RPCError as error:
        missing = error.status == RPCStatusCode.NOT_FOUND
        return answer(reachable=True, is_temporal=True, has_namespace=False if missing else None, error=error)
    except Exception as error:
        return answer(reachable=True, is_temporal=True, error=error)
    return answer(reachable=True, is_temporal=True, has_namespace=True)
