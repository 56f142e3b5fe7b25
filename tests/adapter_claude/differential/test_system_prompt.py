"""system_prompt.py: no system prompt, a string, the ``claude_code`` preset, the preset with ``append``."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import Builder, Scenario, assert_same_run, run_both, user_texts


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        pytest.param(
            sdk_examples.system_prompt_none,
            "You are a Claude agent, built on Anthropic's Claude Agent SDK.",
            id="none",
        ),
        pytest.param(
            sdk_examples.system_prompt_string,
            "You are a pirate assistant. Respond in pirate speak.",
            id="string",
        ),
        pytest.param(
            sdk_examples.system_prompt_preset,
            "You are an agent working with the user toward their goals",
            id="preset",
        ),
        pytest.param(
            sdk_examples.system_prompt_preset_with_append,
            "Always end your response with a fun fact.",
            id="append",
        ),
    ],
)
async def test_the_system_prompt(
    build: Builder, expected: str, temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name=f"system-{build.__name__}",
        build=build,
        script=[ModelReply.say("4"), ModelReply.say("8")],
        turns=["What is 2 + 2?", "And doubled?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    assert all(expected in request["system"] for request in plain.requests)
    assert user_texts(plain.requests[1])[-1] == "And doubled?"
    assert plain.results == ["4", "8"]
    assert_same_run(plain, session)
