"""`pydantic_ai_session_flow`: an ordinary Pydantic AI agent as a durable session flow."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sessionflow.plugins import ToolSpec
from sessionflow.session import AgentSessionOptions
from sessionflow.temporal import AgentSessionFlow
from sessionflow_pydantic_ai._runner import (
    AgentSource,
    DepsFactory,
    InstructionsOverride,
    ModelOverride,
    PydanticAIRunner,
)

__all__ = ["pydantic_ai_session_flow", "with_tool_source_policies"]


def pydantic_ai_session_flow(
    agent_or_factory: AgentSource,
    *,
    flow_type: str,
    options: AgentSessionOptions | None = None,
    tool_sources: Sequence[ToolSpec] = (),
    deps_factory: DepsFactory | None = None,
    model_override: ModelOverride | None = None,
    instructions_override: InstructionsOverride | None = None,
) -> AgentSessionFlow:
    """A flow type whose sessions run `agent_or_factory`.

    The agent's function tools, toolsets and MCP toolsets, and every spec in
    `tool_sources`, become durable tool steps. A spec's `policy` goes into
    `options.tool_policies` unless the options already name that tool.
    See `PydanticAIRunner` for the other arguments.
    """
    runner = PydanticAIRunner(
        agent_or_factory,
        deps_factory=deps_factory,
        tool_sources=tool_sources,
        model_override=model_override,
        instructions_override=instructions_override,
    )
    return AgentSessionFlow(
        runner,
        flow_type=flow_type,
        options=with_tool_source_policies(options or AgentSessionOptions(), tool_sources),
    )


def with_tool_source_policies(
    options: AgentSessionOptions, tool_sources: Sequence[ToolSpec]
) -> AgentSessionOptions:
    """`options` with each spec's explicit policy added, where the options have none for that tool."""
    added = {
        s.name: s.policy for s in tool_sources if s.policy is not None and s.name not in options.tool_policies
    }
    if not added:
        return options
    return replace(options, tool_policies={**options.tool_policies, **added})
