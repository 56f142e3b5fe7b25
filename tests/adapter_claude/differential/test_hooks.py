"""hooks.py: PreToolUse, UserPromptSubmit, PostToolUse and permission decision hooks.

The adapter owns PreToolUse and PostToolUse (its README, "What the adapter owns") and
refuses them when the flow is built; the comparison then reports that refusal.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both, tool_results


async def test_pretooluse_blocks_one_command_and_lets_another_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hooks-pre",
        build=sdk_examples.hooks_pretooluse,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_foo", "Bash", {"command": "./foo.sh --help"})),
            ModelReply.say("The hook blocked that command."),
            ModelReply.call(
                ScriptedToolCall("toolu_echo", "Bash", {"command": "echo 'Hello from hooks example!'"})
            ),
            ModelReply.say("It printed: Hello from hooks example!"),
        ],
        turns=[
            "Run the bash command: ./foo.sh --help",
            "Run the bash command: echo 'Hello from hooks example!'",
        ],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4
    assert tool_results(plain.requests[1])["toolu_foo"] == (
        "PreToolUse:Bash hook error: Command contains invalid pattern: foo.sh",
        True,
    )
    assert tool_results(plain.requests[3])["toolu_echo"] == ("Hello from hooks example!", False)
    assert [h["name"] for h in plain.hooks] == ["check_bash_command", "check_bash_command"]
    assert plain.asked == []
    # Deliberate (adapter README, "Extension points and deliberate differences"): the
    # session's floor asks about the `Bash` call that plain's `allowed_tools` lets run.
    assert_same_run(plain, session, session_asked=[("Bash", {"command": "echo 'Hello from hooks example!'"})])


async def test_userpromptsubmit_adds_context(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hooks-prompt",
        build=sdk_examples.hooks_userpromptsubmit,
        script=[ModelReply.say("Your favorite color is hot pink.")],
        turns=["What's my favorite color?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    # The CLI sends the hook's context as a role "system" entry of `messages`, compared
    # like every other part of the request.
    assert (
        plain.hooks[0]["output"]["hookSpecificOutput"]["additionalContext"] == "My favorite color is hot pink"
    )
    system = [str(m["content"]) for m in plain.requests[0]["messages"] if m["role"] == "system"]
    assert any("My favorite color is hot pink" in text for text in system)
    assert [h["name"] for h in plain.hooks] == ["add_custom_instructions"]
    assert plain.results == ["Your favorite color is hot pink."]
    assert_same_run(plain, session)


async def test_posttooluse_reviews_a_commands_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The example's ``ls /nonexistent_directory`` fails, and this CLI sends a failed call to
    ``PostToolUseFailure``, not to the example's ``PostToolUse`` hook; a command that succeeds
    with "error" in its output makes the hook answer."""
    scenario = Scenario(
        name="hooks-post",
        build=sdk_examples.hooks_posttooluse,
        script=[
            ModelReply.call(
                ScriptedToolCall("toolu_echo", "Bash", {"command": "echo 'error: disk almost full'"})
            ),
            ModelReply.say("The command reported an error."),
        ],
        turns=["Run this command: echo 'error: disk almost full'"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    assert tool_results(plain.requests[1])["toolu_echo"] == ("error: disk almost full", False)
    assert [h["name"] for h in plain.hooks] == ["review_tool_output"]
    assert plain.hooks[0]["output"]["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert plain.asked == []
    # Deliberate (adapter README, "Extension points and deliberate differences"): the
    # session's floor asks about the `Bash` call that plain's `allowed_tools` lets run.
    assert_same_run(plain, session, session_asked=[("Bash", {"command": "echo 'error: disk almost full'"})])


async def test_permission_decision_denies_one_write_and_allows_another(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hooks-decision",
        build=sdk_examples.hooks_decision_fields,
        script=lambda workspace: [
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_important",
                    "Write",
                    {"file_path": str(workspace / "important_config.txt"), "content": "test data"},
                )
            ),
            ModelReply.say("That write was blocked."),
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_regular",
                    "Write",
                    {"file_path": str(workspace / "regular_file.txt"), "content": "test data"},
                )
            ),
            ModelReply.say("Wrote regular_file.txt."),
        ],
        turns=[
            "Write the text 'test data' to a file called important_config.txt",
            "Write the text 'test data' to a file called regular_file.txt",
        ],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4
    assert tool_results(plain.requests[1])["toolu_important"] == (
        "PreToolUse:Write hook error: Security policy blocks writes to important files",
        True,
    )
    assert not tool_results(plain.requests[3])["toolu_regular"][1]
    assert plain.files == {"regular_file.txt": "test data"}
    assert plain.asked == []
    # Deliberate (adapter README, "Extension points and deliberate differences"): the
    # session's floor asks about the `Write` the hook allowed that plain's `allowed_tools` lets run.
    written = {"content": "test data", "file_path": "<workspace>/regular_file.txt"}
    assert_same_run(plain, session, session_asked=[("Write", written)])
