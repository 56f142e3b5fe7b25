"""`GET /api/v1/sessions`: each row's true state, title, queue, usage, cost, fork and times; filters."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from genai_prices import Usage, calc_price

from sessionflow.testing import FileGate
from tests.server.conftest import Api, ApiFactory, with_deadline
from tests.server.helpers import eventually, idle_after, pending, snapshot_when

REFUND: dict[str, object] = {"id": "c1", "name": "refund", "arguments": {"order": 7}}
LONG_FIRST = "Please look at   the workspace\nand tell me " + "what is there " * 12


async def _rows(api: Api, **params: str) -> dict[str, dict[str, Any]]:
    response = await api.get("/api/v1/sessions", params=params)
    assert response.status_code == 200, response.text
    return {row["session_id"]: row for row in response.json()["sessions"]}


async def _listed_as(api: Api, session_id: str, state: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        row = (await _rows(api)).get(session_id)
        return row if row is not None and row["state"] == state else None

    return await eventually(f"{session_id} listed as {state}", probe)


async def test_each_session_says_what_it_is_doing_not_the_workflows_status(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    tools = {"refund": {"effect": "non_idempotent_write", "output": "ok"}}
    api.script("ls-idle", [[{"text": "done", "usage": {"input_tokens": 1200, "output_tokens": 300}}]])
    api.script("ls-working", [[{"text": "slow", "gate": "hold"}], [{"text": "next"}]])
    api.script("ls-waiting", [[{"tool_calls": [REFUND]}, {"text": "refunded"}]], tools)
    api.script("ls-failed", [[{"abort": "the model gave up"}]])
    api.script("ls-cancelled", [[{"text": "never", "gate": "cancel-me"}]])
    api.script("ls-stopped", [[{"text": "bye"}]])
    for session_id, first in (
        ("ls-idle", LONG_FIRST),
        ("ls-working", "work slowly"),
        ("ls-waiting", "refund order 7"),
        ("ls-failed", "try"),
        ("ls-cancelled", "start"),
        ("ls-stopped", "hello"),
    ):
        body = {"session_id": session_id, "message": first}
        assert (await api.post("/api/v1/sessions", body)).status_code == 201
    assert (await api.post("/api/v1/sessions", {"session_id": "ls-empty"})).status_code == 201

    await idle_after(api, "ls-idle", 1)
    await FileGate(api.state_dir, "hold").wait_until_reached()
    queued = {"message_id": "q-1", "text": "and then this"}
    assert (await api.post("/api/v1/sessions/ls-working/messages", queued)).status_code == 202
    await snapshot_when(api, "ls-working", lambda s: s["queued_message_count"] == 1, "the queued message")
    await pending(api, "ls-waiting")
    await FileGate(api.state_dir, "cancel-me").wait_until_reached()
    assert (await api.post("/api/v1/sessions/ls-cancelled/cancel")).json() == {"cancelled": True}
    await idle_after(api, "ls-stopped", 1)
    assert (await api.post("/api/v1/sessions/ls-stopped/stop")).status_code == 202

    idle = await _listed_as(api, "ls-idle", "idle")
    working = await _listed_as(api, "ls-working", "working")
    waiting = await _listed_as(api, "ls-waiting", "waiting_for_you")
    failed = await _listed_as(api, "ls-failed", "failed")
    cancelled = await _listed_as(api, "ls-cancelled", "idle")  # a person cancelled: not a failure
    stopped = await _listed_as(api, "ls-stopped", "stopped")
    empty = await _listed_as(api, "ls-empty", "idle")

    # The workflow runs for all of them but the stopped one: `status` still says so, `state` tells them apart.
    assert {r["status"] for r in (idle, working, waiting, failed, cancelled)} == {"running"}
    assert (stopped["status"], stopped["stopped"], stopped["title"]) == ("completed", True, "hello")
    assert idle["title"] == "Please look at the workspace and tell me what is there what is there what is th…"
    assert len(idle["title"]) == 80
    assert (working["title"], waiting["title"], empty["title"]) == ("work slowly", "refund order 7", "")
    assert working["queued_message_count"] == 1 and idle["queued_message_count"] == 0
    assert waiting["pending_approvals"] == 1
    assert idle["usage"]["input_tokens"] == 1200 and idle["usage"]["output_tokens"] == 300
    assert empty["usage"]["input_tokens"] == 0
    # The scripted runner names no model, so its price is unknown.
    assert idle["cost_usd"] is None
    assert idle["forked_from"] is None
    created = datetime.fromisoformat(idle["created_at"])
    assert created <= datetime.fromisoformat(idle["last_activity_at"])
    assert created.tzinfo is not None

    async def by_state(state: str) -> set[str]:
        return set(await _rows(api, state=state))

    assert {"ls-idle", "ls-cancelled", "ls-empty"} <= await by_state("idle")
    assert not {"ls-working", "ls-waiting", "ls-failed", "ls-stopped"} & await by_state("idle")
    assert await by_state("working") == {"ls-working"}
    assert await by_state("waiting_for_you") == {"ls-waiting"}
    assert await by_state("failed") == {"ls-failed"}
    assert await by_state("stopped") == {"ls-stopped"}
    # `q` matches the title or the ID, whatever the case.
    assert set(await _rows(api, q="WORKSPACE")) == {"ls-idle"}
    assert set(await _rows(api, q="ls-fail")) == {"ls-failed"}
    assert set(await _rows(api, q="refund", state="waiting_for_you")) == {"ls-waiting"}
    assert await _rows(api, q="no session has this") == {}
    assert len(await _rows(api, limit="2")) == 2
    for bad in ({"state": "running"}, {"state": "bogus"}, {"limit": "0"}, {"limit": "501"}):
        refused = await api.get("/api/v1/sessions", params=bad)
        assert (refused.status_code, refused.json()["error"]) == (422, "invalid_request"), bad
    # The old `status` filter (the search attribute) keeps working.
    assert "ls-stopped" in await _rows(api, status="stopped")
    FileGate(api.state_dir, "hold").release()
    await _listed_as(api, "ls-working", "idle")


async def test_a_fork_names_its_parent_and_a_priced_model_has_a_cost(api: Api) -> None:
    # The server prices usage at the flow's model; this scripted flow now names one.
    api.sessions.flow.runner.model_name = "gpt-4o"  # type: ignore[union-attr]
    usage = {"input_tokens": 12_000, "output_tokens": 3_400}
    api.script("ls-parent", [[{"text": "one", "usage": usage}], [{"text": "two", "usage": usage}]])
    api.script("ls-child", [])
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ls-parent", "message": "a"})
    ).status_code == 201
    await idle_after(api, "ls-parent", 1)
    forked = await api.post("/api/v1/sessions/ls-parent/fork", {"turn": 1, "session_id": "ls-child"})
    assert forked.status_code == 201
    child = await _listed_as(api, "ls-child", "idle")
    assert child["forked_from"] == {"session_id": "ls-parent", "turn": 1}
    assert child["title"] == "a"  # the copied history's first message
    parent = await _listed_as(api, "ls-parent", "idle")
    assert parent["forked_from"] is None
    price = calc_price(Usage(input_tokens=12_000, output_tokens=3_400), model_ref="gpt-4o")
    assert parent["cost_usd"] == round(float(price.total_price), 6)
    assert parent["cost_usd"] > 0
    # A settled row is remembered, but a new turn (a state change) is seen: the second
    # turn's usage and cost are counted.
    sent = await api.post("/api/v1/sessions/ls-parent/messages", {"message_id": "m-2", "text": "b"})
    assert sent.status_code == 202
    await idle_after(api, "ls-parent", 2)

    async def second_turn() -> dict[str, Any] | None:
        row = (await _rows(api)).get("ls-parent")
        return row if row is not None and row["turns"] == 2 else None

    again = await eventually("the second turn in the list", second_turn)
    assert (again["state"], again["usage"]["input_tokens"]) == ("idle", 24_000)
    twice = calc_price(Usage(input_tokens=24_000, output_tokens=6_800), model_ref="gpt-4o")
    assert again["cost_usd"] == round(float(twice.total_price), 6)
