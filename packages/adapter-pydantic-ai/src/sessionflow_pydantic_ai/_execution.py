"""Running one deferred tool call with Pydantic AI's own tool machinery, and no model request."""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NoReturn

from pydantic_ai import (
    ApprovalRequired,
    CallDeferred,
    DeferredToolResults,
    ModelRequestNode,
    RunContext,
    ToolFailed,
)
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.capabilities import (
    AbstractCapability,
    CapabilityOrdering,
    ValidatedToolArgs,
    WrapToolExecuteHandler,
)
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RunUsage
from pydantic_graph import End

from sessionflow import AgentToolCall

# Pydantic AI runs sync tools in a thread with the caller's context, so they see the
# current invocation too.
from sessionflow.kit import AgentEventWriter, ToolExecutionError
from sessionflow_pydantic_ai._delegation import DelegationRefused, delegation_scope, usage_delta
from sessionflow_pydantic_ai._retries import failure_account
from sessionflow_pydantic_ai._waits import WaitKind, deferral_account

__all__ = ["ToolStepResult", "execute_tool_call"]

_PROMPT = "(sessionflow runs one tool call the model requested earlier)"


def _refuse_model_request(messages: list[ModelMessage], info: AgentInfo) -> NoReturn:
    raise RuntimeError("sessionflow makes no model request while it runs a tool")


_NO_MODEL = FunctionModel(_refuse_model_request, model_name="sessionflow-tool-step")


@dataclass(frozen=True)
class ToolStepResult:
    """The call's part, and what agent runs nested in the tool added to its run's usage."""

    part: ToolReturnPart
    delegated_usage: RunUsage | None = None


async def execute_tool_call(
    agent: AbstractAgent[Any, Any],
    record: AgentToolCall,
    *,
    deps: Any,
    toolsets: Sequence[AbstractToolset[Any]],
    conversation_id: str,
    call_id: str | None = None,
    approved: bool = True,
    run_step: int = 0,
    events: AgentEventWriter | None = None,
) -> ToolStepResult:
    """Run the call once and return its part: the text the model will see, and the value.

    The call is replayed as the last response of a one-message history, so Pydantic AI
    validates the arguments, injects deps through `RunContext` and runs the tool. The run
    stops at the next model request node, before any request is sent, and reads the
    tool's return. ``run_step`` is the step of the response that asked for the call
    (``ctx.run_step`` in the plain run that runs it). ``call_id`` is the ID Pydantic AI knows the call by (the model's, where
    the session's record is a call of its own for it, `_waits`). ``approved`` is what the
    tool sees as ``ctx.tool_call_approved``: True once a person approved the call (or a
    policy said no approval is needed for a ``requires_approval`` tool). Agent runs the tool
    starts are journaled under the call (`_delegation`); their events go to ``events``.

    Raises:
        ToolExecutionError: Invalid arguments, an unknown tool, `ModelRetry` or `ToolFailed`
            from the tool; the model sees the message. A tool that is not approved and
            raises `ApprovalRequired` or `CallDeferred` ends the step failed too, with that
            deferral as its account (`_waits`): the next model step asks for it.
        Exception: Anything else the tool raised, unchanged, so the session retries per effect.
    """
    call_id = call_id or record.tool_call_id
    call = ToolCallPart(tool_name=record.tool_name, args=record.arguments, tool_call_id=call_id)
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(_PROMPT)]), ModelResponse(parts=[call])]
    async with agent.iter(
        None,
        message_history=history,
        deferred_tool_results=DeferredToolResults(approvals={call_id: True}) if approved else None,
        deps=deps,
        model=_NO_MODEL,
        toolsets=toolsets,
        conversation_id=conversation_id,
        capabilities=[
            _Deferrals(approved),
            _NoToolEvents(),
            delegations := _Delegations(record.tool_call_id, events),
        ],
    ) as run:
        run.ctx.state.run_step = run_step
        node = run.next_node
        try:
            while not isinstance(node, ModelRequestNode | End):
                node = await run.next(node)
        except _Deferred as deferred:
            account = deferral_account(deferred.kind, deferred.metadata)
            raise ToolExecutionError(deferred.text, state_update=account) from None
        except DelegationRefused as refused:
            raise ToolExecutionError(str(refused)) from None
    if isinstance(node, End):
        raise RuntimeError(f"Pydantic AI ended the run instead of returning tool call {call_id!r}")
    return ToolStepResult(_returned_part(node.request, call_id), delegations.usage)


@dataclass
class _Delegations(AbstractCapability[Any]):
    """Agent runs the tool starts (delegation, hand-off) are journaled under the session's call ID.

    What they add to ``ctx.usage`` (``usage=ctx.usage``, as Pydantic AI sums a delegate's
    usage into its parent's) is kept: the next model step counts it in the turn's usage.
    """

    call_id: str
    events: AgentEventWriter | None
    usage: RunUsage | None = None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        before = replace(ctx.usage)
        with delegation_scope(self.call_id, self.events):
            result = await handler(args)
        self.usage = usage_delta(before, ctx.usage)
        return result


class _Deferred(Exception):
    """A tool that is not approved deferred itself: the session asks for it (`_waits`)."""

    kind: WaitKind
    metadata: dict[str, Any] | None

    def __init__(self, kind: WaitKind, name: str, metadata: dict[str, Any] | None) -> None:
        self.kind = kind
        self.metadata = metadata
        self.text = (
            f"tool {name!r} asks for approval"
            if kind == "approval"
            else f"tool {name!r} waits for a result from outside"
        )
        super().__init__(self.text)


@dataclass
class _Deferrals(AbstractCapability[Any]):
    """Takes a tool's `ApprovalRequired` or `CallDeferred` out of the run, to the session.

    Pydantic AI would end the run with `DeferredToolRequests` (or refuse it for an output
    type without them). A call a person already approved cannot defer again: that is a
    failure the model sees, as it would be in the plain run's second pass.
    """

    approved: bool

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        try:
            return await handler(args)
        except ApprovalRequired as deferral:
            if self.approved:
                raise ToolFailed(
                    f"tool {call.tool_name!r} asked for approval again after it was approved"
                ) from deferral
            raise _Deferred("approval", call.tool_name, deferral.metadata) from deferral
        except CallDeferred as deferral:
            if self.approved:
                raise ToolFailed(
                    f"tool {call.tool_name!r} deferred itself after it was approved; "
                    "an approved call runs to its result"
                ) from deferral
            raise _Deferred("result", call.tool_name, deferral.metadata) from deferral


@dataclass
class _NoToolEvents(AbstractCapability[Any]):
    """Keeps the tool step's call and result events from the run's event stream.

    The model step that resumes with the results streams them, for every call of the
    response in the model's order, as the plain run's one tool node does: an event stream
    handler (`ProcessEventStream`, ``wrap_run_event_stream``) sees each once. Innermost, so
    every such wrapper is outside it. (``on_event`` listeners are dispatched where events are
    made, before any wrapper: they see a tool step's events too.)
    """

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_ordering(self) -> CapabilityOrdering | None:
        return CapabilityOrdering(position="innermost")

    async def wrap_run_event_stream(
        self, ctx: RunContext[Any], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        async for event in stream:
            if not isinstance(event, FunctionToolCallEvent | FunctionToolResultEvent):
                yield event


def _returned_part(request: ModelRequest, call_id: str) -> ToolReturnPart:
    for part in request.parts:
        if isinstance(part, ToolReturnPart) and part.tool_call_id == call_id:
            if part.outcome == "success":
                return part
            # A retry (`ModelRetry`, invalid arguments) or `ToolFailed`: the next model step
            # hands it back as such (`_retries`), charged against the tool's retry budget.
            raise ToolExecutionError(
                part.model_response_str(wrap_if_error=False), state_update=failure_account(part)
            )
    raise RuntimeError(f"Pydantic AI returned no result for tool call {call_id!r}")
