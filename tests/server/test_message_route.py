"""`GET /sessions/{id}/messages/{sequence}`: one message whole, a body stored by reference included."""

from __future__ import annotations

import json
from pathlib import Path

from sessionflow.session.bodies import INLINE_BODY_BYTES
from sessionflow.temporal import PayloadStore
from tests.server.conftest import Api, ApiFactory
from tests.server.helpers import idle_after

# About 38 KB of varied text, with characters of 2, 3 and 4 UTF-8 bytes and JSON's own
# specials, so "whole" means byte for byte, not only the right length.
_LINE = 'line {n:04d}: déjà vu — 漢字 🙂 "quoted" \\ back\\slash\ttab\n'
LONG = "".join(_LINE.format(n=n) for n in range(610))


async def test_a_38_kb_message_kept_by_reference_comes_back_whole(
    api_factory: ApiFactory, tmp_path: Path
) -> None:
    assert 37_000 < len(LONG.encode()) < 40_000 and len(LONG.encode()) > INLINE_BODY_BYTES
    api: Api = await api_factory(payloads=PayloadStore(location=str(tmp_path / "payloads")))
    api.script("msg-long", [[{"text": LONG}]])
    assert (
        await api.post("/api/v1/sessions", {"session_id": "msg-long", "message": "write"})
    ).status_code == 201
    await idle_after(api, "msg-long", 1)

    page = (await api.get("/api/v1/sessions/msg-long/messages")).json()
    listed = page["messages"][1]
    # The page holds a preview and a reference: the message really is stored by reference.
    assert listed["message"]["body"] is not None and listed["message"]["framework_item"] is None
    assert len(listed["message"]["text"]) < len(LONG)

    async with api.http.stream(
        "GET", "/api/v1/sessions/msg-long/messages/2", headers=api.headers()
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "content-length" not in response.headers  # streamed in chunks
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    whole = json.loads(raw)
    assert (whole["sequence"], whole["turn_id"]) == (2, listed["turn_id"])
    assert whole["message"]["role"] == "assistant"
    assert whole["message"]["text"].encode() == LONG.encode()
    assert whole["message"]["body"] is None
    assert whole["message"]["framework_item"] == {"role": "assistant", "content": LONG}

    first = (await api.get("/api/v1/sessions/msg-long/messages/1")).json()
    assert (first["sequence"], first["message"]["role"], first["message"]["text"]) == (1, "user", "write")


async def test_a_missing_message_or_session_is_404_and_a_bad_sequence_422(api: Api) -> None:
    api.script("msg-short", [[{"text": "short"}]])
    assert (
        await api.post("/api/v1/sessions", {"session_id": "msg-short", "message": "hi"})
    ).status_code == 201
    await idle_after(api, "msg-short", 1)
    missing = await api.get("/api/v1/sessions/msg-short/messages/3")
    assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
    assert "no message 3" in missing.json()["detail"]
    nobody = await api.get("/api/v1/sessions/no-such-session/messages/1")
    assert (nobody.status_code, nobody.json()["error"]) == (404, "not_found")
    # Another user's session is a 404 like a missing one.
    assert (await api.get("/api/v1/sessions/msg-short/messages/1", user="bob")).status_code == 404
    for bad in ("0", "x", "-1", "1.5", "²", "9" * 19):
        refused = await api.get(f"/api/v1/sessions/msg-short/messages/{bad}")
        assert (refused.status_code, refused.json()["error"]) == (422, "invalid_request"), bad
    assert (await api.get("/api/v1/sessions/msg-short/messages/2")).json()["message"]["text"] == "short"
