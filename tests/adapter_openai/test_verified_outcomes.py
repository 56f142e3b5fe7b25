"""A write SIGKILLed mid-call is settled by its tool's verify, in another worker process.

``pay`` is a neutral tool with a verify (`tests.ledger_tool`), given to the OpenAI Agents
runner as a tool source. The worker is killed while ``pay`` waits just before or just
after its ledger write; a fresh worker runs the verify step, which reads the ledger.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents import Agent, function_tool

from sessionflow import AgentEventType, AgentSnapshot, AgentToolCall, AgentToolCallStatus
from sessionflow.demo import ModelReply, ScriptedToolCall
from sessionflow.kit import AgentEventWriter, DeferredToolExecution, TookEffect
from sessionflow.testing import FileGate
from sessionflow_openai_agents import OpenAIAgentsRunner
from tests.adapter_openai.conftest import Harness, HarnessFactory
from tests.ledger_tool import AFTER_WRITE, BEFORE_WRITE, PAY_POLICY, ledger_entries, pay_tool


async def _killed_at(harness_factory: HarnessFactory, gate: str) -> tuple[Harness, AgentSnapshot, list[int]]:
    """Run ``pay(10)``, SIGKILL the worker at ``gate``, and let a new worker end the turn.

    Returns the harness, the final snapshot, and the two workers' process IDs.
    """
    harness = await harness_factory("ledger", gates=[gate], processes=True)
    harness.script([ModelReply.call(ScriptedToolCall("c1", "pay", {"amount": 10})), ModelReply.say("Done.")])
    assert harness.stack is not None
    first = harness.stack.workers[-1]
    await harness.start("pay 10")
    await FileGate(harness.state_dir, gate).wait_until_reached()
    first.kill()
    second = await harness.stack.start_worker()
    snapshot = await harness.idle_after(1, timeout=90)
    return harness, snapshot, [first.pid, second.pid]


async def _verified(harness: Harness) -> tuple[list[dict[str, Any]], list[str]]:
    events = (await harness.sessions.list_agent_events(harness.session_id)).events
    verified = [e.data for e in events if e.type is AgentEventType.TOOL_CALL_VERIFIED]
    finished = [str(e.data["status"]) for e in events if e.type is AgentEventType.TOOL_CALL_FINISHED]
    return verified, finished


async def _steps(harness: Harness) -> list[tuple[str, int, str]]:
    return [
        (s.step_type.removeprefix("sessionflow."), s.final_attempt, s.outcome) for s in await harness.steps()
    ]


async def test_a_payment_killed_after_its_write_is_verified_succeeded(
    harness_factory: HarnessFactory,
) -> None:
    harness, snapshot, (first, second) = await _killed_at(harness_factory, AFTER_WRITE)
    key = f"{harness.session_id}/turn-1/c1"

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert snapshot.messages[-1].message.text == "Done."
    assert ledger_entries(harness.state_dir) == [{"key": key, "amount": 10}]
    # The write ran once, in the killed worker; the verify once, in the new one, with the
    # write's key and the ledger length recorded when the call was deferred.
    assert [(r["pid"], r["attempt"], r["key"]) for r in harness.log.entries("tool", "pay")] == [
        (first, 1, key)
    ]
    assert [(r["pid"], r["key"], r["basis"]) for r in harness.log.entries("verify", "pay")] == [
        (second, key, "0")
    ]
    verified, finished = await _verified(harness)
    assert [(v["tool_call_id"], v["result"]) for v in verified] == [("c1", "succeeded")]
    assert finished == ["succeeded"]
    requests = harness.requests()
    assert len(requests) == 2
    assert requests[1].tool_results() == {"c1": "payment of 10 found in the ledger"}
    assert await _steps(harness) == [
        ("RunModel", 1, "completed"),
        ("CallSingleAttemptTool", 1, "timed_out"),
        ("VerifyTool", 1, "completed"),
        ("RunModel", 1, "completed"),
    ]


async def test_a_payment_killed_before_its_write_is_verified_failed(harness_factory: HarnessFactory) -> None:
    harness, snapshot, (first, second) = await _killed_at(harness_factory, BEFORE_WRITE)
    key = f"{harness.session_id}/turn-1/c1"

    assert snapshot.messages[-1].message.text == "Done."
    assert ledger_entries(harness.state_dir) == []
    assert [(r["pid"], r["attempt"]) for r in harness.log.entries("tool", "pay")] == [(first, 1)]
    assert [(r["pid"], r["key"]) for r in harness.log.entries("verify", "pay")] == [(second, key)]
    verified, finished = await _verified(harness)
    assert [(v["tool_call_id"], v["result"]) for v in verified] == [("c1", "failed")]
    assert finished == ["failed"]
    # The model is told the payment was not made, so it may pay again.
    seen = harness.requests()[1].tool_results()["c1"]
    assert seen.startswith(f"Tool call failed: no payment under {key} in the ledger")
    assert [s[0] for s in await _steps(harness)] == [
        "RunModel",
        "CallSingleAttemptTool",
        "VerifyTool",
        "RunModel",
    ]


async def test_verify_tool_call_answers_with_the_specs_verify_and_none_for_an_agents_own_tool(
    tmp_path: Path,
) -> None:
    @function_tool
    def refund(order_id: int) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    agent = Agent[Any](name="assistant", instructions="You pay.", model="scripted", tools=[refund])
    runner = OpenAIAgentsRunner(agent, tool_sources=[pay_tool(tmp_path)])
    (tmp_path / "ledger.jsonl").write_text('{"key": "s/turn-1/c1", "amount": 10}\n')

    answer = await runner.verify_tool_call(_execution("pay", '{"amount": 10}'))
    assert answer == TookEffect(output="payment of 10 found in the ledger")
    # A function tool of the SDK has no verify: its call stays outcome_unknown.
    assert await runner.verify_tool_call(_execution("refund", '{"order_id": 7}')) is None


def _execution(name: str, arguments: str) -> DeferredToolExecution:
    record = AgentToolCall(
        tool_call_id="c1",
        tool_name=name,
        arguments=arguments,
        policy=PAY_POLICY,
        deferral_order=0,
        status=AgentToolCallStatus.RUNNING,
        verifiable=True,
    )
    writer = AgentEventWriter(None, turn_id="turn-1", step_execution_id="x", attempt=1)
    return DeferredToolExecution(
        flow_id="s", turn_id="turn-1", tool_call=record, attempt=1, events=writer, heartbeat=lambda *a: None
    )
