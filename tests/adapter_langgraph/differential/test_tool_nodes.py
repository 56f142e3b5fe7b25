"""The graph's own tool node: a custom one that post-processes, `ToolNode` errors, `tools_condition`.

The graphs are LangGraph's "Build a basic chatbot" tutorial graphs ("Add tools"): first with
its hand-written ``BasicToolNode`` (which ``json.dumps`` every result) and ``route_tools``,
then with the prebuilt `ToolNode` and `tools_condition`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import divide, get_weather, search_flights
from tests.adapter_langgraph.differential.harness import Built, Scenario, assert_same_run, run_both


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class BasicToolNode:
    """A node that runs the tools requested in the last AIMessage (the tutorial's, verbatim)."""

    def __init__(self, tools: Sequence[BaseTool]) -> None:
        self.tools_by_name = {tool.name: tool for tool in tools}

    def __call__(self, inputs: dict[str, Any]) -> dict[str, list[BaseMessage]]:
        if messages := inputs.get("messages", []):
            message = messages[-1]
        else:
            raise ValueError("No message found in input")
        outputs: list[BaseMessage] = []
        for tool_call in message.tool_calls:
            tool_result = self.tools_by_name[tool_call["name"]].invoke(tool_call["args"])
            outputs.append(
                ToolMessage(
                    content=json.dumps(tool_result),
                    name=tool_call["name"],
                    tool_call_id=tool_call["id"],
                )
            )
        return {"messages": outputs}


def route_tools(state: State) -> str:
    """The tutorial's router: to the tool node when the last AI message calls tools."""
    if messages := state.get("messages", []):
        ai_message = messages[-1]
    else:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    if isinstance(ai_message, AIMessage) and len(ai_message.tool_calls) > 0:
        return "tools"
    return END


def chatbot_graph(
    model: BaseChatModel, tools: Sequence[BaseTool], tool_node: object, router: Any
) -> StateGraph[State]:
    llm_with_tools = model.bind_tools(list(tools))

    def chatbot(state: State) -> dict[str, list[BaseMessage]]:
        return {"messages": [llm_with_tools.invoke(state["messages"])]}

    graph_builder = StateGraph(State)
    graph_builder.add_node("chatbot", chatbot)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    graph_builder.add_node("tools", tool_node)  # pyright: ignore[reportUnknownMemberType, reportArgumentType]
    graph_builder.add_conditional_edges("chatbot", router, {"tools": "tools", END: END})
    graph_builder.add_edge("tools", "chatbot")
    graph_builder.add_edge(START, "chatbot")
    return graph_builder


def basic_tool_node_graph(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    tools = [get_weather(log), search_flights(log)]
    builder = chatbot_graph(model, tools, BasicToolNode(tools), route_tools)
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


def tool_node_graph(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    tools = [get_weather(log), search_flights(log)]
    builder = chatbot_graph(model, tools, ToolNode(tools), tools_condition)
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


def erring_tool_node_graph(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    """`ToolNode(handle_tool_errors=True)`: every error becomes a message the model reads."""
    tools = [divide(log)]
    builder = chatbot_graph(model, tools, ToolNode(tools, handle_tool_errors=True), tools_condition)
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


async def test_a_custom_tool_node_post_processing_reaches_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="basic-tool-node",
        build=basic_tool_node_graph,
        script=[
            ModelReply.call(
                ScriptedToolCall("call_w", "get_weather", {"city": "sf"}),
                ScriptedToolCall("call_f", "search_flights", {"destination": "sf"}),
            ),
            ModelReply.say("Sunny, and flight SF101 costs 120."),
        ],
        turns=["weather and flights to sf?"],
        # The adapter's rule for a tool node of your own: name its tools.
        pass_tools=True,
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # json.dumps of a string keeps its quotes: the model sees the node's output, not the tool's.
    results = {m["tool_call_id"]: m["content"] for m in plain.requests[1]["messages"] if m["role"] == "tool"}
    assert results == {
        "call_w": json.dumps("It's always sunny in sf!"),
        "call_f": json.dumps({"destination": "sf", "flights": [{"number": "SF101", "price": 120}]}),
    }
    assert_same_run(plain, session)


async def test_tool_node_handle_tool_errors_shows_the_model_its_error_messages(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-node-errors",
        build=erring_tool_node_graph,
        script=[
            ModelReply.call(
                ScriptedToolCall("call_zero", "divide", {"a": 1, "b": 0}),
                ScriptedToolCall("call_negative", "divide", {"a": 1, "b": -1}),
            ),
            ModelReply.call(ScriptedToolCall("call_two", "divide", {"a": 1, "b": 2})),
            ModelReply.say("1 / 2 = 0.5"),
        ],
        turns=["divide 1 by 0, by -1, and by 2"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    errors = {m["tool_call_id"]: m["content"] for m in plain.requests[1]["messages"] if m["role"] == "tool"}
    assert errors == {
        "call_zero": "Error: ValueError('division by zero')\n Please fix your mistakes.",
        "call_negative": "Error: ToolException('negative divisors are not supported')\n Please fix your mistakes.",
    }
    assert len(plain.tool_runs) == 3
    assert_same_run(plain, session)


async def test_tools_condition_routes_to_the_tool_node_and_to_the_end(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tools-condition",
        build=tool_node_graph,
        script=[
            ModelReply.call(
                ScriptedToolCall("call_w", "get_weather", {"city": "sf"}),
                ScriptedToolCall("call_f", "search_flights", {"destination": "sf"}),
            ),
            ModelReply.say("Sunny, and flight SF101 costs 120."),
            ModelReply.say("You are welcome."),
        ],
        turns=["weather and flights to sf?", "thanks"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 3
    # One response asks for both, and `ToolNode` runs them concurrently (`asyncio.gather`).
    assert sorted(run["name"] for run in plain.tool_runs) == ["get_weather", "search_flights"]
    assert_same_run(plain, session)
