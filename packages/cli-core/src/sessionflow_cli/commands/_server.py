"""`sessionflow server status|start|stop`: the embedded Temporal dev server of ``~/.sessionflow/server``,
and the resident workers of ``~/.sessionflow/workers`` (`status` lists them, `stop` stops them too)."""

from __future__ import annotations

import asyncio
import time

from rich.console import Console

from sessionflow.temporal import DevServer, DevServerHandle, FrontendState, stop_dev_server
from sessionflow_cli._errors import EXIT_OK, UsageError
from sessionflow_cli._resident import idle_seconds, list_residents, stop_all_residents
from sessionflow_cli._temporal_server import probe_auto, start_embedded
from sessionflow_cli.config import CliConfig, server_data_dir

__all__ = ["run_server"]


def _describe(handle: DevServerHandle, info: Console) -> None:
    info.print(f"  address   {handle.address} (namespace {handle.namespace})", highlight=False)
    if handle.ui_address is not None:
        info.print(f"  web UI    {handle.ui_address}", highlight=False)
    info.print(f"  pid       {handle.pid}, started {handle.started_at}", highlight=False)
    info.print(f"  data      {handle.data_dir}", highlight=False)
    info.print(f"  log       {handle.log_file}", highlight=False)


def _residents(out: Console) -> None:
    residents = list_residents()
    if not residents:
        out.print("No resident worker is running.", highlight=False)
        return
    out.print(f"Resident workers ({len(residents)}):", highlight=False)
    for state in residents:
        idle = idle_seconds(state.flow_type)
        up = time.time() - state.started_at
        out.print(
            f"  pid {state.pid}  config {state.config_hash}  {state.framework}  idle {idle:.0f} s "
            f"(stops at {state.idle_timeout:g} s)  up {up:.0f} s{'' if state.ready else '  starting'}",
            highlight=False,
        )
        out.print(f"    flow type {state.flow_type}, workspace {state.workspace}", highlight=False)
        out.print(f"    log {state.log}", highlight=False)


def run_server(action: str, config: CliConfig, out: Console) -> int:
    data_dir = server_data_dir()
    if action == "status":
        handle = DevServer.status(data_dir)
        if handle is not None:
            out.print("The embedded Temporal dev server is running:", highlight=False)
            _describe(handle, out)
        else:
            answer = asyncio.run(probe_auto(config.server))
            out.print(f"The embedded Temporal dev server is not running ({data_dir}).", highlight=False)
            if answer.state is not FrontendState.UNREACHABLE:
                out.print(f"On {answer.address}, {answer.state.description}.", highlight=False)
        _residents(out)
        return EXIT_OK
    if action == "start":
        if not config.server.is_auto:
            raise UsageError(
                f"the configuration names the server {config.server.address}; `server start` is for `server: auto`"
            )
        handle = asyncio.run(start_embedded(config.server))
        verb = "was already running" if handle.reused else "started"
        out.print(f"The embedded Temporal dev server {verb}:", highlight=False)
        _describe(handle, out)
        out.print("Stop it with `sessionflow server stop`.", highlight=False)
        return EXIT_OK
    # The resident workers first: they would only wait for a server that is gone.
    workers = stop_all_residents()
    if workers:
        out.print(f"Stopped {workers} resident worker{'s' if workers > 1 else ''}.", highlight=False)
    stopped = stop_dev_server(data_dir)
    out.print(
        "Stopped the embedded Temporal dev server." if stopped else "No embedded dev server was running."
    )
    return EXIT_OK
