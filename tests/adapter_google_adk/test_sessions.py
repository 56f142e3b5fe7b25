"""Whole sessions on the real dev server: an ADK agent through sessionflow, compared with the
same agent under ADK's own `Runner`, both against the scripted Gemini server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

# ADK's documented import path; the module does not list it in an `__all__`.
from google.adk.agents.run_config import (
    RunConfig,
    StreamingMode,  # pyright: ignore[reportPrivateImportUsage]
)
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    connect,
    serve_agent_flows,
)
from sessionflow.demo import ModelReply, RecordedRequest, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog, wait_for_agent_snapshot
from sessionflow_google_adk import google_adk_session_flow
from tests.adapter_google_adk.agents import TIMINGS, weather_agent


@asynccontextmanager
async def serving(temporal_address: str, flow: AgentSessionFlow) -> AsyncGenerator[AgentSessionClient]:
    client = await connect(temporal_address)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        yield AgentSessionClient(client, flow)
    finally:
        stop.set()
        await worker


async def idle(sessions: AgentSessionClient, session_id: str, turns: int = 1) -> AgentSnapshot:
    def done(s: AgentSnapshot) -> AgentSnapshot | None:
        state = s.state
        if (
            state is None
            or state.turn_count < turns
            or state.status is not AgentStatus.WAITING_FOR_USER_MESSAGE
        ):
            return None
        return s

    return await wait_for_agent_snapshot(sessions, session_id, done, description=f"turn {turns}", timeout=60)


async def follow_turn(sessions: AgentSessionClient, session_id: str) -> list[AgentEvent]:
    """Every event of the first turn, live deltas included, until a second after it ends."""
    seen: list[AgentEvent] = []
    stream = sessions.events(session_id)
    completed = False
    while True:
        try:
            event = await asyncio.wait_for(anext(stream), timeout=1.0 if completed else 30.0)
        except TimeoutError:
            await stream.aclose()
            return seen
        seen.append(event)
        completed = completed or event.type is AgentEventType.TURN_COMPLETED


def weather_script() -> list[ModelReply]:
    return [
        ModelReply.call(
            ScriptedToolCall("c1", "get_weather", {"city": "Paris"}),
            ScriptedToolCall("c2", "get_current_time", {"city": "Paris"}),
        ),
        ModelReply.say("Sunny, 25 C, and 10:30 in Paris.", chunks=["Sunny, 25 C, ", "and 10:30 in Paris."]),
        ModelReply.say("You asked about Paris."),
    ]


def comparable(request: RecordedRequest) -> dict[str, Any]:
    """A request as the model saw it (the path names the key, which differs per run)."""
    return {"model": request.model, "stream": request.stream, "body": request.body}


async def plain_adk(
    model_server: ScriptedModelServer, key: str, log: Path, texts: list[str]
) -> dict[str, Any]:
    """The same agent under ADK's own `Runner`: the final state and event contents."""
    agent = weather_agent(model_server.base_url(key, api="gemini"), InvocationLog(log))
    service = InMemorySessionService()
    await service.create_session(app_name="sessionflow", user_id="user", session_id=key)
    runner = Runner(app_name="sessionflow", agent=agent, session_service=service)
    for text in texts:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        # The adapter streams (SSE) so partial responses become live deltas; so does this run.
        config = RunConfig(streaming_mode=StreamingMode.SSE)
        async for _ in runner.run_async(
            user_id="user", session_id=key, new_message=message, run_config=config
        ):
            pass
    session = await service.get_session(app_name="sessionflow", user_id="user", session_id=key)
    assert session is not None
    return {
        "state": dict(session.state),
        "contents": [e.content.model_dump(exclude_none=True) for e in session.events if e.content],
    }


async def test_a_tool_turn_matches_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    texts = ["What is the weather and time in Paris?", "Which city did I ask about?"]
    model_server.script("plain", weather_script())
    plain = await plain_adk(model_server, "plain", tmp_path / "plain.jsonl", texts)

    key = "adk-weather"
    model_server.script(key, weather_script())
    log_path = tmp_path / "invocations.jsonl"
    flow = google_adk_session_flow(
        weather_agent(model_server.base_url(key, api="gemini"), InvocationLog(log_path)),
        flow_type="adk-weather",
        options=AgentSessionOptions(timings=TIMINGS),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, texts[0])
        live = asyncio.create_task(follow_turn(sessions, key))
        first = await idle(sessions, key)
        followed = await asyncio.wait_for(live, 30)
        await sessions.send_user_message(key, texts[1])
        second = await idle(sessions, key, turns=2)
        events = await sessions.list_agent_events(key)

    # The model saw the same requests, call by call.
    ours, theirs = model_server.requests(key), model_server.requests("plain")
    assert len(ours) == len(theirs) == 3
    assert [comparable(r) for r in ours] == [comparable(r) for r in theirs]
    assert ours[1].tool_results() == {
        "c1": '{"status":"success","report":"The weather in Paris is sunny, 25 C."}',
        "c2": '{"status":"success","report":"It is 10:30 in Paris."}',
    }
    # State carried from turn 1 reached the instruction provider of turn 2.
    assert ours[2].saw("You are a helpful agent. Last city: Paris.")
    # The same final state (temp: dropped, output_key kept) and the same events.
    assert second.framework_state == {"adk_state": plain["state"]}
    assert plain["state"] == {"last_city": "Paris", "last_answer": "You asked about Paris."}
    stored = [
        types.Content.model_validate(m.message.framework_item["content"]).model_dump(exclude_none=True)
        for m in second.messages
    ]
    assert stored == plain["contents"]
    assert first.messages[-1].message.text == "Sunny, 25 C, and 10:30 in Paris."
    # ADK's partial events arrived live as text deltas, one per streamed chunk.
    deltas = [str(e.data["text"]) for e in followed if e.type is AgentEventType.TEXT_DELTA]
    assert deltas == ["Sunny, 25 C, ", "and 10:30 in Paris."]
    # Each tool ran once, in its own step, with its durable key; reads ask no approval.
    log = InvocationLog(log_path)
    assert [e["key"] for e in log.entries("tool", "get_weather")] == [f"{key}/turn-1/c1"]
    assert len(log.entries("tool", "get_current_time")) == 1
    deferred = [e.data for e in events.events if e.type is AgentEventType.TOOL_CALL_DEFERRED]
    assert [(d["tool_name"], d["effect"], d["requires_approval"]) for d in deferred] == [
        ("get_weather", "read", False),
        ("get_current_time", "read", False),
    ]


async def test_require_confirmation_is_the_frameworks_approval(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "adk-confirm"
    model_server.script(
        key,
        [ModelReply.call(ScriptedToolCall("b1", "book_table", {"city": "Rome"})), ModelReply.say("Booked.")],
    )
    log_path = tmp_path / "invocations.jsonl"
    flow = google_adk_session_flow(
        weather_agent(model_server.base_url(key, api="gemini"), InvocationLog(log_path)),
        flow_type="adk-confirm",
        options=AgentSessionOptions(timings=TIMINGS),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Book a table in Rome")
        interrupt = await wait_for_agent_snapshot(
            sessions,
            key,
            lambda s: s.pending_interrupts[0] if s.pending_interrupts else None,
            description="ask",
        )
        assert (interrupt.tool_name, interrupt.source) == ("book_table", "framework")
        assert InvocationLog(log_path).count("tool") == 0
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
        snapshot = await idle(sessions, key)
    # ADK did not ask again: the tool ran once, with its call id, and the model saw its result.
    assert [e["key"] for e in InvocationLog(log_path).entries("tool", "book_table")] == [f"{key}/turn-1/b1"]
    assert model_server.requests(key)[1].tool_results() == {"b1": '{"booked":"Rome","call":"b1"}'}
    assert snapshot.messages[-1].message.text == "Booked."


async def test_a_rejected_confirmation_reaches_the_model_as_the_functions_error(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "adk-reject"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("b1", "book_table", {"city": "Rome"})),
            ModelReply.say("Not booked."),
        ],
    )
    log_path = tmp_path / "invocations.jsonl"
    flow = google_adk_session_flow(
        weather_agent(model_server.base_url(key, api="gemini"), InvocationLog(log_path)),
        flow_type="adk-reject",
        options=AgentSessionOptions(timings=TIMINGS),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Book a table in Rome")
        interrupt = await wait_for_agent_snapshot(
            sessions,
            key,
            lambda s: s.pending_interrupts[0] if s.pending_interrupts else None,
            description="ask",
        )
        assert await sessions.resolve_interrupt(
            key, interrupt.interrupt_id, approved=False, rejection_message="Rome is fully booked."
        )
        snapshot = await idle(sessions, key)
    assert InvocationLog(log_path).count("tool") == 0
    # As ADK reports a failed call: the text under the function response's "error".
    assert model_server.requests(key)[1].body["contents"][-1]["parts"][0]["functionResponse"]["response"] == {
        "error": "Tool call rejected by the user: Rome is fully booked."
    }
    assert model_server.requests(key)[1].tool_results() == {
        "b1": "Tool call rejected by the user: Rome is fully booked."
    }
    assert snapshot.messages[-1].message.text == "Not booked."
