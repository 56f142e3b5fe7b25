"""/openapi.json: generated from the client's types, valid, and naming every route the app serves."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from starlette.routing import Route

from sessionflow_server import ROUTES
from tests.server.conftest import Api


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        mapping = cast(dict[str, Any], node)
        found = [str(v) for k, v in mapping.items() if k == "$ref"]
        return found + [r for v in mapping.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in cast(list[Any], node) for r in _refs(v)]
    return []


async def test_the_document_parses_and_names_every_route(api: Api) -> None:
    response = await api.get("/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == (Path(__file__).parents[2] / "VERSION").read_text().strip()
    schemas = document["components"]["schemas"]
    for ref in _refs(document):
        assert ref.startswith("#/components/schemas/") and ref.rsplit("/", 1)[1] in schemas, ref
    operations = {
        (method.upper(), path): op for path, item in document["paths"].items() for method, op in item.items()
    }
    assert {(r.method, r.path) for r in ROUTES} == set(operations)
    assert len({op["operationId"] for op in operations.values()}) == len(operations)
    served = {
        (method, route.path)
        for route in api.server.app.routes
        if isinstance(route, Route) and route.path.startswith("/api/")
        for method in (route.methods or set()) - {"HEAD"}
    }
    assert served == set(operations)
    # The schemas are the Python client's types, field for field.
    assert set(schemas["AgentSnapshot"]["properties"]) >= {
        "session_id",
        "messages",
        "pending_interrupts",
        "stopped",
    }
    assert set(schemas["AgentEvent"]["properties"]) == {
        "type",
        "turn_id",
        "step_execution_id",
        "attempt",
        "data",
        "offset",
    }
    assert "deadline" in schemas["AgentInterrupt"]["properties"]
    # The session list's rows, the inbox's items and /me, with every field issue 44 added.
    listed = operations[("GET", "/api/v1/sessions")]
    assert listed["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SessionsResponse"
    }
    assert schemas["SessionsResponse"]["properties"]["sessions"]["items"] == {
        "$ref": "#/components/schemas/SessionItem"
    }
    row = schemas["SessionItem"]["properties"]
    assert set(row) >= {
        "title",
        "state",
        "queued_message_count",
        "usage",
        "cost_usd",
        "forked_from",
        "created_at",
        "last_activity_at",
    }
    assert sorted(row["state"]["enum"]) == ["failed", "idle", "stopped", "waiting_for_you", "working"]
    assert {p["name"] for p in listed["parameters"]} == {
        "flow_type",
        "state",
        "q",
        "limit",
        "status",
        "user",
        "since",
    }
    assert {"session_title", "waited_seconds"} <= set(schemas["InterruptItem"]["properties"])
    assert set(schemas["MeResponse"]["properties"]) == {"user", "namespace", "temporal_ui_url"}
    turns = operations[("GET", "/api/v1/sessions/{session_id}/turns")]
    assert turns["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/TurnsResponse"
    }
    assert {"steps", "tool_calls", "outcome", "note_sequence"} <= set(schemas["TurnRecord"]["properties"])
    assert {"approval", "approval_reason", "effect"} <= set(schemas["RecordedToolCall"]["properties"])
    output = operations[
        ("GET", "/api/v1/sessions/{session_id}/turns/{turn_id}/tool-calls/{tool_call_id}/output")
    ]
    assert output["responses"]["200"]["content"] == {
        "text/plain; charset=utf-8": {"schema": {"type": "string"}}
    }
    message = operations[("GET", "/api/v1/sessions/{session_id}/messages/{sequence}")]
    assert message["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/AgentMessage"
    }
    assert schemas["SendMessageRequest"]["required"] == ["message_id", "text"]
    login = operations[("POST", "/api/v1/login")]
    assert login["security"] == []
