"""`OpenAIAgentsRunner`: an OpenAI Agents SDK agent, one model call per step, every tool deferred."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, cast

from agents import (
    Agent,
    HandoffCallItem,
    HostedMCPTool,
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    MessageOutputItem,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    RunState,
    ToolApprovalItem,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
    TResponseInputItem,
    UserError,
    trace,
)
from agents.run import DEFAULT_MAX_TURNS
from agents.tool_context import ToolContext
from openai.types.responses import ResponseFunctionToolCall

from sessionflow.plugins import ToolSpec
from sessionflow.session import (
    AgentFrameworkRunner,
    AgentToolCallStatus,
    AgentTurnContext,
    AgentTurnOutcome,
    AgentUsage,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ImageInput,
    SessionStateError,
    ToolCallsRequested,
    ToolEffect,
    ToolExecutionError,
    ToolExecutionResult,
    ToolPolicy,
    TurnAborted,
    TurnCompleted,
    describe_tool_call_outcome,
)
from sessionflow_openai_agents._agent_tool_steps import agent_tool_outcome, with_agent_tools
from sessionflow_openai_agents._agent_tools import (
    AGENT_TOOL_STARTED,
    Stepper,
    split_agent_tools,
    steps_agent_tool,
    tree_of,
)
from sessionflow_openai_agents._graph import AgentGraph, GraphSnapshot
from sessionflow_openai_agents._items import answer_message, model_input, run_item_messages, user_message
from sessionflow_openai_agents._models import check_model_tools
from sessionflow_openai_agents._state import dump_run_state, load_run_state
from sessionflow_openai_agents._stream import StepHooks, stream_into, usage_of
from sessionflow_openai_agents._tools import function_tool_from_spec, run_function_tool
from sessionflow_openai_agents._warmup import build_response_models

__all__ = ["HANDOFF_POLICY", "ContextFactory", "OpenAIAgentsRunner"]

ContextFactory = Callable[[str], Any]
"""Builds the run context (``RunContextWrapper.context``) for a session ID, on every step."""

HANDOFF_POLICY = ToolPolicy(effect=ToolEffect.READ, requires_approval=False)
"""The policy of a handoff's step: the SDK performs a handoff with the model call that asks for
it, so the step only records it and cannot hold it for approval."""

# Model calls one step may make when a response neither finishes, calls tools, nor hands off
# (reasoning only, or hosted tools only): the run has to go on and the session has no step for it.
_MAX_MODEL_CALLS_PER_STEP = 3

_GUARDRAIL_TRIPS = (
    InputGuardrailTripwireTriggered,
    OutputGuardrailTripwireTriggered,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
)


class OpenAIAgentsRunner(AgentFrameworkRunner):
    """Drives an `agents.Agent` as a durable session.

    Every model step resumes the SDK's `RunState` and makes exactly one model call; every
    tool call (function tools, agents used as tools, local and hosted MCP tools) becomes a
    session tool step, and handoffs become recorded steps. An agent used as a tool runs its
    sub-agent in the model steps after its call's step, one model call each (`_agent_tools`).

    Args:
        agent: The starting agent, or a factory called on every step (for agents that hold
            per-event-loop clients). Names must be unique across the handoff graph.
        tool_sources: Neutral tool specs added to the starting agent as function tools.
        context_factory: Builds the run context from the session ID on every step and tool
            call; None gives tools ``context=None``.
        run_config: Run settings for every step (model provider, model settings, ...).
        hooks: Run hooks; ``on_llm_*`` and handoff hooks fire in model steps, tool hooks for
            the recorded results the model step hands back.
        max_turns: The SDK's limit of model calls in one session turn.
        tracing: Send traces to the SDK's configured trace processors. Off by default, so an
            offline or test run never tries to reach the network.
    """

    def __init__(
        self,
        agent: Agent[Any] | Callable[[], Agent[Any]],
        *,
        tool_sources: Sequence[ToolSpec] = (),
        context_factory: ContextFactory | None = None,
        run_config: RunConfig | None = None,
        hooks: RunHooks[Any] | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        tracing: bool = False,
    ) -> None:
        self._agent = agent
        self._extra_tools = [function_tool_from_spec(spec) for spec in tool_sources]
        self._spec_effects = {spec.name: spec.framework_effect for spec in tool_sources}
        self._context_factory = context_factory
        config = run_config or RunConfig()
        self._run_config = config if tracing else dataclasses.replace(config, tracing_disabled=True)
        self._hooks = hooks
        self._max_turns = max_turns
        self._tracing = tracing
        # Build once now, so a bad graph fails when the flow is built rather than in a step.
        self._graph_cache = self._build_graph()
        build_response_models()

    # -- messages ------------------------------------------------------------------------

    def build_user_message(self, text: str) -> FrameworkMessage:
        return user_message(text)

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        return user_message(text, images)

    # -- model ---------------------------------------------------------------------------

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        graph = self._graph()
        context = self._context(turn.session_id)
        snapshot = await graph.snapshot(RunContextWrapper(context=context))
        outputs = {
            call_id: describe_tool_call_outcome(r) for call_id, r in turn.tool_calls.items() if r.is_final
        }
        turn_input = model_input(turn.messages)
        tree = tree_of(graph)
        with self._trace_scope():
            try:
                if turn.framework_run_state is None:
                    start = snapshot.gated(outputs)
                    outcome = await self._advance(turn, snapshot, start, turn_input, turn_input, context)
                    return with_agent_tools(outcome, tree)
                run_state, entries = split_agent_tools(turn.framework_run_state)
                if entries:
                    step = await self._stepper(turn, context).step_entries(entries, tree)
                    if step.moved:
                        return agent_tool_outcome(run_state, entries, step)
                    outputs.update(step.answers)
                start = snapshot.gated(outputs)
                state = await load_run_state(start, run_state, turn_input, context)
                _answer_interruptions(state, turn)
                outcome = await self._advance(turn, snapshot, start, state, turn_input, None)
                return with_agent_tools(outcome, tree)
            except _GUARDRAIL_TRIPS as error:
                raise TurnAborted(_describe_trip(error)) from error
            except MaxTurnsExceeded as error:
                raise TurnAborted(f"the agent run exceeded max_turns ({self._max_turns}): {error}") from error
            except UserError as error:
                # A setup mistake (graph changed under a saved state, bad tool config): retrying cannot help.
                raise TurnAborted(f"OpenAI Agents SDK: {error}") from error

    async def _advance(
        self,
        turn: AgentTurnContext,
        snapshot: GraphSnapshot,
        start: Agent[Any],
        run_input: list[TResponseInputItem] | RunState[Any, Any],
        turn_input: list[TResponseInputItem],
        context: Any,
    ) -> AgentTurnOutcome:
        usage = AgentUsage()
        for _ in range(_MAX_MODEL_CALLS_PER_STEP):
            hooks = StepHooks(self._hooks)
            result = Runner.run_streamed(
                start,
                run_input,
                context=context,
                max_turns=self._max_turns,
                hooks=hooks,
                run_config=self._run_config,
            )
            hooks.result = result
            responses_before, items_before = len(result.raw_responses), len(result.new_items)
            await stream_into(result, turn.events)
            usage = usage + usage_of(result.raw_responses[responses_before:])
            if result.interruptions:
                return ToolCallsRequested(
                    framework_run_state=dump_run_state(result.to_state(), turn_input),
                    tool_calls=[self._deferred(item, snapshot, turn) for item in result.interruptions],
                    usage=usage,
                )
            if result.final_output is not None:
                messages = run_item_messages(result.new_items)
                if not result.new_items or not isinstance(result.new_items[-1], MessageOutputItem):
                    messages.append(answer_message(result.final_output))
                return TurnCompleted(new_messages=messages, usage=usage)
            state = result.to_state()
            handoff = next(
                (i for i in result.new_items[items_before:] if isinstance(i, HandoffCallItem)), None
            )
            if handoff is not None:
                raw = handoff.raw_item
                assert isinstance(raw, ResponseFunctionToolCall)
                call = DeferredToolCall(
                    tool_call_id=raw.call_id,
                    tool_name=raw.name,
                    arguments=raw.arguments,
                    policy=HANDOFF_POLICY,
                )
                return ToolCallsRequested(
                    framework_run_state=dump_run_state(state, turn_input), tool_calls=[call], usage=usage
                )
            run_input, context = state, None
        raise SessionStateError(f"the agent made {_MAX_MODEL_CALLS_PER_STEP} model calls without an outcome")

    def _deferred(
        self, item: ToolApprovalItem, snapshot: GraphSnapshot, turn: AgentTurnContext
    ) -> DeferredToolCall:
        call_id = item.call_id
        if not call_id:
            raise SessionStateError(f"tool call to {item.name!r} has no call ID")
        name = _record_name(item)
        effect = self._spec_effects.get(name) or snapshot.framework_effect(name)
        return DeferredToolCall(
            tool_call_id=call_id,
            tool_name=name,
            arguments=item.arguments or "{}",
            policy=turn.resolve_tool_policy(name, effect),
        )

    # -- tools ---------------------------------------------------------------------------

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        graph = self._graph()
        record = call.tool_call
        target = graph.handoffs.get(record.tool_name)
        if target is not None and record.tool_name not in graph.static_tools:
            return ToolExecutionResult(output=json.dumps({"assistant": target}))
        if _hosted_mcp_label(graph, record.tool_name) is not None:
            return ToolExecutionResult(
                output="approved; the hosted MCP server runs it in the next model call"
            )
        if tree_of(graph).is_agent_tool(record.tool_name) and steps_agent_tool(
            call.run_state, record.tool_call_id
        ):
            # The sub-agent's model calls and tool calls are steps of their own (`_agent_tools`).
            return ToolExecutionResult(output=AGENT_TOOL_STARTED)
        context = self._context(call.session_id)
        run_context = RunContextWrapper(context=context)
        snapshot = await graph.snapshot(run_context)
        entry = snapshot.tools.get(record.tool_name) or await tree_of(graph).find_tool(
            record.tool_name, run_context
        )
        if entry is None:
            raise ToolExecutionError(f"unknown tool {record.tool_name!r}")
        tool_context = ToolContext(
            context=context,
            tool_name=record.tool_name,
            tool_call_id=record.tool_call_id,
            tool_arguments=record.arguments,
            tool_call=ResponseFunctionToolCall(
                type="function_call",
                call_id=record.tool_call_id,
                name=record.tool_name,
                arguments=record.arguments,
            ),
            agent=entry.agent,
            run_config=self._run_config,
        )
        with self._trace_scope():
            output = await run_function_tool(entry.tool, tool_context, record.arguments)
        return ToolExecutionResult(output=output)

    # -- helpers -------------------------------------------------------------------------

    def _build_graph(self) -> AgentGraph:
        source = self._agent
        agent = cast(Agent[Any], source) if isinstance(source, Agent) else source()
        graph = AgentGraph(agent, self._extra_tools)
        check_model_tools(graph, self._run_config)
        tree_of(graph)
        return graph

    def _stepper(self, turn: AgentTurnContext, context: Any) -> Stepper:
        return Stepper(
            records=turn.tool_calls,
            context=context,
            run_config=self._run_config,
            defer=lambda item, snapshot: self._deferred(item, snapshot, turn),
        )

    def _graph(self) -> AgentGraph:
        return self._graph_cache if isinstance(self._agent, Agent) else self._build_graph()

    def _context(self, session_id: str) -> Any:
        return self._context_factory(session_id) if self._context_factory is not None else None

    def _trace_scope(self) -> AbstractContextManager[Any]:
        # A disabled trace as the current one also keeps runs nested in tools (agents as tools
        # with their own run config) from starting traces of their own.
        return nullcontext() if self._tracing else trace("sessionflow", disabled=True)


def _answer_interruptions(state: RunState[Any, Any], turn: AgentTurnContext) -> None:
    """Approve each pending call whose stub returns the recorded result; reject the rejected."""
    for item in state.get_interruptions():
        record = turn.tool_calls.get(item.call_id or "")
        if record is None or not record.is_final:
            raise SessionStateError(f"tool call {item.call_id!r} has no final record in {turn.turn_id!r}")
        if record.status is AgentToolCallStatus.REJECTED:
            # The SDK sends exactly this text to the model as the tool's output.
            state.reject(item, rejection_message=describe_tool_call_outcome(record))
        else:
            state.approve(item)


def _record_name(item: ToolApprovalItem) -> str:
    raw: Any = item.raw_item
    if getattr(raw, "type", None) == "mcp_approval_request":
        return f"{raw.server_label}.{raw.name}"
    return item.qualified_name or item.name or ""


def _hosted_mcp_label(graph: AgentGraph, tool_name: str) -> str | None:
    label, _, _ = tool_name.partition(".")
    for agent in graph.agents.values():
        for tool in agent.tools:
            if isinstance(tool, HostedMCPTool) and tool.tool_config.get("server_label") == label:
                return label
    return None


def _describe_trip(error: Exception) -> str:
    match error:
        case InputGuardrailTripwireTriggered():
            return f"input guardrail {error.guardrail_result.guardrail.get_name()!r} tripped"
        case OutputGuardrailTripwireTriggered():
            return f"output guardrail {error.guardrail_result.guardrail.get_name()!r} tripped"
        case ToolInputGuardrailTripwireTriggered():
            return f"tool input guardrail {error.guardrail.get_name()!r} tripped"
        case ToolOutputGuardrailTripwireTriggered():
            return f"tool output guardrail {error.guardrail.get_name()!r} tripped"
        case _:
            return str(error)
