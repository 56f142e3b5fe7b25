"""The scripted model server's refusals (`ModelReply.refuse`), read by the official SDKs.

Each wire has its own refusal: Chat Completions' ``message.refusal`` (streamed as
``delta.refusal``), a Responses ``refusal`` content part, Anthropic's ``stop_reason:
"refusal"`` with ``stop_details``. Gemini has none, and a refusal is not rendered there.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall

USER_HI: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
REFUSAL = "I can't help with that."


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as running:
        yield running


def test_chat_completions_refusals_streamed_and_not(server: ScriptedModelServer) -> None:
    openai: Any = importlib.import_module("openai")
    server.script(
        "chat", [ModelReply.refuse(REFUSAL), ModelReply.refuse(REFUSAL), ModelReply.refuse(REFUSAL)]
    )
    sdk = openai.OpenAI(base_url=server.base_url("chat"), api_key="test", max_retries=0)

    message = sdk.chat.completions.create(model="gpt", messages=USER_HI).choices[0].message
    assert (message.content, message.refusal) == (None, REFUSAL)

    with sdk.chat.completions.stream(model="gpt", messages=USER_HI) as stream:
        refusal_deltas = [event.delta for event in stream if event.type == "refusal.delta"]
        final = stream.get_final_completion()
    assert refusal_deltas == ["I can't hel", "p with that."]  # two deltas: the client joins them
    assert (final.choices[0].message.content, final.choices[0].message.refusal) == (None, REFUSAL)
    assert final.choices[0].finish_reason == "stop"

    raw = list(sdk.chat.completions.create(model="gpt", messages=USER_HI, stream=True))
    assert "".join(chunk.choices[0].delta.refusal or "" for chunk in raw if chunk.choices) == REFUSAL
    assert all(not chunk.choices or chunk.choices[0].delta.content is None for chunk in raw)


def test_responses_refusals_streamed_and_not(server: ScriptedModelServer) -> None:
    openai: Any = importlib.import_module("openai")
    server.script("responses", [ModelReply.refuse(REFUSAL), ModelReply.refuse(REFUSAL)])
    sdk = openai.OpenAI(base_url=server.base_url("responses"), api_key="test", max_retries=0)

    response = sdk.responses.create(model="gpt", input="hi")
    (item,) = response.output
    assert (item.type, [(part.type, part.refusal) for part in item.content]) == (
        "message",
        [("refusal", REFUSAL)],
    )
    assert response.output_text == ""

    with sdk.responses.stream(model="gpt", input="hi") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds.count("response.refusal.delta") == 2
    assert "response.refusal.done" in kinds and "response.output_text.delta" not in kinds
    assert [(part.type, part.refusal) for part in final.output[0].content] == [("refusal", REFUSAL)]


def test_anthropic_refusals_streamed_and_not(server: ScriptedModelServer) -> None:
    anthropic: Any = importlib.import_module("anthropic")
    server.script("anthropic", [ModelReply.refuse(REFUSAL), ModelReply.refuse(REFUSAL), ModelReply.say("ok")])
    sdk = anthropic.Anthropic(
        base_url=server.base_url("anthropic", api="anthropic"), api_key="test", max_retries=0
    )

    message = sdk.messages.create(model="claude", max_tokens=64, messages=USER_HI)
    assert (message.stop_reason, message.content) == ("refusal", [])
    assert (message.stop_details.type, message.stop_details.explanation) == ("refusal", REFUSAL)

    with sdk.messages.stream(model="claude", max_tokens=64, messages=USER_HI) as stream:
        final = stream.get_final_message()
    assert (final.stop_reason, final.content, final.stop_details.explanation) == ("refusal", [], REFUSAL)

    # Any other answer is sent as before, without `stop_details`.
    answered = sdk.messages.with_raw_response.create(model="claude", max_tokens=64, messages=USER_HI)
    assert "stop_details" not in answered.http_response.json()


def test_a_refusal_is_the_whole_answer_and_round_trips() -> None:
    reply = ModelReply.refuse(REFUSAL)
    assert ModelReply.from_json(reply.to_json()) == reply
    assert ModelReply.from_json({"text": "old script"}).refusal is None
    with pytest.raises(ValueError, match="whole answer"):
        ModelReply(refusal=REFUSAL, text="and some text")
    with pytest.raises(ValueError, match="whole answer"):
        ModelReply(refusal=REFUSAL, tool_calls=[ScriptedToolCall("c1", "f")])


def test_gemini_renders_no_refusal(server: ScriptedModelServer) -> None:
    server.script("gemini", [ModelReply.refuse(REFUSAL)])
    url = f"{server.base_url('gemini', api='gemini')}/v1beta/models/gemini-test:generateContent"
    with httpx.Client(trust_env=False) as client:
        response = client.post(url, json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    assert response.status_code == 500
    assert "no explicit refusal" in response.text
