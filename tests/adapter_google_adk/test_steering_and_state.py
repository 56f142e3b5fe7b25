"""Steering and tool state through sessionflow, compared with plain ADK on the scripted server.

- A steered message: ADK takes a user message as the start of an invocation (resuming an
  invocation that has its user message ignores a text message), so the plain run stops
  after the tool (a plugin's `after_tool_callback` ends the invocation) and runs the
  message (`Runner.run_async(new_message=...)`): a user event after the tool's response,
  then the model call.
- Tool state: two parallel tools set keys of `tool_context.state`; the later one in model
  order wins a key both set, whichever finished first, a dict value both set is
  deep-merged (as ADK merges parallel responses), and the next model call's instruction
  provider reads the merged state.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import (
    RunConfig,
    StreamingMode,  # pyright: ignore[reportPrivateImportUsage]
)
from google.adk.apps import App, ResumabilityConfig
from google.adk.models.google_llm import Gemini
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from sessionflow import AgentEventType, AgentSessionOptions, tool_effect
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog, wait_until
from sessionflow_google_adk import google_adk_session_flow
from tests.adapter_google_adk.agents import MODEL, TIMINGS
from tests.adapter_google_adk.test_sessions import comparable, idle, serving

STEER = "make it Lisbon, not Porto"
CONFIG = RunConfig(streaming_mode=StreamingMode.SSE)


def flights_agent(base_url: str, log: InvocationLog, gate: threading.Event) -> LlmAgent:
    @tool_effect("read")
    def search_flights(tool_context: ToolContext) -> str:
        """Search flights."""
        log.record("tool", "search_flights")
        gate.wait(30)
        return "3 flights found"

    return LlmAgent(
        name="flights_agent",
        model=Gemini(model=MODEL, base_url=base_url),
        instruction="You find flights.",
        tools=[search_flights],
    )


def seats_agent(base_url: str, log: InvocationLog) -> LlmAgent:
    @tool_effect("read")
    async def pick_seat(tool_context: ToolContext) -> str:
        """Pick a seat."""
        # Asked for first, finishes last: it waits for pick_meal (the two run in parallel).
        await wait_until("pick_meal has run", lambda: log.count("tool", "pick_meal"), timeout=30)
        log.record("tool", "pick_seat")
        tool_context.state.update({"step": "seat", "seat": "12A", "booking": {"seat": "12A"}})
        return "seat picked"

    @tool_effect("read")
    async def pick_meal(tool_context: ToolContext) -> str:
        """Pick a meal."""
        log.record("tool", "pick_meal")
        tool_context.state.update({"step": "meal", "meal": "vegetarian", "booking": {"meal": "veg"}})
        return "meal picked"

    return LlmAgent(
        name="seats_agent",
        model=Gemini(model=MODEL, base_url=base_url),
        instruction=lambda ctx: f"You book flights. Booking: {sorted(dict(ctx.state).items())}",
        tools=[pick_seat, pick_meal],
    )


class _PauseAfterTools(BasePlugin):
    """The plain run's pause: the invocation ends once the tools have answered."""

    def __init__(self) -> None:
        super().__init__(name="pause_after_tools")

    async def after_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: dict[str, Any]
    ) -> dict[str, Any] | None:
        tool_context._invocation_context.end_invocation = True  # pyright: ignore[reportPrivateUsage]
        return None


async def plain_steered(model_server: ScriptedModelServer, key: str, path: Path) -> None:
    gate = threading.Event()
    gate.set()
    agent = flights_agent(model_server.base_url(key, api="gemini"), InvocationLog(path / "plain.jsonl"), gate)
    app = App(
        name="sessionflow",
        root_agent=agent,
        plugins=[_PauseAfterTools()],
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    service = InMemorySessionService()
    await service.create_session(app_name="sessionflow", user_id="user", session_id=key)
    runner = Runner(app=app, session_service=service)
    for text in ("find me a flight", STEER):
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(
            user_id="user", session_id=key, new_message=message, run_config=CONFIG
        ):
            pass
    await runner.close()


async def test_a_steered_message_joins_the_invocation_as_adk_resumes_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def script() -> list[ModelReply]:
        return [
            ModelReply.call(ScriptedToolCall("c1", "search_flights", {})),
            ModelReply.say("the cheapest flight goes to Lisbon"),
        ]

    model_server.script("plain", script())
    await plain_steered(model_server, "plain", tmp_path)

    key = "adk-steer"
    model_server.script(key, script())
    log = InvocationLog(tmp_path / "invocations.jsonl")
    gate = threading.Event()
    flow = google_adk_session_flow(
        flights_agent(model_server.base_url(key, api="gemini"), log, gate),
        flow_type="adk-steer",
        options=AgentSessionOptions(timings=TIMINGS),
    )
    try:
        async with serving(temporal_address, flow) as sessions:
            await sessions.start_session(key, "find me a flight")
            await wait_until("the tool runs", lambda: log.count("tool"), timeout=30)
            assert log.count("tool") == 1
            assert await sessions.send_user_message(key, STEER, double_texting="steer", message_id="s1")
            gate.set()
            snapshot = await idle(sessions, key)
            events = await sessions.list_agent_events(key)
    finally:
        gate.set()

    ours, theirs = model_server.requests(key), model_server.requests("plain")
    assert len(ours) == len(theirs) == 2
    # The model saw what plain ADK sends when it runs the message after the tool's response.
    assert [comparable(r) for r in ours] == [comparable(r) for r in theirs]
    assert not ours[0].saw("Lisbon")
    assert ours[1].body["contents"][-2:] == [
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "c1",
                        "name": "search_flights",
                        "response": {"result": "3 flights found"},
                    }
                }
            ],
        },
        {"role": "user", "parts": [{"text": STEER}]},
    ]
    # One turn; the steered message is stored once, as the user's, where it sits.
    assert snapshot.state is not None and snapshot.state.turn_count == 1
    assert [m.message.text for m in snapshot.messages if m.message.role.value == "user"] == [
        "find me a flight",
        STEER,
    ]
    assert snapshot.messages[-1].message.text == "the cheapest flight goes to Lisbon"
    assert log.count("tool") == 1
    steered = [e for e in events.events if e.type is AgentEventType.USER_MESSAGE_STEERED]
    assert [e.data["message_id"] for e in steered] == ["s1"]


async def plain_state(model_server: ScriptedModelServer, key: str, path: Path) -> dict[str, Any]:
    agent = seats_agent(model_server.base_url(key, api="gemini"), InvocationLog(path / "plain.jsonl"))
    service = InMemorySessionService()
    await service.create_session(app_name="sessionflow", user_id="user", session_id=key)
    runner = Runner(app_name="sessionflow", agent=agent, session_service=service)
    message = types.Content(role="user", parts=[types.Part(text="book my flight")])
    async for _ in runner.run_async(user_id="user", session_id=key, new_message=message, run_config=CONFIG):
        pass
    session = await service.get_session(app_name="sessionflow", user_id="user", session_id=key)
    assert session is not None
    return dict(session.state)


async def test_parallel_tool_state_merges_in_model_order_as_in_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def script() -> list[ModelReply]:
        return [
            ModelReply.call(ScriptedToolCall("a", "pick_seat", {}), ScriptedToolCall("b", "pick_meal", {})),
            ModelReply.say("all set"),
        ]

    model_server.script("plain", script())
    plain = await plain_state(model_server, "plain", tmp_path)

    key = "adk-state"
    model_server.script(key, script())
    log = InvocationLog(tmp_path / "invocations.jsonl")
    flow = google_adk_session_flow(
        seats_agent(model_server.base_url(key, api="gemini"), log),
        flow_type="adk-state",
        options=AgentSessionOptions(timings=TIMINGS),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "book my flight")
        snapshot = await idle(sessions, key)

    ours, theirs = model_server.requests(key), model_server.requests("plain")
    assert len(ours) == len(theirs) == 2
    assert [comparable(r) for r in ours] == [comparable(r) for r in theirs]
    # pick_meal finished first; pick_seat, asked for first, does not win "step".
    assert [e["name"] for e in log.entries("tool")] == ["pick_meal", "pick_seat"]
    assert ours[1].saw("('meal', 'vegetarian'), ('seat', '12A'), ('step', 'meal')")
    # ADK deep-merges parallel calls' state changes: both keys of "booking" are kept.
    assert plain == {
        "step": "meal",
        "seat": "12A",
        "meal": "vegetarian",
        "booking": {"seat": "12A", "meal": "veg"},
    }
    assert snapshot.framework_state == {"adk_state": plain}
