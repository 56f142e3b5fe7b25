"""Every hook event of the pinned SDK fires as often, and in the same order, as without sessionflow.

`extension_points.every_hook_event` registers a logging hook on each event but
PermissionRequest (refused when the flow is built, `test_build_refusals.py`) and a logging
``can_use_tool``. One turn runs a command that asks (``can_use_tool``), then a foreground
sub-agent; the next compacts the conversation (``/compact``); the last is a plain answer.
Plain Claude Code fires, in order: UserPromptSubmit; PreToolUse, can_use_tool, PostToolUse for
the command; PreToolUse, SubagentStart, SubagentStop, PostToolUse for the ``Agent`` call; Stop;
then PreCompact (``manual``) and the two SubagentStop of the compaction's own agents; then
UserPromptSubmit and Stop. Notification never fires in the SDK (nobody is prompted), in
either run. The session's steps run the tool hooks and ``can_use_tool`` themselves, the
sub-agent hooks around the sub-agent's steps, and the CLI the rest, each once.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import extension_points
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both
from tests.adapter_claude.differential.normalise import (
    without_sub_agent_frames,
    without_sub_agent_frames_in_transcript,
)

AGENT_CALL = ScriptedToolCall(
    "toolu_agent",
    "Agent",
    {"description": "Review", "prompt": "Review the code", "subagent_type": "code-reviewer"},
)

EXPECTED = [
    {"name": "UserPromptSubmit"},
    {"name": "PreToolUse", "tool_name": "Bash"},
    {"name": "can_use_tool", "tool_name": "Bash", "input": {"command": "touch x.txt"}},
    {"name": "PostToolUse", "tool_name": "Bash"},
    {"name": "PreToolUse", "tool_name": "Agent"},
    {"name": "SubagentStart", "agent_type": "code-reviewer"},
    {"name": "SubagentStop", "agent_type": "code-reviewer", "stop_hook_active": False},
    {"name": "PostToolUse", "tool_name": "Agent"},
    {"name": "Stop", "stop_hook_active": False},
    {"name": "UserPromptSubmit"},
    {"name": "Stop", "stop_hook_active": False},
]


async def test_every_hook_event_fires_once_where_claude_code_fires_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hook-events",
        build=extension_points.every_hook_event,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_touch", "Bash", {"command": "touch x.txt"})),
            ModelReply.call(AGENT_CALL),
            ModelReply.say("The code looks fine."),
            ModelReply.say("Created x.txt; the reviewer found nothing."),
            ModelReply.say("Nothing else to do."),
        ],
        turns=["Create x.txt, then have the code reviewed", "Anything else?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.hooks == EXPECTED
    assert plain.files == {"x.txt": ""}
    assert plain.results == ["Created x.txt; the reviewer found nothing.", "Nothing else to do."]
    assert len(plain.requests) == 5
    # can_use_tool is the approval: the session asks nobody again.
    assert session.asked == []
    # Deliberate (adapter README, "Sub-agents"): no sub-agent notes or hand-back frame.
    unframed = replace(
        plain,
        requests=[without_sub_agent_frames(r) for r in plain.requests],
        transcript=without_sub_agent_frames_in_transcript(plain.transcript),
    )
    assert_same_run(unframed, session)


async def test_precompact_fires_once_for_a_compaction(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``/compact``: Claude Code fires PreCompact (``manual``) and a SubagentStop for each of
    its compaction's own agents, and asks the model twice inside the one CLI run, so the
    session's compaction step makes both requests. The next turn's request starts from the
    summary in both runs."""
    scenario = Scenario(
        name="hook-compact",
        build=extension_points.every_hook_event,
        script=[
            ModelReply.say("Hello."),
            ModelReply.say("A summary of the conversation."),
            ModelReply.say("Compacted."),
            ModelReply.say("Nothing else to do."),
        ],
        turns=["Hi", "/compact", "Anything else?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.hooks == [
        {"name": "UserPromptSubmit"},
        {"name": "Stop", "stop_hook_active": False},
        {"name": "PreCompact", "trigger": "manual"},
        {"name": "SubagentStop", "agent_type": "", "stop_hook_active": False},
        {"name": "SubagentStop", "agent_type": "", "stop_hook_active": False},
        {"name": "UserPromptSubmit"},
        {"name": "Stop", "stop_hook_active": False},
    ]
    assert plain.results == ["Hello.", "", "Nothing else to do."]
    assert len(plain.requests) == 4
    # Deliberate (docs/extension-points/claude-agent-sdk.md, "compaction"): Claude Code's
    # history now starts from its summary; the session's stored transcript is the record of
    # every message, the turn of ``/compact`` with an empty response (it carries the turn's
    # transcript lines, the summary among them, which the next request starts from).
    first = plain.transcript[0]
    assert first[0] == "user" and "continued from a previous conversation" in first[1]
    assert session.transcript == [
        ["user", "Hi"],
        ["assistant", [{"type": "text", "text": "Hello."}]],
        ["user", "/compact"],
        ["assistant", []],
        ["user", "Anything else?"],
        ["assistant", [{"type": "text", "text": "Nothing else to do."}]],
    ]
    assert_same_run(replace(plain, transcript=session.transcript), session, several_requests_in_a_step=1)


async def test_posttoolusefailure_fires_for_a_failed_command(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """hooks.py's own failing command (``ls /nonexistent_directory``): Claude Code sends the
    failure to PostToolUseFailure, with its error text, not to PostToolUse."""
    scenario = Scenario(
        name="hook-failure",
        build=extension_points.every_hook_event,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_ls", "Bash", {"command": "ls /nonexistent_directory"})),
            ModelReply.say("That directory does not exist."),
        ],
        turns=["Run this command: ls /nonexistent_directory"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    failed = [h for h in plain.hooks if h["name"] == "PostToolUseFailure"]
    assert len(failed) == 1 and failed[0]["error"].startswith("Exit code 2")
    assert [h["name"] for h in plain.hooks] == [
        "UserPromptSubmit",
        "PreToolUse",
        "can_use_tool",
        "PostToolUseFailure",
        "Stop",
    ]
    assert_same_run(plain, session)


async def test_sub_agent_hook_outputs_reach_plains_sub_agent_only(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Plain Claude Code puts a SubagentStart hook's ``additionalContext`` at the head of the
    sub-agent's environment block, and so does the session (matrix row 6: faithful). A
    SubagentStop ``block`` keeps plain's sub-agent going (its reason as "Stop hook feedback",
    then SubagentStop again with ``stop_hook_active``); the session fires the hook where plain
    does and does not apply its block (row 7, documented): its sub-agent answers once and that
    report is final."""
    scenario = Scenario(
        name="sub-agent-hook-outputs",
        build=extension_points.sub_agent_hook_outputs,
        files={"a.py": "x = 1\n"},
        script=[
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_agent",
                    "Agent",
                    {"description": "Review", "prompt": "Review a.py", "subagent_type": "code-reviewer"},
                )
            ),
            ModelReply.call(ScriptedToolCall("toolu_read", "Read", {"file_path": "a.py"})),
            ModelReply.say("first report"),
            ModelReply.say("second report"),
            ModelReply.say("parent done"),
        ],
        turns=["Review a.py with the code-reviewer"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    def environment(request: dict[str, Any]) -> str:
        system = [m for m in request["messages"] if m["role"] == "system"]
        content = system[0]["content"]
        return content if isinstance(content, str) else "".join(b["text"] for b in content)

    # Plain: parent, sub-agent (Read), sub-agent, sub-agent again (blocked once), parent.
    assert len(plain.requests) == 5 and plain.results == ["parent done"]
    for request in plain.requests[1:4]:
        assert environment(request).startswith(
            f"SubagentStart hook additional context: {extension_points.SUB_AGENT_CONTEXT}\n\n"
        )
    blocked = plain.requests[3]["messages"]
    assert blocked[-3] == {"role": "assistant", "content": [{"type": "text", "text": "first report"}]}
    assert f"Stop hook feedback:\n{extension_points.SUB_AGENT_BLOCK}\n" in blocked[-2]["content"]
    assert [(h["name"], h.get("stop_hook_active")) for h in plain.hooks] == [
        ("SubagentStart", None),
        ("SubagentStop", False),
        ("SubagentStop", True),
    ]
    # The session: parent, the sub-agent's two requests as plain's (the context in both), then
    # the parent (the sub-agent's first answer is its report).
    assert len(session.requests) == 4 and session.results == ["second report"]
    # (Row 33's documented difference aside: the sub-agent notes of plain's system prompt.)
    assert [without_sub_agent_frames(r) for r in session.requests[1:3]] == [
        without_sub_agent_frames(r) for r in plain.requests[1:3]
    ]
    assert extension_points.SUB_AGENT_BLOCK not in str(session.requests)
    assert [(h["name"], h.get("stop_hook_active")) for h in session.hooks] == [
        ("SubagentStart", None),
        ("SubagentStop", False),
    ]
