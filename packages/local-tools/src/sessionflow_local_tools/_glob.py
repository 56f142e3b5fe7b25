"""`glob_files`: the files below a directory of the workspace whose path matches a glob.

It walks like `search_files` (every directory opened below the workspace's descriptor,
never following links, with caps on depth and entries) and matches each file's path
relative to the starting directory with the glob turned into an RE2 pattern: ``*`` and
``?`` stay within one name, ``**`` crosses directories, ``[...]`` and ``{a,b}`` work as
in a shell. Newest files come first.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sessionflow_local_tools._blocking import Stop
from sessionflow_local_tools._paths import Workspace, checkpoint, refuse
from sessionflow_local_tools._regex import Matcher, compile_pattern
from sessionflow_local_tools._text import show_name

__all__ = ["MAX_GLOB_RESULTS", "glob_files"]

MAX_GLOB_RESULTS = 100
MAX_ENTRIES = 100_000
"""Directory entries looked at, at most, in one call."""
MAX_DEPTH = 64
SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn", "node_modules"})
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def glob_files(stop: Stop, workspace: Path, pattern: str, path: str = ".", *, absolute: bool = False) -> str:
    """Matching files, newest first, one a line; paths relative to the workspace unless ``absolute``."""
    if pattern.startswith("/"):
        raise refuse("the glob pattern must be relative to the directory searched ('path')")
    matcher = compile_pattern(_to_regex(pattern), regex=True, ignore_case=False)
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=True)
        if target.kind != "directory":
            raise refuse(f"{target.shown} is not a directory")
        checkpoint("resolved")
        found: list[tuple[int, str]] = []
        seen = [0]
        dir_fd = ws.open_dir(target.parts, target.shown)
        try:
            _walk(stop, ws, dir_fd, target.parts, "", matcher, found, seen, 0)
        finally:
            os.close(dir_fd)
        base = "/".join(show_name(part) for part in target.parts)
        root = show_name(ws.given.rstrip("/")) if absolute else ""
    found.sort(key=lambda item: (-item[0], item[1]))
    lines = ["/".join(p for p in (root, base, relative) if p) for _, relative in found[:MAX_GLOB_RESULTS]]
    if not lines:
        return "No files found"
    if len(found) > MAX_GLOB_RESULTS:
        lines.append(
            f"[... truncated: {len(found) - MAX_GLOB_RESULTS} more files; use a narrower pattern ...]"
        )
    if seen[0] >= MAX_ENTRIES:
        lines.append(f"[stopped after looking at {MAX_ENTRIES} entries]")
    return "\n".join(lines)


def _walk(
    stop: Stop,
    ws: Workspace,
    dir_fd: int,
    parts: tuple[str, ...],
    prefix: str,
    matcher: Matcher,
    found: list[tuple[int, str]],
    seen: list[int],
    depth: int,
) -> None:
    stop.check()
    try:
        names = sorted(os.listdir(dir_fd))
    except OSError:
        return
    for name in names:
        seen[0] += 1
        if seen[0] >= MAX_ENTRIES:
            return
        relative = f"{prefix}/{name}" if prefix else name
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            if name in SKIPPED_DIRECTORIES or depth + 1 > MAX_DEPTH:
                continue
            try:
                child = ws.open_below((*parts, name), _DIR_FLAGS, show_name(relative))
            except Exception:  # changed, moved out or unreadable: not listed
                continue
            try:
                _walk(stop, ws, child, (*parts, name), relative, matcher, found, seen, depth + 1)
            finally:
                os.close(child)
        elif stat.S_ISREG(info.st_mode) and matcher.search(_text(relative)):
            found.append((info.st_mtime_ns, show_name(relative)))


def _text(name: str) -> str:
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _to_regex(glob: str) -> str:
    """The glob as an anchored RE2 pattern over a relative path."""
    out: list[str] = ["^"]
    index = 0
    depth = 0  # inside {...}
    while index < len(glob):
        char = glob[index]
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if glob.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find("]", index + 2)
            if end < 0:
                out.append("\\[")
            else:
                body = glob[index + 1 : end]
                negate = body.startswith(("!", "^"))
                body = body[1:] if negate else body
                escaped = "".join(f"\\{c}" if c in "\\^[]" else c for c in body)
                out.append(f"[{'^' if negate else ''}{escaped}]")
                index = end
        elif char == "{":
            out.append("(?:")
            depth += 1
        elif char == "}" and depth:
            out.append(")")
            depth -= 1
        elif char == "," and depth:
            out.append("|")
        else:
            out.append(_escape(char))
        index += 1
    out.append(")" * depth + "$")
    return "".join(out)


def _escape(char: str) -> str:
    return f"\\{char}" if char in ".^$*+?()[]{}|\\/" and char != "/" else char
