"""Neutral `ToolSpec`s (sessionflow tool sources, MCP tools) as LangChain tools."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.types import Command

from sessionflow.kit import ToolSpec, current_tool_invocation
from sessionflow_langgraph._effects import EFFECT_METADATA_KEY, MCP_ANNOTATIONS_METADATA_KEY
from sessionflow_langgraph._tool_state import TOOL_STATE_KEY

__all__ = ["tool_from_spec"]


def tool_from_spec(spec: ToolSpec) -> StructuredTool:
    """A LangChain tool for a neutral `ToolSpec`.

    The JSON schema goes to the model as is. The spec's effect (its own, or the one its
    MCP annotations imply) goes into ``metadata["sessionflow_effect"]`` and the
    annotations into ``metadata["mcp_annotations"]``. The tool runs only inside a
    sessionflow tool step, which supplies the handler's `ToolInvocation`. `ToolSpec.policy`
    is not carried here: `AgentSessionFlow` puts it into the options, from its ``tool_specs``.
    """

    async def run(**arguments: Any) -> str | Command[Any]:
        invocation = current_tool_invocation()
        if invocation is None:
            raise RuntimeError(
                f"tool {spec.name!r} comes from a sessionflow tool source and runs only inside a "
                "sessionflow tool step, which gives it the call's idempotency key"
            )
        output = await spec.call_output(arguments, invocation)
        if not output.state_update:
            return output.text
        # The graph's own way for a tool to change state: its reducers merge the update.
        message = ToolMessage(content=output.text, tool_call_id=invocation.tool_call_id, name=spec.name)
        return Command(update={TOOL_STATE_KEY: dict(output.state_update), "messages": [message]})

    metadata: dict[str, Any] = {}
    effect = spec.framework_effect
    if effect is not None:
        metadata[EFFECT_METADATA_KEY] = effect.value
    if spec.mcp_annotations is not None:
        metadata[MCP_ANNOTATIONS_METADATA_KEY] = dict(spec.mcp_annotations)
    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=dict(spec.parameters),
        coroutine=run,
        metadata=metadata,
    )
