"""Guardrails as the SDK has them (issue 22, item 6).

agent_patterns/input_guardrails.py: the first question passes, the math homework trips the
guardrail. By default the tripped turn fails, as `Runner.run` raises; the example itself
catches `InputGuardrailTripwireTriggered` and answers with a refusal, which the next turn's
model call sees. agent_patterns/output_guardrails.py: a phone number in the structured
output trips its guardrail.
"""

from __future__ import annotations

import json
from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both

CAPITAL = "What's the capital of California?"
HOMEWORK = "Can you help me solve for x: 2x + 5 = 11"


def verdict(is_math_homework: bool) -> ModelReply:
    return ModelReply.say(json.dumps({"reasoning": "checked", "is_math_homework": is_math_homework}))


async def test_an_input_tripwire_fails_the_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="input-tripwire",
        build=sdk_examples.input_guardrails,
        script=[ModelReply.say("The capital of California is Sacramento.")],
        side_scripts={"-guardrail": [verdict(False), verdict(True)]},
        turns=[CAPITAL, HOMEWORK],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["The capital of California is Sacramento.", None]
    assert (plain.errors[1] or "").startswith("InputGuardrailTripwireTriggered")
    # Deliberate (adapter README, "Extension points and deliberate differences").
    assert session.errors == [
        None,
        "model call failed: TurnAborted: input guardrail 'math_guardrail' tripped",
    ]
    # The guardrail runs first, so the tripped turn never called the agent's model.
    assert len(plain.requests[""]) == 1
    assert len(plain.requests["-guardrail"]) == 2
    # A terminal outcome, never retried: one model step per turn, each at its first attempt
    # (the guardrail's own calls are its conversation's, compared call by call).
    assert session.model_attempts == 2
    assert_same_run(plain, session)


async def test_an_input_tripwire_answered_with_the_examples_refusal(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="input-refusal",
        build=sdk_examples.input_guardrails_answering,
        script=[
            ModelReply.say("The capital of California is Sacramento."),
            ModelReply.say("The capital of Oregon is Salem."),
        ],
        side_scripts={"-guardrail": [verdict(False), verdict(True), verdict(False)]},
        turns=[CAPITAL, HOMEWORK, "And of Oregon?"],
        refusal=sdk_examples.MATH_REFUSAL,
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs[1] == sdk_examples.MATH_REFUSAL
    # The third turn's model call sees the question and the refusal as the assistant's answer.
    last_input = plain.requests[""][-1]["input"]
    assert {"role": "user", "content": HOMEWORK} in last_input
    assert {"role": "assistant", "content": sdk_examples.MATH_REFUSAL} in last_input
    assert_same_run(plain, session)


def answer(response: str) -> ModelReply:
    return ModelReply.say(json.dumps({"reasoning": "r", "response": response, "user_name": None}))


async def test_an_output_tripwire_fails_the_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="output-tripwire",
        build=sdk_examples.output_guardrails,
        script=[answer("Sacramento."), answer("Your number 650-123-4567 is from the Bay Area.")],
        turns=[CAPITAL, "My phone number is 650-123-4567. Where do you think I live?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs[0] == {"reasoning": "r", "response": "Sacramento.", "user_name": None}
    assert (plain.errors[1] or "").startswith("OutputGuardrailTripwireTriggered")
    # Deliberate (adapter README, "Extension points and deliberate differences").
    assert session.errors == [
        None,
        "model call failed: TurnAborted: output guardrail 'sensitive_data_check' tripped",
    ]
    # A terminal outcome, never retried: two model calls, two model steps at attempt 1.
    assert len(session.requests[""]) == 2
    assert session.model_attempts == 2
    assert_same_run(plain, session)


async def test_an_output_tripwire_answered_with_a_refusal(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="output-refusal",
        build=sdk_examples.output_guardrails_answering,
        script=[answer("Your number 650-123-4567 is from the Bay Area."), answer("Sacramento.")],
        turns=["My phone number is 650-123-4567. Where do you think I live?", CAPITAL],
        refusal=sdk_examples.PHONE_REFUSAL,
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs[0] == sdk_examples.PHONE_REFUSAL
    # The tripped answer is not history: the next call sees the refusal in its place.
    last_input = plain.requests[""][-1]["input"]
    assert {"role": "assistant", "content": sdk_examples.PHONE_REFUSAL} in last_input
    assert "650-123-4567 is from" not in json.dumps(last_input)
    assert_same_run(plain, session)
