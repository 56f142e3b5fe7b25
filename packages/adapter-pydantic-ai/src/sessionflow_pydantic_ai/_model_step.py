"""One model call of a turn: drive `Agent.iter` node by node and stop before any tool runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pydantic_ai import CallToolsNode, DeferredToolResults, FinalResultEvent, ModelRequestNode, RunContext
from pydantic_ai._agent_graph import UserPromptNode, build_run_context
from pydantic_ai._output import TextOutputProcessor
from pydantic_ai.agent import AbstractAgent, AgentRun
from pydantic_ai.capabilities import (
    AbstractCapability,
    AgentNode,
    CapabilityOrdering,
    PrepareOutputTools,
    PrepareTools,
    ValidatedToolArgs,
    WrapToolExecuteHandler,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    UserContent,
)
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RunUsage
from pydantic_graph import End

from sessionflow.kit import AgentEventWriter
from sessionflow_pydantic_ai._framework_history import SystemPromptFirst
from sessionflow_pydantic_ai._partial_output import PARTIAL_OUTPUT_INTERVAL, PartialOutputs

__all__ = ["ModelStepResult", "run_model_call"]


@dataclass
class ModelStepResult:
    """What one model call produced.

    `deferred` holds the calls the session must run, in model order; when it is empty the
    turn is complete and `output` is the agent's final output.
    """

    new_messages: list[ModelMessage]
    usage: RunUsage
    deferred: list[ToolCallPart] = field(default_factory=lambda: [])
    tool_defs: dict[str, ToolDefinition] = field(default_factory=lambda: {})
    output: Any = None
    retry_requested: bool = False
    """Pydantic AI refused the answer and would ask again: `new_messages` ends with its
    retry request, which the next model step sends."""
    output_retries_used: int = 0
    """The run's output retries after this step (``ctx.state.output_retries_used``)."""
    tool_retries: dict[str, int] = field(default_factory=lambda: {})
    """Each tool's retry count as the run's next step would start with it (``ctx.retries``)."""
    established_tools: list[str] | None = None
    """The tools the model has been offered in this turn so far (None: none yet)."""
    history: list[ModelMessage] = field(default_factory=lambda: [])
    """Pydantic AI's whole message history after the step (``all_messages()``, and the retry
    request when one is due): what a history processor left of it, and the new messages."""
    resumed_request: ModelRequest | None = None
    """The request the step resumed and sent, as Pydantic AI recorded it when sending it
    (instructions, run): a stored request is sent anew."""


@dataclass
class _ToolDefinitions:
    """Records the tool definitions of the current step, through two public capability hooks."""

    by_name: dict[str, ToolDefinition] = field(default_factory=lambda: {})

    def record(self, ctx: RunContext[Any], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        self.by_name.update((d.name, d) for d in tool_defs)
        return tool_defs

    def capabilities(self) -> list[AbstractCapability[Any]]:
        return [PrepareTools(self.record), PrepareOutputTools(self.record)]

    def is_output_tool(self, name: str) -> bool:
        tool_def = self.by_name.get(name)
        return tool_def is not None and tool_def.kind == "output"


async def run_model_call(
    agent: AbstractAgent[Any, Any],
    history: Sequence[ModelMessage],
    *,
    results: DeferredToolResults | None,
    events: AgentEventWriter,
    deps: Any,
    model: Model | str | None,
    toolsets: Sequence[AbstractToolset[Any]],
    conversation_id: str,
    output_retries_used: int = 0,
    tool_retries: Mapping[str, int] | None = None,
    run_step: int = 0,
    established_tools: Sequence[str] | None = None,
    partial_output_interval: float | None = PARTIAL_OUTPUT_INTERVAL,
    validate_partial_output: bool = False,
    add_system_prompt: bool = True,
    capabilities: Sequence[AbstractCapability[Any]] = (),
    reevaluate_system_prompt: bool = True,
    user_prompt: str | Sequence[UserContent] | None = None,
    instructions: str | None = None,
    steered: Sequence[ModelRequest] = (),
) -> ModelStepResult:
    """Make at most one model request and return before any function tool runs.

    `history` is every stored message plus, when resuming, the turn's run state; `results`
    answers the calls of its last response. Pydantic AI handles the results (no tool
    runs for a supplied result), the request, and the output; when the response asks for
    function tools, the run stops at the tools node and returns them instead of running
    them. Output tool calls are left to Pydantic AI, which validates them in-process.
    While the response streams, its partial output is published at most once per
    `partial_output_interval` seconds (`_partial_output`; None: never), validated by the
    run's output validators only when `validate_partial_output` (``run_stream``'s way).
    `add_system_prompt` puts the agent's system prompt at the history's head, where a
    history rebuilt from stored messages lacks it; a history Pydantic AI kept has it as
    the plain run's has it (or not, if a processor dropped it). `capabilities` are the run's
    own, as ``agent.run(capabilities=...)`` adds them. `reevaluate_system_prompt` is False
    for a step that goes on with the turn's run: a plain run renders its dynamic system
    prompt once, when it starts. `user_prompt` is the turn's prompt, given as ``agent.run``
    gives it (after the history, which Pydantic AI cleans without it). `instructions` are
    the run's own, added to the agent's as ``agent.run(instructions=...)`` adds them.
    `steered` are user messages that joined the turn while it ran (`steered_requests`): each
    goes to the run with ``AgentRun.enqueue``, Pydantic AI's own way to add a message to a
    running run, which delivers it as a request of its own right after this step's tool
    results (or the prompt), ahead of the model call.
    """
    definitions = _ToolDefinitions()
    guard = _FunctionToolGuard()
    async with agent.iter(
        user_prompt,
        message_history=history,
        deferred_tool_results=results,
        deps=deps,
        model=model,
        toolsets=toolsets,
        conversation_id=conversation_id,
        instructions=instructions,
        # Stored messages never carry the agent's system prompt: until one travels with the
        # session, Pydantic AI renders it at the history's head, as it opens a conversation,
        # before any history processor sees the history (where the plain run's has it).
        capabilities=[
            *([SystemPromptFirst()] if add_system_prompt else []),
            *capabilities,
            *definitions.capabilities(),
            guard,
        ],
    ) as run:
        # The turn's earlier steps used these (an output validator's retries): the budget
        # Pydantic AI checks is the run's, and this run is one step of it.
        run.ctx.state.output_retries_used = output_retries_used
        # The turn's steps so far (its model responses): this request is the next one, as
        # `ctx.run_step` counts in one plain run (tools and `prepare` functions read it).
        run.ctx.state.run_step = run_step
        # The tools this turn's earlier requests offered: a tool that appears later (a dynamic
        # toolset, `prepare_tools`) is announced to the model, as within one plain run.
        if established_tools is not None:
            run.ctx.deps.established_tool_names = set(established_tools)
        _carry_tool_retries(run, tool_retries or {})
        for request in steered:
            run.enqueue(request)
        if user_prompt is None:
            _stamp_retry_request(history, run)
        node = run.next_node
        if not reevaluate_system_prompt and isinstance(node, UserPromptNode):
            node.system_prompt_dynamic_functions = {}
        requested = False
        while not isinstance(node, End):
            if isinstance(node, ModelRequestNode):
                if requested:
                    # A second request in one run is Pydantic AI asking again after a refused
                    # answer: that request is the next model step's (a "continue").
                    return ModelStepResult(
                        new_messages=[*run.new_messages(), node.request],
                        usage=run.usage,
                        retry_requested=True,
                        output_retries_used=run.ctx.state.output_retries_used,
                        tool_retries=_next_tool_retries(run),
                        established_tools=_established(run),
                        history=[*run.all_messages(), node.request],
                        resumed_request=run.ctx.deps.resumed_request,
                    )
                await _stream_request(node, run, events, partial_output_interval, validate_partial_output)
                requested = True
            elif isinstance(node, CallToolsNode) and requested:
                deferred = [
                    c for c in node.model_response.tool_calls if not definitions.is_output_tool(c.tool_name)
                ]
                if deferred and run.ctx.deps.end_strategy == "early" and _may_end_early(run, node, deferred):
                    after = await _output_ends_early(run, node, guard)
                    if after is not None:  # an output won: the function tools are not executed, as in plain
                        node = after
                        continue
                if deferred:
                    return ModelStepResult(
                        new_messages=run.new_messages(),
                        usage=run.usage,
                        deferred=deferred,
                        tool_defs=dict(definitions.by_name),
                        output_retries_used=run.ctx.state.output_retries_used,
                        tool_retries=_next_tool_retries(run),
                        established_tools=_established(run),
                        history=list(run.all_messages()),
                        resumed_request=run.ctx.deps.resumed_request,
                    )
            node = await run.next(node)
        return ModelStepResult(
            new_messages=run.new_messages(),
            usage=run.usage,
            output=node.data.output,
            output_retries_used=run.ctx.state.output_retries_used,
            tool_retries=_next_tool_retries(run),
            established_tools=_established(run),
            history=list(run.all_messages()),
            resumed_request=run.ctx.deps.resumed_request,
        )


async def _stream_request(
    node: ModelRequestNode[Any, Any],
    run: AgentRun[Any, Any],
    events: AgentEventWriter,
    partial_output_interval: float | None,
    validate_partial_output: bool,
) -> None:
    """Send the request streaming, forwarding text, thinking and partial output as they arrive."""
    async with node.stream(run.ctx) as stream:
        partials = PartialOutputs(
            stream,
            run.ctx.deps.output_schema,
            events,
            partial_output_interval,
            run_context=build_run_context(run.ctx),
            validate=validate_partial_output,
        )
        async for event in stream:
            if isinstance(event, FinalResultEvent):
                partials.start(event)
            if isinstance(event, PartStartEvent):
                if isinstance(event.part, TextPart):
                    events.write_text_delta(event.part.content)
                elif isinstance(event.part, ThinkingPart):
                    events.write_reasoning_delta(event.part.content)
            elif isinstance(event, PartDeltaEvent):
                if isinstance(event.delta, TextPartDelta):
                    events.write_text_delta(event.delta.content_delta)
                elif isinstance(event.delta, ThinkingPartDelta) and event.delta.content_delta:
                    events.write_reasoning_delta(event.delta.content_delta)
            await partials.update()
        await partials.finish()


class _FunctionToolsWanted(Exception):
    """Pydantic AI is about to run a function tool in a model step (`_FunctionToolGuard`)."""


@dataclass
class _FunctionToolGuard(AbstractCapability[Any]):
    """Stops a model step where Pydantic AI would run a function tool; off unless armed."""

    armed: bool = False

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_ordering(self) -> CapabilityOrdering | None:
        return CapabilityOrdering(position="innermost")

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        if self.armed and tool_def.kind != "output":
            raise _FunctionToolsWanted(call.tool_name)
        return await handler(args)


def _may_end_early(
    run: AgentRun[Any, Any], node: CallToolsNode[Any, Any], deferred: list[ToolCallPart]
) -> bool:
    """Whether the response holds an output that, under ``end_strategy='early'``, may end the
    run before its function tools: an output tool call, or structured output in its text
    (`NativeOutput`, `PromptedOutput`) or an image. Plain text never skips tools."""
    response = node.model_response
    if len(deferred) < len(response.tool_calls):
        return True
    schema = run.ctx.deps.output_schema
    structured_text = schema.text_processor is not None and not isinstance(
        schema.text_processor, TextOutputProcessor
    )
    return (structured_text and bool(response.text)) or (schema.allows_image and bool(response.images))


async def _output_ends_early(
    run: AgentRun[Any, Any], node: CallToolsNode[Any, Any], guard: _FunctionToolGuard
) -> AgentNode[Any] | End[Any] | None:
    """Under ``end_strategy='early'``, let the response's output tools run first, as the plain
    run does: if one succeeds, the run ends there and the function tools are never run (the
    node after this one). If every output fails, Pydantic AI would run the function tools:
    the step stops before the first and leaves the run as it was (None), so the session runs
    them and the next step processes the response with their results."""
    manager = run.ctx.deps.tool_manager
    retries_before = run.ctx.state.output_retries_used
    failed_before, succeeded_before = set(manager.failed_tools), set(manager.succeeded_tools)
    history_before = len(run.ctx.state.message_history)
    guard.armed = True
    try:
        return await run.next(node)
    except _FunctionToolsWanted:
        # The outputs are charged again when the response is processed with the results.
        run.ctx.state.output_retries_used = retries_before
        manager.failed_tools, manager.succeeded_tools = failed_before, succeeded_before
        del run.ctx.state.message_history[history_before:]
        return None
    finally:
        guard.armed = False


def _carry_tool_retries(run: AgentRun[Any, Any], retries: Mapping[str, int]) -> None:
    """Start the run's tool manager with the turn's retry counts (``ctx.retries``).

    Its first `for_run_step` carries over the counts of the step "before" the run (minus
    the tools that succeeded in it, plus one for each that failed: none here), as it does
    between two steps of one plain run; an output tool's validation failures are charged
    against them. The step number only has to differ from the run's first.
    """
    manager = run.ctx.deps.tool_manager
    if manager.ctx is None and retries:
        before = build_run_context(run.ctx)
        manager.ctx = replace(before, retries=dict(retries), run_step=before.run_step - 1)


def _next_tool_retries(run: AgentRun[Any, Any]) -> dict[str, int]:
    """The counts the run's next `for_run_step` would carry over: those of this step, minus
    the tools that succeeded in it, plus one for each tool that failed in it."""
    manager = run.ctx.deps.tool_manager
    current: dict[str, int] = dict(manager.ctx.retries) if manager.ctx is not None else {}
    carried = {name: count for name, count in current.items() if name not in manager.succeeded_tools}
    carried.update({name: current.get(name, 0) + 1 for name in manager.failed_tools})
    return carried


def _stamp_retry_request(history: Sequence[ModelMessage], run: AgentRun[Any, Any]) -> None:
    """Stamp a refused answer's retry request as the run that sends it does (a "continue").

    Pydantic AI sets a request's run, conversation and time when its node runs; the step
    that built this one stopped before that, and the history's last request is sent as is.
    """
    last = history[-1] if history else None
    if isinstance(last, ModelRequest) and last.run_id is None:
        last.run_id = run.ctx.state.run_id
        last.conversation_id = run.ctx.state.conversation_id
        last.timestamp = datetime.now(UTC)


def _established(run: AgentRun[Any, Any]) -> list[str] | None:
    names = run.ctx.deps.established_tool_names
    return sorted(names) if names is not None else None
