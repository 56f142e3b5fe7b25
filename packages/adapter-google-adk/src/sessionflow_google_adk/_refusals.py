"""What the adapter refuses when the flow is built, with the reason: the parts of ADK whose
durable semantics it does not implement yet would otherwise run outside the steps (a
sub-agent's model calls inside one model step) or fail mid-turn.

An agent tree is taken whole: `LlmAgent`s (with `sub_agents` and transfer) and the
workflow agents `SequentialAgent` and `LoopAgent`, at any depth. Each agent is checked.
"""

from __future__ import annotations

import re

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.loop_agent import LoopAgent  # pyright: ignore[reportDeprecated]
from google.adk.agents.parallel_agent import ParallelAgent  # pyright: ignore[reportDeprecated]
from google.adk.agents.sequential_agent import SequentialAgent  # pyright: ignore[reportDeprecated]
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.adk.version import __version__ as adk_version

from sessionflow import UnsupportedOptionError

__all__ = ["TRANSFERS_FROM", "check_agent", "first_llm_agent", "transfers_resume"]


def check_agent(agent: BaseAgent, where: str = "agent") -> None:
    """Raise `UnsupportedOptionError` for an agent (or a sub-agent of its tree) this adapter
    cannot run step by step; ``where`` names it in the error (``agent.sub_agents[1]``)."""
    if not isinstance(agent, BaseAgent):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise UnsupportedOptionError(
            where,
            f"a {type(agent).__name__} is not an ADK agent: give the agent itself (an LlmAgent, "
            "a SequentialAgent or a LoopAgent). A Runner's or an App's own session service and "
            "plugins would run beside the session, and a graph Workflow calls the model out of "
            "sight of the steps",
        )
    if isinstance(agent, ParallelAgent):  # pyright: ignore[reportDeprecated]
        raise UnsupportedOptionError(
            where,
            "ParallelAgent is not supported yet: its branches call the model concurrently "
            "inside one invocation, and one model step makes one call",
        )
    if not isinstance(agent, LlmAgent | SequentialAgent | LoopAgent):  # pyright: ignore[reportDeprecated]
        raise UnsupportedOptionError(
            where,
            f"{type(agent).__name__} is not supported: give an LlmAgent, a SequentialAgent "
            "or a LoopAgent (an agent of one's own may call the model several times per "
            "step, out of sight of the steps)",
        )
    if isinstance(agent, LlmAgent):
        _check_tools(agent, where)
        if agent.sub_agents and not transfers_resume(adk_version):
            raise UnsupportedOptionError(
                f"{where}.sub_agents",
                f"agent transfer needs google-adk {'.'.join(map(str, TRANSFERS_FROM))} or later "
                f"(installed: {adk_version}): older 2.x versions resume a transfer between "
                "sub-agents at the agent that transferred, not at its target",
            )
    for index, sub_agent in enumerate(agent.sub_agents):
        check_agent(sub_agent, f"{where}.sub_agents[{index}]")


TRANSFERS_FROM = (2, 13)
"""The first google-adk whose resumed invocation continues at a transfer's target (2.5
resumes a peer transfer at the agent that transferred; 2.13 is the version tested)."""


def transfers_resume(version: str) -> bool:
    """Whether google-adk ``version`` resumes an invocation at a transfer's target."""
    parts = [int(part) for part in re.findall(r"\d+", version)[:2]]
    return tuple(parts) >= TRANSFERS_FROM


def _check_tools(agent: LlmAgent, where: str) -> None:
    # ADK types `tools` with bare callables; only the tool objects matter here.
    tools: list[object] = list(agent.tools)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    for index, tool in enumerate(tools):
        option = f"tools[{index}]" if where == "agent" else f"{where}.tools[{index}]"
        if isinstance(tool, AgentTool):
            raise UnsupportedOptionError(
                option, "AgentTool is not supported yet: its sub-agent's calls would not be steps"
            )
        if isinstance(tool, LongRunningFunctionTool):
            raise UnsupportedOptionError(
                option, "LongRunningFunctionTool is not supported yet: it is not a durable wait"
            )


def first_llm_agent(agent: BaseAgent) -> LlmAgent | None:
    """The tree's first `LlmAgent` in depth-first order (whose model a worker warms up)."""
    if isinstance(agent, LlmAgent):
        return agent
    for sub_agent in agent.sub_agents:
        if (found := first_llm_agent(sub_agent)) is not None:
            return found
    return None
