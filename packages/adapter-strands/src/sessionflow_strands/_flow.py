"""`strands_session_flow`: an ordinary Strands agent as a durable session flow."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from sessionflow import AgentSessionFlow
from sessionflow.kit import FlowArguments, ToolSpec
from sessionflow_strands._runner import AgentSource, StrandsRunner

__all__ = ["strands_session_flow"]


def strands_session_flow(
    agent_or_factory: AgentSource,
    *,
    flow_type: str,
    tool_sources: Sequence[ToolSpec] = (),
    **flow_args: Unpack[FlowArguments],
) -> AgentSessionFlow:
    """A flow type whose sessions run `agent_or_factory`.

    Every call of the agent's model is one durable step, and every call of one of its
    tools (or of a spec in `tool_sources`) a step of its own. `flow_args` (`options`,
    `delta_transport`, ...) are `AgentSessionFlow`'s.
    """
    runner = StrandsRunner(agent_or_factory, tool_sources=tool_sources)
    return AgentSessionFlow(runner, flow_type=flow_type, tool_specs=tool_sources, **flow_args)
