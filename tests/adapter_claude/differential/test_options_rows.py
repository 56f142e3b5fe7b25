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
