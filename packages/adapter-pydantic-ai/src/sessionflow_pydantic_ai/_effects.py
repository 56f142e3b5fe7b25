"""Tool effects from Pydantic AI tool metadata, and the policy of each deferred call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset

from sessionflow import ToolEffect
from sessionflow.kit import (
    AgentTurnContext,
    DeferredToolCall,
    declared_effect,
    declared_policy,
    effect_from_mcp_annotations,
)

__all__ = ["EFFECT_METADATA_KEY", "deferred_tool_call", "framework_effect", "marked_tools"]

EFFECT_METADATA_KEY = "sessionflow_effect"
"""Tool metadata key naming a tool's effect: ``metadata={"sessionflow_effect": "read"}``."""


def marked_tools(toolsets: Iterable[AbstractToolset[Any]]) -> dict[str, object]:
    """The function tools of ``toolsets`` that carry a `sessionflow.effect` mark, by name.

    Each is the object the mark is on: the `Tool`, or the function it runs (the mark of
    ``@sessionflow.tool_effect`` above or below ``@agent.tool``/``@agent.tool_plain``, or on
    a function given to ``Tool(...)`` or a `FunctionToolset`). Leaf toolsets are visited
    through wrappers (`AbstractToolset.apply`); of two tools with one name, the first counts.
    """
    found: dict[str, object] = {}

    def visit(toolset: AbstractToolset[Any]) -> None:
        if isinstance(toolset, FunctionToolset):
            tools = toolset.tools
            for name, tool in tools.items():
                for candidate in (tool, tool.function):
                    if name not in found and declared_effect(candidate) is not None:
                        found[name] = candidate

    for toolset in toolsets:
        toolset.apply(visit)
    return found


def framework_effect(tool_def: ToolDefinition | None, marked: object = None) -> ToolEffect | None:
    """The effect the tool declares, or None when it declares none.

    A `sessionflow.effect` mark on ``marked`` (see `marked_tools`) wins; then the older
    form, ``metadata["sessionflow_effect"]`` (a `ToolEffect` or its value); otherwise MCP
    annotations in ``metadata["annotations"]`` (how `MCPToolset` reports them) are mapped
    with `effect_from_mcp_annotations`.
    """
    if marked is not None:
        effect = declared_effect(marked)
        if effect is not None:
            return effect
    metadata: Mapping[str, Any] = (tool_def.metadata if tool_def is not None else None) or {}
    declared = metadata.get(EFFECT_METADATA_KEY)
    if declared is not None:
        return ToolEffect(declared)
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        return effect_from_mcp_annotations(cast(Mapping[str, Any], annotations))
    return None


def deferred_tool_call(
    call: ToolCallPart,
    tool_def: ToolDefinition | None,
    turn: AgentTurnContext,
    marked: Mapping[str, object] | None = None,
) -> DeferredToolCall:
    """The session's record of one call: explicit policy, else the tool's mark, else its metadata, else the default.

    ``marked``: the marked tools by name (`marked_tools`).

    A tool Pydantic AI marks ``requires_approval=True`` asks for approval as the framework's
    own rule (``framework_approval="required"``, on top of the session's floor), unless an
    explicit policy says whether it needs one.
    """
    mark = (marked or {}).get(call.tool_name)
    policy = turn.resolve_tool_policy(
        call.tool_name,
        framework_effect(tool_def, mark),
        declared_policy=declared_policy(mark) if mark is not None else None,
    )
    asks = tool_def is not None and tool_def.kind == "unapproved" and policy.requires_approval is None
    return DeferredToolCall(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        arguments=call.args_as_json_str(),
        policy=policy,
        framework_approval="required" if asks else None,
    )
