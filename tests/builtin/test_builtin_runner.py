"""The built-in Chat Completions runner against the scripted model server, on a real session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Literal

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
from sessionflow.builtin import ChatCompletionsRunner, tool
from sessionflow.builtin._schema import parameters_schema
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage
from sessionflow.kit import HarnessContext, ToolInvocation, current_tool_invocation
from sessionflow.plugins import PluginError, SessionflowPlugins, build_runner
from sessionflow.testing import wait_for_agent_snapshot
from tests.harness import FAST


def lookup(city: str, days: int = 1) -> str:
    """Look up the weather."""
    return f"sunny in {city} for {days} days"


def test_schema_from_type_hints() -> None:
    def f(
        a: str, b: int | None, c: list[float], d: Literal["x", "y"] = "x", invocation: object = None
    ) -> str:
        return ""

    schema = parameters_schema(f, skip=frozenset({"invocation"}))
    assert schema == {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "c": {"type": "array", "items": {"type": "number"}},
            "d": {"enum": ["x", "y"], "type": "string", "default": "x"},
        },
        "required": ["a", "b", "c"],
        "additionalProperties": False,
    }


def test_builtin_registers_as_a_framework() -> None:
    plugins = SessionflowPlugins()
    plugins.load(autoload=False)
    spec = plugins.framework("builtin")
    assert spec.model_api == "chat_completions"
    assert spec.capabilities.parallel_tool_calls
    assert spec.capabilities.continue_steps
    assert spec.capabilities.carry_state
    assert spec.capabilities.tool_state
    assert spec.capabilities.framework_approvals
    assert spec.capabilities.questions
    assert spec.capabilities.verified_outcomes
    assert spec.capabilities.steering


def test_builtin_builds_from_a_context_and_refuses_other_apis(tmp_path: Path) -> None:
    plugins = SessionflowPlugins()
    plugins.load(autoload=False)
    spec = plugins.framework("builtin")
    context = HarnessContext(
        flow_type="builtin-context",
        model="m",
        system_prompt=None,
        workspace=tmp_path,
        options=AgentSessionOptions(),
        tools=[],
        settings={"base_url": "http://127.0.0.1:9/v1"},
    )
    assert isinstance(build_runner(spec, context), ChatCompletionsRunner)
    with pytest.raises(PluginError, match="speaks chat_completions, not 'responses'"):
        build_runner(spec, replace(context, api="responses"))


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def run_session(
    temporal_address: str, server: ScriptedModelServer, key: str, runner: ChatCompletionsRunner, text: str
) -> AgentSnapshot:
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


async def test_tool_round_trip_with_streaming(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "b-tools"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_1", "lookup", {"city": "Oslo", "days": 2})),
            ModelReply.say("It is sunny.", chunks=["It is ", "sunny."], usage=ScriptedUsage(30, 7)),
        ],
    )
    runner = ChatCompletionsRunner(
        model="m",
        tools=[tool(lookup, effect=ToolEffect.READ)],
        base_url=model_server.base_url(key),
        api_key="k",
    )
    snapshot = await run_session(temporal_address, model_server, key, runner, "weather in Oslo?")
    assert snapshot.messages[-1].message.text == "It is sunny."
    assert snapshot.usage.requests == 2 and snapshot.usage.input_tokens == 10 + 30
    requests = model_server.requests(key)
    assert requests[0].tool_names() == ["lookup"]
    assert requests[1].tool_results() == {"call_1": "sunny in Oslo for 2 days"}
    assert requests[0].headers.get("authorization") == "Bearer k"
    assert requests[0].stream


async def test_http_500_is_retried(temporal_address: str, model_server: ScriptedModelServer) -> None:
    key = "b-retry"
    model_server.script(key, [ModelReply.fail("http_500"), ModelReply.say("recovered")])
    runner = ChatCompletionsRunner(model="m", base_url=model_server.base_url(key))
    snapshot = await run_session(temporal_address, model_server, key, runner, "hello")
    assert snapshot.messages[-1].message.text == "recovered"
    assert len(model_server.requests(key)) == 2


async def test_tool_invocation_carries_the_idempotency_key(tmp_path: Path) -> None:
    seen: list[str] = []

    def save(doc: str, invocation: ToolInvocation) -> str:
        seen.append(invocation.idempotency_key)
        return json.dumps({"saved": doc})

    spec = tool(save, effect=ToolEffect.IDEMPOTENT_WRITE)
    assert spec.parameters["required"] == ["doc"]
    output = await spec.call(
        {"doc": "a"}, ToolInvocation(tool_call_id="c", idempotency_key="s/turn-1/c", attempt=1)
    )
    assert output == '{"saved": "a"}' and seen == ["s/turn-1/c"]


async def test_every_tool_sees_the_one_current_invocation(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    # The tool activity sets the invocation, so a runner that sets none itself (here the
    # built-in one) still gives its tools the call's idempotency key.
    key = "b-current"
    seen: list[ToolInvocation | None] = []

    def record(city: str) -> str:
        """Record the invocation."""
        seen.append(current_tool_invocation())
        return "noted"

    model_server.script(
        key,
        [ModelReply.call(ScriptedToolCall("call_7", "record", {"city": "Oslo"})), ModelReply.say("done")],
    )
    runner = ChatCompletionsRunner(
        model="m",
        tools=[tool(record, effect=ToolEffect.READ)],
        base_url=model_server.base_url(key),
        api_key="k",
    )
    await run_session(temporal_address, model_server, key, runner, "note Oslo")
    assert len(seen) == 1 and seen[0] is not None
    assert (seen[0].idempotency_key, seen[0].session_id, seen[0].tool_name, seen[0].attempt) == (
        f"{key}/turn-1/call_7",
        key,
        "record",
        1,
    )
    assert current_tool_invocation() is None
