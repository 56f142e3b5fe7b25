"""Resolve and open paths so that the file tools never leave the workspace.

A path from the model is relative to the workspace, or absolute and inside it. Resolving
it (`Workspace.resolve`) walks it one component at a time from the workspace's real
path: ``..`` may not climb above the workspace, and each symbolic link is read relative
to its directory's descriptor (``os.readlink(name, dir_fd=...)``) and followed one hop at
a time, every hop staying inside. The result is a list of plain names with no links.

Opening (`Workspace.open_below`, `open_dir`, `open_file`) then starts again at the
workspace's descriptor and lets the kernel resolve the link-free names with
``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`` (`_beneath`): a directory swapped for
a link makes the call fail, and a directory moved out of the workspace during the lookup
makes it fail before anything outside is opened. (Where ``openat2`` is missing, each
name is opened relative to its parent with ``O_NOFOLLOW`` instead.) Every opened file
or directory is checked once more by the path the kernel reports for its descriptor
(``/proc/self/fd/N``), which must lie inside the workspace's real path. Files with more
than one hard link are refused: another link may be outside. Special files are opened
with ``O_NONBLOCK`` and refused before anything reads them.

Paths are checked for what the kernel would refuse less clearly: a lone surrogate (no
bytes stand for it), more than 4,095 bytes, a name over 255 bytes, more than
`MAX_PATH_DEPTH` directories, and a trailing ``/`` on something that is not a directory.

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

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools import _beneath
from sessionflow_local_tools._text import show_name

__all__ = [
    "MAX_LINK_HOPS",
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "MAX_PATH_DEPTH",
    "Resolved",
    "Workspace",
    "checkpoint",
    "race_hook",
]

MAX_PATH_BYTES = 4095
"""The kernel's PATH_MAX (4,096) less the terminating NUL."""
MAX_NAME_BYTES = 255
MAX_PATH_DEPTH = 256
"""Directories deep; deeper paths are refused before they cost a descriptor each."""
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
    directory_only: bool = False
    """The path ended with ``/``: only a directory may be meant."""

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
        _check_syntax(raw)
        directory_only = raw.rstrip("/") != raw or raw.endswith("/.")
        if raw.startswith("/"):
            inside = self._inside_parts(raw)
            if inside is None:
                raise refuse(f"{shown} is outside the workspace ({self.given})")
            pending = deque(inside)
        else:
            pending = deque(_split(raw))
        parts: list[str] = []
        here = -1  # descriptor of the directory `parts` names; -1: the workspace itself
        hops = 0

        def done(kind: Kind, existing: int) -> Resolved:
            if directory_only and kind != "directory":
                what = "does not exist" if kind == "missing" else "is not a directory"
                raise refuse(f"{shown} ends with '/', but {show_name('/'.join(parts))} {what}")
            return Resolved(raw, tuple(parts), kind, existing, directory_only)

        try:
            while pending:
                name = pending.popleft()
                if name == "..":
                    if not parts:
                        how = "leads through a symbolic link that climbs" if hops else "climbs"
                        raise refuse(f"{shown} {how} above the workspace")
                    parts.pop()
                    os.close(here)
                    here = self.open_below(parts, _DIR_FLAGS, shown) if parts else -1
                    continue
                _check_name(name, shown)
                directory = here if here >= 0 else self.fd
                is_last = not pending
                try:
                    info = os.stat(name, dir_fd=directory, follow_symlinks=False)
                except FileNotFoundError:
                    if is_last:
                        parts.append(name)
                        return done("missing", len(parts) - 1)
                    if missing_parents and ".." not in pending:
                        existing = len(parts)
                        for later in pending:
                            _check_name(later, shown)
                        parts += [name, *pending]
                        _check_depth(parts, shown)
                        return done("missing", existing)
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
                        target = os.readlink(name, dir_fd=directory)
                    except OSError as error:
                        raise _os_refusal(error, shown) from None
                    if target.startswith("/"):
                        inside = self._inside_parts(target)
                        if inside is None:
                            raise refuse(
                                f"{shown} leads through a symbolic link that points outside the workspace"
                            )
                        if here >= 0:
                            os.close(here)
                            here = -1
                        parts.clear()
                        pending.extendleft(reversed(inside))
                    else:
                        pending.extendleft(reversed(_split(target)))
                    continue
                parts.append(name)
                _check_depth(parts, shown)
                if stat.S_ISDIR(mode):
                    if not pending:
                        break
                    child = self.open_below(parts, _DIR_FLAGS, shown)
                    if here >= 0:
                        os.close(here)
                    here = child
                    continue
                if not is_last:
                    raise refuse(f"{shown}: '{show_name(name)}' is not a directory")
                if stat.S_ISREG(mode) and info.st_nlink > 1:
                    raise refuse(hard_link_message(shown, info.st_nlink))  # before anything opens it
                return done("file" if stat.S_ISREG(mode) else "special", len(parts))
            return done("directory", len(parts))
        finally:
            if here >= 0:
                os.close(here)

    # -- opening ------------------------------------------------------------------------

    def open_below(self, parts: Sequence[str], flags: int, shown: str) -> int:
        """Open the link-free ``parts`` below the workspace, and check where it landed.

        Nothing outside the workspace is opened (``openat2(RESOLVE_BENEATH)``); the
        kernel's path of the new descriptor is checked as well. Returns a new descriptor.
        """
        try:
            if _beneath.available:
                fd = _beneath.open_beneath(self.fd, "/".join(parts), flags)
            else:
                fd = self._open_stepwise(parts, flags)
        except OSError as error:
            raise _os_refusal(error, shown) from None
        try:
            checkpoint("walk")
            self.check(fd, shown)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_stepwise(self, parts: Sequence[str], flags: int) -> int:
        """Without ``openat2``: each name relative to its parent, with ``O_NOFOLLOW``."""
        current = os.dup(self.fd)
        try:
            for index, name in enumerate(parts):
                last = index == len(parts) - 1
                child = os.open(name, flags if last else _DIR_FLAGS, dir_fd=current)
                os.close(current)
                current = child
                if not last:
                    self.check(current, name)
        except BaseException:
            os.close(current)
            raise
        if not parts:
            child = os.open(".", flags, dir_fd=current)
            os.close(current)
            current = child
        return current

    def open_dir(self, parts: Sequence[str], shown: str, *, create_from: int | None = None) -> int:
        """Open the directory ``parts`` below the workspace; a new descriptor the caller closes.

        Directories at index ``create_from`` and later are created first when missing.
        """
        if create_from is not None:
            for index in range(create_from, len(parts)):
                parent = self.open_below(parts[:index], _DIR_FLAGS, shown)
                try:
                    os.mkdir(parts[index], 0o777, dir_fd=parent)
                except FileExistsError:
                    pass  # opened below without following links, so a link here still fails
                except OSError as error:
                    raise _os_refusal(error, shown) from None
                finally:
                    os.close(parent)
        return self.open_below(parts, _DIR_FLAGS, shown)

    def open_file(self, parts: Sequence[str], shown: str) -> tuple[int, os.stat_result]:
        """Open the regular file ``parts`` for reading, with every check.

        Refuses links, special files (without blocking on a FIFO), files with more than
        one hard link, and files the kernel places outside the workspace.
        """
        fd = self.open_below(parts, _FILE_FLAGS, shown)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise refuse(special_file_message(shown, info.st_mode))
            if info.st_nlink > 1:
                raise refuse(hard_link_message(shown, info.st_nlink))
        except BaseException:
            os.close(fd)
            raise
        return fd, info


def _check_syntax(raw: str) -> None:
    """Refuse paths no file system call could take, with a message saying why."""
    if "\x00" in raw:
        raise refuse("the path contains a NUL byte")
    if not raw.strip():
        raise refuse("the path is empty; use '.' for the workspace itself")
    try:
        size = len(os.fsencode(raw))
    except UnicodeEncodeError:
        raise refuse(
            f"the path '{show_name(raw)}' is not valid text: it holds a lone surrogate, which no file name has"
        ) from None
    if size > MAX_PATH_BYTES:
        raise refuse(f"the path is too long ({size} bytes; at most {MAX_PATH_BYTES}, the system's limit)")


def _check_name(name: str, shown: str) -> None:
    size = len(os.fsencode(name))
    if size > MAX_NAME_BYTES:
        raise refuse(f"{shown}: a name in the path is too long ({size} bytes; at most {MAX_NAME_BYTES})")


def _check_depth(parts: Sequence[str], shown: str) -> None:
    if len(parts) > MAX_PATH_DEPTH:
        raise refuse(f"{shown} is too deep (more than {MAX_PATH_DEPTH} directories)")


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
    if code == errno.EXDEV:
        return refuse(
            f"{shown} is outside the workspace (a directory on the way was moved out while the tool ran); "
            "refused before opening it"
        )
    if code == errno.ENAMETOOLONG:
        return refuse(f"{shown}: the path is too long (over {MAX_PATH_BYTES} bytes once links are followed)")
    if code in (errno.EMFILE, errno.ENFILE):
        return refuse(f"{shown}: the worker has too many open files right now; try again later")
    return refuse(f"{shown}: {error.strerror or error}")
