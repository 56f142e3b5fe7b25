"""More of ``interrupt()`` (issue 21, item 6): after a tool node, in parallel tasks, declined.

The graphs follow LangGraph's interrupts guide: "Review the tool's result" (a node after the
tool node asks whether to keep the result), "Multiple interrupts" (parallel `Send` tasks,
each asking, resumed together with a map of interrupt IDs), and a question the person
declines, which the session resumes with the rejection message.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, Send, interrupt

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.conftest import unique
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import (
    Built,
    Review,
    Scenario,
    assert_same_run,
    run_both,
    run_session,
)
from tests.adapter_langgraph.differential.test_interrupts import assisted_chatbot, reviewed_chatbot
from tests.adapter_langgraph.differential.test_tool_nodes import State


def result_reviewed_chatbot(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    """``chatbot`` -> ``tools`` -> ``review_result`` (interrupts) -> ``chatbot``.

    The person sees the tool's result; anything but "keep" replaces it with their note.
    """
    tools = [get_weather(log)]
    llm = model.bind_tools(tools)

    def chatbot(state: State) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    def review_result(state: State) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, ToolMessage)
        answer = interrupt(f"The tool said: {last.content}. Keep it?")
        log.record("node", "review_result", answer=answer)
        if answer == "keep":
            return {}
        note = ToolMessage(
            content=f"The user replaced the result: {answer}", tool_call_id=last.tool_call_id, id=last.id
        )
        return {"messages": [note]}

    builder = StateGraph(State)
    builder.add_node("chatbot", chatbot)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("review_result", review_result)  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "chatbot")
    builder.add_conditional_edges("chatbot", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "review_result")
    builder.add_edge("review_result", "chatbot")
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


class PlanState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    answers: Annotated[list[str], operator.add]


class TopicState(TypedDict):
    topic: str


def parallel_questions_graph(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    """``plan`` sends one ``ask`` task per topic; each asks the person, then ``answer`` calls the model.

    The model may call a tool after; this scenario's does not (the graph needs a tool node).
    """
    tools = [get_weather(log)]
    llm = model.bind_tools(tools)

    def plan(state: PlanState) -> Command[Any]:
        return Command(goto=[Send("ask", {"topic": t}) for t in ("date", "budget")])

    def ask(state: TopicState) -> dict[str, Any]:
        answer = interrupt(f"What {state['topic']} do you have in mind?")
        log.record("node", "ask", topic=state["topic"], answer=answer)
        return {"answers": [f"{state['topic']}: {answer}"]}

    def answer(state: PlanState) -> dict[str, Any]:
        notes = "; ".join(sorted(state["answers"]))
        return {"messages": [llm.invoke([*state["messages"], HumanMessage(content=f"Plan with {notes}")])]}

    builder = StateGraph(PlanState)
    builder.add_node("plan", plan, destinations=("ask",))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("ask", ask)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("answer", answer)  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "plan")
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge("ask", "answer")
    builder.add_conditional_edges("answer", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", END)
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


async def test_interrupt_in_a_node_after_the_tool_node(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="interrupt-after-tools",
        build=result_reviewed_chatbot,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("Foggy, you say."),
        ],
        turns=["weather in sf?"],
        reviews=[Review("answer", message="it is foggy")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[1]["messages"][-1]["content"] == "The user replaced the result: it is foggy"
    assert {"name": "review_result", "answer": "it is foggy"} in _node_runs(tmp_path / "plain.jsonl")
    assert _node_runs(tmp_path / "session.jsonl") == _node_runs(tmp_path / "plain.jsonl")
    assert_same_run(plain, session)


async def test_parallel_tasks_that_each_interrupt_are_asked_together(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="parallel-interrupts",
        build=parallel_questions_graph,
        script=[ModelReply.say("Booked for May, under 500.")],
        turns=["plan a trip"],
        # Different answers, so a swap between the two questions shows.
        reviews=[Review("answer", message="May"), Review("answer", message="500")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.state["answers"] == ["date: May", "budget: 500"]
    assert "Plan with budget: 500; date: May" in str(plain.requests[0]["messages"])
    assert _node_runs(tmp_path / "session.jsonl") == _node_runs(tmp_path / "plain.jsonl")
    assert_same_run(plain, session)


async def test_a_declined_question_resumes_the_graph_with_the_rejection_message(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="interrupt-declined",
        build=reviewed_chatbot,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("Fine, no weather then."),
        ],
        turns=["weather in sf?"],
        reviews=[Review("reject", message="not today")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == []
    assert plain.requests[1]["messages"][-1]["content"] == "The user said no: not today"
    assert_same_run(plain, session)


def _node_runs(path: Path) -> list[dict[str, Any]]:
    """The interrupting nodes' runs that got an answer, sorted (parallel tasks run in any order)."""
    runs = [
        {k: v for k, v in entry.items() if k not in {"kind", "pid", "at"}}
        for entry in InvocationLog(path).entries("node")
    ]
    return sorted(runs, key=str)


async def test_a_declined_question_inside_a_tool_leaves_the_tool_unrun(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """An intended difference (adapter README): the session does not run the tool again to
    hand it the rejection, as that would run it inside a model step; the model sees the
    rejection as the call's result, and the graph goes on from the tool node."""
    scenario = Scenario(
        name="tool-question-declined",
        build=assisted_chatbot,
        script=[
            ModelReply.call(ScriptedToolCall("call_help", "human_assistance", {"query": "Which city?"})),
            ModelReply.say("I will not ask again."),
        ],
        turns=["I need some expert guidance"],
        reviews=[Review("reject", message="ask someone else")],
    )
    key = unique("lg-diff-tool-question-declined")
    session = await run_session(scenario, model_server, key, tmp_path, temporal_address)

    assert session.errors == []
    assert session.tool_runs == []  # the tool logs only once interrupt() returned
    assert len(session.requests) == 2
    assert session.requests[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_help",
        "content": "Tool call rejected by the user: ask someone else",
    }
    assert [m["type"] for m in session.state["messages"]] == ["human", "ai", "tool", "ai"]
