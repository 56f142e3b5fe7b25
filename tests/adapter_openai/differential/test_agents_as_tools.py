"""Agents as tools (issue 22, item 4): agent_patterns/agents_as_tools.py.

The sub-agent's model call is a model call of the run: the harness checks that every
model call of the session is a model step of its own, a sub-agent's too (the adapter
steps it, see the adapter README's "Agents as tools").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import failing_sub_agents, sdk_examples, wrapped_agent_tools
from tests.adapter_openai.differential.harness import (
    AgentBuilder,
    Run,
    Scenario,
    assert_same_run,
    failure_note,
    run_both,
)


async def test_a_translator_agent_as_a_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="agents-as-tools",
        build=sdk_examples.agents_as_tools,
        script=[
            ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Hello, world!"})),
            ModelReply.say("¡Hola, mundo!"),
            ModelReply.say("In Spanish: ¡Hola, mundo!"),
        ],
        turns=["Translate 'Hello, world!' to Spanish."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    assert [r["instructions"] for r in requests][1] == "You translate the user's message to Spanish"
    assert requests[2]["input"][-1]["output"] == "¡Hola, mundo!"
    assert plain.outputs == ["In Spanish: ¡Hola, mundo!"]
    assert_same_run(plain, session)


GLOSSARY_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Hello, world!"})),
    ModelReply.call(ScriptedToolCall("call_glossary", "lookup_glossary", {"word": "world"})),
    ModelReply.say("¡Hola, mundo!"),
    ModelReply.say("In Spanish: ¡Hola, mundo!"),
]


async def test_a_translator_with_its_own_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The sub-agent's tool call: in the session it should be a tool step of its own."""
    scenario = Scenario(
        name="agents-as-tools-glossary",
        build=sdk_examples.agents_as_tools_with_a_glossary,
        script=GLOSSARY_SCRIPT,
        turns=["Translate 'Hello, world!' to Spanish."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    assert len(requests) == 4
    assert requests[2]["input"][-1]["output"] == "world: mundo"
    assert plain.tool_runs == [{"name": "lookup_glossary", "word": "world"}]
    assert_same_run(plain, session)


NESTED_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Hello, world!"})),
    ModelReply.call(ScriptedToolCall("call_ed", "ask_editor", {"input": "world"})),
    ModelReply.call(ScriptedToolCall("call_glossary", "lookup_glossary", {"word": "world"})),
    ModelReply.say("mundo"),
    ModelReply.say("¡Hola, mundo!"),
    ModelReply.say("In Spanish: ¡Hola, mundo!"),
]


async def test_a_translator_that_asks_an_editor_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Nested agents as tools: the editor's model calls and its tool call are steps too."""
    scenario = Scenario(
        name="agents-as-tools-nested",
        build=sdk_examples.agents_as_tools_nested,
        script=NESTED_SCRIPT,
        turns=["Translate 'Hello, world!' to Spanish."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    assert len(requests) == 6
    assert requests[2]["instructions"] == "You check translations against the house glossary"
    assert requests[3]["input"][-1]["output"] == "world: mundo"
    assert requests[4]["input"][-1]["output"] == "mundo"
    assert requests[5]["input"][-1]["output"] == "¡Hola, mundo!"
    assert plain.tool_runs == [{"name": "lookup_glossary", "word": "world"}]
    assert_same_run(plain, session)


# -- an error inside the sub-agent's run: the failure function's text is the tool's answer --

MAX_TURNS_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Hello, world!"})),
    ModelReply.call(ScriptedToolCall("call_glossary", "lookup_glossary", {"word": "world"})),
    ModelReply.say("The translator failed."),
]

MISSING_TOOL_SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Hello, world!"})),
    ModelReply.call(ScriptedToolCall("call_web", "search_web", {"query": "mundo"})),
    ModelReply.say("The translator failed."),
]


async def _failing(
    name: str,
    build: AgentBuilder,
    script: list[ModelReply],
    temporal_address: str,
    model_server: ScriptedModelServer,
    tmp_path: Path,
) -> tuple[Run, Run]:
    scenario = Scenario(
        name=name, build=build, script=script, turns=["Translate 'Hello, world!' to Spanish."]
    )
    return await run_both(scenario, model_server, temporal_address, tmp_path)


async def test_a_sub_agent_over_its_max_turns_answers_the_default_failure_text(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, session = await _failing(
        "sub-max-turns-default",
        failing_sub_agents.failing_translator_default_failure,
        MAX_TURNS_SCRIPT,
        temporal_address,
        model_server,
        tmp_path,
    )
    requests = plain.requests[""]
    assert len(requests) == 3
    assert requests[2]["input"][-1]["output"] == "An error occurred while running the tool. Please try again."
    assert plain.tool_runs == [{"name": "lookup_glossary", "word": "world"}]
    assert plain.outputs == ["The translator failed."]
    assert_same_run(plain, session)


async def test_a_sub_agent_over_its_max_turns_answers_a_custom_failure_text(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, session = await _failing(
        "sub-max-turns-custom",
        failing_sub_agents.failing_translator_custom_failure,
        MAX_TURNS_SCRIPT,
        temporal_address,
        model_server,
        tmp_path,
    )
    requests = plain.requests[""]
    assert requests[2]["input"][-1]["output"] == (
        "translate_to_spanish failed: MaxTurnsExceeded: Max turns (1) exceeded"
    )
    assert_same_run(plain, session)


async def test_a_sub_agent_calling_a_tool_it_lacks_answers_the_default_failure_text(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, session = await _failing(
        "sub-missing-tool-default",
        failing_sub_agents.failing_translator_default_failure,
        MISSING_TOOL_SCRIPT,
        temporal_address,
        model_server,
        tmp_path,
    )
    requests = plain.requests[""]
    assert len(requests) == 3
    assert requests[2]["input"][-1]["output"] == "An error occurred while running the tool. Please try again."
    assert plain.tool_runs == []
    assert_same_run(plain, session)


async def test_a_sub_agent_calling_a_tool_it_lacks_answers_a_custom_failure_text(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, session = await _failing(
        "sub-missing-tool-custom",
        failing_sub_agents.failing_translator_custom_failure,
        MISSING_TOOL_SCRIPT,
        temporal_address,
        model_server,
        tmp_path,
    )
    requests = plain.requests[""]
    assert requests[2]["input"][-1]["output"] == (
        "translate_to_spanish failed: ModelBehaviorError: Tool search_web not found in agent spanish_agent"
    )
    assert_same_run(plain, session)


async def test_without_a_failure_function_the_sub_agents_error_fails_the_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, session = await _failing(
        "sub-max-turns-none",
        failing_sub_agents.failing_translator_no_failure_function,
        MAX_TURNS_SCRIPT[:2],
        temporal_address,
        model_server,
        tmp_path,
    )
    assert plain.outputs == [None]
    assert plain.errors[0] is not None and "Max turns (1) exceeded" in plain.errors[0]
    assert plain.errors == ["MaxTurnsExceeded: Max turns (1) exceeded"]
    # Deliberate (adapter README, "Extension points and deliberate differences"): the SDK's
    # type and text, after the core's words for a turn the model step ended.
    assert session.errors == ["model call failed: TurnAborted: MaxTurnsExceeded: Max turns (1) exceeded"]
    # Deliberate: the failed turn's tool calls ran (the agent tool's own step records its start).
    note = failure_note(
        '- translate_to_spanish {"input":"Hello, world!"} -> succeeded: '
        "approved; the agent runs as the next steps of this turn",
        '- lookup_glossary {"word":"world"} -> succeeded: world: mundo',
    )
    assert_same_run(plain, session, session_history=[*plain.history, note])


@pytest.mark.parametrize(
    "build", [wrapped_agent_tools.with_wraps, wrapped_agent_tools.bare], ids=["wraps", "bare"]
)
async def test_a_wrapped_agent_tool_runs_whole_with_its_wrapper(
    build: AgentBuilder, temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """A wrapper on the agent tool's ``on_invoke_tool`` (tracing, logging) runs once, around
    the nested run, as in plain. The adapter cannot step the sub-agent without skipping the
    wrapper, so the tool runs whole in its tool step (a documented difference: its sub-agent's
    model call is inside that step; the adapter logs a warning saying so)."""
    scenario = Scenario(
        name="agents-as-tools-wrapped",
        build=build,
        script=[
            ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Hello, world!"})),
            ModelReply.say("In Spanish: ¡Hola, mundo!"),
        ],
        side_scripts={"-spanish": [ModelReply.say("¡Hola, mundo!")]},
        turns=["Translate 'Hello, world!' to Spanish."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.code_runs == [
        {"kind": "callback", "name": "wrapper", "tool": "translate_to_spanish", "phase": "start"},
        {
            "kind": "callback",
            "name": "wrapper",
            "tool": "translate_to_spanish",
            "phase": "end",
            "output": "¡Hola, mundo!",
        },
    ]
    assert plain.requests[""][1]["input"][-1]["output"] == "¡Hola, mundo!"
    # Two model steps for the orchestrator; the translator's call ran inside the tool step.
    assert session.model_attempts == 2
    assert_same_run(plain, session)
