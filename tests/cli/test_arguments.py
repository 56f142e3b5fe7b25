"""Where the command goes among the options (`arrange`), and `-p`'s message (`prompt_text`):
the rules, case by case, without a process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest

from sessionflow_cli._errors import UsageError
from sessionflow_cli._main import arrange, build_parser
from sessionflow_cli._prompt import prompt_text, stdin_is_given


@pytest.mark.parametrize(
    ("argv", "arranged"),
    [
        ([], ["chat"]),
        (["sessions"], ["sessions"]),
        (["-f", "langgraph", "sessions", "--json"], ["sessions", "-f", "langgraph", "--json"]),
        (["--framework=langgraph", "sessions"], ["sessions", "--framework=langgraph"]),
        (["-flanggraph", "server", "start"], ["server", "-flanggraph", "start"]),
        (["--config", "sessions", "frameworks"], ["frameworks", "--config", "sessions"]),
        (["-y", "-m", "demo", "-p", "hi"], ["chat", "-y", "-m", "demo", "-p", "hi"]),
        # -p's value is optional: an option after it is not its value, `-` is.
        (["-p", "--model", "demo"], ["chat", "-p", "--model", "demo"]),
        (["-p", "-", "-c"], ["chat", "-p", "-", "-c"]),
        (["-p", "sessions"], ["chat", "-p", "sessions"]),
        (["-c", "-p", "again", "connectors"], ["connectors", "-c", "-p", "again"]),
        (["--help"], ["--help"]),
        (["--", "sessions"], ["chat", "--", "sessions"]),
    ],
)
def test_arrange_puts_the_command_first(argv: list[str], arranged: list[str]) -> None:
    assert arrange(argv, build_parser()) == arranged


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sesions"], "unknown command 'sesions' — did you mean 'sessions'?"),
        (["-f", "x", "--json", "framework"], "unknown command 'framework' — did you mean 'frameworks'?"),
        (["codec"], "unknown command 'codec' — did you mean 'codec-server'?"),
        (["-m", "demo", "hello"], "unknown command 'hello' (commands: chat, init, sessions, connectors,"),
        (["what is this"], "a message goes after -p: sessionflow -p 'what is this'"),
        (["-p", "hi", "extra"], "unknown command 'extra'"),
    ],
)
def test_a_word_that_is_no_command_is_a_usage_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        arrange(argv, build_parser())
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


@pytest.fixture
def piped() -> Iterator[tuple[TextIO, TextIO]]:
    """A pipe: what is written to the second end is read from the first."""
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, encoding="utf-8") as reader, os.fdopen(write_fd, "w", encoding="utf-8") as writer:
        yield reader, writer


def test_the_argument_then_piped_input(piped: tuple[TextIO, TextIO]) -> None:
    reader, writer = piped
    writer.write("line one\nline two\n\n")
    writer.close()
    assert stdin_is_given(reader)
    assert prompt_text("Review this:", reader) == "Review this:\n\nline one\nline two"


def test_dash_reads_only_the_input(piped: tuple[TextIO, TextIO]) -> None:
    reader, writer = piped
    writer.write("only this\n")
    writer.close()
    assert prompt_text("-", reader) == "only this"


def test_empty_input_leaves_the_argument(piped: tuple[TextIO, TextIO]) -> None:
    reader, writer = piped
    writer.close()
    assert prompt_text("just me", reader) == "just me"


def test_blank_input_and_no_argument_is_an_error(piped: tuple[TextIO, TextIO]) -> None:
    reader, writer = piped
    writer.write(" \n\n")
    writer.close()
    with pytest.raises(UsageError, match="-p got an empty message"):
        prompt_text("-", reader)


def test_a_file_counts_as_input_and_dev_null_does_not(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("from a file\n", encoding="utf-8")
    with notes.open(encoding="utf-8") as stream:
        assert prompt_text("Read:", stream) == "Read:\n\nfrom a file"
    with open(os.devnull, encoding="utf-8") as null:
        assert not stdin_is_given(null)
        assert prompt_text("alone", null) == "alone"
        with pytest.raises(UsageError, match="reads standard input, and there is none"):
            prompt_text("-", null)
    assert prompt_text(None) is None
