"""`-p` the way other CLIs take it: piped input, `--output-format json|stream-json`,
`-c/--continue`, and Ctrl-C (exit 130). Each runs the command as a process."""

from __future__ import annotations

import json
import signal
import subprocess
from typing import Any

from sessionflow.demo import ModelReply, ScriptedToolCall
from tests.cli.conftest import COMMAND, Cli, expect_group, finish, ready_for_keys


def _json(stdout: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(stdout)
    return document


def _shell(cli: Cli, line: str) -> subprocess.CompletedProcess[str]:
    """A shell line, as a person types it (`sessionflow` is the command under test)."""
    return subprocess.run(
        ["bash", "-c", line.replace("sessionflow", COMMAND)],
        cwd=cli.workspace,
        env=cli.environment({"SESSIONFLOW_SERVER_PORT": str(cli.server_port)}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_piped_question_prints_one_json_object_and_continue_takes_it_up(cli: Cli) -> None:
    (cli.workspace / "README.md").write_text("Shopping list\nmilk\n")
    # The demo on the defaults (no configuration file): the test server answers `server: auto`.
    first = _shell(cli, "echo question | sessionflow -p --model demo --output-format json")
    assert first.returncode == 0, first.stderr
    result = _json(first.stdout)  # stdout is the JSON object and nothing else
    assert result["type"] == "result" and result["status"] == "completed" and result["is_error"] is False
    assert 'I read a file that starts with "Shopping list".' in result["result"]
    session_id = result["session_id"]
    assert session_id.startswith("builtin-")
    assert result["usage"]["requests"] >= 3 and result["usage"]["total_tokens"] > 0
    calls = {call["tool_name"]: call["status"] for call in result["tool_calls"]}
    # The write waits for approval, which -p refuses without --approve.
    assert calls == {"list_directory": "succeeded", "read_file": "succeeded", "write_file": "rejected"}
    assert "refused: pass --approve write_file to approve it" in first.stderr
    assert result["continue_with"].endswith(f"-r {session_id}")

    again = _shell(cli, "sessionflow -c -p again --model demo --output-format json")
    assert again.returncode == 0, again.stderr
    continued = _json(again.stdout)
    assert continued["session_id"] == session_id
    assert f"Continuing the latest session of this folder: {session_id}" in again.stderr
    # The demo model answers a later turn with what the session holds: the first turn.
    assert '(demo) You said: "again". This session holds' in continued["result"]
    held = int(continued["result"].split("This session holds ")[1].split()[0])
    assert held >= 2
    assert continued["tool_calls"] == []


def test_continue_picks_the_latest_session_of_this_folder(cli: Cli) -> None:
    cli.write_config()
    cli.script(
        [
            ModelReply.say("First answer."),
            ModelReply.say("Second answer."),
            ModelReply.say("You asked about bananas."),
        ]
    )
    older = cli.run("-f", "scripted", "-p", "about apples", "--output-format", "json")
    assert older.returncode == 0, older.stderr
    newer = cli.run("-f", "scripted", "-p", "about bananas", "--output-format", "json")
    assert newer.returncode == 0, newer.stderr
    newer_id = _json(newer.stdout)["session_id"]
    assert newer_id != _json(older.stdout)["session_id"]

    continued = cli.run("-f", "scripted", "--continue", "-p", "what did I ask?")
    assert continued.returncode == 0, continued.stderr
    assert continued.stdout.strip() == "You asked about bananas."
    assert f"session {newer_id}" in continued.stderr
    last = cli.requests()[-1]
    assert last.last_user_text() == "what did I ask?"
    assert last.saw("about bananas") and last.saw("Second answer.")
    assert not last.saw("about apples")

    # Another folder is another flow type: nothing to continue there (exit 1, says why).
    other = cli.workspace.parent / "elsewhere"
    other.mkdir()
    nothing = cli.run("-f", "scripted", "-c", "-p", "hello", cwd=other)
    assert nothing.returncode == 1, nothing.stderr
    assert "no session to continue: framework 'scripted' has no open session in" in nothing.stderr
    assert len(cli.requests()) == 3
    # -c and -r name the session two ways: a usage error.
    both = cli.run("-f", "scripted", "-c", "-r", newer_id, "-p", "hello")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_the_prompt_argument_comes_first_then_the_piped_input(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("Two lines."), ModelReply.say("Read it.")])
    both = cli.run("-f", "scripted", "-p", "Summarise this:", stdin="line one\nline two\n")
    assert both.returncode == 0, both.stderr
    assert both.stdout.strip() == "Two lines."
    assert cli.requests()[0].last_user_text() == "Summarise this:\n\nline one\nline two"
    dash = cli.run("-f", "scripted", "-p", "-", stdin="only the input\n")
    assert dash.returncode == 0, dash.stderr
    assert cli.requests()[1].last_user_text() == "only the input"
    blank = cli.run("-f", "scripted", "-p", stdin="  \n")
    assert blank.returncode == 2 and "-p got an empty message" in blank.stderr
    # /dev/null is no input: a bare -p has nothing to send.
    missing = cli.run("-f", "scripted", "-p")
    assert missing.returncode == 2 and "reads standard input, and there is none" in missing.stderr
    assert len(cli.requests()) == 2


def test_stream_json_prints_the_turn_event_by_event(cli: Cli) -> None:
    cli.write_config()
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("c1", "publish_note", {"text": "kept"}), text="Publishing. "),
            ModelReply.say("Published it.", chunks=["Publi", "shed ", "it."]),
        ]
    )
    result = cli.run(
        "-f",
        "scripted",
        "-p",
        "publish a note",
        "--output-format",
        "stream-json",
        "--approve",
        "publish_note",
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    types = [line["type"] for line in lines]
    assert types[0] == "session" and types[-1] == "result"
    session_id = lines[0]["session_id"]
    assert lines[-1]["session_id"] == session_id and lines[-1]["result"] == "Published it."
    for needed in ("turn_started", "text_delta", "tool_call_started", "interrupt_raised", "turn_completed"):
        assert needed in types, types
    assert types.index("interrupt_raised") < types.index("tool_call_started") < types.index("turn_completed")
    started = next(line for line in lines if line["type"] == "tool_call_started")
    assert started["data"]["tool_name"] == "publish_note"
    finished = next(line for line in lines if line["type"] == "tool_call_finished")
    assert finished["data"]["status"] == "succeeded"
    assert "Published it." in "".join(line["data"]["text"] for line in lines if line["type"] == "text_delta")
    assert lines[-1]["tool_calls"][0]["tool_name"] == "publish_note"
    assert lines[-1]["tool_calls"][0]["status"] == "succeeded"
    assert lines[-1]["usage"] == {"requests": 2, "input_tokens": 20, "output_tokens": 10, "total_tokens": 30}
    assert (cli.workspace / "published.txt").read_text() == "kept\n"


def test_a_failed_turn_in_json_exits_1_with_the_error(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.fail("http_500", "model down")] * 3)
    result = cli.run("-f", "scripted", "-p", "hello?", "--output-format", "json")
    assert result.returncode == 1, result.stderr
    document = _json(result.stdout)
    assert document["status"] == "failed" and document["is_error"] is True
    assert "model down" in document["error"] and document["result"] == ""
    # Without -p there is no single answer to format.
    alone = cli.run("-f", "scripted", "--output-format", "json")
    assert alone.returncode == 2 and "--output-format goes with -p" in alone.stderr


def test_ctrl_c_during_a_prompt_exits_130(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("never", delay_seconds=60)])
    child = cli.spawn("-f", "scripted", "-p", "think slowly")
    session_id = expect_group(child, r"session (\S+)")
    cli.model_server.wait_for_requests(cli.key, 1, timeout=60)
    child.sendintr()
    child.expect_exact(f"The session goes on; continue it with: sessionflow chat -f scripted -r {session_id}")
    child.expect_exact("Interrupted.")
    assert finish(child) == 130
    assert "never" not in (cli.home / "transcript.txt").read_text()


def test_ctrl_c_during_a_json_prompt_exits_130_and_prints_no_result(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("never", delay_seconds=60)])
    child = cli.spawn("-f", "scripted", "-p", "think slowly", "--output-format", "stream-json")
    child.expect_exact('{"type": "session"')
    cli.model_server.wait_for_requests(cli.key, 1, timeout=60)
    child.sendintr()
    child.expect_exact("The session goes on; continue it with: ")
    child.expect_exact("Interrupted.")
    assert finish(child) == 130
    assert '"type": "result"' not in (cli.home / "transcript.txt").read_text()


def test_a_bare_prompt_at_a_terminal_asks_for_the_message(cli: Cli) -> None:
    cli.write_config()
    child = cli.spawn("-f", "scripted", "-p")
    child.expect_exact("-p without a message reads standard input, and there is none")
    assert finish(child) == 2
    assert cli.requests() == []


def test_continue_in_the_terminal_chat_and_ctrl_d_exits_0(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("Noted: kiwis."), ModelReply.say("You told me about kiwis.")])
    first = cli.run("-f", "scripted", "-p", "remember kiwis")
    assert first.returncode == 0, first.stderr
    child = cli.spawn("-f", "scripted", "-c")
    session_id = expect_group(child, r"Continuing the latest session of this folder: (\S+)")
    child.expect_exact(f"Resuming session {session_id} (1 turn).")
    child.expect_exact("you> remember kiwis")
    child.expect("you> ")
    child.sendline("what did I say?")
    child.expect_exact("You told me about kiwis.")
    child.expect("you> ")
    ready_for_keys(child)
    child.sendeof()  # Ctrl-D leaves without an error
    child.expect_exact(f"-r {session_id}")
    assert finish(child) == 0
    assert cli.requests()[-1].saw("Noted: kiwis.")


def test_continue_refuses_a_session_whose_earlier_turn_waits_for_an_approval(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.call(ScriptedToolCall("c1", "publish_note", {"text": "kept"}))])
    child = cli.spawn("chat", "-f", "scripted")
    session_id = expect_group(child, r"New session (\S+);")
    child.expect("you> ")
    child.sendline("please publish a note")
    child.expect_exact("approve? [y / n <reason>]")
    child.kill(signal.SIGKILL)  # the approval stays pending in the session
    child.close()

    for output_format in ("text", "json"):
        refused = cli.run("-f", "scripted", "-c", "-p", "hello?", "--output-format", output_format)
        assert refused.returncode == 1, refused.stderr
        assert (
            f"session {session_id} waits for the approval of publish_note in an earlier turn; "
            f"answer it in the chat: sessionflow chat -f scripted -r {session_id}"
        ) in refused.stderr
        assert refused.stdout == ""
    assert len(cli.requests()) == 1  # the message was never sent


def test_stdout_carries_the_json_alone_whatever_else_writes_to_it(cli: Cli) -> None:
    # A tool of the worker in this process prints to standard output (Temporal's core logs
    # its warnings there too): with -p that goes to standard error.
    cli.write_config()
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("c1", "lookup", {"query": "print:noise from a tool"})),
            ModelReply.say("Looked it up."),
        ]
    )
    result = cli.run("-f", "scripted", "-p", "look it up", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    document = _json(result.stdout)
    assert document["result"] == "Looked it up."
    assert document["tool_calls"][0]["tool_name"] == "lookup"
    assert document["tool_calls"][0]["status"] == "succeeded"
    assert "noise from a tool" in result.stderr and "noise" not in result.stdout
