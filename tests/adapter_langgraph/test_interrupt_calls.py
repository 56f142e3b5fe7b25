"""Interrupt calls: how ``interrupt()`` values become questions and approvals, and what resumes.

Unit tests of `_interrupts` (no server), and one runner-level round trip: a node's
``interrupt()`` is a question call in a version 2 run state, and the answer's record
resumes the graph with ``Command(resume=...)``.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

import pytest
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Interrupt, interrupt

from sessionflow import AgentMessage, AgentToolCall, AgentToolCallStatus, ToolEffect
from sessionflow.kit import ToolCallsRequested, ToolExecutionError, TurnCompleted
from sessionflow_langgraph import INTERRUPT_TOOL, LangGraphRunner
from sessionflow_langgraph._interrupts import InterruptCall, answer_output, defer_interrupts, resume_map
from sessionflow_langgraph._run_state import RunState
from tests.adapter_langgraph.test_units import turn

HITL = {
    "action_requests": [
        {"name": "book_hotel", "args": {"hotel_name": "Ritz"}, "description": "Tool execution pending"},
        {"name": "send_email", "args": {"to": "ada@example.com"}, "description": "Tool execution pending"},
    ],
    "review_configs": [
        {"action_name": "book_hotel", "allowed_decisions": ["approve", "edit", "reject"]},
        {"action_name": "send_email", "allowed_decisions": ["approve", "reject"]},
    ],
}
ID = "0123456789abcdef0123456789abcdef"


def record(call: InterruptCall, status: AgentToolCallStatus, **fields: Any) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id=call.tool_call_id,
        tool_name="x",
        arguments="{}",
        policy=defer_interrupts([Interrupt(value="q", id=ID)], taken=(), where="w")[0][1].policy,
        deferral_order=call.index,
        status=status,
        **fields,
    )


def test_a_hitl_request_is_one_approval_per_action_named_after_the_real_tool() -> None:
    taken = {f"interrupt-{ID[:16]}-1", "call_book"}
    calls = defer_interrupts([Interrupt(value=HITL, id=ID)], taken=taken, where="node 'after_model'")

    assert [(c.tool_name, json.loads(c.arguments)) for _, c in calls] == [
        ("book_hotel", {"hotel_name": "Ritz"}),
        ("send_email", {"to": "ada@example.com"}),
    ]
    assert all(c.framework_approval == "required" and c.question is None for _, c in calls)
    # The interrupt call itself runs nothing: a read, so the floor adds no second wait.
    assert all(c.policy.effect is ToolEffect.READ and not c.policy.is_approval_required for _, c in calls)
    ids = [c.tool_call_id for _, c in calls]
    assert ids == [f"interrupt-{ID[:16]}-2", f"interrupt-{ID[:16]}-3"] and not set(ids) & taken
    assert [(h.kind, h.index, h.interrupt_id) for h, _ in calls] == [
        ("decisions", 0, ID),
        ("decisions", 1, ID),
    ]


def test_a_plain_interrupt_is_a_question_with_the_values_text() -> None:
    [(_, text)] = defer_interrupts([Interrupt(value="Which city?", id=ID)], taken=(), where="node 'ask'")
    [(_, structured)] = defer_interrupts([Interrupt(value={"query": "Which?"}, id=ID)], taken=(), where="n")
    [(_, blank)] = defer_interrupts([Interrupt(value=" ", id=ID)], taken=(), where="node 'ask'")

    assert (text.tool_name, text.question) == (INTERRUPT_TOOL, "Which city?")
    assert json.loads(text.arguments) == {"where": "node 'ask'", "value": "Which city?"}
    assert structured.question == '{"query": "Which?"}'
    assert blank.question == "node 'ask' asks for an answer."  # the session refuses a blank question


def test_decisions_resume_in_action_order_in_langchains_words() -> None:
    calls = [held for held, _ in defer_interrupts([Interrupt(value=HITL, id=ID)], taken=(), where="n")]
    edit = {"type": "edit", "edited_action": {"name": "book_hotel", "args": {"hotel_name": "Plaza"}}}
    records = {
        calls[0].tool_call_id: record(calls[0], AgentToolCallStatus.SUCCEEDED, answer=json.dumps(edit)),
        calls[1].tool_call_id: record(calls[1], AgentToolCallStatus.REJECTED, rejection_message="no spam"),
    }
    assert resume_map(list(reversed(calls)), records) == {
        ID: {"decisions": [edit, {"type": "reject", "message": "no spam"}]}
    }
    records[calls[0].tool_call_id] = record(calls[0], AgentToolCallStatus.SUCCEEDED)
    records[calls[1].tool_call_id] = record(calls[1], AgentToolCallStatus.REJECTED)
    assert resume_map(calls, records) == {ID: {"decisions": [{"type": "approve"}, {"type": "reject"}]}}


def test_a_question_resumes_with_its_answer_and_a_declined_one_with_the_rejection() -> None:
    [(held, _)] = defer_interrupts([Interrupt(value="Which city?", id=ID)], taken=(), where="n")
    answered = record(held, AgentToolCallStatus.SUCCEEDED, answer="Paris")
    declined = record(held, AgentToolCallStatus.REJECTED, rejection_message="not now")

    assert resume_map([held], {held.tool_call_id: answered}) == {ID: "Paris"}
    assert resume_map([held], {held.tool_call_id: declined}) == {ID: "not now"}


def test_an_approval_answer_must_be_a_langchain_decision() -> None:
    [(held, _)] = defer_interrupts([Interrupt(value=HITL, id=ID)], taken=(), where="n")[:1]

    assert json.loads(answer_output(held, None)) == {"type": "approve"}
    assert json.loads(answer_output(held, '{"type": "respond", "message": "done"}'))["type"] == "respond"
    with pytest.raises(ToolExecutionError, match="LangChain decision as JSON"):
        answer_output(held, "yes please")


class AskState(TypedDict):
    messages: list[Any]
    city: str


@tool
def noop() -> str:
    """Does nothing; the graph needs a tool node, which this test never reaches."""
    return ""


def asking_graph() -> StateGraph[AskState]:
    def ask(state: AskState) -> dict[str, Any]:
        return {"city": interrupt("Which city?")}

    builder = StateGraph(AskState)
    builder.add_node("ask", ask)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("tools", ToolNode([noop]))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    builder.add_edge("tools", END)
    return builder


async def test_a_nodes_interrupt_is_a_question_in_a_version_2_run_state_and_its_answer_resumes() -> None:
    runner = LangGraphRunner(asking_graph())
    history = [AgentMessage(sequence=1, turn_id="turn-1", message=runner.build_user_message("go"))]

    asked = await runner.run_model_step(turn(runner, history))
    assert isinstance(asked, ToolCallsRequested)
    [call] = asked.tool_calls
    assert (call.tool_name, call.question) == (INTERRUPT_TOOL, "Which city?")
    raw = json.loads(asked.framework_run_state)
    assert raw["v"] == 2 and raw["interrupts"][0]["id"] == call.tool_call_id and raw["pending"] == []
    assert RunState.loads(asked.framework_run_state, runner._serde).interrupt_call(call.tool_call_id)  # pyright: ignore[reportPrivateUsage]

    answered = AgentToolCall(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        arguments=call.arguments,
        policy=call.policy,
        deferral_order=0,
        status=AgentToolCallStatus.SUCCEEDED,
        answer="Oslo",
        output="Oslo",
    )
    done = await runner.run_model_step(turn(runner, history, asked.framework_run_state, [answered]))
    assert isinstance(done, TurnCompleted)
    assert done.framework_state is not None and done.framework_state["city"] == "Oslo"
    assert json.loads(done.carry or "{}")["v"] == 2  # the thread carries into the next turn
