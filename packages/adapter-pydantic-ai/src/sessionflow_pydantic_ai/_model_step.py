"""One model call of a turn: drive `Agent.iter` node by node and stop before any tool runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pydantic_core
from pydantic_ai import CallToolsNode, DeferredToolResults, ModelRequestNode, RunContext
from pydantic_ai.agent import AbstractAgent, AgentRun
from pydantic_ai.capabilities import (
    AbstractCapability,
    PrepareOutputTools,
    PrepareTools,
    ReinjectSystemPrompt,
)
from pydantic_ai.messages import (
    ModelMessage,
    PartDeltaEvent,
    PartStartEvent,
    RetryFeedbackPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RunUsage
from pydantic_graph import End

from sessionflow.session import AgentEventWriter
from sessionflow_pydantic_ai._errors import OutputRejectedError

__all__ = ["ModelStepResult", "OutputRejectedError", "run_model_call"]


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
) -> ModelStepResult:
    """Make at most one model request and return before any function tool runs.

    `history` is every stored message plus, when resuming, the turn's run state; `results`
    answers the calls of its last response. Pydantic AI handles the results (no tool
    runs for a supplied result), the request, and the output; when the response asks for
    function tools, the run stops at the tools node and returns them instead of running
    them. Output tool calls are left to Pydantic AI, which validates them in-process.
    """
    definitions = _ToolDefinitions()
    async with agent.iter(
        None,
        message_history=history,
        deferred_tool_results=results,
        deps=deps,
        model=model,
        toolsets=toolsets,
        conversation_id=conversation_id,
        # Stored messages never carry the agent's system prompt: Pydantic AI adds it to
        # every request instead, the way it would open a fresh conversation.
        capabilities=[ReinjectSystemPrompt(), *definitions.capabilities()],
    ) as run:
        node = run.next_node
        requested = False
        while not isinstance(node, End):
            if isinstance(node, ModelRequestNode):
                if requested:
                    raise OutputRejectedError(_retry_feedback(node))
                await _stream_request(node, run, events)
                requested = True
            elif isinstance(node, CallToolsNode) and requested:
                deferred = [
                    c for c in node.model_response.tool_calls if not definitions.is_output_tool(c.tool_name)
                ]
                if deferred:
                    return ModelStepResult(
                        new_messages=run.new_messages(),
                        usage=run.usage,
                        deferred=deferred,
                        tool_defs=dict(definitions.by_name),
                    )
            node = await run.next(node)
        return ModelStepResult(new_messages=run.new_messages(), usage=run.usage, output=node.data.output)


async def _stream_request(
    node: ModelRequestNode[Any, Any], run: AgentRun[Any, Any], events: AgentEventWriter
) -> None:
    """Send the request streaming, forwarding text and thinking as they arrive."""
    async with node.stream(run.ctx) as stream:
        async for event in stream:
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


def _retry_feedback(node: ModelRequestNode[Any, Any]) -> str:
    feedback: list[str] = []
    for part in node.request.parts:
        if isinstance(part, ToolReturnPart):
            feedback.append(part.model_response_str(wrap_if_error=False))
        elif isinstance(part, RetryFeedbackPart):
            feedback.append(
                part.content
                if isinstance(part.content, str)
                else pydantic_core.to_json(part.content).decode()
            )
    detail = "; ".join(feedback) or "no usable output"
    return f"Pydantic AI rejected the model's output and would ask the model again: {detail}"
