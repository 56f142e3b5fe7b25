"""`OpenAIAgentsRunner`: an OpenAI Agents SDK agent, one model call per step, every tool deferred."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Literal, cast

from agents import (
    Agent,
    HandoffCallItem,
    HostedMCPTool,
    InputGuardrailTripwireTriggered,
    ItemHelpers,
    MaxTurnsExceeded,
    MessageOutputItem,
    ModelBehaviorError,
    ModelRefusalError,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    RunErrorHandlers,
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

from sessionflow import (
    AgentToolCall,
    AgentToolCallStatus,
    AgentUsage,
    ImageInput,
    SessionStateError,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    CarryHook,
    ContinueRequested,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkApproval,
    FrameworkMessage,
    OutputValidator,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInvocation,
    ToolSpec,
    TurnAborted,
    TurnCompleted,
    VerifyCall,
    VerifyResult,
    current_tool_invocation,
    describe_tool_call_outcome,
    parse_tool_arguments,
    tool_arguments_object,
    value_change,
    with_tool_asks,
)
from sessionflow_openai_agents._agent_tool_steps import agent_tool_outcome, with_agent_tools
from sessionflow_openai_agents._agent_tools import (
    AGENT_TOOL_STARTED,
    SEPARATOR,
    Stepper,
    split_agent_tools,
    steps_agent_tool,
    tree_of,
)
from sessionflow_openai_agents._approvals import answer_interruptions, framework_approval, plain_stops
from sessionflow_openai_agents._carry import TurnCarry
from sessionflow_openai_agents._context import ContextCodec
from sessionflow_openai_agents._graph import AgentGraph, GraphSnapshot, ToolEntry
from sessionflow_openai_agents._history import TurnInput
from sessionflow_openai_agents._hooks import StepHookPlan, tool_ended, tool_started
from sessionflow_openai_agents._items import (
    answer_message,
    final_output_text,
    final_output_value,
    history_message,
    user_message,
)
from sessionflow_openai_agents._memory import refuse_sdk_session
from sessionflow_openai_agents._models import check_model_tools
from sessionflow_openai_agents._retry import (
    Restart,
    input_item_message,
    read_restart,
    restart_state,
    retry_prompt,
)
from sessionflow_openai_agents._run_config import check_run_config
from sessionflow_openai_agents._shown import shown_input
from sessionflow_openai_agents._state import SavedRunState, dump_run_state, parse_run_state, with_step_state
from sessionflow_openai_agents._steered import (
    digest,
    stage,
    stage_in_saved,
    steered_items,
    steered_user_digests,
)
from sessionflow_openai_agents._step_update import StepState, encode_step_update, step_updates
from sessionflow_openai_agents._stream import StepHooks, stream_into, usage_of
from sessionflow_openai_agents._tool_step import (
    RecordedFailures,
    ToolRun,
    encode_failure,
    input_verdict,
    recorded_failures,
    run_tool_step,
)
from sessionflow_openai_agents._tool_value import decode_tool_values, encode_tool_value
from sessionflow_openai_agents._tools import function_tool_from_spec
from sessionflow_openai_agents._warmup import build_response_models
from sessionflow_openai_agents._whole_responses import whole_response_config

__all__ = ["HANDOFF_POLICY", "ContextFactory", "GuardrailTripwireAnswer", "OpenAIAgentsRunner", "TurnStart"]

ContextFactory = Callable[[str], Any]
"""Builds the run context (``RunContextWrapper.context``) for a session ID, once per session:
the context then lives for the whole run and carries into the next turn."""

GuardrailTripwireAnswer = Callable[[Exception], str | None]
"""Given the SDK's `InputGuardrailTripwireTriggered` or `OutputGuardrailTripwireTriggered`,
the text to store as the assistant's answer of the turn, or None to fail the turn."""

TurnStart = Literal["last_agent", "starting_agent"]
"""Where each turn after the first starts: the agent the last turn ended on (the SDK's
multi-turn examples, ``result.last_agent``), or the starting agent again."""

HANDOFF_POLICY = ToolPolicy(effect=ToolEffect.READ, requires_approval=False)
"""The policy of a handoff's step: the SDK performs a handoff with the model call that asks for
it, so the step only records it and cannot hold it for approval."""

_NO_OUTPUT: Any = object()
"""The turn's final output is the text of its last stored message."""

_ANSWERABLE_TRIPS = (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered)

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
        context_factory: Builds the session's run context from the session ID, once: the
            context then travels with the run (changes by tools, handoffs, guardrails and
            hooks reach every later step and the next turn). It must encode as JSON (a
            pydantic model, a dataclass, a JSON dict); None gives tools ``context=None``.
        run_config: Run settings for every step (model provider, model settings, ...).
        hooks: Run hooks, fired where and as often as in the plain SDK (`_hooks`): the
            model and handoff hooks in model steps, the tool hooks around the real tool in
            its tool step, the start hooks only where the plain run starts or resumes.
        max_turns: The SDK's limit of model calls in one session turn.
        tracing: Send traces to the SDK's configured trace processors. Off by default, so an
            offline or test run never tries to reach the network.
        turns_start_at: ``"last_agent"`` (default) starts each turn at the agent the last
            turn ended on; ``"starting_agent"`` restarts every turn at ``agent``.
        on_guardrail_tripwire: Answers an input or output guardrail's tripwire instead of
            failing the turn: the text it returns is stored as the assistant's answer.
        carry: Decides the carry itself (`CarryHook`, the harness's): the next turn's model
            sees it, and every turn starts at ``agent`` with a fresh context.
        output_validator: Checks the final answer (its text, a structured output as JSON):
            None accepts it; a string is a retry prompt, and a new run from the refused
            answer and the prompt answers again in a model step of its own.
        stream_model_calls: True (default) streams every model call, so text and reasoning
            deltas reach followers while the call runs. False makes each call in one piece,
            as the SDK's ``Runner.run`` does (the request has no ``stream: true``): followers
            see the step's text only when it ends, and the worker skips parsing every
            server-sent event, which is most of a model step's CPU on a fast model.
        session: Refused (`UnsupportedAgentOptionError`): the session's stored messages are
            the conversation's memory, so an SDK `Session` (``SQLiteSession``, ...) would
            keep a second copy outside the workflow.
        error_handlers: As for `Runner.run`: a ``max_turns``, ``model_refusal`` or
            ``invalid_final_output`` handler's final output ends the turn instead of the error.

    Raises:
        UnsupportedOptionError: The context the factory builds cannot travel as JSON.
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
        turns_start_at: TurnStart = "last_agent",
        on_guardrail_tripwire: GuardrailTripwireAnswer | None = None,
        carry: CarryHook | None = None,
        output_validator: OutputValidator | None = None,
        stream_model_calls: bool = True,
        session: Session | None = None,
        error_handlers: RunErrorHandlers[Any] | None = None,
    ) -> None:
        refuse_sdk_session(session)
        self._error_handlers = error_handlers
        self._agent = agent
        self._extra_tools = [function_tool_from_spec(spec) for spec in tool_sources]
        self._spec_effects = {spec.name: spec.framework_effect for spec in tool_sources}
        self._specs = {spec.name: spec for spec in tool_sources}
        self._spec_tools = {tool.name: tool for tool in self._extra_tools}
        self._carry_hook = carry
        if turns_start_at not in ("last_agent", "starting_agent"):
            raise ValueError(
                f"turns_start_at must be 'last_agent' or 'starting_agent', not {turns_start_at!r}"
            )
        self._turns_start_at = turns_start_at
        self._on_guardrail_tripwire = on_guardrail_tripwire
        self._contexts = ContextCodec(context_factory)
        config = run_config or RunConfig()
        config = config if tracing else dataclasses.replace(config, tracing_disabled=True)
        self._checked_config = config
        self._whole_responses = not stream_model_calls
        self._run_config = whole_response_config(config) if self._whole_responses else config
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

    def accepts_steering(self) -> bool:
        """Steered messages join the run with ``RunState.add_input``, after the resumed step's
        tool results (`_steered`). Not where a tool's result may end the run (a
        ``tool_use_behavior`` other than ``"run_llm_again"``): the SDK refuses input there,
        so the session queues such messages for the next turn. Read from the graph built with
        the runner, so an agent factory is not called once more."""
        return all(agent.tool_use_behavior == "run_llm_again" for agent in self._graph_cache.agents.values())

    # -- model ---------------------------------------------------------------------------

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        graph = self._graph()
        # A carry hook's carry is its own text, not the adapter's.
        carry = TurnCarry.decode(turn.carried_state) if self._carry_hook is None else None
        saved, restart = _saved_state(turn.framework_run_state)
        # The calls that failed count too: their failure records (`_tool_step`).
        updates = step_updates(turn.tool_calls)
        if saved is not None:
            state = StepState(saved.context, saved.tool_state).apply(updates)
        elif restart is not None:
            state = StepState(restart.context, restart.tool_state)
        else:
            state = StepState(carry.context if carry is not None else None)
        context = self._contexts.load(state.context, turn.session_id)
        snapshot = await graph.snapshot(RunContextWrapper(context=context))
        outputs: dict[str, Any] = {
            call_id: describe_tool_call_outcome(r) for call_id, r in turn.tool_calls.items() if r.is_final
        }
        # A tool's returned object, where its step recorded one, for the SDK to see as returned;
        # for a call that failed, the text plain shows the model (`_tool_step`).
        values: dict[str, Any] = decode_tool_values(updates)
        failures = recorded_failures(turn.tool_calls)
        values.update(failures.outputs)
        outputs.update(values)
        tree = tree_of(graph)
        # The start hooks fire where the plain run starts or resumes (`_hooks`).
        plan = StepHookPlan(
            starts_agent=saved is None or saved.starts_agent,
            agent_tools=tree.names(),
            not_run=frozenset(
                call_id
                for call_id, r in turn.tool_calls.items()
                if r.is_final and r.status is not AgentToolCallStatus.SUCCEEDED and SEPARATOR not in call_id
            ),
        )
        # Every model step of a turn is given the carry the turn started with, so the state
        # saved by an earlier step is restored from the same agent the turn started at.
        start_name = self._turn_start(graph, carry)
        start = snapshot.gated(outputs, plan, start_name)
        shown_carry = turn.carried_state if self._carry_hook is not None else None
        # What a handoff input filter dropped from an earlier turn's history is not shown (`_history`).
        hidden = carry.hidden if carry is not None else ()
        visible = [m for m in turn.messages if m.sequence not in hidden]
        items, sequences = shown_input(turn, visible, shown_carry, state.tool_state)
        turn_input = TurnInput(items, sequences, hidden)
        # Messages that joined the turn: staged in a resumed run's state, else after a fresh
        # run's input (`_steered`).
        steered = steered_items(turn.steered_messages)
        joined = tuple(digest(item) for item in steered)
        with self._trace_scope():
            try:
                if restart is not None:
                    agent = snapshot.gated(outputs, plan, restart.agent)
                    turn_input = dataclasses.replace(turn_input, steered=(*restart.steered, *joined))
                    outcome = await self._advance(
                        turn, snapshot, agent, [*restart.input, *steered], turn_input, context, state, plan
                    )
                elif saved is None:
                    turn_input = dataclasses.replace(turn_input, steered=joined)
                    outcome = await self._advance(
                        turn, snapshot, start, [*turn_input.items, *steered], turn_input, context, state, plan
                    )
                else:
                    turn_input = dataclasses.replace(turn_input, steered=saved.steered)
                    # A tool guardrail tripped in a tool step: the run raises it, as plain's does.
                    failures.raise_tripwire({n: e.tool for n, e in snapshot.tools.items()})
                    parent_state, entries = split_agent_tools(cast(str, turn.framework_run_state))
                    if entries:
                        stepper = self._stepper(turn, context, values, failures)
                        step = await stepper.step_entries(entries, tree)
                        if step.moved:
                            # The sub-agent's model call may have changed the shared context.
                            now = with_step_state(
                                parent_state, self._contexts.dump(context), state.tool_state
                            )
                            # The parent's next model call takes the steered messages.
                            return agent_tool_outcome(stage_in_saved(now, steered), entries, step)
                        outputs.update(step.answers)
                        start = snapshot.gated(outputs, plan, start_name)
                    wrapper = RunContextWrapper(context=context)
                    run_state = await saved.restore(start, turn_input.items, wrapper)
                    answer_interruptions(run_state, wrapper, turn.tool_calls)
                    stage(run_state, steered)
                    outcome = await self._advance(
                        turn, snapshot, start, run_state, turn_input, None, state, plan
                    )
                return with_agent_tools(outcome, tree)
            except _GUARDRAIL_TRIPS as error:
                raise TurnAborted(_describe_trip(error)) from error
            except (MaxTurnsExceeded, ModelRefusalError, ModelBehaviorError) as error:
                # Terminal outcomes, never retried: plain's `Runner.run` raises them and ends
                # the run. The SDK's type and text: the run that exceeded its max_turns may be a
                # sub-agent's (`as_tool(max_turns=...)`), whose limit is not this flow's.
                raise TurnAborted(f"{type(error).__name__}: {error}") from error
            except UserError as error:
                # A setup mistake (graph changed under a saved state, bad tool config): retrying cannot help.
                raise TurnAborted(f"OpenAI Agents SDK: {error}") from error

    async def _advance(
        self,
        turn: AgentTurnContext,
        snapshot: GraphSnapshot,
        start: Agent[Any],
        run_input: list[TResponseInputItem] | RunState[Any, Any],
        turn_input: TurnInput,
        context: Any,
        step: StepState,
        plan: StepHookPlan,
    ) -> AgentTurnOutcome:
        hooks = StepHooks(self._hooks, plan)
        result = Runner.run_streamed(
            start,
            run_input,
            context=context,
            max_turns=self._max_turns,
            hooks=hooks,
            run_config=self._run_config,
            error_handlers=self._error_handlers,
        )
        hooks.result = result
        # A resumed run's result holds the earlier steps' responses and items too.
        responses_before, items_before = len(result.raw_responses), len(result.new_items)
        try:
            await stream_into(result, turn.events)
        except _ANSWERABLE_TRIPS as error:
            answer = self._on_guardrail_tripwire(error) if self._on_guardrail_tripwire else None
            if answer is None:
                raise
            # As the SDK's examples catch the tripwire: the turn's answer is the refusal,
            # and what the run made before the trip is not kept.
            usage = usage_of(result.raw_responses[responses_before:])
            return self._completed(
                turn,
                [answer_message(answer)],
                usage,
                result.last_agent,
                result.context_wrapper,
                final_output=_NO_OUTPUT,
                hidden=turn_input.hidden,
            )
        usage = usage_of(result.raw_responses[responses_before:])
        context_now = self._contexts.dump(result.context_wrapper.context)
        if result.interruptions:
            calls = [
                await self._deferred(item, snapshot, turn, result.context_wrapper)
                for item in result.interruptions
            ]
            return ToolCallsRequested(
                framework_run_state=dump_run_state(
                    result.to_state(),
                    turn_input.items,
                    context_now,
                    step.tool_state,
                    starts_agent=plain_stops(calls, snapshot.graph),
                    steered=turn_input.steered,
                ),
                tool_calls=calls,
                usage=usage,
            )
        if result.final_output is not None:
            prompt = retry_prompt(self._output_validator, result.final_output)
            if prompt is not None:
                # The restart's input holds every steered message so far: those of this run's
                # input, and those the run admitted (the only user items it produced).
                produced_now = result.to_input_list()[
                    len(ItemHelpers.input_to_new_input_list(result.input)) :
                ]
                in_input = (*turn_input.steered, *steered_user_digests(produced_now))
                return ContinueRequested(
                    framework_run_state=restart_state(result, prompt, context_now, step.tool_state, in_input),
                    note="the output validator refused the answer",
                    usage=usage,
                )
            # The SDK's history is the run's input and its new items; a stored message a
            # handoff input filter dropped from that input is hidden from now on (`_history`).
            hidden, added = turn_input.split(result.input)
            # The run's items as the SDK's history holds them (its reasoning item id policy
            # applied), after its input.
            history = result.to_input_list()
            produced = history[len(ItemHelpers.input_to_new_input_list(result.input)) :]
            messages = [
                *_added_messages(added, turn_input.steered),
                *(history_message(cast(dict[str, Any], item)) for item in produced),
            ]
            # The stored messages are the SDK's history: a final output no message carries
            # (`StopAtTools`, a custom `tool_use_behavior`, reasoning alone) is not made one;
            # the snapshot shows it as `framework_state["final_output"]`.
            carried = bool(result.new_items) and isinstance(result.new_items[-1], MessageOutputItem)
            return self._completed(
                turn,
                messages,
                usage,
                result.last_agent,
                result.context_wrapper,
                final_output=_NO_OUTPUT if carried else result.final_output,
                hidden=hidden,
            )
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
                skip_run_state=True,  # the handoff step only names the new agent
            )
            return ToolCallsRequested(
                framework_run_state=dump_run_state(
                    state,
                    turn_input.items,
                    context_now,
                    step.tool_state,
                    starts_agent=True,
                    steered=turn_input.steered,
                ),
                tool_calls=[call],
                usage=usage,
            )
        # Neither an answer, a tool call nor a handoff (reasoning only, or hosted tools the
        # provider ran): the SDK would call the model again. That call is a model step of its
        # own, so a crash repeats only it.
        return ContinueRequested(
            framework_run_state=dump_run_state(
                state,
                turn_input.items,
                context_now,
                step.tool_state,
                starts_agent=hooks.handed_off,
                steered=turn_input.steered,
            ),
            note=_continue_note(result.new_items[items_before:]),
            usage=usage,
        )

    def _completed(
        self,
        turn: AgentTurnContext,
        messages: list[FrameworkMessage],
        usage: AgentUsage,
        last_agent: Agent[Any],
        context: RunContextWrapper[Any],
        *,
        final_output: Any = _NO_OUTPUT,
        hidden: tuple[int, ...] = (),
    ) -> TurnCompleted:
        """The turn's end; ``final_output`` is the run's final output where no stored message
        carries it (else `_NO_OUTPUT`), shown in the snapshot's framework state; ``hidden``
        the stored messages the SDK's history no longer holds (`_history`)."""
        carry = TurnCarry(
            last_agent=last_agent.name, context=self._contexts.dump(context.context), hidden=hidden
        )
        view = carry.view()
        if final_output is not _NO_OUTPUT:
            view["final_output"] = final_output_value(final_output)
        if self._carry_hook is not None:
            if final_output is not _NO_OUTPUT:
                answer = final_output_text(final_output)
            else:
                answer = (messages[-1].text or "") if messages else ""
            carried = self._carry_hook(turn.carried_state, answer)
        elif (
            carry.context is None
            and not carry.hidden
            and not self._contexts.has_factory
            and carry.last_agent == self._graph().start_name
        ):
            # What a turn with no carry assumes (the starting agent, no context): say nothing.
            carried = None
        else:
            carried = carry.encode()
        # The messages a filter dropped leave the session's transcript too: it is the SDK's
        # history. The carry still names them, for sessions whose workflow predates that.
        return TurnCompleted(
            new_messages=messages, usage=usage, carry=carried, framework_state=view, superseded=list(hidden)
        )

    def _turn_start(self, graph: AgentGraph, carry: TurnCarry | None) -> str:
        if self._turns_start_at == "starting_agent" or carry is None:
            return graph.start_name
        # An agent renamed or removed by a deploy cannot be resumed: start where a new session would.
        return carry.last_agent if carry.last_agent in graph.agents else graph.start_name

    async def _deferred(
        self,
        item: ToolApprovalItem,
        snapshot: GraphSnapshot,
        turn: AgentTurnContext,
        context: RunContextWrapper[Any],
    ) -> DeferredToolCall:
        call_id = item.call_id
        if not call_id:
            raise SessionStateError(f"tool call to {item.name!r} has no call ID")
        name = _record_name(item)
        effect = self._spec_effects.get(name) or snapshot.framework_effect(name)
        arguments = item.arguments or "{}"
        entry = snapshot.tools.get(name)
        call = DeferredToolCall(
            tool_call_id=call_id,
            tool_name=name,
            arguments=arguments,
            policy=turn.resolve_tool_policy(name, effect, declared_policy=snapshot.declared_policy(name)),
            framework_approval=(
                await framework_approval(entry.tool, context, arguments, call_id)
                if entry is not None
                else _hosted_mcp_approval(self._graph(), name)
            ),
            # The tool step reads the run state for the context and for an agent tool's
            # sub-run; without either it needs none, and its input stays small.
            skip_run_state=not self._contexts.has_factory and not tree_of(self._graph()).is_agent_tool(name),
        )
        # A neutral spec's own rule (its FunctionTool never asks): the harness's tools.
        return await self._verifiable(with_tool_asks(call, self._specs.get(name)), entry)

    async def _verifiable(self, call: DeferredToolCall, entry: ToolEntry | None) -> DeferredToolCall:
        """A call of a spec with a `ToolSpec.verify` is deferred verifiable, its basis taken now.

        Only when the tool the model called is the spec's own function tool: an agent's tool
        of the same name is not the write the spec's verify knows how to check.
        """
        spec = self._specs.get(call.tool_name)
        if spec is None or spec.verify is None or entry is None:
            return call
        if self._spec_tools.get(spec.name) is not entry.tool:
            return call
        arguments = tool_arguments_object(call.arguments)
        basis = await spec.deferral_basis(arguments) if arguments is not None else None
        return dataclasses.replace(call, verifiable=True, verify_basis=basis)

    # -- tools ---------------------------------------------------------------------------

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        """The spec's `ToolSpec.verify`, for a write whose step died; None when it has none.

        Only a call deferred verifiable reaches here, so the spec's own function tool made it.
        """
        spec = self._specs.get(call.tool_call.tool_name)
        if spec is None or spec.verify is None:
            return None
        return await spec.run_verify(call.tool_call.parsed_arguments(), VerifyCall.of(call))

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
        saved = parse_run_state(call.run_state) if call.run_state is not None else None
        before = saved.context if saved is not None else None
        context = self._contexts.load(before, call.session_id)
        run_context = RunContextWrapper(context=context)
        snapshot = await graph.snapshot(run_context)
        entry = snapshot.tools.get(record.tool_name)
        hooks = self._hooks
        if entry is None:
            found = await tree_of(graph).find_tool(record.tool_name, run_context)
            if found is None:
                raise ToolExecutionError(f"unknown tool {record.tool_name!r}")
            entry, hooks = found
        # A sub-agent's call is recorded under its agent tool's call (`<parent>.<call>`); the
        # tool is given the model's own call ID, as in the nested run.
        call_id = record.tool_call_id.rsplit(SEPARATOR, 1)[-1]
        tool_context = ToolContext(
            context=context,
            tool_name=record.tool_name,
            tool_call_id=call_id,
            tool_arguments=record.arguments,
            tool_call=ResponseFunctionToolCall(
                type="function_call",
                call_id=call_id,
                name=record.tool_name,
                arguments=record.arguments,
            ),
            agent=entry.agent,
            run_config=self._run_config,
        )
        spec = self._specs.get(record.tool_name)
        tool_state: dict[str, Any] | None = None
        with self._trace_scope():
            if spec is not None and self._spec_tools.get(spec.name) is entry.tool:
                # The spec's own call keeps its `ToolOutput.state_update` (the tool state).
                await tool_started(hooks, entry.agent, entry.tool, tool_context)
                result = await spec.call_output(parse_tool_arguments(record.arguments), _invocation(record))
                await tool_ended(hooks, entry.agent, entry.tool, tool_context, result.text)
                run, tool_state = ToolRun(output=result.text), dict(result.state_update or {})
            elif tree_of(graph).is_agent_tool(record.tool_name) and steps_agent_tool(
                call.run_state, record.tool_call_id
            ):
                # The sub-agent's model calls and tool calls are steps of their own
                # (`_agent_tools`): this step only starts it, as the SDK starts the nested run.
                run = await input_verdict(entry.tool, entry.agent, tool_context) or ToolRun(
                    output=AGENT_TOOL_STARTED
                )
                if not run.failed:
                    await tool_started(hooks, entry.agent, entry.tool, tool_context)
            else:
                run = await run_tool_step(entry.tool, entry.agent, tool_context, record.arguments, hooks)
        # A context the model step did not save (a state written before it was durable) is a
        # fresh one here, and the next model step has nothing to apply a change to.
        changed = value_change(before, self._contexts.dump(context)) if before is not None else None
        if run.failed:
            raise ToolExecutionError(
                run.output, state_update=encode_failure(run.output, changed, run.tripwire)
            )
        update = encode_step_update(changed, tool_state, encode_tool_value(run.returned))
        return ToolExecutionResult(output=run.output, state_update=update)

    # -- helpers -------------------------------------------------------------------------

    def _build_graph(self) -> AgentGraph:
        source = self._agent
        agent = cast(Agent[Any], source) if isinstance(source, Agent) else source()
        graph = AgentGraph(agent, self._extra_tools, whole_responses=self._whole_responses)
        check_model_tools(graph, self._checked_config)
        check_run_config(self._checked_config, graph)
        tree_of(graph)
        return graph

    def _stepper(
        self, turn: AgentTurnContext, context: Any, values: Mapping[str, Any], failures: RecordedFailures
    ) -> Stepper:
        return Stepper(
            records=turn.tool_calls,
            values=values,
            context=context,
            run_config=self._run_config,
            defer=lambda item, snapshot, wrapper: self._deferred(item, snapshot, turn, wrapper),
            failures=failures,
        )

    def _graph(self) -> AgentGraph:
        return self._graph_cache if isinstance(self._agent, Agent) else self._build_graph()

    def _trace_scope(self) -> AbstractContextManager[Any]:
        # A disabled trace as the current one also keeps runs nested in tools (agents as tools
        # with their own run config) from starting traces of their own.
        return nullcontext() if self._tracing else trace("sessionflow", disabled=True)


def _added_messages(added: Sequence[TResponseInputItem], steered: Sequence[str]) -> list[FrameworkMessage]:
    """Stored messages for the run's input items no stored message holds: a steered message
    (named by its digest, each once) is the user's, anything else an item the runner added."""
    waiting = list(steered)
    messages: list[FrameworkMessage] = []
    for item in added:
        raw = cast(dict[str, Any], item)
        key = digest(raw) if raw.get("role") == "user" else None
        if key is not None and key in waiting:
            waiting.remove(key)
            messages.append(history_message(raw))
        else:
            messages.append(input_item_message(raw))
    return messages


def _invocation(record: AgentToolCall) -> ToolInvocation:
    return current_tool_invocation() or ToolInvocation(
        tool_call_id=record.tool_call_id, idempotency_key=record.tool_call_id, attempt=1
    )


def _saved_state(text: str | None) -> tuple[SavedRunState | None, Restart | None]:
    """The step's saved run state: an SDK run, or a restart after a refused answer (`_retry`)."""
    if text is None:
        return None, None
    restart = read_restart(text)
    return (None, restart) if restart is not None else (parse_run_state(text), None)


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


def _hosted_mcp_approval(graph: AgentGraph, tool_name: str) -> FrameworkApproval | None:
    """``"required"`` when the hosted server's own ``require_approval`` asks for this call."""
    label, _, tool = tool_name.partition(".")
    for agent in graph.agents.values():
        for hosted in agent.tools:
            if isinstance(hosted, HostedMCPTool) and hosted.tool_config.get("server_label") == label:
                setting: Any = hosted.tool_config.get("require_approval", "always")
                if setting == "always":
                    return "required"
                if isinstance(setting, dict):
                    always: Any = cast(dict[str, Any], setting).get("always") or {}
                    if tool in (cast(dict[str, Any], always).get("tool_names") or []):
                        return "required"
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
