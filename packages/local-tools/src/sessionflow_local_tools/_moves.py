"""Kernel notice (inotify) of a directory on a write's way being moved or removed.

A write renames its temporary file into a directory it holds open. If another process
moves that directory, or one above it, out of the workspace just before the rename and
back right after, the file was outside for a moment, and checking the directory's path
afterwards sees it back inside. The kernel reports every such move as ``IN_MOVE_SELF``
on the moved directory, queued before the move's ``rename(2)`` returns, so a write
watches every directory from the workspace down to its own before its last check, and
reads the queue after its after-checks: any event means it may have landed outside.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from types import TracebackType

from sessionflow_local_tools._paths import Workspace, refuse

__all__ = ["MoveWatch"]

_IN_MOVE_SELF = 0x800
_IN_DELETE_SELF = 0x400
_IN_Q_OVERFLOW = 0x4000  # always reported; any event at all counts as a move
_libc = ctypes.CDLL(None, use_errno=True)


class MoveWatch:
    """Watches the workspace and each directory of ``parts`` (below it) for moves."""

    def __init__(self, ws: Workspace, parts: Sequence[str], shown: str) -> None:
        self._fd: int = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            error = ctypes.get_errno()
            raise refuse(
                f"{shown}: nothing was written: the worker cannot watch the directories for moves "
                f"(inotify: {os.strerror(error)}); try again later"
            )
        try:
            self._watch(ws.fd, shown)
            for depth in range(1, len(parts) + 1):
                fd = ws.open_below(parts[:depth], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, shown)
                try:
                    self._watch(fd, shown)
                finally:
                    os.close(fd)
        except BaseException:
            os.close(self._fd)
            raise

    def _watch(self, directory_fd: int, shown: str) -> None:
        # The watch is on the inode /proc/self/fd/N leads to, wherever it is later moved.
        path = f"/proc/self/fd/{directory_fd}".encode()
        if _libc.inotify_add_watch(self._fd, path, _IN_MOVE_SELF | _IN_DELETE_SELF) < 0:
            error = ctypes.get_errno()
            raise refuse(
                f"{shown}: nothing was written: the worker cannot watch the directories for moves "
                f"(inotify: {os.strerror(error)}); try again later"
            )

    def moved(self) -> bool:
        """Whether any watched directory was moved or removed since the watch began."""
        try:
            return bool(os.read(self._fd, 4096))
        except BlockingIOError:
            return False

    def __enter__(self) -> MoveWatch:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        os.close(self._fd)
