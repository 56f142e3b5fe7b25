"""The Temporal runtime of a process's clients: quiet logging, and a Prometheus endpoint when asked.

A runtime owns threads (and, with metrics, a listening socket), so there is one per
process and metrics address, made on first use. The SDK's own metrics and sessionflow's
(`_metrics`) are served together on ``http://<address>/metrics``.
"""

from __future__ import annotations

import threading

from temporalio.runtime import LoggingConfig, PrometheusConfig, Runtime, TelemetryConfig

from sessionflow._environment import read_env
from sessionflow.temporal._metrics import STEP_LATENCY
from sessionflow.temporal.client._unreachable import LOG_FILTER, quiet_runtime

__all__ = ["METRICS_ADDRESS_ENV", "client_runtime", "resolve_metrics_address"]

METRICS_ADDRESS_ENV = "SESSIONFLOW_METRICS_ADDRESS"
"""``host:port`` of the Prometheus endpoint, when `connect` is not given ``metrics_address``."""

STEP_LATENCY_BUCKETS = (50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000)
"""Milliseconds: a model call takes seconds to minutes, past the SDK's default top bucket of 10 s."""

_runtimes: dict[str, Runtime] = {}
_lock = threading.Lock()


def resolve_metrics_address(address: str | None) -> str | None:
    """`address` if given, else ``$SESSIONFLOW_METRICS_ADDRESS``; None (or "") for no endpoint."""
    if address is not None:
        return address or None
    return read_env(METRICS_ADDRESS_ENV) or None


def client_runtime(address: str | None) -> Runtime:
    """The quiet runtime, serving Prometheus metrics on `address` when given.

    Raises:
        ValueError: `address` is not a ``host:port`` the endpoint can listen on.
    """
    if address is None:
        return quiet_runtime()
    with _lock:
        runtime = _runtimes.get(address)
        if runtime is None:
            try:
                runtime = Runtime(
                    telemetry=TelemetryConfig(
                        logging=LoggingConfig(filter=LOG_FILTER),
                        metrics=PrometheusConfig(
                            bind_address=address,
                            histogram_bucket_overrides={
                                STEP_LATENCY: [float(b) for b in STEP_LATENCY_BUCKETS]
                            },
                        ),
                    )
                )
            except Exception as error:
                raise ValueError(f"cannot serve metrics on {address!r}: {error}") from None
            _runtimes[address] = runtime
        return runtime
