"""The agent graph of a session: validated once, cloned per model step with every tool gated.

The SDK runs a tool in the same turn as the model call that asked for it unless the tool
needs approval. The clone gives every function tool (plain, agent-as-tool, local MCP)
``needs_approval=True`` and a stub body that returns the session's recorded result, and
every hosted MCP server ``require_approval="always"``. Handoffs are redirected to the
clones so a handed-off agent is gated too.
"""

from __future__ import annotations

import copy
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from agents import (
    Agent,
    ApplyPatchTool,
    ComputerTool,
    CustomTool,
    FunctionTool,
    Handoff,
    HostedMCPTool,
    LocalShellTool,
    RunContextWrapper,
    ShellTool,
    Tool,
    ToolGuardrailFunctionOutput,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)
from agents.tool_context import ToolContext

from sessionflow import SessionStateError, ToolEffect, ToolPolicy
from sessionflow.kit import declared_effect, declared_policy
from sessionflow_openai_agents._errors import AgentGraphError, UnsupportedAgentOptionError
from sessionflow_openai_agents._hooks import StepAgentHooks, StepHookPlan
from sessionflow_openai_agents._tools import mcp_effect
from sessionflow_openai_agents._whole_responses import whole_response_agent

__all__ = ["AgentGraph", "AgentGraphError", "GraphSnapshot", "ToolEntry"]

_LOCAL_TOOL_TYPES = (ComputerTool, CustomTool, ApplyPatchTool, LocalShellTool)


@dataclass(frozen=True)
class ToolEntry:
    """A real tool and the agent that offers it."""

    tool: FunctionTool
    agent: Agent[Any]


def _handoff_target(item: Agent[Any] | Handoff[Any, Any]) -> Agent[Any] | None:
    if isinstance(item, Agent):
        return item
    ref = item._agent_ref  # pyright: ignore[reportPrivateUsage]
    target = ref() if ref is not None else None
    return cast(Agent[Any], target) if isinstance(target, Agent) else None


def _handoff_tool_name(item: Agent[Any] | Handoff[Any, Any]) -> str:
    return Handoff.default_tool_name(item) if isinstance(item, Agent) else item.tool_name


class AgentGraph:
    """The starting agent and every agent reachable through handoffs, by unique name."""

    def __init__(
        self, start: Agent[Any], extra_tools: Sequence[FunctionTool] = (), *, whole_responses: bool = False
    ) -> None:
        agents = _collect(start)
        self.whole_responses = whole_responses
        """Clones make their model calls in one piece (`_whole_responses`), with no deltas."""
        if extra_tools:
            agents[start.name] = start.clone(tools=[*start.tools, *extra_tools])
        self.start_name = start.name
        self.agents: dict[str, Agent[Any]] = agents
        self.static_tools = _static_tools(agents)
        self.handoffs: dict[str, str] = {
            _handoff_tool_name(item): _target_name(item)
            for agent in agents.values()
            for item in agent.handoffs
        }

    async def snapshot(self, run_context: RunContextWrapper[Any]) -> GraphSnapshot:
        """The graph with its local MCP tools listed now, for one model step or tool step."""
        listed: dict[str, list[Tool]] = {}
        for name, agent in self.agents.items():
            mcp_tools: list[Tool] = await agent.get_mcp_tools(run_context) if agent.mcp_servers else []
            listed[name] = [*mcp_tools, *agent.tools]
        return GraphSnapshot(self, listed)


class GraphSnapshot:
    """One listing of the graph's tools: the real tools by name, and gated clones."""

    def __init__(self, graph: AgentGraph, listed: Mapping[str, list[Tool]]) -> None:
        self.graph = graph
        self.listed = listed
        # A static tool wins over an MCP tool of the same name; among MCP tools the first does.
        self.tools = dict(graph.static_tools)
        for name, tools in listed.items():
            for tool in tools:
                if isinstance(tool, FunctionTool):
                    self.tools.setdefault(tool.name, ToolEntry(tool, graph.agents[name]))

    def framework_effect(self, tool_name: str) -> ToolEffect | None:
        """The effect the tool is marked with (`sessionflow.effect`), else the one its MCP annotations imply."""
        entry = self.tools.get(tool_name)
        if entry is None:
            return None
        return declared_effect(entry.tool) or mcp_effect(entry.tool)

    def declared_policy(self, tool_name: str) -> ToolPolicy | None:
        """The whole policy the tool is marked with (`sessionflow.effect(..., policy=...)`), if any."""
        entry = self.tools.get(tool_name)
        return declared_policy(entry.tool) if entry is not None else None

    def gated(
        self, outputs: Mapping[str, Any], plan: StepHookPlan, agent_name: str | None = None
    ) -> Agent[Any]:
        """Clone the graph with every tool gated; approved stubs return ``outputs[call_id]``.

        An output is the recorded text, or the object the tool returned (`_tool_value`).
        Each agent's own hooks fire as ``plan`` says (`_hooks`).

        Returns the clone of the agent named ``agent_name``, by default of the starting agent.
        """
        stub = _stub(outputs)
        clones: dict[str, Agent[Any]] = {}
        for name, agent in self.graph.agents.items():
            tools = [_gate(tool, stub, plan) for tool in self.listed[name]]
            hooks = StepAgentHooks(agent.hooks, plan) if agent.hooks is not None else None
            clone = agent.clone(tools=tools, mcp_servers=[], handoffs=[], hooks=hooks)
            clones[name] = whole_response_agent(clone) if self.graph.whole_responses else clone
        for name, agent in self.graph.agents.items():
            clones[name].handoffs = [_redirect(item, clones) for item in agent.handoffs]
        name = agent_name if agent_name is not None else self.graph.start_name
        if name not in clones:
            raise SessionStateError(f"the run state names agent {name!r}, which the graph no longer has")
        return clones[name]


def _target_name(item: Agent[Any] | Handoff[Any, Any]) -> str:
    return item.name if isinstance(item, Agent) else item.agent_name


def _collect(start: Agent[Any]) -> dict[str, Agent[Any]]:
    """Breadth-first over handoffs, as the SDK resolves agents in a saved run state."""
    agents: dict[str, Agent[Any]] = {}
    queue: deque[Agent[Any]] = deque([start])
    while queue:
        agent = queue.popleft()
        known = agents.get(agent.name)
        if known is agent:
            continue
        if known is not None:
            raise AgentGraphError(
                f"two different agents are named {agent.name!r}; a saved run state finds its current "
                "agent by name, so agent names must be unique (and stable across deploys)"
            )
        agents[agent.name] = agent
        for index, item in enumerate(agent.handoffs):
            target = _handoff_target(item)
            if target is None:
                raise UnsupportedAgentOptionError(
                    f"handoffs[{index}]",
                    f"agent {agent.name!r}: handoff {_handoff_tool_name(item)!r} has no target agent; "
                    "build handoffs with agents.handoff(agent) or list the Agent itself",
                )
            queue.append(target)
    return agents


def _static_tools(agents: Mapping[str, Agent[Any]]) -> dict[str, ToolEntry]:
    found: dict[str, ToolEntry] = {}
    for agent in agents.values():
        for index, tool in enumerate(agent.tools):
            if isinstance(tool, _LOCAL_TOOL_TYPES) or (
                isinstance(tool, ShellTool) and tool.executor is not None
            ):
                raise UnsupportedAgentOptionError(
                    f"tools[{index}]",
                    f"agent {agent.name!r}: {type(tool).__name__} runs in-process without a durable step; "
                    "wrap the action in a function tool instead",
                )
            if not isinstance(tool, FunctionTool):
                continue
            known = found.get(tool.name)
            if known is not None and known.tool is not tool:
                raise AgentGraphError(
                    f"agents {known.agent.name!r} and {agent.name!r} have different tools named {tool.name!r}; "
                    "tool names identify tool calls and their policies, so they must be unique"
                )
            found[tool.name] = ToolEntry(tool, agent)
    return found


def _stub(outputs: Mapping[str, Any]) -> Any:
    async def recorded_result(context: ToolContext[Any], arguments: str) -> Any:
        try:
            return outputs[context.tool_call_id]
        except KeyError:
            raise SessionStateError(f"no recorded result for tool call {context.tool_call_id!r}") from None

    return recorded_result


def _gate(tool: Tool, stub: Any, plan: StepHookPlan) -> Tool:
    if isinstance(tool, FunctionTool):
        gated = copy.copy(tool)
        gated.on_invoke_tool = stub
        gated.needs_approval = True
        # The tool step ran them before and after the real tool (`_tool_step`); here the stub
        # returns what they left. An agent tool's answer arrives here, though (its sub-agent
        # runs in the model steps after its tool step), so its output guardrails run on it
        # here, where the SDK runs them on the nested run's answer.
        gated.tool_input_guardrails = None
        if tool.name not in plan.agent_tools:
            gated.tool_output_guardrails = None
        elif tool.tool_output_guardrails:
            gated.tool_output_guardrails = [
                _unless_not_run(g, plan.not_run) for g in tool.tool_output_guardrails
            ]
        # The real tool runs in the session's tool step, not here (an agent tool's sub-agent
        # in the model steps after it, see `_agent_tools`).
        gated._is_agent_tool = False  # pyright: ignore[reportPrivateUsage]
        gated._agent_instance = None  # pyright: ignore[reportPrivateUsage]
        return gated
    if isinstance(tool, HostedMCPTool):
        config = dict(tool.tool_config)
        # A server that never asks is the provider's to run: no step holds its calls.
        if config.get("require_approval") != "never":
            config["require_approval"] = "always"
        return HostedMCPTool(tool_config=cast(Any, config), on_approval_request=None)
    return tool


def _unless_not_run(guardrail: ToolOutputGuardrail[Any], not_run: frozenset[str]) -> ToolOutputGuardrail[Any]:
    """``guardrail``, left out for a call whose tool did not run (its stub returns a rejection
    or failure text, on which the SDK runs no output guardrail)."""

    async def check(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        if data.context.tool_call_id in not_run:
            return ToolGuardrailFunctionOutput.allow()
        return await guardrail.run(data)

    return ToolOutputGuardrail[Any](guardrail_function=check, name=guardrail.get_name())


def _redirect(
    item: Agent[Any] | Handoff[Any, Any], clones: Mapping[str, Agent[Any]]
) -> Agent[Any] | Handoff[Any, Any]:
    if isinstance(item, Agent):
        return clones[item.name]
    redirected = copy.copy(item)
    original = item.on_invoke_handoff

    async def invoke(context: RunContextWrapper[Any], arguments: str) -> Agent[Any]:
        target = cast(Agent[Any], await original(context, arguments))
        return clones.get(target.name, target)

    redirected.on_invoke_handoff = invoke
    redirected._agent_ref = weakref.ref(clones[item.agent_name])  # pyright: ignore[reportPrivateUsage]
    return redirected
