"""What an approval shows, so a person can judge the call before it runs.

- ``write_file`` and ``edit_file`` (and Claude Code's ``Write`` and ``Edit``): a unified
  diff of what the call would change against the file as it is now in the workspace, or
  ``new file`` when there is none. Long diffs are folded with ``… N more lines``.
- ``run_shell_command`` (and ``Bash``): the command as a command, ``$ ls -la``.
- Every other tool (MCP connectors, the browser, ...): its arguments as indented JSON.

The current file is read here, in the chat's process, only to show it: a regular file
inside the workspace (symbolic links resolved, never leaving it), at most `MAX_DIFF_BYTES`,
opened without blocking, so a FIFO or a device never hangs the prompt. What the tool
itself does is decided by the tool, which checks the path again when it runs.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from sessionflow_local_tools import terminal_safe

__all__ = [
    "DIFF_LINES",
    "MAX_DIFF_BYTES",
    "ApprovalLine",
    "ApprovalView",
    "approval_view",
    "read_current",
    "rewrite_lines",
]

DIFF_LINES = 60
"""Diff lines shown before the rest is folded into ``… N more lines``."""
JSON_LINES = 40
"""Lines of indented JSON arguments shown before the rest is folded."""
MAX_DIFF_BYTES = 1_000_000
"""A current file larger than this is not read: the approval says its size instead."""

_WRITE_TOOLS = frozenset({"write_file", "Write"})
_EDIT_TOOLS = frozenset({"edit_file", "Edit"})
_SHELL_TOOLS = frozenset({"run_shell_command", "Bash"})

LineKind = Literal["header", "hunk", "added", "removed", "context", "note", "command", "json"]


@dataclass(frozen=True)
class ApprovalLine:
    """One line under the ``[approval]`` line, with what it is (which picks its colour)."""

    kind: LineKind
    text: str


@dataclass(frozen=True)
class ApprovalView:
    """The ``[approval] <tool> <subject>`` line and the lines shown under it."""

    title: str
    lines: tuple[ApprovalLine, ...]


@dataclass(frozen=True)
class _Current:
    """The file as it is now: its text, or why it cannot be shown."""

    text: str | None
    exists: bool
    note: str | None = None


def approval_view(name: str, arguments: str, workspace: Path | None) -> ApprovalView:
    """How the approval of the call `name(arguments)` reads at the terminal."""
    try:
        parsed: Any = json.loads(arguments or "{}")
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        text = " ".join((arguments or "").split())
        return ApprovalView(terminal_safe(name), (ApprovalLine("json", f"  {terminal_safe(text)}"),))
    args = cast(dict[str, Any], parsed)
    path = _text(args, "path", "file_path")
    if name in _WRITE_TOOLS and path is not None and isinstance(args.get("content"), str):
        return _write(name, path, str(args["content"]), workspace)
    if (
        name in _EDIT_TOOLS
        and path is not None
        and isinstance(args.get("old_string"), str)
        and isinstance(args.get("new_string"), str)
    ):
        return _edit(name, path, args, workspace)
    command = _text(args, "command")
    if name in _SHELL_TOOLS and command is not None:
        return _shell(name, command, args)
    return _json(name, args)


def rewrite_lines(previous: str, arguments: str) -> tuple[ApprovalLine, ...]:
    """What changed in the call's arguments since they were shown (`AgentInterrupt.previous_arguments`).

    A hook, an edit or a middleware rewrote the call; the person sees that change as a
    diff of the indented JSON, under a note saying so.
    """
    before, after = _pretty(previous), _pretty(arguments)
    lines: list[ApprovalLine] = [ApprovalLine("note", "  the arguments were changed after they were shown:")]
    for line in difflib.unified_diff(
        before.splitlines(), after.splitlines(), "shown", "to run", lineterm="", n=2
    ):
        lines.append(ApprovalLine(_kind(line), f"  {_safe(line)}"))
    return _fold(lines, DIFF_LINES)


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False, sort_keys=True)
    except ValueError:
        return arguments


# -- the views ---------------------------------------------------------------------------


def _write(name: str, path: str, content: str, workspace: Path | None) -> ApprovalView:
    current = read_current(workspace, path)
    title = f"{name} {path}"
    if current.note is not None:
        return ApprovalView(_safe(title), (ApprovalLine("note", current.note), *_added_only(path, content)))
    if not current.exists:
        return ApprovalView(_safe(f"{title} (new file)"), _added_only(path, content))
    assert current.text is not None
    diff = _diff(path, current.text, content)
    if not diff:
        return ApprovalView(
            _safe(title), (ApprovalLine("note", "  (no change: the file already holds this)"),)
        )
    return ApprovalView(_safe(title), diff)


def _edit(name: str, path: str, args: Mapping[str, Any], workspace: Path | None) -> ApprovalView:
    old = str(args["old_string"])
    new = str(args["new_string"])
    replace_all = args.get("replace_all") is True
    title = f"{name} {path}" + (" (every occurrence)" if replace_all else "")
    current = read_current(workspace, path)
    count = current.text.count(old) if current.text is not None and old else 0
    if current.text is not None and (count == 1 or (count > 1 and replace_all)):
        after = current.text.replace(old, new) if replace_all else current.text.replace(old, new, 1)
        return ApprovalView(_safe(title), _diff(path, current.text, after))
    if count > 1:
        why = f"  (the text to replace occurs {count} times and replace_all is not set: the edit will fail)"
        return ApprovalView(_safe(title), (ApprovalLine("note", why), *_diff(path, old, new)))
    if current.note is not None:
        why = current.note
    elif not current.exists:
        why = "  (the file does not exist: the edit will fail)"
    else:
        why = "  (the text to replace is not in the file now: the edit will fail)"
    # Without the file, the change itself: the replaced text against its replacement.
    return ApprovalView(_safe(title), (ApprovalLine("note", why), *_diff(path, old, new)))


def _shell(name: str, command: str, args: Mapping[str, Any]) -> ApprovalView:
    lines = [ApprovalLine("command", f"  $ {_safe(line)}") for line in command.splitlines() or [""]]
    # Continuation lines of a multi-line command read as the shell's own prompt would show them.
    lines = [lines[0], *(ApprovalLine("command", "  > " + item.text[4:]) for item in lines[1:])]
    timeout = args.get("timeout_seconds")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        lines.append(ApprovalLine("note", f"  (timeout {timeout:g} s)"))
    return ApprovalView(_safe(name), tuple(lines))


def _json(name: str, args: Mapping[str, Any]) -> ApprovalView:
    if not args:
        return ApprovalView(_safe(name), (ApprovalLine("note", "  (no arguments)"),))
    text = json.dumps(args, ensure_ascii=False, indent=2)
    lines = [ApprovalLine("json", f"  {_safe(line)}") for line in text.splitlines()]
    return ApprovalView(_safe(name), _fold(lines, JSON_LINES))


# -- diffs -------------------------------------------------------------------------------


def _diff(path: str, before: str, after: str) -> tuple[ApprovalLine, ...]:
    lines: list[ApprovalLine] = []
    shown = _safe(path)
    for line in difflib.unified_diff(
        before.splitlines(), after.splitlines(), f"a/{shown}", f"b/{shown}", lineterm="", n=3
    ):
        lines.append(ApprovalLine(_kind(line), f"  {_safe(line)}"))
    return _fold(lines, DIFF_LINES)


def _added_only(path: str, content: str) -> tuple[ApprovalLine, ...]:
    shown = _safe(path)
    body = content.splitlines()
    lines = [
        ApprovalLine("header", "  --- /dev/null"),
        ApprovalLine("header", f"  +++ b/{shown}"),
        ApprovalLine("hunk", f"  @@ -0,0 +1,{len(body)} @@"),
        *(ApprovalLine("added", f"  +{_safe(line)}") for line in body),
    ]
    return _fold(lines, DIFF_LINES)


def _kind(line: str) -> LineKind:
    if line.startswith(("---", "+++")):
        return "header"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "added"
    if line.startswith("-"):
        return "removed"
    return "context"


def _fold(lines: list[ApprovalLine], limit: int) -> tuple[ApprovalLine, ...]:
    if len(lines) <= limit:
        return tuple(lines)
    more = len(lines) - limit
    return (*lines[:limit], ApprovalLine("note", f"  … {more} more line{'' if more == 1 else 's'}"))


# -- the current file ----------------------------------------------------------------------


def read_current(workspace: Path | None, path: str) -> _Current:
    """The file `path` names in `workspace` as it is now, for a diff (never raises)."""
    if workspace is None:
        return _Current(None, False, "  (no workspace: the current file is not shown)")
    if "\0" in path:
        return _Current(None, False, "  (the path holds a NUL character: the tool will refuse it)")
    try:
        root = workspace.resolve()
        target = Path(os.path.realpath(root / Path(path).expanduser()))
    except (OSError, RuntimeError, ValueError):
        return _Current(None, False, "  (the path cannot be resolved)")
    if target != root and not target.is_relative_to(root):
        return _Current(None, False, "  (the path is outside the workspace: the tool will refuse it)")
    try:
        descriptor = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return _Current(None, False)
    except OSError as error:
        return _Current(None, True, f"  (the current file cannot be read: {error.strerror})")
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return _Current(None, True, "  (not a regular file: the tool will refuse it)")
        if info.st_size > MAX_DIFF_BYTES:
            return _Current(None, True, f"  (the current file has {info.st_size:,} bytes: no diff shown)")
        chunks: list[bytes] = []
        remaining = MAX_DIFF_BYTES + 1
        while remaining > 0:
            chunk = os.read(descriptor, min(remaining, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as error:
        return _Current(None, True, f"  (the current file cannot be read: {error.strerror})")
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if len(data) > MAX_DIFF_BYTES:
        return _Current(None, True, "  (the current file is growing: no diff shown)")
    if b"\0" in data:
        return _Current(None, True, "  (the current file is binary: no diff shown)")
    try:
        return _Current(data.decode("utf-8"), True)
    except UnicodeDecodeError:
        return _Current(None, True, "  (the current file is not UTF-8 text: no diff shown)")


def _text(args: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, str):
            return value
    return None


def _safe(text: str) -> str:
    return terminal_safe(text).replace("\n", "\\n").replace("\t", "    ")
