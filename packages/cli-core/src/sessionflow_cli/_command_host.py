"""One command run: the engine, the flow of the chosen framework, and its worker in this process."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from rich.console import Console

from sessionflow import AgentSessionClient, serve_agent_flows
from sessionflow.kit import FrameworkSpec
from sessionflow_cli._connectors import Connectors, open_connectors
from sessionflow_cli._errors import RuntimeFailure
from sessionflow_cli._flow_builder import Harness, build_harness
from sessionflow_cli._flow_types import StartEnvironment, session_flow_type
from sessionflow_cli._local_tools import close_local_tools
from sessionflow_cli._logging import log_to_file
from sessionflow_cli._payloads import open_payload_store
from sessionflow_cli._temporal_server import Engine, connect_engine
from sessionflow_cli.config import CliConfig, TurnConfig, resolve_turn, server_data_dir

__all__ = ["Runtime", "open_runtime"]

_WORKER_STOP_TIMEOUT = 10.0
T = TypeVar("T")


@dataclass
class Runtime:
    """Everything a chat needs; the worker serves the flow until the runtime closes."""

    spec: FrameworkSpec
    config: CliConfig
    environment: StartEnvironment
    flow_type: str
    engine: Engine
    harness: Harness
    sessions: AgentSessionClient
    worker: asyncio.Task[None]
    connectors: Connectors

    def check_worker(self) -> None:
        """Raise when the worker stopped serving (it never stops on its own)."""
        if self.worker.done():
            error = None if self.worker.cancelled() else self.worker.exception()
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
    spec: FrameworkSpec, config: CliConfig, environment: StartEnvironment, *, info: Console
) -> AsyncGenerator[Runtime]:
    """Connect (starting the embedded server if needed), list the connectors, build the flow, and serve it.

    Raises:
        RuntimeFailure: The server cannot be used, or a ``required`` connector does not answer.
    """
    log_to_file()
    flow_type = session_flow_type(spec.name, environment)
    payloads = await open_payload_store(config.payloads)
    engine = await connect_engine(config.server, payloads)
    _announce(engine, info)

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
            sessions=AgentSessionClient(engine.client, harness.flow),
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
