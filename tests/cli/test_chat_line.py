"""The message line in a pseudo-terminal: history kept across runs and recalled with the up
arrow, and Tab completing the slash commands."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory

from sessionflow.demo import ModelReply, ScriptedToolCall
from sessionflow_cli.chat._terminal import HISTORY_LINES, SlashCompleter, chat_history
from tests.cli.conftest import Cli, finish, ready_for_keys

UP = "\x1b[A"


def test_history_is_recalled_with_the_up_arrow_in_a_later_run(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("First answer."), ModelReply.say("Second answer.")])
    first = cli.spawn("chat", "-f", "scripted")
    first.expect("you> ")
    first.sendline("remember the milk")
    first.expect_exact("First answer.")
    first.expect("you> ")
    ready_for_keys(first)
    first.sendline("and the eggs")
    first.expect_exact("Second answer.")
    first.expect("you> ")
    first.sendline("/exit")
    assert finish(first) == 0
    history = cli.home / ".sessionflow" / "history"
    assert "+remember the milk" in history.read_text()
    assert stat.S_IMODE(history.stat().st_mode) == 0o600

    cli.script([ModelReply.say("Third answer.")])
    second = cli.spawn("chat", "-f", "scripted")
    second.expect("you> ")
    ready_for_keys(second)
    second.send(UP + UP + "\r")  # two lines back: the first run's first message
    second.expect_exact("Third answer.")
    second.expect("you> ")
    second.sendline("/exit")
    assert finish(second) == 0
    assert cli.requests()[-1].last_user_text() == "remember the milk"


def test_approval_answers_stay_out_of_the_history(cli: Cli) -> None:
    cli.write_config()
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("c1", "publish_note", {"text": "x"})),
            ModelReply.say("Done."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    child.expect("you> ")
    child.sendline("publish it")
    child.expect_exact("approve?")
    child.sendline("n nope")
    child.expect_exact("Done.")
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    lines = (cli.home / ".sessionflow" / "history").read_text().splitlines()
    assert "+publish it" in lines and "+n nope" not in lines and "+/exit" not in lines


def test_tab_completes_slash_commands(cli: Cli) -> None:
    cli.write_config()
    child = cli.spawn("chat", "-f", "scripted")
    child.expect("you> ")
    ready_for_keys(child)
    # Completion runs after the key that asks for it: wait for it (this dumb terminal echoes
    # the last character the buffer gained) before pressing Enter.
    child.send("/he\t")
    child.expect_exact("/hep")
    child.send("\r")
    child.expect_exact("Type a message and press Enter.")
    child.expect("you> ")
    ready_for_keys(child)
    child.send("/mo\t")  # the command, then one of the allowed models
    child.expect_exact("/mol")
    child.send(" scr\t")
    child.expect_exact(" scrd")
    child.send("\r")
    child.expect_exact("The next messages use the model scripted.")
    child.expect("you> ")
    ready_for_keys(child)
    child.send("/ex\t")
    child.expect_exact("/ext")
    child.send("\r")
    assert finish(child) == 0
    assert "unknown command" not in (cli.home / "transcript.txt").read_text()


def test_the_completer(tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(b"")
    completer = SlashCompleter(lambda: ["gpt-5", "gpt-5-mini", "claude"])

    def complete(text: str) -> list[str]:
        found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
        return [c.text for c in found]

    assert complete("/") == ["/help", "/image", "/model", "/exit", "/quit"]
    assert complete("/m") == ["/model"]
    assert complete("/model gpt") == ["gpt-5", "gpt-5-mini"]
    assert complete("hello /m") == []
    assert complete(f"/image {tmp_path}/ch") == ["art.png"]


def test_the_history_file_keeps_the_last_lines_and_skips_a_leading_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONFLOW_HOME", str(tmp_path / "sf"))
    history = chat_history()
    for n in range(HISTORY_LINES + 5):
        history.append_string(f"message {n}")
    history.append_string(" my secret token")
    history.append_string("/exit")
    path = tmp_path / "sf" / "history"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = list(FileHistory(str(path)).load_history_strings())
    assert len(again) == HISTORY_LINES + 5 and again[0] == f"message {HISTORY_LINES + 4}"
    chat_history()  # a later chat keeps the last HISTORY_LINES
    kept = list(FileHistory(str(path)).load_history_strings())
    assert len(kept) == HISTORY_LINES
    assert kept[0] == f"message {HISTORY_LINES + 4}" and kept[-1] == "message 5"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
