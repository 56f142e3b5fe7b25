"""`--resume` after the command was killed, `sessions`, and sessions of another flow type."""

from __future__ import annotations

import signal

from sessionflow.demo import ModelReply, ScriptedToolCall
from tests.cli.conftest import Cli, expect_group, finish


def test_resume_after_sigkill_continues_with_history(cli: Cli) -> None:
    cli.write_config()
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("c1", "publish_note", {"text": "kept"})),
            ModelReply.say("Published after the restart."),
            ModelReply.say("You asked me to publish a note."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    session_id = expect_group(child, r"New session (\S+);")
    child.expect("you> ")
    child.sendline("please publish a note")
    child.expect_exact("approve? [y / n <reason>]")
    child.kill(signal.SIGKILL)  # no chance to clean up, mid-approval
    child.close()
    assert child.signalstatus == signal.SIGKILL
    assert not (cli.workspace / "published.txt").exists()

    resumed = cli.spawn("chat", "-f", "scripted", "-r", session_id)
    resumed.expect_exact(f"Resuming session {session_id} (1 turn).")
    resumed.expect_exact("you> please publish a note")
    resumed.expect_exact("[approval] publish_note")
    resumed.expect_exact('"text": "kept"')
    resumed.expect_exact("approve?")
    resumed.sendline("y")
    resumed.expect_exact("Published after the restart.")
    resumed.expect("you> ")
    resumed.sendline("what did I ask?")
    resumed.expect_exact("You asked me to publish a note.")
    resumed.expect("you> ")
    resumed.sendline("/exit")
    assert finish(resumed) == 0
    assert (cli.workspace / "published.txt").read_text() == "kept\n"
    last = cli.requests()[-1]
    assert last.saw("please publish a note") and last.saw("Published after the restart.")
    assert last.last_user_text() == "what did I ask?"

    listing = cli.run("sessions", "-f", "scripted")
    assert listing.returncode == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if session_id in line)
    assert "idle" in row and row.rstrip().rstrip("│ ").endswith("2")

    # Another workspace is another flow type: its command may neither list nor continue it.
    other = cli.workspace.parent / "elsewhere"
    other.mkdir()
    elsewhere = cli.run("sessions", "-f", "scripted", cwd=other)
    assert elsewhere.returncode == 0 and session_id not in elsewhere.stdout
    refused = cli.run("-f", "scripted", "-r", session_id, "-p", "hello", cwd=other)
    assert refused.returncode == 2, refused.stderr
    assert (
        "belongs to flow type" in refused.stderr
        and f"in workspace {cli.workspace.resolve()}" in refused.stderr
    )
    missing = cli.run("-f", "scripted", "-r", "no-such-session", "-p", "hello")
    assert missing.returncode == 2 and "there is no session 'no-such-session'" in missing.stderr
