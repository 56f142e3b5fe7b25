"""`sessionflow.effect` on plain functions given to `sessionflow.builtin.tool`, on real sessions."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import AsyncIterator, Callable
from types import FunctionType
from typing import cast

import pytest

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    ToolEffect,
    ToolPolicy,
    TurnResult,
    TurnStatus,
    TurnToolCall,
    connect,
    serve_agent_flows,
    tool_effect,
)
from sessionflow.builtin import ChatCompletionsRunner, tool
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import ToolSpec
from tests.harness import FAST


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


def _forecast(city: str) -> str:
    """Look up the forecast."""
    return f"sunny in {city}"


def _forget(note: str) -> str:
    """Forget a note."""
    return f"forgot {note}"


def unique_key(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def _turn(
    temporal_address: str,
    server: ScriptedModelServer,
    key: str,
    tools: list[ToolSpec],
    default_tool_effect: ToolEffect,
) -> TurnResult:
    """One turn on a served flow; it returns at the first approval, unanswered (``waiting``)."""
    runner = ChatCompletionsRunner(model="m", tools=tools, base_url=server.base_url(key), api_key="k")
    options = AgentSessionOptions(timings=FAST, default_tool_effect=default_tool_effect)
    flow = AgentSessionFlow(runner, flow_type=f"builtin-{key}", options=options)
    client = await connect(temporal_address)
    sessions = AgentSessionClient(client, flow)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        return await sessions.run_turn(key, "go", timeout=60)
    finally:
        stop.set()
        await worker


async def test_a_function_marked_read_runs_without_approval_and_is_retried(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = unique_key("b-marks-read")
    attempts: list[str] = []

    @tool_effect("read")
    def flaky_forecast(city: str) -> str:
        """Look up the forecast (fails once)."""
        attempts.append(city)
        if len(attempts) == 1:
            raise RuntimeError("the forecast service blinked")
        return f"sunny in {city}"

    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_1", "flaky_forecast", {"city": "Oslo"})),
            ModelReply.say("Sunny."),
        ],
    )
    # Unmarked, the session's default (unclassified) would ask, and run it once only.
    result = await _turn(temporal_address, model_server, key, [tool(flaky_forecast)], ToolEffect.UNCLASSIFIED)

    assert result.status is TurnStatus.COMPLETED
    assert result.interrupts == []
    assert result.tool_calls == [
        TurnToolCall(tool_call_id="call_1", tool_name="flaky_forecast", effect="read", status="succeeded")
    ]
    assert attempts == ["Oslo", "Oslo"]
    assert model_server.requests(key)[1].tool_results() == {"call_1": "sunny in Oslo"}


async def test_a_function_marked_a_write_asks_where_the_default_would_not(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = unique_key("b-marks-write")
    forget = tool_effect(ToolEffect.NON_IDEMPOTENT_WRITE)(_copy(_forget))
    model_server.script(
        key, [ModelReply.call(ScriptedToolCall("call_1", "_forget", {"note": "milk"})), ModelReply.say("ok")]
    )
    result = await _turn(temporal_address, model_server, key, [tool(forget)], ToolEffect.READ)

    assert result.status is TurnStatus.WAITING
    [interrupt] = result.interrupts
    assert (interrupt.tool_call_id, interrupt.tool_name) == ("call_1", "_forget")
    assert result.tool_calls == [
        TurnToolCall(
            tool_call_id="call_1",
            tool_name="_forget",
            effect="non_idempotent_write",
            status="awaiting_approval",
        )
    ]


def test_the_marked_function_is_the_same_tool_to_the_model_and_to_a_plain_call() -> None:
    marked = tool_effect("read", policy=ToolPolicy(effect=ToolEffect.READ, max_output_bytes=64))(
        _copy(_forecast)
    )
    plain, spec = tool(_forecast), tool(marked)
    # What the model is offered, and what calling the function does, are unchanged.
    assert (spec.name, spec.description, spec.parameters) == (plain.name, plain.description, plain.parameters)
    assert marked("Oslo") == _forecast("Oslo") == "sunny in Oslo"
    assert inspect.signature(marked) == inspect.signature(_forecast)
    # The mark becomes the spec's effect and policy; an explicit argument wins over it.
    assert (plain.effect, plain.policy) == (None, None)
    assert spec.effect is ToolEffect.READ
    assert spec.policy == ToolPolicy(effect=ToolEffect.READ, max_output_bytes=64)
    assert tool(marked, effect=ToolEffect.IDEMPOTENT_WRITE).effect is ToolEffect.IDEMPOTENT_WRITE
    explicit = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)
    assert tool(marked, policy=explicit).policy == explicit


def _copy(function: Callable[[str], str]) -> Callable[[str], str]:
    """A fresh function of the same code, so marking it leaves the module's unmarked."""
    copied = cast(
        Callable[[str], str], FunctionType(function.__code__, function.__globals__, function.__name__)
    )
    copied.__doc__ = function.__doc__
    copied.__annotations__ = dict(function.__annotations__)
    return copied
