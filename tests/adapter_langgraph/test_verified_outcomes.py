"""A write SIGKILLed mid-call is settled by its tool's verify, in another worker process.

``pay`` is a neutral tool with a verify (`tests.ledger_tool`), given to the ready-made
LangGraph agent as a tool source, so it runs in the graph's tool node. The worker is
killed while ``pay`` waits just before or just after its ledger write; a fresh worker
runs the verify step, which reads the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionflow import AgentEventType, AgentSnapshot
from sessionflow.demo import ModelReply, RecordedRequest, ScriptedModelServer, ScriptedToolCall
from sessionflow.temporal import read_step_history
from sessionflow.testing import AgentTestStack, FileGate, InvocationLog
from tests.adapter_langgraph.conftest import turn_ended, unique
from tests.adapter_langgraph.flows import FlowSpec, save_flow
from tests.ledger_tool import AFTER_WRITE, BEFORE_WRITE, ledger_entries

WORKER = "tests.adapter_langgraph.worker"


@dataclass(frozen=True)
class Killed:
    """What a run killed at a gate left: the session's end, its records, and both workers."""

    key: str
    snapshot: AgentSnapshot
    verified: list[dict[str, Any]]
    finished: list[str]
    steps: list[tuple[str, int, str]]
    requests: list[RecordedRequest]
    pids: tuple[int, int]


async def _killed_at(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path, gate: str
) -> Killed:
    """Run ``pay(10)``, SIGKILL the worker at ``gate``, and let a new worker end the turn."""
    key = unique("lg-verify")
    model_server.script(
        key, [ModelReply.call(ScriptedToolCall("c1", "pay", {"amount": 10})), ModelReply.say("Done.")]
    )
    flow = save_flow(
        tmp_path, FlowSpec(flow_type=key, base_url=model_server.base_url(key), graph="ledger", gates=[gate])
    )
    async with AgentTestStack(tmp_path, [flow], WORKER, server_address=temporal_address) as stack:
        first = await stack.start_worker()
        sessions = stack.sessions()
        await sessions.start_session(key, "pay 10")
        await FileGate(tmp_path, gate).wait_until_reached()
        first.kill()
        second = await stack.start_worker()
        snapshot = await turn_ended(sessions, key)
        events = (await sessions.list_agent_events(key)).events
        steps = await read_step_history(sessions.client, key)
    return Killed(
        key=key,
        snapshot=snapshot,
        verified=[e.data for e in events if e.type is AgentEventType.TOOL_CALL_VERIFIED],
        finished=[str(e.data["status"]) for e in events if e.type is AgentEventType.TOOL_CALL_FINISHED],
        steps=[(s.step_type.removeprefix("sessionflow."), s.final_attempt, s.outcome) for s in steps],
        requests=model_server.requests(key),
        pids=(first.pid, second.pid),
    )


async def test_a_payment_killed_after_its_write_is_verified_succeeded(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    run = await _killed_at(temporal_address, model_server, tmp_path, AFTER_WRITE)
    log = InvocationLog(tmp_path / "invocations.jsonl")
    first, second = run.pids
    write_key = f"{run.key}/turn-1/c1"

    assert run.snapshot.state is not None and run.snapshot.state.last_turn_error is None
    assert run.snapshot.messages[-1].message.text == "Done."
    assert ledger_entries(tmp_path) == [{"key": write_key, "amount": 10}]
    # The write ran once, in the killed worker; the verify once, in the new one, with the
    # write's key and the ledger length recorded when the call was deferred.
    assert [(r["pid"], r["attempt"], r["key"]) for r in log.entries("tool", "pay")] == [(first, 1, write_key)]
    assert [(r["pid"], r["key"], r["basis"]) for r in log.entries("verify", "pay")] == [
        (second, write_key, "0")
    ]
    assert [(v["tool_call_id"], v["result"]) for v in run.verified] == [("c1", "succeeded")]
    assert run.finished == ["succeeded"]
    assert len(run.requests) == 2
    assert run.requests[1].tool_results() == {"c1": "payment of 10 found in the ledger"}
    assert run.steps == [
        ("RunModel", 1, "completed"),
        ("CallSingleAttemptTool", 1, "timed_out"),
        ("VerifyTool", 1, "completed"),
        ("RunModel", 1, "completed"),
    ]


async def test_a_payment_killed_before_its_write_is_verified_failed(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    run = await _killed_at(temporal_address, model_server, tmp_path, BEFORE_WRITE)
    log = InvocationLog(tmp_path / "invocations.jsonl")
    first, second = run.pids
    write_key = f"{run.key}/turn-1/c1"

    assert run.snapshot.messages[-1].message.text == "Done."
    assert ledger_entries(tmp_path) == []
    assert [(r["pid"], r["attempt"]) for r in log.entries("tool", "pay")] == [(first, 1)]
    assert [(r["pid"], r["key"]) for r in log.entries("verify", "pay")] == [(second, write_key)]
    assert [(v["tool_call_id"], v["result"]) for v in run.verified] == [("c1", "failed")]
    assert run.finished == ["failed"]
    # The model is told the payment was not made, so it may pay again.
    seen = run.requests[1].tool_results()["c1"]
    assert seen.startswith(f"Tool call failed: no payment under {write_key} in the ledger")
    assert [s[0] for s in run.steps] == ["RunModel", "CallSingleAttemptTool", "VerifyTool", "RunModel"]
