"""The preview a waiting call records on the worker, for every client (issue 44)."""

from __future__ import annotations

import json
from pathlib import Path

from sessionflow import ApprovalPreview, ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall
from sessionflow_cli._approval_preview import approval_previewer

WRITE = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True)


def _preview(workspace: Path, name: str, **arguments: object) -> ApprovalPreview | None:
    call = DeferredToolCall(tool_call_id="c1", tool_name=name, arguments=json.dumps(arguments), policy=WRITE)
    return approval_previewer(workspace)(call, {})


def test_a_write_over_a_file_is_a_diff_that_says_it_overwrites(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("one\ntwo\nthree\n")
    preview = _preview(tmp_path, "write_file", path="notes.md", content="one\n2\nthree\n")
    assert preview == ApprovalPreview(
        kind="diff",
        summary="overwrites 3 lines",
        text="--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three",
    )


def test_a_new_file_and_claude_codes_write(tmp_path: Path) -> None:
    preview = _preview(tmp_path, "Write", file_path="new.txt", content="hi\nthere")
    assert preview is not None
    assert (preview.kind, preview.summary) == ("diff", "new file")
    assert preview.text.splitlines() == ["--- /dev/null", "+++ b/new.txt", "@@ -0,0 +1,2 @@", "+hi", "+there"]


def test_an_edit_counts_its_lines_and_one_that_will_fail_says_why(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    preview = _preview(tmp_path, "edit_file", path="a.py", old_string="y = 2", new_string="y = 3")
    assert preview is not None and preview.summary == "edits 2 lines"
    assert "-y = 2" in preview.text.splitlines() and "+y = 3" in preview.text.splitlines()
    missing = _preview(tmp_path, "edit_file", path="a.py", old_string="z", new_string="w")
    assert missing is not None
    assert missing.summary == "the text to replace is not in the file now: the edit will fail"


def test_a_path_outside_the_workspace_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    preview = _preview(workspace, "write_file", path="../secret.txt", content="x")
    assert preview is not None and "outside the workspace" in preview.summary
    assert "top secret" not in preview.text


def test_a_shell_command_is_a_command_and_other_tools_have_none(tmp_path: Path) -> None:
    assert _preview(tmp_path, "run_shell_command", command="ls -la") == ApprovalPreview(
        kind="command", text="ls -la"
    )
    assert _preview(tmp_path, "refund", order=7) is None
