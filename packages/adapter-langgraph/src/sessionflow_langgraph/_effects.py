"""What the session needs to know about a LangChain tool: its effect and its argument schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from sessionflow import ToolEffect, ToolPolicy, UnsupportedOptionError
from sessionflow.kit import declared_effect, declared_policy, effect_from_mcp_annotations

__all__ = ["EFFECT_METADATA_KEY", "MCP_ANNOTATIONS_METADATA_KEY", "tool_effect", "tool_policy", "tool_schema"]

EFFECT_METADATA_KEY = "sessionflow_effect"
"""`BaseTool.metadata` key naming the tool's `ToolEffect` (a member or its value)."""

MCP_ANNOTATIONS_METADATA_KEY = "mcp_annotations"
"""`BaseTool.metadata` key holding the tool's MCP ``annotations`` (camelCase hints)."""

_MCP_HINTS = ("readOnlyHint", "idempotentHint", "destructiveHint", "openWorldHint")


def _marked(tool: BaseTool) -> object:
    """The object that carries the tool's `sessionflow.effect` mark: the tool, or the function it runs."""
    for candidate in (tool, getattr(tool, "func", None), getattr(tool, "coroutine", None)):
        if candidate is not None and declared_effect(candidate) is not None:
            return candidate
    return tool


def tool_policy(tool: BaseTool) -> ToolPolicy | None:
    """The whole policy the tool is marked with (`sessionflow.effect(tool, ..., policy=...)`), if any."""
    return declared_policy(_marked(tool))


def tool_effect(tool: BaseTool) -> ToolEffect | None:
    """The effect a LangChain tool declares, or None when it declares none.

    A `sessionflow.effect` mark wins: on the tool, or on the function under ``@tool``
    (``@sessionflow.tool_effect`` below LangChain's decorator). Then the older form,
    ``metadata["sessionflow_effect"]``. Otherwise MCP hints map through
    `sessionflow.kit.effect_from_mcp_annotations`, read from
    ``metadata["mcp_annotations"]`` or from the top level of the metadata (where
    langchain-mcp-adapters puts them).

    Raises:
        UnsupportedOptionError: ``sessionflow_effect`` is not a `ToolEffect` value (a `ValueError`).
    """
    marked = declared_effect(_marked(tool))
    if marked is not None:
        return marked
    metadata: Mapping[str, Any] = tool.metadata or {}
    declared = metadata.get(EFFECT_METADATA_KEY)
    if declared is not None:
        try:
            return ToolEffect(declared)
        except ValueError:
            allowed = ", ".join(effect.value for effect in ToolEffect)
            raise UnsupportedOptionError(
                f"metadata[{EFFECT_METADATA_KEY!r}]",
                f"tool {tool.name!r}: metadata[{EFFECT_METADATA_KEY!r}] is {declared!r}; expected one of {allowed}",
            ) from None
    annotations = metadata.get(MCP_ANNOTATIONS_METADATA_KEY)
    if isinstance(annotations, Mapping):
        return effect_from_mcp_annotations(cast(Mapping[str, Any], annotations))
    if any(hint in metadata for hint in _MCP_HINTS):
        return effect_from_mcp_annotations(metadata)
    return None


def tool_schema(tool: BaseTool) -> Mapping[str, Any]:
    """The JSON schema of the tool's arguments, as the model is offered it."""
    function = cast(Mapping[str, Any], convert_to_openai_tool(tool)["function"])
    return cast(Mapping[str, Any], function.get("parameters") or {"type": "object", "properties": {}})
