"""The differential cases again, with a SIGKILL of the worker inside a tool (issue 22, "Durability").

Each test runs the plain agent, then the session on worker children, one of which is
killed while the tool ``crash_in`` runs for the first time. The tool's effect happens once,
in the second worker (a read is run again, by its effect), that step's final attempt is 2,
and everything else equals the plain run: requests, outputs, last agent, context, and
which tool runs happened (`distinct_tool_runs`).
"""

from __future__ import annotations

import json
from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.session.notes import TURN_FAILURE_NOTE_HEADER
from tests.adapter_openai.differential import crash_examples, sdk_examples
from tests.adapter_openai.differential.crash import CrashedRun, distinct_tool_runs, run_session_with_crash
from tests.adapter_openai.differential.harness import Run, Scenario, assert_same_run, run_plain, unique
from tests.adapter_openai.differential.scripts import TOKYO, TOKYO_WEATHER
from tests.adapter_openai.differential.test_agents_as_tools import GLOSSARY_SCRIPT, NESTED_SCRIPT
from tests.adapter_openai.differential.test_approvals import weather_and_temperature
from tests.adapter_openai.differential.test_context import SEAT_CHANGE
from tests.adapter_openai.differential.test_guardrails import CAPITAL, HOMEWORK, answer, verdict
from tests.adapter_openai.differential.test_handoffs import FAQ_OVER_TWO_TURNS


async def crashed(
    scenario: Scenario, server: ScriptedModelServer, temporal_address: str, tmp_path: Path, *, crash_in: str
) -> tuple[Run, CrashedRun]:
    key = unique(f"oa-crash-{scenario.name}")
    plain = await run_plain(scenario, server, f"{key}-plain", tmp_path / "plain")
    session = await run_session_with_crash(
        scenario, server, f"{key}-session", tmp_path / "session", temporal_address, crash_in=crash_in
    )
    return plain, session


def assert_crash_repeated_only_the_effect(session: CrashedRun, step: str) -> None:
    assert session.effect_pids == [session.finished_pid], "the effect happened once, after the restart"
    assert session.steps.get(step) == (2, "completed"), session.steps


async def test_a_tool_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """basic/tools.py: the baseline."""
    scenario = Scenario(name="tools", build=sdk_examples.tools, script=TOKYO_WEATHER, turns=[TOKYO])
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert plain.outputs == ["The weather in Tokyo is sunny with wind."]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_tokyo")


async def test_update_seat_sigkill_keeps_the_context(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """customer_service: a crash in ``update_seat`` after the handoff set the flight number."""
    scenario = Scenario(
        name="context",
        build=sdk_examples.customer_service,
        script=SEAT_CHANGE,
        turns=["Please move me to seat 12A; my confirmation number is ABC123."],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="update_seat")

    assert plain.context is not None and plain.context["seat_number"] == "12A"
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_seat")


async def test_approved_oakland_temperature_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """human_in_the_loop: the approved call dies in its tool and runs again, once."""
    scenario = Scenario(
        name="hitl-oakland",
        build=sdk_examples.human_in_the_loop,
        script=weather_and_temperature("Oakland"),
        turns=["What is the weather and temperature in Oakland?"],
        approvals=[True],
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="get_temperature"
    )

    assert plain.asked == [("get_temperature", '{"city":"Oakland"}')]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_temperature")


async def test_a_sub_agents_tool_sigkill_repeats_only_that_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Agents as tools (item 4): a crash in the translator's tool repeats that call alone,
    not the translator's model call before it (every step but that one ran once)."""
    scenario = Scenario(
        name="agents-as-tools-glossary",
        build=sdk_examples.agents_as_tools_with_a_glossary,
        script=GLOSSARY_SCRIPT,
        turns=["Translate 'Hello, world!' to Spanish."],
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="lookup_glossary"
    )

    assert plain.outputs == ["In Spanish: ¡Hola, mundo!"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    # The translator's call is named under the orchestrator's call that started it.
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_es.call_glossary")
    repeated = {step: attempt for step, (attempt, _) in session.steps.items() if attempt != 1}
    assert repeated == {"turn-1/tool/call_es.call_glossary": 2}, session.steps


async def test_a_nested_sub_agents_tool_sigkill_repeats_only_that_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Nested agents as tools: a crash in the editor's tool (the translator's agent tool's
    agent) repeats that call alone."""
    scenario = Scenario(
        name="agents-as-tools-nested",
        build=sdk_examples.agents_as_tools_nested,
        script=NESTED_SCRIPT,
        turns=["Translate 'Hello, world!' to Spanish."],
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="lookup_glossary"
    )

    assert plain.outputs == ["In Spanish: ¡Hola, mundo!"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    step = "turn-1/tool/call_es.call_ed.call_glossary"
    assert_crash_repeated_only_the_effect(session, step)
    repeated = {name: attempt for name, (attempt, _) in session.steps.items() if attempt != 1}
    assert repeated == {step: 2}, session.steps


async def test_a_faq_lookup_sigkill_after_a_handoff_keeps_the_last_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """customer_service over two turns (item 1): the crash comes after the handoff to the FAQ
    agent; the repeat runs in that agent, and turn 2 still starts there."""
    scenario = Scenario(
        name="handoff-turns",
        build=sdk_examples.customer_service,
        script=FAQ_OVER_TWO_TURNS,
        turns=["What is the baggage allowance?", "Is there wifi?"],
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="faq_lookup_tool"
    )

    assert plain.last_agent == "FAQ Agent"
    assert len(plain.tool_runs) == 2
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    # The tool runs in both turns: once after the restart in turn 1, once in turn 2.
    assert session.effect_pids == [session.finished_pid] * 2
    assert session.steps.get("turn-1/tool/call_bag") == (2, "completed"), session.steps
    assert session.steps.get("turn-2/tool/call_wifi") == (1, "completed"), session.steps


async def test_a_custom_tool_use_behavior_sigkill_still_gets_the_returned_object(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """forcing_tool_use.py's custom function (item 7): the repeated tool step records the
    `Weather` it returned, and the function reads its fields."""
    scenario = Scenario(
        name="custom-tool-use",
        build=sdk_examples.forcing_tool_use_custom,
        script=TOKYO_WEATHER[:1],
        turns=[TOKYO],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert plain.outputs == ["Tokyo is Sunny with wind."]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_tokyo")


async def test_a_stop_at_tools_sigkill(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """`StopAtTools` (item 7): the tool's repeated result is the turn's answer."""
    scenario = Scenario(
        name="stop-at-tools", build=sdk_examples.tools_stop_at, script=TOKYO_WEATHER[:1], turns=[TOKYO]
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert plain.outputs == ["city='Tokyo' temperature_range='14-20C' conditions='Sunny with wind.'"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_tokyo")


async def test_a_sigkill_then_a_response_that_only_reasons(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """No hidden model calls (item 5): after the repeated tool, a structured agent's response
    that only reasons is followed by a model step of its own (a continue), as the SDK calls
    the model again."""
    structured = '{"reasoning": "Looked it up.", "response": "Sunny with wind.", "user_name": null}'
    scenario = Scenario(
        name="reasoning-after-crash",
        build=crash_examples.structured_weather,
        script=[TOKYO_WEATHER[0], ModelReply.reasoning_only("Now answer."), ModelReply.say(structured)],
        turns=[TOKYO],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    requests = plain.requests[""]
    assert len(requests) == 3
    assert requests[2]["input"][-1]["type"] == "reasoning"
    assert plain.outputs == [json.loads(structured)]
    # Three model calls, each in a step of its own at its first attempt (the harness's check).
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_tokyo")


async def test_a_sigkill_before_an_input_tripwire_answered_with_a_refusal(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Guardrails (item 6): the support agent's first turn dies in its tool; the second trips
    the input guardrail and is answered with the example's refusal, which the third sees."""
    scenario = Scenario(
        name="input-refusal-after-crash",
        build=crash_examples.input_guardrails_with_weather_answering,
        script=[*TOKYO_WEATHER, ModelReply.say("The capital of Oregon is Salem.")],
        side_scripts={"-guardrail": [verdict(False), verdict(True), verdict(False)]},
        turns=[TOKYO, HOMEWORK, "And of Oregon?"],
        refusal=sdk_examples.MATH_REFUSAL,
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert plain.outputs == [
        TOKYO_WEATHER[1].text,
        sdk_examples.MATH_REFUSAL,
        "The capital of Oregon is Salem.",
    ]
    assert {"role": "assistant", "content": sdk_examples.MATH_REFUSAL} in plain.requests[""][-1]["input"]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_tokyo")


async def test_a_sigkill_before_an_output_tripwire_fails_the_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Guardrails (item 6): the repeated tool's turn ends in an answer with a phone number, so
    the output guardrail fails the turn, as `Runner.run` raises; the next turn goes on."""
    scenario = Scenario(
        name="output-tripwire-after-crash",
        build=crash_examples.output_guardrails_with_weather,
        script=[TOKYO_WEATHER[0], answer("Call 650-123-4567 for Tokyo."), answer("Sacramento.")],
        turns=[TOKYO, CAPITAL],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, crash_in="get_weather")

    assert plain.outputs == [None, {"reasoning": "r", "response": "Sacramento.", "user_name": None}]
    assert (plain.errors[0] or "").startswith("OutputGuardrailTripwireTriggered")
    # The intended difference (adapter README): the failed turn's tool call ran, so the next
    # turn's model is told, in a note after the failed turn's message; plain drops it.
    requests = session.run.requests[""]
    note = requests[2]["input"].pop(1)
    assert note["role"] == "user" and note["content"].startswith(TURN_FAILURE_NOTE_HEADER)
    assert 'get_weather {"city":"Tokyo"} -> succeeded' in note["content"]
    # The stored transcript keeps the note where the model saw it: after turn 1's message.
    history = [*plain.history[:1], note, *plain.history[1:]]
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run), session_history=history)
    assert_crash_repeated_only_the_effect(session, "turn-1/tool/call_tokyo")
