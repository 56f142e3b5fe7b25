"""The scripted model server: wire formats, faults, keys, control API, child process."""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

import sessionflow.demo._model_server as model_server_module
from sessionflow.demo import (
    ModelFault,
    ModelReply,
    ModelServerControl,
    RecordedRequest,
    ScriptedModelServer,
    ScriptedToolCall,
    ScriptedUsage,
)

USER_HI: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as running:
        yield running


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, timeout=30.0) as http:
        yield http


def child_env() -> dict[str, str]:
    """Environment for child Pythons that can import sessionflow from this checkout."""
    src = str(Path(model_server_module.__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    return env


def sse(text: str) -> list[tuple[str | None, Any]]:
    """Parse an SSE body into (event name, decoded data) pairs; ``[DONE]`` stays a string."""
    events: list[tuple[str | None, Any]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data.append(line.removeprefix("data: "))
        joined = "\n".join(data)
        events.append((name, joined if joined == "[DONE]" else json.loads(joined)))
    return events


def weather_call(call_id: str = "call_1") -> ScriptedToolCall:
    return ScriptedToolCall(id=call_id, name="get_weather", arguments={"city": "Paris", "unit": "C"})


# --------------------------------------------------------------------------- Chat Completions


def test_chat_completions_non_streaming(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script(
        "k",
        [
            ModelReply.say("Hello there", reasoning="greet them", usage=ScriptedUsage(7, 3)),
            ModelReply.call(weather_call(), ScriptedToolCall("call_2", "noop", "{}")),
        ],
    )
    url = server.base_url("k") + "/chat/completions"

    first = client.post(url, json={"model": "gpt-x", "messages": USER_HI})
    assert first.status_code == 200
    body = first.json()
    assert body["object"] == "chat.completion"
    assert body["model"] == "gpt-x"
    choice = body["choices"][0]
    assert choice["message"]["content"] == "Hello there"
    assert choice["message"]["reasoning_content"] == "greet them"
    assert choice["finish_reason"] == "stop"
    assert body["usage"] == {
        "prompt_tokens": 7,
        "completion_tokens": 3,
        "total_tokens": 10,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }

    second = client.post(url, json={"model": "gpt-x", "messages": USER_HI}).json()
    message = second["choices"][0]["message"]
    assert second["choices"][0]["finish_reason"] == "tool_calls"
    assert message["content"] is None
    assert [(c["id"], c["type"], c["function"]["name"]) for c in message["tool_calls"]] == [
        ("call_1", "function", "get_weather"),
        ("call_2", "function", "noop"),
    ]
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris", "unit": "C"}
    assert message["tool_calls"][1]["function"]["arguments"] == "{}"
    assert (second["usage"]["prompt_tokens"], second["usage"]["completion_tokens"]) == (10, 5)


def test_chat_completions_streaming_text_and_reasoning(
    server: ScriptedModelServer, client: httpx.Client
) -> None:
    server.script("k", [ModelReply.say("Hello world", chunks=["Hel", "lo ", "world"], reasoning="hmm")])
    response = client.post(
        server.base_url("k") + "/chat/completions",
        json={"model": "m", "messages": USER_HI, "stream": True, "stream_options": {"include_usage": True}},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse(response.text)
    assert events[-1] == (None, "[DONE]")
    chunks = [data for _, data in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" and c["id"] == chunks[0]["id"] for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas[0]["role"] == "assistant"
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "hmm"
    assert [d["content"] for d in deltas if "content" in d] == ["Hel", "lo ", "world"]
    finishing = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finishing[-1] == "stop" and set(finishing[:-1]) == {None}
    # include_usage: a final chunk with no choices carries the usage.
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["total_tokens"] == 15


def test_chat_completions_streaming_tool_calls(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script("k", [ModelReply.call(weather_call("call_a"), weather_call("call_b"))])
    response = client.post(
        server.base_url("k") + "/chat/completions", json={"model": "m", "messages": USER_HI, "stream": True}
    )
    chunks = [data for _, data in sse(response.text)[:-1]]
    calls: dict[int, dict[str, str]] = {}
    heads: list[dict[str, Any]] = []
    for chunk in chunks:
        for delta in chunk["choices"][0]["delta"].get("tool_calls", []):
            if "id" in delta:
                heads.append(delta)
                calls[delta["index"]] = {"id": delta["id"], "name": delta["function"]["name"], "args": ""}
            calls[delta["index"]]["args"] += delta["function"]["arguments"]
    assert [(h["index"], h["id"], h["function"]["name"]) for h in heads] == [
        (0, "call_a", "get_weather"),
        (1, "call_b", "get_weather"),
    ]
    # Arguments arrive in more than one fragment, so clients must concatenate.
    fragments = [d for c in chunks for d in c["choices"][0]["delta"].get("tool_calls", []) if "id" not in d]
    assert len(fragments) >= 2
    assert [json.loads(calls[i]["args"]) for i in (0, 1)] == [{"city": "Paris", "unit": "C"}] * 2
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    # Without include_usage the finishing chunk still carries usage.
    assert chunks[-1]["usage"]["prompt_tokens"] == 10


# --------------------------------------------------------------------------- Responses


def test_responses_non_streaming(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script(
        "k",
        [
            ModelReply.call(
                weather_call(), text="Checking", reasoning="need weather", usage=ScriptedUsage(20, 9)
            )
        ],
    )
    response = client.post(
        server.base_url("k") + "/responses",
        json={"model": "gpt-r", "input": "weather?", "instructions": "be brief", "tools": []},
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["object"], body["status"], body["model"]) == ("response", "completed", "gpt-r")
    assert body["id"].startswith("resp_")
    assert body["instructions"] == "be brief"
    for field in ("created_at", "parallel_tool_calls", "tool_choice", "tools", "error", "incomplete_details"):
        assert field in body
    reasoning, message, call = body["output"]
    assert reasoning["type"] == "reasoning"
    assert reasoning["summary"] == [{"type": "summary_text", "text": "need weather"}]
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"][0]["type"] == "output_text" and message["content"][0]["text"] == "Checking"
    assert call["type"] == "function_call" and call["id"].startswith("fc_")
    assert (call["call_id"], call["name"]) == ("call_1", "get_weather")
    assert json.loads(call["arguments"]) == {"city": "Paris", "unit": "C"}
    assert body["usage"] == {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 9,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 29,
    }


def test_a_reasoning_only_reply_has_no_message(server: ScriptedModelServer, client: httpx.Client) -> None:
    thinking = ModelReply.reasoning_only("only thinking")
    assert ModelReply.from_json(thinking.to_json()) == thinking
    # A script written before the option: every reply keeps its message.
    assert ModelReply.from_json({"reasoning": "x"}).message is True
    with pytest.raises(ValueError, match="message=False"):
        ModelReply(text="words", message=False)
    server.script("k", [thinking, ModelReply(reasoning="with a message")])
    for stream in (False, True):
        response = client.post(
            server.base_url("k") + "/responses", json={"model": "m", "input": "hi", "stream": stream}
        )
        assert response.status_code == 200
        if not stream:
            assert [item["type"] for item in response.json()["output"]] == ["reasoning"]
        else:
            done = [
                json.loads(line[len("data: ") :])
                for line in response.text.splitlines()
                if line.startswith("data: ") and '"response.completed"' in line
            ]
            assert [item["type"] for item in done[0]["response"]["output"]] == ["reasoning", "message"]


def test_responses_streaming(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script(
        "k",
        [
            ModelReply(
                text_chunks=["Let me ", "check"],
                reasoning="plan",
                tool_calls=[weather_call()],
            )
        ],
    )
    response = client.post(
        server.base_url("k") + "/responses", json={"model": "m", "input": "weather?", "stream": True}
    )
    assert response.status_code == 200
    events = sse(response.text)
    assert all(name == data["type"] for name, data in events)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    types = [data["type"] for _, data in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    for expected in (
        "response.output_item.added",
        "response.reasoning_summary_text.delta",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
    ):
        assert expected in types
    by_type: dict[str, list[Any]] = {}
    for _, data in events:
        by_type.setdefault(data["type"], []).append(data)
    assert [d["delta"] for d in by_type["response.output_text.delta"]] == ["Let me ", "check"]
    assert by_type["response.output_text.done"][0]["text"] == "Let me check"
    assert by_type["response.reasoning_summary_text.done"][0]["text"] == "plan"
    arguments = "".join(d["delta"] for d in by_type["response.function_call_arguments.delta"])
    assert json.loads(arguments) == {"city": "Paris", "unit": "C"}
    assert by_type["response.function_call_arguments.done"][0]["arguments"] == arguments
    added = [d["item"]["type"] for d in by_type["response.output_item.added"]]
    assert added == ["reasoning", "message", "function_call"]
    done = by_type["response.output_item.done"]
    assert [d["output_index"] for d in done] == [0, 1, 2]
    assert done[2]["item"]["call_id"] == "call_1" and done[2]["item"]["id"].startswith("fc_")
    final = by_type["response.completed"][0]["response"]
    assert final["status"] == "completed"
    assert [item["type"] for item in final["output"]] == ["reasoning", "message", "function_call"]
    assert final["usage"]["input_tokens"] == 10 and final["usage"]["output_tokens"] == 5
    assert final["usage"]["total_tokens"] == 15
    assert by_type["response.created"][0]["response"]["status"] == "in_progress"


# --------------------------------------------------------------------------- Anthropic Messages


def test_anthropic_non_streaming(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script(
        "k",
        [
            ModelReply.say("Sure.", reasoning="thinking hard", usage=ScriptedUsage(12, 4)),
            ModelReply.call(ScriptedToolCall("toolu_1", "Read", {"path": "/tmp/x"})),
        ],
    )
    url = server.base_url("k", api="anthropic") + "/v1/messages"
    payload = {"model": "claude-x", "max_tokens": 100, "messages": USER_HI}

    body = client.post(url, json=payload).json()
    assert (body["type"], body["role"], body["model"]) == ("message", "assistant", "claude-x")
    thinking, text = body["content"]
    assert (
        thinking["type"] == "thinking" and thinking["thinking"] == "thinking hard" and thinking["signature"]
    )
    assert text == {"type": "text", "text": "Sure."}
    assert body["stop_reason"] == "end_turn"
    assert (body["usage"]["input_tokens"], body["usage"]["output_tokens"]) == (12, 4)

    body = client.post(url, json=payload).json()
    assert body["stop_reason"] == "tool_use"
    assert body["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "/tmp/x"}}
    ]


def test_anthropic_streaming(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script(
        "k",
        [
            ModelReply(
                text_chunks=["Let ", "me look"],
                reasoning="ponder",
                tool_calls=[ScriptedToolCall("toolu_9", "Grep", {"pattern": "TODO", "path": "."})],
            )
        ],
    )
    response = client.post(
        server.base_url("k", api="anthropic") + "/v1/messages",
        json={"model": "claude-x", "max_tokens": 100, "messages": USER_HI, "stream": True},
    )
    assert response.status_code == 200
    events = sse(response.text)
    assert all(name == data["type"] for name, data in events)
    types = [data["type"] for _, data in events]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    assert events[0][1]["message"]["content"] == []
    assert events[0][1]["message"]["usage"]["input_tokens"] == 10

    blocks: dict[int, dict[str, Any]] = {}
    for _, data in events:
        if data["type"] == "content_block_start":
            blocks[data["index"]] = {**data["content_block"], "parts": [], "stopped": False}
        elif data["type"] == "content_block_delta":
            blocks[data["index"]]["parts"].append(data["delta"])
        elif data["type"] == "content_block_stop":
            blocks[data["index"]]["stopped"] = True
    assert [b["type"] for b in blocks.values()] == ["thinking", "text", "tool_use"]
    assert all(b["stopped"] for b in blocks.values())
    thinking, text, tool = blocks[0], blocks[1], blocks[2]
    assert "".join(p["thinking"] for p in thinking["parts"] if p["type"] == "thinking_delta") == "ponder"
    assert [p["type"] for p in thinking["parts"]][-1] == "signature_delta"
    assert [p["text"] for p in text["parts"] if p["type"] == "text_delta"] == ["Let ", "me look"]
    assert (tool["id"], tool["name"], tool["input"]) == ("toolu_9", "Grep", {})
    partial = "".join(p["partial_json"] for p in tool["parts"] if p["type"] == "input_json_delta")
    assert len(tool["parts"]) >= 2
    assert json.loads(partial) == {"pattern": "TODO", "path": "."}

    message_delta = events[-2][1]
    assert message_delta["delta"]["stop_reason"] == "tool_use"
    assert message_delta["usage"]["output_tokens"] == 5


def test_anthropic_accepts_claude_code_shaped_requests(
    server: ScriptedModelServer, client: httpx.Client
) -> None:
    server.script("cc", [ModelReply.say("ok", chunks=["o", "k"])])
    payload: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "stream": True,
        "system": [
            {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [
            {"role": "system", "content": "inline system note"},
            {"role": "user", "content": [{"type": "text", "text": "fix the bug", "cache_control": {"x": 1}}]},
        ],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "metadata": {"user_id": "user_abc"},
        "tools": [
            {"name": "Bash", "description": "run", "input_schema": {"type": "object", "properties": {}}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
            {"type": "mystery_tool_v9", "whatever": [1, 2, 3]},
        ],
        "tool_choice": {"type": "auto"},
        "temperature": 1,
        "some_future_field": {"nested": True},
    }
    response = client.post(
        server.base_url("cc", api="anthropic") + "/v1/messages?beta=true",
        json=payload,
        headers={
            "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
            "anthropic-version": "2023-06-01",
            "x-api-key": "sk-ant-fake",
            "anthropic-dangerous-direct-browser-access": "true",
        },
    )
    assert response.status_code == 200
    texts = [d["delta"]["text"] for _, d in sse(response.text) if d["type"] == "content_block_delta"]
    assert texts == ["o", "k"]
    (recorded,) = server.requests("cc")
    assert recorded.api == "anthropic_messages"
    assert recorded.path == "/k/cc/v1/messages"
    assert recorded.headers["anthropic-beta"].startswith("claude-code-20250219")
    assert recorded.body["some_future_field"] == {"nested": True}
    assert recorded.sent_texts() == ["You are Claude Code.", "inline system note", "fix the bug"]
    assert recorded.tool_names() == ["Bash", "web_search"]


def test_side_endpoints_do_not_consume_the_script(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script("k", [ModelReply.say("kept")])
    counted = client.post(
        server.base_url("k", api="anthropic") + "/v1/messages/count_tokens?beta=true",
        json={"model": "claude", "messages": [{"role": "user", "content": "x" * 400}], "system": "s"},
    )
    assert counted.status_code == 200
    assert counted.json()["input_tokens"] >= 100
    for url in (
        server.url + "/v1/models",
        server.base_url("k") + "/models",
        server.base_url("k", api="anthropic") + "/v1/models",
    ):
        models = client.get(url)
        assert models.status_code == 200
        assert models.json()["data"][0]["id"] == "scripted-model"
    one = client.get(server.base_url("k") + "/models/gpt-x").json()
    assert one["id"] == "gpt-x"
    assert server.remaining("k") == 1
    assert server.requests("k") == []


# --------------------------------------------------------------------------- faults


def test_http_500_uses_each_apis_error_shape(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script("k", [ModelReply.fail("http_500", "boom")] * 3)
    chat = client.post(server.base_url("k") + "/chat/completions", json={"messages": USER_HI})
    responses = client.post(server.base_url("k") + "/responses", json={"input": "x"})
    anthropic = client.post(
        server.base_url("k", api="anthropic") + "/v1/messages", json={"messages": USER_HI, "max_tokens": 5}
    )
    assert [r.status_code for r in (chat, responses, anthropic)] == [500, 500, 500]
    assert chat.json()["error"]["message"] == "boom"
    assert chat.json()["error"]["type"] == "server_error"
    assert responses.json()["error"]["message"] == "boom"
    assert anthropic.json() == {"type": "error", "error": {"type": "api_error", "message": "boom"}}


def test_http_429_has_retry_after_zero(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script("k", [ModelReply.fail("http_429")] * 2)
    chat = client.post(server.base_url("k") + "/chat/completions", json={"messages": USER_HI})
    assert chat.status_code == 429
    assert chat.headers["retry-after"] == "0"
    assert chat.json()["error"]["code"] == "rate_limit_exceeded"
    anthropic = client.post(
        server.base_url("k", api="anthropic") + "/v1/messages", json={"messages": USER_HI}
    )
    assert anthropic.status_code == 429
    assert anthropic.json()["error"]["type"] == "rate_limit_error"


def test_fault_headers_are_scripted_over_the_control_api(
    server: ScriptedModelServer, client: httpx.Client
) -> None:
    with ModelServerControl(server.url) as control:
        control.script(
            "k",
            [
                ModelReply.fail("http_503", headers={"Retry-After": "Thu, 03 Dec 2026 07:00:00 GMT"}),
                ModelReply.fail("http_429", headers={}),
            ],
        )
    overloaded = client.post(server.base_url("k") + "/chat/completions", json={"messages": USER_HI})
    assert overloaded.status_code == 503
    assert overloaded.headers["retry-after"] == "Thu, 03 Dec 2026 07:00:00 GMT"
    bare = client.post(server.base_url("k") + "/chat/completions", json={"messages": USER_HI})
    assert bare.status_code == 429 and "retry-after" not in bare.headers
    for name, value in (("Bad Name", "1"), ("retry-after", "1\r\nx-injected: 1"), ("", "1")):
        with pytest.raises(ValueError, match="cannot be sent"):
            ModelFault(kind="http_429", headers={name: value})


def test_peak_in_flight_counts_requests_answered_at_once(
    server: ScriptedModelServer, client: httpx.Client
) -> None:
    server.script("k", [ModelReply.say("slow", delay_seconds=2.0) for _ in range(3)])
    url = server.base_url("k") + "/chat/completions"

    def post(_: int) -> httpx.Response:
        return client.post(url, json={"messages": USER_HI})

    with ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(post, range(3)))
    assert [a.status_code for a in answers] == [200] * 3
    assert server.peak_in_flight("k") == 3  # sent together, each held 2 s
    post(0)  # exhausted: answered at once, and counted out again
    assert server.peak_in_flight("k") == 3 and server.peak_in_flight("other") == 0
    server.reset("k")
    assert server.peak_in_flight("k") == 0


def test_drop_closes_the_connection_without_a_response(
    server: ScriptedModelServer, client: httpx.Client
) -> None:
    server.script("k", [ModelReply.fail("drop"), ModelReply.say("after the drop")])
    url = server.base_url("k") + "/chat/completions"
    with pytest.raises(httpx.TransportError):
        client.post(url, json={"messages": USER_HI})
    # The same client recovers on a fresh connection and gets the next entry.
    answer = client.post(url, json={"messages": USER_HI})
    assert answer.json()["choices"][0]["message"]["content"] == "after the drop"
    assert len(server.requests("k")) == 2


def test_fail_twice_then_answer_consumes_three_entries(
    server: ScriptedModelServer, client: httpx.Client
) -> None:
    server.script("k", [ModelReply.fail("http_500"), ModelReply.fail("http_429"), ModelReply.say("finally")])
    url = server.base_url("k") + "/chat/completions"
    statuses = [client.post(url, json={"messages": USER_HI}).status_code for _ in range(2)]
    assert statuses == [500, 429]
    assert (
        client.post(url, json={"messages": USER_HI}).json()["choices"][0]["message"]["content"] == "finally"
    )
    assert server.remaining("k") == 0
    assert [r.index for r in server.requests("k")] == [0, 1, 2]


def test_exhausted_script_answers_500_and_records(server: ScriptedModelServer, client: httpx.Client) -> None:
    response = client.post(server.base_url("empty") + "/chat/completions", json={"messages": USER_HI})
    assert response.status_code == 500
    message = response.json()["error"]["message"]
    assert "exhausted" in message and "'empty'" in message
    assert response.headers["x-should-retry"] == "false"
    anthropic = client.post(server.base_url("empty", api="anthropic") + "/v1/messages", json={})
    assert anthropic.status_code == 500
    assert "exhausted" in anthropic.json()["error"]["message"]
    assert [r.api for r in server.requests("empty")] == ["chat_completions", "anthropic_messages"]


def test_delay_is_applied_after_the_request_is_recorded(
    server: ScriptedModelServer, client: httpx.Client
) -> None:
    server.script("slow", [ModelReply.say("late", delay_seconds=0.4)])
    answered = threading.Event()
    results: list[httpx.Response] = []

    def call() -> None:
        results.append(client.post(server.base_url("slow") + "/chat/completions", json={"messages": USER_HI}))
        answered.set()

    started = time.perf_counter()
    worker = threading.Thread(target=call)
    worker.start()
    (recorded,) = server.wait_for_requests("slow", 1, timeout=10)
    assert not answered.is_set()
    assert recorded.sent_texts() == ["hi"]
    worker.join(timeout=10)
    assert time.perf_counter() - started >= 0.4
    assert results[0].json()["choices"][0]["message"]["content"] == "late"


# --------------------------------------------------------------------------- routing and keys


def test_keys_are_isolated(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script("alice", [ModelReply.say("a1"), ModelReply.say("a2")])
    server.script("bob", [ModelReply.say("b1")])
    server.script("default", [ModelReply.say("d1")])

    def ask(base: str, text: str) -> str:
        response = client.post(
            base + "/chat/completions", json={"messages": [{"role": "user", "content": text}]}
        )
        return response.json()["choices"][0]["message"]["content"]

    assert ask(server.base_url("alice"), "to alice 1") == "a1"
    assert ask(server.base_url("bob"), "to bob") == "b1"
    assert ask(server.url + "/v1", "to default") == "d1"
    assert ask(server.base_url("alice"), "to alice 2") == "a2"
    assert [r.last_user_text() for r in server.requests("alice")] == ["to alice 1", "to alice 2"]
    assert [r.last_user_text() for r in server.requests("bob")] == ["to bob"]
    assert [r.path for r in server.requests("default")] == ["/v1/chat/completions"]
    assert [r.index for r in server.requests("alice")] == [0, 1]

    server.reset("alice")
    assert server.requests("alice") == [] and len(server.requests("bob")) == 1
    server.reset()
    assert server.requests("bob") == [] and server.requests("default") == []


def test_a_responder_answers_from_each_request_when_the_script_is_empty(
    server: ScriptedModelServer, client: httpx.Client
) -> None:
    def echo(request: RecordedRequest) -> ModelReply:
        return ModelReply.say(f"you said {request.last_user_text()}")

    server.respond("shared", echo)
    server.script("shared", [ModelReply.say("scripted first")])

    def ask(text: str) -> str:
        response = client.post(
            server.base_url("shared") + "/chat/completions",
            json={"messages": [{"role": "user", "content": text}]},
        )
        return response.json()["choices"][0]["message"]["content"]

    # The script goes first; then each request gets the reply its own content asks for.
    assert [ask(t) for t in ("one", "two", "three")] == ["scripted first", "you said two", "you said three"]
    assert len(server.requests("shared")) == 3
    server.reset("shared")
    assert (
        client.post(
            server.base_url("shared") + "/chat/completions",
            json={"messages": [{"role": "user", "content": "x"}]},
        ).status_code
        == 500
    )


def test_base_url_shapes_and_odd_keys(server: ScriptedModelServer, client: httpx.Client) -> None:
    assert server.base_url() == f"{server.url}/k/default/v1"
    assert server.base_url("s1", api="anthropic") == f"{server.url}/k/s1"
    assert server.url.startswith("http://127.0.0.1:")
    assert server.base_url("s1", api="gemini") == f"{server.url}/k/s1"
    with pytest.raises(ValueError):
        server.base_url("s1", api="grpc")
    odd = "session/7 é?"
    server.script(odd, [ModelReply.say("odd ok")])
    response = client.post(server.base_url(odd) + "/chat/completions", json={"messages": USER_HI})
    assert response.json()["choices"][0]["message"]["content"] == "odd ok"
    assert server.requests(odd)[0].key == odd


def test_concurrent_requests_each_consume_one_reply(server: ScriptedModelServer) -> None:
    count = 24
    server.script("busy", [ModelReply.say(f"reply {i}") for i in range(count)])
    url = server.base_url("busy") + "/chat/completions"

    def ask(_: int) -> str:
        with httpx.Client(trust_env=False) as own:
            return own.post(url, json={"messages": USER_HI}).json()["choices"][0]["message"]["content"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(ask, range(count)))
    assert sorted(answers) == sorted(f"reply {i}" for i in range(count))
    assert sorted(r.index for r in server.requests("busy")) == list(range(count))


def test_unknown_paths_and_bad_bodies(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script("k", [ModelReply.say("untouched")])
    for response in (
        client.get(server.url + "/nope"),
        client.post(server.base_url("k") + "/embeddings", json={}),
        client.get(server.base_url("k") + "/chat/completions"),
        client.get(server.url + "/_control/unknown"),
    ):
        assert response.status_code == 404
        assert "error" in response.json()
    bad = client.post(
        server.base_url("k") + "/chat/completions",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert bad.status_code == 400
    assert server.remaining("k") == 1
    assert server.requests("k") == []


def test_chunked_request_bodies_are_read(server: ScriptedModelServer, client: httpx.Client) -> None:
    server.script("k", [ModelReply.say("chunked ok")])
    parts = [b'{"messages": [{"role": "user", ', b'"content": "in pieces"}]}']
    response = client.post(
        server.base_url("k") + "/chat/completions",
        content=iter(parts),
        headers={"content-type": "application/json"},
    )
    assert response.json()["choices"][0]["message"]["content"] == "chunked ok"
    assert server.requests("k")[0].sent_texts() == ["in pieces"]


def test_keep_alive_serves_many_requests_on_one_socket(server: ScriptedModelServer) -> None:
    server.script("k", [ModelReply.say(f"n{i}") for i in range(3)])
    body = json.dumps({"messages": USER_HI}).encode()
    request = (
        f"POST /k/k/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        stream = sock.makefile("rb")
        for i in range(3):
            sock.sendall(request)
            status = stream.readline()
            headers: dict[str, str] = {}
            while (line := stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            payload = json.loads(stream.read(int(headers["content-length"])))
            assert status.startswith(b"HTTP/1.1 200")
            assert headers["connection"] == "keep-alive"
            assert payload["choices"][0]["message"]["content"] == f"n{i}"


def test_no_per_request_stall(server: ScriptedModelServer, client: httpx.Client) -> None:
    # A Nagle/delayed-ACK stall costs ~40 ms per request; 100 requests would take 4 s.
    count = 100
    server.script("fast", [ModelReply.say("abc", chunks=["a", "b", "c"]) for _ in range(count)])
    url = server.base_url("fast") + "/chat/completions"
    started = time.perf_counter()
    for _ in range(count):
        assert client.post(url, json={"messages": USER_HI, "stream": True}).status_code == 200
    assert time.perf_counter() - started < 2.0


async def test_async_context_manager() -> None:
    async with ScriptedModelServer() as server:
        server.script("k", [ModelReply.say("async hi")])
        async with httpx.AsyncClient(trust_env=False) as http:
            response = await http.post(server.base_url("k") + "/chat/completions", json={"messages": USER_HI})
        assert response.json()["choices"][0]["message"]["content"] == "async hi"
    with pytest.raises(RuntimeError):
        _ = server.url


def test_scripts_survive_restart() -> None:
    server = ScriptedModelServer()
    server.script("k", [ModelReply.say("one"), ModelReply.say("two")])
    server.start()
    try:
        with pytest.raises(RuntimeError):
            server.start()
        with httpx.Client(trust_env=False) as http:
            first = http.post(server.base_url("k") + "/chat/completions", json={"messages": USER_HI})
            assert first.json()["choices"][0]["message"]["content"] == "one"
    finally:
        server.stop()
    server.stop()
    assert server.remaining("k") == 1


# --------------------------------------------------------------------------- reply model and records


def test_reply_json_round_trip() -> None:
    replies = [
        ModelReply.say("hi", chunks=["h", "i"], reasoning="r", usage=ScriptedUsage(1, 2), delay_seconds=0.5),
        ModelReply.call(weather_call(), ScriptedToolCall("c2", "raw", '{"broken":'), text="t"),
        ModelReply.fail("http_429", "slow down"),
        ModelReply(text_chunks=["a", "b"]),
        ModelReply(),
    ]
    for reply in replies:
        assert ModelReply.from_json(json.loads(json.dumps(reply.to_json()))) == reply
    assert replies[3].full_text == "ab"
    assert replies[2].fault == ModelFault("http_429", "slow down")
    assert replies[1].tool_calls[1].arguments_dict() == {}


def test_reply_validation() -> None:
    with pytest.raises(ValueError):
        ModelReply(text="ab", text_chunks=["a", "c"])
    with pytest.raises(ValueError):
        ModelFault("http_418")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ModelReply.call()
    with pytest.raises(ValueError):
        ModelReply(delay_seconds=-1)


def test_sent_texts_chat_completions() -> None:
    record = RecordedRequest(
        api="chat_completions",
        path="/v1/chat/completions",
        headers={},
        index=0,
        body={
            "messages": [
                {"role": "system", "content": "You are terse."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is"},
                        {"type": "image_url", "image_url": {"url": "data:..."}},
                        {"type": "text", "text": "the weather?"},
                    ],
                },
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "21C and sunny"},
            ],
            "tools": [{"type": "function", "function": {"name": "w", "parameters": {}}}],
        },
    )
    assert record.sent_texts() == ["You are terse.", "What is", "the weather?", "21C and sunny"]
    assert record.saw("sunny") and not record.saw("rain")
    assert record.last_user_text() == "What isthe weather?"
    assert record.tool_results() == {"c1": "21C and sunny"}
    assert record.tool_names() == ["w"]


def test_sent_texts_responses() -> None:
    record = RecordedRequest(
        api="responses",
        path="/v1/responses",
        headers={},
        index=0,
        body={
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "secret"}]},
                {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "cloudy"},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "It is cloudy."}],
                },
            ],
            "tools": [{"type": "function", "name": "w", "parameters": {}}],
        },
    )
    assert record.sent_texts() == ["Be brief.", "weather?", "cloudy", "It is cloudy."]
    assert record.tool_results() == {"c1": "cloudy"}
    assert record.last_user_text() == "weather?"
    assert record.tool_names() == ["w"]
    plain = RecordedRequest(
        api="responses", path="/v1/responses", headers={}, index=0, body={"input": "just text"}
    )
    assert plain.sent_texts() == ["just text"]
    assert plain.last_user_text() == "just text"


def test_sent_texts_anthropic() -> None:
    record = RecordedRequest(
        api="anthropic_messages",
        path="/v1/messages",
        headers={},
        index=0,
        body={
            "system": [{"type": "text", "text": "You are Claude."}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "list files"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hidden", "signature": "s"},
                        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": [{"type": "text", "text": "a.py"}],
                        }
                    ],
                },
            ],
        },
    )
    assert record.sent_texts() == ["You are Claude.", "list files", "a.py"]
    assert record.last_user_text() == "list files"
    assert record.tool_results() == {"t1": "a.py"}
    # A harness's own resume prompt after the tool result is not the person's text.
    resumed = RecordedRequest(
        api="anthropic_messages",
        path="/v1/messages",
        headers={},
        index=1,
        body={
            "messages": [
                {"role": "user", "content": "list files"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"},
                        {"type": "text", "text": "Continue from where you left off."},
                    ],
                },
            ]
        },
    )
    assert resumed.last_user_text() == "a.pyContinue from where you left off."
    assert resumed.last_user_text(ignore=["Continue from where you left off. "]) == "list files"
    assert resumed.last_user_text(ignore=["Something else."]) == "a.pyContinue from where you left off."
    string_system = RecordedRequest(
        api="anthropic_messages",
        path="/v1/messages",
        headers={},
        index=0,
        body={"system": "sys", "messages": [{"role": "user", "content": "plain"}]},
    )
    assert string_system.sent_texts() == ["sys", "plain"]


# --------------------------------------------------------------------------- cross-process


def test_control_client_in_process(server: ScriptedModelServer, client: httpx.Client) -> None:
    with server.control() as control:
        assert control.script("c", [ModelReply.say("via control"), ModelReply.say("second")]) == 2
        assert control.remaining("c") == 2
        client.post(server.base_url("c") + "/chat/completions", json={"messages": USER_HI})
        assert control.remaining("c") == 1
        assert control.requests("c") == server.requests("c")
        assert control.wait_for_requests("c", 1, timeout=5)[0].sent_texts() == ["hi"]
        with pytest.raises(TimeoutError):
            control.wait_for_requests("c", 2, timeout=0.05)
        control.reset("c")
        assert control.remaining("c") == 0 and control.requests("c") == []
    bad = client.post(server.url + "/_control/script/x", json={"replies": [{"fault": {"kind": "nope"}}]})
    assert bad.status_code == 400


def test_control_api_from_another_process(server: ScriptedModelServer, client: httpx.Client) -> None:
    scripter = textwrap.dedent(
        """
        import sys
        from sessionflow.demo._model_server import ModelReply, ModelServerControl, ScriptedToolCall

        with ModelServerControl(sys.argv[1]) as control:
            control.script("worker", [
                ModelReply.say("from the child", chunks=["from ", "the child"]),
                ModelReply.call(ScriptedToolCall("c9", "lookup", {"q": 1})),
            ])
        """
    )
    subprocess.run([sys.executable, "-c", scripter, server.url], env=child_env(), check=True, timeout=60)
    assert server.remaining("worker") == 2

    url = server.base_url("worker") + "/chat/completions"
    first = client.post(url, json={"messages": [{"role": "user", "content": "parent says hi"}]})
    assert first.json()["choices"][0]["message"]["content"] == "from the child"
    second = client.post(url, json={"messages": USER_HI})
    assert second.json()["choices"][0]["message"]["tool_calls"][0]["id"] == "c9"

    reader = textwrap.dedent(
        """
        import json, sys
        from sessionflow.demo._model_server import ModelServerControl

        with ModelServerControl(sys.argv[1]) as control:
            print(json.dumps([r.sent_texts() for r in control.requests("worker")]))
            control.reset("worker")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", reader, server.url],
        env=child_env(),
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert json.loads(out.stdout) == [["parent says hi"], ["hi"]]
    assert server.requests("worker") == []


@pytest.mark.timeout(60)
def test_python_dash_m_child_process(tmp_path: Path, client: httpx.Client) -> None:
    port_file = tmp_path / "model-server.port"
    child = subprocess.Popen(
        [sys.executable, "-m", "sessionflow.demo._model_server", "--port-file", str(port_file)],
        env=child_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        # The child prints its URL only after the port file is in place.
        url = child.stdout.readline().strip()
        port = int(port_file.read_text())
        assert url == f"http://127.0.0.1:{port}"
        with ModelServerControl(url) as control:
            control.script("kid", [ModelReply.say("served by a child process")])
            response = client.post(f"{url}/k/kid/v1/chat/completions", json={"messages": USER_HI})
            assert response.json()["choices"][0]["message"]["content"] == "served by a child process"
            assert [r.api for r in control.requests("kid")] == ["chat_completions"]
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()


# --------------------------------------------------------------------------- official SDKs (dev dependencies)


def test_openai_sdk_chat_and_responses(server: ScriptedModelServer) -> None:
    # Untyped on purpose: the test sends wire-shaped dicts that the SDK's TypedDicts reject.
    openai: Any = importlib.import_module("openai")
    server.script(
        "sdk",
        [
            ModelReply.say("plain", reasoning="r1"),
            ModelReply.say("streamed", chunks=["str", "eamed"]),
            ModelReply.call(weather_call()),
            ModelReply.say("resp text", reasoning="rs"),
            ModelReply.call(weather_call("call_r"), text="calling"),
            ModelReply.fail("http_429"),
            ModelReply.fail("http_500"),
            ModelReply.say("after retries"),
            ModelReply.fail("drop"),
        ],
    )
    sdk = openai.OpenAI(base_url=server.base_url("sdk"), api_key="test", max_retries=0)
    completion = sdk.chat.completions.create(model="gpt", messages=USER_HI)
    assert completion.choices[0].message.content == "plain"
    assert completion.usage.total_tokens == 15

    with sdk.chat.completions.stream(
        model="gpt", messages=USER_HI, stream_options={"include_usage": True}
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "streamed"
    assert final.usage.completion_tokens == 5

    with sdk.chat.completions.stream(model="gpt", messages=USER_HI) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    (call,) = final.choices[0].message.tool_calls
    assert (call.id, call.function.name) == ("call_1", "get_weather")
    assert json.loads(call.function.arguments) == {"city": "Paris", "unit": "C"}

    response = sdk.responses.create(model="gpt", input="hi")
    assert response.output_text == "resp text"
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.usage.input_tokens == 10

    with sdk.responses.stream(model="gpt", input="hi") as stream:
        for _ in stream:
            pass
        final_response = stream.get_final_response()
    assert final_response.output_text == "calling"
    function_call = final_response.output[-1]
    assert (function_call.type, function_call.call_id) == ("function_call", "call_r")

    retrying = sdk.with_options(max_retries=2)
    assert retrying.chat.completions.create(model="gpt", messages=USER_HI).choices[0].message.content == (
        "after retries"
    )
    with pytest.raises(openai.APIConnectionError):
        sdk.chat.completions.create(model="gpt", messages=USER_HI)
    with pytest.raises(openai.InternalServerError, match="exhausted"):
        sdk.chat.completions.create(model="gpt", messages=USER_HI)
    assert [m.id for m in sdk.models.list().data] == ["scripted-model"]


def test_anthropic_sdk_messages(server: ScriptedModelServer) -> None:
    anthropic: Any = importlib.import_module("anthropic")
    server.script(
        "sdk",
        [
            ModelReply.say("hello", reasoning="deep thought"),
            ModelReply.call(
                ScriptedToolCall("toolu_1", "Read", {"file": "a.py"}), text="reading", reasoning="t"
            ),
            ModelReply.fail("http_429"),
        ],
    )
    sdk = anthropic.Anthropic(base_url=server.base_url("sdk", api="anthropic"), api_key="test", max_retries=0)
    message = sdk.messages.create(model="claude", max_tokens=64, messages=USER_HI)
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[1].text == "hello"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (10, 5)

    with sdk.messages.stream(model="claude", max_tokens=64, messages=USER_HI) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(texts) == "reading"
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
    assert final.content[0].signature
    assert (final.content[2].id, final.content[2].input) == ("toolu_1", {"file": "a.py"})
    assert final.stop_reason == "tool_use"
    assert final.usage.output_tokens == 5

    with pytest.raises(anthropic.RateLimitError):
        sdk.messages.create(model="claude", max_tokens=64, messages=USER_HI)
    assert sdk.messages.count_tokens(model="claude", messages=USER_HI).input_tokens > 0
    assert server.remaining("sdk") == 0
