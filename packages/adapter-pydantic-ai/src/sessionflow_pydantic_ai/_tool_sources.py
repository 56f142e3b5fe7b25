"""Neutral `ToolSpec`s (CLI local tools, MCP connector tools) as Pydantic AI tools."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai import FunctionToolset, Tool
from pydantic_core import SchemaValidator, core_schema

from sessionflow.kit import ToolSpec, current_tool_invocation
from sessionflow_pydantic_ai._effects import EFFECT_METADATA_KEY

__all__ = ["tool_spec_toolset"]

_OBJECT = SchemaValidator(core_schema.dict_schema(keys_schema=core_schema.str_schema()))


def tool_spec_toolset(specs: Sequence[ToolSpec]) -> FunctionToolset[Any]:
    """One toolset holding every spec, its effect and MCP annotations kept in tool metadata."""
    return FunctionToolset([_tool(spec) for spec in specs])


def _tool(spec: ToolSpec) -> Tool[Any]:
    async def run(**arguments: Any) -> str:
        invocation = current_tool_invocation()
        if invocation is None:
            raise RuntimeError(f"tool {spec.name!r} runs only inside a sessionflow tool step")
        return await spec.call(arguments, invocation)

    tool: Tool[Any] = Tool.from_schema(
        run, name=spec.name, description=spec.description, json_schema=dict(spec.parameters)
    )
    # `from_schema` accepts any JSON; the handler takes an object, so anything else is an
    # argument error the model sees rather than a crash of the tool step.
    tool.function_schema = replace(tool.function_schema, validator=_OBJECT)
    metadata: dict[str, Any] = {}
    if spec.effect is not None:
        metadata[EFFECT_METADATA_KEY] = spec.effect.value
    if spec.mcp_annotations is not None:
        metadata["annotations"] = dict(spec.mcp_annotations)
    tool.metadata = metadata or None
    return tool
