"""Cancelling a running turn: during a model call, an approval wait, and a write."""

from __future__ import annotations

from sessionflow import AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.testing import FileGate, wait_until
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, pending_interrupt, texts


def call(tool_call_id: str, name: str) -> dict[str, object]:
    return {"id": tool_call_id, "name": name, "arguments": {}}


async def test_cancel_without_a_turn_returns_false(harness: Harness) -> None:
    harness.script("c-idle", [[{"text": "hi"}]])
    await harness.sessions.start_session("c-idle", "hello")
    await idle_after(harness, "c-idle", 1)
    assert not await harness.sessions.cancel_turn("c-idle")


async def test_cancel_during_a_model_call(harness: Harness) -> None:
    harness.script("c-model", [[{"gate": "model", "text": "never"}], [{"text": "after cancel"}]])
    await harness.sessions.start_session("c-model", "think hard")
    await FileGate(harness.state_dir, "model").wait_until_reached()
    assert await harness.sessions.cancel_turn("c-model")
    snapshot = await idle_after(harness, "c-model", 1)
    assert snapshot.state is not None and snapshot.state.last_turn_error == "turn cancelled"
    assert texts(snapshot) == ["think hard"]
    # The activity learned of the cancel through its heartbeat, and stopped.
    await wait_until("the runner to see the cancel", lambda: harness.log.count("cancelled", "model") == 1)
    assert await harness.sessions.send_user_message("c-model", "try again")
    snapshot = await idle_after(harness, "c-model", 2)
    assert texts(snapshot)[-1] == "after cancel"
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    events = (await harness.sessions.list_agent_events("c-model")).events
    failed = [e for e in events if e.type.value == "turn_failed"]
    assert [(e.data["reason"], e.data["error"]) for e in failed] == [("cancelled", "turn cancelled")]


async def test_cancel_during_an_approval_wait(harness: Harness) -> None:
    harness.script(
        "c-approval",
        [[{"tool_calls": [call("a", "lookup"), call("w", "wire_money")]}, {"text": "never"}]],
        {
            "lookup": {"effect": "read", "output": "balance 5"},
            "wire_money": {"effect": "non_idempotent_write"},
        },
    )
    await harness.sessions.start_session("c-approval", "pay")
    interrupt = await pending_interrupt(harness, "c-approval")

    # The read must be recorded by the session, not just started by a worker: a cancel that
    # arrives while it runs cancels it, and the note would rightly say so.
    async def read_recorded() -> bool:
        events = (await harness.sessions.list_agent_events("c-approval")).events
        return any(e.type.value == "tool_call_finished" and e.data.get("tool_call_id") == "a" for e in events)

    await wait_until("the session to record the read", read_recorded)
    assert harness.log.count("tool", "lookup") == 1
    assert await harness.sessions.cancel_turn("c-approval")
    snapshot = await idle_after(harness, "c-approval", 1)
    assert snapshot.pending_interrupts == []
    assert harness.log.count("tool", "wire_money") == 0
    assert not await harness.sessions.resolve_interrupt("c-approval", interrupt.interrupt_id, approved=True)
    note = texts(snapshot)[-1] or ""
    assert note.startswith("[sessionflow] The previous turn failed")
    assert "- lookup {} -> succeeded: balance 5" in note
    assert "- wire_money {} -> rejected: Tool call not run: turn cancelled" in note
    events = (await harness.sessions.list_agent_events("c-approval")).events
    resolved = [e.data for e in events if e.type.value == "interrupt_resolved"]
    assert [r.pop("answered_at") >= interrupt.raised_at for r in resolved] == [True]
    assert resolved == [
        {
            "interrupt_id": interrupt.interrupt_id,
            "approved": False,
            "rejection_message": "turn cancelled",
            "expired": False,
            "digest": interrupt.digest,
            "answered_by": None,  # nobody answered: the cancel did
        }
    ]


async def test_cancel_during_a_write_lets_it_finish_and_cancels_reads(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(
        tool_policies={"save": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)}
    )
    harness.script(
        "c-write",
        [[{"tool_calls": [call("r", "slow_read"), call("w", "save")]}, {"text": "never"}]],
        {
            "slow_read": {"effect": "read", "gate": "read", "gate_attempts": 99},
            "save": {"gate": "write", "output": "saved"},
        },
    )
    await harness.sessions.start_session("c-write", "save it")
    await FileGate(harness.state_dir, "read").wait_until_reached()
    write_gate = FileGate(harness.state_dir, "write")
    await write_gate.wait_until_reached()
    assert await harness.sessions.cancel_turn("c-write")
    await wait_until("the read to be cancelled", lambda: harness.log.count("cancelled", "slow_read") == 1)
    snapshot = await harness.sessions.get_agent_snapshot("c-write")
    statuses = {r.tool_call_id: r.status for r in snapshot.tool_calls}
    assert statuses["w"] is AgentToolCallStatus.RUNNING, "a write is allowed to finish"
    write_gate.release()
    snapshot = await idle_after(harness, "c-write", 1)
    assert snapshot.state is not None and snapshot.state.last_turn_error == "turn cancelled"
    note = texts(snapshot)[-1] or ""
    assert "- save {} -> succeeded: saved" in note
    assert "- slow_read {} -> failed: Tool call failed: turn cancelled" in note
    assert harness.log.count("tool", "save") == 1
    assert harness.log.count("model", session="c-write") == 1
