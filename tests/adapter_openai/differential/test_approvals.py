"""The tool's own ``needs_approval`` decides approval (issue 22, item 3), bool and callable."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both


def weather_and_temperature(city: str) -> list[ModelReply]:
    return [
        ModelReply.call(
            ScriptedToolCall("call_weather", "get_weather", {"city": city}),
            ScriptedToolCall("call_temperature", "get_temperature", {"city": city}),
        ),
        ModelReply.say(f"Sunny and 20° Celsius in {city}."),
    ]


async def test_the_callable_asks_for_oakland(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """agent_patterns/human_in_the_loop.py as it runs: only get_temperature for Oakland waits."""
    scenario = Scenario(
        name="hitl-oakland",
        build=sdk_examples.human_in_the_loop,
        script=weather_and_temperature("Oakland"),
        turns=["What is the weather and temperature in Oakland?"],
        approvals=[True],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == [("get_temperature", '{"city":"Oakland"}')]
    # In order: get_temperature waited for its approval, get_weather did not.
    assert [run["name"] for run in plain.tool_runs] == ["get_weather", "get_temperature"]
    assert_same_run(plain, session)


async def test_the_callable_asks_nobody_for_another_city(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hitl-sf",
        build=sdk_examples.human_in_the_loop,
        script=weather_and_temperature("San Francisco"),
        turns=["What is the weather and temperature in San Francisco?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == []
    assert len(plain.tool_runs) == 2
    assert_same_run(plain, session)


async def test_needs_approval_true_rejected_in_the_sdks_words(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """human_in_the_loop_custom_rejection.py's tool, rejected: the model sees the SDK's text."""
    publish = ScriptedToolCall(
        "call_publish", "publish_announcement", {"title": "Office maintenance", "body": "Closed at 6 PM."}
    )
    scenario = Scenario(
        name="hitl-publish",
        build=sdk_examples.human_in_the_loop_publish,
        script=[ModelReply.call(publish), ModelReply.say("Tool execution was not approved.")],
        turns=["Please publish an announcement titled 'Office maintenance'."],
        approvals=[False],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == [("publish_announcement", publish.arguments_json())]
    assert plain.tool_runs == []
    assert plain.requests[""][1]["input"][-1]["output"] == "Tool execution was not approved."
    assert_same_run(plain, session)


async def test_an_approval_is_consumed_by_its_call_and_never_approves_the_next_one(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The model asks for the same gated call twice: each waits for its own answer (issue 42).

    Approving the first does not approve the second, although its tool and arguments are the
    same: the second is rejected and does not run, in the SDK (one approval per call item,
    `always_approve` unused) and in the session (one interrupt per call, bound by digest).
    """
    oakland = {"city": "Oakland"}
    scenario = Scenario(
        name="hitl-twice",
        build=sdk_examples.human_in_the_loop,
        script=[
            ModelReply.call(ScriptedToolCall("call_t1", "get_temperature", oakland)),
            ModelReply.call(ScriptedToolCall("call_t2", "get_temperature", oakland)),
            ModelReply.say("It was 20° Celsius; I was not allowed to check again."),
        ],
        turns=["What is the temperature in Oakland? Check twice."],
        approvals=[True, False],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == [("get_temperature", '{"city":"Oakland"}')] * 2
    assert [run["name"] for run in plain.tool_runs] == ["get_temperature"]
    assert_same_run(plain, session)
