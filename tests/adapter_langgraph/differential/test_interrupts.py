"""`interrupt()` inside a tool and inside a node before the tool node (issue 21, item 6).

The graphs are LangGraph's chatbot tutorial ("Add human-in-the-loop controls": a
``human_assistance`` tool that interrupts) and its "review tool calls" pattern (a node
between the model and the tool node that asks before the tools run). One change to the
tutorial's tool: it resumes with ``{"data": ...}``; a session's answer is text, so this copy
resumes with the text itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import Built, Review, Scenario, assert_same_run, run_both
from tests.adapter_langgraph.differential.test_tool_nodes import State, chatbot_graph


def human_assistance_tool(log: InvocationLog) -> BaseTool:
    @tool
    def human_assistance(query: str) -> str:
        """Request assistance from a human."""
        human_response: str = interrupt({"query": query})
        # Logged after the interrupt: LangGraph runs the tool again from its start when it
        # resumes, and what counts is the run that got the answer.
        log.record("tool", "human_assistance", query=query, answer=human_response)
        return human_response

    return human_assistance


def assisted_chatbot(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    tools = [human_assistance_tool(log)]
    builder = chatbot_graph(model, tools, ToolNode(tools), tools_condition)
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


def reviewed_chatbot(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    """``chatbot`` -> ``human_review`` (interrupts) -> ``tools`` or back to ``chatbot``."""
    tools = [get_weather(log)]
    llm = model.bind_tools(tools)

    def chatbot(state: State) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    def human_review(state: State) -> Command[Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        answer = interrupt({"question": "Run these tools?", "tool_calls": last.tool_calls})
        if answer == "yes":
            return Command(goto="tools")
        refusals = [
            ToolMessage(content=f"The user said no: {answer}", tool_call_id=str(call["id"]), status="error")
            for call in last.tool_calls
        ]
        return Command(goto="chatbot", update={"messages": refusals})

    builder = StateGraph(State)
    builder.add_node("chatbot", chatbot)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("human_review", human_review, destinations=("tools", "chatbot"))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "chatbot")
    builder.add_conditional_edges("chatbot", tools_condition, {"tools": "human_review", END: END})
    builder.add_edge("tools", "chatbot")
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


async def test_interrupt_in_a_tool_is_a_question_whose_answer_is_the_tool_result(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="interrupt-in-tool",
        build=assisted_chatbot,
        script=[
            ModelReply.call(ScriptedToolCall("call_help", "human_assistance", {"query": "Which city?"})),
            ModelReply.say("Then Paris it is."),
        ],
        turns=["I need some expert guidance"],
        reviews=[Review("answer", message="Paris")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_help",
        "content": "Paris",
    }
    assert plain.tool_runs == [{"name": "human_assistance", "query": "Which city?", "answer": "Paris"}]
    assert_same_run(plain, session)


async def test_interrupt_in_a_node_before_the_tool_node(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="interrupt-in-node",
        build=reviewed_chatbot,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("It's always sunny in sf!"),
            ModelReply.call(ScriptedToolCall("call_ny", "get_weather", {"city": "nyc"})),
            ModelReply.say("As you wish, no weather for nyc."),
        ],
        turns=["weather in sf?", "and in nyc?"],
        reviews=[Review("answer", message="yes"), Review("answer", message="not now")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "get_weather", "city": "sf"}]
    assert plain.requests[3]["messages"][-1]["content"] == "The user said no: not now"
    assert_same_run(plain, session)
