"""The agents of the tests, after ADK's quickstart (`multi_tool_agent`: `get_weather`,
`get_current_time`) and its tool-confirmation sample, on the scripted Gemini server."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from sessionflow import AgentSessionFlow, AgentSessionOptions, tool_effect
from sessionflow.kit import current_tool_invocation
from sessionflow.testing import InvocationLog
from sessionflow_google_adk import google_adk_session_flow
from tests.crash_tool_log import ToolLog
from tests.harness import FAST

MODEL = "gemini-2.5-flash"

# The first model step of a process imports and builds ADK's model client for seconds,
# with the event loop blocked: heartbeats may be slow there (tool steps keep FAST's).
TIMINGS = replace(FAST, model_heartbeat_timeout=timedelta(seconds=30))


def weather_agent(base_url: str, log: InvocationLog) -> LlmAgent:
    """ADK's quickstart agent: a sync read tool that writes session state, an async read
    tool, an async write, and a write that asks for confirmation (`require_confirmation`)."""

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

    @tool_effect("idempotent_write")
    async def save_note(text: str, tool_context: ToolContext) -> str:
        """Saves a note (a write the session runs without asking)."""
        invocation = current_tool_invocation()
        log.record("tool", "save_note", text=text, key=invocation.idempotency_key if invocation else None)
        tool_context.state["notes"] = [*tool_context.state.get("notes", []), text]
        return f"saved: {text}"

    return LlmAgent(
        name="weather_time_agent",
        model=Gemini(model=MODEL, base_url=base_url),
        description="Agent to answer questions about the time and weather in a city.",
        instruction=lambda ctx: f"You are a helpful agent. Last city: {ctx.state.get('last_city', 'none')}.",
        tools=[get_weather, get_current_time, save_note, FunctionTool(book_table, require_confirmation=True)],
        output_key="last_answer",
    )


def save_flow_spec(state_dir: Path, *, flow_type: str, base_url: str) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "flow.json").write_text(json.dumps({"flow_type": flow_type, "base_url": base_url}))


def load_flow(state_dir: Path, log: InvocationLog | None = None) -> AgentSessionFlow:
    """The flow of a worker process: the agent of `flow.json`, logging to the state folder
    (held at the crash gate its environment names, `ToolLog.from_env`)."""
    import os

    spec = json.loads((state_dir / "flow.json").read_text())
    log = log or ToolLog.from_env(state_dir / "invocations.jsonl", os.environ)
    return google_adk_session_flow(
        weather_agent(spec["base_url"], log),
        flow_type=spec["flow_type"],
        options=AgentSessionOptions(timings=TIMINGS),
    )
