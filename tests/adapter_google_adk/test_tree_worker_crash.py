"""A SIGKILL of the worker inside a sub-agent's tool (the help desk's `Support`, reached by
a transfer): only that call repeats, no model call repeats, and the turn ends once."""

from __future__ import annotations

from pathlib import Path

from sessionflow import AgentSnapshot, AgentStatus
from sessionflow.demo import ScriptedModelServer
from sessionflow.testing import AgentTestStack, wait_for_agent_snapshot
from tests.adapter_google_adk.test_agent_trees import help_desk_script
from tests.adapter_google_adk.tree_agents import load_tree_flow, save_tree_spec
from tests.crash_tool_log import ToolLog, crash_gate


def idle(snapshot: AgentSnapshot) -> AgentSnapshot | None:
    state = snapshot.state
    done = state and state.turn_count == 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
    return snapshot if done else None


async def test_a_sigkill_inside_a_sub_agents_tool_repeats_that_call_only(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "adk-tree-sigkill"
    model_server.script(key, help_desk_script()[:3])  # turn 1: transfer, Support's tool, answer
    save_tree_spec(
        tmp_path, tree="help_desk", flow_type=key, base_url=model_server.base_url(key, api="gemini")
    )
    log = ToolLog(tmp_path / "invocations.jsonl", state_dir=tmp_path, crash_in="check_service_status")
    flow = load_tree_flow(tmp_path, log)
    async with AgentTestStack(
        tmp_path,
        [flow],
        worker_module="tests.adapter_google_adk.tree_worker",
        server_address=temporal_address,
        worker_env=log.env(),
    ) as stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "My email does not work.")
        await crash_gate(tmp_path, "check_service_status").wait_until_reached(timeout=60)
        first.kill()
        second = await stack.start_worker()
        snapshot = await wait_for_agent_snapshot(
            sessions, key, idle, description="the turn to end", timeout=90
        )
        events = (await sessions.list_agent_events(key)).events

    # The tool's effect happened once, in the second worker, with the call's durable key.
    entries = log.entries("tool", "check_service_status")
    assert [(e["pid"], e["key"]) for e in entries] == [(second.pid, f"{key}/turn-1/s1")]
    assert first.pid != second.pid
    # No model call repeated: the coordinator once, Support twice (the call, the answer).
    requests = model_server.requests(key)
    assert len(requests) == 3
    assert requests[1].saw('Your internal name is "Support"')
    assert requests[2].tool_results() == {"s1": '{"service":"email","status":"up"}'}
    assert sum(e.type.value == "turn_completed" for e in events) == 1
    assert snapshot.messages[-1].message.text == "Email is up again."
    assert snapshot.framework_state == {"adk_state": {"checked": "email"}}
