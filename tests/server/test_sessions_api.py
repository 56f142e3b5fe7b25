"""The session routes end to end: create, list, snapshot, messages, send (idempotent), cancel, stop."""

from __future__ import annotations

from typing import Any

from sessionflow.testing import FileGate
from tests.server.conftest import Api
from tests.server.helpers import eventually, idle_after, snapshot_when, state_of


async def test_create_with_a_first_message_lists_and_reads_the_session(api: Api) -> None:
    api.script("api-create", [[{"text": "hello alice"}], [{"text": "second answer"}]])
    response = await api.post(
        "/api/v1/sessions", {"session_id": "api-create", "message": "hi", "settings": {}}
    )
    assert response.status_code == 201
    assert response.json() == {"session_id": "api-create"}
    snapshot = await idle_after(api, "api-create", 1)
    assert [m["message"]["text"] for m in snapshot["messages"]] == ["hi", "hello alice"]
    assert snapshot["environment"]["user"] == "alice"

    async def listed() -> list[dict[str, Any]] | None:
        rows = (await api.get("/api/v1/sessions")).json()["sessions"]
        return rows if any(r["session_id"] == "api-create" for r in rows) else None

    rows = await eventually("the session in alice's list", listed)
    row = next(r for r in rows if r["session_id"] == "api-create")
    assert (row["user"], row["status"], row["pending_approvals"]) == ("alice", "running", 0)
    filtered = (await api.get("/api/v1/sessions", params={"status": "stopped"})).json()["sessions"]
    assert "api-create" not in [r["session_id"] for r in filtered]
    assert (await api.get("/api/v1/sessions", params={"flow_type": "nope"})).json() == {"sessions": []}
    recent = (await api.get("/api/v1/sessions", params={"since": "1h"})).json()["sessions"]
    assert "api-create" in [r["session_id"] for r in recent]
    assert (await api.get("/api/v1/sessions", params={"status": "bogus"})).status_code == 422
    assert (await api.get("/api/v1/sessions", params={"since": "yesterday"})).status_code == 422
    mine = (await api.get("/api/v1/sessions", params={"user": "alice"})).json()["sessions"]
    assert "api-create" in [r["session_id"] for r in mine]
    flow_type = row["flow_type"]
    of_flow = (await api.get("/api/v1/sessions", params={"flow_type": flow_type})).json()["sessions"]
    assert "api-create" in [r["session_id"] for r in of_flow]
    # The user filter cannot widen what a token sees: another user's sessions match none.
    assert (await api.get("/api/v1/sessions", params={"user": "bob"})).json() == {"sessions": []}
    assert (await api.get("/api/v1/sessions", params={"owner": "bob"})).status_code == 422
    assert "api-create" not in [
        r["session_id"] for r in (await api.get("/api/v1/sessions", user="bob")).json()["sessions"]
    ]

    page = (await api.get("/api/v1/sessions/api-create/messages", params={"after": 1, "limit": 1})).json()
    assert [m["sequence"] for m in page["messages"]] == [2]
    assert page["messages"][0]["message"]["text"] == "hello alice"
    assert (await api.get("/api/v1/sessions/api-create/messages", params={"limit": 0})).status_code == 422
    assert (await api.get("/api/v1/sessions/api-create/messages", params={"after": "x"})).status_code == 422


async def test_a_message_sent_twice_with_one_id_runs_one_turn(api: Api) -> None:
    api.script("api-send", [[{"text": "first"}], [{"text": "second"}], [{"text": "third"}]])
    assert (await api.post("/api/v1/sessions", {"session_id": "api-send"})).status_code == 201
    body = {"message_id": "m-1", "text": "once please"}
    first = await api.post("/api/v1/sessions/api-send/messages", body)
    again = await api.post("/api/v1/sessions/api-send/messages", body)
    assert (first.status_code, again.status_code) == (202, 202)
    assert first.json() == {"message_id": "m-1", "accepted": True}
    await idle_after(api, "api-send", 1)
    assert (
        await api.post("/api/v1/sessions/api-send/messages", {"message_id": "m-2", "text": "next"})
    ).status_code == 202
    snapshot = await idle_after(api, "api-send", 2)
    assert [m["message"]["text"] for m in snapshot["messages"]] == ["once please", "first", "next", "second"]
    assert api.log.count("model", session="api-send") == 2
    blank = await api.post("/api/v1/sessions/api-send/messages", {"message_id": "m-3", "text": "  "})
    assert (blank.status_code, blank.json()["error"]) == (422, "blank_message")


async def test_cancel_a_running_turn_then_stop(api: Api) -> None:
    api.script("api-cancel", [[{"text": "never", "gate": "slow"}]])
    assert (
        await api.post("/api/v1/sessions", {"session_id": "api-cancel", "message": "go"})
    ).status_code == 201
    await FileGate(api.state_dir, "slow").wait_until_reached()
    cancelled = await api.post("/api/v1/sessions/api-cancel/cancel")
    assert (cancelled.status_code, cancelled.json()) == (202, {"cancelled": True})
    snapshot = await snapshot_when(
        api,
        "api-cancel",
        lambda s: state_of(s).get("status") == "waiting_for_user_message",
        "the cancel",
    )
    assert "never" not in [m["message"]["text"] for m in snapshot["messages"]]
    idle = await api.post("/api/v1/sessions/api-cancel/cancel")
    assert (idle.status_code, idle.json()) == (202, {"cancelled": False})
    stopped = await api.post("/api/v1/sessions/api-cancel/stop")
    assert (stopped.status_code, stopped.json()) == (202, {"stopped": True})
    await snapshot_when(api, "api-cancel", lambda s: s["stopped"], "the stop")
    refused = await api.post("/api/v1/sessions/api-cancel/messages", {"message_id": "late", "text": "hello?"})
    assert (refused.status_code, refused.json()["error"]) == (409, "session_stopped")


async def test_creating_an_existing_session_or_a_bad_id_is_refused(api: Api) -> None:
    api.script("api-twice", [[{"text": "ok"}]])
    assert (await api.post("/api/v1/sessions", {"session_id": "api-twice"})).status_code == 201
    again = await api.post("/api/v1/sessions", {"session_id": "api-twice"})
    assert (again.status_code, again.json()["error"]) == (409, "session_exists")
    bad = await api.post("/api/v1/sessions", {"session_id": "no spaces/allowed"})
    assert (bad.status_code, bad.json()["error"]) == (422, "invalid_session_id")
    named = await api.post("/api/v1/sessions", {})
    assert named.status_code == 201 and named.json()["session_id"].startswith("session-")


async def test_messages_leave_out_what_the_framework_superseded_unless_asked(api: Api) -> None:
    api.script("api-sup", [[{"text": "a1"}], [{"text": "a2", "supersede": [1, 2]}]])
    assert (await api.post("/api/v1/sessions", {"session_id": "api-sup", "message": "q1"})).status_code == 201
    await idle_after(api, "api-sup", 1)
    sent = await api.post("/api/v1/sessions/api-sup/messages", {"message_id": "m-2", "text": "q2"})
    assert sent.status_code == 202
    await idle_after(api, "api-sup", 2)

    path = "/api/v1/sessions/api-sup/messages"
    page = (await api.get(path)).json()
    assert ([m["sequence"] for m in page["messages"]], page["superseded"]) == ([3, 4], [])
    audit = (await api.get(path, params={"include_superseded": "true"})).json()
    assert [m["sequence"] for m in audit["messages"]] == [1, 2, 3, 4]
    assert audit["superseded"] == [{"first": 1, "last": 2, "turn": 2}]
    assert [
        m["sequence"]
        for m in (await api.get(path, params={"include_superseded": "false"})).json()["messages"]
    ] == [3, 4]
    refused = await api.get(path, params={"include_superseded": "yes"})
    assert refused.status_code == 422
    assert "include_superseded must be true or false" in refused.text
