"""Agents from Strands' own docs and samples, each built on a given model and tool log.

Every tool logs its run (`InvocationLog`) after its work, so the log says how often each
tool really ran. Builders are module-level: a crash run's worker children rebuild them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from strands import Agent, ToolContext, tool  # pyright: ignore[reportUnknownVariableType]
from strands.models import Model
from strands.types.events import ToolResultEvent
from strands.types.tools import AgentTool, ToolGenerator, ToolSpec, ToolUse

from sessionflow.testing import InvocationLog

__all__ = [
    "StockTool",
    "class_tool_agent",
    "letter_counter_agent",
    "state_agent",
    "two_tools_agent",
    "write_agent",
]


def letter_counter_agent(model: Model, log: InvocationLog) -> Agent:
    """Strands' quickstart agent (docs "Quickstart": ``letter_counter``), a sync ``@tool``."""

    @tool
    def letter_counter(word: str, letter: str) -> int:
        """Count occurrences of a specific letter in a word.

        Args:
            word: The input word to search in
            letter: The specific letter to count

        Returns:
            The number of occurrences of the letter in the word
        """
        if len(letter) != 1:
            raise ValueError("The 'letter' parameter must be a single character")
        count = word.lower().count(letter.lower())
        log.record("tool", "letter_counter", word=word, letter=letter)
        return count

    return Agent(
        model=model, tools=[letter_counter], system_prompt="You count letters.", callback_handler=None
    )


def two_tools_agent(model: Model, log: InvocationLog) -> Agent:
    """A sync and an async ``@tool`` (docs "Python tools": async tools run concurrently)."""

    @tool
    def weather(city: str) -> str:
        """Get the weather for a city.

        Args:
            city: The city
        """
        log.record("tool", "weather", city=city)
        return f"Sunny in {city}"

    @tool
    async def forecast(city: str, days: int = 3) -> dict[str, object]:
        """Get a forecast for a city.

        Args:
            city: The city
            days: How many days
        """
        await asyncio.sleep(0)
        log.record("tool", "forecast", city=city, days=days)
        return {"status": "success", "content": [{"text": f"{days} days of sun in {city}"}]}

    return Agent(model=model, tools=[weather, forecast], callback_handler=None)


def state_agent(model: Model, log: InvocationLog) -> Agent:
    """Docs "State": a ``ToolContext`` tool that counts actions in ``agent.state``."""

    @tool(context=True)
    def track_user_action(action: str, tool_context: ToolContext) -> str:
        """Track user actions in agent state.

        Args:
            action: The action to track
        """
        state = tool_context.agent.state
        action_count = state.get("action_count") or 0
        state.set("action_count", action_count + 1)
        state.set("last_action", action)
        log.record("tool", "track_user_action", action=action, seen=action_count)
        return f"Action '{action}' recorded. Total actions: {action_count + 1}"

    return Agent(
        model=model,
        tools=[track_user_action],
        state={"user_preferences": {"theme": "dark"}},
        callback_handler=None,
    )


def write_agent(model: Model, log: InvocationLog) -> Agent:
    """A write the session runs once (``sessionflow.effect``), killed inside in the crash test."""
    import sessionflow

    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email.

        Args:
            to: Recipient
            body: Text
        """
        log.record("tool", "send_email", to=to, body=body)
        return f"sent to {to}"

    @tool
    def lookup(name: str) -> str:
        """Look up an address.

        Args:
            name: Whom
        """
        log.record("tool", "lookup", whom=name)
        return f"{name}@example.com"

    sessionflow.effect(send_email, "idempotent_write")
    return Agent(model=model, tools=[lookup, send_email], callback_handler=None)


class StockTool(AgentTool):
    """A class-based tool (docs "Class-based tools": an `AgentTool` subclass with its own spec
    and `stream`), whose effect is marked on the instance."""

    def __init__(self, log: InvocationLog) -> None:
        super().__init__()
        self._log = log

    @property
    def tool_name(self) -> str:
        return "stock"

    @property
    def tool_spec(self) -> ToolSpec:
        return {
            "name": "stock",
            "description": "How many of an item are in stock.",
            "inputSchema": {
                "json": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}
            },
        }

    @property
    def tool_type(self) -> str:
        return "python"

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        item = str(tool_use["input"]["item"])
        self._log.record("tool", "stock", item=item)
        yield ToolResultEvent(
            {
                "toolUseId": tool_use["toolUseId"],
                "status": "success",
                "content": [{"json": {"item": item, "count": 4}}],
            }
        )


def class_tool_agent(model: Model, log: InvocationLog) -> Agent:
    import sessionflow

    return Agent(
        model=model,
        tools=[sessionflow.effect(StockTool(log), "read")],
        system_prompt="You answer stock questions.",
        callback_handler=None,
    )
