"""Pydantic AI's own history, carried once a history processor rewrote it (no Temporal).

The differential tests (differential/test_history_processors.py) compare whole sessions
with plain runs; these pin down what travels: the carry holds exactly plain's
``result.all_messages()``, nothing travels for an agent without processors, and the formats
say which is which.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from pydantic_ai import Agent, ModelMessage
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)

from sessionflow import AgentMessage, ImageInput
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow_pydantic_ai import PydanticAIRunner
from sessionflow_pydantic_ai._carry import decode_carry, encode_carry
from sessionflow_pydantic_ai._framework_history import CarriedHistory, extends
from sessionflow_pydantic_ai._images import InlinedImages, user_message_with_images
from sessionflow_pydantic_ai._messages import RunState, load_messages
from sessionflow_pydantic_ai._models import model_for_api
from tests.adapter_pydantic_ai.differential.normalise import normalise_history
from tests.adapter_pydantic_ai.test_model_step import PNG
from tests.adapter_pydantic_ai.turns import play_turn, stored


def weather_agent(server: ScriptedModelServer, key: str, processor: object | None) -> Agent[None, str]:
    model = model_for_api("chat_completions", "m", base_url=server.base_url(key), api_key="k")
    agent = Agent(
        model,
        system_prompt="You report the weather.",
        capabilities=[ProcessHistory(processor)] if processor is not None else [],  # pyright: ignore[reportArgumentType]
    )

    @agent.tool_plain
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    return agent


def last_two_turns(messages: list[ModelMessage]) -> list[ModelMessage]:
    starts = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest) and any(p.part_kind == "user-prompt" for p in m.parts)
    ]
    return messages[starts[-2] :] if len(starts) > 2 else messages


SCRIPT = [
    ModelReply.call(ScriptedToolCall("c1", "weather", {"city": "Oslo"})),
    ModelReply.say("Sunny in Oslo."),
    ModelReply.say("Yes."),
    ModelReply.call(ScriptedToolCall("c2", "weather", {"city": "Rome"})),
    ModelReply.say("Sunny in Rome."),
]
TURNS = ["Weather in Oslo?", "Sure?", "And Rome?"]


def comparable(messages: list[ModelMessage], key: str) -> list[dict[str, object]]:
    return normalise_history(ModelMessagesTypeAdapter.dump_python(messages, mode="json"), key=key)


async def play(
    runner: PydanticAIRunner, turns: list[str]
) -> tuple[list[AgentMessage], str | None, list[str | None]]:
    """Play ``turns`` as a session would; the stored messages, the last carry, and every run state."""
    messages: list[AgentMessage] = []
    carry: str | None = None
    states: list[str | None] = []
    for text in turns:
        played = await play_turn(runner, text, history=messages, carried_state=carry)
        states += [getattr(o, "framework_run_state", None) for o in played.outcomes]
        messages = stored(played.messages)
        carry = played.completed.carry
    return messages, carry, states


async def test_the_carry_holds_plain_all_messages_once_a_processor_rewrote_them(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script("plain", SCRIPT)
    model_server.script("session", SCRIPT)
    agent = weather_agent(model_server, "plain", last_two_turns)
    history: list[ModelMessage] = []
    for text in TURNS:
        history = (await agent.run(text, message_history=history or None)).all_messages()

    stored_messages, carry, states = await play(
        PydanticAIRunner(weather_agent(model_server, "session", last_two_turns)), TURNS
    )

    carried = decode_carry(carry).history
    assert carried is not None and carried.through == len(stored_messages)
    assert comparable(carried.messages, "session") == comparable(history, "plain")
    # Turn 3 dropped turn 1, and the system prompt with it: so does what travels.
    assert not any(isinstance(p, SystemPromptPart) for m in carried.messages for p in getattr(m, "parts", []))
    # Turn 3's run state, after its processor ran, already held the history: version 3.
    assert [json.loads(s)["version"] for s in states if s] == [2, 3]
    assert len(stored_messages) == 4 + 2 + 4  # every message of the three turns is stored


async def test_only_the_system_prompt_travels_for_an_agent_without_a_processor(
    model_server: ScriptedModelServer,
) -> None:
    """Its history is the stored messages; the system prompt its first request made is the
    one thing stored messages lack, and it travels (a key older workers ignore: format 1)."""
    model_server.script("plain-agent", SCRIPT)
    _, carry, states = await play(PydanticAIRunner(weather_agent(model_server, "plain-agent", None)), TURNS)
    assert carry is not None and json.loads(carry)["format"].endswith("carry-1")
    carried = decode_carry(carry)
    assert carried.history is None and not carried.has_deps
    assert carried.system_prompt is not None
    assert [p.content for p in carried.system_prompt] == ["You report the weather."]
    assert [json.loads(s)["version"] for s in states if s] == [2, 2]
    assert all("history" not in json.loads(s) for s in states if s)


def test_extends_knows_a_rebuilt_history_from_a_rewritten_one() -> None:
    hi, now = UserPromptPart("hi"), UserPromptPart("and now?")
    before: list[ModelMessage] = [
        ModelRequest(parts=[hi]),
        ModelResponse(parts=[TextPart("hello")]),
        ModelRequest(parts=[now]),
    ]
    # What Pydantic AI makes of it: the system prompt at the head, the last request sent anew.
    sent = ModelRequest(parts=[now], instructions="Be brief.", run_id="r2")
    rebuilt: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("sys"), hi]),
        before[1],
        sent,
        ModelResponse(parts=[TextPart("now")]),
    ]
    assert extends(before, rebuilt)
    assert not extends(before, [before[0], ModelResponse(parts=[TextPart("HELLO")]), sent])
    assert not extends(before, [before[1], sent])  # the first request dropped
    assert not extends(before, rebuilt[2:])


def test_a_run_state_with_history_is_version_3_and_reads_back() -> None:
    response = ModelResponse(parts=[TextPart("x")])
    kept: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("summary")]), response]
    retry = ModelRequest(parts=[UserPromptPart("again")])
    state = RunState(messages=[response, retry], deferred=[], history=[*kept, retry])
    raw = json.loads(state.to_json())
    assert raw["version"] == 3 and len(raw["history"]) == 3
    assert RunState.from_json(state.to_json()).history == state.history
    assert json.loads(RunState(messages=[response, retry], deferred=[]).to_json())["version"] == 2


def test_the_carry_writes_format_2_only_with_a_history() -> None:
    history = CarriedHistory([ModelRequest(parts=[UserPromptPart("summary")])], through=7)
    assert encode_carry(False, None) is None
    deps_only = encode_carry(True, {"n": 1})
    assert deps_only is not None and json.loads(deps_only)["format"].endswith("carry-1")
    both = decode_carry(encode_carry(True, {"n": 1}, history))
    assert both.has_deps and both.deps == {"n": 1} and both.history == history
    history_only = decode_carry(encode_carry(False, None, history))
    assert not history_only.has_deps and history_only.history == history
    assert decode_carry('{"format": "something-else"}').history is None


def test_images_read_for_a_run_go_back_to_their_references(tmp_path: Path) -> None:
    path = tmp_path / "pixel.png"
    path.write_bytes(PNG)
    message = user_message_with_images("what is this?", [ImageInput(path=str(path), media_type="image/png")])
    [request] = load_messages([message.framework_item])
    images = InlinedImages()
    [inlined] = images.inline([request])
    assert isinstance(inlined, ModelRequest) and isinstance(part := inlined.parts[0], UserPromptPart)
    assert not isinstance(part.content, str) and isinstance(part.content[1], BinaryContent)
    [restored] = images.restore([inlined])
    assert isinstance(restored, ModelRequest) and isinstance(back := restored.parts[0], UserPromptPart)
    assert restored == request and not isinstance(back.content, str) and isinstance(back.content[1], ImageUrl)
    assert base64.b64encode(PNG).decode() not in json.dumps(
        ModelMessagesTypeAdapter.dump_python([restored], mode="json")
    )
