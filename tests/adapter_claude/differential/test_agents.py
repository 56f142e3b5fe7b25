"""agents.py: a custom sub-agent (``AgentDefinition``) started with the ``Agent`` tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionflow.testing import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both, tool_results


@pytest.mark.xfail(strict=True, reason="issue 24 item 5: the Agent tool (sub-agents) is refused")
async def test_the_code_reviewer_sub_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="agents",
        build=sdk_examples.agents_code_reviewer,
        files={"types.py": "def add(a, b):\n    return a + b\n"},
        script=[
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_agent",
                    "Agent",
                    {
                        "description": "Review types.py",
                        "prompt": "Review the code in types.py",
                        "subagent_type": "code-reviewer",
                    },
                )
            ),
            # The sub-agent's own request, on the same model server.
            ModelReply.say("types.py looks fine: add has no type hints."),
            ModelReply.say("The reviewer found only missing type hints."),
        ],
        turns=["Use the code-reviewer agent to review the code in types.py"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 3
    assert "Agent" in plain.requests[0]["tools"]
    assert "You are a code reviewer." in plain.requests[1]["system"]
    assert plain.requests[1]["tools"] == ["Grep", "Read"]
    text, is_error = tool_results(plain.requests[2])["toolu_agent"]
    assert not is_error and "types.py looks fine" in text
    assert plain.results == ["The reviewer found only missing type hints."]
    assert_same_run(plain, session)
