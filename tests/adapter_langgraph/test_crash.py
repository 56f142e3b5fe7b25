"""The run state crosses processes: worker children SIGKILLed mid-turn, another one finishes."""

from __future__ import annotations

from pathlib import Path

from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from sessionflow import AgentSessionClient, AgentSnapshot
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.temporal import read_step_history
from sessionflow.testing import AgentTestStack, FileGate, InvocationLog, wait_for_agent_snapshot
from tests.adapter_langgraph.conftest import turn_ended, unique
from tests.adapter_langgraph.flows import FlowSpec, save_flow
from tests.adapter_langgraph.graphs_from_docs import user_info_graph
from tests.adapter_langgraph.plain import SETTINGS, conversation, plain_run

WORKER = "tests.adapter_langgraph.worker"


async def pending(sessions: AgentSessionClient, session_id: str) -> AgentSnapshot:
    return await wait_for_agent_snapshot(
        sessions, session_id, lambda s: s if s.pending_interrupts else None, description="a pending approval"
    )


async def test_checkpoint_restored_in_another_process_after_sigkill_during_approval(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-approval")
    model_server.script(
        key, [ModelReply.call(ScriptedToolCall("c1", "refund", {"order": 7})), ModelReply.say("Refunded.")]
    )
    flow = save_flow(tmp_path, FlowSpec(flow_type=key, base_url=model_server.base_url(key), graph="counter"))
    log = InvocationLog(tmp_path / "invocations.jsonl")
    async with AgentTestStack(tmp_path, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "refund order 7")
        snapshot = await pending(sessions, key)
        first.kill()
        second = await stack.start_worker()
        assert await sessions.resolve_interrupt(
            key, snapshot.pending_interrupts[0].interrupt_id, approved=True
        )
        snapshot = await turn_ended(sessions, key)

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert snapshot.messages[-1].message.text == "Refunded."
    # The model step ran in the first process and the resumed one in the second, which
    # restored the checkpoint: `visits` was 1 there, so `count` made it 2.
    assert [(e["pid"], e["visits"]) for e in log.entries("model")] == [(first.pid, 1), (second.pid, 2)]
    refunds = log.entries("tool", "refund")
    assert [(r["pid"], r["attempt"], r["key"]) for r in refunds] == [(second.pid, 1, f"{key}/turn-1/c1")]
    requests = model_server.requests(key)
    assert len(requests) == 2
    assert requests[1].saw("count ran 2 times")
    assert requests[1].tool_results() == {"c1": "refunded order 7"}


async def test_sigkill_in_an_idempotent_write_runs_it_again_with_the_same_key(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-gate")
    model_server.script(
        key, [ModelReply.call(ScriptedToolCall("c1", "save", {"doc": "a"})), ModelReply.say("Saved.")]
    )
    flow = save_flow(tmp_path, FlowSpec(flow_type=key, base_url=model_server.base_url(key)))
    log = InvocationLog(tmp_path / "invocations.jsonl")
    async with AgentTestStack(tmp_path, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "save a")
        await FileGate(tmp_path, "save").wait_until_reached()
        first.kill()
        second = await stack.start_worker()
        snapshot = await turn_ended(sessions, key)

    assert snapshot.messages[-1].message.text == "Saved."
    runs = log.entries("tool", "save")
    expected_key = f"{key}/turn-1/c1"
    assert [(r["pid"], r["attempt"]) for r in runs] == [(first.pid, 1), (second.pid, 2)]
    assert {r["key"] for r in runs} == {expected_key}
    assert {r["config_key"] for r in runs} == {expected_key}
    requests = model_server.requests(key)
    assert len(requests) == 2
    assert requests[1].tool_results() == {"c1": "saved a"}


async def test_sigkill_inside_a_tool_node_tool_repeats_it_by_its_effect_and_the_state_is_the_plain_runs(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key, plain = unique("lg-kill-tool"), unique("lg-kill-tool-plain")
    replies = [ModelReply.call(ScriptedToolCall("c1", "lookup_user", {})), ModelReply.say("Done.")]
    model_server.script(key, replies)
    model_server.script(plain, replies)
    flow = save_flow(
        tmp_path, FlowSpec(flow_type=key, base_url=model_server.base_url(key), graph="user_info")
    )
    log = InvocationLog(tmp_path / "invocations.jsonl")
    async with AgentTestStack(tmp_path, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "who am I?", settings=SETTINGS)
        await FileGate(tmp_path, "lookup").wait_until_reached()
        first.kill()
        second = await stack.start_worker()
        snapshot = await turn_ended(sessions, key)
        steps = await read_step_history(sessions.client, key)
    plain_model = ChatOpenAI(model="gpt-test", base_url=model_server.base_url(plain), api_key=SecretStr("k"))
    expected = await plain_run(user_info_graph(plain_model, tmp_path / "plain"), ["who am I?"], SETTINGS)

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    # A read: the killed attempt ran again in the second worker, through the tool node.
    runs = log.entries("tool", "lookup_user")
    assert [(r["pid"], r["attempt"]) for r in runs] == [(first.pid, 1), (second.pid, 2)]
    assert [(s.step_type, s.final_attempt) for s in steps] == [
        ("sessionflow.RunModel", 1),
        ("sessionflow.CallTool", 2),
        ("sessionflow.RunModel", 1),
    ]
    requests = model_server.requests(key)
    assert len(requests) == 2
    assert requests[1].tool_results() == {"c1": "Successfully looked up user information"}
    assert [conversation(r) for r in requests] == [conversation(r) for r in model_server.requests(plain)]
    assert (
        snapshot.framework_state
        == {"user_name": expected["user_name"], "visits": expected["visits"]}
        == {
            "user_name": "Bob",
            "visits": 2,
        }
    )
