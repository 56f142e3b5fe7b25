"""Graph shapes with a SIGKILL of the worker inside a tool (issue 21, item 4, "Durability").

As `test_crash.py`: the plain run, then the session on worker children, one killed while
the tool ``crash_in`` runs for the first time. The tool runs inside a subgraph here: an
agent added as a node, and an expert a supervisor calls from a node function after two
handoffs (``Command(graph=Command.PARENT)``). Its effect happens once, after the restart,
its step's last attempt is 2, and the rest equals the plain run.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_langgraph.differential.crash import distinct_tool_runs
from tests.adapter_langgraph.differential.harness import Scenario, assert_same_run
from tests.adapter_langgraph.differential.test_crash import assert_crash_repeated_only_the_effect, crashed
from tests.adapter_langgraph.differential.test_graph_shapes import agent_as_subgraph
from tests.adapter_langgraph.differential.test_supervisor import (
    SUPERVISOR_SCRIPT,
    SUPERVISOR_TURN,
    supervisor_with_its_handoff_tools,
)


async def test_agent_in_a_subgraph_sigkill_in_its_tool(
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
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert plain.state["greeted"] is True
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_sf")


async def test_supervisor_sigkill_in_an_experts_tool_after_two_handoffs(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="supervisor",
        build=supervisor_with_its_handoff_tools,
        script=SUPERVISOR_SCRIPT,
        turns=[SUPERVISOR_TURN],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="add")

    assert [run["name"] for run in plain.tool_runs] == ["web_search", "add"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_add")
