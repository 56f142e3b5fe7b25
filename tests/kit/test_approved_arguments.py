"""`check_run_arguments`: a tool runs only the arguments a person approved (issue 42)."""

from __future__ import annotations

import pytest

from sessionflow import ToolEffect
from sessionflow.kit import (
    ArgumentsRewrittenError,
    ToolExecutionError,
    ToolInvocation,
    approval_digest,
    check_run_arguments,
    tool_invocation_scope,
)
from sessionflow.kit._approved_arguments import rewritten_arguments, watch_rewrites

APPROVED = {"to": "ana", "amount": 10}


def _invocation(
    *, approved: bool = True, effect: ToolEffect = ToolEffect.NON_IDEMPOTENT_WRITE
) -> ToolInvocation:
    return ToolInvocation(
        tool_call_id="c1",
        idempotency_key="s/t/c1",
        attempt=1,
        tool_name="pay",
        approved_digest=approval_digest("pay", APPROVED, effect) if approved else None,
        effect=effect.value,
    )


def test_outside_a_tool_step_nothing_is_checked() -> None:
    check_run_arguments({"anything": 1})


def test_a_call_nobody_approved_runs_whatever_it_is_given() -> None:
    with tool_invocation_scope(_invocation(approved=False)), watch_rewrites() as seen:
        check_run_arguments({"to": "bo", "amount": 99})
    assert seen == []


def test_the_approved_arguments_run_in_any_spelling() -> None:
    with tool_invocation_scope(_invocation()), watch_rewrites() as seen:
        check_run_arguments({"amount": 10, "to": "ana"})
        check_run_arguments('{"to":"ana",  "amount":10}')
        check_run_arguments(APPROVED, tool_name="pay")
    assert seen == []


def test_other_arguments_are_refused_and_reported_once_canonical() -> None:
    with tool_invocation_scope(_invocation()), watch_rewrites() as seen:
        with pytest.raises(ArgumentsRewrittenError) as caught:
            check_run_arguments({"to": "ana", "amount": 20})
        with pytest.raises(ArgumentsRewrittenError):
            check_run_arguments('{"amount": 30, "to": "ana"}')
    assert caught.value.arguments == '{"amount":20,"to":"ana"}'
    assert "changed after it was approved" in caught.value.message
    assert not ArgumentsRewrittenError.retryable
    assert seen == ['{"amount":20,"to":"ana"}', '{"amount":30,"to":"ana"}']
    assert rewritten_arguments(seen) == '{"amount":20,"to":"ana"}'
    assert rewritten_arguments([]) is None


def test_the_effect_is_part_of_what_was_approved() -> None:
    # Approved as a read, the same arguments checked under a write's effect are not that approval.
    approved_as_read = approval_digest("pay", APPROVED, ToolEffect.READ)
    as_write = ToolInvocation(
        tool_call_id="c1",
        idempotency_key="s/t/c1",
        attempt=1,
        tool_name="pay",
        approved_digest=approved_as_read,
        effect=ToolEffect.NON_IDEMPOTENT_WRITE.value,
    )
    with tool_invocation_scope(as_write), pytest.raises(ArgumentsRewrittenError):
        check_run_arguments(APPROVED)
    with tool_invocation_scope(_invocation(effect=ToolEffect.READ)):
        check_run_arguments(APPROVED)  # approved as a read, checked as a read


def test_another_tool_is_refused_as_a_call_nobody_approved() -> None:
    with tool_invocation_scope(_invocation()), watch_rewrites() as seen:
        with pytest.raises(ToolExecutionError, match=r"'pay'.*'refund'.*nobody approved"):
            check_run_arguments(APPROVED, tool_name="refund")
    assert seen == []


def test_rewrites_outside_a_watch_still_stop_the_tool() -> None:
    with tool_invocation_scope(_invocation()), pytest.raises(ArgumentsRewrittenError):
        check_run_arguments({"to": "eve", "amount": 10})
