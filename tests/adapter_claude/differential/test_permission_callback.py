"""tool_permission_callback.py: ``can_use_tool`` is asked exactly where Claude Code asks it, once.

The example's query lists the files, writes ``hello.py`` and runs it. Claude Code runs the
read-only ``ls`` without asking anyone (an empty folder: the model reads "(Bash completed
with no output)"), asks the callback about the ``Write`` (showing it the path made absolute,
which is under ``/tmp/``, so the example's callback denies it) and about the command that
runs the script, and does as the callback says. The session asks the callback about the
same two calls, once each, with the same inputs, and nobody else: the callback's answer is
the approval.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import extension_points, sdk_examples
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both, tool_results

HELLO = "print('Hello, World!')\n"


async def test_the_callback_is_asked_where_claude_code_asks_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="permission-callback",
        build=sdk_examples.tool_permission_callback,
        script=lambda workspace: [
            ModelReply.call(ScriptedToolCall("toolu_ls", "Bash", {"command": "ls"})),
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_write", "Write", {"file_path": str(workspace / "hello.py"), "content": HELLO}
                )
            ),
            ModelReply.call(
                ScriptedToolCall("toolu_run", "Bash", {"command": "python3 safe_output/hello.py"})
            ),
            ModelReply.say("The script printed Hello, World!"),
        ],
        turns=[
            "Please do the following:\n"
            "1. List the files in the current directory\n"
            "2. Create a simple Python hello world script at hello.py\n"
            "3. Run the script to test it"
        ],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4
    assert tool_results(plain.requests[1])["toolu_ls"] == ("(Bash completed with no output)", False)
    assert [(h["tool_name"], h["input"]) for h in plain.hooks] == [
        ("Write", {"file_path": "<workspace>/hello.py", "content": HELLO}),
        ("Bash", {"command": "python3 safe_output/hello.py"}),
    ]
    assert tool_results(plain.requests[2])["toolu_write"] == ("User denied permission", True)
    text, failed = tool_results(plain.requests[3])["toolu_run"]
    assert failed and text.startswith("Exit code 2\npython3: can't open file")
    assert plain.files == {}
    assert plain.asked == [] and session.asked == []
    assert_same_run(plain, session)


async def test_the_callback_rewrites_and_denies_calls(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``updated_input`` is what runs, a deny's message is what the model reads; each call is
    asked once, and a read-only command not at all."""
    scenario = Scenario(
        name="permission-rewrite",
        build=extension_points.redirecting_callback,
        script=lambda workspace: [
            ModelReply.call(ScriptedToolCall("toolu_touch", "Bash", {"command": "touch a.txt"})),
            ModelReply.call(ScriptedToolCall("toolu_cat", "Bash", {"command": "cat a.txt.checked"})),
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_write", "Write", {"file_path": str(workspace / "b.txt"), "content": "b"}
                )
            ),
            ModelReply.say("Touched a.txt; writing b.txt was not allowed."),
        ],
        turns=["Touch a.txt and write b.txt"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [(h["tool_name"], h["input"]) for h in plain.hooks] == [
        ("Bash", {"command": "touch a.txt"}),
        ("Write", {"file_path": "<workspace>/b.txt", "content": "b"}),
    ]
    assert plain.files == {"a.txt.checked": ""}
    assert tool_results(plain.requests[2])["toolu_cat"] == ("(Bash completed with no output)", False)
    assert tool_results(plain.requests[3])["toolu_write"] == ("Write is not allowed here", True)
    assert plain.asked == [] and session.asked == []
    assert_same_run(plain, session)
