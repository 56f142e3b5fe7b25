"""Structured output (``Agent(structured_output_model=...)``), plain and as sessions on one
scripted server: the same model requests (the structured output tool offered, then forced
after a text answer), the same final messages, and the same validated object."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field
from strands import Agent
from strands.models import Model

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_strands.harness import (
    Run,
    Scenario,
    _model_fields,  # pyright: ignore[reportPrivateUsage]
    _requests,  # pyright: ignore[reportPrivateUsage]
    assert_same_run,
    model_for,
    run_session,
    tool_runs,
    unique,
)


class PersonInfo(BaseModel):
    """Strands' docs ("Structured output"): what to extract about a person."""

    name: str = Field(description="Name of the person")
    age: int = Field(description="Age of the person")
    occupation: str = Field(description="Occupation of the person")


def person_agent(model: Model, log: InvocationLog) -> Agent:
    return Agent(model=model, structured_output_model=PersonInfo, callback_handler=None)


PROMPT = "John Smith is a 30 year-old software engineer"
PERSON = {"name": "John Smith", "age": 30, "occupation": "software engineer"}


async def _plain(
    scenario: Scenario, server: ScriptedModelServer, key: str, tmp_path: Path
) -> tuple[Run, Any]:
    server.script(key, scenario.script)
    log = InvocationLog(tmp_path / "plain.jsonl")
    agent = scenario.build(model_for(server.url, key, scenario.api), log)
    result = await agent.invoke_async(scenario.turns[0])
    run = Run(
        requests=_requests(server, key),
        messages=[_model_fields(cast(dict[str, Any], m)) for m in agent.messages],
        state=agent.state.get() or {},
        tool_runs=tool_runs(log),
    )
    output = result.structured_output
    return run, output.model_dump(mode="json") if output is not None else None


async def _both(
    scenario: Scenario, server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> tuple[Run, Any, Run, Any]:
    key = unique(f"strands-{scenario.name}")
    plain, plain_output = await _plain(scenario, server, f"{key}-plain", tmp_path)
    session = await run_session(scenario, server, key, tmp_path, temporal_address)
    # Every model call its own step, run once, and one step more: the one that takes the
    # structured output tool's result ends the turn without a model call, as plain stops.
    assert session.model_steps == len(plain.requests) + 1
    assert session.model_attempts == session.model_steps
    session = replace(session, model_steps=len(plain.requests), model_attempts=len(plain.requests))
    assert session.snapshot is not None
    view = session.snapshot.framework_state or {}
    return plain, plain_output, session, view.get("structured_output")


async def test_the_model_calls_the_structured_output_tool_and_the_turn_ends_as_plain(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="structured",
        build=person_agent,
        script=[ModelReply(tool_calls=[ScriptedToolCall(id="p1", name="PersonInfo", arguments=PERSON)])],
        turns=[PROMPT],
    )
    plain, plain_output, session, output = await _both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    assert output == plain_output == PERSON
    # The structured output tool was offered beside the agent's (none) tools, not forced.
    tools = [t["function"]["name"] for t in session.requests[0]["tools"]]
    assert tools == ["PersonInfo"]
    assert "tool_choice" not in session.requests[0]
    # One model call: the turn ended on the tool's result, as plain stops.
    assert len(session.requests) == 1
    assert session.messages[-1]["content"][0]["toolResult"]["status"] == "success"


async def test_a_text_answer_is_followed_by_the_forced_tool_as_plain(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="structured-forced",
        build=person_agent,
        script=[
            ModelReply(text="John is 30 and writes software."),
            # A first forced call the model gets wrong: Strands' validation error, and again.
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(id="p1", name="PersonInfo", arguments={**PERSON, "age": "thirty"})
                ]
            ),
            ModelReply(tool_calls=[ScriptedToolCall(id="p2", name="PersonInfo", arguments=PERSON)]),
        ],
        turns=[PROMPT],
    )
    plain, plain_output, session, output = await _both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    assert output == plain_output == PERSON
    assert len(session.requests) == 3
    forced = session.requests[1]
    assert forced["tool_choice"] == {"type": "function", "function": {"name": "PersonInfo"}}
    assert forced["messages"][-1]["content"][0]["text"] == (
        "You must format the previous response as structured output."
    )
    # The validation error went back to the model, and the call stayed forced.
    assert "Validation failed for PersonInfo" in str(session.requests[2]["messages"][-1]["content"])
    assert session.requests[2]["tool_choice"] == forced["tool_choice"]
    # The forcing prompt is stored where plain has it, with role system (the runner wrote it).
    assert session.snapshot is not None
    roles = [m.message.role.value for m in session.snapshot.messages]
    assert roles[:3] == ["user", "assistant", "system"]


async def test_anthropic_native_structured_output_forced_as_plain(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    """`AnthropicModel` says it enforces structured output itself (`_supports_structured_output`):
    the forced call is sent every tool and the output model, and Anthropic's tool choice, as
    plain sends them."""
    scenario = Scenario(
        name="structured-anthropic",
        build=person_agent,
        api="anthropic",
        script=[
            ModelReply(text="John is 30 and writes software."),
            ModelReply(tool_calls=[ScriptedToolCall(id="p1", name="PersonInfo", arguments=PERSON)]),
        ],
        turns=[PROMPT],
    )
    plain, plain_output, session, output = await _both(scenario, model_server, temporal_address, tmp_path)
    assert_same_run(plain, session)
    assert output == plain_output == PERSON
    assert len(session.requests) == 2
    assert "tool_choice" not in session.requests[0]
    assert session.requests[1]["tool_choice"] == {"type": "tool", "name": "PersonInfo"}
