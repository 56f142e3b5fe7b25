"""Tools run in the graph's own tool node, one call per tool step, as they do in plain LangGraph.

Each graph also runs plainly (``graph.ainvoke`` with a checkpointer) against the same
scripted replies; the model requests and the final state must match the session's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from sessionflow import AgentSessionOptions
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.temporal import read_step_history
from sessionflow.testing import InvocationLog
from sessionflow_langgraph import langgraph_session_flow
from tests.adapter_langgraph.conftest import serving, turn_ended, unique
from tests.adapter_langgraph.flows import FAST
from tests.adapter_langgraph.graphs_from_docs import (
    basic_tool_node_graph,
    goto_graph,
    react_agent,
    two_tool_nodes_graph,
    user_info_graph,
)
from tests.adapter_langgraph.plain import SETTINGS, conversation, plain_run


def model(server: ScriptedModelServer, key: str) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-test", base_url=server.base_url(key), api_key=SecretStr("k"), max_retries=0)


def _weather_tool(function: Any) -> BaseTool:
    weather = StructuredTool.from_function(function)
    weather.metadata = {"sessionflow_effect": "read"}
    return weather


def runs(tmp_path: Path, name: str) -> list[dict[str, Any]]:
    return InvocationLog(tmp_path / "invocations.jsonl").entries("tool", name)


async def test_a_custom_tool_node_runs_with_its_post_processing_one_call_per_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key, plain = unique("lg-basic"), unique("lg-basic-plain")
    replies = [
        ModelReply.call(
            ScriptedToolCall("c1", "weather", {"city": "Rome"}),
            ScriptedToolCall("c2", "weather", {"city": "Oslo"}),
        ),
        ModelReply.say("Both sunny."),
    ]
    model_server.script(key, replies)
    model_server.script(plain, replies)
    builder, tools = basic_tool_node_graph(model(model_server, key), tmp_path)
    flow = langgraph_session_flow(
        flow_type=key, graph=builder, tools=tools, options=AgentSessionOptions(timings=FAST)
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Weather in Rome and Oslo?")
        snapshot = await turn_ended(sessions, key)
        steps = await read_step_history(sessions.client, key)
    plain_builder, _ = basic_tool_node_graph(model(model_server, plain), tmp_path / "plain")
    await plain_run(plain_builder, ["Weather in Rome and Oslo?"])

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    requests = model_server.requests(key)
    # The node's own json.dumps reached the model, and each call ran once, in its own step.
    assert requests[1].tool_results() == {
        "c1": json.dumps({"city": "Rome", "sky": "sunny"}),
        "c2": json.dumps({"city": "Oslo", "sky": "sunny"}),
    }
    assert sorted(r["city"] for r in runs(tmp_path, "weather")) == ["Oslo", "Rome"]
    assert [s.step_type for s in steps] == [
        "sessionflow.RunModel",
        "sessionflow.CallTool",
        "sessionflow.CallTool",
        "sessionflow.RunModel",
    ]
    assert [conversation(r) for r in requests] == [conversation(r) for r in model_server.requests(plain)]


async def test_command_update_injected_state_config_and_context_match_plain_langgraph_across_turns(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key, plain = unique("lg-user"), unique("lg-user-plain")
    replies = [
        ModelReply.call(ScriptedToolCall("c1", "lookup_user", {})),
        ModelReply.call(ScriptedToolCall("c2", "greet", {})),
        ModelReply.say("Done."),
        ModelReply.say("Still Bob."),
    ]
    model_server.script(key, replies)
    model_server.script(plain, replies)
    builder = user_info_graph(model(model_server, key), tmp_path)
    flow = langgraph_session_flow(flow_type=key, graph=builder, options=AgentSessionOptions(timings=FAST))
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "who am I?", settings=SETTINGS)
        await turn_ended(sessions, key)
        await sessions.send_user_message(key, "and now?", settings=SETTINGS)
        snapshot = await turn_ended(sessions, key, turns=2)
    expected = await plain_run(
        user_info_graph(model(model_server, plain), tmp_path / "plain"), ["who am I?", "and now?"], SETTINGS
    )

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    requests = model_server.requests(key)
    assert len(requests) == 4
    # Command(update=...) set user_name through the state; its ToolMessage reached the model.
    assert requests[1].tool_results() == {"c1": "Successfully looked up user information"}
    assert requests[1].saw("user_name=Bob visits=1 context=Ada")
    # InjectedState saw the update, get_runtime() the session's context.
    assert requests[2].tool_results() == {
        "c1": "Successfully looked up user information",
        "c2": "Hello Bob! (context says Ada)",
    }
    # The thread's state carried into turn 2: user_name, and visits through its reducer.
    assert requests[3].saw("user_name=Bob visits=3 context=Ada")
    assert [r["user_id"] for r in runs(tmp_path, "lookup_user")] == ["user_123"]
    assert [(r["seen"], r["context"]) for r in runs(tmp_path, "greet")] == [("Bob", "Ada")]
    assert [conversation(r) for r in requests] == [conversation(r) for r in model_server.requests(plain)]
    assert expected["user_name"] == "Bob" and expected["visits"] == 4
    # The snapshot shows the thread's state as plain LangGraph's get_state() does.
    assert snapshot.framework_state == {"user_name": expected["user_name"], "visits": expected["visits"]}


async def test_command_goto_from_a_tool_ends_the_run_at_its_node(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-goto")
    model_server.script(
        key, [ModelReply.call(ScriptedToolCall("c1", "submit", {"answer": "42"})), ModelReply.say("spare")]
    )
    flow = langgraph_session_flow(
        flow_type=key,
        graph=goto_graph(model(model_server, key), tmp_path),
        options=AgentSessionOptions(timings=FAST),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "answer")
        snapshot = await turn_ended(sessions, key)

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    # goto="finish" went to `finish`, not back to the model: one request.
    assert len(model_server.requests(key)) == 1
    assert [m.message.text or "" for m in snapshot.messages] == ["answer", "", "submitted 42", "Final: 42"]
    assert [r["answer"] for r in runs(tmp_path, "submit")] == ["42"]
    assert snapshot.framework_state == {"final_response": "42"}


async def test_every_tool_node_of_the_graph_runs_its_calls(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-two-nodes")
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "find", {"query": "q"})),
            ModelReply.call(ScriptedToolCall("c2", "store", {"doc": "d"})),
            ModelReply.say("Stored."),
        ],
    )
    flow = langgraph_session_flow(
        flow_type=key,
        graph=two_tool_nodes_graph(model(model_server, key), tmp_path),
        options=AgentSessionOptions(timings=FAST),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "find and store")
        snapshot = await turn_ended(sessions, key)

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    requests = model_server.requests(key)
    assert requests[1].tool_results() == {"c1": "found q"}
    assert requests[2].tool_results() == {"c1": "found q", "c2": "stored d"}
    assert len(runs(tmp_path, "find")) == 1 and len(runs(tmp_path, "store")) == 1


async def test_create_react_agent_runs_each_call_of_its_send_fan_out_in_its_tool_node(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key, plain = unique("lg-react"), unique("lg-react-plain")
    replies = [
        ModelReply.call(
            ScriptedToolCall("c1", "get_weather", {"city": "sf"}),
            ScriptedToolCall("c2", "get_weather", {"city": "nyc"}),
        ),
        ModelReply.say("sf is sunny, nyc is cloudy."),
    ]
    model_server.script(key, replies)
    model_server.script(plain, replies)

    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        InvocationLog(tmp_path / "invocations.jsonl").record("tool", "get_weather", city=city)
        return "It's always sunny in sf" if city == "sf" else f"It might be cloudy in {city}"

    weather = _weather_tool(get_weather)
    flow = langgraph_session_flow(
        flow_type=key,
        graph=react_agent(model(model_server, key), [weather]),
        options=AgentSessionOptions(timings=FAST),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "weather in sf and nyc?")
        snapshot = await turn_ended(sessions, key)
    plain_agent = react_agent(model(model_server, plain), [weather], checkpointer=InMemorySaver())
    expected = await plain_agent.ainvoke(  # pyright: ignore[reportUnknownMemberType]
        {"messages": [HumanMessage(content="weather in sf and nyc?")]}, {"configurable": {"thread_id": "t"}}
    )

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    requests = model_server.requests(key)
    assert requests[1].tool_results() == {"c1": "It's always sunny in sf", "c2": "It might be cloudy in nyc"}
    # Each Send ran in its own tool step: twice for the session, twice for the plain run.
    assert sorted(r["city"] for r in runs(tmp_path, "get_weather")) == ["nyc", "nyc", "sf", "sf"]
    assert [conversation(r) for r in requests] == [conversation(r) for r in model_server.requests(plain)]
    assert [m.message.text or "" for m in snapshot.messages] == [(m.text or "") for m in expected["messages"]]
