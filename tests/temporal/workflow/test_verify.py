"""Verified outcomes through the real workflow: a write whose step died is settled by its verify step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionflow import AgentEventType, ToolEffect, ToolPolicy
from sessionflow.temporal import PayloadStore
from sessionflow.testing import FileGate
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, kill_at_gate

PAY_POLICY = {"pay": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)}
PAY: dict[str, object] = {"id": "c1", "name": "pay", "arguments": {"amount": 10}}
UNKNOWN = "The outcome of this tool call is unknown"


async def _steps(harness: Harness, session_id: str) -> list[tuple[str, str, int, str]]:
    steps = await harness.stack.read_step_history(session_id)
    return [
        (s.step_type.removeprefix("sessionflow."), s.step_execution_id, s.final_attempt, s.outcome)
        for s in steps
    ]


async def _finished(harness: Harness, session_id: str) -> dict[str, tuple[str, str | None]]:
    """Each call's final status and error, from its `tool_call_finished` event (records end with the turn)."""
    page = await harness.sessions.list_agent_events(session_id)
    return {
        str(e.data["tool_call_id"]): (str(e.data["status"]), e.data.get("error"))
        for e in page.events
        if e.type is AgentEventType.TOOL_CALL_FINISHED
    }


async def _verified_events(harness: Harness, session_id: str) -> list[tuple[str, dict[str, Any]]]:
    page = await harness.sessions.list_agent_events(session_id)
    return [(e.step_execution_id, e.data) for e in page.events if e.type is AgentEventType.TOOL_CALL_VERIFIED]


async def test_sigkill_during_a_write_that_took_effect_is_recorded_succeeded(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(tool_policies=PAY_POLICY)
    harness.script(
        "v-ok",
        [[{"tool_calls": [PAY]}, {"text": "paid"}]],
        {
            "pay": {
                "gate": "pay",
                "gate_attempts": 99,
                "verify": {"result": "succeeded", "output": "payment p-7 found", "basis": "balance=90"},
            }
        },
    )
    await harness.sessions.start_session("v-ok", "pay 10")
    await kill_at_gate(harness, "pay")
    snapshot = await idle_after(harness, "v-ok", 1)
    assert harness.log.count("tool", "pay") == 1
    verifies = harness.log.entries("verify", "pay")
    assert [(v["attempt"], v["idempotency_key"], v["basis"]) for v in verifies] == [
        (1, "v-ok/turn-1/c1", "balance=90")
    ]
    assert (await _finished(harness, "v-ok"))["c1"] == ("succeeded", None)
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert harness.seen("v-ok", 2)[-1] == "payment p-7 found"
    assert await _steps(harness, "v-ok") == [
        ("RunModel", "turn-1/model-1", 1, "completed"),
        ("CallSingleAttemptTool", "turn-1/tool/c1", 1, "timed_out"),
        ("VerifyTool", "turn-1/verify/c1", 1, "completed"),
        ("RunModel", "turn-1/model-2", 1, "completed"),
    ]
    assert await _verified_events(harness, "v-ok") == [
        (
            "turn-1/verify/c1",
            {"tool_call_id": "c1", "tool_name": "pay", "result": "succeeded", "status": "succeeded"},
        )
    ]


async def test_sigkill_during_a_write_that_did_not_take_effect_lets_the_model_try_again(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(tool_policies=PAY_POLICY)
    retry: dict[str, object] = {"id": "c2", "name": "pay", "arguments": {"amount": 10}}
    harness.script(
        "v-no",
        [[{"tool_calls": [PAY]}, {"tool_calls": [retry]}, {"text": "paid on the second try"}]],
        {
            "pay": {
                "gate": "pay",
                "output": "paid",
                "verify": {"result": "failed", "message": "no payment with this key"},
            }
        },
    )
    await harness.sessions.start_session("v-no", "pay 10")
    await kill_at_gate(harness, "pay")
    FileGate(harness.state_dir, "pay").release()  # the model's second try goes through
    snapshot = await idle_after(harness, "v-no", 1)
    finished = await _finished(harness, "v-no")
    assert finished["c1"][0] == "failed" and finished["c2"] == ("succeeded", None)
    assert [data["tool_call_id"] for _, data in await _verified_events(harness, "v-no")] == ["c1"]
    seen = harness.seen("v-no", 2)[-1]
    assert seen.startswith("Tool call failed: no payment with this key")
    assert "timed out" in seen
    # The model's second call ran once, on its own step; the first ran once and was verified once.
    assert [r["tool_call_id"] for r in harness.log.entries("tool", "pay")] == ["c1", "c2"]
    assert [v["tool_call_id"] for v in harness.log.entries("verify", "pay")] == ["c1"]
    assert harness.seen("v-no", 3)[-1] == "paid"
    assert snapshot.messages[-1].message.text == "paid on the second try"


async def test_unknown_keeps_outcome_unknown_with_the_reason(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(tool_policies=PAY_POLICY)
    harness.script(
        "v-unk",
        [[{"tool_calls": [PAY]}, {"text": "checking"}]],
        {"pay": {"crash_attempts": 99, "verify": {"result": "unknown", "message": "the ledger is offline"}}},
    )
    await harness.sessions.start_session("v-unk", "pay 10")
    await idle_after(harness, "v-unk", 1)
    assert (await _finished(harness, "v-unk"))["c1"][0] == "outcome_unknown"
    seen = harness.seen("v-unk", 2)[-1]
    assert seen.startswith(UNKNOWN)
    assert "verify could not tell: the ledger is offline" in seen
    assert harness.log.count("tool", "pay") == 1
    assert [s[0] for s in await _steps(harness, "v-unk")] == [
        "RunModel",
        "CallSingleAttemptTool",
        "VerifyTool",
        "RunModel",
    ]
    assert [data["result"] for _, data in await _verified_events(harness, "v-unk")] == ["unknown"]


async def test_a_verify_step_is_retried_like_a_read_and_one_that_always_fails_leaves_unknown(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(
        tool_policies={
            **PAY_POLICY,
            "refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False),
        }
    )
    refund: dict[str, object] = {"id": "c2", "name": "refund", "arguments": {}}
    harness.script(
        "v-retry",
        [[{"tool_calls": [PAY, refund]}, {"text": "done"}]],
        {
            "pay": {
                "crash_attempts": 99,
                "verify": {"result": "succeeded", "output": "ok", "fail_attempts": 1},
            },
            "refund": {"crash_attempts": 99, "verify": {"result": "succeeded", "fail_attempts": 99}},
        },
    )
    await harness.sessions.start_session("v-retry", "go")
    await idle_after(harness, "v-retry", 1)
    assert [v["attempt"] for v in harness.log.entries("verify", "pay")] == [1, 2]
    assert [v["attempt"] for v in harness.log.entries("verify", "refund")] == [1, 2, 3]
    finished = await _finished(harness, "v-retry")
    assert (finished["c1"][0], finished["c2"][0]) == ("succeeded", "outcome_unknown")
    steps = {s[1]: s for s in await _steps(harness, "v-retry")}
    assert steps["turn-1/verify/c1"][2:] == (2, "completed")
    assert steps["turn-1/verify/c2"][2:] == (3, "failed")
    assert "verify could not tell: the verify step failed" in harness.seen("v-retry", 2)[-1]


async def test_a_write_without_verify_has_no_verify_step(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(tool_policies=PAY_POLICY)
    harness.script("v-none", [[{"tool_calls": [PAY]}, {"text": "unsure"}]], {"pay": {"crash_attempts": 99}})
    await harness.sessions.start_session("v-none", "pay")
    await idle_after(harness, "v-none", 1)
    assert (await _finished(harness, "v-none"))["c1"][0] == "outcome_unknown"
    assert [s[0] for s in await _steps(harness, "v-none")] == [
        "RunModel",
        "CallSingleAttemptTool",
        "RunModel",
    ]
    assert harness.log.entries("verify") == []


async def test_the_turn_failure_note_says_which_outcomes_were_verified(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(tool_policies=PAY_POLICY)
    harness.script(
        "v-note",
        [
            [{"tool_calls": [PAY]}, {"fail_attempts": 99}],
            [{"text": "I see the payment went through"}],
        ],
        {"pay": {"crash_attempts": 99, "verify": {"result": "succeeded", "output": "payment p-9 found"}}},
    )
    await harness.sessions.start_session("v-note", "pay 10")
    first = await idle_after(harness, "v-note", 1)
    assert first.state is not None and (first.state.last_turn_error or "").startswith("model call failed")
    await harness.sessions.send_user_message("v-note", "well?")
    await idle_after(harness, "v-note", 2)
    last = harness.log.entries("model", session="v-note")[-1]["seen"]
    note = next(text for text in last if text.startswith("[sessionflow]"))
    assert '- pay {"amount":10} -> succeeded (verified): payment p-9 found' in note


async def test_a_long_verify_output_travels_by_reference(
    harness_factory: HarnessFactory, tmp_path: Path
) -> None:
    harness: Harness = await harness_factory(
        tool_policies=PAY_POLICY, payloads=PayloadStore(location=str(tmp_path / "payloads"))
    )
    harness.script(
        "v-big",
        [[{"tool_calls": [PAY]}, {"text": "done"}]],
        {"pay": {"crash_attempts": 99, "verify": {"result": "succeeded", "output_bytes": 40_000}}},
    )
    await harness.sessions.start_session("v-big", "pay")
    await idle_after(harness, "v-big", 1)
    assert harness.seen("v-big", 2)[-1] == "v" * 40_000  # the model reads the whole output back
    history = await harness.stack.client.get_workflow_handle("v-big").fetch_history()
    for event in history.events:
        for payload in event.activity_task_completed_event_attributes.result.payloads:
            assert b"v" * 10_000 not in payload.data


async def test_a_verify_is_cancelled_with_its_turn_and_the_write_stays_unknown(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(tool_policies=PAY_POLICY)
    harness.script(
        "v-cancel",
        [[{"tool_calls": [PAY]}, {"text": "never"}]],
        {"pay": {"crash_attempts": 99, "verify": {"result": "succeeded", "gate": "verify"}}},
    )
    await harness.sessions.start_session("v-cancel", "pay")
    await FileGate(harness.state_dir, "verify").wait_until_reached()
    assert await harness.sessions.cancel_turn("v-cancel")
    snapshot = await idle_after(harness, "v-cancel", 1)
    assert snapshot.state is not None and snapshot.state.last_turn_error == "turn cancelled"
    status, error = (await _finished(harness, "v-cancel"))["c1"]
    assert (
        status == "outcome_unknown"
        and error is not None
        and error.endswith("verify could not tell: turn cancelled")
    )
    assert [data["result"] for _, data in await _verified_events(harness, "v-cancel")] == ["unknown"]
    assert harness.log.count("model", session="v-cancel") == 1  # the turn ended without another model call
