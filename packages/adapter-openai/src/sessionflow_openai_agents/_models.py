"""Tools a model cannot be offered, refused when the graph is built rather than at a step."""

from __future__ import annotations

from agents import FunctionTool, OpenAIChatCompletionsModel, RunConfig

from sessionflow_openai_agents._errors import UnsupportedAgentOptionError
from sessionflow_openai_agents._graph import AgentGraph

__all__ = ["check_model_tools"]


def check_model_tools(graph: AgentGraph, run_config: RunConfig) -> None:
    """Refuse hosted tools on an agent whose model is a Chat Completions model instance.

    The SDK refuses them only when it builds the request. A model given by name goes
    through the provider, which would have to build a client to say which API it speaks,
    so only a model instance (the run config's, else the agent's) is checked here.
    """
    for agent in graph.agents.values():
        model = run_config.model if run_config.model is not None else agent.model
        if not isinstance(model, OpenAIChatCompletionsModel):
            continue
        for index, tool in enumerate(agent.tools):
            if not isinstance(tool, FunctionTool):
                raise UnsupportedAgentOptionError(
                    f"tools[{index}]",
                    f"agent {agent.name!r}: {type(tool).__name__} is a hosted tool, and the agent's model "
                    "speaks Chat Completions, which has none; use a Responses model or leave the tool out",
                )
