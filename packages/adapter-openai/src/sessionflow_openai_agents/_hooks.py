"""Lifecycle hooks (`RunHooks`, `AgentHooks`) fired where, and as often as, the plain SDK fires them.

A session resumes the SDK's run in every model step, and the SDK fires the start hooks
(``RunHooks.on_agent_start``, ``AgentHooks.on_start``) whenever a run starts or resumes; the
tool hooks it fires around the recorded stub of a resumed step, after the real tool ran in
its own step. So without care every resumed step would fire the start hooks again, and the
tool hooks would fire late. Here:

* the start hooks fire in a model step only where the plain run fires them (`StepHookPlan`):
  the first model call of a run, the first after a handoff, and the first after a resume
  from an approval the plain run would have stopped for (``needs_approval``, or a hosted MCP
  server that asks without an ``on_approval_request``), since plain resumes its run there;
* ``on_tool_start`` and ``on_tool_end`` of a function tool fire in the tool step, around the
  real tool, after its input guardrails and with the output its output guardrails leave
  (`tool_started`, `tool_ended`); the model step that returns the recorded result fires
  neither. An agent used as a tool fires ``on_tool_start`` in its own tool step and
  ``on_tool_end`` in the model step where the parent takes its answer, as plain does around
  the nested run;
* the model hooks (``on_llm_start``, ``on_llm_end``), ``on_handoff`` and the end hooks fire
  in the model step, once per model call as in plain.

A step that runs again (a retried model step, a read tool's retry) fires its hooks again:
at least once, like the code they wrap.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agents import (
    Agent,
    AgentHookContext,
    AgentHooks,
    FunctionTool,
    ModelResponse,
    RunContextWrapper,
    RunHooks,
    Tool,
    TResponseInputItem,
)

__all__ = ["StepAgentHooks", "StepHookPlan", "tool_ended", "tool_started"]


@dataclass(frozen=True)
class StepHookPlan:
    """Which hooks the SDK's run in one model step may fire."""

    starts_agent: bool
    """The run's start hooks fire here: plain starts (or resumes) the run at this model call."""
    agent_tools: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """Agents used as tools, by tool name: their ``on_tool_end`` fires in the model step."""
    not_run: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    """Calls (by the model's call ID) whose tool did not run: rejected, failed, or stopped by
    an input guardrail. An agent tool's output guardrails, which run in the model step
    (`_graph`), skip them, as the SDK runs none on a call that did not run."""

    def tool_start_here(self, tool: Tool) -> bool:
        # A function tool's (and an agent tool's) on_tool_start fired in its tool step.
        return not isinstance(tool, FunctionTool)

    def tool_end_here(self, tool: Tool) -> bool:
        return not isinstance(tool, FunctionTool) or tool.name in self.agent_tools


class StepAgentHooks(AgentHooks[Any]):
    """An agent's own hooks as one model step fires them (see `StepHookPlan`)."""

    def __init__(self, inner: AgentHooks[Any], plan: StepHookPlan) -> None:
        self.inner = inner
        self.plan = plan

    async def on_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        if self.plan.starts_agent:
            await self.inner.on_start(context, agent)

    async def on_end(self, context: AgentHookContext[Any], agent: Agent[Any], output: Any) -> None:
        await self.inner.on_end(context, agent, output)

    async def on_handoff(
        self, context: RunContextWrapper[Any], agent: Agent[Any], source: Agent[Any]
    ) -> None:
        await self.inner.on_handoff(context, agent, source)

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        if self.plan.tool_start_here(tool):
            await self.inner.on_tool_start(context, agent, tool)

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        if self.plan.tool_end_here(tool):
            await self.inner.on_tool_end(context, agent, tool, result)

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        await self.inner.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        await self.inner.on_llm_end(context, agent, response)


def _both(calls: Iterable[Any]) -> Any:
    # As the SDK: the run's hooks and the agent's hooks run concurrently.
    return asyncio.gather(*calls)


async def tool_started(
    hooks: RunHooks[Any] | None, agent: Agent[Any], tool: FunctionTool, context: RunContextWrapper[Any]
) -> None:
    """``on_tool_start`` of the run's hooks and of the agent's, in the tool step before the tool runs."""
    await _both(
        [
            *([hooks.on_tool_start(context, agent, tool)] if hooks is not None else []),
            *([agent.hooks.on_tool_start(context, agent, tool)] if agent.hooks is not None else []),
        ]
    )


async def tool_ended(
    hooks: RunHooks[Any] | None,
    agent: Agent[Any],
    tool: FunctionTool,
    context: RunContextWrapper[Any],
    result: object,
) -> None:
    """``on_tool_end`` with the result the model sees (after the output guardrails)."""
    await _both(
        [
            *([hooks.on_tool_end(context, agent, tool, result)] if hooks is not None else []),
            *([agent.hooks.on_tool_end(context, agent, tool, result)] if agent.hooks is not None else []),
        ]
    )
