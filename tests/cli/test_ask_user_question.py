"""`ask_user` is a question whichever framework proposed it."""

from __future__ import annotations

import json

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall
from sessionflow.session.approvals import decide_approval
from sessionflow_cli._ask_user import ASK_USER, as_question, ask_user_tool

READ = ToolPolicy(effect=ToolEffect.READ)


def _call(name: str, arguments: object) -> DeferredToolCall:
    return DeferredToolCall(tool_call_id="c1", tool_name=name, arguments=json.dumps(arguments), policy=READ)


def test_an_ask_user_call_becomes_a_question_with_its_text() -> None:
    asked = as_question(_call(ASK_USER, {"question": " Which colour? ", "choices": ["red"]}))
    assert asked.question == "Which colour?"
    decision = decide_approval(asked)
    assert (decision.waits, decision.kind) == (True, "question")


def test_a_question_is_never_blank_even_without_its_argument() -> None:
    for arguments in ({}, {"question": "  "}, ["not", "an", "object"]):
        asked = as_question(_call(ASK_USER, arguments))
        assert asked.question and asked.question.strip()
        assert decide_approval(asked).kind == "question"


def test_other_calls_and_questions_already_set_stay_as_they_are() -> None:
    other = _call("lookup", {"question": "x"})
    assert as_question(other) is other
    kept = as_question(
        DeferredToolCall(tool_call_id="c1", tool_name=ASK_USER, arguments="{}", policy=READ, question="Set")
    )
    assert kept.question == "Set"


def test_the_tool_spec_asks_the_same_question() -> None:
    spec = ask_user_tool()
    assert spec.question is not None
    assert spec.question({"question": "Which colour?"}) == "Which colour?"
