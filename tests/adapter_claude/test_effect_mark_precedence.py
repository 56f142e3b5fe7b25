"""The Claude adapter's reading of a custom tool's effect: the `sessionflow.effect` mark over its annotations."""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ToolAnnotations, create_sdk_mcp_server, tool

import sessionflow
from sessionflow import ToolEffect, ToolPolicy
from sessionflow_claude_agent_sdk._tools import discover_tools

ASKS = ToolPolicy(effect=ToolEffect.READ, requires_approval=True)


async def test_marks_above_and_below_tool_win_over_annotations() -> None:
    @sessionflow.tool_effect("non_idempotent_write")
    @tool("hinted", "Read-only by its hint", {"q": str}, annotations=ToolAnnotations(readOnlyHint=True))
    async def hinted(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    @tool("below", "Marked below @tool", {"q": str})
    @sessionflow.tool_effect("read", policy=ASKS)
    async def below(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    @tool("plain", "Only its hint", {"q": str}, annotations=ToolAnnotations(readOnlyHint=True))
    async def plain(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    @tool("bare", "Nothing", {"q": str})
    async def bare(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    server = create_sdk_mcp_server("kb", tools=[hinted, below, plain, bare])
    tools = await discover_tools(ClaudeAgentOptions(tools=[], mcp_servers={"kb": server}), [])

    assert tools.framework_effect("mcp__kb__hinted") is ToolEffect.NON_IDEMPOTENT_WRITE
    assert tools.framework_effect("mcp__kb__below") is ToolEffect.READ
    assert tools.declared_policy("mcp__kb__below") == ASKS
    assert tools.framework_effect("mcp__kb__plain") is ToolEffect.READ
    assert tools.declared_policy("mcp__kb__plain") is None
    assert tools.framework_effect("mcp__kb__bare") is None
