"""`GET /sessions/{id}/turns` and a recorded tool call's whole output over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sessionflow.session.turn_records import RECORD_OUTPUT_CHARS
from sessionflow.temporal import PayloadStore
from tests.server.conftest import Api, ApiFactory, with_deadline
from tests.server.helpers import idle_after, pending

REFUND: dict[str, object] = {
    "id": "c1",
    "name": "refund",
    "arguments": {"order": 7, "note": "line 1\nline 2"},
}
DUMP: dict[str, object] = {"id": "d1", "name": "dump", "arguments": {}}
# Over 8 KiB, with multi-byte characters, so "whole" is checked byte for byte.
BIG_OUTPUT = "".join(f"row {n:05d}: naïve café — 漢字\n" for n in range(900))


async def test_a_turn_keeps_its_tool_call_its_approval_and_its_output(
    api_factory: ApiFactory, tmp_path: Path
) -> None:
    assert len(BIG_OUTPUT) > RECORD_OUTPUT_CHARS and len(BIG_OUTPUT.encode()) > 8 * 1024
    api: Api = await api_factory(
        timings=with_deadline(3600), payloads=PayloadStore(location=str(tmp_path / "payloads"))
    )
    api.script(
        "turns-1",
        [
            [
                {"deltas": ["Let me ", "check."], "tool_calls": [REFUND]},
                {"tool_calls": [DUMP]},
                {"text": "refunded"},
            ]
        ],
        {
            "refund": {"effect": "non_idempotent_write", "output": "refund ok"},
            "dump": {"effect": "read", "output": BIG_OUTPUT},
        },
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "turns-1", "message": "refund 7"})
    ).status_code == 201
    interrupt = await pending(api, "turns-1")

    # The running turn is readable whole: its first step's text and the call waiting.
    running = (await api.get("/api/v1/sessions/turns-1/turns")).json()["turns"]
    assert [(t["turn_id"], t["outcome"]) for t in running] == [("turn-1", "running")]
    assert [s["text"] for s in running[0]["steps"]] == ["Let me check."]
    assert [(c["tool_name"], c["status"]) for c in running[0]["tool_calls"]] == [
        ("refund", "awaiting_approval")
    ]

    approved = await api.post(
        f"/api/v1/sessions/turns-1/interrupts/{interrupt['interrupt_id']}", {"approved": True}
    )
    assert approved.status_code == 200
    await idle_after(api, "turns-1", 1)

    response = await api.get("/api/v1/sessions/turns-1/turns")
    assert response.status_code == 200
    (turn,) = response.json()["turns"]
    assert (turn["turn_id"], turn["number"], turn["outcome"], turn["error"]) == (
        "turn-1",
        1,
        "completed",
        None,
    )
    assert turn["ended_at"] is not None and turn["started_at"] <= turn["ended_at"]
    calls: dict[str, dict[str, Any]] = {c["tool_call_id"]: c for c in turn["tool_calls"]}
    refund = calls["c1"]
    assert (refund["tool_name"], refund["effect"], refund["status"]) == (
        "refund",
        "non_idempotent_write",
        "succeeded",
    )
    assert json.loads(refund["arguments"]) == REFUND["arguments"]
    assert refund["output"] == "refund ok"
    assert refund["started_at"] is not None and refund["finished_at"] is not None
    assert refund["approval"]["approved"] is True
    assert refund["approval"]["answered_by"] == "alice"  # the signed-in user, from the token
    assert refund["approval"]["answered_at"] is not None
    assert refund["approval_reason"]
    dump = calls["d1"]
    assert (dump["tool_name"], dump["effect"], dump["status"], dump["approval"]) == (
        "dump",
        "read",
        "succeeded",
        None,
    )
    assert dump["has_stored_output"] is True
    assert len(dump["output"] or "") < len(BIG_OUTPUT)
    assert turn["usage"]["input_tokens"] > 0

    path = "/api/v1/sessions/turns-1/turns/turn-1/tool-calls/d1/output"
    async with api.http.stream("GET", path, headers=api.headers()) as streamed:
        assert streamed.status_code == 200
        assert streamed.headers["content-type"] == "text/plain; charset=utf-8"
        assert streamed.headers["x-content-type-options"] == "nosniff"
        raw = b"".join([chunk async for chunk in streamed.aiter_raw()])
    assert raw == BIG_OUTPUT.encode()
    small = await api.get("/api/v1/sessions/turns-1/turns/turn-1/tool-calls/c1/output")
    assert (small.status_code, small.text) == (200, "refund ok")

    for missing in ("turn-1/tool-calls/nope", "turn-9/tool-calls/d1"):
        refused = await api.get(f"/api/v1/sessions/turns-1/turns/{missing}/output")
        assert (refused.status_code, refused.json()["error"]) == (404, "not_found"), missing
    assert (await api.get(path, user="bob")).status_code == 404
    assert (await api.get("/api/v1/sessions/turns-1/turns", user="bob")).status_code == 404
    assert (await api.get("/api/v1/sessions/no-such/turns")).status_code == 404
