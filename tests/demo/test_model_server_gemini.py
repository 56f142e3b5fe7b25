"""The scripted model server speaks Gemini's generateContent and streamGenerateContent:
the raw wire shapes, faults in Google's error shape, what it records, and google-genai
(the client Google ADK uses) pointed at it."""

# google-genai's `contents` union names PIL's image type, unknown without Pillow installed.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.genai import errors, types
from google.genai.client import Client

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as running:
        yield running


def gemini_client(server: ScriptedModelServer, key: str) -> Client:
    options = types.HttpOptions(base_url=server.base_url(key, api="gemini"))
    return Client(api_key="dummy", http_options=options)


def weather_tool() -> types.Tool:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    declaration = types.FunctionDeclaration(
        name="get_weather", description="The weather", parameters_json_schema=schema
    )
    return types.Tool(function_declarations=[declaration])


def sse_events(body: str) -> list[dict[str, Any]]:
    return [json.loads(block.removeprefix("data: ")) for block in body.split("\r\n\r\n") if block.strip()]


def test_generate_content_raw_shape(server: ScriptedModelServer) -> None:
    call = ScriptedToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    server.script("k", [ModelReply.call(call, text="Looking", usage=ScriptedUsage(7, 3))])
    url = f"{server.base_url('k', api='gemini')}/v1beta/models/gemini-test:generateContent"
    response = httpx.post(url, json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["modelVersion"] == "gemini-test"
    assert body["candidates"] == [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Looking"},
                    {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}},
                ],
            },
            "index": 0,
            "finishReason": "STOP",
        }
    ]
    assert body["usageMetadata"] == {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10}


def test_stream_generate_content_raw_shape(server: ScriptedModelServer) -> None:
    server.script("k", [ModelReply.say("Hello", chunks=["He", "llo"], reasoning="hmm")])
    url = f"{server.base_url('k', api='gemini')}/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    response = httpx.post(url, json={"contents": []}, timeout=10)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    parts = [event["candidates"][0]["content"]["parts"] for event in events]
    assert parts == [[{"text": "hmm", "thought": True}], [{"text": "He"}], [{"text": "llo"}]]
    # Only the last chunk finishes and carries the usage.
    assert ["finishReason" in event["candidates"][0] for event in events] == [False, False, True]
    assert ["usageMetadata" in event for event in events] == [False, False, True]


def test_a_fault_answers_in_googles_error_shape(server: ScriptedModelServer) -> None:
    server.script("k", [ModelReply.fail("http_429", "slow down")])
    url = f"{server.base_url('k', api='gemini')}/v1beta/models/m:generateContent"
    response = httpx.post(url, json={"contents": []}, timeout=10)
    assert response.status_code == 429
    assert response.json() == {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}


def test_google_genai_calls_a_tool_then_streams_the_answer(server: ScriptedModelServer) -> None:
    call = ScriptedToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    server.script(
        "k", [ModelReply.call(call), ModelReply.say("Sunny in Paris", chunks=["Sunny", " in Paris"])]
    )
    client = gemini_client(server, "k")
    config = types.GenerateContentConfig(system_instruction="Be brief.", tools=[weather_tool()])
    first = client.models.generate_content(model="gemini-test", contents="Weather in Paris?", config=config)
    assert first.function_calls == [types.FunctionCall(id="c1", name="get_weather", args={"city": "Paris"})]
    assert first.usage_metadata is not None and first.usage_metadata.total_token_count == 15
    reply = types.FunctionResponse(id="c1", name="get_weather", response={"result": "sunny"})
    contents = [
        types.Content(role="user", parts=[types.Part(text="Weather in Paris?")]),
        *(c.content for c in first.candidates or [] if c.content is not None),
        types.Content(role="user", parts=[types.Part(function_response=reply)]),
    ]
    chunks = list(
        client.models.generate_content_stream(model="gemini-test", contents=contents, config=config)
    )
    assert [chunk.text for chunk in chunks] == ["Sunny", " in Paris"]

    asked, resumed = server.requests("k")
    assert (asked.api, asked.model, asked.stream) == ("gemini", "gemini-test", False)
    assert asked.path.endswith("/v1beta/models/gemini-test:generateContent")
    assert asked.sent_texts() == ["Be brief.", "Weather in Paris?"]
    assert asked.tool_names() == ["get_weather"]
    assert asked.last_user_text() == "Weather in Paris?"
    assert (resumed.model, resumed.stream) == ("gemini-test", True)
    assert resumed.tool_results() == {"c1": "sunny"}
    assert resumed.sent_texts() == ["Be brief.", "Weather in Paris?", "sunny"]
    # The tool result is not user text: the last user text is still the question.
    assert resumed.last_user_text() == "Weather in Paris?"


async def test_google_genai_async_client_and_errors(server: ScriptedModelServer) -> None:
    server.script("k", [ModelReply.fail("http_500", "broken"), ModelReply.say("ok")])
    client = gemini_client(server, "k")
    with pytest.raises(errors.ServerError) as failure:
        await client.aio.models.generate_content(model="gemini-test", contents="hi")
    assert failure.value.code == 500 and failure.value.message == "broken"
    answer = await client.aio.models.generate_content(model="gemini-test", contents="hi")
    assert answer.text == "ok"
    assert len(server.requests("k")) == 2


def test_a_structured_tool_result_reads_as_its_json(server: ScriptedModelServer) -> None:
    server.script("k", [ModelReply.say("done")])
    response = types.FunctionResponse(id="c9", name="lookup", response={"temp": 21, "unit": "C"})
    contents = [types.Content(role="user", parts=[types.Part(function_response=response)])]
    client = gemini_client(server, "k")  # held: a collected client closes its connection
    client.models.generate_content(model="m", contents=contents)
    (request,) = server.requests("k")
    assert request.tool_results() == {"c9": '{"temp":21,"unit":"C"}'}
    assert request.last_user_text() is None


def test_an_error_or_output_alone_reads_as_its_text(server: ScriptedModelServer) -> None:
    server.script("k", [ModelReply.say("done")])
    parts = [
        types.Part(function_response=types.FunctionResponse(id="e1", name="t", response={"error": "boom"})),
        types.Part(function_response=types.FunctionResponse(id="o1", name="t", response={"output": [1, 2]})),
    ]
    client = gemini_client(server, "k")
    client.models.generate_content(model="m", contents=[types.Content(role="user", parts=parts)])
    (request,) = server.requests("k")
    assert request.tool_results() == {"e1": "boom", "o1": "[1,2]"}


def test_the_conversation_lists_function_responses_and_user_texts_in_order(
    server: ScriptedModelServer,
) -> None:
    server.script("k", [ModelReply.say("done")])
    call = types.FunctionCall(id="c1", name="search", args={})
    contents = [
        types.Content(role="user", parts=[types.Part(text="find me a flight")]),
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        types.Content(
            role="user",
            parts=[types.Part(function_response=types.FunctionResponse(id="c1", name="search", response={}))],
        ),
        types.Content(role="user", parts=[types.Part(text="make it "), types.Part(text="Lisbon")]),
        types.Content(role="user", parts=[types.Part(text="continue")]),
    ]
    client = gemini_client(server, "k")
    client.models.generate_content(model="m", contents=contents)
    (request,) = server.requests("k")
    assert request.conversation(ignore=["continue"]) == [
        ("user", "find me a flight"),
        ("tool_result", "c1"),
        ("user", "make it Lisbon"),
    ]
