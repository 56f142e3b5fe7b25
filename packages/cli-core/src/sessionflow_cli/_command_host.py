"""One command run: the engine, and the worker of the chosen framework's flow.

The worker is the resident one (`sessionflow_cli._resident`), started in the background
when none with this configuration runs, and the command only a client of it; or, with
``--in-process-worker`` or ``SESSIONFLOW_RESIDENT_WORKER=0``, one in this process that
stops with the command.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console

from sessionflow import AgentSessionClient
from sessionflow.kit import FrameworkSpec
from sessionflow_cli._errors import RuntimeFailure
from sessionflow_cli._flow_types import StartEnvironment, session_flow_type
from sessionflow_cli._hedged_client import HedgedSessionClient
from sessionflow_cli._logging import log_to_file
from sessionflow_cli._payloads import open_payload_store
from sessionflow_cli._resident import (
    ResidentState,
    config_hash,
    idle_timeout,
    live_resident,
    lock_flow_type,
    log_tail,
    pid_alive,
    resident_enabled,
    spawn_resident,
    stop_resident,
    touch_lease,
)
from sessionflow_cli._socket_deltas import SocketDeltaTransport, socket_path
from sessionflow_cli._temporal_server import Engine, connect_engine
from sessionflow_cli.config import CliConfig, TurnConfig, data_home, resolve_turn, server_data_dir

if TYPE_CHECKING:
    # The flow is built only by a command that serves it itself (`--in-process-worker`): a
    # client of the resident worker imports neither the framework nor the tools.
    from sessionflow_cli._connectors import Connectors
    from sessionflow_cli._flow_builder import Harness

__all__ = ["Runtime", "open_runtime"]

_WORKER_STOP_TIMEOUT = 10.0
_POLL = 0.25
"""Seconds between two looks at the resident worker's process."""
_LEASE_EVERY = 30.0
_MAX_RESTARTS = 5
T = TypeVar("T")


@dataclass
class Runtime:
    """Everything a chat needs; the worker serves the flow until the runtime closes."""

    spec: FrameworkSpec
    config: CliConfig
    environment: StartEnvironment
    flow_type: str
    engine: Engine
    sessions: AgentSessionClient
    worker: asyncio.Task[None]
    """The in-process worker, or the watch over the resident one: it ends only when serving fails."""
    harness: Harness | None = None
    connectors: Connectors | None = None
    resident: ResidentState | None = None

    def check_worker(self) -> None:
        """Raise when the worker stopped serving (it never stops on its own)."""
        if self.worker.done():
            error = None if self.worker.cancelled() else self.worker.exception()
            if isinstance(error, RuntimeFailure):
                raise error
            raise RuntimeFailure(f"the worker of this command stopped: {error!r}")

    async def watch(self, work: Awaitable[T]) -> T:
        """Await `work`, failing at once if the worker stops meanwhile."""
        task = asyncio.ensure_future(work)
        try:
            await asyncio.wait({task, self.worker}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                self.check_worker()
            return await task
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


@contextlib.asynccontextmanager
async def open_runtime(
    spec: FrameworkSpec,
    config: CliConfig,
    environment: StartEnvironment,
    *,
    info: Console,
    in_process: bool = False,
    config_given: str | None = None,
    model_given: str | None = None,
) -> AsyncGenerator[Runtime]:
    """Connect (starting the embedded server if needed), then use the resident worker (starting
    it if needed), or serve the flow in this process (`in_process`, ``SESSIONFLOW_RESIDENT_WORKER=0``).

    `config_given` and `model_given` are the command's ``-c`` and ``-m``: a resident worker
    started now gets them, so it resolves the same configuration.

    Raises:
        RuntimeFailure: The server cannot be used, a ``required`` connector does not answer, or
            the resident worker exits before it is ready.
    """
    log_to_file()
    flow_type = session_flow_type(spec.name, environment)
    payloads = await open_payload_store(config.payloads)
    engine = await connect_engine(config.server, payloads)
    _announce(engine, info)
    key = config_hash(spec.name, config)
    if not resident_enabled(in_process):
        # Never two configurations on one task queue: a resident worker of another one stops.
        await asyncio.to_thread(_retire_other, flow_type, key)
        async with _in_process(spec, config, environment, flow_type, engine, info) as runtime:
            yield runtime
        return
    watch = _ResidentWatch(
        flow_type=flow_type,
        key=key,
        framework=spec.name,
        workspace=environment.workspace,
        idle=idle_timeout(config),
        config_given=config_given,
        model_given=model_given,
        info=info,
    )
    await asyncio.to_thread(watch.ensure, adopt_any=False)
    task = asyncio.create_task(watch.run())
    try:
        yield Runtime(
            spec=spec,
            config=config,
            environment=environment,
            flow_type=flow_type,
            engine=engine,
            sessions=HedgedSessionClient(
                engine.client,
                flow_type,
                delta_transport=SocketDeltaTransport(socket_path(data_home(), flow_type)),
            ),
            worker=task,
            resident=watch.state,
        )
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        with contextlib.suppress(OSError):
            touch_lease(flow_type)  # the idle time counts from the end of this command


def _retire_other(flow_type: str, key: str) -> None:
    with lock_flow_type(flow_type):
        running = live_resident(flow_type)
        if running is not None and running.config_hash != key:
            stop_resident(running)


class _ResidentWatch:
    """The resident worker this command uses: found or started, then watched while the command runs.

    Each look touches the lease now and then (the worker does not idle out under a command
    using it). A worker that dies after it was ready (SIGKILL, a crash, its idle timeout
    racing this command) is replaced, so the turn being followed goes on in the next one; a
    worker that dies before it was ready fails the command with its log."""

    def __init__(
        self,
        *,
        flow_type: str,
        key: str,
        framework: str,
        workspace: str,
        idle: float,
        config_given: str | None,
        model_given: str | None,
        info: Console,
    ) -> None:
        self.flow_type = flow_type
        self.key = key
        self.framework = framework
        self.workspace = workspace
        self.idle = idle
        self.config_given = config_given
        self.model_given = model_given
        self.info = info
        self.state: ResidentState | None = None
        self.ready = False
        self.cwd = Path.cwd()

    def ensure(self, *, adopt_any: bool) -> None:
        """Use the running worker of this flow type, or start one (under the flow type's lock)."""
        with lock_flow_type(self.flow_type):
            running = live_resident(self.flow_type)
            if running is not None and (adopt_any or running.config_hash == self.key):
                touch_lease(self.flow_type)
                self.state, self.ready = running, running.ready
                self._note(f"Using the resident worker (pid {running.pid}, config {running.config_hash}).")
                return
            if running is not None:
                self._note(
                    f"The configuration changed ({running.config_hash} -> {self.key}): stopping the resident "
                    f"worker (pid {running.pid})."
                )
                stop_resident(running)
            state = spawn_resident(
                flow_type=self.flow_type,
                config_hash=self.key,
                framework=self.framework,
                workspace=self.workspace,
                idle=self.idle,
                config_given=self.config_given,
                model_given=self.model_given,
                cwd=self.cwd,
            )
        self.state, self.ready = state, False
        self._note(
            f"Started the resident worker (pid {state.pid}, config {state.config_hash}); it stops after "
            f"{self.idle:g} s idle. `sessionflow server status` lists it."
        )

    def _note(self, line: str) -> None:
        self.info.print(line, markup=False, highlight=False, soft_wrap=True)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        lease_every = min(_LEASE_EVERY, self.idle / 3)
        touched = loop.time()
        restarts = 0
        while True:
            await asyncio.sleep(min(_POLL, lease_every))
            state = self.state
            assert state is not None
            if loop.time() - touched >= lease_every:
                touch_lease(self.flow_type)
                touched = loop.time()
            if pid_alive(state.pid):
                if not self.ready:
                    current = live_resident(self.flow_type)
                    self.ready = current is not None and current.pid == state.pid and current.ready
                continue
            if not self.ready:
                raise RuntimeFailure(
                    f"the resident worker (pid {state.pid}) exited before it was ready; the end of its log "
                    f"{state.log}:\n{log_tail(self.flow_type)}"
                )
            restarts += 1
            if restarts > _MAX_RESTARTS:
                raise RuntimeFailure(f"the resident worker stopped {restarts} times; see its log {state.log}")
            self._note(f"The resident worker (pid {state.pid}) stopped; the turn goes on in the next one.")
            await asyncio.to_thread(self.ensure, adopt_any=True)
            touched = loop.time()


@contextlib.asynccontextmanager
async def _in_process(
    spec: FrameworkSpec,
    config: CliConfig,
    environment: StartEnvironment,
    flow_type: str,
    engine: Engine,
    info: Console,
) -> AsyncGenerator[Runtime]:
    from sessionflow import serve_agent_flows
    from sessionflow_cli._connectors import open_connectors
    from sessionflow_cli._flow_builder import build_harness
    from sessionflow_cli._local_tools import close_local_tools

    def notice(line: str) -> None:
        info.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)

    def resolve_settings(settings: Mapping[str, Any]) -> TurnConfig:
        return resolve_turn(config, settings)

    connectors = await open_connectors(config, notice=notice, resolve_settings=resolve_settings)
    try:
        harness = build_harness(spec, config, flow_type, connectors)
    except BaseException:
        await connectors.aclose()
        raise
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(engine.client, [harness.flow], stop=stop))
    try:
        yield Runtime(
            spec=spec,
            config=config,
            environment=environment,
            flow_type=flow_type,
            engine=engine,
            harness=harness,
            sessions=HedgedSessionClient(engine.client, harness.flow),
            worker=worker,
            connectors=connectors,
        )
    finally:
        stop.set()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(worker, _WORKER_STOP_TIMEOUT)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(close_local_tools(), _WORKER_STOP_TIMEOUT)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(connectors.aclose(), _WORKER_STOP_TIMEOUT)
        harness.close()


def _announce(engine: Engine, info: Console) -> None:
    if engine.started:
        info.print(
            f"Started the Temporal dev server at {engine.address} (data, log and state in "
            f"{server_data_dir()}). It keeps running after this command; stop it with "
            "`sessionflow server stop`.",
            highlight=False,
        )
    elif engine.embedded:
        info.print(f"Using the Temporal dev server at {engine.address}.", highlight=False)
    else:
        info.print(
            f"Using the Temporal server at {engine.address} (namespace {engine.namespace}).", highlight=False
        )
    if engine.ui_address is not None:
        info.print(f"Temporal Web UI: {engine.ui_address}", highlight=False)
