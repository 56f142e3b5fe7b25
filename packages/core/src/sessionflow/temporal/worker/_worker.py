"""Serving flows in this process: one plain Temporal worker per task queue, through the plugin."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker

from sessionflow._environment import read_env
from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.temporal._plugin import SessionflowPlugin, default_build_id
from sessionflow.temporal.client._connection import DEFAULT_SERVER_ADDRESS, connect, with_payload_store
from sessionflow.temporal.storage._payload_store import PayloadStore
from sessionflow.temporal.worker._deployment import BUILD_ID_ENV, WorkerDeployment
from sessionflow.temporal.worker._model_call_limits import ModelCallLimits
from sessionflow.temporal.worker._shutdown import SHUTDOWN_GRACE_ENV, exit_worker_process, shutdown_grace
from sessionflow.temporal.worker._sticky import sticky_queue_timeout

__all__ = [
    "DEFAULT_SERVER_ADDRESS",
    "SHUTDOWN_GRACE_ENV",
    "WorkerDeployment",
    "build_workers",
    "connect",
    "exit_worker_process",
    "run_agent_worker",
    "serve_agent_flows",
    "shutdown_grace",
]


def build_workers(
    client: Client,
    flows: Sequence[AgentSessionFlow],
    *,
    max_concurrent_activities: int = 100,
    max_cached_workflows: int = 1000,
    payloads: PayloadStore | None = None,
    build_id: str | None = None,
    deployment: WorkerDeployment | None = None,
    model_call_limits: ModelCallLimits | None = None,
    tracing: bool | None = None,
    shutdown_grace_period: timedelta | float | None = None,
) -> list[Worker]:
    """One worker per task queue, each a plain `Worker` with a `SessionflowPlugin` for its flows.

    Flows that name one task queue share its worker. Activity slots bound the largest
    parallel tool batch.

    `payloads` names the payload store (see `with_payload_store`: the client's own, else
    ``$SESSIONFLOW_PAYLOADS`` or the default folder). `build_id` names the deployed code
    (else ``$SESSIONFLOW_BUILD_ID``, else `default_build_id`). `deployment` joins the
    workers to a worker deployment (else the one ``$SESSIONFLOW_DEPLOYMENT_NAME`` and
    ``$SESSIONFLOW_BUILD_ID`` name, else none: unversioned workers, as before).
    `model_call_limits` bound the model calls the workers run at once, together
    (``$SESSIONFLOW_MODEL_CALL_LIMITS`` if None; see `ModelCallLimits`). `tracing` (default
    ``$SESSIONFLOW_TRACING``) traces every step through OpenTelemetry, unless the client
    already does (`connect(tracing=True)`). `shutdown_grace_period` is what running steps
    get to finish once shutdown starts (seconds; else ``$SESSIONFLOW_SHUTDOWN_GRACE``, else
    20 s); steps still running then are cancelled and fail retryably (see `_shutdown`).
    ``$SESSIONFLOW_STICKY_QUEUE_TIMEOUT`` shortens how long a dead worker's cached sessions
    wait before another worker takes them (see `_sticky`).
    """
    if any(isinstance(plugin, SessionflowPlugin) for plugin in client.config()["plugins"]):
        raise ValueError(
            "this client already carries a SessionflowPlugin: build plain temporalio Workers on it "
            "(Worker(client, task_queue=...)) instead of build_workers"
        )
    client = with_payload_store(client, payloads)
    plugin = SessionflowPlugin(flows, payloads=payloads, tracing=tracing, model_call_limits=model_call_limits)
    deployment = deployment or WorkerDeployment.from_environment()
    if deployment is not None and build_id is not None and build_id != deployment.build_id:
        raise ValueError(f"build_id {build_id!r} differs from the deployment's {deployment.build_id!r}")
    # A worker of a deployment reports its version instead of a plain build ID.
    deployment_config = deployment.worker_config() if deployment is not None else None
    if deployment is None:
        build_id = build_id or read_env(BUILD_ID_ENV, "").strip() or default_build_id()
    grace = shutdown_grace(shutdown_grace_period)
    sticky = sticky_queue_timeout()
    workers: list[Worker] = []
    for task_queue in dict.fromkeys(flow.task_queue for flow in flows):
        workers.append(
            Worker(
                client,
                task_queue=task_queue,
                plugins=[plugin],
                max_concurrent_activities=max_concurrent_activities,
                max_concurrent_local_activities=max_concurrent_activities,
                max_cached_workflows=max_cached_workflows,
                build_id=None if deployment is not None else build_id,
                deployment_config=deployment_config,
                graceful_shutdown_timeout=grace,
                sticky_queue_schedule_to_start_timeout=sticky,
            )
        )
    return workers


async def serve_agent_flows(
    client: Client,
    flows: Sequence[AgentSessionFlow],
    *,
    stop: asyncio.Event | None = None,
    max_concurrent_activities: int = 100,
    max_cached_workflows: int = 1000,
    payloads: PayloadStore | None = None,
    build_id: str | None = None,
    deployment: WorkerDeployment | None = None,
    model_call_limits: ModelCallLimits | None = None,
    tracing: bool | None = None,
    shutdown_grace_period: timedelta | float | None = None,
) -> None:
    """Serve until `stop` is set (or forever), then shut the workers down gracefully:
    polling stops, and running steps get `shutdown_grace_period` (see `build_workers`)."""
    workers = build_workers(
        client,
        flows,
        max_concurrent_activities=max_concurrent_activities,
        max_cached_workflows=max_cached_workflows,
        payloads=payloads,
        build_id=build_id,
        deployment=deployment,
        model_call_limits=model_call_limits,
        tracing=tracing,
        shutdown_grace_period=shutdown_grace_period,
    )
    stop = stop or asyncio.Event()
    # Each worker's run enters its flows' runner scopes (`SessionflowPlugin.run_worker`).
    runs = [asyncio.create_task(worker.run()) for worker in workers]
    try:
        waiter = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait([waiter, *runs], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not waiter:
                task.result()
    finally:
        await asyncio.gather(*(worker.shutdown() for worker in workers), return_exceptions=True)
        for run in runs:
            run.cancel()


def run_agent_worker(
    flows: Sequence[AgentSessionFlow],
    *,
    server_address: str | None = None,
    namespace: str | None = None,
    max_concurrent_activities: int = 100,
    build_id: str | None = None,
    deployment: WorkerDeployment | None = None,
    model_call_limits: ModelCallLimits | None = None,
    tracing: bool | None = None,
    metrics_address: str | None = None,
    shutdown_grace_period: timedelta | float | None = None,
) -> None:
    """Blocking entry point for a worker process; SIGTERM and SIGINT shut it down gracefully
    (running steps get `shutdown_grace_period`, see `build_workers`), and the process then
    exits 0 (`exit_worker_process`): this function does not return after a clean stop.

    `server_address`, `namespace`, `tracing` and `metrics_address` are `connect`'s (their
    environment variables otherwise; the server's also Temporal's own configuration,
    ``TEMPORAL_ADDRESS`` or a ``temporal.toml`` profile).
    """
    grace = shutdown_grace(shutdown_grace_period)  # a bad value fails before connecting

    async def main() -> None:
        client = await connect(server_address, namespace, tracing=tracing, metrics_address=metrics_address)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def shut_down() -> None:
            if not stop.is_set():
                seconds = grace.total_seconds()
                print(f"sessionflow worker shutting down: running steps get {seconds:g} s", flush=True)
            stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, shut_down)
        print("sessionflow worker ready", flush=True)
        await serve_agent_flows(
            client,
            flows,
            stop=stop,
            max_concurrent_activities=max_concurrent_activities,
            build_id=build_id,
            deployment=deployment,
            model_call_limits=model_call_limits,
            shutdown_grace_period=grace,
        )
        print("sessionflow worker stopped", flush=True)

    asyncio.run(main())
    exit_worker_process(0)
