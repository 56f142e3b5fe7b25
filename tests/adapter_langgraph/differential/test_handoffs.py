"""Handoffs between agents with ``Command(goto=..., graph=Command.PARENT)`` (issue 21, item 4).

LangGraph's "Multi-agent systems" guide, "Handoffs": a flight assistant and a hotel
assistant, each a prebuilt ReAct agent added as a node of a parent graph, each with a
handoff tool that returns ``Command(goto=<the other>, graph=Command.PARENT)``. The tool
runs inside the agent's subgraph; the command is the parent graph's.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent  # pyright: ignore[reportDeprecated, reportUnknownVariableType]

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both
from tests.adapter_langgraph.differential.multi_agent_tools import (
    book_flight,
    book_hotel_for,
    create_handoff_tool,
)


def flight_and_hotel_assistants(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    transfer_to_hotel_assistant = create_handoff_tool(
        agent_name="hotel_assistant",
        description="Transfer user to the hotel-booking assistant.",
    )
    transfer_to_flight_assistant = create_handoff_tool(
        agent_name="flight_assistant",
        description="Transfer user to the flight-booking assistant.",
    )
    flight_assistant = cast(
        Compiled,
        create_react_agent(  # pyright: ignore[reportDeprecated]
            model=model,
            tools=[book_flight(log), transfer_to_hotel_assistant],
            prompt="You are a flight booking assistant",
            name="flight_assistant",
        ),
    )
    hotel_assistant = cast(
        Compiled,
        create_react_agent(  # pyright: ignore[reportDeprecated]
            model=model,
            tools=[book_hotel_for(log), transfer_to_flight_assistant],
            prompt="You are a hotel booking assistant",
            name="hotel_assistant",
        ),
    )
    builder = StateGraph(MessagesState)
    builder.add_node(flight_assistant)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node(hotel_assistant)  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "flight_assistant")
    return Built(builder.compile(checkpointer=checkpointer))  # pyright: ignore[reportUnknownMemberType]


HANDOFF_SCRIPT = [
    ModelReply.call(
        ScriptedToolCall("call_flight", "book_flight", {"from_airport": "BOS", "to_airport": "JFK"})
    ),
    ModelReply.call(ScriptedToolCall("call_handoff", "transfer_to_hotel_assistant", {})),
    ModelReply.call(ScriptedToolCall("call_hotel", "book_hotel", {"hotel_name": "McKittrick Hotel"})),
    ModelReply.say("Your flight and your stay at the McKittrick Hotel are booked."),
]
HANDOFF_TURN = "book a flight from BOS to JFK and a stay at McKittrick Hotel"


async def test_a_handoff_tool_moves_the_conversation_to_the_other_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="handoffs",
        build=flight_and_hotel_assistants,
        script=HANDOFF_SCRIPT,
        turns=[HANDOFF_TURN],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [
        {"name": "book_flight", "from_airport": "BOS", "to_airport": "JFK"},
        {"name": "book_hotel", "hotel_name": "McKittrick Hotel"},
    ]
    # The hotel assistant saw the flight assistant's work and the handoff's tool message.
    hotel_request = plain.requests[2]["messages"]
    assert hotel_request[0]["content"] == "You are a hotel booking assistant"
    assert hotel_request[-1]["content"] == "Successfully transferred to hotel_assistant"
    assert_same_run(plain, session)
