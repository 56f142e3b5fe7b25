"""The run state across worker processes: a SIGKILL while waiting for approval, and a handoff
followed by a tool call in the specialist with a SIGKILL in between."""

from __future__ import annotations

from sessionflow import AgentInterrupt, AgentSnapshot
from sessionflow.demo import ModelReply, ScriptedToolCall
from sessionflow.testing import FileGate, wait_for_agent_snapshot
from tests.adapter_openai.conftest import Harness, HarnessFactory


async def pending_interrupt(harness: Harness) -> AgentInterrupt:
    def first(snapshot: AgentSnapshot) -> AgentInterrupt | None:
        return snapshot.pending_interrupts[0] if snapshot.pending_interrupts else None

    return await wait_for_agent_snapshot(
        harness.sessions, harness.session_id, first, description="an approval"
    )


async def test_run_state_round_trip_across_two_processes(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("assistant", processes=True)
    harness.script(
        [
            ModelReply.call(ScriptedToolCall("call_refund", "refund", {"order_id": 7})),
            ModelReply.say("Order 7 is refunded."),
        ]
    )
    await harness.start("Refund order 7")
    interrupt = await pending_interrupt(harness)
    assert harness.stack is not None
    first_worker = harness.stack.workers[-1]
    first_worker.kill()
    second_worker = await harness.stack.start_worker()
    assert await harness.sessions.resolve_interrupt(harness.session_id, interrupt.interrupt_id, approved=True)
    snapshot = await harness.idle_after(1)

    assert snapshot.messages[-1].message.text == "Order 7 is refunded."
    # The second process resumed the state the first one saved, and ran the tool once.
    runs = harness.log.entries("tool", "refund")
    assert [(r["pid"], r["attempt"]) for r in runs] == [(second_worker.pid, 1)]
    requests = harness.requests()
    assert len(requests) == 2
    assert requests[1].tool_results() == {"call_refund": "refunded order 7"}
    steps = await harness.steps()
    assert [(s.step_type, s.final_attempt) for s in steps] == [
        ("sessionflow.RunModel", 1),
        ("sessionflow.CallSingleAttemptTool", 1),
        ("sessionflow.RunModel", 1),
    ]


async def test_handoff_then_specialist_tool_survives_a_sigkill(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("handoff", gates=["lookup_order"], processes=True)
    harness.script(
        [
            ModelReply.call(ScriptedToolCall("call_handoff", "transfer_to_orders_specialist", {})),
            ModelReply.call(ScriptedToolCall("call_lookup", "lookup_order", {"order_id": 42})),
            ModelReply.say("Order 42 has shipped."),
        ]
    )
    await harness.start("Where is order 42?")
    await FileGate(harness.state_dir, "lookup_order").wait_until_reached()
    assert harness.stack is not None
    harness.stack.workers[-1].kill()
    await harness.stack.start_worker()
    snapshot = await harness.idle_after(1)

    assert snapshot.messages[-1].message.text == "Order 42 has shipped."
    assert [r["attempt"] for r in harness.log.entries("tool", "lookup_order")] == [1, 2]
    requests = harness.requests()
    # The triage agent answered first; after the handoff (and the crash) the specialist did.
    assert [r.body["instructions"] for r in requests] == [
        "You route requests.",
        "You are the orders specialist.",
        "You are the orders specialist.",
    ]
    assert requests[2].tool_results()["call_lookup"] == "order 42: shipped"
    steps = await harness.steps()
    assert [(s.step_type, s.step_execution_id, s.final_attempt) for s in steps] == [
        ("sessionflow.RunModel", "turn-1/model-1", 1),
        ("sessionflow.CallTool", "turn-1/tool/call_handoff", 1),
        ("sessionflow.RunModel", "turn-1/model-2", 1),
        ("sessionflow.CallTool", "turn-1/tool/call_lookup", 2),
        ("sessionflow.RunModel", "turn-1/model-3", 1),
    ]
    # Exactly one model request per model step, across the crash.
    assert len(requests) == sum(1 for s in steps if s.step_type == "sessionflow.RunModel")
