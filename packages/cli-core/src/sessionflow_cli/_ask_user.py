"""`ask_user`: the agent asks the person at the terminal a question.

Every call is a question (`DeferredToolCall.question`, an interrupt of kind
``"question"``): the builtin runner sets it from `ToolSpec.question`, and the command's
`TurnRunner` sets it for the other frameworks (`as_question`). The terminal shows it, and
the answer travels with `resolve_interrupt(..., answer=...)` to the tool, which returns
it. Declining rejects the call, so the tool never runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall, ToolInvocation, ToolSpec, tool_arguments_object

__all__ = ["ASK_USER", "DECLINED_MESSAGE", "Question", "as_question", "ask_user_tool", "parse_question"]

ASK_USER = "ask_user"
DECLINED_MESSAGE = "The user declined to answer."
NO_QUESTION = "(the agent asked without a question)"

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "description": "The question, in one or two sentences."},
        "choices": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Answers to pick from, if the question has a few; the user may still write another.",
        },
    },
    "required": ["question"],
    "additionalProperties": False,
}


@dataclass(frozen=True, kw_only=True)
class Question:
    text: str
    choices: Sequence[str] = ()

    def answer_for(self, reply: str) -> str:
        """The choice a number picks, or the reply itself."""
        stripped = reply.strip()
        if stripped.isdigit() and 1 <= int(stripped) <= len(self.choices):
            return self.choices[int(stripped) - 1]
        return stripped


def parse_question(arguments: str) -> Question:
    """The question in a call's JSON arguments; malformed arguments show as they are."""
    data = tool_arguments_object(arguments)
    if data is None:
        return Question(text=arguments)
    choices: Any = data.get("choices") or []
    return Question(
        text=str(data.get("question", "")),
        choices=[str(c) for c in cast(list[Any], choices)] if isinstance(choices, list) else [],
    )


def _question_text(arguments: Mapping[str, Any]) -> str:
    # Never blank: the session refuses a blank question as an invalid model step.
    text = arguments.get("question")
    return text.strip() if isinstance(text, str) and text.strip() else NO_QUESTION


def as_question(call: DeferredToolCall) -> DeferredToolCall:
    """An `ask_user` call as a question, whichever framework proposed it; other calls unchanged."""
    if call.tool_name != ASK_USER or call.question is not None:
        return call
    return replace(call, question=_question_text(tool_arguments_object(call.arguments) or {}))


def _answer(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
    # The answer came with the approval; without one the person approved without words.
    return invocation.answer if invocation.answer is not None else "The user gave no answer."


def ask_user_tool() -> ToolSpec:
    """The `ask_user` tool every framework gets. It reads nothing and always waits for the user."""
    return ToolSpec(
        name=ASK_USER,
        description=(
            "Ask the user a question and wait for the answer. Use it when you need a decision or "
            "information only the user has. Offer choices when there are a few obvious answers."
        ),
        parameters=_PARAMETERS,
        effect=ToolEffect.READ,
        policy=ToolPolicy(effect=ToolEffect.READ, requires_approval=True),
        handler=_answer,
        question=_question_text,
    )
