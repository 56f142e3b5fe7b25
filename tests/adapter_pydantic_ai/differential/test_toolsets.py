"""Differential tests of Pydantic AI's toolsets and per-step tool preparation (toolset_agents.py).

Each agent is copied from Pydantic AI's toolsets and tools-advanced docs; the session must
offer the same tools, call the same (renamed, prefixed) ones and show the model the same
results as plain ``agent.run``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_pydantic_ai.differential import run_toolsets, toolset_agents
from tests.adapter_pydantic_ai.differential.harness import (
    Run,
    Scenario,
    assert_same_run,
    run_both,
    run_plain,
    run_session,
    unique,
)


def offered(request: dict[str, Any]) -> list[str]:
    """The names of the tools a request offered the model."""
    return [t["function"]["name"] for t in request.get("tools", [])]


def tool_results(request: dict[str, Any]) -> list[str]:
    """The tool results a request carried, as the model saw them."""
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_prefixed_combined_filtered_toolsets(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """filtered_toolset.py: prefixed toolsets, combined, filtered; the model calls a prefixed name."""
    scenario = Scenario(
        name="filtered",
        build=toolset_agents.filtered_toolsets,
        script=[
            ModelReply.call(ScriptedToolCall("call_temp", "weather_temperature_celsius", {"city": "London"})),
            ModelReply.say("It is 21 °C in London."),
        ],
        turns=["How warm is it in London?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["It is 21 °C in London."]
    assert offered(plain.requests[""][0]) == [
        "weather_temperature_celsius",
        "weather_conditions",
        "datetime_now",
    ]
    assert plain.tool_runs == [{"name": "temperature_celsius", "city": "London"}]
    assert tool_results(plain.requests[""][1]) == ["21.0"]
    assert_same_run(plain, session)


async def test_renamed_and_prepared_toolsets(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """renamed_toolset.py with prepared_toolset.py's descriptions: the model calls the new names."""
    scenario = Scenario(
        name="renamed",
        build=toolset_agents.prepared_renamed_toolsets,
        script=[
            ModelReply.call(
                ScriptedToolCall("call_c", "temperature_celsius", {"city": "Paris"}),
                ScriptedToolCall("call_f", "temperature_fahrenheit", {"city": "Paris"}),
            ),
            ModelReply.say("It is 21 °C, or 69.8 °F, in Paris."),
        ],
        turns=["Temperature in Paris, in both scales?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    first = plain.requests[""][0]
    assert offered(first) == [
        "temperature_celsius",
        "temperature_fahrenheit",
        "weather_conditions",
        "current_time",
    ]
    assert [t["function"].get("description") for t in first["tools"]] == [
        "Get the temperature in degrees Celsius",
        "Get the temperature in degrees Fahrenheit",
        "Get the current weather conditions",
        "Get the current time",
    ]
    # Pydantic AI runs the two calls of one response at once: either may start first.
    assert sorted(plain.tool_runs, key=lambda run: run["name"]) == [
        {"name": "temperature_celsius", "city": "Paris"},
        {"name": "temperature_fahrenheit", "city": "Paris"},
    ]
    assert tool_results(plain.requests[""][1]) == ["21.0", "69.8"]
    assert plain.outputs == ["It is 21 °C, or 69.8 °F, in Paris."]
    assert_same_run(plain, session)


@pytest.mark.parametrize("deps", [42, 41])
async def test_tool_prepare_by_deps(
    deps: int, temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """tool_only_if_42.py and customize_name.py: ``prepare`` hides a tool and rewrites a schema by deps."""
    calls = [ScriptedToolCall("call_greet", "greet", {"name": "Arthur"})]
    if deps == 42:
        calls.append(ScriptedToolCall("call_hh", "hitchhiker", {"answer": "a"}))
    scenario = Scenario(
        name=f"prepare-{deps}",
        build=partial(toolset_agents.tool_prepare, deps=deps),
        script=[ModelReply.call(*calls), ModelReply.say("Done.")],
        turns=["testing..."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    first = plain.requests[""][0]
    who = "human" if deps == 42 else "machine"
    assert offered(first) == (["greet", "hitchhiker"] if deps == 42 else ["greet"])
    assert first["tools"][0]["function"]["parameters"]["properties"]["name"]["description"] == (
        f"Name of the {who} to greet."
    )
    assert tool_results(plain.requests[""][1]) == (
        ["hello Arthur", "42 a"] if deps == 42 else ["hello Arthur"]
    )
    # Each prepare function runs once per request in plain (run steps 1 and 2) ...
    assert plain.hook_runs == [
        {"name": n, "run_step": s} for s in (1, 2) for n in ("prepare_greet", "only_if_42")
    ]
    # ... and, documented, again in each tool step (twice) and once more in the step that
    # resumes with the results, each a Pydantic AI run that resolves the step's tools.
    assert_prepared_as_documented(plain, session, functions=2, tool_steps=len(calls))
    assert_same_run(replace(plain, hook_runs=[]), replace(session, hook_runs=[]))


@pytest.mark.parametrize("deps", [False, True])
async def test_agent_wide_prepare_tools_by_deps(
    deps: bool, temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """agent_prepare_tools_filter_out.py: the ``PrepareTools`` capability drops a tool by deps."""
    call = (
        ScriptedToolCall("call_answer", "answer", {"question": "potato?"})
        if deps
        else ScriptedToolCall("call_potato", "launch_potato", {"target": "the moon"})
    )
    scenario = Scenario(
        name=f"prepare-tools-{str(deps).lower()}",
        build=partial(toolset_agents.prepare_tools_filter_out, deps=deps),
        script=[ModelReply.call(call), ModelReply.say("Done.")],
        turns=["testing..."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert offered(plain.requests[""][0]) == (["answer"] if deps else ["launch_potato", "answer"])
    assert [r["name"] for r in plain.tool_runs] == (["answer"] if deps else ["launch_potato"])
    assert plain.hook_runs == [{"name": "filter_out_tools_by_name", "run_step": s} for s in (1, 2)]
    assert_prepared_as_documented(plain, session, functions=1, tool_steps=1)
    assert_same_run(replace(plain, hook_runs=[]), replace(session, hook_runs=[]))


def assert_prepared_as_documented(plain: Run, session: Run, *, functions: int, tool_steps: int) -> None:
    """The session ran each prepare function as plain did (once per request), plus twice in
    each tool step and once more in the model step that resumes with the tools' results."""
    plain_runs, session_runs = Counter(_calls(plain)), Counter(_calls(session))
    assert plain_runs - session_runs == Counter(), "every call plain made, the session made"
    extra = session_runs - plain_runs
    assert sum(extra.values()) == functions * (2 * tool_steps + 1), extra


def _calls(run: Run) -> list[str]:
    return [f"{h['name']}@{h['run_step']}" for h in run.hook_runs]


async def test_toolsets_given_at_run_time(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """toolsets.py: ``agent.run(toolsets=[extra_toolset])`` against the flow's ``toolsets=[extra_toolset]``."""
    scenario = Scenario(
        name="run-toolsets",
        build=run_toolsets.plain_run_toolsets,
        script=[
            ModelReply.call(
                ScriptedToolCall("call_agent", "agent_tool", {}),
                ScriptedToolCall("call_extra", "extra_tool", {}),
            ),
            ModelReply.say("Both tools answered."),
        ],
        turns=["What tools are available?"],
    )
    key = unique("pai-diff-run-toolsets")
    plain = await run_plain(scenario, model_server, f"{key}-plain", tmp_path)
    session_scenario = replace(scenario, build=run_toolsets.session_run_toolsets)
    session = await run_session(session_scenario, model_server, f"{key}-session", tmp_path, temporal_address)

    assert offered(plain.requests[""][0]) == ["agent_tool", "extra_tool"]
    assert tool_results(plain.requests[""][1]) == [
        "I'm registered directly on the agent",
        "I'm passed as an extra tool for a specific run",
    ]
    # The two calls of one response run at once in the plain framework, so they finish in either order.
    assert sorted(r["name"] for r in plain.tool_runs) == ["agent_tool", "extra_tool"]
    assert_same_run(plain, session)
