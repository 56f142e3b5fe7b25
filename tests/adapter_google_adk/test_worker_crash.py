"""A SIGKILL of the worker inside an ADK tool: only that call repeats, the write beside it
ran once, and the turn ends once."""

from __future__ import annotations

from pathlib import Path

from sessionflow import AgentSnapshot, AgentStatus
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import AgentTestStack, wait_for_agent_snapshot, wait_until
from tests.adapter_google_adk.agents import load_flow, save_flow_spec
from tests.crash_tool_log import ToolLog, crash_gate


def idle(snapshot: AgentSnapshot) -> AgentSnapshot | None:
    state = snapshot.state
    done = state and state.turn_count == 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
    return snapshot if done else None


async def test_a_sigkill_inside_a_tool_repeats_that_call_only(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "adk-sigkill"
    model_server.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("w1", "save_note", {"text": "Paris trip"}),
                ScriptedToolCall("r1", "get_weather", {"city": "Paris"}),
            ),
            ModelReply.say("Noted, and it is sunny."),
        ],
    )
    save_flow_spec(tmp_path, flow_type="adk-sigkill", base_url=model_server.base_url(key, api="gemini"))
    log = ToolLog(tmp_path / "invocations.jsonl", state_dir=tmp_path, crash_in="get_weather")
    flow = load_flow(tmp_path, log)
    async with AgentTestStack(
        tmp_path,
        [flow],
        worker_module="tests.adapter_google_adk.worker",
        server_address=temporal_address,
        worker_env=log.env(),
    ) as stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "Save a note 'Paris trip' and tell me the weather in Paris")
        await crash_gate(tmp_path, "get_weather").wait_until_reached(timeout=60)

        async def write_recorded() -> bool:
            events = (await sessions.list_agent_events(key)).events
            return any(
                e.type.value == "tool_call_finished" and e.data.get("tool_call_id") == "w1" for e in events
            )

        await wait_until("the session to record the write", write_recorded)
        first.kill()
        second = await stack.start_worker()
        snapshot = await wait_for_agent_snapshot(
            sessions, key, idle, description="the turn to end", timeout=90
        )
        events = (await sessions.list_agent_events(key)).events

    # The write ran once (in the killed worker); the read's effect happened once, in the second.
    assert [e["key"] for e in log.entries("tool", "save_note")] == [f"{key}/turn-1/w1"]
    assert [e["pid"] for e in log.entries("tool", "get_weather")] == [second.pid]
    assert first.pid != second.pid
    requests = model_server.requests(key)
    assert len(requests) == 2
    assert requests[1].tool_results() == {
        "w1": "saved: Paris trip",
        "r1": '{"status":"success","report":"The weather in Paris is sunny, 25 C."}',
    }
    assert sum(e.type.value == "turn_completed" for e in events) == 1
    assert snapshot.messages[-1].message.text == "Noted, and it is sunny."
    # Both tools' state changes reached the ADK session, in model order.
    assert snapshot.framework_state is not None
    state = snapshot.framework_state["adk_state"]
    assert (state["notes"], state["last_city"]) == (["Paris trip"], "Paris")
