"""Partial and stored output of a model step, one turn at a time (no Temporal).

The differential tests (differential/test_streamed_output.py) compare what a session
publishes with plain ``stream_output()``; these pin down the rest: how often snapshots go
out, that a partial never fails the step or runs an output function in final mode, and
how the output is stored and read back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, NativeOutput, RunContext, ToolOutput

from sessionflow import AgentEvent, AgentEventType, AgentSnapshot, AgentUsage
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow_pydantic_ai import PydanticAIRunner, read_output
from sessionflow_pydantic_ai._models import model_for_api
from tests.adapter_pydantic_ai.turns import play_turn

CITY: dict[str, Any] = {"name": "Oslo", "population": 709000}


class City(BaseModel):
    name: str
    population: int


def city_json_chunks() -> tuple[str, list[str]]:
    answer = json.dumps(CITY)
    return answer, [answer[i : i + 4] for i in range(0, len(answer), 4)]


def native_city_agent(server: ScriptedModelServer, key: str) -> Agent[None, City]:
    model = model_for_api("chat_completions", "m", base_url=server.base_url(key), api_key="k")
    return Agent(model, output_type=NativeOutput(City))


def partials(events: list[AgentEvent]) -> list[Any]:
    return [
        e.data["data"]
        for e in events
        if e.type is AgentEventType.CUSTOM_EVENT and e.data.get("kind") == "partial_output"
    ]


def snapshot_with(state: dict[str, Any] | None, omitted: list[str] | None = None) -> AgentSnapshot:
    return AgentSnapshot(
        session_id="s1",
        state=None,
        messages=[],
        message_count=0,
        pending_interrupts=[],
        tool_calls=[],
        usage=AgentUsage(),
        queued_message_count=0,
        framework_state=state,
        framework_state_omitted=omitted or [],
    )


async def test_every_change_is_published_when_the_interval_is_zero(model_server: ScriptedModelServer) -> None:
    answer, chunks = city_json_chunks()
    model_server.script("every", [ModelReply.say(answer, chunks=chunks)])
    runner = PydanticAIRunner(native_city_agent(model_server, "every"), partial_output_interval=0)
    played = await play_turn(runner, "Oslo?")
    published = partials(played.events)
    assert len(published) >= 3 and published[-1] == CITY
    assert all(a != b for a, b in pairwise(published)), "no snapshot twice in a row"
    assert played.deltas(AgentEventType.TEXT_DELTA) == answer


async def test_snapshots_are_throttled_and_the_last_one_is_whole(model_server: ScriptedModelServer) -> None:
    """An hour between snapshots: the first one that arrives, and the complete one at the end."""
    answer, chunks = city_json_chunks()
    model_server.script("throttled", [ModelReply.say(answer, chunks=chunks)])
    runner = PydanticAIRunner(native_city_agent(model_server, "throttled"), partial_output_interval=3600)
    played = await play_turn(runner, "Oslo?")
    published = partials(played.events)
    assert 1 <= len(published) <= 2 and published[-1] == CITY


async def test_no_partial_output_when_switched_off(model_server: ScriptedModelServer) -> None:
    answer, chunks = city_json_chunks()
    model_server.script("off", [ModelReply.say(answer, chunks=chunks)])
    runner = PydanticAIRunner(native_city_agent(model_server, "off"), partial_output_interval=None)
    played = await play_turn(runner, "Oslo?")
    assert partials(played.events) == []
    assert played.deltas(AgentEventType.TEXT_DELTA) == answer
    assert played.completed.framework_state == {"output": CITY}


async def test_a_failing_partial_never_fails_the_step_and_the_function_runs_once_in_final_mode(
    model_server: ScriptedModelServer,
) -> None:
    """An output function and validator that raise on partial input: the turn still completes."""
    model_server.script("fails", [ModelReply.call(ScriptedToolCall("o1", "save_city", CITY))])
    model = model_for_api("chat_completions", "m", base_url=model_server.base_url("fails"), api_key="k")
    finals: list[str] = []

    def save_city(ctx: RunContext[Any], name: str, population: int) -> str:
        if ctx.partial_output:
            raise RuntimeError("not for partials")  # not a ModelRetry: plain would raise it
        finals.append(name)
        return f"{name}: {population}"

    agent = Agent[Any, str](model, output_type=ToolOutput(save_city, name="save_city"))

    @agent.output_validator
    def check(ctx: RunContext[Any], output: str) -> str:
        if ctx.partial_output:
            raise ModelRetry("wait for the whole answer")
        return output

    played = await play_turn(PydanticAIRunner(agent, partial_output_interval=0), "Oslo?")
    assert finals == ["Oslo"]
    assert partials(played.events) == []
    assert read_output(snapshot_with(played.completed.framework_state), agent.output_type) == "Oslo: 709000"


@dataclass
class Shop:
    name: str


async def test_the_output_is_stored_beside_the_deps(model_server: ScriptedModelServer) -> None:
    model_server.script("deps", [ModelReply.call(ScriptedToolCall("o1", "final_result", CITY))])
    model = model_for_api("chat_completions", "m", base_url=model_server.base_url("deps"), api_key="k")
    agent = Agent(model, deps_type=Shop, output_type=City)
    played = await play_turn(PydanticAIRunner(agent, deps_factory=lambda: Shop("Acme")), "Oslo?")
    state = played.completed.framework_state
    assert state == {"output": CITY, "deps": {"name": "Acme"}}
    assert read_output(snapshot_with(state), City) == City(**CITY)


def test_read_output_says_why_there_is_none() -> None:
    with pytest.raises(LookupError, match="no completed turn"):
        read_output(snapshot_with(None), City)
    with pytest.raises(LookupError, match="too large"):
        read_output(snapshot_with({"deps": {}}, omitted=["output"]), City)


def test_read_output_takes_the_union_of_a_list_and_an_output_functions_return_type() -> None:
    def words(text: str) -> list[str]:
        return text.split()

    assert read_output(snapshot_with({"output": "42"}), [City, str]) == "42"
    assert read_output(snapshot_with({"output": CITY}), [City, str]) == City(**CITY)
    assert read_output(snapshot_with({"output": ["a", "b"]}), words) == ["a", "b"]
    assert read_output(snapshot_with({"output": None}), [City, None]) is None
