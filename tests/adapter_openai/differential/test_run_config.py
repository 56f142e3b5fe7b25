"""Run settings (issue 22, item 7): `RunConfig` and the SDK's `Session` memory.

The run config (model provider, model settings, tracing off) is given to both runs alike;
the session's stored messages are the conversation's memory, so a session run must send
what a plain run with `SQLiteSession` sends, call by call.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both


async def test_a_run_configs_model_provider_and_model_settings(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """model_providers/custom_example_provider.py, with model settings in the run config."""
    haiku = "Tokyo sun is bright,\nno cloud above the tower,\nthe day is open."
    scenario = Scenario(
        name="run-config",
        build=sdk_examples.custom_provider,
        script=[
            ModelReply.call(ScriptedToolCall("call_tokyo", "get_weather", {"city": "Tokyo"})),
            ModelReply.say(haiku),
        ],
        turns=["What's the weather in Tokyo?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    assert len(requests) == 2
    for request in requests:
        assert (request["temperature"], request["top_p"]) == (0.3, 0.9)
        assert request["max_output_tokens"] == 200
        assert request["metadata"] == {"example": "provider"}
    assert plain.tool_runs == [{"name": "get_weather", "city": "Tokyo"}]
    assert plain.outputs == [haiku]
    assert_same_run(plain, session)


async def test_the_sessions_messages_are_the_memory_a_sqlite_session_keeps(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """memory/sqlite_session_example.py: three questions, each a follow-up of the last."""
    scenario = Scenario(
        name="sqlite-memory",
        build=sdk_examples.sqlite_memory,
        script=[
            ModelReply.say("San Francisco."),
            ModelReply.say("California."),
            ModelReply.say("39 million."),
        ],
        turns=[
            "What city is the Golden Gate Bridge in?",
            "What state is it in?",
            "What's the population of that state?",
        ],
        sdk_memory=True,
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    assert len(requests) == 3
    # The SQLiteSession gave the model the whole conversation, as the session's messages do.
    assert [item.get("content") for item in requests[2]["input"] if item.get("role") == "user"] == [
        "What city is the Golden Gate Bridge in?",
        "What state is it in?",
        "What's the population of that state?",
    ]
    assert plain.outputs == ["San Francisco.", "California.", "39 million."]
    assert_same_run(plain, session)
