"""Serving flows: one Temporal worker per flow type, in this process."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import signal
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack, nullcontext
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.temporal._telemetry import worker_interceptors
from sessionflow.temporal.activities._model_call_gate import ModelCallGate
from sessionflow.temporal.activities._model_step import ModelStepActivities
from sessionflow.temporal.activities._step_context import StepContext
from sessionflow.temporal.activities._tool_step import ToolStepActivities
from sessionflow.temporal.activities._user_message_step import UserMessageActivities
from sessionflow.temporal.activities._verify_step import VerifyStepActivities
from sessionflow.temporal.client._connection import DEFAULT_SERVER_ADDRESS, connect, with_payload_store
from sessionflow.temporal.storage._payload_store import PayloadStore
from sessionflow.temporal.worker._deployment import BUILD_ID_ENV, WorkerDeployment
from sessionflow.temporal.worker._model_call_limits import ModelCallLimits
from sessionflow.temporal.worker._shutdown import SHUTDOWN_GRACE_ENV, exit_worker_process, shutdown_grace
from sessionflow.temporal.worker._sticky import sticky_queue_timeout
from sessionflow.temporal.workflow._workflow import AgentSessionWorkflow

__all__ = [
    "DEFAULT_SERVER_ADDRESS",
    "SHUTDOWN_GRACE_ENV",
    "WorkerDeployment",
    "build_workers",
    "connect",
    "default_build_id",
    "exit_worker_process",
    "run_agent_worker",
    "serve_agent_flows",
    "shutdown_grace",
]


def default_build_id() -> str:
    """``sessionflow-<version>``: the build ID a worker reports unless told its deployment's.

    Temporal's own default hashes the bytecode of every loaded module when a worker is
    built: 2-11 s with the agent SDKs imported (and every module compiled again where no
    ``.pyc`` is written), on every worker start and every SIGKILL recovery. Without worker
    versioning a build ID only names the code in the history (Temporal's reset by build
    ID), so a deploy that wants that passes its own, such as a commit hash.
    """
    try:
        return f"sessionflow-{importlib.metadata.version('sessionflow')}"
    except importlib.metadata.PackageNotFoundError:
        return "sessionflow-unknown"


def sandbox_runner() -> SandboxedWorkflowRunner:
    # The session model is pure and deterministic; passing it through skips re-importing it
    # for every workflow run and keeps one class identity for the data converter.
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("sessionflow")
    )


def flow_activities(
    flow: AgentSessionFlow, client: Client, model_calls: ModelCallGate | None = None
) -> list[Callable[..., Any]]:
    """The activities of one flow on one worker: each kind of step's, sharing one payload store."""
    steps = StepContext(flow, client)
    model = ModelStepActivities(steps, model_calls)
    tools = ToolStepActivities(steps)
    return [
        UserMessageActivities(steps).build_user_message,
        model.run_model,
        tools.call_tool,
        tools.call_single_attempt_tool,
        VerifyStepActivities(steps).verify_tool,
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
    """One worker per flow type. Activity slots bound the largest parallel tool batch.

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
    client = with_payload_store(client, payloads)
    model_calls = ModelCallGate(model_call_limits or ModelCallLimits.from_env())
    deployment = deployment or WorkerDeployment.from_environment()
    if deployment is not None and build_id is not None and build_id != deployment.build_id:
        raise ValueError(f"build_id {build_id!r} differs from the deployment's {deployment.build_id!r}")
    # A worker of a deployment reports its version instead of a plain build ID.
    deployment_config = deployment.worker_config() if deployment is not None else None
    if deployment is None:
        build_id = build_id or os.environ.get(BUILD_ID_ENV, "").strip() or default_build_id()
    interceptors = worker_interceptors(client, tracing)
    grace = shutdown_grace(shutdown_grace_period)
    sticky = sticky_queue_timeout()
    seen: set[str] = set()
    workers: list[Worker] = []
    for flow in flows:
        if flow.task_queue in seen:
            raise ValueError(f"flow type {flow.flow_type!r} is given twice")
        seen.add(flow.task_queue)
        workers.append(
            Worker(
                client,
                task_queue=flow.task_queue,
                workflows=[AgentSessionWorkflow],
                activities=flow_activities(flow, client, model_calls),
                workflow_runner=sandbox_runner(),
                max_concurrent_activities=max_concurrent_activities,
                max_concurrent_local_activities=max_concurrent_activities,
                max_cached_workflows=max_cached_workflows,
                build_id=None if deployment is not None else build_id,
                deployment_config=deployment_config,
                interceptors=interceptors,
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
    async with AsyncExitStack() as scopes:
        # Each runner's worker scope (`AgentFrameworkRunner.worker_scope`) outlives its workers.
        # A runner that implements the protocol without subclassing it may lack one.
        for flow in flows:
            scope = getattr(flow.runner, "worker_scope", None)
            await scopes.enter_async_context(scope() if scope is not None else nullcontext())
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

    `tracing` and `metrics_address` are `connect`'s (their environment variables otherwise).
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
