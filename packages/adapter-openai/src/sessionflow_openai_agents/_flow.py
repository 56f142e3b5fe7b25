"""`openai_agents_session_flow`: an ordinary `agents.Agent` as a durable session flow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Unpack

from agents import Agent, RunConfig, RunErrorHandlers, RunHooks, Session
from agents.run import DEFAULT_MAX_TURNS

from sessionflow import AgentSessionFlow
from sessionflow.kit import FlowArguments, OutputValidator, ToolSpec
from sessionflow_openai_agents._runner import (
    ContextFactory,
    GuardrailTripwireAnswer,
    OpenAIAgentsRunner,
    TurnStart,
)

__all__ = ["openai_agents_session_flow"]


def openai_agents_session_flow(
    agent_or_factory: Agent[Any] | Callable[[], Agent[Any]],
    *,
    flow_type: str,
    tool_sources: Sequence[ToolSpec] = (),
    context_factory: ContextFactory | None = None,
    run_config: RunConfig | None = None,
    hooks: RunHooks[Any] | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    tracing: bool = False,
    turns_start_at: TurnStart = "last_agent",
    on_guardrail_tripwire: GuardrailTripwireAnswer | None = None,
    output_validator: OutputValidator | None = None,
    stream_model_calls: bool = True,
    session: Session | None = None,
    error_handlers: RunErrorHandlers[Any] | None = None,
    **flow_args: Unpack[FlowArguments],
) -> AgentSessionFlow:
    """Serve ``agent_or_factory`` as the flow type ``flow_type``.

    The agent's function tools, agents used as tools, local MCP servers' tools and hosted
    MCP servers' calls become durable tool steps; ``tool_sources`` add neutral tools. A
    tool source's ``policy`` goes into ``options.tool_policies`` unless ``options`` already
    has one for that name. ``flow_args`` (``options``, ``delta_transport``, ...) are
    `AgentSessionFlow`'s; the other arguments are `OpenAIAgentsRunner`'s.

    Raises:
        AgentGraphError: Two agents share a name, or two different tools share a name.
        UnsupportedAgentOptionError: An `AgentGraphError` and `UnsupportedOptionError` naming
            the option: a handoff without a target agent, a tool that runs in-process
            (computer, local shell), a hosted tool on a Chat Completions model instance, or
            an SDK ``session`` (the session's stored messages are the memory).
        UnsupportedOptionError: ``context_factory`` builds a context that cannot travel as JSON.
    """
    runner = OpenAIAgentsRunner(
        agent_or_factory,
        tool_sources=tool_sources,
        context_factory=context_factory,
        run_config=run_config,
        hooks=hooks,
        max_turns=max_turns,
        tracing=tracing,
        turns_start_at=turns_start_at,
        on_guardrail_tripwire=on_guardrail_tripwire,
        output_validator=output_validator,
        stream_model_calls=stream_model_calls,
        session=session,
        error_handlers=error_handlers,
    )
    return AgentSessionFlow(runner, flow_type=flow_type, tool_specs=tool_sources, **flow_args)
