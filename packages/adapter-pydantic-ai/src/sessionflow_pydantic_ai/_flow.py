"""`pydantic_ai_session_flow`: an ordinary Pydantic AI agent as a durable session flow."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Unpack

from pydantic_ai import CancellationToken
from pydantic_ai.agent import EventStreamHandler
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from sessionflow import AgentSessionFlow
from sessionflow.kit import FlowArguments, ToolSpec
from sessionflow_pydantic_ai._deps import DepsFactory, DepsResources
from sessionflow_pydantic_ai._limits import UsageLimitsOption
from sessionflow_pydantic_ai._partial_output import PARTIAL_OUTPUT_INTERVAL
from sessionflow_pydantic_ai._run_arguments import refuse_run_arguments
from sessionflow_pydantic_ai._runner import (
    AgentSource,
    InstructionsOverride,
    ModelOverride,
    PydanticAIRunner,
)
from sessionflow_pydantic_ai._settings import ModelSettingsOption

__all__ = ["pydantic_ai_session_flow"]


def pydantic_ai_session_flow(
    agent_or_factory: AgentSource,
    *,
    flow_type: str,
    tool_sources: Sequence[ToolSpec] = (),
    toolsets: Sequence[AbstractToolset[Any]] = (),
    deps_factory: DepsFactory | None = None,
    deps_resources: DepsResources | None = None,
    model_override: ModelOverride | None = None,
    instructions_override: InstructionsOverride | None = None,
    usage_limits: UsageLimitsOption | None = None,
    model_settings: ModelSettingsOption | None = None,
    partial_output_interval: float | None = PARTIAL_OUTPUT_INTERVAL,
    validate_partial_output: bool = False,
    event_stream_handler: EventStreamHandler[Any] | None = None,
    cancellation_token: CancellationToken | None = None,
    timeout: float | None = None,
    workspace: WorkspaceBackend | WorkspaceRef | Literal["new"] | None = None,
    **flow_args: Unpack[FlowArguments],
) -> AgentSessionFlow:
    """A flow type whose sessions run `agent_or_factory`.

    The agent's function tools, toolsets and MCP toolsets, and every spec in
    `tool_sources`, become durable tool steps. A spec's `policy` goes into
    `options.tool_policies` unless the options already name that tool. `flow_args`
    (`options`, `delta_transport`, ...) are `AgentSessionFlow`'s; see `PydanticAIRunner`
    for the other arguments.

    ``cancellation_token``, ``timeout`` and ``workspace`` are `agent.run`'s, named here
    only to be refused (`UnsupportedOptionError`) with the session's counterpart: the
    client's ``cancel_turn``, the step timings, a workspace capability on the agent.
    """
    refuse_run_arguments(cancellation_token=cancellation_token, timeout=timeout, workspace=workspace)
    runner = PydanticAIRunner(
        agent_or_factory,
        deps_factory=deps_factory,
        deps_resources=deps_resources,
        tool_sources=tool_sources,
        toolsets=toolsets,
        model_override=model_override,
        instructions_override=instructions_override,
        usage_limits=usage_limits,
        model_settings=model_settings,
        partial_output_interval=partial_output_interval,
        validate_partial_output=validate_partial_output,
        event_stream_handler=event_stream_handler,
    )
    return AgentSessionFlow(runner, flow_type=flow_type, tool_specs=tool_sources, **flow_args)
