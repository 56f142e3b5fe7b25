"""The tools of one session: Claude Code's own, custom SDK MCP tools, and sessionflow tool specs.

In a model step the CLI sees every tool with its real schema and annotations, but the
in-process MCP servers behind the custom tools and the tool specs are replaced by stubs
that never run a handler (every call is deferred; a resumed step writes the recorded
result into the transcript itself). The real handlers run in the tool step
(`ToolSet.execute`).

Names: a custom tool keeps its SDK name, ``mcp__<server>__<tool>``, in what the model
sees and in the session (policies and approval lists take that name or the bare tool
name). The CLI runs with ``CLAUDE_AGENT_SDK_MCP_NO_PREFIX=1`` so that the tool specs keep
their own names; the stubs therefore list the custom tools under their full names.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import ClaudeAgentOptions, McpSdkServerConfig, SdkMcpTool
from mcp import Client
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from sessionflow import ToolEffect, ToolPolicy, UnsupportedOptionError

# The tool activity sets the current invocation; the in-process MCP servers run in tasks
# started inside that context, so custom SDK MCP tools read it too.
from sessionflow.kit import (
    ToolExecutionError,
    ToolInvocation,
    ToolSpec,
    declared_effect,
    declared_policy,
    effect_from_mcp_annotations,
)
from sessionflow_claude_agent_sdk._builtin_tools import (
    BUILTIN_TOOL_EFFECTS,
    BUILTIN_TOOL_NAMES,
    BUILTIN_TOOL_POLICIES,
    run_builtin_tool,
)
from sessionflow_claude_agent_sdk._settings import filesystem_agents
from sessionflow_local_tools import ShellSandbox, with_floor

AGENT_TOOL = "Agent"
"""Claude Code's tool that starts a sub-agent (``Task`` in older versions); see `_subagents`."""

__all__ = [
    "TOOL_SPEC_SERVER",
    "ToolSet",
    "check_tool_options",
    "discover_tools",
    "offers_agent_tool",
    "sdk_tool_name",
]

TOOL_SPEC_SERVER = "sessionflow"
"""Name of the in-process MCP server that carries the sessionflow tool specs."""

MAX_RESULT_SIZE_CHARS = 50_000_000
"""Claude Code keeps a tool result this large inline instead of saving it to a file."""

_NOT_RUN = "sessionflow did not run this call here: every tool call runs in its own durable step."


def sdk_tool_name(server: str, tool: str) -> str:
    """The name Claude Code gives a tool of an SDK MCP server."""
    return f"mcp__{server}__{tool}"


@dataclass(frozen=True, kw_only=True)
class _CustomTool:
    server: str
    tool: Tool
    """As the server lists it (its own, bare name)."""
    instance: Server[Any]
    marked: object = None
    """What carries the tool's `sessionflow.effect` mark: its `SdkMcpTool` or that tool's
    handler (see `_sdk_tool_definitions`); None when it has no mark."""


@dataclass(frozen=True, kw_only=True)
class ToolSet:
    """Every tool a session offers, by the name the model calls it."""

    builtins: tuple[str, ...]
    specs: Mapping[str, ToolSpec] = field(default_factory=lambda: {})
    agent_tool: bool = False
    """Claude Code's ``Agent`` tool is offered: the session runs its sub-agents (`_subagents`)."""
    custom: Mapping[str, _CustomTool] = field(default_factory=lambda: {})

    def is_builtin(self, name: str) -> bool:
        return name in self.builtins

    @property
    def cli_tools(self) -> list[str]:
        """Claude Code's tools the CLI offers the model."""
        return [*self.builtins, *((AGENT_TOOL,) if self.agent_tool else ())]

    def is_mcp(self, name: str) -> bool:
        """A tool behind an in-process MCP server (a custom tool or a tool spec)."""
        return name in self.specs or name in self.custom

    def framework_effect(self, name: str) -> ToolEffect | None:
        """The effect the tool itself declares; None leaves it to the session's default."""
        if name in self.builtins:
            return BUILTIN_TOOL_EFFECTS[name]
        if name == AGENT_TOOL and self.agent_tool:
            # It only starts the sub-agent; each of the sub-agent's calls has its own policy.
            return ToolEffect.READ
        spec = self.specs.get(name)
        if spec is not None:
            return spec.framework_effect
        custom = self.custom.get(name)
        if custom is not None and custom.marked is not None:
            marked = declared_effect(custom.marked)
            if marked is not None:
                return marked
        if custom is not None and custom.tool.annotations is not None:
            hints = custom.tool.annotations.model_dump(by_alias=True, exclude_none=True)
            return effect_from_mcp_annotations(hints)
        return None

    def declared_policy(self, name: str) -> ToolPolicy | None:
        """The whole policy a custom tool is marked with (`sessionflow.effect(..., policy=...)`), if any."""
        custom = self.custom.get(name)
        return declared_policy(custom.marked) if custom is not None and custom.marked is not None else None

    def aliases(self, name: str) -> tuple[str, ...]:
        """Other names a policy or an approval list may use for the tool: a custom tool's bare name."""
        custom = self.custom.get(name)
        return (custom.tool.name,) if custom is not None else ()

    def has_floor(self, name: str) -> bool:
        return name in self.builtins

    def floored(self, name: str, policy: ToolPolicy) -> ToolPolicy:
        """``policy`` raised to the floor of a Claude Code tool (`Write` and `Edit` always ask)."""
        if name in self.builtins:
            return with_floor(BUILTIN_TOOL_POLICIES[name], policy)
        return policy

    def stub_servers(self) -> dict[str, McpSdkServerConfig]:
        """In-process MCP servers with the real tool definitions and handlers that run nothing."""
        by_server: dict[str, list[Tool]] = {}
        for name, custom in self.custom.items():
            listed = custom.tool.model_copy(update={"name": name})
            by_server.setdefault(custom.server, []).append(_inline_results(listed))
        if self.specs:
            by_server[TOOL_SPEC_SERVER] = [_inline_results(_spec_tool(spec)) for spec in self.specs.values()]
        return {name: _stub_server(name, tools) for name, tools in by_server.items()}

    async def execute(
        self,
        name: str,
        arguments: dict[str, Any],
        invocation: ToolInvocation,
        cwd: Path,
        *,
        sandbox: ShellSandbox | None = None,
    ) -> str:
        """Run one call for real and return the text the model sees; ``sandbox`` confines `Bash`.

        Raises:
            ToolExecutionError: A failure the model should see (including an unknown tool).
        """
        if name in self.builtins:
            return await run_builtin_tool(name, arguments, cwd, sandbox=sandbox)
        spec = self.specs.get(name)
        if spec is not None:
            return await spec.call(arguments, invocation)
        custom = self.custom.get(name)
        if custom is not None:
            return await _call_custom(custom, arguments)
        raise ToolExecutionError(f"unknown tool {name!r}")


async def discover_tools(options: ClaudeAgentOptions, tool_sources: Sequence[ToolSpec]) -> ToolSet:
    """The tools `options` and `tool_sources` give a session.

    Raises:
        UnsupportedOptionError: A built-in the adapter cannot run, an MCP server that is
            not an in-process SDK server, or two tools with one name.
    """
    builtins = check_tool_options(options, tool_sources)
    agent_tool = offers_agent_tool(options)
    seen: dict[str, str] = {
        name: "Claude Code" for name in (*builtins, *((AGENT_TOOL,) if agent_tool else ()))
    }
    specs: dict[str, ToolSpec] = {}
    for spec in tool_sources:
        _claim(seen, spec.name, "the tool sources", "tool_sources")
        specs[spec.name] = spec
    custom: dict[str, _CustomTool] = {}
    servers = cast(dict[str, Any], options.mcp_servers)
    for server_name, config in servers.items():
        instance = cast(McpSdkServerConfig, config)["instance"]
        definitions = _sdk_tool_definitions(instance)
        for tool in await _list_tools(instance):
            name = sdk_tool_name(server_name, tool.name)
            _claim(seen, name, f"MCP server {server_name!r}", f"mcp_servers[{server_name!r}]")
            custom[name] = _CustomTool(
                server=server_name, tool=tool, instance=instance, marked=_marked(definitions.get(tool.name))
            )
    return ToolSet(builtins=builtins, specs=specs, custom=custom, agent_tool=agent_tool)


_SEARCH_DEPTH = 6
"""How deep `_sdk_tool_definitions` looks: server, handler table, handler entry, handler,
the SDK's tool runner, its table of tools (mcp 1.x has one level fewer)."""


def _sdk_tool_definitions(instance: object) -> dict[str, SdkMcpTool[Any]]:
    """The `SdkMcpTool`s a server of `create_sdk_mcp_server` runs, by name; none for another server.

    The SDK keeps them only in the closure of the server's call handler (it lists the tools
    as plain MCP `Tool`s), so this looks there: through the server's attributes, the
    functions, bound methods, handler entries, dicts and lists they hold, and the cells of
    each function's closure, at most `_SEARCH_DEPTH` levels deep. It only reads, and finds
    nothing (so no mark) if a later SDK keeps its tools elsewhere.
    """
    found: dict[str, SdkMcpTool[Any]] = {}
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(value, 1) for value in vars(instance).values()]
    while stack:
        value, depth = stack.pop()
        if id(value) in seen or depth > _SEARCH_DEPTH:
            continue
        seen.add(id(value))
        children: list[object] = []
        if isinstance(value, SdkMcpTool):
            found.setdefault(value.name, cast(SdkMcpTool[Any], value))
        elif isinstance(value, dict):
            children = list(cast(dict[object, object], value).values())
        elif isinstance(value, list | tuple):
            children = list(cast(Sequence[object], value))
        elif inspect.ismethod(value):
            children = [value.__func__]
        elif inspect.isfunction(value):
            for cell in value.__closure__ or ():
                try:
                    children.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    continue
        elif not isinstance(value, type):
            handler: object = getattr(value, "handler", None)  # mcp's HandlerEntry
            children = [handler] if callable(handler) else []
        stack.extend((child, depth + 1) for child in children)
    return found


def _marked(definition: SdkMcpTool[Any] | None) -> object:
    """The tool or its handler, whichever carries a `sessionflow.effect` mark (either order of the decorators)."""
    if definition is None:
        return None
    for candidate in (definition, definition.handler):
        if declared_effect(candidate) is not None:
            return candidate
    return None


def check_tool_options(options: ClaudeAgentOptions, tool_sources: Sequence[ToolSpec]) -> tuple[str, ...]:
    """Check ``tools`` and ``mcp_servers`` without listing any server; the built-ins they give.

    Synchronous and free of side effects, so the runner can call it when the flow is built.
    Only clashes between tool names wait for the servers' listings, in `discover_tools`.
    """
    builtins = _builtins(options.tools)
    servers = options.mcp_servers
    if not isinstance(servers, dict):
        raise UnsupportedOptionError(
            "mcp_servers",
            "it must be a dict of in-process SDK servers (create_sdk_mcp_server); give other MCP "
            "servers to the session as tool sources (sessionflow.mcp.McpToolSource)",
        )
    if tool_sources and TOOL_SPEC_SERVER in servers:
        raise UnsupportedOptionError(
            f"mcp_servers[{TOOL_SPEC_SERVER!r}]", "the name is reserved for sessionflow's tool specs"
        )
    for server_name, config in servers.items():
        if config.get("type") != "sdk":
            raise UnsupportedOptionError(
                f"mcp_servers[{server_name!r}]",
                f"a {config.get('type', 'stdio')!r} server; the adapter takes only in-process SDK servers "
                "(create_sdk_mcp_server). Give other MCP servers to the session as tool sources "
                "(sessionflow.mcp.McpToolSource), so that each call runs as its own durable step",
            )
    return builtins


def offers_agent_tool(options: ClaudeAgentOptions) -> bool:
    """``Agent`` is offered when named in ``tools``, or by default when ``agents`` are defined."""
    tools = options.tools
    if tools is None or isinstance(tools, dict):
        return bool(options.agents) or bool(filesystem_agents(options))
    return any(str(name) in _AGENT_TOOL_NAMES for name in cast(list[object], tools))


_AGENT_TOOL_NAMES = frozenset({AGENT_TOOL, "Task"})


def _builtins(tools: object) -> tuple[str, ...]:
    if tools is None or isinstance(tools, dict):
        # The default set, or the claude_code preset: every Claude Code tool sessionflow can run.
        return BUILTIN_TOOL_NAMES
    names = [str(name) for name in cast(list[object], tools) if str(name) not in _AGENT_TOOL_NAMES]
    unsupported = sorted(set(names) - set(BUILTIN_TOOL_NAMES))
    if unsupported:
        raise UnsupportedOptionError(
            "tools",
            f"sessionflow cannot run Claude Code's tools {', '.join(unsupported)} in a tool step; "
            f"it runs {', '.join(BUILTIN_TOOL_NAMES)}",
        )
    return tuple(dict.fromkeys(names))


def _claim(seen: dict[str, str], name: str, owner: str, option: str) -> None:
    other = seen.get(name)
    if other is not None:
        raise UnsupportedOptionError(
            option, f"two tools are named {name!r} ({other} and {owner}); tool names must be unique"
        )
    seen[name] = owner


async def _list_tools(instance: Server[Any]) -> list[Tool]:
    tools: list[Tool] = []
    async with Client(instance) as client:
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools


def _spec_tool(spec: ToolSpec) -> Tool:
    data: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": dict(spec.parameters),
    }
    if spec.mcp_annotations is not None:
        data["annotations"] = dict(spec.mcp_annotations)
    return Tool.model_validate(data)


def _inline_results(tool: Tool) -> Tool:
    # The CLI would save a large result to a file and show the model a preview; the
    # session decides about sizes, so results stay inline.
    meta = {**(tool.meta or {}), "anthropic/maxResultSizeChars": MAX_RESULT_SIZE_CHARS}
    return tool.model_copy(update={"meta": meta})


def _stub_server(name: str, tools: list[Tool]) -> McpSdkServerConfig:
    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=_NOT_RUN)], is_error=True)

    server: Server[Any] = Server(name, version="1", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    return McpSdkServerConfig(type="sdk", name=name, instance=server)


async def _call_custom(custom: _CustomTool, arguments: dict[str, Any]) -> str:
    async with Client(custom.instance) as client:
        result = await client.call_tool(custom.tool.name, arguments)
    text = _result_text(result)
    if result.is_error:
        raise ToolExecutionError(text)
    return text


def _result_text(result: CallToolResult) -> str:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content omitted]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)
