"""The preview a waiting call records for every client (`AgentSessionOptions.approval_preview`).

It is made on the worker, which runs the tool in the caller's workspace, so the diff of a
``write_file``/``Write`` or ``edit_file``/``Edit`` is against the file the tool would
change, whichever client (terminal, console, API) shows it. The current file is read as
the terminal's approval view reads it (`sessionflow_cli.chat._approval.read_current`):
a regular UTF-8 file inside the workspace, at most 1 MB, opened without blocking.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from sessionflow import ApprovalPreview
from sessionflow.kit import DeferredToolCall
from sessionflow_cli.chat._approval import read_current

__all__ = ["approval_previewer"]

_WRITE_TOOLS = frozenset({"write_file", "Write"})
_EDIT_TOOLS = frozenset({"edit_file", "Edit"})
_SHELL_TOOLS = frozenset({"run_shell_command", "Bash"})


def approval_previewer(
    workspace: Path,
) -> Callable[[DeferredToolCall, Mapping[str, Any]], ApprovalPreview | None]:
    """The flow's previewer for calls that change files or run commands in `workspace`."""

    def preview(call: DeferredToolCall, settings: Mapping[str, Any]) -> ApprovalPreview | None:
        del settings  # the same workspace for every turn of the flow
        return _preview(call.tool_name, call.arguments, workspace)

    return preview


def _preview(name: str, arguments: str, workspace: Path) -> ApprovalPreview | None:
    try:
        parsed: Any = json.loads(arguments or "{}")
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    args = cast(dict[str, Any], parsed)
    path = _text(args, "path", "file_path")
    if name in _WRITE_TOOLS and path is not None and isinstance(args.get("content"), str):
        return _write(path, str(args["content"]), workspace)
    old, new = args.get("old_string"), args.get("new_string")
    if name in _EDIT_TOOLS and path is not None and isinstance(old, str) and isinstance(new, str):
        return _edit(path, old, new, args.get("replace_all") is True, workspace)
    command = _text(args, "command")
    if name in _SHELL_TOOLS and command is not None:
        return ApprovalPreview(kind="command", text=command)
    return None


def _write(path: str, content: str, workspace: Path) -> ApprovalPreview:
    current = read_current(workspace, path)
    if current.note is not None:
        return ApprovalPreview(kind="diff", summary=_note(current.note), text=_diff(path, None, content))
    if not current.exists or current.text is None:
        return ApprovalPreview(kind="diff", summary="new file", text=_diff(path, None, content))
    diff = _diff(path, current.text, content)
    if not diff:
        return ApprovalPreview(kind="diff", summary="no change: the file already holds this")
    lines = len(current.text.splitlines())
    return ApprovalPreview(kind="diff", summary=f"overwrites {lines} line{_s(lines)}", text=diff)


def _edit(path: str, old: str, new: str, replace_all: bool, workspace: Path) -> ApprovalPreview:
    current = read_current(workspace, path)
    count = current.text.count(old) if current.text is not None and old else 0
    if current.text is not None and (count == 1 or (count > 1 and replace_all)):
        after = current.text.replace(old, new) if replace_all else current.text.replace(old, new, 1)
        changed = sum(
            1 for line in difflib.ndiff(current.text.splitlines(), after.splitlines()) if line[:1] in "+-"
        )
        summary = f"edits {changed} line{_s(changed)}" + (f" ({count} occurrences)" if count > 1 else "")
        return ApprovalPreview(kind="diff", summary=summary, text=_diff(path, current.text, after))
    if count > 1:
        why = f"the text to replace occurs {count} times and replace_all is not set: the edit will fail"
    elif current.note is not None:
        why = _note(current.note)
    elif not current.exists:
        why = "the file does not exist: the edit will fail"
    else:
        why = "the text to replace is not in the file now: the edit will fail"
    return ApprovalPreview(kind="diff", summary=why, text=_diff(path, old, new))


def _diff(path: str, before: str | None, after: str) -> str:
    source = "/dev/null" if before is None else f"a/{path}"
    lines = difflib.unified_diff(
        (before or "").splitlines(), after.splitlines(), source, f"b/{path}", lineterm="", n=3
    )
    return "\n".join(lines)


def _note(note: str) -> str:
    return note.strip().removeprefix("(").removesuffix(")")


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _text(args: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, str):
            return value
    return None
