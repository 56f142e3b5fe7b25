"""The reading file tools: `read_file` and `list_directory` (blocking; run them in a thread)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from sessionflow_cli.local_tools._paths import Resolved, Workspace, checkpoint, refuse, special_file_message
from sessionflow_cli.local_tools._text import decode, show_name

__all__ = [
    "DEFAULT_READ_LINES",
    "MAX_LIST_ENTRIES",
    "MAX_READ_CHARS",
    "MAX_READ_LINES",
    "list_directory",
    "read_file",
    "require_file",
]

DEFAULT_READ_LINES = 2000
MAX_READ_LINES = 20_000
MAX_READ_CHARS = 200_000
MAX_LINE_CHARS = 4000
MAX_LIST_ENTRIES = 1000
BINARY_SNIFF_BYTES = 8192


def require_file(target: Resolved, *, for_writing: bool = False) -> None:
    """Refuse a target that is not an existing regular file."""
    if target.kind == "missing":
        hint = "; use write_file to create it" if for_writing else ""
        raise refuse(f"{target.shown}: no such file{hint}")
    if target.kind == "directory":
        raise refuse(f"{target.shown} is a directory; use list_directory")
    if target.kind == "special":
        raise refuse(special_file_message(target.shown, stat.S_IFIFO))


def read_file(workspace: Path, path: str, offset: int = 1, limit: int = DEFAULT_READ_LINES) -> str:
    """Lines ``offset`` (1-based) to ``offset + limit - 1`` of a text file in the workspace."""
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=True)
        require_file(target)
        checkpoint("resolved")
        dir_fd = ws.open_dir(target.parts[:-1], target.shown)
        try:
            fd, info = ws.open_file(dir_fd, target.name, target.shown)
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "rb") as file:
            if b"\x00" in file.read(BINARY_SNIFF_BYTES):
                return f"[{target.relative} is a binary file of {info.st_size} bytes; not shown]"
            file.seek(0)
            return _read_lines(file, target.relative, offset, limit)


def _read_lines(file: BinaryIO, relative: str, offset: int, limit: int) -> str:
    shown: list[str] = []
    size = 0
    number = 0
    stop_note = ""
    for number, line in enumerate(_lines(file), start=1):
        if number < offset:
            continue
        if len(shown) >= limit or size + len(line) > MAX_READ_CHARS:
            stop_note = (
                f"[... truncated: showing lines {offset}-{number - 1} of {relative}; more lines follow. "
                f"Call read_file with offset={number} to read on.]"
            )
            break
        shown.append(line)
        size += len(line)
    if number == 0:
        return f"[{relative} is empty]"
    if number < offset:
        return f"[{relative} has only {number} lines; offset {offset} is past the end]"
    text = "".join(shown)
    if stop_note:
        return f"{text}{'' if text.endswith(chr(10)) else chr(10)}{stop_note}"
    return text


def _lines(file: BinaryIO) -> Iterator[str]:
    """Decoded lines, each cut to `MAX_LINE_CHARS` with a marker (the rest is skipped)."""
    while True:
        line = file.readline(MAX_LINE_CHARS)
        if not line:
            return
        if len(line) == MAX_LINE_CHARS and not line.endswith(b"\n"):
            skipped = 0
            while True:
                rest = file.readline(65536)
                skipped += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield f"{decode(line)} [... line truncated: {skipped} more bytes ...]\n"
        else:
            yield decode(line)


def list_directory(workspace: Path, path: str = ".") -> str:
    """The entries of one directory of the workspace, directories marked with a slash."""
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=True)
        if target.kind == "missing":
            raise refuse(f"{target.shown}: no such directory")
        if target.kind != "directory":
            raise refuse(f"{target.shown} is not a directory; use read_file")
        checkpoint("resolved")
        dir_fd = ws.open_dir(target.parts, target.shown)
        try:
            names = sorted(os.listdir(dir_fd))
            lines = [_describe(dir_fd, name) for name in names[:MAX_LIST_ENTRIES]]
        finally:
            os.close(dir_fd)
    header = f"{target.relative}: {len(names)} entries"
    if len(names) > MAX_LIST_ENTRIES:
        lines.append(f"[... truncated: {len(names) - MAX_LIST_ENTRIES} more entries not shown ...]")
    return "\n".join([header, *lines]) if lines else f"{header} (empty directory)"


def _describe(dir_fd: int, name: str) -> str:
    shown = show_name(name)
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return f"{shown} (vanished)"
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        return f"{shown}/"
    if stat.S_ISLNK(mode):
        try:
            target = show_name(os.readlink(name, dir_fd=dir_fd))
        except OSError:
            target = "?"
        return f"{shown} -> {target} (symbolic link)"
    if stat.S_ISREG(mode):
        links = f", {info.st_nlink} hard links" if info.st_nlink > 1 else ""
        return f"{shown} ({info.st_size} bytes{links})"
    return f"{shown} (special file)"
