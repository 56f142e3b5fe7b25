"""The agents of the tests, after ADK's quickstart (`multi_tool_agent`: `get_weather`,
`get_current_time`) and its tool-confirmation sample, on the scripted Gemini server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from sessionflow import tool_effect
from sessionflow.kit import current_tool_invocation
from sessionflow.testing import InvocationLog

MODEL = "gemini-2.5-flash"


def weather_agent(base_url: str, log_path: Path) -> LlmAgent:
    """ADK's quickstart agent: a sync read tool that writes session state, an async read
    tool, and a write that asks for confirmation (ADK's `require_confirmation`)."""
    log = InvocationLog(log_path)

    @tool_effect("read")
    def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
        """Retrieves the current weather report for a specified city."""
        invocation = current_tool_invocation()
        log.record("tool", "get_weather", city=city, key=invocation.idempotency_key if invocation else None)
        tool_context.state["last_city"] = city
        tool_context.state["temp:scratch"] = "gone after the invocation"
        return {"status": "success", "report": f"The weather in {city} is sunny, 25 C."}

    @tool_effect("read")
    async def get_current_time(city: str) -> dict[str, Any]:
        """Returns the current time in a specified city."""
        log.record("tool", "get_current_time", city=city)
        return {"status": "success", "report": f"It is 10:30 in {city}."}

    # An idempotent write: the session's floor does not ask, ADK's confirmation does.
    @tool_effect("idempotent_write")
    def book_table(city: str, tool_context: ToolContext) -> dict[str, Any]:
        """Books a table (ADK asks for confirmation)."""
        invocation = current_tool_invocation()
        log.record("tool", "book_table", city=city, key=invocation.idempotency_key if invocation else None)
        return {"booked": city, "call": tool_context.function_call_id}

    return LlmAgent(
        name="weather_time_agent",
        model=Gemini(model=MODEL, base_url=base_url),
        description="Agent to answer questions about the time and weather in a city.",
        instruction=lambda ctx: f"You are a helpful agent. Last city: {ctx.state.get('last_city', 'none')}.",
        tools=[get_weather, get_current_time, FunctionTool(book_table, require_confirmation=True)],
        output_key="last_answer",
    )
