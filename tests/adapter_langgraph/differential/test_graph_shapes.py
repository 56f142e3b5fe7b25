"""Graph shapes beyond one model node and one tool node (issue 21, items 4 and 5).

- A `create_agent` agent added as a node of a parent graph (LangGraph's "Use subgraphs":
  add a compiled graph as a node; they share the ``messages`` key), so its tool node sits
  inside a subgraph.
- LangGraph's "Workflows and agents" prompt chaining (``generate_joke`` ->
  ``check_punchline`` -> ``improve_joke`` -> ``polish_joke``): three model calls in a row,
  no tool between them. One change: the topic is the user's message rather than a
  ``topic`` input key, because a session's turn starts from a user message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict, cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both


class ParentState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    greeted: bool


def agent_as_subgraph(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    tools = [get_weather(log)]
    agent = cast(Compiled, create_agent(model, tools=tools, system_prompt="You are a helpful assistant"))

    def greet(state: ParentState) -> dict[str, bool]:
        return {"greeted": True}

    builder = StateGraph(ParentState)
    builder.add_node("greet", greet)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("weather_agent", agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "greet")
    builder.add_edge("greet", "weather_agent")
    builder.add_edge("weather_agent", END)
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


class JokeState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    joke: str
    improved_joke: str
    final_joke: str


def prompt_chain(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    llm = model

    def generate_joke(state: JokeState) -> dict[str, Any]:
        """First LLM call to generate initial joke."""
        topic = next(m for m in reversed(state["messages"]) if isinstance(m, HumanMessage)).text
        msg = llm.invoke(f"Write a short joke about {topic}")
        return {"joke": msg.text}

    def check_punchline(state: JokeState) -> str:
        """Gate function to check if the joke has a punchline."""
        if "?" in state["joke"] or "!" in state["joke"]:
            return "Pass"
        return "Fail"

    def improve_joke(state: JokeState) -> dict[str, Any]:
        """Second LLM call to improve the joke."""
        msg = llm.invoke(f"Make this joke funnier by adding wordplay: {state['joke']}")
        return {"improved_joke": msg.text}

    def polish_joke(state: JokeState) -> dict[str, Any]:
        """Third LLM call for final polish."""
        msg = llm.invoke(f"Add a surprising twist to this joke: {state['improved_joke']}")
        return {"final_joke": msg.text, "messages": [AIMessage(content=msg.text)]}

    workflow = StateGraph(JokeState)
    workflow.add_node("generate_joke", generate_joke)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    workflow.add_node("improve_joke", improve_joke)  # pyright: ignore[reportUnknownMemberType]
    workflow.add_node("polish_joke", polish_joke)  # pyright: ignore[reportUnknownMemberType]
    workflow.add_edge(START, "generate_joke")
    workflow.add_conditional_edges("generate_joke", check_punchline, {"Fail": "improve_joke", "Pass": END})
    workflow.add_edge("improve_joke", "polish_joke")
    workflow.add_edge("polish_joke", END)
    return Built(workflow.compile(checkpointer=checkpointer))  # pyright: ignore[reportUnknownMemberType]


async def test_an_agent_inside_a_subgraph_runs_its_tools(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="subgraph-agent",
        build=agent_as_subgraph,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("It's always sunny in sf!"),
        ],
        turns=["weather in sf?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "get_weather", "city": "sf"}]
    assert plain.state["greeted"] is True
    assert_same_run(plain, session)


async def test_three_model_calls_in_a_row_without_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="prompt-chain",
        build=prompt_chain,
        script=[
            ModelReply.say("Cats sleep a lot."),
            ModelReply.say("Cats are purr-fect nappers."),
            ModelReply.say("Cats are purr-fect nappers, until the vacuum wakes."),
        ],
        turns=["cats"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [r["messages"][-1]["content"] for r in plain.requests] == [
        "Write a short joke about cats",
        "Make this joke funnier by adding wordplay: Cats sleep a lot.",
        "Add a surprising twist to this joke: Cats are purr-fect nappers.",
    ]
    assert plain.state["final_joke"] == "Cats are purr-fect nappers, until the vacuum wakes."
    assert_same_run(plain, session)
