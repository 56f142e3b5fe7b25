"""Approvals a person can judge, in a pseudo-terminal: a write shows its diff against the
file in the workspace, a shell command shows as a command."""

from __future__ import annotations

from sessionflow import AgentSessionClient, ApprovalPreview, connect
from sessionflow.demo import ModelReply, ScriptedToolCall
from tests.cli.conftest import Cli, expect_group, finish

TOOLS_ON = "local_tools: {files: true, shell: {enabled: true}, web_fetch: false, browser: false}\n"


def test_a_write_approval_shows_a_diff_against_the_current_file(cli: Cli) -> None:
    cli.write_config(f"model: scripted\nserver: {cli.server_address}\n{TOOLS_ON}")
    (cli.workspace / "notes.txt").write_text("milk\neggs\nbread\n")
    new_lines = "".join(f"line {n}\n" for n in range(100))
    cli.script(
        [
            ModelReply.call(
                ScriptedToolCall(
                    "w1", "write_file", {"path": "notes.txt", "content": "milk\nbutter\nbread\n"}
                )
            ),
            ModelReply.say("Changed the list."),
            ModelReply.call(ScriptedToolCall("w2", "write_file", {"path": "long.txt", "content": new_lines})),
            ModelReply.say("Not written."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    child.expect("you> ")
    child.sendline("swap the eggs for butter")
    child.expect_exact("[approval] write_file notes.txt")
    child.expect_exact("--- a/notes.txt")
    child.expect_exact("+++ b/notes.txt")
    child.expect_exact("@@ -1,3 +1,3 @@")
    child.expect_exact(" milk")
    child.expect_exact("-eggs")
    child.expect_exact("+butter")
    child.expect_exact(" bread")
    child.expect_exact("approve? [y / n <reason>]")
    assert "content" not in str(child.before)  # the diff, not the JSON arguments
    child.sendline("y")
    child.expect_exact("[tool] write_file succeeded")
    child.expect_exact("Changed the list.")
    child.expect("you> ")

    # A file that does not exist yet: "new file", every line added, the rest folded.
    child.sendline("write a long file")
    child.expect_exact("[approval] write_file long.txt (new file)")
    child.expect_exact("+line 0")
    child.expect_exact("… 43 more lines")
    child.expect_exact("approve?")
    assert "+line 99" not in str(child.before)
    child.sendline("n too long")
    child.expect_exact("[tool] write_file rejected: too long")
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    assert (cli.workspace / "notes.txt").read_text() == "milk\nbutter\nbread\n"
    assert not (cli.workspace / "long.txt").exists()


def test_an_edit_approval_shows_the_lines_it_changes(cli: Cli) -> None:
    cli.write_config(f"model: scripted\nserver: {cli.server_address}\n{TOOLS_ON}")
    (cli.workspace / "app.py").write_text("def main():\n    print('hello')\n")
    cli.script(
        [
            ModelReply.call(
                ScriptedToolCall(
                    "e1",
                    "edit_file",
                    {"path": "app.py", "old_string": "print('hello')", "new_string": "print('bye')"},
                )
            ),
            ModelReply.say("Edited."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    child.expect("you> ")
    child.sendline("say bye")
    child.expect_exact("[approval] edit_file app.py")
    child.expect_exact("-    print('hello')")
    child.expect_exact("+    print('bye')")
    child.expect_exact("approve?")
    child.sendline("y")
    child.expect_exact("Edited.")
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    assert (cli.workspace / "app.py").read_text() == "def main():\n    print('bye')\n"


def test_a_shell_approval_shows_the_command(cli: Cli) -> None:
    cli.write_config(f"model: scripted\nserver: {cli.server_address}\n{TOOLS_ON}")
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("s1", "run_shell_command", {"command": "ls -la > listing.txt"})),
            ModelReply.say("Fine, not listed."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    child.expect("you> ")
    child.sendline("list the files")
    child.expect_exact("[approval] run_shell_command")
    child.expect_exact("$ ls -la > listing.txt")
    child.expect_exact("approve?")
    assert '"command"' not in str(child.before)  # the command, not its JSON
    child.sendline("n")
    child.expect_exact("Fine, not listed.")
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    assert not (cli.workspace / "listing.txt").exists()


async def test_the_pending_write_records_its_diff_and_reason_for_every_client(cli: Cli) -> None:
    """The worker makes the preview: a console on another machine shows the same diff."""
    cli.write_config(f"model: scripted\nserver: {cli.server_address}\n{TOOLS_ON}")
    (cli.workspace / "notes.txt").write_text("milk\neggs\nbread\n")
    cli.script(
        [
            ModelReply.call(
                ScriptedToolCall(
                    "w1", "write_file", {"path": "notes.txt", "content": "milk\nbutter\nbread\n"}
                )
            ),
            ModelReply.say("Not changed."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    session_id = expect_group(child, r"New session (\S+); it starts with your first message")
    child.expect("you> ")
    child.sendline("swap the eggs for butter")
    child.expect_exact("approve? [y / n <reason>]")
    client = await connect(cli.server_address)
    description = await client.get_workflow_handle(session_id).describe()
    snapshot = await AgentSessionClient(client, description.workflow_type).get_agent_snapshot(session_id)
    [interrupt] = snapshot.pending_interrupts
    assert interrupt.preview == ApprovalPreview(
        kind="diff",
        summary="overwrites 3 lines",
        text="--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n milk\n-eggs\n+butter\n bread",
    )
    # write_file is an idempotent write, which would not ask by default: the reason says why it did.
    assert interrupt.effect == "idempotent_write"
    assert interrupt.reason == "sessionflow asks before every write_file call (the tool's own floor)"
    child.sendline("n not now")
    child.expect_exact("[tool] write_file rejected: not now")
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    assert (cli.workspace / "notes.txt").read_text() == "milk\neggs\nbread\n"
