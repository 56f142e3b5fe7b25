"""Tell what answers on a port: nothing, a Temporal frontend (with our namespace), or a stranger."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from datetime import timedelta

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest, GetSystemInfoRequest
from temporalio.service import ConnectConfig, RPCError, RPCStatusCode, ServiceClient

__all__ = ["Answer", "probe"]


class Answer(enum.Enum):
    NOTHING = "nothing accepts connections"
    STRANGER = "a service answers that is not a Temporal frontend"
    NO_NAMESPACE = "a Temporal frontend answers, but without the namespace"
    NOT_READY = "a Temporal frontend answers, but cannot tell about the namespace yet"
    TEMPORAL = "a Temporal frontend with the namespace answers"


async def probe(host: str, port: int, namespace: str, *, timeout: float = 3.0) -> Answer:
    """Classify what answers on ``host:port``; each step takes at most `timeout` seconds."""
    try:
        async with asyncio.timeout(timeout):
            _reader, writer = await asyncio.open_connection(host, port)
    except (OSError, TimeoutError):
        return Answer.NOTHING
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    rpc_timeout = timedelta(seconds=timeout)
    try:
        # The asyncio timeout covers a peer that never finishes the HTTP/2 handshake.
        async with asyncio.timeout(timeout):
            service = await ServiceClient.connect(
                ConnectConfig(target_host=address, lazy=True, keep_alive_config=None, connect_timeout=rpc_timeout)
            )
            await service.workflow_service.get_system_info(GetSystemInfoRequest(), retry=False, timeout=rpc_timeout)
    except Exception:
        return Answer.STRANGER
    try:
        async with asyncio.timeout(timeout):
            await service.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace=namespace), retry=False, timeout=rpc_timeout
            )
    except RPCError as error:
        return Answer.NO_NAMESPACE if error.status == RPCStatusCode.NOT_FOUND else Answer.NOT_READY
    except Exception:
        return Answer.NOT_READY
    return Answer.TEMPORAL
