"""Rows of the extension-point matrix that are options of the CLI: partial messages, output
styles and permission modes, each against the plain SDK on the same scripted server."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import extension_points, sdk_examples
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both, tool_results


async def test_include_partial_messages_example(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """include_partial_messages.py: the partial messages are the client's stream, not the
    model's input; the requests (thinking budget from ``env`` included) and answers are the
    same. The session always streams text and thinking deltas as its own events."""
    scenario = Scenario(
        name="partial-messages",
        build=sdk_examples.include_partial_messages,
        script=[ModelReply.say("Why did the chicken cross the road?", reasoning="Three jokes: ...")],
        turns=["Think of three jokes, then tell one"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    assert plain.results == ["Why did the chicken cross the road?"]
    assert_same_run(plain, session)


async def test_an_output_style_from_the_projects_settings(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="output-style",
        build=extension_points.output_style,
        files=extension_points.OUTPUT_STYLE_FILES,
        script=[ModelReply.say("Hi.")],
        turns=["Say hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Claude Code puts the style into its environment block, a role 'system' entry.
    environment = [
        block["text"]
        for m in plain.requests[0]["messages"]
        if m["role"] == "system"
        for block in m["content"]
    ]
    assert any("# Output Style: Terse\nAnswer in one short sentence." in text for text in environment)
    assert_same_run(plain, session)


TOUCH = "touch made.txt"


def _asked(run_hooks: list[dict[str, Any]]) -> list[str]:
    return [cast(str, h["tool_name"]) for h in run_hooks if h["name"] == "can_use_tool"]


@pytest.mark.parametrize(
    ("mode", "callback_asked", "session_asked"),
    [
        # Claude Code asks the callback about the write and the command.
        ("default", ["Write", "Bash"], []),
        # It lets the write and a file command run unasked; the session's floor asks a
        # person about both.
        (
            "acceptEdits",
            [],
            [("Write", {"file_path": "<workspace>/notes.txt", "content": "n"}), ("Bash", {"command": TOUCH})],
        ),
        # It denies what is not pre-approved, and asks nobody.
        ("dontAsk", [], []),
    ],
)
async def test_permission_modes(
    mode: Any,
    callback_asked: list[str],
    session_asked: list[tuple[str, Any]],
    temporal_address: str,
    model_server: ScriptedModelServer,
    tmp_path: Path,
) -> None:
    scenario = Scenario(
        name=f"mode-{mode}",
        build=extension_points.with_permission_mode(mode),
        script=lambda workspace: [
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_write", "Write", {"file_path": str(workspace / "notes.txt"), "content": "n"}
                )
            ),
            ModelReply.call(ScriptedToolCall("toolu_touch", "Bash", {"command": TOUCH})),
            ModelReply.say("Done."),
        ],
        turns=["Write notes.txt, then touch made.txt"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 3
    assert _asked(plain.hooks) == callback_asked
    if mode == "dontAsk":
        text, is_error = tool_results(plain.requests[1])["toolu_write"]
        assert is_error and "don't ask mode" in text
        assert plain.files == {}
    else:
        assert plain.files == {"notes.txt": "n", "made.txt": ""}
    assert plain.asked == []
    if session_asked:
        assert_same_run(plain, session, session_asked=session_asked)
    else:
        assert_same_run(plain, session)


async def test_disallowed_tools_are_gone_from_the_request(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``disallowed_tools=["Bash"]``: Claude Code offers no Bash, and answers a call to it
    itself, asking the model again (in the session, inside the same model step)."""
    scenario = Scenario(
        name="disallowed",
        build=extension_points.without_bash,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_ls", "Bash", {"command": "ls"})),
            ModelReply.say("Bash is not available."),
        ],
        turns=["List the files"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert "Bash" not in plain.requests[0]["tools"]
    text, is_error = tool_results(plain.requests[1])["toolu_ls"]
    assert is_error and "No such tool available: Bash" in text
    assert plain.hooks == []
    assert_same_run(plain, session, several_requests_in_a_step=1)


async def test_user_settings_come_from_the_steps_private_folder(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``setting_sources=["user"]``: plain Claude Code reads the user's CLAUDE.md from its config
    folder; every step of the session runs with a private one, so the worker user's ``~/.claude``
    never reaches a session (documented)."""
    scenario = Scenario(
        name="user-settings",
        build=extension_points.user_settings,
        config_files={"CLAUDE.md": "The user likes haiku.\n"},
        script=[ModelReply.say("Hello.")],
        turns=["Say hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    def memory(run: Any) -> list[str]:
        return [t for t in _texts(run.requests[0]) if "The user likes haiku." in t]

    assert len(memory(plain)) == 1 and memory(session) == []
    without = [t for t in _texts(plain.requests[0]) if "The user likes haiku." not in t]
    assert without == _texts(session.requests[0])
    assert plain.results == session.results == ["Hello."]


def _texts(request: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for message in cast(list[dict[str, Any]], request["messages"]):
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else cast(list[dict[str, Any]], content)
        found += [str(b["text"]) for b in blocks if isinstance(b.get("text"), str)]
    return found
