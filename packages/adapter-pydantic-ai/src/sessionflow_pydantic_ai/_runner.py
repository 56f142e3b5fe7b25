"""`PydanticAIRunner`: a Pydantic AI agent behind sessionflow's runner contract."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any, TypeAlias, cast

import pydantic_core
from pydantic_ai.agent import AbstractAgent, EventStreamHandler
from pydantic_ai.capabilities import AbstractCapability, HandleDeferredToolCalls, ProcessEventStream
from pydantic_ai.capabilities.abstract import leaf_capabilities
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, UserContent, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset

from sessionflow import AgentToolCall, AgentToolCallStatus, AgentUsage, ImageInput, UnsupportedOptionError
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    CarryHook,
    ContinueRequested,
    DeferredToolExecution,
    FrameworkMessage,
    OutputValidator,
    ToolCallsRequested,
    ToolExecutionResult,
    ToolSpec,
    TurnAborted,
    TurnCompleted,
    VerifyCall,
    VerifyResult,
    apply_value_change,
    value_change,
)
from sessionflow_pydantic_ai._carry import Carry, decode_carry, encode_carry
from sessionflow_pydantic_ai._delegation import install as install_delegation
from sessionflow_pydantic_ai._deps import DepsCodec, DepsFactory, DepsResources
from sessionflow_pydantic_ai._effects import deferred_tool_call, marked_tools
from sessionflow_pydantic_ai._execution import execute_tool_call
from sessionflow_pydantic_ai._framework_history import (
    CarriedHistory,
    extends,
    system_prompt_of,
    with_system_prompt,
)
from sessionflow_pydantic_ai._history import conversation_of
from sessionflow_pydantic_ai._images import InlinedImages, user_message_with_images
from sessionflow_pydantic_ai._limits import (
    UsageLimitsOption,
    check_after_response,
    refusal_before_request,
    refusing_model,
    turn_usage,
    usage_limits_for,
)
from sessionflow_pydantic_ai._messages import (
    RunState,
    ToolStepView,
    framework_messages,
    load_messages,
    render_output,
    user_message,
)
from sessionflow_pydantic_ai._model_step import run_model_call
from sessionflow_pydantic_ai._partial_output import PARTIAL_OUTPUT_INTERVAL
from sessionflow_pydantic_ai._results import deferred_tool_results
from sessionflow_pydantic_ai._retries import RetryBudget, record_attempts
from sessionflow_pydantic_ai._settings import ModelSettingsOption, turn_model_settings
from sessionflow_pydantic_ai._step_update import (
    delegated_usage,
    encode_step_update,
    read_step_update,
    returned_values,
    usage_json,
)
from sessionflow_pydantic_ai._tool_sources import spec_asks, spec_map, tool_spec_toolset
from sessionflow_pydantic_ai._typed_output import OUTPUT_KEY, output_json
from sessionflow_pydantic_ai._waits import plain_deferred, resolved_record, split_as_plain, waits_for

__all__ = ["AgentSource", "DepsFactory", "InstructionsOverride", "ModelOverride", "PydanticAIRunner"]

CARRIED_PREFIX = "[sessionflow] Carried from the previous turn: "

AgentSource: TypeAlias = "AbstractAgent[Any, Any] | Callable[[], AbstractAgent[Any, Any]]"
"""An agent, or a zero-argument factory that builds it (called once per process, on first use)."""


ModelOverride: TypeAlias = "Model | str | Callable[[AgentTurnContext], Model | str | None]"
"""A model used instead of the agent's, or a function choosing one per model step (None keeps the agent's)."""

InstructionsOverride: TypeAlias = "str | Callable[[AgentTurnContext], str | None]"
"""Instructions used instead of the agent's, or a function choosing them per model step (None keeps them)."""


class PydanticAIRunner(AgentFrameworkRunner):
    """Drives one Pydantic AI agent, one model request per step, with every tool deferred.

    The runner keeps no state between calls: each call rebuilds what it needs from its
    arguments, so calls may repeat after a crash and run concurrently.

    Args:
        agent: The agent, or a zero-argument factory returning it.
        deps_factory: Builds a session's ``deps`` once, at its first model step. The deps then
            live for the whole run: a change by a tool, an instructions function or an
            output validator reaches every later step and the next turn. They travel as
            JSON, so make them a dataclass or a pydantic model (`_deps`).
        deps_resources: Opens the worker's resources (an async context manager giving
            field name -> object: clients, connections), once per worker, closed when the
            worker stops; every step puts them into those fields of the deps, which are
            never stored.
        tool_sources: Neutral tool specs added to the agent's own tools.
        toolsets: Toolsets added to every run of the agent, as ``agent.run(toolsets=...)``
            adds them to one run.
        model_override: Replaces the agent's model, statically or per model step.
        instructions_override: Replaces the agent's instructions, statically or per model step.
        usage_limits: Pydantic AI's `UsageLimits` for each turn (one plain run), or a function
            of the turn choosing them; a spent limit fails the turn with Pydantic AI's text.
        model_settings: The run's `model_settings` for each turn, or a function of the turn
            choosing them; merged over the agent's own.
        partial_output_interval: While a structured output streams, its partial output is
            published (a ``custom_event`` of kind ``partial_output``) at most once per this
            many seconds; 0 publishes every change, None none.
        event_stream_handler: Called with each model request's and each tool node's event
            stream, as ``agent.run(event_stream_handler=...)`` calls it, in the model steps:
            the tools' call and result events come from the model step that resumes with
            their results, for every call of the response, in the model's order.
        validate_partial_output: Run the output validators, output functions and output
            hooks on each partial output (``ctx.partial_output`` True), as
            ``run_stream().stream_output()`` does. Off by default: the session runs them as
            ``agent.run`` does, on the final output only, and a partial output is the output
            type's own validation of the snapshot (none for an output function).
        carry: Decides the carry itself (`CarryHook`, a harness's): it gets the carry the turn
            started with and the final answer (as text), and returns the next turn's (None:
            none). The next turn's model steps see it as run instructions (``[sessionflow]
            Carried from the previous turn: ...``, as ``agent.run(instructions=...)`` adds
            them), and it replaces the runner's own carry: the deps then last for the turn.
        output_validator: Checks the final answer (its text, a structured output as JSON)
            after the agent's own output validators accepted it: None accepts it; a string is
            a prompt the model gets as the next user message, in a model step of its own
            (`ContinueRequested`), after the refused answer, as a follow-up ``agent.run``
            with the run's messages would send it.
    """

    def __init__(
        self,
        agent: AgentSource,
        *,
        deps_factory: DepsFactory | None = None,
        deps_resources: DepsResources | None = None,
        tool_sources: Sequence[ToolSpec] = (),
        toolsets: Sequence[AbstractToolset[Any]] = (),
        model_override: ModelOverride | None = None,
        instructions_override: InstructionsOverride | None = None,
        usage_limits: UsageLimitsOption | None = None,
        model_settings: ModelSettingsOption | None = None,
        partial_output_interval: float | None = PARTIAL_OUTPUT_INTERVAL,
        validate_partial_output: bool = False,
        event_stream_handler: EventStreamHandler[Any] | None = None,
        carry: CarryHook | None = None,
        output_validator: OutputValidator | None = None,
    ) -> None:
        # Agent runs a tool starts are journaled in its step (`_delegation`): once per process.
        install_delegation()
        self._agent_source = agent
        self._agent: AbstractAgent[Any, Any] | None = agent if isinstance(agent, AbstractAgent) else None
        self._agent_lock = threading.Lock()
        self._deps = DepsCodec(deps_factory, deps_resources)
        self.tool_sources: tuple[ToolSpec, ...] = tuple(tool_sources)
        self._specs = spec_map(self.tool_sources)
        self._carry_hook = carry
        self._output_validator = output_validator
        # Given to every run, model steps' and tool steps' alike, as `agent.run(toolsets=...)`
        # gives them to one run: after the agent's own toolsets.
        self._toolsets: list[AbstractToolset[Any]] = [
            *([tool_spec_toolset(self.tool_sources)] if tool_sources else []),
            *toolsets,
        ]
        self._model_override = model_override
        self._instructions_override = instructions_override
        self._usage_limits = usage_limits
        self._model_settings = model_settings
        self._partial_output_interval = partial_output_interval
        self._validate_partial_output = validate_partial_output
        # What `agent.run` does with its handler; model steps only, so a tool step's node
        # (whose events the next model step streams) does not call it once more.
        self._run_capabilities: list[AbstractCapability[Any]] = (
            [ProcessEventStream(event_stream_handler)] if event_stream_handler is not None else []
        )
        if self._agent is not None:
            _check_capabilities(self._agent)
        if self._agent is not None and not callable(model_override):
            # Known now, so refused now: Pydantic AI would refuse every model step for it.
            _check_model(self._agent, model_override)

    @property
    def agent(self) -> AbstractAgent[Any, Any]:
        """The agent, built by the factory on first use (once per process)."""
        with self._agent_lock:
            if self._agent is None:
                source = self._agent_source
                built = source() if callable(source) else source
                if not isinstance(built, AbstractAgent):  # pyright: ignore[reportUnnecessaryIsInstance]
                    raise UnsupportedOptionError(
                        "agent",
                        f"the agent factory returned {type(built).__name__}, expected a pydantic_ai Agent",
                    )
                self._agent = built
            return self._agent

    async def _resolved_agent(self) -> AbstractAgent[Any, Any]:
        if self._agent is not None:
            return self._agent
        # A factory may import model SDKs for seconds; off the event loop, heartbeats keep going.
        return await asyncio.to_thread(lambda: self.agent)

    def build_user_message(self, text: str) -> FrameworkMessage:
        return user_message(text)

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        return user_message_with_images(text, images)

    def accepts_steering(self) -> bool:
        """Steered messages join the run with ``AgentRun.enqueue``, after the step's tool
        results (`_steered_requests`)."""
        return True

    def worker_scope(self) -> AbstractAsyncContextManager[None]:
        return self._deps.worker_scope()

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        state = RunState.from_json(turn.framework_run_state) if turn.framework_run_state is not None else None
        # A carry hook's carry is its own text, shown to the model, not the runner's encoding.
        carry = decode_carry(turn.carried_state) if self._carry_hook is None else Carry()
        # The history Pydantic AI starts from: its own where a processor rewrote it (kept
        # since), else the stored messages; either way followed by the turn's so far.
        base, kept = _framework_history(turn, state, carry.history)
        # The system prompt the session's first request made, at the history's head again.
        system_prompt = (
            state.system_prompt if state is not None and state.system_prompt else carry.system_prompt
        )
        if not kept and system_prompt is not None:
            base = with_system_prompt(base, system_prompt)
        images = InlinedImages()
        history = images.inline(base)
        # A turn's prompt goes to Pydantic AI as `agent.run` gives it, after the history: a
        # history it is handed is cleaned first (adjacent requests merge), the prompt is not.
        prompt = _turn_prompt(history) if state is None else None
        if prompt is not None:
            history = history[:-1]
        results = None
        budget = state.budget if state is not None else RetryBudget()
        attempts: dict[str, Any] = {}
        agent = await self._resolved_agent()
        deps = await self._step_deps(agent, turn, state, carry)
        if state is not None:
            if state.deferred:
                values = {**state.values, **returned_values(turn.state_updates())}
                waits = waits_for(state.deferred, turn.recorded_tool_call, state.waiting)
                if waits:
                    # Calls that deferred themselves: the turn waits for them, no request yet.
                    waiting = {**state.waiting, **{call.tool_call_id: wait for call, wait in waits}}
                    later = replace(state, waiting=waiting, values=values, deps=self._deps.dump(deps))
                    return ToolCallsRequested(
                        framework_run_state=later.to_json(), tool_calls=[call for call, _ in waits]
                    )
                call_ids = [c.tool_call_id for c in state.response.tool_calls]
                resumed = deferred_tool_results(
                    state.deferred,
                    call_ids,
                    lambda call_id: resolved_record(call_id, turn.recorded_tool_call, state.waiting),
                    budget,
                    values,
                )
                results, budget, attempts = resumed.results, resumed.budget, resumed.attempts
        model = self._model(turn)
        # A factory or a per-step override shows the model only now; as final as at build.
        _check_model(agent, model)
        _check_capabilities(agent)
        # Each step is a fresh run: the limits are checked against the turn's usage so far.
        limits = usage_limits_for(self._usage_limits, turn)
        used = turn_usage(state.messages if state is not None else [], turn.tool_calls.values())
        # Agent runs nested in the turn's tools count as the plain run counts them (`usage=ctx.usage`).
        used.incr(delegated_usage(_updates_of(turn.tool_calls.values())))
        nested = delegated_usage(turn.state_updates()) if state is not None and state.deferred else None
        refusal = refusal_before_request(limits, used)
        if refusal is not None:
            # Only a request the step actually sends fails the turn (see `refusing_model`).
            model = refusing_model(agent, model, refusal)
        with self._instructions(agent, turn), turn_model_settings(agent, self._model_settings, turn):
            try:
                step = await run_model_call(
                    agent,
                    history,
                    results=results,
                    events=turn.events,
                    deps=deps,
                    model=model,
                    toolsets=self._toolsets,
                    conversation_id=conversation_of(base, turn.session_id),
                    output_retries_used=budget.output,
                    tool_retries=budget.tools,
                    run_step=sum(isinstance(m, ModelResponse) for m in state.messages) if state else 0,
                    established_tools=state.established_tools if state else None,
                    partial_output_interval=self._partial_output_interval,
                    validate_partial_output=self._validate_partial_output,
                    add_system_prompt=not kept and system_prompt is None,
                    capabilities=self._run_capabilities,
                    # A turn's later steps go on with its run, which rendered it when it started.
                    reevaluate_system_prompt=state is None,
                    user_prompt=prompt,
                    instructions=self._carried_instructions(turn),
                    steered=_steered_requests(turn, images),
                )
            except UnexpectedModelBehavior as error:
                # A spent retry budget (or a response Pydantic AI cannot use): the plain run
                # ends with this error, and a new attempt of the step would end the same way.
                raise TurnAborted(str(error)) from error
        check_after_response(limits, used, step.usage, step.new_messages, len(step.deferred))
        if prompt is not None:
            # The request Pydantic AI made of the prompt: the session stored it when it arrived.
            # Only the first: a steered message with the prompt's very text is the user's own.
            carrier = next((m for m in step.new_messages if _carries(m, prompt)), None)
            step.new_messages = [m for m in step.new_messages if m is not carrier]
        record_attempts(step.new_messages, attempts)
        framework = images.restore(step.history)
        if state is not None and state.deferred:
            held = plain_deferred(state.deferred, turn.recorded_tool_call, state.waiting)
            split = split_as_plain(step.new_messages, held)
            if len(split) > len(step.new_messages):  # one results request became two
                framework = _replaced(framework, step.new_messages[0], split[:2])
            step.new_messages = split
        # Kept from here on once a processor rewrote it (or it was kept already).
        history_now = (
            framework if kept or not extends(base, framework, prompt_apart=prompt is not None) else None
        )
        system_prompt_now = system_prompt_of(framework) if history_now is None else None
        budget = RetryBudget(step.tool_retries, step.output_retries_used)
        step_usage = step.usage if nested is None else step.usage + nested
        usage = AgentUsage(
            requests=step_usage.requests,
            input_tokens=step_usage.input_tokens,
            output_tokens=step_usage.output_tokens,
        )
        earlier = list(state.messages) if state is not None else []
        if state is not None and state.retry_request is not None and step.resumed_request is not None:
            # The retry request this step sent, as Pydantic AI recorded it when sending it.
            earlier[-1] = step.resumed_request
        messages = [*earlier, *images.restore(step.new_messages)]
        # Instructions functions and output validators may have changed the deps too.
        deps_now = self._deps.dump(deps)
        has_deps = self._deps.has_factory
        if step.retry_requested:
            next_state = RunState(
                messages=messages,
                deferred=[],
                budget=budget,
                has_deps=has_deps,
                deps=deps_now,
                established_tools=step.established_tools,
                history=history_now,
                system_prompt=system_prompt_now,
            )
            return ContinueRequested(
                framework_run_state=next_state.to_json(),
                note="Pydantic AI refused the answer and asks the model again",
                usage=usage,
            )
        if step.deferred:
            marked = marked_tools([*self.agent.toolsets, *self._toolsets])
            calls = [
                await spec_asks(
                    deferred_tool_call(c, step.tool_defs.get(c.tool_name), turn, marked),
                    self._specs.get(c.tool_name),
                )
                for c in step.deferred
            ]
            next_state = RunState(
                messages=messages,
                deferred=[c.tool_call_id for c in calls],
                budget=budget,
                has_deps=has_deps,
                deps=deps_now,
                established_tools=step.established_tools,
                history=history_now,
                system_prompt=system_prompt_now,
            )
            return ToolCallsRequested(framework_run_state=next_state.to_json(), tool_calls=calls, usage=usage)
        final_text = render_output(step.output)
        retry_prompt = self._output_validator(final_text) if self._output_validator is not None else None
        if retry_prompt is not None:
            # The answer stays in the turn's messages; the prompt is the request the next
            # step sends, as a follow-up run given these messages would send it.
            asked = ModelRequest(parts=[UserPromptPart(content=retry_prompt)])
            next_state = RunState(
                messages=[*messages, asked],
                deferred=[],
                budget=budget,
                has_deps=has_deps,
                deps=deps_now,
                established_tools=step.established_tools,
                history=[*history_now, asked] if history_now is not None else None,
                system_prompt=system_prompt_now,
            )
            return ContinueRequested(
                framework_run_state=next_state.to_json(),
                note="the output validator refused the answer and asks the model again",
                usage=usage,
            )
        new_messages = framework_messages(messages, final_text=final_text)
        carried = None
        if history_now is not None:
            last = turn.messages[-1].sequence if turn.messages else 0
            carried = CarriedHistory(history_now, through=last + len(new_messages))
        if self._carry_hook is not None:
            carry_now = self._carry_hook(turn.carried_state, final_text)
        else:
            carry_now = encode_carry(has_deps, deps_now, carried, system_prompt_now)
        return TurnCompleted(
            new_messages=new_messages,
            usage=usage,
            carry=carry_now,
            # The output as JSON (`read_output` types it), first: the view keeps keys in order.
            framework_state={
                OUTPUT_KEY: output_json(step.output),
                **({"deps": deps_now} if has_deps else {}),
            },
        )

    async def _step_deps(
        self, agent: AbstractAgent[Any, Any], turn: AgentTurnContext, state: RunState | None, carry: Carry
    ) -> Any:
        """The run's deps for this model step: the turn's (or the last turn's), with the
        changes of the tool steps since the last model step applied in model order."""
        if not self._deps.has_factory:
            return None
        self._deps.learn_type(agent.deps_type)
        if state is not None and state.has_deps:
            has_deps, data = True, state.deps
        else:
            has_deps, data = carry.has_deps, carry.deps
        if not has_deps:
            return await self._deps.fresh()  # the session's first turn
        for tool_call_id, text in turn.state_updates():
            change = read_step_update(tool_call_id, text).deps
            if change is not None:
                data = apply_value_change(data, change)
        return await self._deps.load(data)

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        agent = await self._resolved_agent()
        record = call.tool_call
        view = RunState.read_for_tool(call.run_state) if call.run_state else ToolStepView()
        has_deps, before = view.has_deps, view.deps
        wait = view.waiting.get(record.tool_call_id)
        if wait is not None and wait.kind == "result":
            # The result from outside is the person's (or system's) answer: no tool runs.
            return ToolExecutionResult(output=record.answer or "")
        if self._deps.has_factory:
            self._deps.learn_type(agent.deps_type)
            # A state written before deps travelled has none: fresh deps, as steps had then.
            deps = await self._deps.load(before if has_deps else None)
        else:
            before, deps = None, None
        done = await execute_tool_call(
            agent,
            record,
            deps=deps,
            toolsets=self._toolsets,
            conversation_id=view.conversation_id or call.session_id,
            call_id=wait.call if wait is not None else None,
            # What the tool sees as ctx.tool_call_approved: a person approved it, or a policy
            # waived the approval its requires_approval asks for.
            approved=wait is not None
            or record.approval_source is not None
            or record.policy.requires_approval is False,
            run_step=view.run_step,
            events=call.events,
        )
        part = done.part
        changed = value_change(before, self._deps.dump(deps)) if before is not None else None
        # Text is what the record holds already; anything else goes back as the value.
        returned = not isinstance(part.content, str)
        content = pydantic_core.to_jsonable_python(part.content) if returned else None
        return ToolExecutionResult(
            output=part.model_response_str(),
            state_update=encode_step_update(changed, returned, content, usage_json(done.delegated_usage)),
        )

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        """The tool spec's `ToolSpec.verify`, for a write whose step died; None when it has none."""
        spec = self._specs.get(call.tool_call.tool_name)
        if spec is None or spec.verify is None:
            return None
        return await spec.run_verify(call.tool_call.parsed_arguments(), VerifyCall.of(call))

    def _carried_instructions(self, turn: AgentTurnContext) -> str | None:
        """A carry hook's carry, as the run's own instructions (worded as the builtin runner's)."""
        if self._carry_hook is None or not turn.carried_state:
            return None
        return CARRIED_PREFIX + turn.carried_state

    def _model(self, turn: AgentTurnContext) -> Model | str | None:
        override = self._model_override
        if callable(override):
            return override(turn)
        return override

    def _instructions(
        self, agent: AbstractAgent[Any, Any], turn: AgentTurnContext
    ) -> AbstractContextManager[None]:
        override = self._instructions_override
        instructions = override(turn) if callable(override) else override
        if instructions is None:
            return nullcontext()
        # Agent.override is context-local, so concurrent steps of other sessions are unaffected.
        return agent.override(instructions=instructions)


def _framework_history(
    turn: AgentTurnContext, state: RunState | None, carried: CarriedHistory | None
) -> tuple[list[ModelMessage], bool]:
    """The history a model step hands Pydantic AI, and whether it is Pydantic AI's own (kept
    since a processor rewrote it) rather than rebuilt from the stored messages."""
    if state is not None and state.history is not None:
        return list(state.history), True
    turn_so_far = list(state.messages) if state is not None else []
    if carried is not None:
        since = [m.message.framework_item for m in turn.messages if m.sequence > carried.through]
        return [*carried.messages, *load_messages(since), *turn_so_far], True
    return [*load_messages(m.message.framework_item for m in turn.messages), *turn_so_far], False


def _steered_requests(turn: AgentTurnContext, images: InlinedImages) -> list[ModelRequest]:
    """The step's steered messages as the requests `build_user_message` made of them.

    Each is its own request, as ``AgentRun.enqueue`` of a request delivers it, right after
    the step's tool results: stored apart from them, so the turn's messages hold it as the
    user's. The model is sent the body ``agent.run(prompt, deferred_tool_results=...)`` sends
    with the same prompt, which puts it in the results request; later steps send it where
    it sits, after the results.
    """
    loaded = images.inline(load_messages(m.framework_item for m in turn.steered_messages))
    return [m for m in loaded if isinstance(m, ModelRequest)]


def _turn_prompt(history: list[ModelMessage]) -> str | list[UserContent] | None:
    """The prompt of the turn's stored request, when the history ends with it alone (one user
    prompt part, nothing Pydantic AI filled in yet); None otherwise."""
    last = history[-1] if history else None
    if not isinstance(last, ModelRequest) or last.run_id is not None or len(last.parts) != 1:
        return None
    part = last.parts[0]
    if not isinstance(part, UserPromptPart):
        return None
    return part.content if isinstance(part.content, str) else list(part.content)


def _carries(message: ModelMessage, prompt: str | list[UserContent]) -> bool:
    """Whether ``message`` is the request Pydantic AI made of the turn's ``prompt``."""
    if not isinstance(message, ModelRequest):
        return False
    contents = [p.content for p in message.parts if isinstance(p, UserPromptPart)]
    return contents == [prompt]


def _replaced(
    messages: list[ModelMessage], old: ModelMessage | None, new: list[ModelMessage]
) -> list[ModelMessage]:
    """``messages`` with ``old`` (the very object) replaced by ``new``; unchanged without it."""
    for index, message in enumerate(messages):
        if message is old:
            return [*messages[:index], *new, *messages[index + 1 :]]
    return messages


def _check_capabilities(agent: AbstractAgent[Any, Any]) -> None:
    """Refuse what a session cannot run as the plain run does (`HandleDeferredToolCalls`)."""
    root = getattr(agent, "root_capability", None)
    if not isinstance(root, AbstractCapability):
        return
    for capability in leaf_capabilities(cast(AbstractCapability[Any], root)):
        if isinstance(capability, HandleDeferredToolCalls):
            # A model step stops before Pydantic AI would hand the response's deferred calls
            # to the handler: the session asks a person for each, and the handler never runs.
            raise UnsupportedOptionError(
                "capabilities",
                "HandleDeferredToolCalls: a session decides deferred tool calls itself, as durable "
                "waits a person answers (resolve_interrupt), so the handler would never run; remove "
                "the capability and answer the session's approvals, or give the tools an explicit "
                "policy (options.tool_policies) that needs no approval",
            )


def _check_model(agent: AbstractAgent[Any, Any], model: Model | str | None) -> None:
    if model is None and agent.model is None:
        raise UnsupportedOptionError(
            "model",
            f"agent {agent.name or 'without a name'} has no model and no model_override gives one; "
            "give the agent a model or pass model_override",
        )


def _updates_of(records: Iterable[AgentToolCall]) -> list[tuple[str, str]]:
    """The turn's successful calls' updates held inline (a nested run's usage is small)."""
    return [
        (r.tool_call_id, r.state_update)
        for r in records
        if r.status is AgentToolCallStatus.SUCCEEDED and r.state_update is not None
    ]
