"""The run state and the deps across worker processes: one process makes the model call,
is SIGKILLed, and another runs the tool and resumes the turn from the stored run state."""

from __future__ import annotations

from pathlib import Path

from sessionflow import AgentInterrupt, AgentSnapshot, AgentStatus
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import AgentTestStack, InvocationLog, wait_for_agent_snapshot, wait_until
from tests.adapter_pydantic_ai.agents import load_flow, save_flow_spec


def pending(snapshot: AgentSnapshot) -> AgentInterrupt | None:
    return snapshot.pending_interrupts[0] if snapshot.pending_interrupts else None


def idle(snapshot: AgentSnapshot) -> AgentSnapshot | None:
    state = snapshot.state
    return (
        snapshot
        if state and state.turn_count == 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        else None
    )


async def test_run_state_and_deps_cross_worker_processes(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "pai-two-processes"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("c1", "lookup", {"city": "Oslo"}),
                ScriptedToolCall("c2", "delete_file", {"path": "/tmp/old.log"}),
                text="Looking it up, and cleaning up.",
            ),
            ModelReply.say("Sunny, and the log is gone."),
        ],
    )
    save_flow_spec(tmp_path, flow_type="pai-two-processes", base_url=model_server.base_url(key))
    flow = load_flow(tmp_path)
    log = InvocationLog(tmp_path / "invocations.jsonl")
    async with AgentTestStack(
        tmp_path, [flow], worker_module="tests.adapter_pydantic_ai.worker", server_address=temporal_address
    ) as stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "Weather in Oslo? And delete /tmp/old.log")
        interrupt = await wait_for_agent_snapshot(
            sessions, key, pending, description="the delete to need approval"
        )
        assert interrupt.tool_call_id == "c2"

        # The read ran at once in the first process; the write waits for approval. The kill
        # waits until the session recorded the read's result, or the read would rightly run again.
        async def read_recorded() -> bool:
            events = (await sessions.list_agent_events(key)).events
            return any(
                e.type.value == "tool_call_finished" and e.data.get("tool_call_id") == "c1" for e in events
            )

        await wait_until("the session to record the read", read_recorded)
        assert log.count("tool", "lookup") == 1
        first.kill()

        second = await stack.start_worker()
        assert await sessions.resolve_interrupt(key, interrupt.interrupt_id, approved=True)
        snapshot = await wait_for_agent_snapshot(
            sessions, key, idle, description="the turn to end", timeout=60
        )

    requests = model_server.requests(key)
    assert len(requests) == 2
    results = requests[1].tool_results()
    assert results["c1"].startswith("sunny in Oslo (hello from deps, pid ")
    assert results == {"c1": results["c1"], "c2": "deleted /tmp/old.log"}
    assert [m.message.text for m in snapshot.messages] == [
        "Weather in Oslo? And delete /tmp/old.log",
        "Looking it up, and cleaning up.",
        f"{results['c1']}\ndeleted /tmp/old.log",
        "Sunny, and the log is gone.",
    ]
    # The deps' state travelled; their resources were opened by each worker process that ran a step.
    opened = [e["pid"] for e in log.entries("deps", "opened")]
    assert opened[0] == first.pid and opened[-1] == second.pid
    assert log.entries("tool", "lookup")[0]["pid"] == first.pid
    assert [e["pid"] for e in log.entries("tool", "delete_file")] == [second.pid]
    assert f"pid {first.pid}" in results["c1"]
