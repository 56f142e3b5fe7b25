"""No hidden model calls (issue 22, item 5): a reasoning-only response goes on with another call.

The plain SDK answers a response that holds only reasoning by calling the model again; the
session must make that call a model step of its own (a continue), not a second call
inside the same step.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.testing import ModelReply, ScriptedModelServer
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Scenario, assert_same_run, run_both


async def test_a_reasoning_only_response_then_the_answer(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """basic/hello_world.py, with a first response that only thinks."""
    haiku = "Function calls itself,\nLooping in smaller pieces,\nEndless by design."
    scenario = Scenario(
        name="reasoning-only",
        build=sdk_examples.hello_world,
        script=[ModelReply(reasoning="A haiku about recursion."), ModelReply.say(haiku)],
        turns=["Tell me about recursion in programming."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    requests = plain.requests[""]
    # Needs from sessionflow.testing (core): a reply of reasoning alone. Today the scripted
    # server adds an empty assistant message to any reply without tool calls
    # (`_has_text_output`), so the SDK takes "" as the final output after one call.
    assert len(requests) == 2, "the scripted server cannot answer reasoning alone yet (README)"
    assert requests[1]["input"][-1]["type"] == "reasoning"
    assert plain.outputs == [haiku]
    assert_same_run(plain, session)
