"""A tool's own approval rule and questions, as a runner reports them on a deferred call.

`ToolSpec.needs_approval`, `ToolSpec.pre_approved` and `ToolSpec.question` are what a
framework would say about a call; `with_tool_asks` puts them on the `DeferredToolCall`
(`framework_approval`, `question`), where the session applies its floor
(`sessionflow.session.approvals`). `question_tool` builds a tool that only asks: its
output is the person's answer, so it needs no handler of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from sessionflow.kit._tool_specs import ToolSpec
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.tools import DeferredToolCall, FrameworkApproval, ToolEffect, tool_arguments_object

__all__ = ["question_tool", "with_tool_asks"]

NO_ANSWER = "The user gave no answer."


def with_tool_asks(call: DeferredToolCall, spec: ToolSpec | None) -> DeferredToolCall:
    """`call` with the framework approval and the question its tool declares; unchanged without any."""
    if spec is None or not (spec.needs_approval or spec.pre_approved or spec.question):
        return call
    arguments: Mapping[str, Any] = tool_arguments_object(call.arguments) or {}
    question = spec.question(arguments) if spec.question is not None else None
    return replace(call, framework_approval=_framework_approval(spec, arguments), question=question)


def _framework_approval(spec: ToolSpec, arguments: Mapping[str, Any]) -> FrameworkApproval | None:
    rule = spec.needs_approval
    # A rule that asks wins over a pre-approval: the framework would ask for this call.
    if rule is True or (callable(rule) and rule(arguments)):
        return "required"
    return "pre_approved" if spec.pre_approved else None


def _answer(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
    # A question approved without an answer is refused by the session, so None is only
    # seen on a call answered before questions existed.
    return invocation.answer if invocation.answer is not None else NO_ANSWER


def question_tool(
    *,
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    question: Callable[[Mapping[str, Any]], str],
) -> ToolSpec:
    """A tool whose every call asks the person `question(arguments)`; its output is the answer."""
    return ToolSpec(
        name=name,
        description=description,
        parameters=parameters,
        effect=ToolEffect.READ,
        policy=None,
        handler=_answer,
        question=question,
    )
