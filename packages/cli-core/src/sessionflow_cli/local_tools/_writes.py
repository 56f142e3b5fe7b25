"""The writing file tools: `write_file` and `edit_file` (blocking; run them in a thread).

Both write a temporary file, created with ``O_CREAT|O_EXCL|O_NOFOLLOW`` in the directory
that was checked, and rename it over the name through that directory's descriptor. Right
before the rename they check the directory again (still inside the workspace) and the
name (not a link; for an edit, the very file that was read, unchanged); afterwards they
check that the name holds exactly the file they wrote.

Limit: a process that moves a directory out of the workspace after the last check and
before the rename makes the write land outside. The tool then reports an error, but the
file is written; only OS isolation (a container) closes that gap.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from sessionflow_cli.local_tools._files import require_file
from sessionflow_cli.local_tools._paths import (
    Resolved,
    Workspace,
    checkpoint,
    hard_link_message,
    refuse,
    special_file_message,
)

__all__ = ["MAX_EDIT_BYTES", "edit_file", "write_file"]

MAX_EDIT_BYTES = 4 * 1024 * 1024
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class _AsRead:
    """The file an edit read: it must still be exactly this right before the rename."""

    info: os.stat_result
    data: bytes


def write_file(workspace: Path, path: str, content: str) -> str:
    """Create or replace a file with ``content``, creating missing parent directories."""
    data = _encode(content, "content")
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=False, missing_parents=True)
        if not target.parts or target.kind == "directory":
            raise refuse(f"{target.shown} is a directory")
        if target.kind == "special":
            raise refuse(special_file_message(target.shown, stat.S_IFIFO))
        checkpoint("resolved")
        create_from = target.existing if target.existing < len(target.parts) - 1 else None
        dir_fd = ws.open_dir(target.parts[:-1], target.shown, create_from=create_from)
        try:
            current = _current(dir_fd, target)
            mode = stat.S_IMODE(current.st_mode) if current is not None else None
            _replace(ws, dir_fd, target, data, mode, None)
        finally:
            os.close(dir_fd)
    verb = "replaced" if current is not None else "created"
    return f"Wrote {len(data)} bytes to {target.relative} ({verb})."


def edit_file(
    workspace: Path, path: str, old_string: str, new_string: str, *, replace_all: bool = False
) -> str:
    """Replace ``old_string`` with ``new_string`` in a file of at most 4 MiB."""
    if not old_string:
        raise refuse("old_string is empty; use write_file to write a whole file")
    if old_string == new_string:
        raise refuse("old_string and new_string are the same; nothing to change")
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=False)
        require_file(target, for_writing=True)
        checkpoint("resolved")
        dir_fd = ws.open_dir(target.parts[:-1], target.shown)
        try:
            read = _read_for_edit(ws, dir_fd, target)
            text = read.data.decode("utf-8", "surrogateescape")
            count = text.count(old_string)
            if count == 0:
                raise refuse(f"old_string was not found in {target.relative}; nothing was written")
            if count > 1 and not replace_all:
                raise refuse(
                    f"old_string occurs {count} times in {target.relative}; include more surrounding "
                    "text to make it unique, or set replace_all; nothing was written"
                )
            changed = (
                text.replace(old_string, new_string)
                if replace_all
                else text.replace(old_string, new_string, 1)
            )
            data = _encode(changed, "new_string")
            _replace(ws, dir_fd, target, data, stat.S_IMODE(read.info.st_mode), read)
        finally:
            os.close(dir_fd)
    replaced = count if replace_all else 1
    return f"Edited {target.relative}: replaced {replaced} occurrence{'s' if replaced != 1 else ''}."


def _encode(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise refuse(f"{what} is not valid text (it contains a lone surrogate)") from None


def _current(dir_fd: int, target: Resolved) -> os.stat_result | None:
    """What is at the name now: None, or a regular file with one link; anything else is refused."""
    try:
        info = os.stat(target.name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise refuse(f"{target.shown} is a symbolic link; this tool does not write through links")
    if not stat.S_ISREG(info.st_mode):
        raise refuse(special_file_message(target.shown, info.st_mode))
    if info.st_nlink > 1:
        raise refuse(hard_link_message(target.shown, info.st_nlink))
    return info


def _read_for_edit(ws: Workspace, dir_fd: int, target: Resolved) -> _AsRead:
    fd, info = ws.open_file(dir_fd, target.name, target.shown)
    with os.fdopen(fd, "rb") as file:
        if info.st_size > MAX_EDIT_BYTES:
            raise refuse(
                f"{target.relative} is {info.st_size} bytes; edit_file changes files of at most {MAX_EDIT_BYTES}"
            )
        data = file.read(MAX_EDIT_BYTES + 1)
    if len(data) > MAX_EDIT_BYTES:
        raise refuse(
            f"{target.relative} is over {MAX_EDIT_BYTES} bytes; edit_file changes files of at most that"
        )
    return _AsRead(info, data)


def _same_as_read(ws: Workspace, dir_fd: int, target: Resolved, read: _AsRead) -> bool:
    now = _current(dir_fd, target)
    if now is None:
        return False
    before = read.info
    if (now.st_ino, now.st_dev, now.st_size, now.st_mtime_ns) != (
        before.st_ino,
        before.st_dev,
        before.st_size,
        before.st_mtime_ns,
    ):
        return False
    fd, _ = ws.open_file(dir_fd, target.name, target.shown)
    with os.fdopen(fd, "rb") as file:
        return file.read(MAX_EDIT_BYTES + 1) == read.data


def _replace(
    ws: Workspace, dir_fd: int, target: Resolved, data: bytes, mode: int | None, read: _AsRead | None
) -> None:
    temp = f".{secrets.token_hex(8)}.sessionflow-tmp"
    try:
        temp_fd = os.open(temp, _TEMP_FLAGS, 0o600 if mode is not None else 0o666, dir_fd=dir_fd)
    except OSError as error:
        raise refuse(f"{target.shown}: cannot create a temporary file: {error.strerror}") from None
    renamed = False
    try:
        _write_all(temp_fd, data)
        if mode is not None:
            os.fchmod(temp_fd, mode)
        os.fsync(temp_fd)
        written = os.fstat(temp_fd)
        checkpoint("before_rename")
        ws.check(dir_fd, target.shown)
        if read is not None and not _same_as_read(ws, dir_fd, target, read):
            raise refuse(
                f"{target.relative} changed since edit_file read it; nothing was written. "
                "Read the file again and retry the edit."
            )
        _current(dir_fd, target)  # refuses a link, a special file or a hard link at the name
        try:
            os.rename(temp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as error:
            raise refuse(f"{target.shown}: cannot replace the file: {error.strerror}") from None
        renamed = True
        checkpoint("after_rename")
        _check_written(ws, dir_fd, target, written)
    finally:
        os.close(temp_fd)
        if not renamed:
            try:
                os.unlink(temp, dir_fd=dir_fd)
            except OSError:
                pass


def _check_written(ws: Workspace, dir_fd: int, target: Resolved, written: os.stat_result) -> None:
    try:
        now = os.stat(target.name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        now = None
    if now is None or (now.st_ino, now.st_dev) != (written.st_ino, written.st_dev):
        raise refuse(
            f"{target.relative} was written, but right after the write the name holds a different "
            "file: another process changed it at the same moment; check the file"
        )
    try:
        ws.check(dir_fd, target.shown)
    except Exception:
        raise refuse(
            f"{target.relative}: the directory was moved out of the workspace while the tool ran, "
            "and the file was written there"
        ) from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
