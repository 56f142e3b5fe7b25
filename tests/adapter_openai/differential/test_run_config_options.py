"""Run settings (issue 39's matrix): each `RunConfig` option, ``reset_tool_choice`` and the
``error_handlers`` of `Runner.run`, the same in a session as in the plain SDK.

Each test runs an agent of the SDK's examples with the one setting its docs show
(`run_config_examples`), compares everything `assert_same_run` compares (the requests, the
outputs, the stored transcript against the SDK's history, and every run of the tools,
guardrails and callbacks), and asserts what the setting did in the plain run.
"""

from __future__ import annotations

import json
from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import handoff_examples, run_config_examples, sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, failure_note, run_both
from tests.adapter_openai.differential.scripts import TOKYO, TOKYO_WEATHER
from tests.adapter_openai.differential.test_handoff_filters import SCRIPT as FILTER_SCRIPT
from tests.adapter_openai.differential.test_handoff_filters import TURNS as FILTER_TURNS
from tests.adapter_openai.differential.test_handoffs import FAQ_OVER_TWO_TURNS

KYOTO = [
    ModelReply.call(ScriptedToolCall("call_kyoto", "get_weather", {"city": "Kyoto"})),
    ModelReply.say("Kyoto is sunny too."),
]


def names(runs: list[dict[str, object]]) -> list[object]:
    return [run["name"] for run in runs]


async def test_the_run_configs_guardrails_run_once_per_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="run-guardrails", build=run_config_examples.run_guardrails, script=TOKYO_WEATHER, turns=[TOKYO]
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # The input guardrail once before the first model call (not again in the resumed model
    # step), the output guardrail once on the final output.
    assert names(plain.code_runs) == ["no_secrets", "get_weather", "no_shouting"]
    assert_same_run(plain, session)


async def test_call_model_input_filter_trims_every_model_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="input-filter",
        build=run_config_examples.trimmed_input,
        script=[*TOKYO_WEATHER, *KYOTO],
        turns=[TOKYO, "And in Kyoto?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    filtered = [run for run in plain.code_runs if run["name"] == "drop_old_messages"]
    assert [run["items"] for run in filtered] == [1, 3, 5, 7]
    assert len(plain.requests[""][3]["input"]) == 5
    # The filter edits what the model is sent, not the history.
    assert len(plain.history) == 8
    assert_same_run(plain, session)


async def test_tool_error_formatter_words_a_rejection(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="error-formatter",
        build=run_config_examples.formatted_tool_errors,
        script=[TOKYO_WEATHER[0], ModelReply.say("I won't check then.")],
        turns=[TOKYO],
        approvals=[False],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[""][1]["input"][-1]["output"] == (
        "Tool call 'get_weather' was rejected by a human reviewer. Ask for confirmation or suggest a safer alternative."
    )
    assert names(plain.code_runs) == ["format_rejection"]
    assert_same_run(plain, session)


async def test_tool_not_found_behavior_returns_the_error_to_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-not-found",
        build=run_config_examples.tool_not_found_to_model,
        script=[
            ModelReply.call(ScriptedToolCall("call_forecast", "get_forecast", {"city": "Tokyo"})),
            ModelReply.say("I have no forecast tool."),
        ],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[""][1]["input"][-1]["output"] == "There is no tool named 'get_forecast'."
    assert_same_run(plain, session)


async def test_reset_tool_choice_after_a_tool_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="reset-tool-choice",
        build=run_config_examples.tool_choice_reset,
        script=[TOKYO_WEATHER[0], ModelReply.say("Sunny.")],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[""][0]["tool_choice"] == "required"
    assert "tool_choice" not in plain.requests[""][1]
    assert_same_run(plain, session)


async def test_reset_tool_choice_false_keeps_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="keep-tool-choice",
        build=run_config_examples.tool_choice_kept,
        script=[TOKYO_WEATHER[0], ModelReply.say("Sunny.")],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [r["tool_choice"] for r in plain.requests[""]] == ["required", "required"]
    assert_same_run(plain, session)


async def test_the_run_configs_handoff_input_filter(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="global-filter",
        build=handoff_examples.message_filter_in_run_config,
        script=[*FILTER_SCRIPT, ModelReply.say("De nada.")],
        turns=[*FILTER_TURNS, "Gracias."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert "spanish_handoff_message_filter" in names(plain.code_runs)
    assert len(plain.history) == 8
    # As test_handoff_filters.py: the four dropped items are superseded, kept for audit.
    dropped = [session.kept[i] for i in (0, 1, 3, 4)]
    assert dropped[0] == {"content": FILTER_TURNS[0], "role": "user"}
    assert session.superseded == [(1, 2, 4), (4, 5, 4)]
    assert_same_run(plain, session)


async def test_nest_handoff_history(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="nest-handoff-history",
        build=run_config_examples.nested_handoff_history,
        script=FAQ_OVER_TWO_TURNS,
        turns=["What is the baggage allowance?", "Is there wifi?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # The FAQ agent's first request holds the history summarised in an assistant message,
    # not the raw items.
    faq_input = plain.requests[""][1]["input"]
    assert "function_call" not in [item.get("type") for item in faq_input]
    assert "<CONVERSATION HISTORY>" in json.dumps(faq_input)
    # As for input filters: the first user message, which the summary replaced in the SDK's
    # history, is superseded by that turn; an audit read still shows it.
    question = {"content": "What is the baggage allowance?", "role": "user"}
    assert session.kept[0] == question
    assert session.superseded == [(1, 1, 1)]
    assert_same_run(plain, session)


async def test_reasoning_item_id_policy_omit(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="omit-reasoning-ids",
        build=run_config_examples.omitted_reasoning_ids,
        script=[
            ModelReply.say("Recursion: a function calls itself.", reasoning="A haiku about recursion."),
            ModelReply.say("Until the base case stops.", reasoning="And the base case."),
        ],
        turns=["Tell me about recursion in programming.", "And then?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert_same_run(plain, session)


REFUSAL = ModelReply(
    message=False,
    output_items=[
        {
            "type": "message",
            "id": "msg_refusal",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "refusal", "refusal": "I can't help with that."}],
        }
    ],
)


async def test_a_refusal_ends_the_turn_and_is_never_retried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="refusal",
        build=run_config_examples.refusing,
        script=[REFUSAL, ModelReply.say("never asked for")],
        turns=["Help me with something bad."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.errors == ["ModelRefusalError: Model refused to produce output: I can't help with that."]
    assert session.errors == [
        "model call failed: TurnAborted: ModelRefusalError: Model refused to produce output: I can't help with that."
    ]
    # A terminal outcome: one model call, one model step at its first attempt.
    assert len(session.requests[""]) == 1
    assert session.model_attempts == 1
    assert_same_run(plain, session)


async def test_a_refusal_handler_gives_the_final_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="refusal-handled",
        build=run_config_examples.refusal_handled,
        script=[REFUSAL],
        turns=["Help me with something bad."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [{"reasoning": "refused", "response": "I can't help.", "user_name": None}]
    assert names(plain.code_runs) == ["on_refusal"]
    assert_same_run(plain, session)


async def test_a_max_turns_handler_gives_the_final_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="max-turns-handled",
        build=run_config_examples.max_turns_handled,
        script=[TOKYO_WEATHER[0], KYOTO[0], ModelReply.say("never asked for")],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["I couldn't finish within the allowed turns."]
    assert len(plain.requests[""]) == 2
    assert_same_run(plain, session)


async def test_the_run_configs_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="run-config-model",
        build=run_config_examples.model_in_run_config,
        script=TOKYO_WEATHER,
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[""][0]["model"] == "scripted"
    assert_same_run(plain, session)


async def test_tool_name_collision_policy_error_fails_the_turn_before_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="name-collision",
        build=run_config_examples.colliding_names,
        script=[ModelReply.say("never asked for")],
        turns=["Help me."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert (plain.errors[0] or "").startswith("UserError: ")
    assert plain.requests[""] == [] and session.requests[""] == []
    # A setup mistake ends the turn at once: one model step, never retried.
    assert session.model_attempts == 1
    assert_same_run(plain, session)


async def test_a_blocked_terminal_tool_output_is_in_the_sessions_failure_note(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``output_guardrail_blocked_message``: plain's history keeps no trace of the failed run.
    A documented difference: the session's turn-failure note (written by the core from the
    call's record) names the call and its output; the next model call would see it."""
    scenario = Scenario(
        name="blocked-terminal-output",
        build=run_config_examples.blocked_terminal_output,
        script=TOKYO_WEATHER[:1],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert (plain.errors[0] or "").startswith("OutputGuardrailTripwireTriggered")
    assert plain.history == [{"content": TOKYO, "role": "user"}]
    note = failure_note(
        '- get_weather {"city":"Tokyo"} -> succeeded: '
        "city='Tokyo' temperature_range='14-20C' conditions='Sunny with wind.'"
    )
    assert_same_run(plain, session, session_history=[*plain.history, note])


async def test_a_call_of_a_tool_the_agent_lacks_ends_the_turn_unretried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``tool_not_found_behavior="raise_error"`` (the default): plain's run raises
    `ModelBehaviorError`; the session's turn ends on it at once, as a terminal outcome."""
    scenario = Scenario(
        name="tool-not-found-raises",
        build=sdk_examples.tools,
        script=[
            ModelReply.call(ScriptedToolCall("call_forecast", "get_forecast", {"city": "Tokyo"})),
            ModelReply.say("never asked for"),
        ],
        turns=[TOKYO],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.errors == ["ModelBehaviorError: Tool get_forecast not found in agent Hello world"]
    assert len(session.requests[""]) == 1
    assert session.model_attempts == 1
    assert_same_run(plain, session)
