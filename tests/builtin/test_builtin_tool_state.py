"""The builtin runner's tool state: set by tools, shown to the next model call and to later tools."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
    connect,
    serve_agent_flows,
)
from sessionflow.builtin import ChatCompletionsRunner, tool, tool_state
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import ToolInvocation, ToolOutput, current_tool_invocation
from sessionflow.testing import wait_for_agent_snapshot
from tests.harness import FAST


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def _run(temporal_address: str, key: str, runner: ChatCompletionsRunner, text: str) -> AgentSnapshot:
    client = await connect(temporal_address)
    flow = AgentSessionFlow(runner, flow_type=f"builtin-{key}", options=AgentSessionOptions(timings=FAST))
    sessions = AgentSessionClient(client, flow)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        await sessions.start_session(key, text)
        return await wait_for_agent_snapshot(
            sessions,
            key,
            lambda s: (
                s
                if s.state
                and s.state.turn_count == 1
                and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
                else None
            ),
            description="the turn to end",
        )
    finally:
        stop.set()
        await worker


def set_mode(mode: str) -> ToolOutput:
    """Set the travel mode."""
    return ToolOutput(text=f"mode set to {mode}", state_update={"mode": mode})


def set_seat(seat: str) -> ToolOutput:
    """Pick a seat."""
    return ToolOutput(text="seat picked", state_update={"seat": seat, "last": "seat"})


def read_mode() -> str:
    """Read the travel mode."""
    return str(tool_state(current_tool_invocation()).get("mode", "unset"))


def _system(request_body: dict[str, Any]) -> str:
    messages = cast(list[dict[str, Any]], request_body["messages"])
    assert messages[0]["role"] == "system"
    assert [m for m in messages[1:] if m["role"] == "system"] == []  # one leading system message
    return str(messages[0]["content"])


async def test_the_next_call_and_later_tools_see_the_state_tools_set(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "b-state"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "set_mode", {"mode": "train"}),
                ScriptedToolCall("c2", "set_seat", {"seat": "12A"}),
            ),
            ModelReply.call(ScriptedToolCall("c3", "read_mode", {})),
            ModelReply.say("by train"),
        ],
    )
    runner = ChatCompletionsRunner(
        model="m",
        tools=[tool(f, effect=ToolEffect.READ) for f in (set_mode, set_seat, read_mode)],
        system_prompt="Be brief.",
        base_url=model_server.base_url(key),
        api_key="k",
    )
    snapshot = await _run(temporal_address, key, runner, "book a trip")
    assert snapshot.messages[-1].message.text == "by train"
    first, second, third = model_server.requests(key)
    assert _system(first.body) == "Be brief."  # no state yet: the prompt as before
    expected = 'Be brief.\n\nTool state: {"mode": "train", "seat": "12A", "last": "seat"}'
    assert _system(second.body) == expected
    assert third.tool_results()["c3"] == "train"  # a later tool read the state
    assert _system(third.body) == expected  # kept in the run state across steps, applied once


async def test_a_runner_without_tool_state_refuses_an_update_rather_than_lose_it() -> None:
    invocation = ToolInvocation(tool_call_id="c", idempotency_key="s/turn-1/c", attempt=1)
    with pytest.raises(TypeError, match="does not apply tool state"):
        await tool(set_mode).call({"mode": "car"}, invocation)
    plain = tool(lambda: ToolOutput(text="only text"), name="plain", description="d")
    assert await plain.call({}, invocation) == "only text"
    assert await tool(set_mode).call_output({"mode": "car"}, invocation) == ToolOutput(
        text="mode set to car", state_update={"mode": "car"}
    )


def test_tool_state_is_empty_outside_a_session_step() -> None:
    assert tool_state(None) == {}
    assert tool_state(ToolInvocation(tool_call_id="c", idempotency_key="k", attempt=1)) == {}
