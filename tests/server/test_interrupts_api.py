"""Approvals and questions through the API: the inbox, approve, reject with a reason, answer, the 409s."""

from __future__ import annotations

from typing import Any

from tests.server.conftest import Api, ApiFactory, approval_policy, with_deadline
from tests.server.helpers import eventually, idle_after, pending, read_sse

REFUND: dict[str, object] = {"id": "c1", "name": "refund", "arguments": {"order": 7}}
ASK: dict[str, object] = {"id": "q1", "name": "ask", "arguments": {"question": "Which colour?"}}


async def test_the_inbox_lists_an_approval_and_approving_runs_the_tool_once(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script(
        "api-approve",
        [[{"tool_calls": [REFUND]}, {"text": "refunded"}]],
        {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}},
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "api-approve", "message": "refund 7"})
    ).status_code == 201
    interrupt = await pending(api, "api-approve")

    async def in_inbox() -> list[dict[str, Any]] | None:
        items = (await api.get("/api/v1/interrupts")).json()["interrupts"]
        return items or None

    items = await eventually("the approval in alice's inbox", in_inbox)
    assert [(i["session_id"], i["interrupt"]["tool_name"]) for i in items] == [("api-approve", "refund")]
    assert items[0]["interrupt"]["deadline"] is not None
    assert items[0]["session_title"] == "refund 7"
    # Why it asks, and what a person judges (the core's; the inbox carries them as they are).
    assert "non_idempotent_write" in items[0]["interrupt"]["reason"]
    assert "preview" in items[0]["interrupt"]
    assert 0 <= items[0]["waited_seconds"] < 60
    first_wait = items[0]["waited_seconds"]

    async def waited_longer() -> bool:
        later = (await api.get("/api/v1/interrupts")).json()["interrupts"][0]
        return later["waited_seconds"] >= first_wait + 1

    await eventually("the wait to grow with time", waited_longer, timeout=30)
    assert (await api.get("/api/v1/interrupts", user="bob")).json() == {"interrupts": []}
    assert api.log.count("tool", "refund") == 0

    path = f"/api/v1/sessions/api-approve/interrupts/{interrupt['interrupt_id']}"
    approved = await api.post(path, {"approved": True})
    assert (approved.status_code, approved.json()) == (200, {"resolved": True})
    await idle_after(api, "api-approve", 1)
    assert api.log.count("tool", "refund") == 1
    assert api.seen("api-approve", 2)[-1] == "refund ok"
    again = await api.post(path, {"approved": True})
    assert (again.status_code, again.json()["error"]) == (409, "already_resolved")
    assert api.log.count("tool", "refund") == 1
    unknown = await api.post("/api/v1/sessions/api-approve/interrupts/no-such", {"approved": True})
    assert unknown.status_code == 404


async def test_a_rejection_reason_reaches_the_model(api: Api) -> None:
    api.script(
        "api-reject",
        [[{"tool_calls": [REFUND]}, {"text": "not refunding"}]],
        {"refund": {"effect": "non_idempotent_write"}},
    )
    await api.post("/api/v1/sessions", {"session_id": "api-reject", "message": "refund 7"})
    interrupt = await pending(api, "api-reject")
    path = f"/api/v1/sessions/api-reject/interrupts/{interrupt['interrupt_id']}"
    both = await api.post(path, {"approved": False, "value": "x"})
    assert both.status_code == 422
    reason_on_approval = await api.post(path, {"approved": True, "reason": "why"})
    assert reason_on_approval.status_code == 422
    rejected = await api.post(path, {"approved": False, "reason": "too risky"})
    assert rejected.status_code == 200
    await idle_after(api, "api-reject", 1)
    assert api.log.count("tool", "refund") == 0
    assert api.seen("api-reject", 2)[-1] == "Tool call rejected by the user: too risky"


async def test_a_value_answers_a_question(api: Api) -> None:
    api.script(
        "api-ask",
        [[{"tool_calls": [ASK]}, {"text": "teal it is"}]],
        {"ask": {"effect": "read", "question": True, "returns_answer": True}},
    )
    await api.post("/api/v1/sessions", {"session_id": "api-ask", "message": "paint"})
    interrupt = await pending(api, "api-ask")
    assert (interrupt["kind"], interrupt["question"]) == ("question", "Which colour?")
    assert interrupt["deadline"] is None  # every documented field is in the body, even at its default
    answered = await api.post(
        f"/api/v1/sessions/api-ask/interrupts/{interrupt['interrupt_id']}", {"value": "teal"}
    )
    assert answered.status_code == 200
    await idle_after(api, "api-ask", 1)
    assert api.seen("api-ask", 2)[-1] == "the user answered: teal"
    assert api.log.count("tool", "ask") == 1


async def test_an_answer_past_the_deadline_gets_409(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(timings=with_deadline(2), tool_policies=approval_policy())
    api.script(
        "api-late",
        [[{"tool_calls": [REFUND]}, {"text": "nobody answered"}]],
        {"refund": {"effect": "non_idempotent_write"}},
    )
    await api.post("/api/v1/sessions", {"session_id": "api-late", "message": "refund 7"})
    interrupt = await pending(api, "api-late")
    await idle_after(api, "api-late", 1)  # the deadline passed and the turn went on without it
    late = await api.post(
        f"/api/v1/sessions/api-late/interrupts/{interrupt['interrupt_id']}", {"approved": True}
    )
    assert late.status_code == 409
    assert late.json()["error"] == "past_deadline"
    assert api.log.count("tool", "refund") == 0


async def test_an_approval_is_bound_to_the_digest_shown_and_records_the_signed_in_user(api: Api) -> None:
    api.script(
        "api-digest",
        [[{"tool_calls": [REFUND]}, {"text": "refunded"}]],
        {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}},
    )
    await api.post("/api/v1/sessions", {"session_id": "api-digest", "message": "refund 7"})
    interrupt = await pending(api, "api-digest")
    assert interrupt["digest"].startswith("sha256:")
    path = f"/api/v1/sessions/api-digest/interrupts/{interrupt['interrupt_id']}"
    stale = await api.post(path, {"approved": True, "digest": "sha256:" + "0" * 64})
    assert (stale.status_code, stale.json()["error"]) == (409, "stale_approval")
    assert api.log.count("tool", "refund") == 0
    assert (await api.post(path, {"approved": True, "digest": 7})).status_code == 422
    approved = await api.post(path, {"approved": True, "digest": interrupt["digest"]})
    assert approved.status_code == 200
    await idle_after(api, "api-digest", 1)
    assert api.log.count("tool", "refund") == 1
    async with api.http.stream(
        "GET", "/api/v1/sessions/api-digest/events", headers=api.headers()
    ) as response:
        events = await read_sse(response, until=lambda e: e["event"] == "turn_completed")
    (resolved,) = [e["data"]["data"] for e in events if e["event"] == "interrupt_resolved"]
    assert (resolved["answered_by"], resolved["digest"], resolved["approved"]) == (
        "alice",
        interrupt["digest"],
        True,
    )
    assert resolved["answered_at"] is not None
