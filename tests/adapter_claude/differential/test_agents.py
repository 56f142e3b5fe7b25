"""agents.py: a custom sub-agent (``AgentDefinition``) started with the ``Agent`` tool.

As the example stands, Claude Code runs the sub-agent in the background: the ``Agent`` call
returns "Async agent launched successfully" at once and the parent answers without the
report, which later starts a turn nobody sent. The adapter refuses that when the flow is
built, saying how to change it (``CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1`` in the options'
``env``); the other tests run the example changed that way, in both runs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import extension_points, sdk_examples
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both, tool_results
from tests.adapter_claude.differential.normalise import (
    without_sub_agent_frames,
    without_sub_agent_frames_in_transcript,
)


async def test_a_background_sub_agent_is_refused_when_the_flow_is_built(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="agents-background",
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
            ModelReply.say("The review is under way."),
            ModelReply.say("types.py looks fine."),
            ModelReply.say("spare"),
        ],
        turns=["Use the code-reviewer agent to review the code in types.py"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Plain: the call returns at once; the parent's next request carries no report. The
    # background sub-agent's first request races the parent's next one, so the parent's is
    # found by the call's result rather than by its position.
    parent = next(r for r in plain.requests if "toolu_agent" in tool_results(r))
    text, is_error = tool_results(parent)["toolu_agent"]
    assert not is_error and text.startswith("Async agent launched successfully.")
    assert len(plain.results) == 1 and plain.errors == [None]
    # The session: refused when built, with the reason and the change to make.
    assert len(session.problems) == 1
    refusal = session.problems[0]
    assert "UnsupportedOptionError" in refusal and "background" in refusal
    assert "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS" in refusal
    assert session.requests == [] and session.tool_runs == []


async def test_the_code_reviewer_sub_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="agents",
        build=sdk_examples.agents_code_reviewer_foreground,
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
    # Deliberate (adapter README, "Sub-agents"): the sub-agent is the session's own
    # conversation, without Claude Code's sub-agent notes and hand-back frame.
    unframed = replace(
        plain,
        requests=[without_sub_agent_frames(r) for r in plain.requests],
        transcript=without_sub_agent_frames_in_transcript(plain.transcript),
    )
    assert_same_run(unframed, session)


async def test_a_sub_agent_that_reads_a_file(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The sub-agent's own tool call runs as a step of the session (``toolu_agent.toolu_read``)."""
    scenario = Scenario(
        name="agents-read",
        build=sdk_examples.agents_code_reviewer_foreground,
        files={"types.py": "def add(a, b):\n    return a + b\n"},
        script=lambda workspace: [
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
            ModelReply.call(
                ScriptedToolCall("toolu_read", "Read", {"file_path": str(workspace / "types.py")})
            ),
            ModelReply.say("add has no type hints."),
            ModelReply.say("The reviewer found only missing type hints."),
        ],
        turns=["Use the code-reviewer agent to review the code in types.py"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4
    assert plain.requests[2]["tools"] == ["Grep", "Read"]
    text, is_error = tool_results(plain.requests[2])["toolu_read"]
    assert not is_error and "1\tdef add(a, b):" in text
    assert plain.results == ["The reviewer found only missing type hints."]
    unframed = replace(
        plain,
        requests=[without_sub_agent_frames(r) for r in plain.requests],
        transcript=without_sub_agent_frames_in_transcript(plain.transcript),
    )
    assert_same_run(unframed, session)


async def test_a_sub_agent_from_the_projects_files(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """filesystem_agents.py: ``.claude/agents/test-agent.md`` loaded through ``setting_sources``."""
    scenario = Scenario(
        name="agents-files",
        build=extension_points.filesystem_agent,
        files={".claude/agents/test-agent.md": extension_points.TEST_AGENT},
        script=[
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_agent",
                    "Agent",
                    {
                        "description": "Greet",
                        "prompt": "Say hello in exactly 3 words",
                        "subagent_type": "test-agent",
                    },
                )
            ),
            ModelReply.say("Hello there, friend."),
            ModelReply.say("The agent said: Hello there, friend."),
        ],
        turns=["Use the test-agent to say hello in exactly 3 words"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 3
    assert "You are a simple test agent." in plain.requests[1]["system"]
    assert plain.requests[1]["tools"] == ["Read"]
    assert plain.results == ["The agent said: Hello there, friend."]
    unframed = replace(
        plain,
        requests=[without_sub_agent_frames(r) for r in plain.requests],
        transcript=without_sub_agent_frames_in_transcript(plain.transcript),
    )
    assert_same_run(unframed, session)
