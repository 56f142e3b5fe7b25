"""Run settings (issue 22, item 7): `max_turns`, `tool_use_behavior` and `output_type`."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, failure_note, run_both
from tests.adapter_openai.differential.scripts import TOKYO, TOKYO_WEATHER


async def test_a_tool_and_its_answer(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """basic/tools.py as it is: the baseline every other test builds on."""
    scenario = Scenario(name="tools", build=sdk_examples.tools, script=TOKYO_WEATHER, turns=[TOKYO])
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests[""]) == 2
    assert plain.tool_runs == [{"name": "get_weather", "city": "Tokyo"}]
    assert plain.outputs == ["The weather in Tokyo is sunny with wind."]
    assert_same_run(plain, session)


async def test_max_turns_is_a_per_turn_model_call_budget_with_the_sdks_error(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    again = ModelReply.call(ScriptedToolCall("call_again", "get_weather", {"city": "Kyoto"}))
    scenario = Scenario(
        name="max-turns",
        build=sdk_examples.tools_max_turns,
        script=[TOKYO_WEATHER[0], again, ModelReply.say("never asked for")],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.errors == ["MaxTurnsExceeded: Max turns (2) exceeded"]
    # Deliberate (adapter README, "Extension points and deliberate differences"): the turn
    # fails with a text that keeps the SDK's.
    assert session.errors == ["model call failed: TurnAborted: MaxTurnsExceeded: Max turns (2) exceeded"]
    # A terminal outcome, never retried: two model calls, and three model steps run once
    # each (the third resumes the run, which raises before it calls the model).
    assert len(plain.requests[""]) == 2
    assert session.model_attempts == 3
    # Deliberate: the failed turn's tool calls ran, so the session notes them after its message.
    weather = "city='{}' temperature_range='14-20C' conditions='Sunny with wind.'"
    note = failure_note(
        f'- get_weather {{"city":"Tokyo"}} -> succeeded: {weather.format("Tokyo")}',
        f'- get_weather {{"city":"Kyoto"}} -> succeeded: {weather.format("Kyoto")}',
    )
    assert_same_run(plain, session, session_history=[*plain.history, note])


async def test_tool_use_behavior_stop_on_first_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """agent_patterns/forcing_tool_use.py ``-t first_tool``: the tool's Weather is the output."""
    scenario = Scenario(
        name="stop-on-first-tool",
        build=sdk_examples.forcing_tool_use,
        script=TOKYO_WEATHER[:1],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests[""]) == 1
    assert plain.requests[""][0]["tool_choice"] == "required"
    # The SDK's final output is the text the model would have seen: the Weather's str().
    assert plain.outputs == ["city='Tokyo' temperature_range='14-20C' conditions='Sunny with wind'"]
    assert_same_run(plain, session)


async def test_tool_use_behavior_stop_at_tools(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="stop-at-tools", build=sdk_examples.tools_stop_at, script=TOKYO_WEATHER[:1], turns=[TOKYO]
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests[""]) == 1
    assert plain.outputs == ["city='Tokyo' temperature_range='14-20C' conditions='Sunny with wind.'"]
    assert_same_run(plain, session)


async def test_tool_use_behavior_custom_function(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """agent_patterns/forcing_tool_use.py ``-t custom``: the function reads the tool's pydantic result."""
    scenario = Scenario(
        name="custom-tool-use",
        build=sdk_examples.forcing_tool_use_custom,
        script=TOKYO_WEATHER[:1],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["Tokyo is Sunny with wind."]
    assert_same_run(plain, session)


async def test_output_type_structured_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """agent_patterns/output_guardrails.py's first question: a `MessageOutput` as the final output."""
    answer = '{"reasoning": "A capital.", "response": "Sacramento.", "user_name": null}'
    scenario = Scenario(
        name="output-type",
        build=sdk_examples.output_guardrails,
        script=[ModelReply.say(answer)],
        turns=["What's the capital of California?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [{"reasoning": "A capital.", "response": "Sacramento.", "user_name": None}]
    assert plain.requests[""][0]["text"]["format"]["name"] == "final_output"
    assert_same_run(plain, session)
