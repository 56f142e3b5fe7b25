"""Double-texting and fork over HTTP: the policy per session and per message, 409/404/422."""

from __future__ import annotations

from sessionflow.testing import FileGate
from tests.server.conftest import Api
from tests.server.helpers import idle_after, snapshot_when, state_of


async def test_reject_while_a_turn_runs_is_409_and_interrupt_cancels_it(api: Api) -> None:
    api.script(
        "api-dt",
        [[{"gate": "api-dt", "text": "never"}], [{"text": "about the interrupt"}]],
    )
    created = await api.post(
        "/api/v1/sessions", {"session_id": "api-dt", "message": "first", "double_texting": "reject"}
    )
    assert created.status_code == 201
    await FileGate(api.state_dir, "api-dt").wait_until_reached()
    refused = await api.post("/api/v1/sessions/api-dt/messages", {"message_id": "m-r", "text": "too soon"})
    assert (refused.status_code, refused.json()["error"]) == (409, "turn_running")
    bogus = await api.post(
        "/api/v1/sessions/api-dt/messages", {"message_id": "m-b", "text": "x", "double_texting": "shout"}
    )
    assert bogus.status_code == 422
    interrupting = await api.post(
        "/api/v1/sessions/api-dt/messages",
        {"message_id": "m-i", "text": "instead", "double_texting": "interrupt"},
    )
    assert interrupting.status_code == 202
    snapshot = await idle_after(api, "api-dt", 2)
    texts = [m["message"]["text"] for m in snapshot["messages"]]
    assert "too soon" not in texts and "never" not in texts
    assert texts[-2:] == ["instead", "about the interrupt"]
    assert snapshot["double_texting"] == "reject"
    # The model's second request saw the interrupting message, never the refused one.
    assert api.log.count("model", session="api-dt") == 2
    assert "too soon" not in " ".join(api.seen("api-dt", 2))


async def test_fork_at_turn_one_is_the_callers_and_errors_are_404_and_422(api: Api) -> None:
    api.script("api-fk", [[{"text": "answer one"}], [{"text": "answer two"}]])
    assert (await api.post("/api/v1/sessions", {"session_id": "api-fk", "message": "q1"})).status_code == 201
    await idle_after(api, "api-fk", 1)
    sent = await api.post("/api/v1/sessions/api-fk/messages", {"message_id": "m-2", "text": "q2"})
    assert sent.status_code == 202
    await idle_after(api, "api-fk", 2)

    forked = await api.post("/api/v1/sessions/api-fk/fork", {"turn": 1, "session_id": "api-fk-1"})
    assert forked.status_code == 201
    assert forked.json() == {"session_id": "api-fk-1", "forked_from": {"session_id": "api-fk", "turn": 1}}
    snapshot = await snapshot_when(
        api, "api-fk-1", lambda s: s["forked_from"] is not None, "the fork's snapshot"
    )
    assert [m["message"]["text"] for m in snapshot["messages"]] == ["q1", "answer one"]
    assert snapshot["forked_from"] == {"session_id": "api-fk", "turn": 1}
    assert state_of(snapshot).get("turn_count", 0) == 0
    # The original is untouched.
    original = (await api.get("/api/v1/sessions/api-fk")).json()
    assert [m["message"]["text"] for m in original["messages"]] == ["q1", "answer one", "q2", "answer two"]

    named = await api.post("/api/v1/sessions/api-fk/fork", {"turn": 2})
    assert named.status_code == 201 and named.json()["session_id"].startswith("api-fk")
    out_of_range = await api.post("/api/v1/sessions/api-fk/fork", {"turn": 3})
    assert (out_of_range.status_code, out_of_range.json()["error"]) == (422, "turn_out_of_range")
    zero = await api.post("/api/v1/sessions/api-fk/fork", {"turn": 0})
    assert (zero.status_code, zero.json()["error"]) == (422, "turn_out_of_range")
    taken = await api.post("/api/v1/sessions/api-fk/fork", {"turn": 1, "session_id": "api-fk-1"})
    assert (taken.status_code, taken.json()["error"]) == (409, "session_exists")
    bobs = await api.post("/api/v1/sessions/api-fk/fork", {"turn": 1}, user="bob")
    assert (bobs.status_code, bobs.json()["error"]) == (404, "not_found")
    unknown = await api.post("/api/v1/sessions/nobody-here/fork", {"turn": 1})
    assert unknown.status_code == 404
    assert (await api.get("/api/v1/sessions/api-fk-1", user="bob")).status_code == 404


async def test_steer_joins_the_running_turn_after_the_tool_result(api: Api) -> None:
    api.script(
        "api-st",
        [
            [
                {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"q": "flights"}}]},
                {"text": "Lisbon it is"},
            ]
        ],
        {"lookup": {"effect": "read", "output": "3 flights", "gate": "api-st"}},
    )
    created = await api.post("/api/v1/sessions", {"session_id": "api-st", "message": "find a flight"})
    assert created.status_code == 201
    await FileGate(api.state_dir, "api-st").wait_until_reached()
    for _ in range(2):  # a retry with the same message_id adds nothing
        steered = await api.post(
            "/api/v1/sessions/api-st/messages",
            {"message_id": "m-s", "text": "make it Lisbon", "double_texting": "steer"},
        )
        assert steered.status_code == 202
    waiting = (await api.get("/api/v1/sessions/api-st")).json()
    assert (waiting["steered_message_count"], waiting["queued_message_count"]) == (1, 0)
    bogus = await api.post(
        "/api/v1/sessions/api-st/messages", {"message_id": "m-b", "text": "x", "double_texting": "steering"}
    )
    assert bogus.status_code == 422
    FileGate(api.state_dir, "api-st").release()
    snapshot = await idle_after(api, "api-st", 1)
    assert state_of(snapshot)["turn_count"] == 1
    # The model's second request: the tool's result, then the steered message, last.
    assert api.seen("api-st", 2)[-2:] == ["3 flights", "make it Lisbon"]
    texts = [m["message"]["text"] for m in snapshot["messages"]]
    assert texts[-2:] == ["make it Lisbon", "Lisbon it is"]
    assert texts.count("make it Lisbon") == 1
