"""Connecting to a Temporal server: plain, over TLS (certificate files), or with an API key.

Where to, when the arguments do not say, is `_envconfig`'s: ``SESSIONFLOW_*``, then
Temporal's own configuration (``temporal.toml`` profiles, ``TEMPORAL_*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from temporalio.client import Client, Interceptor
from temporalio.service import TLSConfig

from sessionflow.temporal._telemetry import tracing_enabled, tracing_interceptor
from sessionflow.temporal.client._envconfig import (
    ADDRESS_ENV,
    DEFAULT_SERVER_ADDRESS,
    NAMESPACE_ENV,
    TemporalConfigError,
    resolve_connect_settings,
)
from sessionflow.temporal.client._runtimes import client_runtime, resolve_metrics_address
from sessionflow.temporal.client._unreachable import (
    ServerUnreachableError,
    UnreachableServerInterceptor,
    unreachable,
)
from sessionflow.temporal.storage._payload_store import CodecSetting, PayloadStore, build_data_converter

__all__ = [
    "ADDRESS_ENV",
    "DEFAULT_SERVER_ADDRESS",
    "NAMESPACE_ENV",
    "ServerUnreachableError",
    "TemporalClient",
    "TemporalConfigError",
    "TlsSettings",
    "connect",
    "with_payload_store",
]

TemporalClient: TypeAlias = Client
"""The client `connect` returns; what `AgentSessionClient` and `serve_agent_flows` take."""


@dataclass(frozen=True, kw_only=True)
class TlsSettings:
    """TLS towards a Temporal server, from files.

    Attributes:
        client_cert: PEM client certificate, for mutual TLS (with `client_key`).
        client_key: PEM private key of `client_cert`.
        server_root_ca_cert: PEM root CA that signs the server's certificate; None trusts
            the system's roots.
        server_name: The name to expect in the server's certificate (and to send as SNI),
            when it differs from the host of the address.
    """

    client_cert: Path | None = None
    client_key: Path | None = None
    server_root_ca_cert: Path | None = None
    server_name: str | None = None

    def __post_init__(self) -> None:
        if (self.client_cert is None) != (self.client_key is None):
            raise ValueError("TLS client_cert and client_key go together: give both or neither")


def _tls_config(tls: bool | TlsSettings | None) -> bool | TLSConfig | None:
    """Temporal's TLS option; reads the files now (raises `OSError` for a missing one)."""
    if tls is None or isinstance(tls, bool):
        return tls

    def read(path: Path | None) -> bytes | None:
        return Path(path).expanduser().read_bytes() if path is not None else None

    return TLSConfig(
        server_root_ca_cert=read(tls.server_root_ca_cert),
        client_cert=read(tls.client_cert),
        client_private_key=read(tls.client_key),
        domain=tls.server_name,
    )


async def connect(
    server_address: str | None = None,
    namespace: str | None = None,
    *,
    tls: bool | TlsSettings | None = None,
    api_key: str | None = None,
    temporal_config: bool = True,
    payloads: PayloadStore | None = None,
    codec: CodecSetting = "environment",
    tracing: bool | None = None,
    metrics_address: str | None = None,
) -> TemporalClient:
    """Connect to Temporal.

    Args:
        server_address: ``host:port``; defaults to ``$SESSIONFLOW_SERVER_ADDRESS``, else
            Temporal's configuration (``$TEMPORAL_ADDRESS`` or the ``temporal.toml``
            profile), else `DEFAULT_SERVER_ADDRESS`.
        namespace: Defaults to ``$SESSIONFLOW_NAMESPACE``, else Temporal's configuration
            (``$TEMPORAL_NAMESPACE`` or the profile), else ``default``.
        tls: False for a plain connection, True for TLS with the system's roots, or
            `TlsSettings` for certificate files (mutual TLS, a private CA, a server name);
            defaults to Temporal's configuration (``TEMPORAL_TLS*`` or the profile's
            ``tls``, on with its API key), else off.
        api_key: An API key sent with every call (Temporal Cloud); it implies nothing
            about TLS, so pass ``tls=True`` with it for a cloud endpoint. Defaults to
            Temporal's configuration (``$TEMPORAL_API_KEY`` or the profile), else none.
        temporal_config: Read Temporal's own configuration (`temporalio.envconfig`: the
            profile ``$TEMPORAL_PROFILE`` of ``$TEMPORAL_CONFIG_FILE`` or the platform's
            ``temporal.toml``, and the ``TEMPORAL_*`` variables) for what the arguments and
            ``SESSIONFLOW_*`` variables leave open; False ignores it.
        payloads: Where payloads go by reference (`PayloadStore`); defaults to
            ``$SESSIONFLOW_PAYLOADS``, else the folder ``~/.sessionflow/payloads``. Client
            and workers of one session must name the same store.
        codec: A payload codec for every payload and stored object; by default the
            encryption codec of the key ring ``$SESSIONFLOW_ENCRYPTION_KEYS`` or
            ``$SESSIONFLOW_ENCRYPTION_KEYS_FILE`` names (`sessionflow.temporal.storage._encryption`),
            else none. None switches it off.
        tracing: Trace client calls and (for workers built on this client) every step
            through OpenTelemetry (`sessionflow[otel]`); defaults to ``$SESSIONFLOW_TRACING``.
        metrics_address: ``host:port`` on which this process serves Prometheus metrics (the
            SDK's and sessionflow's) at ``/metrics``; defaults to ``$SESSIONFLOW_METRICS_ADDRESS``,
            else none. The process's clients with one address share its endpoint (and runtime).

    The client's calls raise `ServerUnreachableError` while the server does not answer,
    and its retries of them log nothing.

    Raises:
        TemporalConfigError: Temporal's configuration is read and cannot be used (a bad
            file or profile; names both; also a `ValueError`).
        OSError: A TLS file cannot be read.
        ImportError: Tracing is on and OpenTelemetry is not installed.
        ValueError: The metrics endpoint cannot listen on `metrics_address`.
        ServerUnreachableError: The server cannot be reached (also a `RuntimeError`).
        EncryptionKeyError: The environment's key ring is malformed (also a `ValueError`).
    """
    settings = resolve_connect_settings(
        server_address, namespace, tls=_tls_config(tls), api_key=api_key, temporal_config=temporal_config
    )
    address = settings.address
    interceptors: list[Interceptor] = [UnreachableServerInterceptor(address)]
    if tracing_enabled(tracing):
        interceptors.append(tracing_interceptor())
    runtime = client_runtime(resolve_metrics_address(metrics_address))
    try:
        return await Client.connect(
            address,
            namespace=settings.namespace,
            tls=settings.tls,
            api_key=settings.api_key,
            rpc_metadata=settings.rpc_metadata,
            data_converter=build_data_converter(payloads or PayloadStore.from_environment(), codec=codec),
            interceptors=interceptors,
            runtime=runtime,
        )
    except RuntimeError as error:
        translated = unreachable(address, error)
        if translated is None:
            raise
        raise translated from None


def with_payload_store(client: Client, payloads: PayloadStore | None = None) -> Client:
    """`client` with a payload store: `payloads` if given, else its own, else the default.

    A worker without a store could not keep bodies by reference, and a session would fail
    at the first payload over the server's 2 MiB limit; so a bare client gets the default.
    """
    if payloads is None and client.data_converter.external_storage is not None:
        return client
    config = client.config()
    # The client's own codec stays; a client without one gets the environment's.
    config["data_converter"] = build_data_converter(
        payloads or PayloadStore.from_environment(),
        codec=client.data_converter.payload_codec or "environment",
    )
    return Client(**config)
