"""Resolve and open paths so that the file tools never leave the workspace.

A path from the model is relative to the workspace, or absolute and inside it. Resolving
it (`Workspace.resolve`) walks it one component at a time from the workspace's real
path: ``..`` may not climb above the workspace, and each symbolic link is read relative
to its directory's descriptor (``os.readlink(name, dir_fd=...)``) and followed one hop at
a time, every hop staying inside. The result is a list of plain names with no links.

Opening (`Workspace.open_dir`, `Workspace.open_file`) then starts again at the workspace
and opens each name relative to its parent's descriptor with ``O_NOFOLLOW``, so a
directory swapped for a link after resolving makes the call fail instead of following
it. Every opened file or directory is checked once more by the path the kernel reports
for its descriptor (``/proc/self/fd/N``), which must lie inside the workspace's real
path. Files with more than one hard link are refused: another link may be outside.
Special files are opened with ``O_NONBLOCK`` and refused before anything reads them.

`race_hook` is called between each check and the use that depends on it; tests set it
to change the file system at exactly that moment.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal

from sessionflow.session import ToolExecutionError
from sessionflow_cli.local_tools._text import show_name

__all__ = [
    "MAX_LINK_HOPS",
    "MAX_PATH_CHARS",
    "Resolved",
    "Workspace",
    "checkpoint",
    "race_hook",
]

MAX_PATH_CHARS = 4096
MAX_LINK_HOPS = 40

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

Kind = Literal["file", "directory", "missing", "special"]


def _no_race(stage: str) -> None:
    """The default `race_hook`: nothing happens between check and use."""


race_hook: Callable[[str], None] = _no_race
"""Called with a stage name between a check and its use. Stages: ``"resolved"`` (after
resolving, before opening), ``"walk"`` (after opening a directory on the way, before
checking it), ``"before_rename"`` (a write's temporary file is complete, before the last
checks) and ``"after_rename"``. Tests replace it; it must stay a no-op in production."""


def checkpoint(stage: str) -> None:
    """Call `race_hook` (looked up at call time, so tests can replace it)."""
    race_hook(stage)


def refuse(message: str) -> ToolExecutionError:
    return ToolExecutionError(message)


@dataclass(frozen=True)
class Resolved:
    """A path resolved inside the workspace.

    Attributes:
        raw: The path as the model gave it.
        parts: Names from the workspace root to the target; no links, ``.`` or ``..``.
        kind: What lies at the target (``missing`` when it does not exist yet).
        existing: How many leading parts exist; less than ``len(parts)`` only when
            missing parent directories were allowed.
    """

    raw: str
    parts: tuple[str, ...]
    kind: Kind
    existing: int

    @property
    def shown(self) -> str:
        """The path as given, quoted, for messages."""
        return f"'{show_name(self.raw)}'"

    @property
    def relative(self) -> str:
        """The resolved path relative to the workspace, for output."""
        return show_name("/".join(self.parts)) if self.parts else "."

    @property
    def name(self) -> str:
        return self.parts[-1]


class Workspace:
    """The workspace, opened afresh for one tool call; use it as a context manager."""

    def __init__(self, path: Path) -> None:
        self.given = os.path.abspath(path)
        self.real = os.path.realpath(path)
        self._fd = -1

    def __enter__(self) -> Workspace:
        try:
            fd = os.open(self.real, _DIR_FLAGS)
        except OSError as error:
            raise refuse(f"the workspace {self.given} cannot be opened: {error.strerror}") from None
        if _kernel_path(fd) != self.real:
            os.close(fd)
            raise refuse(f"the workspace {self.given} moved while the tool started")
        self._fd = fd
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @property
    def fd(self) -> int:
        """The workspace's own descriptor (owned by this object; do not close it)."""
        if self._fd < 0:
            raise RuntimeError("use Workspace as a context manager")
        return self._fd

    # -- checks -------------------------------------------------------------------------

    def contains(self, kernel_path: str) -> bool:
        if kernel_path == self.real:
            return True
        prefix = self.real if self.real.endswith("/") else f"{self.real}/"
        return kernel_path.startswith(prefix)

    def check(self, fd: int, shown: str) -> None:
        """Refuse unless the kernel places the open file or directory inside the workspace."""
        if not self.contains(_kernel_path(fd)):
            raise refuse(f"{shown} is outside the workspace")

    def _inside_parts(self, absolute: str) -> list[str] | None:
        """The components of an absolute path below the workspace, or None if not below it."""
        components = _split(absolute)
        for base in (self.real, self.given):
            base_components = _split(base)
            if components[: len(base_components)] == base_components:
                return components[len(base_components) :]
        return None

    # -- resolving ----------------------------------------------------------------------

    def resolve(self, raw: str, *, follow_last: bool, missing_parents: bool = False) -> Resolved:
        """Resolve ``raw`` inside the workspace, or raise `ToolExecutionError` saying why not.

        Args:
            raw: The path from the model.
            follow_last: Follow a symbolic link at the last component (reads); when False
                a link there is refused (writes never write through a link).
            missing_parents: Allow directories on the way that do not exist yet (they
                are created later by `open_dir`).
        """
        shown = f"'{show_name(raw)}'"
        if "\x00" in raw:
            raise refuse("the path contains a NUL byte")
        if not raw.strip():
            raise refuse("the path is empty; use '.' for the workspace itself")
        if len(raw) > MAX_PATH_CHARS:
            raise refuse(f"the path is too long ({len(raw)} characters; at most {MAX_PATH_CHARS})")
        if raw.startswith("/"):
            inside = self._inside_parts(raw)
            if inside is None:
                raise refuse(f"{shown} is outside the workspace ({self.given})")
            pending = deque(inside)
        else:
            pending = deque(_split(raw))
        parts: list[str] = []
        fds: list[int] = []  # descriptors of the directories in `parts`
        hops = 0
        try:
            while pending:
                name = pending.popleft()
                if name == "..":
                    if not parts:
                        how = "leads through a symbolic link that climbs" if hops else "climbs"
                        raise refuse(f"{shown} {how} above the workspace")
                    parts.pop()
                    os.close(fds.pop())
                    continue
                here = fds[-1] if fds else self.fd
                is_last = not pending
                try:
                    info = os.stat(name, dir_fd=here, follow_symlinks=False)
                except FileNotFoundError:
                    if is_last:
                        parts.append(name)
                        return Resolved(raw, tuple(parts), "missing", len(parts) - 1)
                    if missing_parents and ".." not in pending:
                        existing = len(parts)
                        parts += [name, *pending]
                        return Resolved(raw, tuple(parts), "missing", existing)
                    raise refuse(f"{shown}: no such file or directory") from None
                except OSError as error:
                    raise _os_refusal(error, shown) from None
                mode = info.st_mode
                if stat.S_ISLNK(mode):
                    if is_last and not follow_last:
                        raise refuse(f"{shown} is a symbolic link; this tool does not write through links")
                    hops += 1
                    if hops > MAX_LINK_HOPS:
                        raise refuse(f"{shown}: too many symbolic links (a loop?)")
                    try:
                        target = os.readlink(name, dir_fd=here)
                    except OSError as error:
                        raise _os_refusal(error, shown) from None
                    if target.startswith("/"):
                        inside = self._inside_parts(target)
                        if inside is None:
                            raise refuse(
                                f"{shown} leads through a symbolic link that points outside the workspace"
                            )
                        for fd in fds:
                            os.close(fd)
                        fds.clear()
                        parts.clear()
                        pending.extendleft(reversed(inside))
                    else:
                        pending.extendleft(reversed(_split(target)))
                    continue
                parts.append(name)
                if stat.S_ISDIR(mode):
                    if not pending:
                        break
                    fd = self._open_component(here, name, shown)
                    fds.append(fd)
                    continue
                if not is_last:
                    raise refuse(f"{shown}: '{show_name(name)}' is not a directory")
                if stat.S_ISREG(mode) and info.st_nlink > 1:
                    raise refuse(hard_link_message(shown, info.st_nlink))  # before anything opens it
                kind: Kind = "file" if stat.S_ISREG(mode) else "special"
                return Resolved(raw, tuple(parts), kind, len(parts))
            return Resolved(raw, tuple(parts), "directory", len(parts))
        finally:
            for fd in fds:
                os.close(fd)

    # -- opening ------------------------------------------------------------------------

    def _open_component(self, parent: int, name: str, shown: str) -> int:
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as error:
            raise _os_refusal(error, shown) from None
        try:
            checkpoint("walk")
            self.check(fd, shown)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_dir(self, parts: Sequence[str], shown: str, *, create_from: int | None = None) -> int:
        """Open the directory ``parts`` from the workspace, one ``O_NOFOLLOW`` step at a time.

        Directories at index ``create_from`` and later are created first when missing.
        Returns a new descriptor the caller closes.
        """
        current = os.dup(self.fd)
        try:
            for index, name in enumerate(parts):
                if create_from is not None and index >= create_from:
                    try:
                        os.mkdir(name, 0o777, dir_fd=current)
                    except FileExistsError:
                        pass  # opened below with O_NOFOLLOW, so a link here still fails
                    except OSError as error:
                        raise _os_refusal(error, shown) from None
                child = self._open_component(current, name, shown)
                os.close(current)
                current = child
        except BaseException:
            os.close(current)
            raise
        return current

    def open_file(self, dir_fd: int, name: str, shown: str) -> tuple[int, os.stat_result]:
        """Open the regular file ``name`` in ``dir_fd`` for reading, with every check.

        Refuses links, special files (without blocking on a FIFO), files with more than
        one hard link, and files the kernel places outside the workspace.
        """
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as error:
            raise _os_refusal(error, shown) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise refuse(special_file_message(shown, info.st_mode))
            if info.st_nlink > 1:
                raise refuse(hard_link_message(shown, info.st_nlink))
            self.check(fd, shown)
        except BaseException:
            os.close(fd)
            raise
        return fd, info


def special_file_message(shown: str, mode: int) -> str:
    if stat.S_ISDIR(mode):
        return f"{shown} is a directory"
    return f"{shown} is not a regular file (a FIFO, device or socket); refused"


def hard_link_message(shown: str, links: int) -> str:
    return f"{shown} has {links} hard links; refused, because another link may be outside the workspace"


def _split(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _kernel_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        raise refuse("the file tools need /proc/self/fd (Linux) to check paths; refused") from None


def _os_refusal(error: OSError, shown: str) -> ToolExecutionError:
    code = error.errno
    if code in (errno.ELOOP, errno.ENOTDIR):
        return refuse(
            f"{shown} changed while the tool ran (a directory or file on the way was replaced "
            "by a symbolic link or a file); refused"
        )
    if code == errno.ENOENT:
        return refuse(f"{shown}: no such file or directory (it may have been removed while the tool ran)")
    if code == errno.ENXIO:
        return refuse(f"{shown} is not a regular file (a FIFO, device or socket); refused")
    if code == errno.ENAMETOOLONG:
        return refuse(f"{shown}: a name in the path is too long")
    return refuse(f"{shown}: {error.strerror or error}")
