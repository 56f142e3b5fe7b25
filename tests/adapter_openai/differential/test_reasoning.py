"""No hidden model calls (issue 22, item 5): a response that only thinks, as the SDK treats it.

openai-agents 0.24 (`run_internal/turn_resolution.py`) ends a plain-text agent's run on a
response without a message or tool call, with ``""`` as the final output, and calls the
model again only where the run cannot end: a structured `output_type` with no output yet
(or a response of hosted tool calls alone). The session must make that second call a model
step of its own (a continue), never a second call inside the same step.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both


async def test_a_reasoning_only_response_ends_a_plain_text_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """basic/hello_world.py, with a response that only thinks: the SDK takes "" as the answer."""
    haiku = "Function calls itself,\nLooping in smaller pieces,\nEndless by design."
    scenario = Scenario(
        name="reasoning-only-text",
        build=sdk_examples.hello_world,
        script=[ModelReply.reasoning_only("A haiku about recursion."), ModelReply.say(haiku)],
        turns=["Tell me about recursion in programming."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests[""]) == 1
    assert plain.outputs == [""]
    assert_same_run(plain, session)


async def test_a_reasoning_only_response_then_the_structured_answer(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """agent_patterns/output_guardrails.py's agent (a `MessageOutput`): the SDK calls again."""
    answer = '{"reasoning": "A capital.", "response": "Sacramento.", "user_name": null}'
    scenario = Scenario(
        name="reasoning-only-structured",
        build=sdk_examples.output_guardrails,
        script=[ModelReply.reasoning_only("The capital of California."), ModelReply.say(answer)],
        turns=["What's the capital of California?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    assert len(requests) == 2
    assert requests[1]["input"][-1]["type"] == "reasoning"
    assert plain.outputs == [{"reasoning": "A capital.", "response": "Sacramento.", "user_name": None}]
    # Two model calls, and the harness's hidden-call check holds each to a step of its own.
    assert_same_run(plain, session)
