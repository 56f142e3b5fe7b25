"""The thread carry is versioned: v1 carries (written before v2) still resume, others are refused.

The graph needs no model: each turn its node counts the turn (a reducer-managed key) and
answers with what it saw of the message channel, so the next turn's start is visible.
``compact`` replaces the channel with a summary (``RemoveMessage(REMOVE_ALL_MESSAGES)``,
as ``SummarizationMiddleware`` does), and the next turn must start from that channel.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from sessionflow import AgentMessage, AgentSessionOptions, SessionStateError
from sessionflow.kit import AgentEventWriter, AgentTurnContext, TurnCompleted
from sessionflow_langgraph import LangGraphRunner
from sessionflow_langgraph._carry import CARRY_VERSION, ThreadCarry
from sessionflow_langgraph._messages import framework_message


class Counted(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    turns: Annotated[int, operator.add]


def counting_graph(*, compact: bool = False) -> StateGraph[Counted]:
    def count(state: Counted) -> dict[str, Any]:
        seen = " | ".join(str(m.content) for m in state["messages"])
        turns = state.get("turns", 0) + 1
        reply = AIMessage(content=f"turn {turns} saw: {seen}")
        if compact and turns == 1:
            summary = HumanMessage(content="summary of turn 1")
            return {"turns": 1, "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, reply]}
        return {"turns": 1, "messages": [reply]}

    builder = StateGraph(Counted)
    builder.add_node("count", count)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_edge(START, "count")
    builder.add_edge("count", END)
    return builder


def turn(number: int, stored: list[AgentMessage], carried: str | None) -> AgentTurnContext:
    options = AgentSessionOptions()
    return AgentTurnContext(
        flow_id="s",
        turn_id=f"turn-{number}",
        attempt=1,
        messages=stored,
        framework_run_state=None,
        tool_calls={},
        policy_resolver=options.resolve_tool_policy,
        events=AgentEventWriter(None, turn_id=f"turn-{number}", step_execution_id="x", attempt=1),
        heartbeat=lambda *a: None,
        carried_state=carried,
    )


def store(stored: list[AgentMessage], number: int, *messages: Any) -> None:
    for message in messages:
        item = message if not isinstance(message, str) else framework_message(HumanMessage(content=message))
        stored.append(AgentMessage(sequence=len(stored) + 1, turn_id=f"turn-{number}", message=item))


async def first_turn(runner: LangGraphRunner, stored: list[AgentMessage]) -> TurnCompleted:
    store(stored, 1, "hello")
    done = await runner.run_model_step(turn(1, stored, None))
    assert isinstance(done, TurnCompleted)
    store(stored, 1, *done.new_messages)
    return done


def as_version_1(carry: str) -> str:
    """The carry as this adapter wrote it before version 2: the same cut checkpoint, and
    the state's keys and the channel's length beside it."""
    raw = json.loads(carry)
    assert raw["v"] == CARRY_VERSION == 2 and raw["channel"] is False
    old = {"v": 1, "state": {"turns": 1}, "messages": raw["stored"]}
    return json.dumps({**old, "checkpoint": raw["checkpoint"], "metadata": raw["metadata"]})


@pytest.mark.parametrize("version", [1, 2])
async def test_a_carry_of_either_version_starts_the_next_turn_from_the_thread(version: int) -> None:
    runner = LangGraphRunner(counting_graph())
    stored: list[AgentMessage] = []
    done = await first_turn(runner, stored)
    assert done.framework_state == {"turns": 1}
    assert done.carry is not None
    carry = as_version_1(done.carry) if version == 1 else done.carry
    store(stored, 2, "again")
    second = await runner.run_model_step(turn(2, stored, carry))
    assert isinstance(second, TurnCompleted)
    # The reducer added to turn 1's count; the channel was the stored transcript.
    assert [m.text for m in second.new_messages] == ["turn 2 saw: hello | turn 1 saw: hello | again"]
    assert second.framework_state == {"turns": 2}


async def test_a_replaced_message_channel_is_carried_and_the_next_turn_starts_from_it() -> None:
    runner = LangGraphRunner(counting_graph(compact=True))
    stored: list[AgentMessage] = []
    done = await first_turn(runner, stored)
    assert done.carry is not None and json.loads(done.carry)["channel"] is True
    # The session stores what the turn added (the summary and the answer) and supersedes the
    # message the channel no longer holds: the transcript is the channel.
    assert [m.message.text for m in stored] == ["hello", "summary of turn 1", "turn 1 saw: hello"]
    assert done.superseded == [1]
    assert done.framework_state is not None
    assert [m["data"]["content"] for m in done.framework_state["messages"]] == [
        "summary of turn 1",
        "turn 1 saw: hello",
    ]
    store(stored, 2, "again")
    second = await runner.run_model_step(turn(2, stored, done.carry))
    assert isinstance(second, TurnCompleted)
    # The input is only the message stored since; the turn appends only its answer (the
    # summary and turn 1's answer are in the transcript already) and supersedes nothing new.
    assert [m.text for m in second.new_messages] == [
        "turn 2 saw: summary of turn 1 | turn 1 saw: hello | again"
    ]
    assert second.superseded == [1]
    assert json.loads(second.carry or "{}")["stored"] == 5


def test_a_carry_of_another_version_or_encoding_is_refused_with_its_version() -> None:
    serde = JsonPlusSerializer()
    with pytest.raises(SessionStateError, match="unsupported sessionflow-langgraph carry version 99"):
        ThreadCarry.loads(json.dumps({"v": 99, "state": {}}), serde)
    with pytest.raises(SessionStateError, match="not a sessionflow-langgraph thread carry"):
        ThreadCarry.loads("carried turns: 1", serde)
