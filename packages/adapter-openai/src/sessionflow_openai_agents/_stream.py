"""One streamed run that stops after its model call, with deltas and usage for the session."""

from __future__ import annotations

from typing import Any

from agents import (
    Agent,
    AgentHookContext,
    ModelResponse,
    RawResponsesStreamEvent,
    RunContextWrapper,
    RunHooks,
    RunResultStreaming,
    Tool,
    TResponseInputItem,
)

from sessionflow import AgentUsage
from sessionflow.kit import AgentEventWriter
from sessionflow_openai_agents._hooks import StepHookPlan

__all__ = ["StepHooks", "stream_into", "usage_of"]

_TEXT_DELTAS = frozenset({"response.output_text.delta"})
_REASONING_DELTAS = frozenset({"response.reasoning_summary_text.delta", "response.reasoning_text.delta"})


class StepHooks(RunHooks[Any]):
    """Ends the run after the turn whose model call starts, then forwards to the user's hooks
    those the plain run fires here (`StepHookPlan`).

    ``cancel(mode="after_turn")`` is the SDK's graceful stop: the turn finishes (a handoff
    switches the current agent, pending approvals become interruptions) and the run stops
    before the next model call, leaving a state that resumes there.
    """

    def __init__(self, inner: RunHooks[Any] | None, plan: StepHookPlan) -> None:
        self.inner = inner
        self.plan = plan
        self.handed_off = False
        """A handoff happened in this step: the next step fires the new agent's start hooks."""
        self.result: RunResultStreaming | None = None
        self.model_calls = 0

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        self.model_calls += 1
        if self.model_calls > 1:
            raise RuntimeError("sessionflow: a second model call started in one model step")
        assert self.result is not None, "StepHooks.result must be set before streaming"
        self.result.cancel(mode="after_turn")
        if self.inner is not None:
            await self.inner.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        if self.inner is not None:
            await self.inner.on_llm_end(context, agent, response)

    async def on_agent_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        if self.inner is not None and self.plan.starts_agent:
            await self.inner.on_agent_start(context, agent)

    async def on_agent_end(self, context: AgentHookContext[Any], agent: Agent[Any], output: Any) -> None:
        if self.inner is not None:
            await self.inner.on_agent_end(context, agent, output)

    async def on_handoff(
        self, context: RunContextWrapper[Any], from_agent: Agent[Any], to_agent: Agent[Any]
    ) -> None:
        self.handed_off = True
        if self.inner is not None:
            await self.inner.on_handoff(context, from_agent, to_agent)

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        if self.inner is not None and self.plan.tool_start_here(tool):
            await self.inner.on_tool_start(context, agent, tool)

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        if self.inner is not None and self.plan.tool_end_here(tool):
            await self.inner.on_tool_end(context, agent, tool, result)


async def stream_into(result: RunResultStreaming, events: AgentEventWriter) -> None:
    """Drain the run's events, publishing text and reasoning deltas; raises what the run raised.

    If the step is cancelled (the turn was cancelled, or the worker is shutting down), the
    run's background task is cancelled too instead of finishing its model call unobserved.
    """
    try:
        async for event in result.stream_events():
            if not isinstance(event, RawResponsesStreamEvent):
                continue
            data: Any = event.data
            if data.type in _TEXT_DELTAS:
                events.write_text_delta(str(data.delta))
            elif data.type in _REASONING_DELTAS:
                events.write_reasoning_delta(str(data.delta))
    except BaseException:
        result.cancel()
        raise


def usage_of(responses: list[ModelResponse]) -> AgentUsage:
    """Usage of the model calls made in this step (one, normally)."""
    total = AgentUsage()
    for response in responses:
        total = total + AgentUsage(
            requests=1, input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens
        )
    return total
