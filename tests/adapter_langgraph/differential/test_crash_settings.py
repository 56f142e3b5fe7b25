"""Settings, handoffs and a swarm with a SIGKILL of the worker inside a tool (issue 21, "Durability").

As `test_crash.py`: the plain run, then the session on worker children, one killed while
the tool ``crash_in`` runs for the first time. Here the killed step is in a later turn or
after a handoff, so the next worker must rebuild everything the step depends on from what
the session keeps: the per-turn settings (``configurable`` and the runtime context), the
thread carried from the turn before (a swarm's ``active_agent``), and the subgraph a
``Command.PARENT`` handoff moved to. The effect happens once, after the restart, the step's
last attempt is 2, and the rest equals the plain run.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_langgraph.differential.crash import distinct_tool_runs
from tests.adapter_langgraph.differential.harness import Scenario, assert_same_run
from tests.adapter_langgraph.differential.test_crash import assert_crash_repeated_only_the_effect, crashed
from tests.adapter_langgraph.differential.test_handoffs import (
    HANDOFF_SCRIPT,
    HANDOFF_TURN,
    flight_and_hotel_assistants,
)
from tests.adapter_langgraph.differential.test_runtime_context import context_graph
from tests.adapter_langgraph.differential.test_swarm import SWARM_SCRIPT, SWARM_TURNS, alice_and_bob


async def test_runtime_context_sigkill_in_a_tool_of_the_second_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="runtime-context",
        build=context_graph,
        script=[
            ModelReply.call(ScriptedToolCall("call_lookup", "lookup_user", {})),
            ModelReply.say("Found your account."),
            ModelReply.call(ScriptedToolCall("call_greet", "greet", {})),
            ModelReply.say("Greeted."),
        ],
        turns=["who am I?", "greet me"],
        configurable={"user_id": "user_123"},
        context={"user_name": "Ada"},
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="greet")

    assert {"name": "greet", "user_name": "Ada"} in plain.tool_runs
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-2/tool/call_greet")


async def test_handoff_sigkill_in_the_other_agents_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="handoffs", build=flight_and_hotel_assistants, script=HANDOFF_SCRIPT, turns=[HANDOFF_TURN]
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="book_hotel")

    assert [run["name"] for run in plain.tool_runs] == ["book_flight", "book_hotel"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_hotel")


async def test_swarm_sigkill_in_a_tool_after_the_active_agent_carried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(name="swarm", build=alice_and_bob, script=SWARM_SCRIPT, turns=SWARM_TURNS)
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="add")

    assert plain.state["active_agent"] == "Alice"
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-2/tool/call_add")
