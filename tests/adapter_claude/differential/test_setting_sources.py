"""``setting_sources``: a project's CLAUDE.md, settings and slash commands reach the model as in plain.

The project (`extension_points.PROJECT_FILES`) has a CLAUDE.md, a ``.claude/settings.json``
that allows one command and denies reading ``secret.txt``, and a ``/greet`` command.
Plain Claude Code shows the model the CLAUDE.md with the first prompt, expands ``/greet``,
denies the read by the rule (with its own words for a path rule) and, since nobody trusted
the workspace, ignores the project's allow rule: it asks ``can_use_tool`` about the command.
The session must send the same requests, apply the same rules and ask the same.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import extension_points
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both, tool_results

TOUCH = "touch made-by-the-project.txt"


def _texts(request: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for message in cast(list[dict[str, Any]], request["messages"]):
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else cast(list[dict[str, Any]], content)
        found += [str(b["text"]) for b in blocks if isinstance(b.get("text"), str)]
    return found


async def test_a_projects_claude_md_settings_and_commands(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="setting-sources",
        build=extension_points.project_settings,
        files=extension_points.PROJECT_FILES,
        script=lambda workspace: [
            ModelReply.say("Bonjour Bob."),
            ModelReply.call(
                ScriptedToolCall("toolu_secret", "Read", {"file_path": str(workspace / "secret.txt")})
            ),
            ModelReply.say("Je ne peux pas le lire."),
            ModelReply.call(ScriptedToolCall("toolu_touch", "Bash", {"command": TOUCH})),
            ModelReply.say("C'est fait."),
        ],
        turns=["/greet Bob", "Read secret.txt", "Run the project's command"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 5
    first = _texts(plain.requests[0])
    assert any("Contents of <workspace>/CLAUDE.md" in t and "Always answer in French." in t for t in first)
    assert any("Say hello to Bob politely." in t for t in first)
    assert tool_results(plain.requests[2])["toolu_secret"] == (
        "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>",
        True,
    )
    # An untrusted workspace's allow rules do not count: can_use_tool is asked, once.
    assert [(h["name"], h["input"]) for h in plain.hooks] == [("can_use_tool", {"command": TOUCH})]
    assert "made-by-the-project.txt" in plain.files
    assert plain.asked == [] and session.asked == []
    # Deliberate (docs/extension-points/claude-agent-sdk.md, slash commands): the session
    # stores the message as the user sent it; Claude Code's history holds its expansion.
    sent = ["user", "/greet Bob"]
    assert sent in session.transcript and sent not in plain.transcript
    expanded = [item for item in plain.transcript if item[0] == "user" and "/greet" in str(item[1])]
    assert len(expanded) == 1
    at = plain.transcript.index(expanded[0])
    # The CLI applies a deny rule itself, before any hook: it answers the call and asks the
    # model again in the same step, as for a tool that does not exist (adapter README, Limits).
    assert_same_run(
        replace(plain, transcript=[*plain.transcript[:at], sent, *plain.transcript[at + 1 :]]),
        session,
        several_requests_in_a_step=1,
    )
