"""`sessionflow sessions`: this command's sessions (its flow type), most recent first."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from sessionflow.kit import FrameworkSpec
from sessionflow.temporal import FrontendState
from sessionflow_cli._command_host import open_runtime
from sessionflow_cli._errors import EXIT_OK
from sessionflow_cli._flow_types import StartEnvironment
from sessionflow_cli._sessions import SessionFilters, list_sessions
from sessionflow_cli._temporal_server import probe_auto, uses_embedded
from sessionflow_cli.config import CliConfig

__all__ = ["run_sessions"]


async def run_sessions(
    spec: FrameworkSpec,
    config: CliConfig,
    environment: StartEnvironment,
    *,
    out: Console,
    info: Console,
    filters: SessionFilters | None = None,
) -> int:
    if uses_embedded(config.server):
        answer = await probe_auto(config.server)
        if answer.state is FrontendState.UNREACHABLE:
            out.print(f"No Temporal server answers on {answer.address}, so there are no sessions to list.")
            return EXIT_OK
    async with open_runtime(spec, config, environment, info=info) as runtime:
        rows = await list_sessions(runtime.sessions, filters)
        if not rows:
            out.print(f"No sessions of flow type {runtime.flow_type} yet.", highlight=False)
            return EXIT_OK
        table = Table(title=f"Sessions of {runtime.flow_type}", title_justify="left")
        for column in ("session", "status", "last activity", "turns"):
            table.add_column(column, overflow="fold")
        for row in rows:
            when = row.last_activity.astimezone().strftime("%Y-%m-%d %H:%M:%S") if row.last_activity else "?"
            table.add_row(row.session_id, row.status, when, "?" if row.turns is None else str(row.turns))
        out.print(table)
    return EXIT_OK
