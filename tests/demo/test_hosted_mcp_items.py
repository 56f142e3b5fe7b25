"""Hosted MCP output items on the scripted Responses wire, parsed by the openai SDK itself."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from openai import OpenAI
from openai.types.responses import ResponseCompletedEvent
from openai.types.responses.response_output_item import McpApprovalRequest, McpCall, McpListTools

from sessionflow.demo import (
    ModelReply,
    RecordedRequest,
    ScriptedModelServer,
    mcp_approval_request,
    mcp_call,
    mcp_list_tools,
    mcp_tool,
)

_LISTED = mcp_list_tools(
    "mcpl_1", "gitmcp", [mcp_tool("fetch_docs", description="Fetch", annotations={"readOnlyHint": True})]
)
_ASK = mcp_approval_request("mcpr_1", "gitmcp", "fetch_docs", {"repo": "sdk"})
_CALL = mcp_call(
    "mcp_1", "gitmcp", "fetch_docs", {"repo": "sdk"}, output="docs", approval_request_id="mcpr_1"
)


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as running:
        yield running


def test_the_openai_sdk_parses_hosted_mcp_items(server: ScriptedModelServer) -> None:
    server.script(
        "k", [ModelReply(output_items=[_LISTED, _ASK]), ModelReply(text="done", output_items=[_CALL])]
    )
    client = OpenAI(base_url=server.base_url("k"), api_key="x")

    asked = client.responses.create(model="m", input="docs?")
    listed, ask = asked.output  # no empty message: the items are the answer
    assert isinstance(listed, McpListTools) and listed.tools[0].annotations == {"readOnlyHint": True}
    assert isinstance(ask, McpApprovalRequest)
    assert (ask.server_label, ask.name, json.loads(ask.arguments)) == (
        "gitmcp",
        "fetch_docs",
        {"repo": "sdk"},
    )

    answer = {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}
    with client.responses.stream(model="m", input=[answer]) as stream:  # pyright: ignore[reportArgumentType]
        events = list(stream)
    completed = [e for e in events if isinstance(e, ResponseCompletedEvent)]
    call, message = completed[0].response.output
    assert isinstance(call, McpCall) and (call.output, call.status) == ("docs", "completed")
    assert message.type == "message"
    added = [e.item.type for e in events if e.type == "response.output_item.added"]
    assert added == ["mcp_call", "message"]

    second = server.requests("k")[1]
    assert second.mcp_approval_responses() == {"mcpr_1": True}
    assert second.sent_texts() == []


def test_hosted_items_travel_in_scripts_and_only_on_the_responses_wire(server: ScriptedModelServer) -> None:
    reply = ModelReply(output_items=[_LISTED, _ASK])
    assert ModelReply.from_json(reply.to_json()) == reply
    # A script written before the option has none.
    assert ModelReply.from_json({"text": "x"}).output_items == []
    server.script("k", [reply])
    response = httpx.post(
        server.base_url("k") + "/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code >= 500
    recorded = RecordedRequest.from_json(server.requests("k")[0].to_json())
    assert recorded.mcp_approval_responses() == {}
