"""`SessionflowPlugin`: sessionflow as a Temporal plugin, for a plain `Client` and `Worker`.

Given to ``Client.connect(..., plugins=[...])``, it sets up the client's data converter
(the payload store and the codec, encryption included) and tracing. Every `Worker` built on
that client then serves the flows whose task queue is the worker's: the session workflow,
and one set of activities that finds each step's flow by its workflow type (`FlowRouter`).
A worker on a queue no flow names is left as it was, so the same client can build workers
of other applications.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, nullcontext
from typing import Any, cast

from temporalio.client import ClientConfig
from temporalio.converter import DataConverter
from temporalio.plugin import SimplePlugin
from temporalio.worker import Worker, WorkerConfig
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from sessionflow._environment import read_env
from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.temporal._telemetry import tracing_enabled, tracing_interceptor, worker_interceptors
from sessionflow.temporal.activities._flow_router import FlowRouter
from sessionflow.temporal.activities._model_call_gate import ModelCallGate
from sessionflow.temporal.client._connection import with_payload_store
from sessionflow.temporal.storage._payload_store import CodecSetting, PayloadStore, build_data_converter
from sessionflow.temporal.worker._deployment import BUILD_ID_ENV
from sessionflow.temporal.worker._model_call_limits import ModelCallLimits
from sessionflow.temporal.worker._sticky import (
    DEFAULT_STICKY_QUEUE_TIMEOUT,
    STICKY_QUEUE_TIMEOUT_ENV,
    sticky_queue_timeout,
)
from sessionflow.temporal.workflow._workflow import AgentSessionWorkflow

__all__ = ["PLUGIN_NAME", "SessionflowPlugin", "default_build_id", "sandbox_runner"]

PLUGIN_NAME = "sessionflow.SessionflowPlugin"


def default_build_id() -> str:
    """``sessionflow-<version>``: the build ID a worker reports unless told its deployment's.

    Temporal's own default hashes the bytecode of every loaded module when a worker is
    built: 2-11 s with the agent SDKs imported (and every module compiled again where no
    ``.pyc`` is written), on every worker start and every SIGKILL recovery. Without worker
    versioning a build ID only names the code in the history (Temporal's reset by build
    ID), so a deploy that wants that passes its own, such as a commit hash.
    """
    import importlib.metadata

    try:
        return f"sessionflow-{importlib.metadata.version('sessionflow')}"
    except importlib.metadata.PackageNotFoundError:
        return "sessionflow-unknown"


def sandbox_runner(restrictions: SandboxRestrictions | None = None) -> SandboxedWorkflowRunner:
    # The session model is pure and deterministic; passing it through skips re-importing it
    # for every workflow run and keeps one class identity for the data converter.
    base = restrictions or SandboxRestrictions.default
    return SandboxedWorkflowRunner(restrictions=base.with_passthrough_modules("sessionflow"))


class SessionflowPlugin(SimplePlugin):
    """Serve `flows` from plain Temporal workers, and talk to their sessions from a plain client.

    ```python
    plugin = SessionflowPlugin(flows=[support, research])
    client = await Client.connect("localhost:7233", plugins=[plugin])
    await Worker(client, task_queue="agents").run()  # both flows, if both name "agents"
    ```
    """

    def __init__(
        self,
        flows: Sequence[AgentSessionFlow] = (),
        *,
        payloads: PayloadStore | None = None,
        codec: CodecSetting = "environment",
        tracing: bool | None = None,
        model_call_limits: ModelCallLimits | None = None,
    ) -> None:
        """Args:
        flows: the flows the workers serve; a worker serves those on its task queue.
        payloads: where payloads go by reference; by default ``$SESSIONFLOW_PAYLOADS``, else
            ``~/.sessionflow/payloads`` (as `connect`). Clients and workers of one session
            must name the same store.
        codec: a payload codec; by default the encryption codec of the environment's key
            ring, else none (as `connect`). None switches it off.
        tracing: trace client calls and every step through OpenTelemetry; by default
            ``$SESSIONFLOW_TRACING``.
        model_call_limits: how many model calls the workers of this plugin run at once
            (by default ``$SESSIONFLOW_MODEL_CALL_LIMITS``; see `ModelCallLimits`).
        """
        seen: set[str] = set()
        for flow in flows:
            if flow.flow_type in seen:
                raise ValueError(f"flow type {flow.flow_type!r} is given twice")
            seen.add(flow.flow_type)
        super().__init__(PLUGIN_NAME)  # pyright: ignore[reportUnknownMemberType]
        self.flows = list(flows)
        self._payloads = payloads
        self._codec: CodecSetting = codec
        self._tracing = tracing
        self._model_call_limits = model_call_limits
        self._model_calls: ModelCallGate | None = None

    def configure_client(self, config: ClientConfig) -> ClientConfig:
        values = cast(dict[str, Any], config)
        converter: DataConverter = values.get("data_converter") or DataConverter.default
        if converter.external_storage is None or self._payloads is not None:
            # Temporal's default converter becomes sessionflow's (compact dataclass JSON,
            # which any Temporal converter reads); a converter of the user's own is kept.
            base = None if converter is DataConverter.default else converter
            values["data_converter"] = build_data_converter(
                self._payloads or PayloadStore.from_environment(), base, codec=self._codec
            )
        if tracing_enabled(self._tracing):
            interceptors: list[Any] = list(values.get("interceptors") or [])
            if not any(type(i).__name__ == "TracingInterceptor" for i in interceptors):
                values["interceptors"] = [*interceptors, tracing_interceptor()]
        return config

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        # Read and written as a plain mapping: WorkerConfig's keys are all optional.
        values = cast(dict[str, Any], config)
        flows = self.flows_of(values.get("task_queue") or "")
        if not flows:
            return config
        client = with_payload_store(values["client"], self._payloads)
        values["client"] = client
        if self._model_calls is None:
            # One gate for every worker of this plugin: the limits are the process's.
            self._model_calls = ModelCallGate(self._model_call_limits or ModelCallLimits.from_env())
        router = FlowRouter(flows, client, self._model_calls)
        values["activities"] = [*(values.get("activities") or []), *router.activities()]
        values["workflows"] = [*(values.get("workflows") or []), AgentSessionWorkflow]
        runner = values.get("workflow_runner")
        if runner is None or isinstance(runner, SandboxedWorkflowRunner):
            values["workflow_runner"] = sandbox_runner(runner.restrictions if runner is not None else None)
        values["interceptors"] = [
            *(values.get("interceptors") or []),
            *worker_interceptors(client, self._tracing),
        ]
        if not (
            values.get("build_id") or values.get("deployment_config") or values.get("use_worker_versioning")
        ):
            values["build_id"] = read_env(BUILD_ID_ENV, "").strip() or default_build_id()
        sticky = values.get("sticky_queue_schedule_to_start_timeout")
        if sticky in (None, DEFAULT_STICKY_QUEUE_TIMEOUT) and read_env(STICKY_QUEUE_TIMEOUT_ENV):
            values["sticky_queue_schedule_to_start_timeout"] = sticky_queue_timeout()
        return config

    def flows_of(self, task_queue: str) -> list[AgentSessionFlow]:
        """The flows whose sessions run on `task_queue`."""
        return [flow for flow in self.flows if flow.task_queue == task_queue]

    async def run_worker(self, worker: Worker, next: Callable[[Worker], Awaitable[None]]) -> None:
        async with self._runner_scopes(self.flows_of(worker.task_queue)):
            await next(worker)

    @asynccontextmanager
    async def _runner_scopes(self, flows: Sequence[AgentSessionFlow]) -> AsyncGenerator[None]:
        # Each runner's worker scope (`AgentFrameworkRunner.worker_scope`) outlives its worker.
        # A runner that implements the protocol without subclassing it may lack one.
        async with AsyncExitStack() as scopes:
            for flow in flows:
                scope: Any = getattr(flow.runner, "worker_scope", None)
                await scopes.enter_async_context(scope() if scope is not None else nullcontext())
            yield
