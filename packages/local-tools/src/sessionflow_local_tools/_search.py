"""`search_files`: lines matching a substring or a regex, under a directory of the workspace.

The walk opens every directory and file below the workspace's descriptor without
following links (``openat2(RESOLVE_BENEATH)``, like the other file tools), so a
directory moved out meanwhile is never opened, and checks each by the kernel's path. It
never follows symbolic links, skips files with more than one hard link and special
files, and stops at fixed caps on matches, files and bytes. Patterns are RE2 (`_regex`):
a search takes time linear in the bytes searched, whatever the pattern.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools._blocking import Stop
from sessionflow_local_tools._paths import Workspace, checkpoint, refuse
from sessionflow_local_tools._regex import Matcher, compile_pattern
from sessionflow_local_tools._text import decode, show_name

__all__ = ["DEFAULT_MAX_RESULTS", "MAX_RESULTS", "SearchMode", "search_files"]

SearchMode = Literal["content", "files", "count"]

DEFAULT_MAX_RESULTS = 100
MAX_RESULTS = 500
MAX_FILES = 20_000
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_LINE_CHARS = 300
MAX_TOTAL_BYTES = 256 * 1024 * 1024
"""Bytes one search reads at most, over all its files."""
MAX_INCLUDE_CHARS = 1000
SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn"})

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass
class _Search:
    ws: Workspace
    stop: Stop
    pattern: Matcher
    include: tuple[str, ...]
    max_results: int
    mode: SearchMode = "content"
    prefix: str = ""
    matches: list[str] = field(default_factory=lambda: [])
    files: int = 0
    bytes_read: int = 0
    skipped: dict[str, int] = field(default_factory=lambda: {})
    stopped: str = ""

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    @property
    def done(self) -> bool:
        return bool(self.stopped)


def search_files(
    stop: Stop,
    workspace: Path,
    pattern: str,
    path: str = ".",
    *,
    regex: bool = False,
    ignore_case: bool = False,
    include: str | Sequence[str] | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
    mode: SearchMode = "content",
    absolute: bool = False,
) -> str:
    """Matching lines as ``path:line: text``, then a summary of what was skipped.

    ``include`` is one glob or several (a file's name must match one); ``mode`` ``files``
    lists each matching file once and ``count`` adds its number of matching lines;
    ``absolute`` shows paths from the file system root instead of the workspace.
    """
    compiled = compile_pattern(pattern, regex=regex, ignore_case=ignore_case)
    globs = (include,) if isinstance(include, str) else tuple(include or ())
    if sum(len(glob) for glob in globs) > MAX_INCLUDE_CHARS:
        raise refuse(f"the include glob is too long (at most {MAX_INCLUDE_CHARS} characters)")
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=True)
        if target.kind == "missing":
            raise refuse(f"{target.shown}: no such file or directory")
        if target.kind == "special":
            raise refuse(f"{target.shown} is not a regular file or directory; refused")
        prefix = f"{show_name(ws.given.rstrip('/'))}/" if absolute else ""
        search = _Search(ws, stop, compiled, globs, max_results, mode, prefix)
        checkpoint("resolved")
        if target.kind == "directory":
            dir_fd = ws.open_dir(target.parts, target.shown)
            try:
                _walk(search, dir_fd, target.parts, target.relative if target.parts else "", 0)
            finally:
                os.close(dir_fd)
        else:
            _search_file(search, target.parts, target.relative)
    return _report(search, target.relative)


def _walk(search: _Search, dir_fd: int, parts: tuple[str, ...], prefix: str, depth: int) -> None:
    search.stop.check()
    try:
        names = sorted(os.listdir(dir_fd))
    except OSError:
        search.skip("unreadable directories")
        return
    for name in names:
        if search.done:
            return
        relative = f"{prefix}/{show_name(name)}" if prefix else show_name(name)
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            search.skip("symbolic links (not followed)")
        elif stat.S_ISDIR(info.st_mode):
            if name in SKIPPED_DIRECTORIES:
                continue
            if depth + 1 > MAX_DEPTH:
                search.skip(f"directories deeper than {MAX_DEPTH} levels")
                continue
            child = _open_checked(search, (*parts, name), _DIR_FLAGS)
            if child is None:
                continue
            try:
                _walk(search, child, (*parts, name), relative, depth + 1)
            finally:
                os.close(child)
        elif stat.S_ISREG(info.st_mode):
            if info.st_nlink > 1:
                search.skip("files with more than one hard link")
                continue
            if search.include and not any(fnmatch.fnmatchcase(name, glob) for glob in search.include):
                continue
            _search_file(search, (*parts, name), relative)
        else:
            search.skip("special files")


def _open_checked(search: _Search, parts: tuple[str, ...], flags: int) -> int | None:
    """Open ``parts`` below the workspace (never outside it), or None with a reason counted."""
    try:
        return search.ws.open_below(parts, flags, relative_name(parts))
    except ToolExecutionError as refusal:
        if "outside the workspace" in refusal.message:
            search.skip("files outside the workspace")
        else:
            search.skip("files that changed or could not be opened")
        return None


def relative_name(parts: tuple[str, ...]) -> str:
    return "/".join(show_name(part) for part in parts)


def _search_file(search: _Search, parts: tuple[str, ...], relative: str) -> None:
    if search.files >= MAX_FILES:
        search.stopped = f"stopped after {MAX_FILES} files"
        return
    if search.bytes_read >= MAX_TOTAL_BYTES:
        search.stopped = f"stopped after reading {MAX_TOTAL_BYTES} bytes"
        return
    search.stop.check()
    fd = _open_checked(search, parts, _FILE_FLAGS)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            search.skip("special files")
            return
        if info.st_nlink > 1:
            search.skip("files with more than one hard link")
            return
        if info.st_size > MAX_FILE_BYTES:
            search.skip(f"files over {MAX_FILE_BYTES} bytes")
            return
        data = file.read(MAX_FILE_BYTES + 1)
    search.files += 1
    search.bytes_read += len(data)
    if len(data) > MAX_FILE_BYTES:  # grew after the size check
        search.skip(f"files over {MAX_FILE_BYTES} bytes")
        return
    if b"\x00" in data[:8192]:
        search.skip("binary files")
        return
    shown = f"{search.prefix}{relative}"
    count = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if number % 1024 == 0:
            search.stop.check()
        line = decode(raw).rstrip("\r")
        if search.pattern.search(line):
            count += 1
            if search.mode != "content":
                continue
            if len(search.matches) >= search.max_results:
                search.stopped = f"stopped at {search.max_results} matches"
                return
            text = line if len(line) <= MAX_LINE_CHARS else f"{line[:MAX_LINE_CHARS]} [... line truncated]"
            search.matches.append(f"{shown}:{number}: {text}")
    if count and search.mode != "content":
        if len(search.matches) >= search.max_results:
            search.stopped = f"stopped at {search.max_results} files"
            return
        search.matches.append(shown if search.mode == "files" else f"{shown}:{count}")


def _report(search: _Search, where: str) -> str:
    lines = search.matches or [f"no matches under {where}"]
    notes: list[str] = []
    if search.stopped:
        notes.append(f"[... truncated: {search.stopped}; narrow the search to see more ...]")
    notes.append(f"[searched {search.files} files]")
    if search.skipped:
        listed = ", ".join(f"{count} {reason}" for reason, count in sorted(search.skipped.items()))
        notes.append(f"[skipped: {listed}]")
    return "\n".join([*lines, *notes])
