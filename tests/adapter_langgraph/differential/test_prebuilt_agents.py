"""The prebuilt agents, as the docs build them: `create_react_agent` and LangChain v1's `create_agent`."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

# Deprecated for create_agent, still documented and widely used; partial stubs.
from langgraph.prebuilt import create_react_agent  # pyright: ignore[reportDeprecated, reportUnknownVariableType]

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import book_hotel, get_weather
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both

WEATHER_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
    ModelReply.say("It's always sunny in sf!"),
]


def react_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    """LangGraph's quickstart agent (langgraph docs, "Agents: run an agent")."""
    tools = [get_weather(log)]
    graph = cast(
        Compiled,
        create_react_agent(  # pyright: ignore[reportDeprecated]
            model, tools=tools, prompt="You are a helpful assistant", checkpointer=checkpointer
        ),
    )
    return Built(graph, tools)


def langchain_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    """LangChain v1's quickstart agent (langchain docs, "Agents")."""
    tools = [get_weather(log), book_hotel(log)]
    graph = cast(
        Compiled,
        create_agent(
            model, tools=tools, system_prompt="You are a helpful assistant", checkpointer=checkpointer
        ),
    )
    return Built(graph, tools)


# LangGraph 1.x warns that create_react_agent moved to langchain.agents; the docs still show it.
@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
async def test_create_react_agent_with_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="react", build=react_agent, script=WEATHER_SCRIPT, turns=["what is the weather in sf"]
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    assert plain.tool_runs == [{"name": "get_weather", "city": "sf"}]
    assert_same_run(plain, session)


async def test_create_agent_with_tools_over_two_turns(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="create-agent",
        build=langchain_agent,
        script=[
            *WEATHER_SCRIPT,
            ModelReply.call(
                ScriptedToolCall("call_book", "book_hotel", {"hotel_name": "McKittrick Hotel"}),
                ScriptedToolCall("call_ny", "get_weather", {"city": "nyc"}),
            ),
            ModelReply.say("Booked, and it is sunny in nyc."),
        ],
        turns=["what is the weather in sf", "book the McKittrick Hotel and check the weather in nyc"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4
    names = [run["name"] for run in plain.tool_runs]
    # The second turn's response asks for two calls, which `ToolNode` runs concurrently
    # (`asyncio.gather`): those two in any order, after the first turn's.
    assert names[0] == "get_weather" and sorted(names[1:]) == ["book_hotel", "get_weather"]
    assert_same_run(plain, session)


def direct_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    """`create_agent` with a ``return_direct`` tool: its result ends the run, no model call after it."""
    weather = get_weather(log)
    weather.return_direct = True
    graph = cast(Compiled, create_agent(model, tools=[weather], checkpointer=checkpointer))
    return Built(graph, [weather])


async def test_create_agent_with_a_return_direct_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="return-direct",
        build=direct_agent,
        script=[WEATHER_SCRIPT[0], ModelReply.say("never asked for")],
        turns=["what is the weather in sf"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    assert plain.state["messages"][-1]["type"] == "tool"
    assert_same_run(plain, session)
