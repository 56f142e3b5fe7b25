"""What the adapter refuses when the flow is built, with the reason: the parts of ADK whose
durable semantics it does not implement yet would otherwise run outside the steps (a
sub-agent's model calls inside one model step) or fail mid-turn."""

from __future__ import annotations

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool

from sessionflow import UnsupportedOptionError

__all__ = ["check_agent"]


def check_agent(agent: BaseAgent) -> None:
    """Raise `UnsupportedOptionError` for an agent this adapter cannot run step by step."""
    if not isinstance(agent, LlmAgent):
        raise UnsupportedOptionError(
            "agent",
            f"{type(agent).__name__} is not supported yet: give an LlmAgent (workflow agents "
            "run several model calls per invocation, each of which must be its own step)",
        )
    if agent.sub_agents:
        raise UnsupportedOptionError(
            "sub_agents", "agent transfer is not supported yet: give an LlmAgent without sub_agents"
        )
    # ADK types `tools` with bare callables; only the tool objects matter here.
    tools: list[object] = list(agent.tools)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    for index, tool in enumerate(tools):
        if isinstance(tool, AgentTool):
            raise UnsupportedOptionError(
                f"tools[{index}]", "AgentTool is not supported yet: its sub-agent's calls would not be steps"
            )
        if isinstance(tool, LongRunningFunctionTool):
            raise UnsupportedOptionError(
                f"tools[{index}]", "LongRunningFunctionTool is not supported yet: it is not a durable wait"
            )
