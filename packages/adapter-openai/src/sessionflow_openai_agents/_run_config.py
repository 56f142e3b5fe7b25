"""Run settings a session cannot honour, refused when the flow is built with the reason.

* ``RunConfig.tool_execution.max_function_tool_concurrency``: the SDK bounds how many of
  one response's tool calls run at once inside its process. A session runs each call as a
  step of its own, all of a response's at once, on any worker of the flow; a bound in one
  process bounds nothing there. Bound the work in the tool itself, or the worker's
  activity concurrency.
* ``RunConfig.tool_execution.pre_approval_tool_input_guardrails``: the SDK runs a call's
  input guardrails before it asks a person, and again before the call runs. A session runs
  them once, in the call's tool step, right before the tool (`_tool_step`), after any
  approval; it does not run them in the model step that asks.
* ``RunConfig.sandbox`` and a `SandboxAgent`: a sandbox session lives in one process, and its
  tools act inside the model call's turn with no durable step of their own.
"""

from __future__ import annotations

from agents import RunConfig
from agents.sandbox import SandboxAgent

from sessionflow_openai_agents._errors import UnsupportedAgentOptionError
from sessionflow_openai_agents._graph import AgentGraph

__all__ = ["check_run_config"]


def check_run_config(config: RunConfig, graph: AgentGraph) -> None:
    execution = config.tool_execution
    if execution is not None and execution.max_function_tool_concurrency is not None:
        raise UnsupportedAgentOptionError(
            "run_config.tool_execution.max_function_tool_concurrency",
            "a session runs every tool call of a response as a step of its own, all at once and on any "
            "worker of the flow, so a bound in one process bounds nothing; bound the work in the tool "
            "itself (a semaphore around a shared resource), or the worker's concurrency",
        )
    if execution is not None and execution.pre_approval_tool_input_guardrails:
        raise UnsupportedAgentOptionError(
            "run_config.tool_execution.pre_approval_tool_input_guardrails",
            "a session runs a call's input guardrails once, in its tool step right before the tool "
            "runs and after any approval, not before it asks; leave the option out",
        )
    if config.sandbox is not None:
        raise UnsupportedAgentOptionError(
            "run_config.sandbox",
            "a sandbox session lives in one process and its tools act inside the model call, with no "
            "durable step; give the agent function tools that reach your sandbox instead",
        )
    for agent in graph.agents.values():
        if isinstance(agent, SandboxAgent):
            raise UnsupportedAgentOptionError(
                "agent",
                f"agent {agent.name!r} is a SandboxAgent: a sandbox session lives in one process and its "
                "tools act inside the model call, with no durable step; use an Agent with function tools "
                "that reach your sandbox instead",
            )
