"""Running one deferred tool call with Pydantic AI's own tool machinery, and no model request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
from pydantic_ai.capabilities import AbstractCapability, ValidatedToolArgs, WrapToolExecuteHandler
from pydantic_ai.messages import (
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
from pydantic_graph import End

# The core's current invocation, re-exported here so the adapter's old name keeps working;
# Pydantic AI runs sync tools in a thread with the caller's context, so they see it too.
from sessionflow import current_tool_invocation
from sessionflow.session import AgentToolCall, ToolExecutionError
from sessionflow_pydantic_ai._retries import failure_account

__all__ = ["current_tool_invocation", "execute_tool_call"]

_PROMPT = "(sessionflow runs one tool call the model requested earlier)"


def _refuse_model_request(messages: list[ModelMessage], info: AgentInfo) -> NoReturn:
    raise RuntimeError("sessionflow makes no model request while it runs a tool")


_NO_MODEL = FunctionModel(_refuse_model_request, model_name="sessionflow-tool-step")


async def execute_tool_call(
    agent: AbstractAgent[Any, Any],
    record: AgentToolCall,
    *,
    deps: Any,
    toolsets: Sequence[AbstractToolset[Any]],
    conversation_id: str,
) -> ToolReturnPart:
    """Run the call once and return its part: the text the model will see, and the value.

    The call is replayed as the last response of a one-message history and marked
    approved (the session already applied its approval policy), so Pydantic AI validates
    the arguments, injects deps through `RunContext` and runs the tool. The run stops at
    the next model request node, before any request is sent, and reads the tool's return.

    Raises:
        ToolExecutionError: Invalid arguments, an unknown tool, `ModelRetry` or `ToolFailed`
            from the tool, or a tool that defers itself; the model sees the message.
        Exception: Anything else the tool raised, unchanged, so the session retries per effect.
    """
    call = ToolCallPart(tool_name=record.tool_name, args=record.arguments, tool_call_id=record.tool_call_id)
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(_PROMPT)]), ModelResponse(parts=[call])]
    async with agent.iter(
        None,
        message_history=history,
        deferred_tool_results=DeferredToolResults(approvals={record.tool_call_id: True}),
        deps=deps,
        model=_NO_MODEL,
        toolsets=toolsets,
        conversation_id=conversation_id,
        capabilities=[_NoSecondDeferral()],
    ) as run:
        node = run.next_node
        while not isinstance(node, ModelRequestNode | End):
            node = await run.next(node)
    if isinstance(node, End):
        raise RuntimeError(
            f"Pydantic AI ended the run instead of returning tool call {record.tool_call_id!r}"
        )
    return _returned_part(node.request, record)


@dataclass
class _NoSecondDeferral(AbstractCapability[Any]):
    """Turns a tool deferring itself into a failure the model sees.

    The session already deferred the call and decided how it runs; Pydantic AI would
    otherwise end the run with `DeferredToolRequests`, or refuse it for an output type
    without them.
    """

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
        except (CallDeferred, ApprovalRequired) as deferral:
            raise ToolFailed(
                f"tool {call.tool_name!r} deferred itself ({type(deferral).__name__}); "
                "sessionflow already decided how to run it and cannot defer it again"
            ) from deferral


def _returned_part(request: ModelRequest, record: AgentToolCall) -> ToolReturnPart:
    for part in request.parts:
        if isinstance(part, ToolReturnPart) and part.tool_call_id == record.tool_call_id:
            if part.outcome == "success":
                return part
            # A retry (`ModelRetry`, invalid arguments) or `ToolFailed`: the next model step
            # hands it back as such (`_retries`), charged against the tool's retry budget.
            raise ToolExecutionError(
                part.model_response_str(wrap_if_error=False), state_update=failure_account(part)
            )
    raise RuntimeError(f"Pydantic AI returned no result for tool call {record.tool_call_id!r}")
