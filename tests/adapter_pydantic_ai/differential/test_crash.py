"""The differential cases again, with a SIGKILL of the worker inside a tool (issue 23, "Durability").

Each test runs the plain agent, then the session on worker children, one of which is
killed while the tool ``crash_in`` runs for the first time. The tool's effect happens once,
in the second worker (a read runs again, by its effect), that step's final attempt is 2, and
everything else equals the plain run: requests, outputs, message history, approvals, and
which tool runs happened (`distinct_tool_runs`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pydantic_ai import Agent, ModelRetry, ModelSettings, UsageLimits
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential import examples, run_toolsets, toolset_agents
from tests.adapter_pydantic_ai.differential.crash import (
    CrashedRun,
    distinct_tool_runs,
    run_session_with_crash,
)
from tests.adapter_pydantic_ai.differential.harness import (
    Built,
    Models,
    Run,
    Scenario,
    assert_same_run,
    run_plain,
    unique,
)
from tests.adapter_pydantic_ai.differential.test_deferred_tools import file_agent, task_agent, update
from tests.adapter_pydantic_ai.differential.test_examples import BALANCE_ADVICE, LOST_CARD_ADVICE
from tests.adapter_pydantic_ai.differential.test_usage_limits import assert_same_failure
from tests.adapter_pydantic_ai.differential.test_weather_agent import lat_lng, weather_at


async def crashed(
    scenario: Scenario,
    server: ScriptedModelServer,
    temporal_address: str,
    tmp_path: Path,
    *,
    crash_in: str,
    plain_scenario: Scenario | None = None,
) -> tuple[Run, CrashedRun]:
    key = unique(f"pai-crash-{scenario.name}")
    plain = await run_plain(plain_scenario or scenario, server, f"{key}-plain", tmp_path / "plain")
    session = await run_session_with_crash(
        scenario, server, f"{key}-session", tmp_path / "session", temporal_address, crash_in=crash_in
    )
    return plain, session


def assert_crash_repeated_only_the_effect(session: CrashedRun, step: str) -> None:
    assert session.effect_pids == [session.finished_pid], "the effect happened once, after the restart"
    assert session.steps.get(step) == (2, "completed"), session.steps


def flaky_population(models: Models, log: InvocationLog) -> Built:
    """A tool that asks the model to retry (`ModelRetry`) for a name it does not know."""
    agent = Agent(models.model(), instructions="You answer with populations.")

    @agent.tool_plain
    def population(city: str) -> str:
        log.record("tool", "population", city=city)
        if city != "Oslo":
            raise ModelRetry(f"no city named {city!r}; use the English name")
        return "709000"

    return Built(agent=agent)


def limited_population(models: Models, log: InvocationLog) -> Built:
    """`flaky_population` run with usage limits and model settings, as `agent.run` gets them."""
    built = flaky_population(models, log)
    run = {
        "usage_limits": UsageLimits(request_limit=4, tool_calls_limit=2),
        "model_settings": ModelSettings(temperature=0.2, max_tokens=300),
    }
    return replace(built, run_args=run, flow_args=run)


async def test_bank_support_sigkill_in_a_tool_with_deps_and_structured_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="bank",
        build=examples.bank_support,
        script=[
            ModelReply.call(ScriptedToolCall("call_balance", "customer_balance", {})),
            ModelReply.call(ScriptedToolCall("call_out_1", "final_result", BALANCE_ADVICE)),
            ModelReply.call(ScriptedToolCall("call_out_2", "final_result", LOST_CARD_ADVICE)),
        ],
        turns=["What is my balance?", "I just lost my card!"],
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="customer_balance"
    )

    assert plain.outputs == [BALANCE_ADVICE, LOST_CARD_ADVICE]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_balance")


async def test_weather_agent_sigkill_reopens_the_workers_resources(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The HTTP client in the deps is the worker's: the next worker opens its own."""
    scenario = Scenario(
        name="weather",
        build=examples.weather_agent,
        script=[
            ModelReply.call(lat_lng("call_ll_london", "London")),
            ModelReply.call(weather_at("call_w_london", 51.5, -0.13)),
            ModelReply.say("It is 21 °C and sunny in London."),
        ],
        turns=["What is the weather like in London?"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert plain.outputs == ["It is 21 °C and sunny in London."]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_w_london")


async def test_a_model_retry_sigkill_still_reaches_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="retry",
        build=flaky_population,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "population", {"city": "Osló"})),
            ModelReply.call(ScriptedToolCall("c2", "population", {"city": "Oslo"})),
            ModelReply.say("709,000 people."),
        ],
        turns=["How many people live in Oslo?"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="population")

    assert '{"error":"no city named' in str(plain.requests[""][1]["messages"])
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    # The retried call died in the killed worker and asked for the retry from the next one.
    assert session.effect_pids == [session.finished_pid, session.finished_pid]
    assert session.steps.get("turn-1/tool/c1") == (2, "completed"), session.steps


async def test_approval_required_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The tool that asks for approval itself: a crash in the call that did not need one."""
    scenario = Scenario(
        name="approval-required",
        build=file_agent,
        script=[
            ModelReply.call(update("c1", "README.md", "Hello"), update("c2", ".env", "SECRET=1")),
            ModelReply.say("Both files are updated."),
        ],
        turns=["Update README.md and .env"],
        approvals=[True],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="update_file")

    assert plain.asked == [("update_file", {"path": ".env", "content": "SECRET=1"})]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert session.steps.get("turn-1/tool/c2-approval") == (1, "completed"), session.steps


async def test_call_deferred_sigkill_then_the_result_from_outside(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="call-deferred",
        build=task_agent,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "calculate_answer", {"question": "6 x 7?"})),
            ModelReply.say("The answer is 42."),
        ],
        turns=["What is 6 x 7? Use the calculator."],
        external_results=["42"],
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="calculate_answer"
    )

    assert plain.outputs == ["The answer is 42."]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert session.steps.get("turn-1/tool/c1") == (2, "completed"), session.steps


async def test_a_deps_change_survives_a_sigkill_in_the_tool_that_makes_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """dynamic_toolset.py: ``toggle`` dies after changing the deps; the rerun changes them once."""
    scenario = Scenario(
        name="toggle",
        build=toolset_agents.dynamic_toolset,
        script=[
            ModelReply.call(ScriptedToolCall("call_toggle", "toggle", {})),
            ModelReply.say("Toggled."),
        ],
        turns=["Toggle the toolset"],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="toggle")

    assert [r["function"]["name"] for r in plain.requests[""][1]["tools"]] == ["toggle", "now"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_toggle")


async def test_run_toolsets_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    script = [
        ModelReply.call(
            ScriptedToolCall("call_agent", "agent_tool", {}), ScriptedToolCall("call_extra", "extra_tool", {})
        ),
        ModelReply.say("Both tools answered."),
    ]
    turns = ["What tools are available?"]
    plain_scenario = Scenario(
        name="run-toolsets", build=run_toolsets.plain_run_toolsets, script=script, turns=turns
    )
    scenario = Scenario(
        name="run-toolsets", build=run_toolsets.session_run_toolsets, script=script, turns=turns
    )
    plain, session = await crashed(
        scenario,
        model_server,
        temporal_address,
        tmp_path,
        crash_in="extra_tool",
        plain_scenario=plain_scenario,
    )

    # One reply asks for both calls, and Pydantic AI runs them concurrently
    # (pydantic_ai._tool_execution), so the plain run's order is a multiset.
    assert sorted(r["name"] for r in plain.tool_runs) == ["agent_tool", "extra_tool"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_extra")


async def test_usage_limits_and_model_settings_hold_across_a_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Items 7 and 8: the limits count the turn's usage and the settings reach every request,
    whichever worker runs the step."""
    scenario = Scenario(
        name="limited",
        build=limited_population,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "population", {"city": "Oslo"})),
            ModelReply.call(ScriptedToolCall("c2", "population", {"city": "Oslo"})),
            ModelReply.call(ScriptedToolCall("c3", "population", {"city": "Oslo"})),
        ],
        turns=["How many people live in Oslo? Check it three times."],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="population")

    assert all(r["temperature"] == 0.2 for r in plain.requests[""])
    # The third call is refused before it runs, with Pydantic AI's text, in both (the failed
    # turn's stored prompt is the session's; `assert_same_failure`).
    text = assert_same_failure(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert "tool_calls_limit of 2" in text
    assert session.steps.get("turn-1/tool/c1") == (2, "completed"), session.steps


OSLO_BEFORE: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart("How many people live in Oslo?")]),
    ModelResponse(parts=[TextPart("About 709,000 people.")]),
]


async def test_a_session_from_an_existing_history_survives_a_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Item 6: the session starts from an existing history; its first turn dies in a tool."""
    scenario = Scenario(
        name="history",
        build=flaky_population,
        history=OSLO_BEFORE,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "population", {"city": "Oslo"})),
            ModelReply.say("Still about 709,000."),
        ],
        turns=["Check that again, please."],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="population")

    first = plain.requests[""][0]["messages"]
    assert [m["content"] for m in first if m["role"] in ("user", "assistant")][:2] == [
        "How many people live in Oslo?",
        "About 709,000 people.",
    ]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/c1")
