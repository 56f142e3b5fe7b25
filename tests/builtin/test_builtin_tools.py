"""`tool()`: arguments validated into the declared types, clear errors, sync tools off the loop.

The first tests call a `ToolSpec` directly; the rest run a real session (dev server, worker,
the built-in runner against the scripted model server).
"""

from __future__ import annotations

import asyncio
import enum
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import pydantic
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
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import ToolExecutionError, ToolInvocation
from sessionflow.testing import wait_for_agent_snapshot
from tests.harness import FAST


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Point:
    x: float
    y: float = 0.0


class Span(pydantic.BaseModel):
    low: int
    high: int

    @pydantic.model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


INVOCATION = ToolInvocation(tool_call_id="c", idempotency_key="s/turn-1/c", attempt=1)


async def test_arguments_reach_the_function_as_the_declared_types() -> None:
    seen: list[tuple[Any, ...]] = []

    def paint(color: Color, where: Point, span: Span, times: int = 1, tag: str | None = None) -> str:
        seen.append((color, where, span, times, tag))
        return "painted"

    spec = tool(paint)
    output = await spec.call(
        {"color": "blue", "where": {"x": 1.5}, "span": {"low": 1, "high": 2}, "times": 3}, INVOCATION
    )
    assert output == "painted"
    assert len(seen) == 1
    color, where, span, times, tag = seen[0]
    assert color is Color.BLUE
    assert type(where) is Point and where == Point(1.5, 0.0)
    assert type(span) is Span and (span.low, span.high) == (1, 2)
    assert (times, tag) == (3, None)


async def test_async_tools_are_awaited_and_get_the_invocation() -> None:
    seen: list[tuple[Color, str]] = []

    async def mark(color: Color, invocation: ToolInvocation) -> str:
        await asyncio.sleep(0)
        seen.append((color, invocation.idempotency_key))
        return f"marked {color.value}"

    spec = tool(mark)
    assert "invocation" not in spec.parameters["properties"]
    assert await spec.call({"color": "red"}, INVOCATION) == "marked red"
    assert seen == [(Color.RED, "s/turn-1/c")]


async def test_sync_tools_run_off_the_event_loop_thread() -> None:
    threads: list[int] = []

    def where_am_i(invocation: ToolInvocation) -> str:
        threads.append(threading.get_ident())
        return invocation.tool_call_id

    assert await tool(where_am_i).call({}, INVOCATION) == "c"
    assert len(threads) == 1 and threads[0] != threading.get_ident()


async def test_non_text_results_are_rendered() -> None:
    def count(n: int) -> int:
        return n + 1

    assert await tool(count).call({"n": "41"}, INVOCATION) == "42"


async def test_invalid_arguments_are_a_tool_error_naming_each_field() -> None:
    calls: list[object] = []

    def paint(color: Color, where: Point, span: Span, note: Annotated[str, "A note."] = "") -> str:
        calls.append(color)
        return "painted"

    spec = tool(paint)
    with pytest.raises(ToolExecutionError) as raised:
        await spec.call(
            {"color": "green", "where": {"x": "far"}, "span": {"low": 3, "high": 1}, "extra": 1}, INVOCATION
        )
    assert calls == []
    assert not ToolExecutionError.retryable
    lines = raised.value.message.splitlines()
    assert lines[0] == "invalid arguments for tool 'paint':"
    assert "- color: Input should be 'red' or 'blue' (got 'green')" in lines
    assert (
        "- where.x: Input should be a valid number, unable to parse string as a number (got 'far')" in lines
    )
    assert any(line.startswith("- span: Value error, low must not exceed high") for line in lines)
    assert "- extra: Extra inputs are not permitted (got 1)" in lines
    assert len(lines) == 5


async def test_a_missing_argument_is_named() -> None:
    def f(city: str, days: int) -> str:
        return ""

    with pytest.raises(ToolExecutionError) as raised:
        await tool(f, name="weather").call({"days": 2}, INVOCATION)
    assert raised.value.message == "invalid arguments for tool 'weather':\n- city: Field required"


# -- on a real session -------------------------------------------------------------------


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


def _runner(server: ScriptedModelServer, key: str, *tools: Any) -> ChatCompletionsRunner:
    return ChatCompletionsRunner(model="m", tools=list(tools), base_url=server.base_url(key), api_key="k")


async def test_an_enum_argument_reaches_the_function_as_the_enum(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "bt-enum"
    seen: list[tuple[object, object]] = []

    def paint(color: Annotated[Color, "The colour."], where: Point) -> str:
        """Paint a point."""
        seen.append((color, where))
        return f"painted {color.name} at {where.x},{where.y}"

    spec = tool(paint, effect=ToolEffect.READ)
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_1", "paint", {"color": "blue", "where": {"x": 2}})),
            ModelReply.say("done"),
        ],
    )
    await _run(temporal_address, key, _runner(model_server, key, spec), "paint it")
    assert len(seen) == 1
    assert seen[0][0] is Color.BLUE
    assert type(seen[0][1]) is Point and seen[0][1] == Point(2.0, 0.0)
    requests = model_server.requests(key)
    assert requests[1].tool_results() == {"call_1": "painted BLUE at 2.0,0.0"}
    # The model was offered the enum's values and the description.
    offered = requests[0].body["tools"][0]["function"]
    assert offered["parameters"] == dict(spec.parameters)
    assert offered["parameters"]["properties"]["color"] == {
        "enum": ["red", "blue"],
        "type": "string",
        "description": "The colour.",
    }


async def test_parallel_sync_tools_overlap(temporal_address: str, model_server: ScriptedModelServer) -> None:
    key = "bt-parallel"
    spans: dict[str, tuple[float, float]] = {}

    def nap(label: str) -> str:
        """Sleep for a second, blocking."""
        start = time.monotonic()
        time.sleep(1)
        spans[label] = (start, time.monotonic())
        return f"{label} rested"

    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("call_a", "nap", {"label": "a"}),
                ScriptedToolCall("call_b", "nap", {"label": "b"}),
            ),
            ModelReply.say("both rested"),
        ],
    )
    runner = _runner(model_server, key, tool(nap, effect=ToolEffect.READ))
    snapshot = await _run(temporal_address, key, runner, "rest twice")
    assert snapshot.messages[-1].message.text == "both rested"
    assert sorted(spans) == ["a", "b"]
    (a_start, a_end), (b_start, b_end) = spans["a"], spans["b"]
    # Each call slept on its own thread: the two sleeps overlap in time. Had either
    # blocked the worker's event loop, the other could only have started after it ended.
    assert a_start < b_end and b_start < a_end
    assert model_server.requests(key)[1].tool_results() == {"call_a": "a rested", "call_b": "b rested"}


async def test_bad_arguments_give_the_model_a_clear_error(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = "bt-bad"
    calls: list[object] = []

    def measure(span: Span, color: Color) -> str:
        """Measure a span."""
        calls.append(span)
        return "measured"

    model_server.script(
        key,
        [
            ModelReply.call(
                # The schema allows it; the model's own check refuses it in the tool.
                ScriptedToolCall("call_1", "measure", {"span": {"low": 5, "high": 1}, "color": "red"}),
                # The schema refuses it: not even proposed to the tool.
                ScriptedToolCall("call_2", "measure", {"span": {"low": 1, "high": 2}, "color": "green"}),
            ),
            ModelReply.say("I will fix the arguments."),
        ],
    )
    runner = _runner(model_server, key, tool(measure, effect=ToolEffect.READ))
    snapshot = await _run(temporal_address, key, runner, "measure")
    assert snapshot.messages[-1].message.text == "I will fix the arguments."
    assert calls == []
    requests = model_server.requests(key)
    assert len(requests) == 2  # one error back to the model, no retries of the model step
    results = requests[1].tool_results()
    assert results["call_1"].startswith(
        "Tool call failed: invalid arguments for tool 'measure':\n- span: Value error, low must not exceed high"
    )
    assert (
        "invalid_arguments" in results["call_2"]
        and "'green' is not one of ['red', 'blue']" in results["call_2"]
    )
