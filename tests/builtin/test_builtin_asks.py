"""The builtin runner's tool approval rules and question tools, against a real Temporal dev server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest

from sessionflow import (
    AgentEventType,
    AgentInterrupt,
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
    connect,
    serve_agent_flows,
)
from sessionflow.builtin import ChatCompletionsRunner, tool
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import approval_digest, question_tool
from sessionflow.testing import wait_for_agent_snapshot
from tests.harness import FAST


def lookup(city: str) -> str:
    """Look up the weather."""
    return f"sunny in {city}"


def _asks_for_oslo(arguments: Mapping[str, Any]) -> bool:
    return arguments.get("city") == "Oslo"


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


@asynccontextmanager
async def serving(
    temporal_address: str, key: str, runner: ChatCompletionsRunner
) -> AsyncGenerator[AgentSessionClient]:
    client = await connect(temporal_address)
    flow = AgentSessionFlow(runner, flow_type=f"builtin-{key}", options=AgentSessionOptions(timings=FAST))
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        yield AgentSessionClient(client, flow)
    finally:
        stop.set()
        await worker


async def pending(sessions: AgentSessionClient, key: str) -> list[AgentInterrupt]:
    return await wait_for_agent_snapshot(
        sessions, key, lambda s: s.pending_interrupts or None, description="an interrupt"
    )


async def idle(sessions: AgentSessionClient, key: str) -> AgentSnapshot:
    def done(s: AgentSnapshot) -> AgentSnapshot | None:
        state = s.state
        waiting = state is not None and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        return s if waiting and state is not None and state.turn_count == 1 else None

    return await wait_for_agent_snapshot(sessions, key, done, description="the turn to end")


async def test_a_callable_needs_approval_asks_only_for_the_calls_it_names(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "b-needs-approval"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("call_1", "lookup", {"city": "Oslo"}),
                ScriptedToolCall("call_2", "lookup", {"city": "Paris"}),
            ),
            ModelReply.say("Both sunny."),
        ],
    )
    runner = ChatCompletionsRunner(
        model="m",
        tools=[tool(lookup, effect=ToolEffect.READ, needs_approval=_asks_for_oslo)],
        base_url=model_server.base_url(key),
    )
    async with serving(temporal_address, key, runner) as sessions:
        await sessions.start_session(key, "weather?")
        (interrupt,) = await pending(sessions, key)
        assert (interrupt.tool_call_id, interrupt.source, interrupt.kind) == (
            "call_1",
            "framework",
            "approval",
        )
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
        snapshot = await idle(sessions, key)
    assert snapshot.messages[-1].message.text == "Both sunny."
    assert model_server.requests(key)[1].tool_results() == {
        "call_1": "sunny in Oslo",
        "call_2": "sunny in Paris",
    }


async def test_a_question_tool_hands_the_model_the_answer(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "b-question"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_1", "ask", {"question": "Which colour?"})),
            ModelReply.say("Teal it is."),
        ],
    )
    ask = question_tool(
        name="ask",
        description="Ask the person.",
        parameters={
            "type": "object",
            "properties": {"question": {"type": "string"}},
            "required": ["question"],
        },
        question=lambda arguments: str(arguments["question"]),
    )
    runner = ChatCompletionsRunner(model="m", tools=[ask], base_url=model_server.base_url(key))
    async with serving(temporal_address, key, runner) as sessions:
        await sessions.start_session(key, "paint the shed")
        (interrupt,) = await pending(sessions, key)
        assert (interrupt.kind, interrupt.question) == ("question", "Which colour?")
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True, answer="teal")
        snapshot = await idle(sessions, key)
    assert snapshot.messages[-1].message.text == "Teal it is."
    assert model_server.requests(key)[1].tool_results() == {"call_1": "teal"}


async def test_a_rejected_framework_approval_reaches_the_model_as_a_rejection(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "b-framework-reject"
    model_server.script(
        key,
        [ModelReply.call(ScriptedToolCall("call_1", "lookup", {"city": "Oslo"})), ModelReply.say("Okay.")],
    )
    runner = ChatCompletionsRunner(
        model="m",
        tools=[tool(lookup, effect=ToolEffect.READ, needs_approval=True)],
        base_url=model_server.base_url(key),
    )
    async with serving(temporal_address, key, runner) as sessions:
        await sessions.start_session(key, "weather?")
        (interrupt,) = await pending(sessions, key)
        waiting = await sessions.get_agent_snapshot(key)
        assert [(r.approval_source, r.framework_approval) for r in waiting.tool_calls] == [
            ("framework", "required")
        ]
        assert await sessions.resolve_interrupt(
            key, interrupt.interrupt_id, approved=False, rejection_message="not Oslo"
        )
        snapshot = await idle(sessions, key)
    assert snapshot.messages[-1].message.text == "Okay."
    assert model_server.requests(key)[1].tool_results() == {
        "call_1": "Tool call rejected by the user: not Oslo"
    }


async def test_a_callable_needs_approval_binds_each_answer_to_its_own_call(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    """Two identical calls the tool's rule gates: two approvals, the same digest, each consumed by its call."""
    key = "b-needs-approval-bound"
    runs: list[str] = []

    def counted(city: str) -> str:
        """Look up the weather."""
        runs.append(city)
        return f"sunny in {city}"

    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("call_1", "counted", {"city": "Oslo"}),
                ScriptedToolCall("call_2", "counted", {"city": "Oslo"}),
            ),
            ModelReply.say("Checked once."),
        ],
    )
    runner = ChatCompletionsRunner(
        model="m",
        tools=[tool(counted, effect=ToolEffect.READ, needs_approval=_asks_for_oslo)],
        base_url=model_server.base_url(key),
    )
    async with serving(temporal_address, key, runner) as sessions:
        await sessions.start_session(key, "weather?")
        first, second = await pending(sessions, key)
        assert first.digest == second.digest == approval_digest("counted", {"city": "Oslo"}, ToolEffect.READ)
        assert await sessions.resolve_interrupt(
            key, first.interrupt_id, approved=True, digest=first.digest, answered_by="ana"
        )
        # The answer was for call_1 only, and it cannot be given twice.
        assert not await sessions.resolve_interrupt(key, first.interrupt_id, approved=True)
        snapshot = await sessions.get_agent_snapshot(key)
        assert [i.interrupt_id for i in snapshot.pending_interrupts] == [second.interrupt_id]
        assert await sessions.resolve_interrupt(
            key, second.interrupt_id, approved=False, rejection_message="once is enough", answered_by="bo"
        )
        await idle(sessions, key)
        page = await sessions.list_agent_events(key, after=0, limit=1000)
    assert runs == ["Oslo"]
    results = model_server.requests(key)[1].tool_results()
    assert results["call_1"] == "sunny in Oslo"
    assert "once is enough" in results["call_2"]
    answers = [
        (e.data["interrupt_id"], e.data["approved"], e.data["answered_by"], e.data["digest"])
        for e in page.events
        if e.type is AgentEventType.INTERRUPT_RESOLVED
    ]
    assert answers == [
        (first.interrupt_id, True, "ana", first.digest),
        (second.interrupt_id, False, "bo", first.digest),
    ]
