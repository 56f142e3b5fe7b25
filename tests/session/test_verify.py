"""Verified outcomes in the pure model: what verify's answer makes of a write whose step died."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sessionflow import AgentEventType, AgentToolCallStatus, SessionStateError
from sessionflow.kit import (
    AgentEventWriter,
    DeferredToolExecution,
    EffectUnknown,
    NoEffect,
    TookEffect,
    VerifyCall,
    build_turn_failure_note,
    describe_tool_call_outcome,
)
from sessionflow.session.bodies import BodyRef
from sessionflow.session.model import SessionModel
from sessionflow.session.verify import MAX_VERIFY_BASIS_BYTES, verify_answer
from tests.session.helpers import NOW, WRITE, call, model_in_turn, requested

DIED = "timed out (heartbeat)"


def _running_write(*, verifiable: bool = True, basis: str | None = "before=ab") -> tuple[SessionModel, str]:
    model = model_in_turn()
    write = replace(call("w", policy=WRITE, tool_name="pay"), verifiable=verifiable, verify_basis=basis)
    model.request_tools(requested(write), now=NOW, deadline=None)
    model.resolve_interrupt("turn-1:w", approved=True, rejection_message=None, now=NOW)
    model.move_tool_call("w", AgentToolCallStatus.RUNNING)
    return model, "w"


def test_the_record_keeps_what_the_runner_said_at_deferral() -> None:
    model, _ = _running_write()
    record = model.record("w")
    assert (record.verifiable, record.verify_basis, record.verified) == (True, "before=ab", False)


def test_a_basis_travels_only_with_a_verifiable_call_and_must_be_small() -> None:
    model, _ = _running_write(verifiable=False, basis="ignored")
    assert model.record("w").verify_basis is None
    model = model_in_turn()
    big = replace(call("b"), verifiable=True, verify_basis="x" * (MAX_VERIFY_BASIS_BYTES + 1))
    with pytest.raises(SessionStateError, match="verify_basis is 4097 bytes"):
        model.request_tools(requested(big), now=NOW, deadline=None)


def test_took_effect_is_a_verified_success_with_verify_output() -> None:
    model, _ = _running_write()
    record = model.settle_by_verify(
        "w", TookEffect(output="payment p-1 found"), write_error=DIED, step="turn-1/verify/w"
    )
    assert (record.status, record.verified, record.output, record.error) == (
        AgentToolCallStatus.SUCCEEDED,
        True,
        "payment p-1 found",
        None,
    )
    assert describe_tool_call_outcome(record) == "payment p-1 found"
    events = model.event_log.read(0, 100).events
    verified = [e for e in events if e.type is AgentEventType.TOOL_CALL_VERIFIED]
    assert [(e.step_execution_id, e.data) for e in verified] == [
        (
            "turn-1/verify/w",
            {"tool_call_id": "w", "tool_name": "pay", "result": "succeeded", "status": "succeeded"},
        )
    ]
    assert events[-1].type is AgentEventType.TOOL_CALL_FINISHED


def test_a_long_output_keeps_its_reference() -> None:
    model, _ = _running_write()
    ref = BodyRef(driver="test", claim={"key": "k"}, size=300_000, sha256="d")
    record = model.settle_by_verify(
        "w", TookEffect(output="preview"), write_error=DIED, step="s", output_ref=ref
    )
    assert (record.output, record.output_ref) == ("preview", ref)


def test_no_effect_is_a_verified_failure_the_model_may_retry() -> None:
    model, _ = _running_write()
    record = model.settle_by_verify(
        "w", NoEffect(message="no payment with this key"), write_error=DIED, step="s"
    )
    assert (record.status, record.verified) == (AgentToolCallStatus.FAILED, True)
    assert describe_tool_call_outcome(record) == (
        "Tool call failed: no payment with this key "
        "(the tool's verify found this after its step died: timed out (heartbeat))"
    )


@pytest.mark.parametrize(
    ("result", "detail"),
    [
        (
            EffectUnknown(reason="the ledger is offline"),
            "timed out (heartbeat); verify could not tell: the ledger is offline",
        ),
        (EffectUnknown(), "timed out (heartbeat)"),
        (None, "timed out (heartbeat); verify could not tell: the runner has no verify for this tool"),
    ],
)
def test_unknown_stays_outcome_unknown_and_is_not_verified(result: EffectUnknown | None, detail: str) -> None:
    model, _ = _running_write()
    record = model.settle_by_verify("w", result, write_error=DIED, step="s")
    assert (record.status, record.verified, record.error) == (
        AgentToolCallStatus.OUTCOME_UNKNOWN,
        False,
        detail,
    )
    assert describe_tool_call_outcome(record).startswith("The outcome of this tool call is unknown")
    assert verify_answer(result) == "unknown"


def test_a_settled_call_is_final_and_cannot_be_settled_again() -> None:
    model, _ = _running_write()
    model.settle_by_verify("w", TookEffect(output="ok"), write_error=DIED, step="s")
    with pytest.raises(SessionStateError, match="cannot move from 'succeeded'"):
        model.settle_by_verify("w", NoEffect(message="no"), write_error=DIED, step="s")


def test_the_turn_failure_note_marks_verified_outcomes() -> None:
    model = model_in_turn()
    calls = [
        replace(call(name, policy=WRITE, tool_name="pay", arguments=f'{{"n": {n}}}'), verifiable=True)
        for n, name in enumerate(["a", "b", "c"], start=1)
    ]
    model.request_tools(requested(*calls), now=NOW, deadline=None)
    for name in ("a", "b", "c"):
        model.resolve_interrupt(f"turn-1:{name}", approved=True, rejection_message=None, now=NOW)
        model.move_tool_call(name, AgentToolCallStatus.RUNNING)
    model.settle_by_verify("a", TookEffect(output="paid"), write_error=DIED, step="s")
    model.settle_by_verify("b", NoEffect(message="not paid"), write_error=DIED, step="s")
    model.settle_by_verify("c", EffectUnknown(reason="offline"), write_error=DIED, step="s")
    note = build_turn_failure_note(model.tool_calls.values())
    assert note is not None
    lines = note.splitlines()
    assert lines[1] == '- pay {"n":1} -> succeeded (verified): paid'
    assert lines[2].startswith('- pay {"n":2} -> failed (verified): Tool call failed: not paid')
    assert lines[3].startswith('- pay {"n":3} -> outcome_unknown: The outcome of this tool call is unknown')


def test_verify_is_told_the_write_s_key_and_basis() -> None:
    model, _ = _running_write()
    execution = DeferredToolExecution(
        flow_id="s-1",
        turn_id="turn-1",
        tool_call=model.record("w"),
        attempt=2,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="v", attempt=2),
        heartbeat=lambda *args: None,
        session_settings={"k": 1},
    )
    told = VerifyCall.of(execution)
    assert (told.idempotency_key, told.attempt, told.basis, told.tool_name, dict(told.session_settings)) == (
        "s-1/turn-1/w",
        2,
        "before=ab",
        "pay",
        {"k": 1},
    )


def test_a_basis_of_exactly_the_limit_is_kept() -> None:
    model = model_in_turn()
    exact = replace(call("b"), verifiable=True, verify_basis="x" * MAX_VERIFY_BASIS_BYTES)
    (record,) = model.request_tools(requested(exact), now=NOW, deadline=None)
    assert record.verify_basis == "x" * MAX_VERIFY_BASIS_BYTES


def test_a_failed_verify_drops_the_output_reference() -> None:
    # Only a success has an output; a reference to a stored output would point at nothing.
    model, _ = _running_write()
    ref = BodyRef(driver="test", claim={"key": "k"}, size=300_000, sha256="d")
    record = model.settle_by_verify("w", NoEffect(message="none"), write_error=DIED, step="s", output_ref=ref)
    assert (record.status, record.output_ref) == (AgentToolCallStatus.FAILED, None)


def test_what_verify_said_is_given_by_keyword() -> None:
    # The error, step and reference are all strings or optional: by position they could swap.
    model, _ = _running_write()
    with pytest.raises(TypeError):
        model.settle_by_verify("w", None, DIED, "s")  # type: ignore[misc]
    assert model.record("w").status is AgentToolCallStatus.RUNNING
