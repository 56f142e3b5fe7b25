"""The MCP servers of ``connectors:``: listed once at startup, their tools given to the framework.

Each entry becomes one `McpServerConfig` of a single `McpToolSource`, with the command's
media folder for images in tool results and a connection pool whose stdio servers write
their standard error to ``~/.sessionflow/connectors.log``. At startup every server is
listed (``tools/list``) at once:

- a server that answers offers the tools its ``enabled`` entry lets through;
- a server that does not answer is left out with a warning and the reason, and the run
  goes on without its tools; with ``required: true`` the command stops (exit code 1).

``enabled`` matches a tool by its MCP name, or by the connector, connection or operation
a server puts in the tool's ``_meta`` (`CONNECTOR_META_KEYS`); entries may use ``*`` and
``?`` as in shell patterns. A tool's effect comes from its annotations (`readOnlyHint`,
then `idempotentHint`; neither is unclassified) and is its floor, like a local tool's.

Every call checks its turn again on the worker that runs it: a connector that the turn's
session settings leave out refuses the call (`tool <name> is switched off for this
session`), and nothing is sent to the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fnmatch
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sessionflow.home import open_private, private_dir
from sessionflow.kit import ToolExecutionError, ToolInvocation, ToolSpec
from sessionflow_cli._errors import RuntimeFailure, UsageError
from sessionflow_cli.config import CliConfig, ConnectorConfig, TurnConfig, state_home

# `sessionflow.mcp` loads the MCP SDK (~0.8 s): it is imported only when the configuration
# has connectors, so a chat without any starts without it.
if TYPE_CHECKING:
    from sessionflow.mcp import McpServerConfig, McpTool, McpToolSource

__all__ = [
    "CONNECTOR_META_KEYS",
    "ConnectorListing",
    "Connectors",
    "Notice",
    "connector_log_file",
    "connector_server",
    "open_connectors",
    "tool_is_enabled",
]

CONNECTOR_META_KEYS = ("io.sessionflow/connector", "io.sessionflow/connection", "io.sessionflow/operation")
"""Keys of a tool's ``_meta`` that ``enabled`` matches besides its name: the connector (such
as ``github``), the connection (an account or workspace of it) and the operation."""

Notice = Callable[[str], None]
"""Prints one line for the person at the terminal."""

ResolveSettings = Callable[[Mapping[str, Any]], TurnConfig]


def connector_log_file() -> Path:
    """Where stdio connectors write their standard error."""
    return state_home() / "connectors.log"


def connector_server(connector: ConnectorConfig) -> McpServerConfig:
    """The `McpServerConfig` of one ``connectors:`` entry.

    Raises:
        UsageError: The core refuses the entry.
    """
    from sessionflow.mcp import McpServerConfig

    data: dict[str, Any] = {"required": connector.required}
    if connector.command is not None:
        data["command"] = connector.command
        data["args"] = list(connector.args)
        if connector.env:
            data["env"] = dict(connector.env)
    if connector.url is not None:
        data["url"] = connector.url
        if connector.headers:
            data["headers"] = dict(connector.headers)
    if connector.enabled is not None:
        data["enabled"] = list(connector.enabled)
    try:
        return McpServerConfig.from_mapping(connector.name, data)
    except ValueError as error:
        raise UsageError(f"connector {connector.name!r}: {error}") from None


def connector_labels(tool: McpTool) -> tuple[str, ...]:
    """The connector, connection and operation a server put in the tool's ``_meta`` (text values)."""
    meta = tool.meta or {}
    return tuple(value for key in CONNECTOR_META_KEYS if isinstance(value := meta.get(key), str) and value)


def tool_is_enabled(enabled: Sequence[str] | None, tool: McpTool) -> bool:
    """Whether an ``enabled`` list lets the tool through: by name or by a `connector_labels` value."""
    if enabled is None:
        return True
    candidates = (tool.name, *connector_labels(tool))
    return any(fnmatch.fnmatchcase(value, pattern) for pattern in enabled for value in candidates)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConnectorListing:
    """What one server answered at startup.

    Attributes:
        connector: The ``connectors:`` entry.
        server: Its `McpServerConfig`.
        tools: The tools it offers that ``enabled`` lets through, in the server's order.
        listed: How many tools the server listed in all.
        error: Why it did not answer; None when it answered.
    """

    connector: ConnectorConfig
    server: McpServerConfig
    tools: tuple[McpTool, ...] = ()
    listed: int = 0
    error: str | None = None

    @property
    def answered(self) -> bool:
        return self.error is None


class Connectors:
    """The connectors of one command run: the tool source, its startup listing, and the specs.

    Use `open_connectors`; close with `aclose` on the event loop that listed them (their
    connections belong to it, and the worker's tool calls reuse them).
    """

    def __init__(
        self,
        config: CliConfig,
        *,
        notice: Notice,
        resolve_settings: ResolveSettings,
        log_path: Path | None = None,
    ) -> None:
        self.config = config
        self.notice = notice
        self.resolve_settings = resolve_settings
        self.log_path = log_path or connector_log_file()
        self.listings: list[ConnectorListing] = []
        self._log: TextIO | None = None
        self._started = False
        self.source: McpToolSource | None = None
        servers = [connector_server(connector) for connector in config.connectors]
        if servers:
            from sessionflow.mcp import McpConnectionPool, McpToolSource

            self._log = _open_log(self.log_path)
            self.source = McpToolSource(
                servers,
                media_dir=config.media_folder,
                pool=McpConnectionPool(server_stderr=self._log),
                on_availability=self._availability,
            )

    def _availability(self, server: str, available: bool, reason: str | None) -> None:
        if not self._started:
            return  # the startup listing reports on its own
        if available:
            self.notice(f"[connector] {server} answers again")
        else:
            self.notice(f"[connector] {server} does not answer ({reason}); its tools fail until it does")

    async def list_all(self) -> list[ConnectorListing]:
        """List every server now (concurrently); `listings` keeps the answers."""
        source = self.source
        if source is None:
            self.listings = []
            return self.listings
        from sessionflow.mcp import McpUnavailableError

        async def one(connector: ConnectorConfig, server: McpServerConfig) -> ConnectorListing:
            try:
                tools = await source.list_server_tools(server.name, include_disabled=True)
            except McpUnavailableError as error:
                return ConnectorListing(connector=connector, server=server, error=error.reason)
            offered = tuple(tool for tool in tools if tool_is_enabled(connector.enabled, tool))
            return ConnectorListing(connector=connector, server=server, tools=offered, listed=len(tools))

        self.listings = list(
            await asyncio.gather(
                *(one(c, s) for c, s in zip(self.config.connectors, source.servers, strict=True))
            )
        )
        self._started = True
        return self.listings

    def where_output(self, listing: ConnectorListing) -> str:
        """Where a stdio server's standard error went, as a note for messages ("" for HTTP)."""
        return f" (server output: {self.log_path})" if listing.server.transport == "stdio" else ""

    def missing_required(self) -> list[ConnectorListing]:
        return [listing for listing in self.listings if not listing.answered and listing.connector.required]

    def warn_about_startup(self) -> None:
        """One line per server that did not answer, and per ``enabled`` list that matched nothing."""
        for listing in self.listings:
            name = listing.connector.name
            if not listing.answered:
                self.notice(
                    f"warning: connector {name!r} does not answer ({listing.error}); this run goes on "
                    f"without its tools{self.where_output(listing)}"
                )
            elif not listing.tools and listing.connector.enabled is not None:
                self.notice(
                    f"warning: no tool of connector {name!r} matches its `enabled` list "
                    f"({', '.join(listing.connector.enabled)})"
                )

    def tool_specs(self, taken: Collection[str] = ()) -> list[ToolSpec]:
        """The `ToolSpec`s of the offered tools; a name already `taken` (or offered by an
        earlier connector) is left out with a warning."""
        source = self.source
        if source is None:
            return []
        specs: list[ToolSpec] = []
        owners: dict[str, str] = {name: "" for name in taken}
        for listing in self.listings:
            for tool in listing.tools:
                owner = owners.get(tool.name)
                if owner is not None:
                    other = f"a tool of connector {owner!r}" if owner else "a built-in tool"
                    self.notice(
                        f"warning: tool {tool.name!r} of connector {listing.connector.name!r} is left out: "
                        f"{other} has that name"
                    )
                    continue
                try:
                    spec = source.tool_spec(tool)
                except ValueError as error:
                    self.notice(
                        f"warning: tool {tool.name!r} of connector {listing.connector.name!r} is left out: {error}"
                    )
                    continue
                owners[tool.name] = listing.connector.name
                specs.append(self._checked(spec, listing.connector.name))
        return specs

    def _checked(self, spec: ToolSpec, connector: str) -> ToolSpec:
        """The spec with a handler that refuses calls of a turn that switched the connector off."""
        resolve = self.resolve_settings
        name = spec.name

        async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
            turn = resolve(invocation.session_settings)
            if all(c.name != connector for c in turn.connectors):
                raise ToolExecutionError(f"tool {name} is switched off for this session")
            return await spec.call(arguments, invocation)

        return dataclasses.replace(spec, handler=handler)

    async def aclose(self) -> None:
        """Close the connections of this event loop and the log file."""
        try:
            if self.source is not None:
                await self.source.aclose()
        finally:
            if self._log is not None:
                self._log.close()
                self._log = None


def _open_log(path: Path) -> TextIO:
    private_dir(path.parent)
    log = os.fdopen(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "a", encoding="utf-8")
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    log.write(f"--- sessionflow (pid {os.getpid()}) at {stamp}: starting the connectors' servers\n")
    log.flush()
    return log


async def open_connectors(
    config: CliConfig, *, notice: Notice, resolve_settings: ResolveSettings
) -> Connectors:
    """List every configured server, warn about those that do not answer, and return them.

    Raises:
        RuntimeFailure: A ``required`` server did not answer (exit code 1).
        UsageError: The core refuses an entry.
    """
    connectors = Connectors(config, notice=notice, resolve_settings=resolve_settings)
    try:
        await connectors.list_all()
        missing = connectors.missing_required()
        if missing:
            first = missing[0]
            raise RuntimeFailure(
                f"connector {first.connector.name!r} is required but does not answer "
                f"({first.error}){connectors.where_output(first)}"
            )
    except BaseException:
        with contextlib.suppress(Exception):
            await connectors.aclose()
        raise
    connectors.warn_about_startup()
    return connectors
