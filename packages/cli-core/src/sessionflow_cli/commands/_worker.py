"""`sessionflow worker`: serve the command's flow as a resident worker process, one per host.

It builds the flow the chat command serves in-process (same framework, configuration,
tools and connectors), serves it until SIGTERM or SIGINT, then shuts down gracefully:
polling stops, running steps get the grace period, and steps still running after it fail
retryably so another worker takes them (a write that cannot be retried ends
``outcome_unknown``).

The flow type is the chat's on this host unless ``--flow-type`` names one: workers on
several hosts serve one flow type only when they are given the same name.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Mapping
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
from sessionflow_cli._temporal_server import connect_engine
from sessionflow_cli.config import CliConfig, TurnConfig, resolve_turn

__all__ = ["READY_LINE", "run_worker"]

READY_LINE = "sessionflow worker ready"
_CLOSE_TIMEOUT = 10.0


def _say(console: Console, line: str) -> None:
    console.print(line, markup=False, highlight=False, soft_wrap=True)


async def run_worker(
    spec: FrameworkSpec,
    config: CliConfig,
    environment: StartEnvironment,
    *,
    flow_type: str | None,
    grace: float | None,
    out: Console,
    info: Console,
) -> int:
    try:
        period = shutdown_grace(grace)  # the option, else $SESSIONFLOW_SHUTDOWN_GRACE, else the default
    except ValueError as error:
        raise UsageError(str(error)) from None
    log_to_file()
    name = flow_type or session_flow_type(spec.name, environment)
    payloads = await open_payload_store(config.payloads)
    engine = await connect_engine(config.server, payloads)

    def notice(line: str) -> None:
        info.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)

    def resolve_settings(settings: Mapping[str, Any]) -> TurnConfig:
        return resolve_turn(config, settings)

    connectors = await open_connectors(config, notice=notice, resolve_settings=resolve_settings)
    harness = None
    try:
        harness = build_harness(spec, config, name, connectors)
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
            f"framework {spec.name}, model {config.model}, shutdown grace {period.total_seconds():g} s",
        )
        await serving
        _say(out, "sessionflow worker stopped")
        return EXIT_OK
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(close_local_tools(), _CLOSE_TIMEOUT)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(connectors.aclose(), _CLOSE_TIMEOUT)
        if harness is not None:
            harness.close()
