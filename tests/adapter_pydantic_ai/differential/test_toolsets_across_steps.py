"""Toolsets across the steps of a turn: what a plain run keeps from step to step.

* ``ctx.run_step``: function_toolset.py's ``conditions`` answers by it. A model step runs at
  the turn's step (its model responses so far, plus one), and a tool step at the step of the
  response that called it, as in one plain run.
* dynamic_toolset.py: a tool changes the deps (``toggle``) and ``@agent.toolset`` reads them in
  the next step; the tool it adds is announced to the model ("now available"), since the
  turn's run state keeps the tools its requests offered.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_pydantic_ai.differential import toolset_agents
from tests.adapter_pydantic_ai.differential.harness import Scenario, assert_same_run, run_both
from tests.adapter_pydantic_ai.differential.test_toolsets import offered, tool_results


async def test_conditions_by_run_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The docs' ``conditions`` tool, called in the run's first step and again in its second."""
    scenario = Scenario(
        name="run-step",
        build=toolset_agents.filtered_toolsets,
        script=[
            ModelReply.call(ScriptedToolCall("call_london", "weather_conditions", {"city": "London"})),
            ModelReply.call(ScriptedToolCall("call_paris", "weather_conditions", {"city": "Paris"})),
            ModelReply.say("Raining in London, sunny in Paris."),
        ],
        turns=["Is it raining in London? And in Paris?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [
        {"name": "conditions", "city": "London", "run_step": 1},
        {"name": "conditions", "city": "Paris", "run_step": 2},
    ]
    assert tool_results(plain.requests[""][2]) == ["It's raining", "It's sunny"]
    assert_same_run(plain, session)


async def test_dynamic_toolset_toggled_by_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """dynamic_toolset.py: ``toggle`` switches the deps, and the next step offers the other toolset."""
    scenario = Scenario(
        name="toggle",
        build=toolset_agents.dynamic_toolset,
        script=[
            ModelReply.call(ScriptedToolCall("call_toggle", "toggle", {})),
            ModelReply.say("Toggled."),
        ],
        turns=["Toggle the toolset"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert offered(plain.requests[""][0]) == [
        "toggle",
        "temperature_celsius",
        "temperature_fahrenheit",
        "conditions",
    ]
    assert offered(plain.requests[""][1]) == ["toggle", "now"]
    assert_same_run(plain, session)
