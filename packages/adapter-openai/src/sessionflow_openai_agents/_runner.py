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
    RunItem,
    Runner,
    RunState,
    Session,
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

from sessionflow.frameworks import OutputValidator
from sessionflow.plugins import ToolSpec
from sessionflow.session import (
    AgentFrameworkRunner,
    AgentToolCallStatus,
    AgentTurnContext,
    AgentTurnOutcome,
    ContinueRequested,
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
from sessionflow_openai_agents._graph import AgentGraph, GraphSnapshot
from sessionflow_openai_agents._items import answer_message, model_input, run_item_messages, user_message
from sessionflow_openai_agents._memory import refuse_sdk_session
from sessionflow_openai_agents._models import check_model_tools
from sessionflow_openai_agents._retry import earlier_messages, read_restart, restart_state, retry_prompt
from sessionflow_openai_agents._state import dump_run_state, load_run_state
from sessionflow_openai_agents._stream import StepHooks, stream_into, usage_of
from sessionflow_openai_agents._tool_value import decode_tool_values, encode_tool_value
from sessionflow_openai_agents._tools import function_tool_from_spec, invoke_function_tool, tool_output_text
from sessionflow_openai_agents._warmup import build_response_models

__all__ = ["HANDOFF_POLICY", "ContextFactory", "OpenAIAgentsRunner"]

ContextFactory = Callable[[str], Any]
"""Builds the run context (``RunContextWrapper.context``) for a session ID, on every step."""

HANDOFF_POLICY = ToolPolicy(effect=ToolEffect.READ, requires_approval=False)
"""The policy of a handoff's step: the SDK performs a handoff with the model call that asks for
it, so the step only records it and cannot hold it for approval."""

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
    session tool step, and handoffs become recorded steps.

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
        output_validator: Checks the final answer (its text, a structured output as JSON):
            None accepts it; a string is a retry prompt, and a new run from the refused
            answer and the prompt answers again in a model step of its own.
        session: Refused (`UnsupportedAgentOptionError`): the session's stored messages are
            the conversation's memory, so an SDK `Session` (``SQLiteSession``, ...) would
            keep a second copy outside the workflow.
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
        output_validator: OutputValidator | None = None,
        session: Session | None = None,
    ) -> None:
        refuse_sdk_session(session)
        self._agent = agent
        self._extra_tools = [function_tool_from_spec(spec) for spec in tool_sources]
        self._spec_effects = {spec.name: spec.framework_effect for spec in tool_sources}
        self._context_factory = context_factory
        config = run_config or RunConfig()
        self._run_config = config if tracing else dataclasses.replace(config, tracing_disabled=True)
        self._hooks = hooks
        self._max_turns = max_turns
        self._tracing = tracing
        self._output_validator = output_validator
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
        outputs: dict[str, Any] = {
            call_id: describe_tool_call_outcome(r) for call_id, r in turn.tool_calls.items() if r.is_final
        }
        # A tool's returned object, where its step recorded one, for the SDK to see as returned.
        outputs.update(decode_tool_values(turn.state_updates()))
        start = snapshot.gated(outputs)
        turn_input = model_input(turn.messages)
        with self._trace_scope():
            try:
                if turn.framework_run_state is None:
                    return await self._advance(turn, snapshot, start, turn_input, turn_input, context)
                restart = read_restart(turn.framework_run_state)
                if restart is not None:
                    agent = snapshot.gated(outputs, restart.agent)
                    return await self._advance(turn, snapshot, agent, restart.input, turn_input, context)
                state = await load_run_state(start, turn.framework_run_state, turn_input, context)
                _answer_interruptions(state, turn)
                return await self._advance(turn, snapshot, start, state, turn_input, None)
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
        # A resumed run's result holds the earlier steps' responses and items too.
        responses_before, items_before = len(result.raw_responses), len(result.new_items)
        await stream_into(result, turn.events)
        usage = usage_of(result.raw_responses[responses_before:])
        if result.interruptions:
            return ToolCallsRequested(
                framework_run_state=dump_run_state(result.to_state(), turn_input),
                tool_calls=[self._deferred(item, snapshot, turn) for item in result.interruptions],
                usage=usage,
            )
        if result.final_output is not None:
            prompt = retry_prompt(self._output_validator, result.final_output)
            if prompt is not None:
                return ContinueRequested(
                    framework_run_state=restart_state(result, prompt),
                    note="the output validator refused the answer",
                    usage=usage,
                )
            messages = [*earlier_messages(result.input, turn_input), *run_item_messages(result.new_items)]
            if not result.new_items or not isinstance(result.new_items[-1], MessageOutputItem):
                messages.append(answer_message(result.final_output))
            return TurnCompleted(new_messages=messages, usage=usage)
        state = result.to_state()
        handoff = next((i for i in result.new_items[items_before:] if isinstance(i, HandoffCallItem)), None)
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
        # Neither an answer, a tool call nor a handoff (reasoning only, or hosted tools the
        # provider ran): the SDK would call the model again. That call is a model step of its
        # own, so a crash repeats only it.
        return ContinueRequested(
            framework_run_state=dump_run_state(state, turn_input),
            note=_continue_note(result.new_items[items_before:]),
            usage=usage,
        )

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
        context = self._context(call.session_id)
        snapshot = await graph.snapshot(RunContextWrapper(context=context))
        entry = snapshot.tools.get(record.tool_name)
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
            value = await invoke_function_tool(entry.tool, tool_context, record.arguments)
        return ToolExecutionResult(output=tool_output_text(value), state_update=encode_tool_value(value))

    # -- helpers -------------------------------------------------------------------------

    def _build_graph(self) -> AgentGraph:
        source = self._agent
        agent = cast(Agent[Any], source) if isinstance(source, Agent) else source()
        graph = AgentGraph(agent, self._extra_tools)
        check_model_tools(graph, self._run_config)
        return graph

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


def _continue_note(items: Sequence[RunItem]) -> str:
    kinds = sorted({str(getattr(item.raw_item, "type", item.type)) for item in items})
    return f"the response held only {', '.join(kinds) or 'nothing'}; the SDK calls the model again"


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
