"""Lifecycle hooks (issue 39, item 6): basic/lifecycle_example.py and agent_lifecycle_example.py.

Every hook fires as often as in the plain run, in the same order around the tools' runs:
the start hooks where the plain run starts or resumes (not again in every model step that
resumes the run), the tool hooks around the real tool in its tool step, the model hooks once
per model call. The harness compares every hook call (`Run.code_runs`) in order; each test
also counts the plain run's own, so both runs cannot agree on a wrong count.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import lifecycle_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both

GENERATE = "Generate a random number between 0 and 250."
SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_random", "random_number", {"max": 250})),
    ModelReply.call(ScriptedToolCall("call_handoff", "transfer_to_multiply_agent", {})),
    ModelReply.call(ScriptedToolCall("call_multiply", "multiply_by_two", {"x": 37})),
    ModelReply.say(json.dumps({"number": 74})),
]


def hooks(runs: list[dict[str, Any]]) -> list[str]:
    return [str(run["name"]) for run in runs if run["kind"] == "hook"]


async def test_the_run_and_agent_hooks_of_lifecycle_example(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="lifecycle",
        build=lifecycle_examples.lifecycle,
        script=[*SCRIPT, ModelReply.say(json.dumps({"number": 74}))],
        turns=[GENERATE, "And again?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # The example's printed sequence (its docstring), then turn 2 at the multiply agent; the
    # agent's own model hooks once per model call, as the run's.
    counts = Counter(hooks(plain.code_runs))
    assert counts["agent.on_llm_start"] == counts["agent.on_llm_end"] == counts["run.on_llm_start"] == 5
    assert [name for name in hooks(plain.code_runs) if not name.startswith("agent.on_llm")] == [
        "run.on_agent_start",
        "agent.on_start",
        "run.on_llm_start",
        "run.on_llm_end",
        "run.on_tool_start",
        "run.on_tool_end",
        "run.on_llm_start",
        "run.on_llm_end",
        "run.on_handoff",
        "run.on_agent_start",
        "agent.on_start",
        "run.on_llm_start",
        "run.on_llm_end",
        "run.on_tool_start",
        "run.on_tool_end",
        "run.on_llm_start",
        "run.on_llm_end",
        "run.on_agent_end",
        "agent.on_end",
        "run.on_agent_start",
        "agent.on_start",
        "run.on_llm_start",
        "run.on_llm_end",
        "run.on_agent_end",
        "agent.on_end",
    ]
    # The session fired each as often: 3 run starts (two turns and a handoff), not one per model step.
    assert Counter(hooks(session.code_runs))["run.on_agent_start"] == 3
    assert plain.outputs == [{"number": 74}, {"number": 74}]
    assert_same_run(plain, session)


async def test_each_agents_own_hooks_of_agent_lifecycle_example(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="agent-lifecycle", build=lifecycle_examples.agent_lifecycle, script=SCRIPT, turns=[GENERATE]
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert hooks(plain.code_runs) == [
        "Start Agent.on_start",
        "Start Agent.on_tool_start",
        "Start Agent.on_tool_end",
        "Start Agent.on_handoff",
        "Multiply Agent.on_start",
        "Multiply Agent.on_tool_start",
        "Multiply Agent.on_tool_end",
        "Multiply Agent.on_end",
    ]
    assert_same_run(plain, session)


async def test_a_resume_after_an_approval_fires_the_start_hooks_again_as_plain_does(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``multiply_by_two(needs_approval=True)``: plain's run stops for the person and is resumed
    from its state, and the SDK fires the start hooks of a resumed run; so does the session,
    there and only there."""
    scenario = Scenario(
        name="lifecycle-approved",
        build=lifecycle_examples.lifecycle_approved,
        script=SCRIPT,
        turns=[GENERATE],
        approvals=[True],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    starts = [run["agent"] for run in plain.code_runs if run["name"] == "run.on_agent_start"]
    assert starts == ["Start Agent", "Multiply Agent", "Multiply Agent"]
    assert Counter(hooks(plain.code_runs))["run.on_tool_start"] == 2
    assert_same_run(plain, session)


async def test_the_hooks_around_an_agent_used_as_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The run's ``on_tool_start`` before the nested run and ``on_tool_end`` after it; the
    nested run's own hooks (``as_tool(hooks=...)``) for the sub-agent, its model calls and its
    tool, which get the model's call ID."""
    scenario = Scenario(
        name="hooks-agent-tool",
        build=lifecycle_examples.agents_as_tools_hooked,
        script=[
            ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Hello, world!"})),
            ModelReply.call(ScriptedToolCall("call_glossary", "lookup_glossary", {"word": "world"})),
            ModelReply.say("¡Hola, mundo!"),
            ModelReply.say("In Spanish: ¡Hola, mundo!"),
        ],
        turns=["Translate 'Hello, world!' to Spanish."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [run["name"] for run in plain.code_runs] == [
        "run.on_agent_start",
        "run.on_llm_start",
        "run.on_llm_end",
        "run.on_tool_start",
        "nested.on_agent_start",
        "nested.on_llm_start",
        "nested.on_llm_end",
        "nested.on_tool_start",
        "lookup_glossary",
        "nested.on_tool_end",
        "nested.on_llm_start",
        "nested.on_llm_end",
        "nested.on_agent_end",
        "run.on_tool_end",
        "run.on_llm_start",
        "run.on_llm_end",
        "run.on_agent_end",
    ]
    glossary_start = next(run for run in plain.code_runs if run["name"] == "nested.on_tool_start")
    assert glossary_start["call_id"] == "call_glossary"
    assert_same_run(plain, session)
