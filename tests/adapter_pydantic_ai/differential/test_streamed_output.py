"""Streamed and typed output, differential against plain Pydantic AI (issue 23, item 5).

A session's model step publishes each partial output as a ``custom_event`` of kind
``partial_output``: a client following the session sees the snapshots plain
``agent.run_stream(...).stream_output()`` yields for the same script (told to publish every
change, as ``debounce_by=None``; repeated snapshots once). A completed turn stores its
output as JSON, and ``read_output`` gives it back as plain's ``result.output``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, NativeOutput

from sessionflow import AgentEvent, AgentEventType, AgentSessionClient, AgentSnapshot, AgentStatus
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog, wait_for_agent_snapshot, wait_until
from sessionflow_pydantic_ai import read_output
from tests.adapter_pydantic_ai.differential import output_agents
from tests.adapter_pydantic_ai.differential.harness import AgentBuilder, Built, Models, session_flow, unique
from tests.adapter_pydantic_ai.differential.normalise import json_value
from tests.serving import serving

T = AgentEventType
PROFILE = {"name": "Ben", "dob": "1990-01-28", "bio": "Likes the chain the dog and the pyramid"}
PROFILE_PROMPT = "My name is Ben, I was born on January 28th 1990, I like the chain the dog and the pyramid."


def once(values: Sequence[Any]) -> list[Any]:
    """``values`` without consecutive repeats (the session publishes a repeated snapshot once)."""
    return [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]


async def plain_stream(built: Built, prompt: str) -> tuple[list[Any], Any]:
    """What plain ``run_stream(...).stream_output()`` yields, as JSON, and the run's output."""
    async with built.agent.run_stream(prompt) as result:
        yielded = [json_value(o) async for o in result.stream_output(debounce_by=None)]
        return yielded, await result.get_output()


async def follow(sessions: AgentSessionClient, session_id: str) -> list[AgentEvent]:
    """Every event of the session's first turn, live ones included."""
    seen: list[AgentEvent] = []
    stream = sessions.events(session_id)
    async for event in stream:
        seen.append(event)
        if event.type in (T.TURN_COMPLETED, T.TURN_FAILED):
            break
    await stream.aclose()
    return seen


async def turn_ended(sessions: AgentSessionClient, session_id: str, number: int) -> AgentSnapshot:
    def probe(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        state = snapshot.state
        ended = state and state.turn_count >= number and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        return snapshot if ended else None

    return await wait_for_agent_snapshot(
        sessions, session_id, probe, description=f"turn {number} to end", timeout=90
    )


async def session_stream(
    build: AgentBuilder, server: ScriptedModelServer, key: str, prompt: str, temporal_address: str, log: Path
) -> tuple[list[AgentEvent], AgentSnapshot, Built]:
    """The session's events of one turn (every change published), and its snapshot after it."""
    built = build(Models(server, key), InvocationLog(log))
    flow = session_flow(replace(built, flow_args={**built.flow_args, "partial_output_interval": 0}), key)
    async with serving(temporal_address, flow) as sessions:
        following = asyncio.create_task(follow(sessions, key))
        # Subscribed to the live events before the first step streams.
        await wait_until("the follower to subscribe", lambda: flow.delta_transport.has_subscribers(key))
        await sessions.start_session(key, prompt)
        events = await following
        return events, await turn_ended(sessions, key, 1), built


def partials(events: Sequence[AgentEvent]) -> list[AgentEvent]:
    return [e for e in events if e.type is T.CUSTOM_EVENT and e.data.get("kind") == "partial_output"]


async def test_a_tool_output_streams_its_partial_outputs_as_plain_stream_output_yields(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """streamed_user_profile.py: the output tool's arguments stream, the profile grows."""
    key = unique("pai-partial-tool")
    script = [ModelReply.call(ScriptedToolCall("call_profile", "final_result", PROFILE))]
    model_server.script(f"{key}-plain", script)
    model_server.script(key, script)
    plain = output_agents.user_profile(Models(model_server, f"{key}-plain"), InvocationLog(tmp_path / "p"))
    yielded, plain_output = await plain_stream(plain, PROFILE_PROMPT)

    events, snapshot, built = await session_stream(
        output_agents.user_profile, model_server, key, PROFILE_PROMPT, temporal_address, tmp_path / "s"
    )

    published = partials(events)
    # The scripted server sends the arguments in two fragments: half a profile, then all of it.
    assert len(published) >= 2, [e.data for e in published]
    assert [e.data["data"] for e in published] == once(yielded)
    assert published[-1].data["data"] == PROFILE
    assert published[0].data["data"] != PROFILE, "the first snapshot is partial"
    assert all(e.data["tool_name"] == "final_result" for e in published)
    assert all(e.offset is None and e.step_execution_id == "turn-1/model-1" for e in published)
    # Live events of the step come before the durable end of the turn.
    assert events.index(published[-1]) < next(i for i, e in enumerate(events) if e.type is T.TURN_COMPLETED)
    # No text was streamed: the output came through the tool.
    assert not [e for e in events if e.type is T.TEXT_DELTA]
    typed = read_output(snapshot, built.agent.output_type)
    assert typed == plain_output and typed["dob"] == date(1990, 1, 28)


def native_user_profile(models: Models, log: InvocationLog) -> Built:
    """streamed_user_profile.py's agent with ``NativeOutput``, as the docs advise for models
    that cannot stream tool arguments: the profile comes as JSON text."""
    agent = Agent[Any, output_agents.UserProfile](
        models.model(),
        output_type=NativeOutput(output_agents.UserProfile),
        instructions="Extract a user profile from the input",
    )
    return Built(agent=agent)


async def test_a_native_output_streams_text_deltas_and_partial_outputs(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The profile as JSON text in chunks: text deltas as before, and the growing output."""
    answer = json.dumps(PROFILE)
    chunks = [answer[i : i + 12] for i in range(0, len(answer), 12)]
    key = unique("pai-partial-native")
    model_server.script(f"{key}-plain", [ModelReply.say(answer, chunks=chunks)])
    model_server.script(key, [ModelReply.say(answer, chunks=chunks)])
    plain = native_user_profile(Models(model_server, f"{key}-plain"), InvocationLog(tmp_path / "p"))
    yielded, plain_output = await plain_stream(plain, PROFILE_PROMPT)

    events, snapshot, built = await session_stream(
        native_user_profile, model_server, key, PROFILE_PROMPT, temporal_address, tmp_path / "s"
    )

    published = [e.data["data"] for e in partials(events)]
    assert published == once(yielded)
    assert len(published) >= 3 and published[-1] == PROFILE
    assert published[0] == {"name": "Be"}  # a trailing string shows as far as it came
    assert all(e.data["tool_name"] is None for e in partials(events))
    # The JSON text streams as text deltas, chunk by chunk, as it did before.
    assert [e.data["text"] for e in events if e.type is T.TEXT_DELTA] == chunks
    assert read_output(snapshot, built.agent.output_type) == plain_output


async def test_a_text_answer_publishes_text_deltas_and_no_partial_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """box_or_error.py answering in text: its deltas are the output already."""
    ask = "Please provide the units for the dimensions (e.g., cm, in, m)."
    chunks = ["Please provide ", "the units for ", "the dimensions (e.g., cm, in, m)."]
    key = unique("pai-partial-text")
    model_server.script(key, [ModelReply.say(ask, chunks=chunks)])

    events, snapshot, built = await session_stream(
        output_agents.box_or_error, model_server, key, "The box is 10x20x30", temporal_address, tmp_path
    )

    assert partials(events) == []
    assert [e.data["text"] for e in events if e.type is T.TEXT_DELTA] == chunks
    assert read_output(snapshot, built.agent.output_type) == ask


async def test_read_output_gives_each_turns_output_typed_as_plain_result_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``[Box, str]``: a text turn reads back as that str, a tool turn as the `Box`, as plain has them."""
    ask = "Please provide the units for the dimensions (e.g., cm, in, m)."
    box = {"width": 10, "height": 20, "depth": 30, "units": "cm"}
    script = [ModelReply.say(ask), ModelReply.call(ScriptedToolCall("call_box", "final_result", box))]
    turns = ["The box is 10x20x30", "The box is 10x20x30 cm"]
    key = unique("pai-typed-box")
    model_server.script(f"{key}-plain", script)
    model_server.script(key, script)

    plain = output_agents.box_or_error(Models(model_server, f"{key}-plain"), InvocationLog(tmp_path / "p"))
    plain_outputs: list[Any] = []
    history = None
    for text in turns:
        result = await plain.agent.run(text, message_history=history)
        plain_outputs.append(result.output)
        history = result.all_messages()

    built = output_agents.box_or_error(Models(model_server, key), InvocationLog(tmp_path / "s"))
    typed: list[Any] = []
    async with serving(temporal_address, session_flow(built, key)) as sessions:
        await sessions.start_session(key, turns[0])
        typed.append(read_output(await turn_ended(sessions, key, 1), built.agent.output_type))
        assert await sessions.send_user_message(key, turns[1])
        snapshot = await turn_ended(sessions, key, 2)
        typed.append(read_output(snapshot, built.agent.output_type))

    assert typed == plain_outputs
    assert [type(o) for o in typed] == [str, output_agents.Box]
    # The output is stored as JSON in the framework's state, the text is for people.
    assert snapshot.framework_state == {"output": box}


async def test_read_output_of_a_pydantic_model_through_a_named_output_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """tool_output.py: ``ToolOutput(Fruit, name='return_fruit')`` reads back as the `Fruit`."""
    banana = {"name": "banana", "color": "yellow"}
    script = [ModelReply.call(ScriptedToolCall("call_fruit", "return_fruit", banana))]
    key = unique("pai-typed-fruit")
    model_server.script(f"{key}-plain", script)
    model_server.script(key, script)
    plain = output_agents.tool_output(Models(model_server, f"{key}-plain"), InvocationLog(tmp_path / "p"))
    plain_output = (await plain.agent.run("What is a banana?")).output

    built = output_agents.tool_output(Models(model_server, key), InvocationLog(tmp_path / "s"))
    async with serving(temporal_address, session_flow(built, key)) as sessions:
        await sessions.start_session(key, "What is a banana?")
        snapshot = await turn_ended(sessions, key, 1)

    typed = read_output(snapshot, built.agent.output_type)
    assert typed == plain_output == output_agents.Fruit(**banana)
    assert isinstance(typed, output_agents.Fruit)
