"""The SSE stream: event offsets as ids, resume from Last-Event-ID or ?after= with nothing missing or doubled."""

from __future__ import annotations

from typing import Any

from sessionflow.testing import FileGate
from tests.server.conftest import Api
from tests.server.helpers import idle_after, read_sse

PEEK: dict[str, object] = {"id": "p1", "name": "peek", "arguments": {}}


def _ids(events: list[dict[str, Any]]) -> list[int]:
    return [int(e["id"]) for e in events if "id" in e]


async def test_a_reconnect_resumes_after_the_last_event_id(api: Api) -> None:
    api.script(
        "api-sse",
        [
            [
                {"tool_calls": [PEEK], "deltas": ["look", "ing"]},
                # Held long enough for the worker (another process) to send its delta batch.
                {
                    "text": "hello world",
                    "deltas": ["hello ", "world"],
                    "gate": "mid",
                    "delay_after_deltas": 1.0,
                },
            ]
        ],
        {"peek": {"effect": "read", "output": "seen"}},
    )
    assert (await api.post("/api/v1/sessions", {"session_id": "api-sse", "message": "go"})).status_code == 201
    gate = FileGate(api.state_dir, "mid")
    await gate.wait_until_reached()  # the turn is between its two model steps

    path = "/api/v1/sessions/api-sse/events"
    async with api.http.stream("GET", path, headers=api.headers()) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        first = await read_sse(response, until=lambda e: e["event"] == "tool_call_finished" and "id" in e)
    last = _ids(first)[-1]
    gate.release()
    async with api.http.stream("GET", path, headers=api.headers(**{"Last-Event-ID": str(last)})) as response:
        second = await read_sse(response, until=lambda e: e["event"] == "turn_completed")
    await idle_after(api, "api-sse", 1)

    seen = _ids(first) + _ids(second)
    assert seen == sorted(set(seen)), "an event arrived twice or out of order"
    durable = (await api.sessions.list_agent_events("api-sse")).events
    upto = [e.offset for e in durable if e.offset is not None and e.offset <= seen[-1]]
    assert seen == upto, "an event is missing"
    for event in first + second:  # the id is the event's own offset
        if "id" in event:
            assert event["data"]["offset"] == int(event["id"])
    step_text: dict[tuple[str, str, int], str] = {}
    for event in second:
        if event["event"] == "text_delta":
            data = event["data"]
            key = (data["turn_id"], data["step_execution_id"], data["attempt"])
            step_text[key] = step_text.get(key, "") + data["data"]["text"]
    assert list(step_text.values()) == ["hello world"]

    async with api.http.stream("GET", path, params={"after": seen[-2]}, headers=api.headers()) as response:
        replay = await read_sse(response, until=lambda e: "id" in e)
    assert _ids(replay) == [seen[-1]]


async def test_a_bad_last_event_id_is_refused(api: Api) -> None:
    api.script("api-sse-bad", [[{"text": "ok"}]])
    await api.post("/api/v1/sessions", {"session_id": "api-sse-bad"})
    response = await api.http.get(
        "/api/v1/sessions/api-sse-bad/events", headers=api.headers(**{"Last-Event-ID": "abc"})
    )
    assert (response.status_code, response.json()["error"]) == (422, "invalid_request")
