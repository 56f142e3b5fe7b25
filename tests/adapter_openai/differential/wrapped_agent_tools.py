"""agent_patterns/agents_as_tools.py with the agent tool's ``on_invoke_tool`` wrapped, as
tracing and logging code wraps it (issue 39): builders for both runs.

The example's orchestrator and Spanish translator, with what changed:

* ``translate_to_spanish``'s ``on_invoke_tool`` is wrapped by a wrapper that logs its start
  and its end (kind ``callback``): `with_wraps` copies the invoker's attributes onto the
  wrapper with `functools.wraps`, `bare` does not;
* the translator has a conversation of its own on the scripted server (``-spanish``): the
  session runs a wrapped agent tool whole in its tool step (the wrapper must run around the
  nested run, as in plain), so its model call is inside that step, not a model step;
* the agents get the scripted model.
"""

from __future__ import annotations

import functools
from typing import Any

from agents import Agent, FunctionTool
from agents.tool_context import ToolContext

from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential.harness import Built, Models

__all__ = ["bare", "with_wraps"]


def _wrap(tool: FunctionTool, log: InvocationLog, *, wraps: bool) -> FunctionTool:
    inner = tool.on_invoke_tool

    async def on_invoke_tool(context: ToolContext[Any], arguments: str) -> Any:
        log.record("callback", "wrapper", tool=tool.name, phase="start")
        output = await inner(context, arguments)
        log.record("callback", "wrapper", tool=tool.name, phase="end", output=str(output))
        return output

    tool.on_invoke_tool = functools.wraps(inner)(on_invoke_tool) if wraps else on_invoke_tool
    return tool


def _orchestrator(models: Models, log: InvocationLog, *, wraps: bool) -> Agent[Any]:
    spanish_agent = Agent[Any](
        name="spanish_agent",
        instructions="You translate the user's message to Spanish",
        handoff_description="An english to spanish translator",
        model=models.model("-spanish"),
    )
    return Agent[Any](
        name="orchestrator_agent",
        instructions=(
            "You are a translation agent. You use the tools given to you to translate."
            "If asked for multiple translations, you call the relevant tools in order."
            "You never translate on your own, you always use the provided tools."
        ),
        tools=[
            _wrap(
                spanish_agent.as_tool(
                    tool_name="translate_to_spanish",
                    tool_description="Translate the user's message to Spanish",
                ),
                log,
                wraps=wraps,
            )
        ],
        model=models.model(),
    )


def with_wraps(models: Models, log: InvocationLog) -> Built:
    return Built(_orchestrator(models, log, wraps=True))


def bare(models: Models, log: InvocationLog) -> Built:
    return Built(_orchestrator(models, log, wraps=False))
