"""Whole sessions on the real dev server: OpenAI Chat Completions, OpenAI Responses and Anthropic
through Pydantic AI's own HTTP clients, talking to the scripted model server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent

from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
    ToolPolicy,
    connect,
    serve_agent_flows,
)
from sessionflow.builtin import tool
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage
from sessionflow.kit import ModelApi, ToolInvocation
from sessionflow.session.events import AgentEventsPage
from sessionflow.testing import InvocationLog, wait_for_agent_snapshot
from sessionflow_pydantic_ai import pydantic_ai_session_flow
from sessionflow_pydantic_ai._models import model_for_api
from tests.adapter_pydantic_ai.agents import deps_factory, deps_resources, weather_agent
from tests.harness import FAST

# No crashes here, so heartbeats may be slow: the first Responses stream of a process
# builds the OpenAI SDK's event models for about two seconds, blocking the event loop.
TIMINGS = replace(FAST, model_heartbeat_timeout=timedelta(seconds=30))

WIRES: dict[ModelApi, str] = {
    "chat_completions": "openai",
    "responses": "openai",
    "anthropic_messages": "anthropic",
}


@asynccontextmanager
async def serving(temporal_address: str, flow: AgentSessionFlow) -> AsyncGenerator[AgentSessionClient]:
    """A worker for `flow` in this process while the block runs."""
    client = await connect(temporal_address)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        yield AgentSessionClient(client, flow)
    finally:
        stop.set()
        await worker


def deferred(page: AgentEventsPage) -> list[dict[str, object]]:
    return [e.data for e in page.events if e.type is AgentEventType.TOOL_CALL_DEFERRED]


async def follow_turn(sessions: AgentSessionClient, session_id: str) -> list[AgentEvent]:
    """Every event of the first turn, live deltas included, as a subscriber sees them.

    The client yields live deltas between pages of durable events, so `turn_completed`
    may come first; events keep being read until none arrives for a second after it.
    """
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


def joined(events: list[AgentEvent], event_type: AgentEventType) -> str:
    return "".join(str(e.data["text"]) for e in events if e.type is event_type)


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

    return await wait_for_agent_snapshot(
        sessions, session_id, done, description=f"turn {turns} to end", timeout=60
    )


@pytest.mark.parametrize("api", ["chat_completions", "responses", "anthropic_messages"])
async def test_a_turn_with_a_tool_on_each_wire_api(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path, api: ModelApi
) -> None:
    key = f"pai-{api}"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_1", "lookup", {"city": "Oslo"})),
            ModelReply.say(
                "Sunny in Oslo.",
                chunks=["Sunny ", "in Oslo."],
                reasoning="the tool said sunny",
                usage=ScriptedUsage(30, 6),
                delay_seconds=0.5,
            ),
        ],
    )
    base_url = model_server.base_url(key, WIRES[api])
    flow = pydantic_ai_session_flow(
        weather_agent(base_url, api),
        flow_type=f"pai-{api}",
        options=AgentSessionOptions(timings=TIMINGS),
        deps_factory=deps_factory,
        deps_resources=deps_resources(tmp_path),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Weather in Oslo?")
        live = asyncio.create_task(follow_turn(sessions, key))
        snapshot = await idle(sessions, key)
        events = await sessions.list_agent_events(key)
        followed = await asyncio.wait_for(live, 30)
    requests = model_server.requests(key)
    assert [r.api for r in requests] == [api, api]
    assert requests[0].tool_names() == ["lookup", "delete_file"]
    assert requests[0].last_user_text() == "Weather in Oslo?"
    assert requests[0].saw("You report the weather.")
    result = requests[1].tool_results()["call_1"]
    assert result.startswith("sunny in Oslo (hello from deps")
    assert snapshot.messages[-1].message.text == "Sunny in Oslo."
    assert deferred(events) == [
        {"tool_call_id": "call_1", "tool_name": "lookup", "effect": "read", "requires_approval": False}
    ]
    assert (snapshot.usage.requests, snapshot.usage.input_tokens, snapshot.usage.output_tokens) == (2, 40, 11)
    log = InvocationLog(tmp_path / "invocations.jsonl")
    assert [e["key"] for e in log.entries("tool", "lookup")] == [f"{key}/turn-1/call_1"]
    assert joined(followed, AgentEventType.REASONING_DELTA) == "the tool said sunny"
    assert joined(followed, AgentEventType.TEXT_DELTA) == "Sunny in Oslo."


async def test_a_rejection_reaches_the_model_verbatim(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "pai-reject"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "delete_file", {"path": "/etc/hosts"})),
            ModelReply.say("Understood, leaving it."),
        ],
    )
    flow = pydantic_ai_session_flow(
        lambda: weather_agent(model_server.base_url(key)),
        flow_type="pai-reject",
        options=AgentSessionOptions(timings=TIMINGS),
        deps_factory=deps_factory,
        deps_resources=deps_resources(tmp_path),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Delete /etc/hosts")
        interrupt = await wait_for_agent_snapshot(
            sessions,
            key,
            lambda s: s.pending_interrupts[0] if s.pending_interrupts else None,
            description="approval",
        )
        assert interrupt.tool_name == "delete_file"
        assert await sessions.resolve_interrupt(
            key, interrupt.interrupt_id, approved=False, rejection_message="Never touch /etc — ask ops."
        )
        snapshot = await idle(sessions, key)
    assert model_server.requests(key)[1].tool_results() == {
        "c1": "Tool call rejected by the user: Never touch /etc — ask ops."
    }
    assert snapshot.messages[-1].message.text == "Understood, leaving it."
    assert InvocationLog(tmp_path / "invocations.jsonl").count("tool") == 0


class Forecast(BaseModel):
    city: str
    celsius: float
    summary: str


async def test_a_structured_output_type(temporal_address: str, model_server: ScriptedModelServer) -> None:
    key = "pai-structured"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "measure", {"city": "Oslo"})),
            ModelReply.call(
                ScriptedToolCall("o1", "final_result", {"city": "Oslo", "celsius": 21.5, "summary": "warm"})
            ),
        ],
    )

    def build() -> Agent[None, Forecast]:
        agent = Agent(
            model_for_api("chat_completions", "m", base_url=model_server.base_url(key), api_key="k"),
            output_type=Forecast,
        )

        @agent.tool_plain(metadata={"sessionflow_effect": "read"})
        def measure(city: str) -> dict[str, float]:
            return {"celsius": 21.5}

        return agent

    flow = pydantic_ai_session_flow(
        build, flow_type="pai-structured", options=AgentSessionOptions(timings=TIMINGS)
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Forecast for Oslo?")
        snapshot = await idle(sessions, key)
    requests = model_server.requests(key)
    assert len(requests) == 2 and requests[1].tool_results() == {"c1": '{"celsius":21.5}'}
    answers = [m.message for m in snapshot.messages if m.message.role.value == "assistant"]
    assert json.loads(answers[-1].text or "") == {"city": "Oslo", "celsius": 21.5, "summary": "warm"}
    assert answers[-1].framework_item["parts"][0]["tool_name"] == "final_result"


async def test_tool_sources_are_offered_and_their_policies_apply(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "pai-sources"
    model_server.script(
        key,
        [ModelReply.call(ScriptedToolCall("c1", "read_note", {"name": "todo"})), ModelReply.say("Read it.")],
    )
    seen: list[str] = []

    async def read_note(name: str, invocation: ToolInvocation) -> str:
        seen.append(invocation.idempotency_key)
        return f"note {name}: buy milk"

    spec = tool(read_note, policy=ToolPolicy(effect=ToolEffect.READ))
    agent = Agent(model_for_api("chat_completions", "m", base_url=model_server.base_url(key), api_key="k"))
    flow = pydantic_ai_session_flow(
        agent, flow_type="pai-sources", options=AgentSessionOptions(timings=TIMINGS), tool_sources=[spec]
    )
    assert flow.options.tool_policies == {"read_note": ToolPolicy(effect=ToolEffect.READ)}
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "read my todo note")
        await idle(sessions, key)
        events = await sessions.list_agent_events(key)
    assert seen == [f"{key}/turn-1/c1"]
    assert model_server.requests(key)[1].tool_results() == {"c1": "note todo: buy milk"}
    assert [(d["effect"], d["requires_approval"]) for d in deferred(events)] == [("read", False)]
