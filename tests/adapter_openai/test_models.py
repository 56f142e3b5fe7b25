"""Responses and Chat Completions models through the real `openai` client: deltas, usage,
one model request per model step, and images."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest

from sessionflow import AgentEvent, AgentEventType, AgentUsage
from sessionflow.demo import ModelReply, ScriptedToolCall, ScriptedUsage
from tests.adapter_openai.conftest import Harness, HarnessFactory
from tests.adapter_openai.scenarios import Api

T = AgentEventType


async def follow_turn(harness: Harness) -> list[AgentEvent]:
    """Every event (live deltas included) until the first turn ends and the stream goes quiet.

    Live deltas can trail the durable `turn_completed` event, so the stream is drained until
    nothing arrives for a moment.
    """
    seen: list[AgentEvent] = []
    stream = aiter(harness.sessions.events(harness.session_id))
    ended = False
    while True:
        try:
            event = await (asyncio.wait_for(anext(stream), 1.0) if ended else anext(stream))
        except TimeoutError:
            return seen
        seen.append(event)
        ended = ended or event.type in (T.TURN_COMPLETED, T.TURN_FAILED)


@pytest.mark.parametrize("api", ["responses", "chat_completions"])
async def test_tool_round_trip_streams_deltas_and_usage(harness_factory: HarnessFactory, api: Api) -> None:
    harness = await harness_factory("assistant", api=api)
    harness.script(
        [
            # The delay lets the test subscribe before the first model step starts streaming.
            ModelReply(
                tool_calls=[ScriptedToolCall("call_w", "get_weather", {"city": "Oslo"})],
                reasoning="Need the weather.",
                usage=ScriptedUsage(30, 7),
                delay_seconds=1.0,
            ),
            ModelReply.say(
                "Sunny in Oslo.",
                ["Sunny ", "in ", "Oslo."],
                reasoning="Tool said sunny.",
                usage=ScriptedUsage(50, 9),
            ),
        ]
    )
    await harness.start("Weather in Oslo?")
    events = await asyncio.wait_for(follow_turn(harness), 60)
    snapshot = await harness.idle_after(1)

    assert snapshot.messages[-1].message.text == "Sunny in Oslo."
    text = [
        e.data["text"] for e in events if e.type is T.TEXT_DELTA and e.step_execution_id == "turn-1/model-2"
    ]
    assert text == ["Sunny ", "in ", "Oslo."]
    reasoning = [(e.step_execution_id, e.data["text"]) for e in events if e.type is T.REASONING_DELTA]
    assert reasoning == [("turn-1/model-1", "Need the weather."), ("turn-1/model-2", "Tool said sunny.")]
    recorded = [e.data["recorded"] for e in events if e.type is T.USAGE_RECORDED]
    assert recorded == [
        {"requests": 1, "input_tokens": 30, "output_tokens": 7},
        {"requests": 1, "input_tokens": 50, "output_tokens": 9},
    ]
    assert snapshot.usage == AgentUsage(requests=2, input_tokens=80, output_tokens=16)

    requests = harness.requests()
    assert [(r.api, r.stream) for r in requests] == [(api, True), (api, True)]
    assert requests[0].tool_names() == ["get_weather", "refund", "flaky", "save_note"]
    assert requests[1].tool_results() == {"call_w": "sunny in Oslo"}
    steps = await harness.steps()
    assert len(requests) == sum(1 for s in steps if s.step_type == "sessionflow.RunModel")
    assert all(s.final_attempt == 1 for s in steps)


@pytest.mark.parametrize("api", ["responses", "chat_completions"])
async def test_later_turns_rebuild_the_input_from_stored_messages(
    harness_factory: HarnessFactory, api: Api
) -> None:
    harness = await harness_factory("assistant", api=api)
    harness.script(
        [
            ModelReply.call(ScriptedToolCall("call_w", "get_weather", {"city": "Rome"})),
            ModelReply.say("Sunny in Rome."),
            ModelReply.say("You asked about Rome."),
        ]
    )
    await harness.start("Weather in Rome?")
    await harness.idle_after(1)
    assert await harness.sessions.send_user_message(harness.session_id, "What did I ask?")
    snapshot = await harness.idle_after(2)

    assert snapshot.messages[-1].message.text == "You asked about Rome."
    third = harness.requests()[2]
    # The whole first turn (user text, tool call, tool result, answer) and the new question.
    assert third.sent_texts()[-4:] == [
        "Weather in Rome?",
        "sunny in Rome",
        "Sunny in Rome.",
        "What did I ask?",
    ]
    assert third.tool_results() == {"call_w": "sunny in Rome"}


async def test_images_are_sent_as_data_urls(harness_factory: HarnessFactory, tmp_path: Path) -> None:
    harness = await harness_factory("assistant")
    harness.script([ModelReply.say("hello"), ModelReply.say("A red dot.")])
    image = tmp_path / "dot.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    await harness.start("hi")
    await harness.idle_after(1)
    assert await harness.sessions.send_user_message(harness.session_id, "What is this?", images=[str(image)])
    snapshot = await harness.idle_after(2)

    assert snapshot.messages[-1].message.text == "A red dot."
    stored = snapshot.messages[-2].message.framework_item
    assert stored["content"][1] == {"type": "image_ref", "path": str(image), "media_type": "image/png"}
    sent = json.dumps(harness.requests()[1].body)
    assert "data:image/png;base64," + base64.b64encode(image.read_bytes()).decode() in sent
