"""LangGraph's chatbot tutorial ("Add memory"), its graph unmodified: compiled with an `InMemorySaver`.

The tutorial compiles ``graph_builder.compile(checkpointer=memory)`` with
``memory = InMemorySaver()``. The session keeps the thread itself, so it replaces that
in-memory saver (a logged notice) and runs the graph as written; both runs here use the
same builder, saver included. A saver whose threads would be lost is refused at build
(`test_build_refusals.py`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import search
from tests.adapter_langgraph.differential.harness import Built, Scenario, assert_same_run, run_both


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def tutorial_graph(llm: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    """The tutorial's code, with its search tool logged; ``checkpointer`` is ignored, as the
    tutorial has its own."""
    graph_builder = StateGraph(State)
    tool = search(log)
    tools = [tool]
    llm_with_tools = llm.bind_tools(tools)

    def chatbot(state: State) -> dict[str, Any]:
        return {"messages": [llm_with_tools.invoke(state["messages"])]}

    graph_builder.add_node("chatbot", chatbot)  # pyright: ignore[reportUnknownMemberType]
    tool_node = ToolNode(tools=[tool])
    graph_builder.add_node("tools", tool_node)  # pyright: ignore[reportUnknownMemberType]
    graph_builder.add_conditional_edges("chatbot", tools_condition)
    graph_builder.add_edge("tools", "chatbot")
    graph_builder.add_edge(START, "chatbot")
    memory = InMemorySaver()
    graph = graph_builder.compile(checkpointer=memory)  # pyright: ignore[reportUnknownMemberType]
    return Built(graph, tools)


async def test_the_chatbot_tutorial_graph_runs_unmodified_with_its_in_memory_saver(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scenario = Scenario(
        name="tutorial-memory",
        build=tutorial_graph,
        script=[
            ModelReply.call(ScriptedToolCall("call_1", "search", {"query": "LangGraph"})),
            ModelReply.say("LangGraph is a library for agents. Nice to meet you, Will."),
            ModelReply.say("Your name is Will."),
        ],
        turns=["Hi there! My name is Will. What is LangGraph?", "Remember my name?"],
    )
    with caplog.at_level(logging.INFO, logger="sessionflow_langgraph._graph"):
        plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert "compiled with checkpointer=InMemorySaver" in caplog.text
    assert "My name is Will" in str(plain.requests[2]["messages"])  # the tutorial's memory
    assert_same_run(plain, session)
