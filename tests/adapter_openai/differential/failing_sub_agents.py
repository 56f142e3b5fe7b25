"""agents_as_tools.py with a translator whose run fails (not in the example): its own
``max_turns`` of 1, and the failure function ``as_tool`` is given (the SDK's default, a
custom one, or None). Module-level builders, as `sdk_examples`'s."""

from __future__ import annotations

from typing import Any

from agents import Agent, RunContextWrapper
from agents.tool import ToolErrorFunction, default_tool_error_function
from agents.tool_context import ToolContext

from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential.harness import Built, Models
from tests.adapter_openai.differential.sdk_examples import glossary_tool

__all__ = [
    "failing_translator_custom_failure",
    "failing_translator_default_failure",
    "failing_translator_no_failure_function",
    "tell_the_error",
]


def tell_the_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """A custom failure function: it reads the tool's context (the SDK gives a ToolContext)."""
    tool = ctx.tool_name if isinstance(ctx, ToolContext) else "?"
    return f"{tool} failed: {type(error).__name__}: {error}"


def _failing_translator(models: Models, log: InvocationLog, failure: ToolErrorFunction | None) -> Built:
    lookup_glossary = glossary_tool(log)
    model = models.model()
    spanish_agent = Agent[Any](
        name="spanish_agent",
        instructions="You translate the user's message to Spanish",
        tools=[lookup_glossary],
        model=model,
    )
    orchestrator_agent = Agent[Any](
        name="orchestrator_agent",
        instructions="You are a translation agent. You always use the provided tools.",
        tools=[
            spanish_agent.as_tool(
                tool_name="translate_to_spanish",
                tool_description="Translate the user's message to Spanish",
                max_turns=1,
                failure_error_function=failure,
            ),
        ],
        model=model,
    )
    return Built(orchestrator_agent)


def failing_translator_default_failure(models: Models, log: InvocationLog) -> Built:
    return _failing_translator(models, log, default_tool_error_function)


def failing_translator_custom_failure(models: Models, log: InvocationLog) -> Built:
    return _failing_translator(models, log, tell_the_error)


def failing_translator_no_failure_function(models: Models, log: InvocationLog) -> Built:
    return _failing_translator(models, log, None)
