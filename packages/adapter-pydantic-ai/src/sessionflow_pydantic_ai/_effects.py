"""Tool effects from Pydantic AI tool metadata, and the policy of each deferred call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition

from sessionflow import ToolEffect
from sessionflow.kit import AgentTurnContext, DeferredToolCall, effect_from_mcp_annotations

__all__ = ["EFFECT_METADATA_KEY", "deferred_tool_call", "framework_effect"]

EFFECT_METADATA_KEY = "sessionflow_effect"
"""Tool metadata key naming a tool's effect: ``metadata={"sessionflow_effect": "read"}``."""


def framework_effect(tool_def: ToolDefinition | None) -> ToolEffect | None:
    """The effect a tool's metadata declares, or None when it declares none.

    ``metadata["sessionflow_effect"]`` (a `ToolEffect` or its value) wins; otherwise MCP
    annotations in ``metadata["annotations"]`` (how `MCPToolset` reports them) are mapped
    with `effect_from_mcp_annotations`.
    """
    metadata: Mapping[str, Any] = (tool_def.metadata if tool_def is not None else None) or {}
    declared = metadata.get(EFFECT_METADATA_KEY)
    if declared is not None:
        return ToolEffect(declared)
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        return effect_from_mcp_annotations(cast(Mapping[str, Any], annotations))
    return None


def deferred_tool_call(
    call: ToolCallPart, tool_def: ToolDefinition | None, turn: AgentTurnContext
) -> DeferredToolCall:
    """The session's record of one call: explicit policy, else the tool's metadata, else the default.

    A tool Pydantic AI marks ``requires_approval=True`` asks for approval as the framework's
    own rule (``framework_approval="required"``, on top of the session's floor), unless an
    explicit policy says whether it needs one.
    """
    policy = turn.resolve_tool_policy(call.tool_name, framework_effect(tool_def))
    asks = tool_def is not None and tool_def.kind == "unapproved" and policy.requires_approval is None
    return DeferredToolCall(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        arguments=call.args_as_json_str(),
        policy=policy,
        framework_approval="required" if asks else None,
    )
