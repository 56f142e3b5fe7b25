"""`approval_view`: what each kind of approval shows, and the files it will not read."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from rich.console import Console

from sessionflow_cli.chat._approval import DIFF_LINES, approval_view, rewrite_lines
from sessionflow_cli.chat._view import ChatView


def _texts(name: str, args: object, workspace: Path | None) -> tuple[str, list[str]]:
    view = approval_view(name, json.dumps(args), workspace)
    return view.title, [line.text for line in view.lines]


def test_a_write_over_a_file_is_a_unified_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    title, lines = _texts("write_file", {"path": "a.txt", "content": "one\n2\nthree\n"}, tmp_path)
    assert title == "write_file a.txt"
    assert lines == [
        "  --- a/a.txt",
        "  +++ b/a.txt",
        "  @@ -1,3 +1,3 @@",
        "   one",
        "  -two",
        "  +2",
        "   three",
    ]


def test_a_write_of_the_same_text_says_no_change(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("same\n")
    _, lines = _texts("write_file", {"path": "a.txt", "content": "same\n"}, tmp_path)
    assert lines == ["  (no change: the file already holds this)"]


def test_a_new_file_is_all_added_and_long_diffs_fold(tmp_path: Path) -> None:
    content = "".join(f"{n}\n" for n in range(DIFF_LINES * 2))
    title, lines = _texts("write_file", {"path": "sub/new.txt", "content": content}, tmp_path)
    assert title == "write_file sub/new.txt (new file)"
    assert lines[:4] == [
        "  --- /dev/null",
        "  +++ b/sub/new.txt",
        f"  @@ -0,0 +1,{DIFF_LINES * 2} @@",
        "  +0",
    ]
    assert len(lines) == DIFF_LINES + 1
    assert lines[-1] == f"  … {DIFF_LINES * 2 + 3 - DIFF_LINES} more lines"


def test_an_edit_diffs_the_file_it_would_leave(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 1\n")
    args = {"path": "a.py", "old_string": "1", "new_string": "2", "replace_all": True}
    title, lines = _texts("edit_file", args, tmp_path)
    assert title == "edit_file a.py (every occurrence)"
    assert lines[3:] == ["  -x = 1", "  -y = 1", "  +x = 2", "  +y = 2"]
    _, once = _texts("edit_file", {**args, "old_string": "x = 1", "replace_all": False}, tmp_path)
    assert once[3:] == ["  -x = 1", "  +2", "   y = 1"]


def test_an_edit_that_cannot_apply_says_so_and_shows_the_change(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    _, lines = _texts("edit_file", {"path": "a.py", "old_string": "zzz", "new_string": "yyy"}, tmp_path)
    assert lines[0] == "  (the text to replace is not in the file now: the edit will fail)"
    assert "  -zzz" in lines and "  +yyy" in lines
    (tmp_path / "twice.py").write_text("x = 1\nx = 1\n")
    _, twice = _texts("edit_file", {"path": "twice.py", "old_string": "x", "new_string": "y"}, tmp_path)
    assert twice[0] == "  (the text to replace occurs 2 times and replace_all is not set: the edit will fail)"
    _, missing = _texts("edit_file", {"path": "b.py", "old_string": "a", "new_string": "b"}, tmp_path)
    assert missing[0] == "  (the file does not exist: the edit will fail)"


def test_files_outside_the_workspace_or_special_are_not_read(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("password\n")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    os.mkfifo(workspace / "pipe")
    for path in ("../secret.txt", "link.txt", str(tmp_path / "secret.txt")):
        _, lines = _texts("write_file", {"path": path, "content": "x\n"}, workspace)
        assert lines[0] == "  (the path is outside the workspace: the tool will refuse it)", path
        assert not any("password" in line for line in lines)
    _, fifo = _texts("write_file", {"path": "pipe", "content": "x\n"}, workspace)  # never blocks
    assert fifo[0] == "  (not a regular file: the tool will refuse it)"
    (workspace / "blob").write_bytes(b"\0\1\2")
    _, binary = _texts("write_file", {"path": "blob", "content": "x\n"}, workspace)
    assert binary[0] == "  (the current file is binary: no diff shown)"


def test_shell_commands_read_as_commands() -> None:
    title, lines = _texts("run_shell_command", {"command": "ls -la", "timeout_seconds": 30}, None)
    assert (title, lines) == ("run_shell_command", ["  $ ls -la", "  (timeout 30 s)"])
    _, multi = _texts("Bash", {"command": "cd src\nmake"}, None)
    assert multi == ["  $ cd src", "  > make"]


def test_other_tools_show_indented_json_and_escape_sequences_are_removed() -> None:
    title, lines = _texts("slack_post", {"channel": "#general", "text": "hi\x1b[2J"}, None)
    assert title == "slack_post"
    assert lines == ["  {", '    "channel": "#general",', '    "text": "hi\\u001b[2J"', "  }"]
    assert approval_view("x", "not json \x1b]0;t\x07", None).lines[0].text == "  not json ]0;t"
    assert [line.text for line in approval_view("x", "{}", None).lines] == ["  (no arguments)"]


def test_the_view_colours_a_diff_only_on_a_colour_terminal(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    args = json.dumps({"path": "a.txt", "content": "new\n"})
    coloured = io.StringIO()
    console = Console(file=coloured, force_terminal=True, color_system="standard")
    ChatView(console, console, workspace=tmp_path).approval("write_file", args)
    assert "\x1b[31m  -old" in coloured.getvalue() and "\x1b[32m  +new" in coloured.getvalue()
    plain = io.StringIO()
    console = Console(file=plain, force_terminal=False, no_color=True)
    ChatView(console, console, workspace=tmp_path).approval("write_file", args)
    assert "\x1b" not in plain.getvalue() and "  -old\n  +new\n" in plain.getvalue()


def test_a_rewrite_is_shown_as_a_diff_of_the_arguments() -> None:
    lines = rewrite_lines('{"to": "ana", "amount": 10}', '{"amount": 20, "to": "ana"}')
    texts = [(line.kind, line.text.strip()) for line in lines]
    assert texts[0] == ("note", "the arguments were changed after they were shown:")
    assert ("removed", '-  "amount": 10,') in texts
    assert ("added", '+  "amount": 20,') in texts
    assert not any(kind in ("removed", "added") and "to" in text for kind, text in texts)
