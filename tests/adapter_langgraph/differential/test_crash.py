"""The differential cases again, with a SIGKILL of the worker inside a tool (issue 21, "Durability").

Each test runs the plain graph, then the session on worker children, one of which is
killed while the tool ``crash_in`` runs for the first time. The tool's effect happens once,
in the second worker (a read is run again, by its effect), that step's final attempt is 2,
and everything else equals the plain run: requests, final state, and which tool runs
happened (`distinct_tool_runs`: a parallel read that finished in the killed worker may run
again, as its effect allows).
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_langgraph.conftest import unique
from tests.adapter_langgraph.differential.crash import CrashedRun, distinct_tool_runs, run_session_with_crash
from tests.adapter_langgraph.differential.harness import Review, Run, Scenario, assert_same_run, run_plain
from tests.adapter_langgraph.differential.test_graph_tools import LOOK_UP, user_agent
from tests.adapter_langgraph.differential.test_middleware import BOOK, WEATHER, hitl_agent
from tests.adapter_langgraph.differential.test_prebuilt_agents import WEATHER_SCRIPT, langchain_agent
from tests.adapter_langgraph.differential.test_state_keys import trip_graph
from tests.adapter_langgraph.differential.test_tool_nodes import basic_tool_node_graph, tool_node_graph

WEATHER_AND_FLIGHTS = [
    ModelReply.call(
        ScriptedToolCall("call_w", "get_weather", {"city": "sf"}),
        ScriptedToolCall("call_f", "search_flights", {"destination": "sf"}),
    ),
    ModelReply.say("Sunny, and flight SF101 costs 120."),
]


async def crashed(
    scenario: Scenario,
    model_server: ScriptedModelServer,
    temporal_address: str,
    tmp_path: Path,
    *,
    crash_in: str,
) -> tuple[Run, CrashedRun]:
    key = unique(f"lg-crash-{scenario.name}")
    plain = await run_plain(scenario, model_server, f"{key}-plain", tmp_path / "plain")
    session = await run_session_with_crash(
        scenario, model_server, f"{key}-session", tmp_path / "session", temporal_address, crash_in=crash_in
    )
    return plain, session


def assert_crash_repeated_only_the_effect(session: CrashedRun, step: str) -> None:
    assert session.effect_pids == [session.finished_pid], "the effect happened once, after the restart"
    assert session.steps.get(step) == (2, "completed"), session.steps


async def test_create_agent_sigkill_in_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="create-agent", build=langchain_agent, script=WEATHER_SCRIPT, turns=["weather in sf?"]
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_sf")


async def test_tools_condition_sigkill_in_one_of_two_parallel_tools(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tools-condition",
        build=tool_node_graph,
        script=WEATHER_AND_FLIGHTS,
        turns=["weather and flights?"],
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="search_flights"
    )

    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_f")


async def test_custom_tool_node_sigkill_in_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="basic-tool-node",
        build=basic_tool_node_graph,
        script=WEATHER_AND_FLIGHTS,
        turns=["weather and flights?"],
        pass_tools=True,
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_w")


async def test_command_update_sigkill_in_the_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="command-update", build=user_agent, script=[LOOK_UP, ModelReply.say("Found you.")], turns=["hi!"]
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="update_user_info"
    )

    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_info")


async def test_state_keys_sigkill_in_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="state-keys",
        build=trip_graph,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("Sunny in sf."),
            ModelReply.say("Bye, Ada."),
        ],
        turns=["weather in sf?", "bye"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_sf")


async def test_human_in_the_loop_sigkill_in_the_approved_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hitl-approve",
        build=hitl_agent,
        script=[ModelReply.call(BOOK, WEATHER), ModelReply.say("Booked; sunny in nyc.")],
        turns=["book the McKittrick Hotel and check the weather in nyc"],
        reviews=[Review("approve")],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_weather")
