"""A graph whose state is more than messages: plain keys, reducer-managed keys, across turns.

In the shape of LangGraph's Graph API guide ("Define and update state", reducers with
`operator.add`): ``remember`` runs first each turn, ``agent`` makes the model call and
shows the state in its system prompt (so every request tells what the model saw),
``note`` records the cities the tools were asked about, ``finish`` writes the
``final_response``.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import Built, Scenario, assert_same_run, run_both


class TripState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    turns: Annotated[int, operator.add]
    cities: Annotated[list[str], operator.add]
    user_name: str
    final_response: str


def trip_graph(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    tools = [get_weather(log)]
    llm = model.bind_tools(tools)

    def remember(state: TripState) -> dict[str, Any]:
        return {"turns": 1, "user_name": state.get("user_name") or "Ada"}

    def agent(state: TripState) -> dict[str, list[BaseMessage]]:
        prompt = SystemMessage(
            content=f"Turn {state['turns']} with {state['user_name']}; cities so far: {state['cities']}"
        )
        return {"messages": [llm.invoke([prompt, *state["messages"]])]}

    def note(state: TripState) -> dict[str, list[str]]:
        calls = [m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls][-1].tool_calls
        return {"cities": [str(call["args"]["city"]) for call in calls]}

    def finish(state: TripState) -> dict[str, str]:
        return {"final_response": str(state["messages"][-1].content)}

    builder = StateGraph(TripState)
    builder.add_node("remember", remember)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("agent", agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("note", note)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("finish", finish)  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "finish"})
    builder.add_edge("tools", "note")
    builder.add_edge("note", "agent")
    builder.add_edge("finish", END)
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


async def test_non_message_state_keys_carry_between_turns(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="state-keys",
        build=trip_graph,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("Sunny in sf."),
            ModelReply.call(ScriptedToolCall("call_ny", "get_weather", {"city": "nyc"})),
            ModelReply.say("Sunny in nyc too."),
        ],
        turns=["weather in sf?", "and in nyc?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Turn 2 starts from turn 1's state: the reducers add to what turn 1 left.
    assert plain.requests[2]["messages"][0]["content"] == "Turn 2 with Ada; cities so far: ['sf']"
    assert {k: v for k, v in plain.state.items() if k != "messages"} == {
        "turns": 2,
        "cities": ["sf", "nyc"],
        "user_name": "Ada",
        "final_response": "Sunny in nyc too.",
    }
    assert_same_run(plain, session)
