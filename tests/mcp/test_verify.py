"""An MCP tool names a verify tool of its server in `_meta`: the fixture server's `slow_post` and `post_status`.

First the protocol against the real server (what the verify tool is sent and what its
answers mean), then a real session whose worker is SIGKILLed during `slow_post`: the
verify step asks `post_status`, by the write's idempotency key, whether the post landed.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sessionflow import AgentEventType, AgentSnapshot, AgentStatus
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import EffectUnknown, NoEffect, TookEffect, VerifyCall
from sessionflow.mcp import META_IDEMPOTENCY_KEY, META_VERIFIES, McpConnectionPool, McpToolSource
from sessionflow.testing import AgentTestStack, FileGate, wait_for_agent_snapshot
from tests.mcp.crash_flow import build_flow, save_flow_spec
from tests.mcp.fixture_server import calls
from tests.mcp.helpers import REPO_ROOT, fixture_config, invocation

KEY = "s1/turn-1/c1"


def _verify_call(key: str = KEY) -> VerifyCall:
    return VerifyCall(tool_call_id="c1", idempotency_key=key, attempt=1, tool_name="slow_post")


async def test_a_tool_names_its_verify_tool_and_the_answers_mean_what_the_protocol_says(
    state_dir: Path, pool: McpConnectionPool, tmp_path: Path
) -> None:
    source = McpToolSource([fixture_config(state_dir)], pool=pool, media_dir=tmp_path / "media")
    specs = {spec.name: spec for spec in await source.list_tools()}
    assert {name for name, spec in specs.items() if spec.verify is not None} == {"slow_post"}
    post = specs["slow_post"]
    arguments = {"to": "bob"}
    # Nothing posted yet: the write did not take effect.
    assert await post.run_verify(arguments, _verify_call()) == NoEffect(
        message="no post with this key in the ledger"
    )
    (asked,) = calls(state_dir, "post_status")
    assert asked["arguments"] == arguments
    assert asked["meta"][META_IDEMPOTENCY_KEY] == KEY and asked["meta"][META_VERIFIES] == "slow_post"
    # The post runs to the end with this key: now it did.
    FileGate(state_dir, "post").release()
    assert await post.call(arguments, invocation(key=KEY)) == "posted to bob"
    assert await post.run_verify(arguments, _verify_call()) == TookEffect(
        output="posted to bob (found in the ledger)"
    )
    # Another key's post is not this one.
    assert isinstance(await post.run_verify(arguments, _verify_call("s1/turn-1/other")), NoEffect)
    (state_dir / "ledger-offline").touch()
    assert await post.run_verify(arguments, _verify_call()) == EffectUnknown(reason="the ledger is offline")


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


@pytest.mark.parametrize(
    ("post_first", "status", "seen"),
    [
        (True, "succeeded", "posted to bob (found in the ledger)"),
        (False, "failed", "Tool call failed: no post with this key in the ledger"),
    ],
)
async def test_sigkill_during_an_mcp_write_is_settled_by_its_verify_tool(
    temporal_address: str,
    model_server: ScriptedModelServer,
    tmp_path: Path,
    post_first: bool,
    status: str,
    seen: str,
) -> None:
    suffix = uuid.uuid4().hex[:8]
    session_id = key = f"mcp-verify-{suffix}"
    state, server_dir = tmp_path / "state", tmp_path / "server"
    server_dir.mkdir()
    if post_first:
        (server_dir / "post-first").touch()
    model_server.script(
        key, [ModelReply.call(ScriptedToolCall("c1", "slow_post", {"to": "bob"})), ModelReply.say("checked")]
    )
    save_flow_spec(
        state, flow_type=key, model_base_url=model_server.base_url(key), server_state_dir=server_dir
    )
    flow = build_flow(state)
    gate = FileGate(server_dir, "post")
    async with AgentTestStack(
        state, [flow], worker_module="tests.mcp.worker", worker_cwd=REPO_ROOT, server_address=temporal_address
    ) as stack:
        await stack.start_worker()
        sessions = stack.sessions(flow)
        await sessions.start_session(session_id, "post to bob")
        interrupt = await wait_for_agent_snapshot(
            sessions, session_id, lambda s: next(iter(s.pending_interrupts), None), description="approval"
        )
        assert await sessions.resolve_interrupt(session_id, interrupt.interrupt_id, approved=True)
        await gate.wait_until_reached(timeout=60)
        stack.workers[-1].kill()  # the server has the call and blocks in it
        await stack.start_worker()

        def idle(s: AgentSnapshot) -> AgentSnapshot | None:
            st = s.state
            return (
                s if st and st.turn_count >= 1 and st.status is AgentStatus.WAITING_FOR_USER_MESSAGE else None
            )

        snapshot = await wait_for_agent_snapshot(
            sessions, session_id, idle, description="the turn", timeout=90
        )
        events = (await sessions.list_agent_events(session_id)).events
        steps = await stack.read_step_history(session_id)
    assert snapshot.messages[-1].message.text == "checked"
    finished: list[dict[str, Any]] = [e.data for e in events if e.type is AgentEventType.TOOL_CALL_FINISHED]
    assert [f["status"] for f in finished] == [status]
    assert [e.data["result"] for e in events if e.type is AgentEventType.TOOL_CALL_VERIFIED] == [status]
    assert [(s.step_type, s.final_attempt) for s in steps if "Tool" in s.step_type] == [
        ("sessionflow.CallSingleAttemptTool", 1),
        ("sessionflow.VerifyTool", 1),
    ]
    # The server's log: the write once, and its verify with the write's key.
    (write,) = calls(server_dir, "slow_post")
    (verify,) = calls(server_dir, "post_status")
    assert (
        write["meta"][META_IDEMPOTENCY_KEY]
        == verify["meta"][META_IDEMPOTENCY_KEY]
        == f"{session_id}/turn-1/c1"
    )
    assert model_server.requests(key)[-1].tool_results()["c1"].startswith(seen)
