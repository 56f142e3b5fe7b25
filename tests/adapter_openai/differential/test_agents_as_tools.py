"""Agents as tools (issue 22, item 4): agent_patterns/agents_as_tools.py.

The sub-agent's model call is a model call of the run: the harness checks that every
model call of the session is a model step of its own, a sub-agent's too (the adapter
steps it, see the adapter README's "Agents as tools").
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.testing import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both


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
