"""A tool's own approval rule and question, reported on its deferred call (`with_tool_asks`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import (
    DeferredToolCall,
    ToolHandler,
    ToolInvocation,
    ToolSpec,
    ToolVerifier,
    ToolVerifyBasis,
    question_tool,
    with_tool_asks,
)

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def spec(
    name: str = "t",
    *,
    parameters: Mapping[str, Any] = OBJECT,
    effect: ToolEffect | None = None,
    policy: ToolPolicy | None = None,
    handler: ToolHandler | None = None,
    mcp_annotations: Mapping[str, Any] | None = None,
    needs_approval: bool | Callable[[Mapping[str, Any]], bool] = False,
    pre_approved: bool = False,
    question: Callable[[Mapping[str, Any]], str] | None = None,
    verify: ToolVerifier | None = None,
    verify_basis: ToolVerifyBasis | None = None,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description="d",
        parameters=parameters,
        effect=effect,
        policy=policy,
        handler=handler or _ok,
        mcp_annotations=mcp_annotations,
        needs_approval=needs_approval,
        pre_approved=pre_approved,
        question=question,
        verify=verify,
        verify_basis=verify_basis,
    )


def _ok(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
    return "ok"


CALL = DeferredToolCall(
    tool_call_id="c", tool_name="t", arguments='{"amount": 50}', policy=ToolPolicy(effect=ToolEffect.READ)
)


def big(arguments: Mapping[str, Any]) -> bool:
    return arguments.get("amount", 0) > 10


def test_no_spec_or_no_asks_leaves_the_call_as_it_is() -> None:
    assert with_tool_asks(CALL, None) is CALL
    assert with_tool_asks(CALL, spec()) is CALL


def test_an_approval_rule_that_asks_marks_the_call_required() -> None:
    assert with_tool_asks(CALL, spec(needs_approval=True)).framework_approval == "required"
    assert with_tool_asks(CALL, spec(needs_approval=big)).framework_approval == "required"
    small = DeferredToolCall(
        tool_call_id="c", tool_name="t", arguments='{"amount": 5}', policy=ToolPolicy(effect=ToolEffect.READ)
    )
    assert with_tool_asks(small, spec(needs_approval=big)).framework_approval is None


def test_asking_wins_over_a_pre_approval() -> None:
    assert with_tool_asks(CALL, spec(pre_approved=True)).framework_approval == "pre_approved"
    assert with_tool_asks(CALL, spec(pre_approved=True, needs_approval=True)).framework_approval == "required"
    assert with_tool_asks(CALL, spec(pre_approved=True, needs_approval=big)).framework_approval == "required"


def test_a_question_is_asked_from_the_arguments() -> None:
    asked = with_tool_asks(CALL, spec(question=lambda a: f"Pay {a['amount']}?"))
    assert (asked.question, asked.framework_approval) == ("Pay 50?", None)
    bad = DeferredToolCall(
        tool_call_id="c", tool_name="t", arguments="not json", policy=ToolPolicy(effect=ToolEffect.READ)
    )
    assert with_tool_asks(bad, spec(question=lambda a: f"{dict(a)}")).question == "{}"


def test_a_question_tool_answers_with_the_persons_answer() -> None:
    tool = question_tool(name="ask", description="Asks", parameters=OBJECT, question=lambda a: "Which?")
    assert (tool.effect, tool.policy, tool.name) == (ToolEffect.READ, None, "ask")
    answered = ToolInvocation(tool_call_id="c", idempotency_key="k", attempt=1, answer="blue")
    assert asyncio.run(tool.call({}, answered)) == "blue"
    unanswered = ToolInvocation(tool_call_id="c", idempotency_key="k", attempt=1)
    assert asyncio.run(tool.call({}, unanswered)) == "The user gave no answer."
