"""`MCPClient` tools, plain and as sessions, against a real MCP server subprocess (stdio).

The same model requests call by call, the same final messages, the same real runs of the
server's tools (its own log); in the session each call is a tool step of its own whose
effect comes from the server's annotations (`sessionflow.kit.effect_from_mcp_annotations`):
the read and the idempotent write run without asking, the destructive write waits for
approval, and a rejected one never reaches the server.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, cast

from mcp import StdioServerParameters, stdio_client
from strands import Agent
from strands.tools.mcp import MCPClient

from sessionflow import AgentInterrupt, AgentSessionOptions, Rejection
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.temporal import read_step_history
from sessionflow.testing import InvocationLog
from sessionflow_strands import strands_session_flow
from sessionflow_strands._messages import load_message
from tests.adapter_strands.harness import (
    TIMINGS,
    _model_fields,  # pyright: ignore[reportPrivateUsage]
    _requests,  # pyright: ignore[reportPrivateUsage]
    model_for,
    unique,
)
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = [
    ModelReply(
        tool_calls=[
            ScriptedToolCall(id="r1", name="read_note", arguments={"name": "groceries"}),
            ScriptedToolCall(id="t1", name="tag_note", arguments={"name": "groceries", "tag": "home"}),
            ScriptedToolCall(id="d1", name="delete_note", arguments={"name": "old"}),
        ]
    ),
    ModelReply(text="Read, tagged and deleted."),
]
PROMPT = "Read my groceries note, tag it home, and delete the old one."


def _params(log_path: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.adapter_strands.mcp_server"],
        env={**os.environ, "MCP_TEST_LOG": str(log_path), "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )


def notes_client(log_path: Path) -> MCPClient:
    """Strands' `MCPClient` on the notes server, started as a subprocess over stdio (mcp 2.1's
    transport, which Strands' `MCPTransport` type does not name)."""
    return MCPClient(cast(Any, lambda: stdio_client(_params(log_path))))


def _by_id(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = cast(list[dict[str, Any]], message["content"])
    return sorted(blocks, key=lambda b: str(b["toolResult"]["toolUseId"]))


def notes_agent(model: Any, client: MCPClient) -> Agent:
    return Agent(
        model=model,
        tools=client.list_tools_sync(),
        system_prompt="You keep notes.",
        callback_handler=None,
    )


def server_runs(log_path: Path) -> list[dict[str, Any]]:
    return [{"name": e["name"], "note": e["note"]} for e in InvocationLog(log_path).entries("tool")]


async def test_mcp_client_tools_run_as_plain_with_effects_from_annotations(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    key = unique("strands-mcp")
    plain_log, session_log = tmp_path / "plain-server.jsonl", tmp_path / "session-server.jsonl"

    model_server.script(f"{key}-plain", SCRIPT)
    with notes_client(plain_log) as client:
        plain_agent = notes_agent(model_for(model_server.url, f"{key}-plain"), client)
        await plain_agent.invoke_async(PROMPT)
        plain_messages = [_model_fields(cast(dict[str, Any], m)) for m in plain_agent.messages]
    plain_requests = _requests(model_server, f"{key}-plain")

    model_server.script(key, SCRIPT)
    asked: list[AgentInterrupt] = []

    def approve(interrupt: AgentInterrupt) -> bool:
        asked.append(interrupt)
        return True

    with notes_client(session_log) as client:
        agent = notes_agent(model_for(model_server.url, key), client)
        # The session's default effect (unclassified): only the annotations make a call safe.
        flow = strands_session_flow(agent, flow_type=key, options=AgentSessionOptions(timings=TIMINGS))
        async with serving(temporal_address, flow) as sessions:
            result = await sessions.run_turn(key, PROMPT, on_interrupt=approve, timeout=90)
            assert result.ok, (result.status, result.error)
            stored = await sessions.stored_messages(key)
            history = await read_step_history(sessions.client, key)

    requests = _requests(model_server, key)
    assert len(requests) == len(plain_requests) == 2
    for number, (p, s) in enumerate(zip(plain_requests, requests, strict=True), 1):
        assert s == p, f"model request {number} differs:\nplain   {json.dumps(p)}\nsession {json.dumps(s)}"
    messages = [_model_fields(load_message(m.message.framework_item)) for m in stored]
    # One response's calls run in parallel steps: plain's concurrent executor orders the
    # results as they finish, the session in the model's order (the README says so).
    assert messages[:2] == plain_messages[:2] and messages[3:] == plain_messages[3:]
    assert _by_id(messages[2]) == _by_id(plain_messages[2])
    # Each call reached the server once, in both runs.
    assert sorted(map(str, server_runs(session_log))) == sorted(map(str, server_runs(plain_log)))
    assert sorted(r["name"] for r in server_runs(session_log)) == ["delete_note", "read_note", "tag_note"]
    # Effects from the annotations: only the destructive write asked.
    effects = {c.tool_name: c.effect for c in result.tool_calls}
    assert effects == {"read_note": "read", "tag_note": "idempotent_write", "delete_note": "unclassified"}
    assert [(i.kind, i.tool_name) for i in asked] == [("approval", "delete_note")]
    # One tool step per call.
    tool_steps = [s for s in history if s.step_type != "sessionflow.RunModel"]
    assert len([s for s in tool_steps if "Tool" in s.step_type]) == 3


async def test_a_rejected_mcp_write_never_reaches_the_server(
    model_server: ScriptedModelServer, temporal_address: str, tmp_path: Path
) -> None:
    key = unique("strands-mcp-rejected")
    log = tmp_path / "server.jsonl"
    model_server.script(key, SCRIPT)
    # The managed form: the client itself in `tools=`, started by the agent (a ToolProvider).
    client = notes_client(log)
    agent = Agent(
        model=model_for(model_server.url, key),
        tools=[client],
        system_prompt="You keep notes.",
        callback_handler=None,
    )
    try:
        flow = strands_session_flow(agent, flow_type=key, options=AgentSessionOptions(timings=TIMINGS))
        async with serving(temporal_address, flow) as sessions:
            result = await sessions.run_turn(
                key, PROMPT, on_interrupt=lambda _: Rejection(message="keep it"), timeout=90
            )
    finally:
        agent.cleanup()
    assert result.ok, (result.status, result.error)
    assert sorted(r["name"] for r in server_runs(log)) == ["read_note", "tag_note"]
    sent = [m for m in _requests(model_server, key)[1]["messages"] if m.get("tool_call_id") == "d1"]
    assert len(sent) == 1 and "keep it" in str(sent[0]["content"])
