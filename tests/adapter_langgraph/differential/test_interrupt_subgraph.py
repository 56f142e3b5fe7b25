"""`interrupt()` inside a subgraph: a review node of an agent added as a node (issue 21, items 4 and 6).

The subgraph is `reviewed_chatbot` (a ``human_review`` node between the model and its tool
node), compiled without a checkpointer and added to a parent graph as one node, as
LangGraph's subgraph guide adds an agent. Plain LangGraph keeps the subgraph's checkpoint in
its own namespace while the interrupt waits; the session must keep it in the run state so
that the answer resumes the subgraph at ``human_review``, not at its start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import Built, Review, Scenario, assert_same_run, run_both
from tests.adapter_langgraph.differential.test_interrupts import reviewed_chatbot
from tests.adapter_langgraph.differential.test_tool_nodes import State


def team_with_a_reviewed_agent(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    agent = reviewed_chatbot(model, log, None)
    builder = StateGraph(State)
    builder.add_node("agent", agent.graph)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    graph: Any = builder.compile(checkpointer=checkpointer)  # pyright: ignore[reportUnknownMemberType]
    return Built(graph, agent.tools)


async def test_an_interrupt_inside_a_subgraph_resumes_there(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="interrupt-in-subgraph",
        build=team_with_a_reviewed_agent,
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

    # Resumed at human_review: the model is called once per reply, never again from the start.
    assert len(plain.requests) == 4
    assert plain.tool_runs == [{"name": "get_weather", "city": "sf"}]
    assert plain.requests[3]["messages"][-1]["content"] == "The user said no: not now"
    assert_same_run(plain, session)
