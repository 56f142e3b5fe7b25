"""`sessionflow connectors`: every configured MCP server's tools, with effects and approval rules.

Needs no Temporal server: it lists the servers the way a chat does at startup and prints,
per server, the tools the agent would get (effect, approval), the servers that did not
answer and why. Exits with 1 when a ``required`` server did not answer.

`--json` prints one object for scripts: ``{"config": <file or null>, "connectors":
[{"name", "server", "required", "answered", "error", "listed", "enabled", "tools":
[{"name", "effect", "approval", "description", "labels"}]}], "answered": <count>,
"missing_required": [<names>]}``; a tool another one shadows has effect and approval null.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from sessionflow.kit import ToolSpec
from sessionflow_cli._connectors import ConnectorListing, Connectors, connector_labels
from sessionflow_cli._errors import EXIT_FAILURE, EXIT_OK
from sessionflow_cli._flow_builder import gather_tools
from sessionflow_cli._logging import log_to_file
from sessionflow_cli._policy import own_policy
from sessionflow_cli.config import CliConfig, TurnConfig, resolve_turn

if TYPE_CHECKING:
    from sessionflow.mcp import McpTool

__all__ = ["approval_rule", "run_connectors"]

_DESCRIPTION_WIDTH = 70


def approval_rule(spec: ToolSpec, config: CliConfig) -> str:
    """When a call of the tool waits for approval: its floor, then ``approval.always``."""
    if spec.name in config.approval_always:
        return "every call (approval.always)"
    return "every call" if own_policy(spec).is_approval_required else "no"


def _effect(spec: ToolSpec) -> str:
    return own_policy(spec).effect.value.replace("_", " ")


def _description(text: str | None) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= _DESCRIPTION_WIDTH else line[: _DESCRIPTION_WIDTH - 1] + "…"


def _heading(listing: ConnectorListing) -> str:
    connector = listing.connector
    flags = " (required)" if connector.required else ""
    head = f"{listing.server.describe()}{flags}"
    if not listing.answered:
        return f"{head}: did not answer: {listing.error}"
    count = f"{len(listing.tools)} tool{'s' if len(listing.tools) != 1 else ''}"
    if connector.enabled is not None:
        count += f" of {listing.listed}, enabled: {', '.join(connector.enabled)}"
    return f"{head}: {count}"


async def run_connectors(config: CliConfig, *, out: Console, as_json: bool = False) -> int:
    where = str(config.path) if config.path is not None else "the defaults (no configuration file)"
    if not config.connectors and as_json:
        _print_json(out, config, [], {}, [])
        return EXIT_OK
    if not config.connectors:
        out.print(
            f"No connectors in {where}. Add MCP servers under `connectors:` "
            "({name, command, args, env} or {name, url, headers}).",
            highlight=False,
        )
        return EXIT_OK
    log_to_file()
    notes: list[str] = []

    def resolve_settings(settings: Mapping[str, Any]) -> TurnConfig:
        return resolve_turn(config, settings)

    connectors = Connectors(config, notice=notes.append, resolve_settings=resolve_settings)
    try:
        listings = await connectors.list_all()
        specs = {spec.name: spec for spec in gather_tools(config, connectors)}
    finally:
        await connectors.aclose()
    missing = connectors.missing_required()
    if as_json:
        _print_json(out, config, listings, specs, missing)
        return EXIT_FAILURE if missing else EXIT_OK
    out.print(f"Connectors of {where}:", highlight=False)
    for listing in listings:
        out.print("")
        out.print(_heading(listing), highlight=False, markup=False, soft_wrap=True)
        if not listing.tools:
            continue
        table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
        for column in ("tool", "effect", "approval"):
            table.add_column(column, no_wrap=True)
        table.add_column("description", overflow="fold")
        for tool in listing.tools:
            spec = specs.get(tool.name)
            labels = connector_labels(tool)
            about = _description(tool.description or tool.title)
            if labels:
                about = f"[{' / '.join(labels)}] {about}"
            if spec is None:
                cells = (tool.name, "-", "-", "left out: another tool has this name")
            else:
                cells = (tool.name, _effect(spec), approval_rule(spec, config), about)
            table.add_row(*(Text(cell) for cell in cells))
        out.print(Padding(table, (0, 0, 0, 2)))
    answered = sum(1 for listing in listings if listing.answered)
    out.print("")
    out.print(f"{answered} of {len(listings)} connectors answered.", highlight=False)
    if missing:
        names = ", ".join(repr(listing.connector.name) for listing in missing)
        out.print(f"Required connectors that did not answer: {names}; a chat would stop.", highlight=False)
        return EXIT_FAILURE
    return EXIT_OK


def _print_json(
    out: Console,
    config: CliConfig,
    listings: Sequence[ConnectorListing],
    specs: Mapping[str, ToolSpec],
    missing: Sequence[ConnectorListing],
) -> None:
    def tool_object(tool: McpTool) -> dict[str, Any]:
        spec = specs.get(tool.name)
        return {
            "name": tool.name,
            "effect": _effect(spec) if spec is not None else None,
            "approval": approval_rule(spec, config) if spec is not None else None,
            "description": (tool.description or tool.title or "").strip(),
            "labels": list(connector_labels(tool)),
        }

    document = {
        "config": str(config.path) if config.path is not None else None,
        "connectors": [
            {
                "name": listing.connector.name,
                "server": listing.server.describe(),
                "required": listing.connector.required,
                "answered": listing.answered,
                "error": listing.error,
                "listed": listing.listed,
                "enabled": list(listing.connector.enabled) if listing.connector.enabled is not None else None,
                "tools": [tool_object(tool) for tool in listing.tools],
            }
            for listing in listings
        ],
        "answered": sum(1 for listing in listings if listing.answered),
        "missing_required": [listing.connector.name for listing in missing],
    }
    out.file.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
