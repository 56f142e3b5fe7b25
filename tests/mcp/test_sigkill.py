"""A real session whose worker is SIGKILLed during a non-idempotent MCP call."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sessionflow import AgentEventType, AgentSnapshot, AgentStatus, AgentToolCallStatus, ToolEffect
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import AgentTestStack, FileGate, wait_for_agent_snapshot
from tests.mcp.crash_flow import build_flow, save_flow_spec
from tests.mcp.fixture_server import calls
from tests.mcp.helpers import REPO_ROOT


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def test_sigkill_during_non_idempotent_mcp_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    session_id, key = f"mcp-kill-{suffix}", f"mcp-kill-{suffix}"
    state_dir, server_dir = tmp_path / "state", tmp_path / "server"
    server_dir.mkdir()
    model_server.script(
        key,
        [ModelReply.call(ScriptedToolCall("c1", "slow_send", {"to": "bob"})), ModelReply.say("checked")],
    )
    save_flow_spec(
        state_dir,
        flow_type=f"mcp-kill-{suffix}",
        model_base_url=model_server.base_url(key),
        server_state_dir=server_dir,
    )
    flow = build_flow(state_dir)  # the client side only needs the flow type and timings
    gate = FileGate(server_dir, "slow")
    async with AgentTestStack(
        state_dir,
        [flow],
        worker_module="tests.mcp.worker",
        worker_cwd=REPO_ROOT,
        server_address=temporal_address,
    ) as stack:
        try:
            await stack.start_worker()
            sessions = stack.sessions(flow)
            await sessions.start_session(session_id, "send it to bob")

            # slow_send promises nothing, so the session's default effect (a non-idempotent
            # write) applies, and with it an approval.
            def pending(s: AgentSnapshot) -> str | None:
                return s.pending_interrupts[0].interrupt_id if s.pending_interrupts else None

            interrupt_id = await wait_for_agent_snapshot(
                sessions, session_id, pending, description="approval"
            )
            snapshot = await sessions.get_agent_snapshot(session_id)
            assert snapshot.tool_calls[0].policy.effect is ToolEffect.NON_IDEMPOTENT_WRITE
            assert await sessions.resolve_interrupt(session_id, interrupt_id, approved=True)

            # The server has the call and blocks in it: kill the worker right there.
            await gate.wait_until_reached(timeout=60)
            stack.workers[-1].kill()
            await stack.start_worker()

            def idle(s: AgentSnapshot) -> AgentSnapshot | None:
                state = s.state
                if state is None or state.turn_count < 1:
                    return None
                return s if state.status is AgentStatus.WAITING_FOR_USER_MESSAGE else None

            snapshot = await wait_for_agent_snapshot(
                sessions, session_id, idle, description="the turn", timeout=90
            )
            events = (await sessions.list_agent_events(session_id)).events
            steps = await stack.read_step_history(session_id)
        finally:
            gate.release()

    finished = [e.data for e in events if e.type is AgentEventType.TOOL_CALL_FINISHED]
    assert finished == [
        {
            "tool_call_id": "c1",
            "tool_name": "slow_send",
            "status": AgentToolCallStatus.OUTCOME_UNKNOWN.value,
            "error": "timed out (heartbeat)",
        }
    ]
    assert [(s.step_type, s.final_attempt) for s in steps if "Tool" in s.step_type] == [
        ("sessionflow.CallSingleAttemptTool", 1)
    ]
    assert snapshot.messages[-1].message.text == "checked"
    # The server's own log: exactly one call, with the call's idempotency key.
    (call,) = calls(server_dir, "slow_send")
    assert call["meta"]["io.sessionflow/idempotencyKey"] == f"{session_id}/turn-1/c1"
    seen = model_server.requests(key)[-1].tool_results()["c1"]
    assert seen.startswith("The outcome of this tool call is unknown")
