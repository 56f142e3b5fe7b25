"""The reading file tools: `read_file` and `list_directory` (blocking; `_runtime` runs them in a thread)."""

from __future__ import annotations

import os
import stat
from io import BufferedReader
from pathlib import Path

from sessionflow_local_tools._blocking import Stop
from sessionflow_local_tools._paths import Resolved, Workspace, checkpoint, refuse, special_file_message
from sessionflow_local_tools._text import decode, show_name

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
MAX_SCAN_BYTES = 16 * 1024 * 1024
"""Bytes one read_file call reads at most, lines skipped to reach ``offset`` included."""
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


def read_file(
    stop: Stop,
    workspace: Path,
    path: str,
    offset: int = 1,
    limit: int = DEFAULT_READ_LINES,
    *,
    numbered: bool = False,
) -> str:
    """Lines ``offset`` (1-based) to ``offset + limit - 1`` of a text file in the workspace.

    Reads at most `MAX_SCAN_BYTES` whatever the file holds (a line of gigabytes, a sparse
    hole without a newline), and checks ``stop`` between chunks, so a cancelled call or
    one past its deadline ends at once.
    """
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=True)
        require_file(target)
        checkpoint("resolved")
        fd, info = ws.open_file(target.parts, target.shown)
        with os.fdopen(fd, "rb") as file:
            if b"\x00" in file.read(BINARY_SNIFF_BYTES):
                return f"[{target.relative} is a binary file of {info.st_size} bytes; not shown]"
            file.seek(0)
            return _LineReader(stop, file, numbered).read(target.relative, offset, limit)


class _LineReader:
    """Lines of a file, each cut to `MAX_LINE_CHARS` bytes, within `MAX_SCAN_BYTES` in all."""

    def __init__(self, stop: Stop, file: BufferedReader, numbered: bool = False) -> None:
        self._stop = stop
        self._file = file
        self._numbered = numbered
        self.scanned = 0

    @property
    def exhausted(self) -> bool:
        return self.scanned >= MAX_SCAN_BYTES

    def _chunk(self, size: int) -> bytes:
        self._stop.check()
        data = self._file.readline(min(size, MAX_SCAN_BYTES - self.scanned))
        self.scanned += len(data)
        return data

    def _skip_rest_of_line(self) -> int | None:
        """Skip to the next line; the bytes skipped, or None if the budget ran out first."""
        skipped = 0
        while not self.exhausted:
            rest = self._chunk(65536)
            skipped += len(rest)
            if not rest or rest.endswith(b"\n"):
                return skipped
        return None

    def _more(self) -> bool:
        return bool(self._file.peek(1))

    def read(self, relative: str, offset: int, limit: int) -> str:
        shown: list[str] = []
        size = 0
        number = 0
        note = ""
        while True:
            if len(shown) >= limit or size >= MAX_READ_CHARS:
                if self._more():
                    note = _more_note(relative, offset, number)
                break
            if self.exhausted:
                if self._more():
                    note = _budget_note(relative, offset, number)
                break
            line = self._chunk(MAX_LINE_CHARS)
            if not line:
                break
            number += 1
            wanted = number >= offset
            if len(line) == MAX_LINE_CHARS and not line.endswith(b"\n"):
                if wanted and len(shown) + 1 >= limit:
                    # The last line asked for: the rest of it need not be read at all.
                    text = f"{decode(line)} [... line truncated at {MAX_LINE_CHARS} bytes ...]\n"
                else:
                    skipped = self._skip_rest_of_line()
                    if skipped is None:
                        if wanted:
                            shown.append(f"{decode(line)} [... line truncated ...]\n")
                        note = _budget_note(relative, offset, number)
                        break
                    text = f"{decode(line)} [... line truncated: {skipped} more bytes ...]\n"
            else:
                text = decode(line)
            if not wanted:
                continue
            if self._numbered:
                text = f"{number:>6}\t{text}"
            if size + len(text) > MAX_READ_CHARS and shown:
                note = _more_note(relative, offset, number - 1)
                break
            shown.append(text)
            size += len(text)
        if number == 0:
            return f"[{relative} is empty]"
        if number < offset and not note:
            return f"[{relative} has only {number} lines; offset {offset} is past the end]"
        text = "".join(shown)
        if note:
            return f"{text}{'' if not text or text.endswith(chr(10)) else chr(10)}{note}"
        return text


def _more_note(relative: str, offset: int, last: int) -> str:
    return (
        f"[... truncated: showing lines {offset}-{last} of {relative}; more lines follow. "
        f"Call read_file with offset={last + 1} to read on.]"
    )


def _budget_note(relative: str, offset: int, last: int) -> str:
    return (
        f"[... stopped after reading {MAX_SCAN_BYTES} bytes of {relative} (line {last}); its lines are "
        f"very long or it has no line breaks. Lines from {offset} on may follow; use search_files or "
        "run_shell_command (head -c, cut) to look inside.]"
    )


def list_directory(stop: Stop, workspace: Path, path: str = ".") -> str:
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
            lines: list[str] = []
            for name in names[:MAX_LIST_ENTRIES]:
                stop.check()
                lines.append(_describe(dir_fd, name))
            ws.check(dir_fd, target.shown)  # still inside: the listing is of the workspace
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
