"""`McpToolSource`: MCP servers' tools as neutral `ToolSpec`s, each call a tool step."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
    CallToolResult,
    InputRequiredResult,
    RequestParamsMeta,
    Tool,
)

from sessionflow.kit._media_sink import SAVED_MEDIA, hand_over_saved_media
from sessionflow.kit._tool_specs import ToolSpec, effect_from_mcp_annotations
from sessionflow.mcp._config import META_EXPECTED_TOOL, META_IDEMPOTENCY_KEY, McpServerConfig
from sessionflow.mcp._errors import McpTransportError, McpUnavailableError, describe_error
from sessionflow.mcp._pool import McpConnectionPool, shared_pool
from sessionflow.mcp._results import default_media_dir, render_content
from sessionflow.mcp._verify import META_VERIFIES, verify_result, verify_tool_name
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.tools import ToolEffect, ToolExecutionError
from sessionflow.session.verify import EffectUnknown, VerifyCall, VerifyResult

__all__ = ["AvailabilityListener", "McpTool", "McpToolSource", "input_schema_hash"]

logger = logging.getLogger("sessionflow.mcp")

AvailabilityListener = Callable[[str, bool, str | None], None]
"""Called as ``listener(server, available, reason)`` when a server's availability changes.

``available`` is False with a one-line ``reason`` when a server stops answering (its
tools are left out), and True with ``reason=None`` when it answers again.
"""

DEFAULT_LIST_TIMEOUT = 30.0
_MAX_PAGES = 100

# JSON-RPC errors that mean the server refused the request before running the tool.
_REFUSED_CODES = frozenset(
    {
        PARSE_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        INVALID_PARAMS,
        HEADER_MISMATCH,
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
        URL_ELICITATION_REQUIRED,
    }
)


def input_schema_hash(schema: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the schema as canonical JSON (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class McpTool:
    """One tool as an MCP server lists it.

    Attributes:
        server: The configured name of the server that lists it.
        name: The tool's MCP name (without any ``tool_prefix``).
        title: Display title, from the tool or its annotations.
        description: The tool's description.
        input_schema: JSON schema of the arguments.
        annotations: The tool's annotations with their wire (camelCase) names, such as
            ``readOnlyHint``; None when the server sent none.
        meta: The tool's ``_meta`` object, or None.
        schema_hash: `input_schema_hash` of ``input_schema``: the identity a call checks.
    """

    server: str
    name: str
    title: str | None
    description: str | None
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None
    schema_hash: str

    @property
    def effect(self) -> ToolEffect | None:
        """The effect the annotations promise (`effect_from_mcp_annotations`)."""
        return effect_from_mcp_annotations(self.annotations)

    @classmethod
    def from_mcp(cls, server: str, tool: Tool) -> McpTool:
        annotations = (
            tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
            if tool.annotations
            else None
        )
        title = tool.title or (annotations or {}).get("title")
        return cls(
            server=server,
            name=tool.name,
            title=title if isinstance(title, str) else None,
            description=tool.description,
            input_schema=tool.input_schema,
            annotations=annotations,
            meta=dict(tool.meta) if tool.meta is not None else None,
            schema_hash=input_schema_hash(tool.input_schema),
        )


class McpToolSource:
    """Tools of MCP servers (stdio or streamable HTTP) as framework-neutral `ToolSpec`s.

    Each spec's handler runs inside the session's tool step. Before it sends
    ``tools/call`` it lists the server again and checks that the tool still has the
    identity the spec was made from (same server, name and input schema); otherwise the
    call fails with `ToolExecutionError` and nothing is sent. The request's ``_meta``
    carries the call's idempotency key (`META_IDEMPOTENCY_KEY`) and that expected identity
    (`META_EXPECTED_TOOL`).

    Connections come from a pool (by default the process-wide `shared_pool`), so a
    worker keeps one connection per server open while it is in use.

    Args:
        servers: The servers, in priority order: when two offer the same tool name, the
            first keeps it (set ``tool_prefix`` to offer both).
        media_dir: Where images and other media of tool results are saved; defaults to
            ``~/.sessionflow/media``.
        pool: The connection pool; defaults to `shared_pool()`.
        on_availability: Called when a server stops or starts answering again; see
            `AvailabilityListener`. More listeners: `add_availability_listener`.
        list_timeout: Seconds one listing may take, connecting included.
        call_timeout: Seconds one ``tools/call`` may wait for its answer; None waits as
            long as the tool step lets it (its start-to-close timeout).
    """

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        *,
        media_dir: Path | str | None = None,
        pool: McpConnectionPool | None = None,
        on_availability: AvailabilityListener | None = None,
        list_timeout: float = DEFAULT_LIST_TIMEOUT,
        call_timeout: float | None = None,
    ) -> None:
        names = [server.name for server in servers]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"MCP server names must be unique; repeated: {', '.join(duplicates)}")
        self.servers: tuple[McpServerConfig, ...] = tuple(servers)
        self.media_dir = Path(media_dir) if media_dir is not None else default_media_dir()
        self.list_timeout = list_timeout
        self.call_timeout = call_timeout
        self._pool = pool
        self._by_name = {server.name: server for server in self.servers}
        self._availability: dict[str, bool] = {}
        self._listeners: list[AvailabilityListener] = []
        if on_availability is not None:
            self._listeners.append(on_availability)

    @property
    def pool(self) -> McpConnectionPool:
        return self._pool if self._pool is not None else shared_pool()

    # ------------------------------------------------------------------ availability

    def add_availability_listener(self, listener: AvailabilityListener) -> Callable[[], None]:
        """Add a listener; returns a function that removes it again."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def availability(self) -> dict[str, bool | None]:
        """Each server's last known availability; None when it was not contacted yet."""
        return {server.name: self._availability.get(server.name) for server in self.servers}

    def _report(self, server: str, available: bool, reason: str | None = None) -> None:
        previous = self._availability.get(server)
        self._availability[server] = available
        if previous is available or (previous is None and available):
            return  # no change, or the first contact succeeded: nothing to announce
        if available:
            logger.info("MCP server %r is available again", server)
        else:
            logger.warning("MCP server %r is unavailable: %s", server, reason)
        for listener in list(self._listeners):
            try:
                listener(server, available, None if available else reason)
            except Exception:
                logger.exception("MCP availability listener %r failed", listener)

    # ------------------------------------------------------------------ listing

    async def list_tools(self) -> list[ToolSpec]:
        """List every server now and return the tools they offer, as `ToolSpec`s.

        A server that does not answer is left out and reported unavailable (see
        `AvailabilityListener`); listing again later brings its tools back.

        Raises:
            McpUnavailableError: A server marked ``required`` did not answer.
        """
        listings = await asyncio.gather(
            *(self._list_for_specs(server) for server in self.servers), return_exceptions=True
        )
        specs: list[ToolSpec] = []
        owners: dict[str, str] = {}
        for server, listing in zip(self.servers, listings, strict=True):
            if isinstance(listing, BaseException):
                if isinstance(listing, McpUnavailableError) and not server.required:
                    continue
                raise listing
            for tool in listing:
                spec_name = server.tool_prefix + tool.name
                if spec_name in owners:
                    logger.warning(
                        "MCP servers %r and %r both offer a tool named %r; keeping %r's (set tool_prefix to offer both)",
                        owners[spec_name],
                        server.name,
                        spec_name,
                        owners[spec_name],
                    )
                    continue
                spec = self._spec_or_none(tool)
                if spec is not None:
                    owners[spec_name] = server.name
                    specs.append(spec)
        return specs

    def list_tools_sync(self) -> list[ToolSpec]:
        """`list_tools` from synchronous code, on a private event loop in another thread.

        Works whether or not the caller runs an event loop. The connections the listing
        opened are closed before it returns; the specs' handlers open their own.
        """
        result: list[list[ToolSpec]] = []
        failure: list[BaseException] = []

        async def run() -> None:
            try:
                result.append(await self.list_tools())
            finally:
                await self.pool.close(list(self.servers))

        def target() -> None:
            try:
                asyncio.run(run())
            except BaseException as error:
                failure.append(error)

        thread = threading.Thread(target=target, name="sessionflow-mcp-list", daemon=True)
        thread.start()
        thread.join()
        if failure:
            raise failure[0]
        return result[0]

    async def list_server_tools(self, server: str, *, include_disabled: bool = False) -> list[McpTool]:
        """The tools one server lists now, with annotations and ``_meta``.

        Args:
            server: The server's configured name.
            include_disabled: Also return tools the server's ``enabled`` filter hides.

        Raises:
            KeyError: No server has that name.
            McpUnavailableError: The server did not answer.
        """
        config = self._by_name[server]
        tools = await self._listing(config)
        return tools if include_disabled else [tool for tool in tools if config.offers(tool.name)]

    async def _list_for_specs(self, config: McpServerConfig) -> list[McpTool]:
        return [tool for tool in await self._listing(config) if config.offers(tool.name)]

    async def _listing(self, config: McpServerConfig) -> list[McpTool]:
        """List the server, reconnecting once if its connection broke; report availability."""
        error: BaseException | None = None
        for _ in range(2):
            try:
                async with self.pool.connection(config) as client:
                    async with asyncio.timeout(self.list_timeout):
                        tools = await _list_all(client)
            except McpUnavailableError as unavailable:
                error = unavailable
                break  # it could not even connect: a second try now will not do better
            except Exception as failure:
                error = failure  # the pool dropped the connection; try once on a new one
                continue
            self._report(config.name, True)
            return [McpTool.from_mcp(config.name, tool) for tool in tools]
        assert error is not None
        reason = error.reason if isinstance(error, McpUnavailableError) else describe_error(error)
        self._report(config.name, False, reason)
        raise McpUnavailableError(config.name, reason) from error

    # ------------------------------------------------------------------ specs and calls

    def tool_spec(self, tool: McpTool) -> ToolSpec:
        """The `ToolSpec` for a listed tool; its handler checks this exact identity.

        ``effect`` stays None; ``mcp_annotations`` holds the annotations only when
        ``readOnlyHint`` or ``idempotentHint`` is true, so a tool that promises neither
        gets the session's default effect (an explicit `ToolPolicy` always wins).

        Raises:
            KeyError: The tool's server is not one of this source's servers.
            ValueError: The input schema is not a JSON schema of type ``object``.
        """
        config = self._by_name[tool.server]

        async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
            return await self._call(config, tool, arguments, invocation)

        verify_tool = verify_tool_name(tool.meta)

        async def verify(arguments: dict[str, Any], call: VerifyCall) -> VerifyResult:
            assert verify_tool is not None
            return await self._verify(config, tool, verify_tool, arguments, call)

        return ToolSpec(
            name=config.tool_prefix + tool.name,
            description=tool.description or tool.title or "",
            parameters=tool.input_schema,
            effect=None,
            policy=None,
            handler=handler,
            mcp_annotations=tool.annotations if tool.effect is not None else None,
            verify=verify if verify_tool is not None else None,
        )

    def _spec_or_none(self, tool: McpTool) -> ToolSpec | None:
        try:
            return self.tool_spec(tool)
        except ValueError as error:
            logger.warning("MCP server %r: leaving out tool %r: %s", tool.server, tool.name, error)
            return None

    async def _call(
        self, config: McpServerConfig, tool: McpTool, arguments: dict[str, Any], invocation: ToolInvocation
    ) -> str:
        not_sent = "The call was not sent."
        try:
            current = {listed.name: listed for listed in await self._listing(config)}.get(tool.name)
        except McpUnavailableError as error:
            raise ToolExecutionError(f"{error.message}. {not_sent}") from None
        if current is None:
            raise ToolExecutionError(
                f"MCP server {config.name!r} no longer offers tool {tool.name!r}. {not_sent}"
            )
        if current.schema_hash != tool.schema_hash:
            raise ToolExecutionError(
                f"Tool {tool.name!r} of MCP server {config.name!r} changed its input schema since it "
                f"was offered ({tool.schema_hash} -> {current.schema_hash}). {not_sent}"
            )
        # RequestParamsMeta is an open map: these keys travel as they are.
        meta = cast(
            RequestParamsMeta,
            {
                META_IDEMPOTENCY_KEY: invocation.idempotency_key,
                META_EXPECTED_TOOL: {"name": tool.name, "inputSchemaHash": tool.schema_hash},
            },
        )
        try:
            async with self.pool.connection(config) as client:
                result = await client.session.call_tool(
                    tool.name,
                    arguments,
                    read_timeout_seconds=self.call_timeout,
                    meta=meta,
                    allow_input_required=True,
                    allow_claimed=True,
                )
        except McpUnavailableError as error:
            self._report(config.name, False, error.reason)
            raise ToolExecutionError(f"{error.message}. {not_sent}") from None
        except MCPError as error:
            if error.code in _REFUSED_CODES:
                raise ToolExecutionError(
                    f"MCP server {config.name!r} refused the call: {error.message}"
                ) from None
            raise McpTransportError(
                config.name, tool.name, f"MCP error {error.code}: {error.message}"
            ) from error
        except Exception as error:
            raise McpTransportError(config.name, tool.name, describe_error(error)) from error
        if isinstance(result, InputRequiredResult):
            raise ToolExecutionError(
                f"Tool {tool.name!r} of MCP server {config.name!r} asked for user input "
                "(elicitation or sampling), which sessionflow does not provide."
            )
        if not isinstance(result, CallToolResult):
            raise ToolExecutionError(
                f"Tool {tool.name!r} of MCP server {config.name!r} returned an unsupported result "
                f"({type(result).__name__})."
            )
        saved: list[tuple[Path, str]] = []
        token = SAVED_MEDIA.set(saved)  # the render's thread sees it: to_thread copies the context
        try:
            text = await asyncio.to_thread(render_content, result, self.media_dir)
        finally:
            SAVED_MEDIA.reset(token)
        await hand_over_saved_media(saved)
        if result.is_error:
            raise ToolExecutionError(
                text or f"Tool {tool.name!r} of MCP server {config.name!r} reported an error."
            )
        return text

    async def _verify(
        self,
        config: McpServerConfig,
        tool: McpTool,
        verify_tool: str,
        arguments: dict[str, Any],
        call: VerifyCall,
    ) -> VerifyResult:
        """Ask the verify tool the write's ``_meta`` names (the protocol: `sessionflow.mcp._verify`)."""
        meta = cast(RequestParamsMeta, {META_IDEMPOTENCY_KEY: call.idempotency_key, META_VERIFIES: tool.name})
        try:
            async with self.pool.connection(config) as client:
                result = await client.session.call_tool(
                    verify_tool, arguments, read_timeout_seconds=self.call_timeout, meta=meta
                )
        except MCPError as error:
            # The server answered and refused: asking again will not do better.
            return EffectUnknown(
                reason=f"verify tool {verify_tool!r} of MCP server {config.name!r} refused the call: {error.message}"
            )
        return verify_result(result, verify_tool, config.name)

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        """Close this event loop's connections to this source's servers."""
        await self.pool.close(list(self.servers))

    async def __aenter__(self) -> McpToolSource:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def _list_all(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise RuntimeError(f"tools/list returned more than {_MAX_PAGES} pages")
