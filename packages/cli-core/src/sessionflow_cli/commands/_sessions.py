"""`sessionflow sessions`: this command's sessions (its flow type), most recent first.

`--json` prints one object for scripts: ``{"flow_type": ..., "server": ..., "sessions":
[{"session_id", "status", "open", "last_activity" (ISO 8601, UTC), "turns"}]}``.
"""

from __future__ import annotations

import json
from datetime import UTC

from rich.console import Console
from rich.table import Table

from sessionflow.kit import FrameworkSpec
from sessionflow.temporal import FrontendState
from sessionflow_cli._command_host import open_runtime
from sessionflow_cli._errors import EXIT_OK
from sessionflow_cli._flow_types import StartEnvironment, session_flow_type
from sessionflow_cli._sessions import SessionFilters, SessionRow, list_sessions
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
    as_json: bool = False,
) -> int:
    if uses_embedded(config.server):
        answer = await probe_auto(config.server)
        if answer.state is FrontendState.UNREACHABLE:
            if as_json:
                info.print(f"No Temporal server answers on {answer.address}.", highlight=False)
                flow_type = session_flow_type(spec.name, environment)
                _print_json(out, flow_type, answer.address, [])
                return EXIT_OK
            out.print(f"No Temporal server answers on {answer.address}, so there are no sessions to list.")
            return EXIT_OK
    async with open_runtime(spec, config, environment, info=info) as runtime:
        rows = await list_sessions(runtime.sessions, filters)
        if as_json:
            _print_json(out, runtime.flow_type, runtime.engine.address, rows)
            return EXIT_OK
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


def _print_json(out: Console, flow_type: str, server: str, rows: list[SessionRow]) -> None:
    listed = [
        {
            "session_id": row.session_id,
            "status": row.status,
            "open": row.open,
            "last_activity": row.last_activity.astimezone(UTC).isoformat() if row.last_activity else None,
            "turns": row.turns,
        }
        for row in rows
    ]
    document = {"flow_type": flow_type, "server": server, "sessions": listed}
    out.file.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
