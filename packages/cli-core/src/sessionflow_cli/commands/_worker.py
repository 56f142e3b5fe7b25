"""`sessionflow worker`: serve the command's flow as a resident worker process, one per host.

It builds the flow the chat command serves in-process (same framework, configuration,
tools and connectors), serves it until SIGTERM or SIGINT, then shuts down gracefully:
polling stops, running steps get the grace period, and steps still running after it fail
retryably so another worker takes them (a write that cannot be retried ends
``outcome_unknown``).

The flow type is the chat's on this host unless ``--flow-type`` names one: workers on
several hosts serve one flow type only when they are given the same name.

``--resident`` is the worker `chat` and `-p` start in the background and reuse
(`sessionflow_cli._resident`): it records itself in ``~/.sessionflow/workers``, replaces a
resident worker of its flow type that runs another configuration, and stops on its own once
idle for ``worker.idle_timeout`` (no step running, no command using it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from rich.console import Console

from sessionflow import serve_agent_flows
from sessionflow.kit import FrameworkSpec
from sessionflow.temporal import shutdown_grace
from sessionflow_cli._connectors import open_connectors
from sessionflow_cli._errors import EXIT_OK, UsageError
from sessionflow_cli._flow_builder import build_harness
from sessionflow_cli._flow_types import StartEnvironment, session_flow_type
from sessionflow_cli._local_tools import close_local_tools
from sessionflow_cli._logging import log_to_file
from sessionflow_cli._payloads import open_payload_store
from sessionflow_cli._resident import (
    ActivityMeter,
    ResidentState,
    config_hash,
    idle_seconds,
    idle_timeout,
    live_resident,
    lock_flow_type,
    remove_state,
    stop_resident,
    touch_lease,
    write_state,
)
from sessionflow_cli._socket_deltas import DeltaSocketServer, socket_path
from sessionflow_cli._temporal_server import connect_engine
from sessionflow_cli.config import CliConfig, TurnConfig, data_home, resolve_turn

__all__ = ["READY_LINE", "run_worker"]

READY_LINE = "sessionflow worker ready"
_CLOSE_TIMEOUT = 10.0


def _say(console: Console, line: str) -> None:
    console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.file.flush()


async def _idle_out(record: ResidentState, meter: ActivityMeter, stop: asyncio.Event, out: Console) -> None:
    """Set `stop` once the lease is older than the idle timeout and no step runs."""
    timeout = record.idle_timeout
    check = min(max(timeout / 4, 0.05), 5.0)
    while not stop.is_set():
        await asyncio.sleep(check)
        if meter.busy:
            touch_lease(record.flow_type)  # a long step keeps it in use
            continue
        idle = idle_seconds(record.flow_type)
        if idle >= timeout:
            _say(out, f"sessionflow worker idle for {idle:.1f} s (timeout {timeout:g} s): stopping")
            # Unlisted at once: a command from now on starts a new worker instead of using this one.
            remove_state(record.flow_type, record.pid)
            stop.set()


async def run_worker(
    spec: FrameworkSpec,
    config: CliConfig,
    environment: StartEnvironment,
    *,
    flow_type: str | None,
    grace: float | None,
    out: Console,
    info: Console,
    resident: bool = False,
) -> int:
    try:
        period = shutdown_grace(grace)  # the option, else $SESSIONFLOW_SHUTDOWN_GRACE, else the default
    except ValueError as error:
        raise UsageError(str(error)) from None
    if resident and flow_type is not None:
        raise UsageError("--resident serves the chat's flow type: it takes no --flow-type")
    log_to_file()
    name = flow_type or session_flow_type(spec.name, environment)
    record: ResidentState | None = None
    if resident:
        record = await asyncio.to_thread(_claim, spec, config, environment, name)
        if record is None:
            _say(out, "sessionflow worker: a resident worker with this configuration is running already")
            return EXIT_OK
    try:
        return await _serve(spec, config, name, period, out=out, info=info, record=record)
    finally:
        if record is not None:
            remove_state(name, record.pid)


def _claim(
    spec: FrameworkSpec, config: CliConfig, environment: StartEnvironment, name: str
) -> ResidentState | None:
    """Record this process as the resident worker of `name`, or None when an equal one runs.

    A resident worker of another configuration is stopped first (and waited for): two
    configurations never serve one task queue."""
    key = config_hash(spec.name, config)
    with lock_flow_type(name):
        running = live_resident(name)
        if running is not None and running.pid != os.getpid():
            if running.config_hash == key:
                return None
            stop_resident(running)
        record = ResidentState(
            pid=os.getpid(),
            flow_type=name,
            config_hash=key,
            framework=spec.name,
            workspace=environment.workspace,
            idle_timeout=idle_timeout(config),
            started_at=running.started_at
            if running is not None and running.pid == os.getpid()
            else time.time(),
        )
        write_state(record)
        touch_lease(name)
        return record


async def _serve(
    spec: FrameworkSpec,
    config: CliConfig,
    name: str,
    period: timedelta,
    *,
    out: Console,
    info: Console,
    record: ResidentState | None,
) -> int:
    payloads = await open_payload_store(config.payloads)
    engine = await connect_engine(config.server, payloads)

    def notice(line: str) -> None:
        info.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)

    def resolve_settings(settings: Mapping[str, Any]) -> TurnConfig:
        return resolve_turn(config, settings)

    connectors = await open_connectors(config, notice=notice, resolve_settings=resolve_settings)
    harness = None
    deltas: DeltaSocketServer | None = None
    try:
        if record is not None:
            # The commands using it are other processes: their live deltas go over a socket.
            path = socket_path(data_home(), name)
            if path is not None:
                deltas = DeltaSocketServer(path)
                await deltas.start()
        harness = build_harness(spec, config, name, connectors, delta_transport=deltas)
        meter = harness.runner.meter = ActivityMeter()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def shut_down() -> None:
            if not stop.is_set():
                _say(out, f"sessionflow worker shutting down: running steps get {period.total_seconds():g} s")
            stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, shut_down)
        serving = asyncio.create_task(
            serve_agent_flows(engine.client, [harness.flow], stop=stop, shutdown_grace_period=period)
        )
        _say(
            out,
            f"{READY_LINE}: flow type {name} on {engine.address} (namespace {engine.namespace}), "
            f"framework {spec.name}, model {config.model}, shutdown grace {period.total_seconds():g} s"
            + (
                f", resident (config {record.config_hash}, idle timeout {record.idle_timeout:g} s)"
                if record
                else ""
            ),
        )
        watcher: asyncio.Task[None] | None = None
        if record is not None:
            write_state(replace(record, ready=True))
            watcher = asyncio.create_task(_idle_out(record, meter, stop, out))
        try:
            await serving
        finally:
            if watcher is not None:
                watcher.cancel()
        _say(out, "sessionflow worker stopped")
        return EXIT_OK
    finally:
        if deltas is not None:
            await deltas.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(close_local_tools(), _CLOSE_TIMEOUT)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(connectors.aclose(), _CLOSE_TIMEOUT)
        if harness is not None:
            harness.close()
