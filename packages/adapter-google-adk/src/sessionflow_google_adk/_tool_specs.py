"""Neutral `ToolSpec`s (the CLI's local tools, MCP connector tools, conformance tools) as
ADK tools: a `BaseTool` whose declaration is the spec's JSON schema, and whose
`ToolOutput.state_update` sets keys of ADK's session state (``tool_context.state``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from sessionflow.kit import ToolSpec, current_tool_invocation

__all__ = ["SpecTool", "spec_tools"]


class SpecTool(BaseTool):
    """A spec as an ADK tool; its handler runs only inside a sessionflow tool step."""

    def __init__(self, spec: ToolSpec) -> None:
        super().__init__(name=spec.name, description=spec.description)
        self.spec = spec

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.spec.name,
            description=self.spec.description,
            parameters_json_schema=dict(self.spec.parameters),
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        invocation = current_tool_invocation()
        if invocation is None:
            raise RuntimeError(f"tool {self.spec.name!r} runs only inside a sessionflow tool step")
        output = await self.spec.call_output(args, invocation)
        if output.state_update:
            # ADK's tool state: the keys go into the function response event's state delta,
            # which the session applies before the next model call (and keeps, as ADK does).
            tool_context.state.update(dict(output.state_update))
        return output.text


def spec_tools(specs: Sequence[ToolSpec]) -> list[SpecTool]:
    return [SpecTool(spec) for spec in specs]
