"""The writing file tools: `write_file` and `edit_file` (blocking; `_runtime` runs them in a thread).

Both write a temporary file, created with ``O_CREAT|O_EXCL|O_NOFOLLOW`` in the directory
that was checked, and rename it over the name through that directory's descriptor. Right
before the rename they check the directory again (still inside the workspace) and the
name (not a link; for an edit, the very file that was read); afterwards they check that
the name holds exactly the file they wrote.

A directory on the way moved out of the workspace just before the rename makes the
write land outside. It is always reported as an error: every directory from the
workspace down is watched for moves (`_moves`) from before the last check until after
the after-checks, so a directory moved out and back in time is noticed too. Only OS
isolation (a container) keeps the file from being written there at all.

An edit holds an advisory lock (``flock``) on the file while it works, so writers that
lock too never race it. For writers that do not (``echo >> file``), it keeps what they
append: right before the rename it reads the file again and carries any bytes appended
since its read into the new file, and right after the rename it copies bytes that still
reached the old file into the new one, until no process holds the old file open for
writing (a read lease proves that). What remains is a writer that keeps the file open
for longer than the edit waits (about 0.2 s) and writes after that; see the README's
limits.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from sessionflow_local_tools._blocking import Stop
from sessionflow_local_tools._files import require_file
from sessionflow_local_tools._moves import MoveWatch
from sessionflow_local_tools._paths import (
    Resolved,
    Workspace,
    checkpoint,
    hard_link_message,
    refuse,
    special_file_message,
)

__all__ = ["MAX_EDIT_BYTES", "edit_file", "write_file"]

MAX_EDIT_BYTES = 4 * 1024 * 1024
LOCK_WAIT_SECONDS = 5.0
"""How long an edit waits for another holder of the file's advisory lock."""
_TAIL_ROUNDS = 50
"""Times an edit carries a growing tail over before giving up on a file that never rests."""
SALVAGE_GRACE = 0.002
"""Seconds between looks at the old file after an edit's rename, for appends in flight."""
SALVAGE_LOOKS = 100
"""Looks before an edit stops waiting for writers that keep the old file open."""
_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)  # Linux's value, should the module lack it
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class _AsRead:
    """The file an edit read, open and locked; it may only have grown by appends since."""

    fd: int
    info: os.stat_result
    data: bytes


def write_file(stop: Stop, workspace: Path, path: str, content: str) -> str:
    """Create or replace a file with ``content``, creating missing parent directories."""
    data = _encode(content, "content")
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=False, missing_parents=True)
        if not target.parts or target.kind == "directory":
            raise refuse(f"{target.shown} is a directory")
        if target.kind == "special":
            raise refuse(special_file_message(target.shown, stat.S_IFIFO))
        checkpoint("resolved")
        stop.check()
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
    stop: Stop, workspace: Path, path: str, old_string: str, new_string: str, *, replace_all: bool = False
) -> str:
    """Replace ``old_string`` with ``new_string`` in a file of at most 4 MiB."""
    if not old_string:
        raise refuse("old_string is empty; use write_file to write a whole file")
    if old_string == new_string:
        raise refuse("old_string and new_string are the same; nothing to change")
    old, new = _encode(old_string, "old_string"), _encode(new_string, "new_string")
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=False)
        require_file(target, for_writing=True)
        checkpoint("resolved")
        dir_fd = ws.open_dir(target.parts[:-1], target.shown)
        try:
            read = _read_for_edit(stop, ws, target)
            try:
                count = read.data.count(old)
                if count == 0:
                    raise refuse(f"old_string was not found in {target.relative}; nothing was written")
                if count > 1 and not replace_all:
                    raise refuse(
                        f"old_string occurs {count} times in {target.relative}; include more surrounding "
                        "text to make it unique, or set replace_all; nothing was written"
                    )
                changed = read.data.replace(old, new) if replace_all else read.data.replace(old, new, 1)
                _replace(ws, dir_fd, target, changed, stat.S_IMODE(read.info.st_mode), read)
            finally:
                os.close(read.fd)  # also releases the lock
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


def _lock(stop: Stop, fd: int, target: Resolved) -> None:
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                return  # a file system without flock: edit without the lock
        stop.check()
        if time.monotonic() > deadline:
            raise refuse(
                f"{target.relative} is locked by another process (flock) for over {LOCK_WAIT_SECONDS:g} s; "
                "nothing was written"
            )
        time.sleep(0.01)


def _read_all(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while offset <= limit:
        chunk = os.pread(fd, min(1024 * 1024, limit + 1 - offset), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _too_big(target: Resolved, size: int) -> Exception:
    return refuse(f"{target.relative} is {size} bytes; edit_file changes files of at most {MAX_EDIT_BYTES}")


def _read_for_edit(stop: Stop, ws: Workspace, target: Resolved) -> _AsRead:
    fd, info = ws.open_file(target.parts, target.shown)
    try:
        if info.st_size > MAX_EDIT_BYTES:
            raise _too_big(target, info.st_size)
        _lock(stop, fd, target)
        data = _read_all(fd, MAX_EDIT_BYTES)
        if len(data) > MAX_EDIT_BYTES:
            raise _too_big(target, len(data))
    except BaseException:
        os.close(fd)
        raise
    return _AsRead(fd, os.fstat(fd), data)


def _changed(target: Resolved) -> Exception:
    return refuse(
        f"{target.relative} changed since edit_file read it; nothing was written. "
        "Read the file again and retry the edit."
    )


def _carry_tail(temp_fd: int, read: _AsRead, target: Resolved, dir_fd: int) -> None:
    """Bring bytes appended to the file since it was read into the temporary file.

    Anything but an append (the name now holds another file, or the bytes that were read
    changed) refuses the edit.
    """
    for _ in range(_TAIL_ROUNDS):
        now = _current(dir_fd, target)
        if now is None or (now.st_ino, now.st_dev) != (read.info.st_ino, read.info.st_dev):
            raise _changed(target)
        data = _read_all(read.fd, MAX_EDIT_BYTES)
        if len(data) > MAX_EDIT_BYTES:
            raise _too_big(target, len(data))
        if not data.startswith(read.data):
            raise _changed(target)
        tail = data[len(read.data) :]
        if not tail:
            return
        _write_all(temp_fd, tail)
        read.data = data
    raise refuse(f"{target.relative} kept growing while edit_file ran; nothing was written. Try again.")


def _salvage(temp_fd: int, read: _AsRead) -> None:
    """After the rename: copy what still reached the old file into the new one (appended).

    A writer that opened the old file just before the rename may write a while later. The
    old file has no name any more, so nobody new can open it: once no process holds it
    open for writing, which a read lease (``F_SETLEASE``) proves, one last copy catches
    everything. Without leases (some file systems, or a file the worker does not own) it
    is looked at again after `SALVAGE_GRACE` until a look finds nothing new.
    ``O_APPEND`` from here on: writers that now open the name append to the new file too,
    and a plain write at our offset could overwrite what they wrote.
    """
    fcntl.fcntl(temp_fd, fcntl.F_SETFL, fcntl.fcntl(temp_fd, fcntl.F_GETFL) | os.O_APPEND)
    quiet_looks = 0
    for look in range(SALVAGE_LOOKS):
        if look:
            time.sleep(SALVAGE_GRACE)
        found = _copy_new_bytes(temp_fd, read)
        writers = _has_writers(read.fd)
        if writers is False:
            _copy_new_bytes(temp_fd, read)  # what they wrote before closing
            return
        quiet_looks = 0 if found else quiet_looks + 1
        if writers is None and quiet_looks >= 2:
            return


def _copy_new_bytes(temp_fd: int, read: _AsRead) -> bool:
    found = False
    while extra := os.pread(read.fd, 1024 * 1024, len(read.data)):
        _write_all(temp_fd, extra)
        read.data += extra
        found = True
    return found


def _has_writers(fd: int) -> bool | None:
    """Whether any process holds the file open for writing; None when leases are not offered."""
    try:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
    except OSError as error:
        return True if error.errno == errno.EAGAIN else None
    fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
    return False


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
        os.fsync(temp_fd)  # the data is on disk before the name points at it
        with MoveWatch(ws, target.parts[:-1], target.shown) as moves:
            checkpoint("before_rename")
            ws.check(dir_fd, target.shown)
            if read is not None:
                _carry_tail(temp_fd, read, target, dir_fd)
            _current(dir_fd, target)  # refuses a link, a special file or a hard link at the name
            written = os.fstat(temp_fd)
            try:
                os.rename(temp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except OSError as error:
                raise refuse(f"{target.shown}: cannot replace the file: {error.strerror}") from None
            renamed = True
            if read is not None:
                _salvage(temp_fd, read)
            checkpoint("after_rename")
            _check_written(ws, dir_fd, target, written, moves)
    finally:
        os.close(temp_fd)
        if not renamed:
            try:
                os.unlink(temp, dir_fd=dir_fd)
            except OSError:
                pass


def _check_written(
    ws: Workspace, dir_fd: int, target: Resolved, written: os.stat_result, moves: MoveWatch
) -> None:
    try:
        ws.check(dir_fd, target.shown)
    except Exception:
        raise refuse(
            f"{target.relative}: the directory was moved out of the workspace while the tool ran, "
            "and the file was written there"
        ) from None
    # Read after the path check: a directory moved out before the rename and back after
    # it has queued its move by the time the path shows it inside again.
    if moves.moved():
        raise refuse(
            f"{target.relative}: a directory on the way was moved while the file was written, so it may "
            "have been written outside the workspace for a moment; check where the file is"
        )
    try:
        now = os.stat(target.name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        now = None
    if now is None or (now.st_ino, now.st_dev) != (written.st_ino, written.st_dev):
        raise refuse(
            f"{target.relative} was written, but right after the write the name holds a different "
            "file: another process changed it at the same moment; check the file"
        )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
